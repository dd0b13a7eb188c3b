"""Remember (§13): a fact the bot already knows stored as a card now, the functional core.

``MemoryQueue.remember`` stores what a bot was told outright ("remember that I am
vegetarian", a setting, a form field) with no run and no farm call:

- **The card rules.** The fact passes the rule of every card write
  (:func:`~memory_worker.cards.rules.text_problem`: not blank, at most
  ``MEMORY_CARD_MAX_BYTES``, no secret), kept as written; only its masked form
  (:func:`~memory_worker.privacy.masking.mask`) is sent to the embedder.
- **The card.** Its scope is the user's (``user_id``), else the thread's (``thread_id``),
  else the chat's; it has no subject, predicate or object (no model read it), so its
  identity (:func:`~memory_worker.cards.model.dedup_hash`) is its scope and normalised
  words. Asserted by hand (``asserted_by`` = the actor), confidence 1, salience
  ``MEMORY_REMEMBER_SALIENCE``, permanent, valid from ``valid_from`` (default: now), no
  source message, of the type a run gives a fact of no known type (``preference``).
- **Deduplicated.** A live card of the same identity — or of the same normalised words in
  the same scope, found among the chat's best hits for the fact (:func:`same_words`) — is
  observed again (one more observation, confidence 1, the higher salience, no expiry) and
  answered instead of a new card.
- **Newer than a retraction.** A retracted fact is remembered again: a new card, and the
  fact's retraction record goes (the bot's explicit word is newer than the retraction); the
  withdrawn-fact check of a run's cards (:mod:`memory_worker.cards.withdrawn`) is not asked.
- **A vector, or a wait for one.** The fact is embedded on the ``embedding`` route in the
  chat's vector space; when the embedder cannot answer, the card is stored anyway with a
  zero row in the chat's vector index — searched by its words, never by meaning — marked
  waiting (stored ``vp``; :attr:`Card.has_embedding <memory_worker.cards.Card.has_embedding>`
  is false) and listed in the chat's ``vecwait`` zset, until the maintenance pass
  (:func:`memory_worker.upkeep.reembed.fill_waiting`) gives it its vector.
- **Never inside a forget** (§14): a forget of its scope in progress refuses it, and so
  does a forget of the chat since its epoch was read (the caller reads it again and tries
  once more: the two calls overlapped, the remember lands after the forget).

:func:`remember_twin` and :func:`fill_twin` are the Python twins of ``lua/remember.lua``
and ``lua/fill_vectors.lua`` (equivalence: ``tests/cards/test_remember_twin.py``). Pure: no
Redis, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory_worker.cards.chat_state import ChatState, Write, blank, is_live, num
from memory_worker.cards.codec import card_plan
from memory_worker.cards.model import Card, Durability, Scope, normalise
from memory_worker.cards.writes import NewCard
from memory_worker.errors import InvalidCorrection
from memory_worker.keys import HISTORY_MAX_EVENTS

#: The type of a remembered card: what a run gives a fact of no known type.
REMEMBERED_TYPE = "preference"


def check_valid_from(valid_from: object, now: datetime) -> datetime:
    """When the fact became true: an aware datetime, not after ``now`` (None: ``now``)."""
    if valid_from is None:
        return now
    if not isinstance(valid_from, datetime):
        raise InvalidCorrection(
            f"valid_from must be an aware datetime, got {type(valid_from).__name__}"
        )
    if valid_from.tzinfo is None or valid_from.utcoffset() is None:
        raise InvalidCorrection("valid_from must be an aware datetime (with a time zone)")
    if valid_from > now:
        raise InvalidCorrection("valid_from is later than now: a fact is remembered once true")
    return valid_from


def remembered_card(
    fact: str,
    *,
    user_id: int | None,
    thread_id: int,
    valid_from: datetime,
    now: datetime,
    salience: float,
) -> NewCard:
    """The card a remember writes (see the module doc); ``fact`` already passed the rules."""
    scope = Scope.USER if user_id is not None else Scope.THREAD if thread_id else Scope.CHAT
    return NewCard(
        scope=scope,
        thread_id=thread_id,
        user_id=user_id,
        card_type=REMEMBERED_TYPE,
        subject="",
        predicate="",
        object="",
        fact_text=fact,
        confidence=1.0,
        salience=salience,
        durability=Durability.PERMANENT,
        source_message_ids=(),
        valid_from=valid_from,
        observed_at=now,
        expires_at=None,
    )


def same_words(card: NewCard, found: Iterable[Card]) -> Card | None:
    """A live card of ``card``'s scope holding its words (normalised), among ``found``."""
    words = normalise(card.fact_text)
    for other in found:
        if other.live and other.scope_key == card.scope_key and normalise(other.fact_text) == words:
            return other
    return None


@dataclass(frozen=True, slots=True)
class RememberPlan:
    """What ``remember.lua`` reads (see its header)."""

    card: NewCard
    actor: str
    #: The chat's forget epoch as read before the embedding call.
    epoch: int
    #: A zero row's bytes when the chat holds no vector yet (``MEMORY_EMBEDDING_DIMENSION``).
    dim: int
    #: The model of the vector sent ('' without one).
    model: str = ""
    #: A live card of the same words in the same scope: (id, dedup hash as read).
    known: tuple[str, str] | None = None
    #: The caller's request id ('' for none), stamped on the card's history event.
    request_id: str = ""

    def as_json(self, *, vector: bool) -> dict[str, Any]:
        plan: dict[str, Any] = {
            "card": card_plan(self.card, None),
            "actor": self.actor,
            "epoch": str(self.epoch),
            "dim": str(self.dim),
            "model": self.model,
            "vec": "1" if vector else "",
            "req": self.request_id,
        }
        if self.known is not None:
            plan["known"] = list(self.known)
        return plan


@dataclass(frozen=True, slots=True)
class Remembered:
    """``remember.lua``'s answer: the card holding the fact, whether it is new, whether it
    waits for a vector, vectors refused; or a refusal (nothing written)."""

    card_id: str = ""
    created: bool = False
    pending: bool = False
    refused: int = 0
    #: A forget of the card's scope is in progress.
    forgetting: bool = False
    #: A forget of the chat came since the plan's epoch.
    forgotten: bool = False

    @classmethod
    def from_reply(cls, data: dict[str, Any]) -> Remembered:
        return cls(
            card_id=str(data.get("id") or ""),
            created=bool(data.get("created")),
            pending=bool(data.get("pending")),
            refused=int(data.get("refused") or 0),
            forgetting=bool(data.get("forgetting")),
            forgotten=bool(data.get("forgotten")),
        )


def remember_twin(
    state: ChatState,
    plan: RememberPlan,
    blob: bytes | None,
    *,
    now: str,
    history_max: int = HISTORY_MAX_EVENTS,
) -> tuple[ChatState, Remembered]:
    """Twin of ``lua/remember.lua`` (the state after, and the answer)."""
    state = state.copy()
    n = card_plan(plan.card, None)
    for token in state.forgetting:
        if token.split("|")[0] in ("chat", n["sk"]):
            return state, Remembered(forgetting=True)
    if state.forget > num(str(plan.epoch)):
        return state, Remembered(forgotten=True)
    write = Write(state, now)
    card = state.cards.get(state.dedup.get(n["h"], ""))
    if not is_live(card) and plan.known is not None:
        known = state.cards.get(plan.known[0]) or {}
        if is_live(known) and known.get("h") == plan.known[1] and known.get("sk") == n["sk"]:
            card = known
    created = False
    if card is not None and is_live(card):
        write.observe_again(card, n)
    else:
        card = write.create_card(n)
        card["op_by"] = plan.actor
        created = True
    if (blank(card.get("row")) or card.get("vp")) and blob is not None:
        write.model = plan.model
        write.set_vector(card, blob)
    if blank(card.get("row")):
        write.model = ""
        dim = int(num(state.meta.get("dim"))) or plan.dim
        write.set_vector(card, bytes(dim), own=True)
        if not blank(card.get("row")):
            card["vp"] = "1"
    if card.get("vp"):
        state.vecwait.setdefault(card["id"], num(now))
    else:
        state.vecwait.pop(card["id"], None)
    write.index_live(card)
    write.save(card)
    write.cause = {"via": "remember", "by": plan.actor, "req": plan.request_id}
    write.history_max = max(2, history_max)
    write.history_add(card["id"], "created" if created else "observed")
    state.retracted.pop(n["h"], None)
    write.finish()
    return state, Remembered(
        card_id=card["id"],
        created=created,
        pending=card.get("vp") == "1",
        refused=write.refused,
    )


@dataclass(frozen=True, slots=True)
class FillItem:
    """One waiting card a fill pass embedded: its id, the dedup hash of the text embedded,
    the vector (None: the embedder left it empty)."""

    card_id: str
    h: str
    vector: bytes | None


@dataclass(frozen=True, slots=True)
class Filled:
    """``fill_vectors.lua``'s answer: cards given their vector, cards that no longer wait
    (dropped from the list), cards left waiting, vectors refused."""

    filled: int = 0
    dropped: int = 0
    kept: int = 0
    refused: int = 0

    @classmethod
    def from_reply(cls, data: dict[str, Any]) -> Filled:
        return cls(
            filled=int(data.get("filled") or 0),
            dropped=int(data.get("dropped") or 0),
            kept=int(data.get("kept") or 0),
            refused=int(data.get("refused") or 0),
        )


def fill_plan(items: Sequence[FillItem], model: str) -> tuple[dict[str, Any], list[bytes]]:
    """``fill_vectors.lua``'s plan and its vectors (an item's index: 1-based, 0 for none)."""
    blobs: list[bytes] = []
    entries: list[list[str | int]] = []
    for item in items:
        index = 0
        if item.vector:
            blobs.append(item.vector)
            index = len(blobs)
        entries.append([item.card_id, item.h, index])
    return {"model": model, "items": entries}, blobs


def fill_twin(
    state: ChatState, items: Sequence[FillItem], model: str, *, now: str
) -> tuple[ChatState, Filled]:
    """Twin of ``lua/fill_vectors.lua`` (the state after, and the answer)."""
    state = state.copy()
    write = Write(state, now, model)
    filled = dropped = kept = 0
    for item in items:
        card = state.cards.get(item.card_id)
        if card is None or not is_live(card) or not card.get("vp"):
            state.vecwait.pop(item.card_id, None)
            dropped += 1
        elif card.get("h") == item.h and item.vector:
            write.set_vector(card, item.vector)
            if card.get("vp"):
                kept += 1
            else:
                write.save(card)
                state.vecwait.pop(item.card_id, None)
                filled += 1
        else:
            kept += 1
    write.finish()
    return state, Filled(filled=filled, dropped=dropped, kept=kept, refused=write.refused)


def to_fill(cards: Iterable[Card]) -> list[Card]:
    """The cards listed as waiting that a fill pass embeds: live, still without a vector
    (the others are sent without one: the script takes them off the list)."""
    return [c for c in cards if c.live and not c.has_embedding]
