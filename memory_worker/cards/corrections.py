"""Single-card corrections (§10), the functional core: retract a card, correct its fact.

- A card is named across chats by its reference ``<chat id>:<card id>``
  (:attr:`Card.ref <memory_worker.cards.model.Card.ref>`; card ids count per chat):
  :func:`parse_card_ref`.
- **Retract** withdraws a card: it keeps its text with status ``retracted`` and who and
  why, leaves every live index (never shown, recalled or put in a context), and its fact's
  dedup hash is recorded with the time, its vector row marked withdrawn. A run whose card
  states that fact — the same hash, or the same meaning
  (:mod:`memory_worker.cards.withdrawn`) — and cites only messages older than the retraction
  does not store it (:func:`relearn_refused`, checked inside the run's atomic write, so a run
  in flight cannot resurrect it); a newer message restating it is learned again — the
  person changed their mind.
- **Correct** writes a new card with the corrected fact, asserted by hand (``asserted_by``
  = the actor, ``corrects`` = the old id), which supersedes the old one (kept with its
  validity end, §10). The old fact is recorded like a retraction: older messages do not
  bring it back beside the correction.

:func:`retract_twin` and :func:`correct_twin` are the Python twins of ``lua/retract.lua``
and ``lua/correct.lua`` (equivalence: ``tests/cards/test_card_corrections_twin.py``). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_worker.cards.chat_state import ChatState, Write, blank, is_live, num
from memory_worker.cards.model import dedup_hash
from memory_worker.cards.rules import is_text, text_problem
from memory_worker.errors import InvalidCardRef, InvalidCorrection
from memory_worker.keys import HISTORY_MAX_EVENTS
from memory_worker.privacy.masking import contains_secret

#: Longest actor name and retraction reason kept (bytes of UTF-8).
ACTOR_MAX_BYTES = 200
REASON_MAX_BYTES = 1000


def parse_card_ref(ref: object) -> tuple[int, str]:
    """``"<chat id>:<card id>"`` → (chat id, card id), or :class:`InvalidCardRef`."""
    if not isinstance(ref, str):
        raise InvalidCardRef(ref)
    chat, sep, card = ref.strip().rpartition(":")
    if not sep or not card.isdigit() or not chat.lstrip("-").isdigit() or chat in ("", "-"):
        raise InvalidCardRef(ref)
    return int(chat), str(int(card))


def relearn_refused(retracted_ms: str | None, seen_ms: str) -> bool:
    """A new card of a retracted fact is refused when every message it cites (``seen``: the
    newest) is older than the retraction (twin of ``retracted_after`` in ``helpers.lua``)."""
    return not blank(retracted_ms) and num(seen_ms) < num(retracted_ms)


def check_actor(actor: object) -> str:
    """Who acts: a non-blank str (logged and audited: an id or a name, never card text)."""
    if not isinstance(actor, str) or not actor.strip():
        raise InvalidCorrection(
            "actor must be a non-empty str (who retracts, corrects or remembers)"
        )
    if not is_text(actor):
        raise InvalidCorrection("actor is not Unicode text (a lone surrogate)")
    actor = " ".join(actor.split())
    if len(actor.encode()) > ACTOR_MAX_BYTES:
        raise InvalidCorrection(f"actor is over {ACTOR_MAX_BYTES} bytes")
    return actor


#: Longest request id kept (bytes of UTF-8).
REQUEST_ID_MAX_BYTES = 200


def check_request_id(request_id: object) -> str:
    """The caller's id of the request that made a change (None: none, ''): a str of at most
    :data:`REQUEST_ID_MAX_BYTES` on one line, stamped on the card's history event (an id,
    never text: one holding a secret is refused)."""
    if request_id is None:
        return ""
    if not isinstance(request_id, str):
        raise InvalidCorrection(f"request_id must be a str, got {type(request_id).__name__}")
    if not is_text(request_id) or any(ch in request_id for ch in "\r\n\0"):
        raise InvalidCorrection("request_id is not one line of Unicode text")
    request_id = request_id.strip()
    if len(request_id.encode()) > REQUEST_ID_MAX_BYTES:
        raise InvalidCorrection(f"request_id is over {REQUEST_ID_MAX_BYTES} bytes")
    if contains_secret(request_id):
        raise InvalidCorrection("request_id holds what looks like a secret: not stored")
    return request_id


def check_reason(reason: object) -> str:
    """Why a card is retracted: a str (kept on the card, never logged)."""
    if not isinstance(reason, str):
        raise InvalidCorrection(f"reason must be a str, got {type(reason).__name__}")
    if not is_text(reason):
        raise InvalidCorrection("reason is not Unicode text (a lone surrogate)")
    if len(reason.encode()) > REASON_MAX_BYTES:
        raise InvalidCorrection(f"reason is over {REASON_MAX_BYTES} bytes")
    if contains_secret(reason):
        raise InvalidCorrection("reason holds what looks like a secret: not stored")
    return reason.strip()


def check_fact(text: object, max_bytes: int) -> str:
    """A corrected fact: the card text rule (:func:`~memory_worker.cards.rules.text_problem`:
    non-blank, at most ``max_bytes``, ``MEMORY_CARD_MAX_BYTES``, no secret — a card never holds
    one, §14). Kept as written: never translated."""
    if not isinstance(text, str):
        raise InvalidCorrection(f"fact_text must be a str, got {type(text).__name__}")
    text = text.strip()
    problem = text_problem(text, "", "", "", max_bytes=max_bytes)
    if problem == "not_text":
        raise InvalidCorrection("fact_text is not Unicode text (a lone surrogate)")
    if problem == "empty":
        raise InvalidCorrection("fact_text is empty")
    if problem == "too_long":
        raise InvalidCorrection(f"fact_text is over {max_bytes} bytes (MEMORY_CARD_MAX_BYTES)")
    if problem == "secret":
        raise InvalidCorrection("fact_text holds what looks like a secret: a card never does")
    return text


#: What a correction keeps of the card it corrects (``correct.lua`` copies the same).
_KEPT = (
    "scope",
    "sk",
    "thread",
    "user",
    "type",
    "subject",
    "predicate",
    "sal",
    "dur",
    "exp",
    "src",
)


@dataclass(frozen=True, slots=True)
class CorrectionPlan:
    """What ``correct.lua`` reads: the corrected fact, its dedup hash, who asserts it, the
    caller's request id ('' for none)."""

    fact: str
    object: str
    h: str
    actor: str
    model: str
    request_id: str = ""

    def as_json(self, *, vector: bool) -> dict[str, str]:
        return {
            "fact": self.fact,
            "object": self.object,
            "h": self.h,
            "actor": self.actor,
            "model": self.model,
            "vec": "1" if vector else "",
            "req": self.request_id,
        }


def correction_plan(
    sk: str,
    subject: str,
    predicate: str,
    fact: str,
    *,
    actor: str,
    model: str,
    request_id: str = "",
) -> CorrectionPlan:
    """The corrected card keeps the old one's scope, subject and predicate; its object is
    left empty (the old object belonged to the old fact) and its identity is its text."""
    h = dedup_hash(sk, subject, predicate, "", fact)
    return CorrectionPlan(fact, "", h, actor, model, request_id)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A retract or correct script's answer."""

    found: bool
    done: bool = False
    status: str = ""
    card_id: str = ""
    created: bool = False
    refused: int = 0

    @classmethod
    def from_reply(cls, data: dict[str, Any]) -> Outcome:
        return cls(
            found=bool(data.get("found")),
            done=bool(data.get("done")),
            status=str(data.get("status") or ""),
            card_id=str(data.get("id") or ""),
            created=bool(data.get("created")),
            refused=int(data.get("refused") or 0),
        )


def retract_twin(
    state: ChatState,
    card_id: str,
    *,
    actor: str,
    reason: str,
    now: str,
    request_id: str = "",
    history_max: int = HISTORY_MAX_EVENTS,
) -> tuple[ChatState, Outcome]:
    """Twin of ``lua/retract.lua`` (the state after, and the answer)."""
    state = state.copy()
    card = state.cards.get(card_id)
    if card is None:
        return state, Outcome(found=False)
    was = card["status"]
    if was == "retracted":
        return state, Outcome(found=True, status=was, card_id=card["id"])
    cause = {"via": "retract", "by": actor, "req": request_id}
    write = Write(state, now, cause=cause, history_max=history_max)
    write.retire(card, "retracted")
    write.withdraw(card)
    card["ret_by"], card["ret_why"] = actor, reason
    write.save(card)
    write.history_add(card["id"], "retracted")
    write.record_retraction(card.get("h"))
    write.finish()
    return state, Outcome(found=True, done=True, status=was, card_id=card["id"])


def correct_twin(
    state: ChatState,
    card_id: str,
    plan: CorrectionPlan,
    blob: bytes | None,
    *,
    now: str,
    history_max: int = HISTORY_MAX_EVENTS,
) -> tuple[ChatState, Outcome]:
    """Twin of ``lua/correct.lua`` (the state after, and the answer)."""
    state = state.copy()
    old = state.cards.get(card_id)
    if old is None:
        return state, Outcome(found=False)
    if not is_live(old):
        return state, Outcome(found=True, status=old["status"])
    if plan.h == old.get("h"):
        return state, Outcome(found=True, status=old["status"], card_id=old["id"])
    cause = {"via": "correct", "by": plan.actor, "req": plan.request_id}
    write = Write(state, now, plan.model, cause=cause, history_max=history_max)
    holder = state.cards.get(state.dedup.get(plan.h, ""))
    created = False
    if not is_live(holder):
        state.seq += 1
        new = {"id": str(state.seq), "object": plan.object, "fact": plan.fact}
        new |= {k: old[k] for k in _KEPT if k in old}
        new |= dict.fromkeys(("vf", "obs_at", "created", "updated"), now)
        new |= {"conf": "1.0000", "obs": "1", "status": "active", "h": plan.h}
        new |= {"op_by": plan.actor, "corrects": old["id"]}
        if blob is not None:
            write.set_vector(new, blob)
        write.index_live(new)
        write.save(new)
        holder, created = new, True
        write.history_add(new["id"], "created", old["id"])
    else:
        assert holder is not None
        write.history_add(holder["id"], "supersedes", old["id"])
    write.retire(old, "superseded")
    write.withdraw(old)
    old["vu"], old["sup_by"] = now, holder["id"]
    write.save(old)
    write.history_add(old["id"], "corrected", holder["id"])
    state.retracted.pop(plan.h, None)
    write.record_retraction(old.get("h"))
    write.finish()
    return state, Outcome(
        found=True,
        done=True,
        status="active",
        card_id=holder["id"],
        created=created,
        refused=write.refused,
    )
