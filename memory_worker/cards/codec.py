"""The card store's wire format: the only place the short-key JSON schema lives.

A stored card is a JSON object of strings under short keys (``conf``,
``obs_at``, ``sup_by``…; every value a string, so ids never lose digits to
Lua's number formatting). :data:`CARD_FIELDS` is the one table of that
schema: each row names the :class:`Card` attribute, the short key, how the
value is written and read, and whether a run's plan sends it (the Lua
scripts fill in the rest: id, status, counters, times of the write).
:func:`card_plan` (a :class:`NewCard` → the plan a script reads) and
:func:`card_from_json` (stored JSON → :class:`Card`) both walk that table.

Also here: times as epoch milliseconds, the plan entries of resolutions,
links and episodes, the episode hash decoder, and the JSON handed to Lua.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from memory_worker.cards.model import Card, CardStatus, Durability, Episode, Scope
from memory_worker.cards.vectors import VectorBlobs
from memory_worker.cards.writes import (
    ApplyResult,
    EpisodeWrite,
    LinkWrite,
    NewCard,
    ResolutionWrite,
    RunWrites,
)
from memory_worker.privacy.forget import author_fields

# --- scalars --------------------------------------------------------------------------------


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def to_ms(moment: datetime) -> str:
    """Epoch milliseconds, exactly (integer arithmetic: ``timestamp() * 1000`` in floats is
    a millisecond short for about one time in 150, and ``from_ms`` would not round-trip)."""
    if moment.tzinfo is None:  # a naive time is local, as ``timestamp()`` reads it
        return str(int(moment.timestamp() * 1000))
    return str((moment - _EPOCH) // _MS)


def from_ms(value: str | None) -> datetime | None:
    if value is None or value == "":
        return None
    # integer arithmetic: ``fromtimestamp(ms / 1000)`` goes through a float and lands a
    # millisecond short for some times past 2265 (9319176193411 read back as …410)
    return _EPOCH + int(value) * _MS


def req_ms(value: str | None) -> datetime:
    moment = from_ms(value)
    if moment is None:
        raise ValueError("missing timestamp")
    return moment


def unit(value: float) -> str:
    """A confidence/salience as stored: clamped to [0, 1], four decimals."""
    return f"{min(1.0, max(0.0, value)):.4f}"


def lua_json(value: Any) -> bytes:
    """JSON for cjson: no NULs or lone surrogates can reach Lua (orjson rejects the latter)."""
    return orjson.dumps(value)


# --- the card schema ----------------------------------------------------------------------

_Read = Callable[[dict[str, str], str], Any]


@dataclass(frozen=True, slots=True)
class Field:
    """One short key of a stored card.

    ``attr`` is the attribute of :class:`Card` it reads into (None: not read
    back); ``write`` turns the :class:`NewCard` value into the plan string
    (None: the script sets it, a run never sends it; the write returning None
    leaves the key out of the plan).
    """

    key: str
    attr: str | None
    read: _Read
    write: Callable[[Any], str | None] | None = None
    #: The :class:`NewCard` attribute written (defaults to ``attr``).
    source: str | None = None


def _text(data: dict[str, str], key: str) -> str:
    return data[key]


def _opt_text(data: dict[str, str], key: str) -> str | None:
    return data.get(key) or None


def _int0(data: dict[str, str], key: str) -> int:
    return int(data.get(key) or 0)


def _opt_int(data: dict[str, str], key: str) -> int | None:
    value = data.get(key)
    return int(value) if value else None


def _float(data: dict[str, str], key: str) -> float:
    return float(data[key])


def _int(data: dict[str, str], key: str) -> int:
    return int(data[key])


def _time(data: dict[str, str], key: str) -> datetime:
    return req_ms(data[key])


def _opt_time(data: dict[str, str], key: str) -> datetime | None:
    return from_ms(data.get(key))


def _ids(data: dict[str, str], key: str) -> list[int]:
    return [int(s) for s in data.get(key, "").split(",") if s]


def _has_vector(data: dict[str, str], key: str) -> bool:
    """A vector row, and not the zero row of a card waiting for its vector (``vp``)."""
    return bool(data.get(key)) and not data.get("vp")


def _unread(data: dict[str, str], key: str) -> None:
    return None


def _scope(data: dict[str, str], key: str) -> Scope:
    return Scope(data[key])


def _status(data: dict[str, str], key: str) -> CardStatus:
    return CardStatus(data[key])


def _durability(data: dict[str, str], key: str) -> Durability | None:
    value = data.get(key)
    return Durability(value) if value else None


def _same(value: str) -> str:
    return value


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


def _enum(value: Any) -> str | None:
    return None if value is None else str(value.value)


def _ms_or_blank(value: datetime | None) -> str:
    return to_ms(value) if value else ""


def _id_list(value: Sequence[int]) -> str:
    return ",".join(str(s) for s in sorted(set(value)))


#: The stored card, key by key (plan order: the order a run's plan lists them).
CARD_FIELDS: tuple[Field, ...] = (
    Field("h", "dedup_hash", _text, _same),
    Field("scope", "scope", _scope, _enum),
    Field("sk", None, _unread, _same, source="scope_key"),
    Field("thread", "thread_id", _int0, str),
    Field("type", "card_type", _text, _same),
    Field("subject", "subject", _text, _same),
    Field("predicate", "predicate", _text, _same),
    Field("object", "object", _text, _same),
    Field("fact", "fact_text", _text, _same),
    Field("conf", "confidence", _float, unit),
    Field("sal", "salience", _float, unit),
    Field("vf", "valid_from", _time, to_ms),
    Field("obs_at", "observed_at", _time, to_ms),
    Field("exp", "expires_at", _opt_time, _ms_or_blank),
    Field("src", "source_message_ids", _ids, _id_list),
    Field("user", "user_id", _opt_int, _optional),
    Field("dur", "durability", _durability, _enum),
    Field("id", "id", _text),
    Field("obs", "observation_count", _int),
    Field("status", "status", _status),
    Field("vu", "valid_until", _opt_time),
    Field("created", "created_at", _time),
    Field("updated", "updated_at", _time),
    Field("retracted", "retracted_at", _opt_time),
    Field("sup_by", "superseded_by", _opt_text),
    Field("merged_into", "merged_into", _opt_text),
    Field("group", "conflict_group", _opt_text),
    Field("row", "has_embedding", _has_vector),
    Field("merge_at", "last_merge_at", _opt_time),
    Field("run", "first_run_id", _opt_text),
    Field("ret_by", "retracted_by", _opt_text),
    Field("ret_why", "retract_reason", _opt_text),
    Field("op_by", "asserted_by", _opt_text),
    Field("corrects", "corrects", _opt_text),
)


def card_from_json(chat_id: int, raw: bytes | str) -> Card:
    """Parse the stored card JSON (every value a string)."""
    data: dict[str, str] = orjson.loads(raw)
    values = {f.attr: f.read(data, f.key) for f in CARD_FIELDS if f.attr is not None}
    return Card(chat_id=chat_id, **values)


def card_stored(card: Card) -> dict[str, str]:
    """A card as stored: the short-key JSON of :data:`CARD_FIELDS`, every value a string,
    None left out — what an import writes (``card_from_json`` reads it back equal). Its
    vector row (``row``) is the writing script's to assign."""
    stored: dict[str, str] = {}
    for f in CARD_FIELDS:
        if f.key == "row":
            continue
        value = card.scope_key if f.attr is None else getattr(card, f.attr)
        if value is not None:
            stored[f.key] = _stored_value(value)
    return stored


def _stored_value(value: Any) -> str:
    if isinstance(value, datetime):
        return to_ms(value)
    if isinstance(value, Scope | CardStatus | Durability):
        return str(value.value)
    if isinstance(value, float):
        return unit(value)
    if isinstance(value, list):
        return _id_list(value)
    return str(value)


def card_plan(card: NewCard, vec_index: int | None) -> dict[str, str]:
    """What a run's plan sends for one new card; ``vec`` is its 1-based vector index."""
    plan: dict[str, str] = {}
    for f in CARD_FIELDS:
        if f.write is None:
            continue
        value = f.write(getattr(card, f.source or f.attr or f.key))
        if value is not None:
            plan[f.key] = value
    if vec_index is not None:
        plan["vec"] = str(vec_index)
    return plan


# --- the rest of a plan -------------------------------------------------------------------


def resolution_plan(res: ResolutionWrite, vectors: VectorBlobs) -> dict[str, str]:
    """A resolution's plan entry; its rewrite vector (when it rewrites) goes to ``vectors``."""
    entry = {"old": res.old_card_id, "op": res.op.value}
    if res.new_index is not None:
        entry["new"] = str(res.new_index + 1)
    if res.into_card_id:
        entry["into"] = res.into_card_id
    entry.update(rewrite_plan(res.new_fact_text, res.new_dedup_hash, res.embedding, vectors))
    return entry


def rewrite_plan(
    text: str | None,
    dedup_hash: str | None,
    embedding: Sequence[float] | None,
    vectors: VectorBlobs,
) -> dict[str, str]:
    """A rewritten fact's plan fields (text, dedup hash, vector index); none without a text."""
    if not text:
        return {}
    fields = {"text": text, "h": dedup_hash or ""}
    index = vectors.add(embedding)
    if index is not None:
        fields["vec"] = str(index)
    return fields


def link_plan(link: LinkWrite) -> dict[str, str]:
    return {
        "from": str(link.from_index + 1),
        "to": str(link.to_index + 1),
        "rel": link.relation,
        "conf": unit(link.confidence),
    }


def episode_plan(ep: EpisodeWrite, vec_index: int | None) -> dict[str, str]:
    """The episode's plan entry (the script adds run, created, cards; ``emb`` when a vector)."""
    episode = {
        "summary": ep.summary,
        "topics": orjson.dumps(list(ep.topics)).decode(),
        "participants": orjson.dumps(list(ep.participants)).decode(),
        "start": to_ms(ep.range_start),
        "end": to_ms(ep.range_end),
        "thread": str(ep.thread_id),
        "messages": str(ep.message_count),
    }
    if vec_index is not None:
        episode["vec"] = str(vec_index)
    return episode


def run_plan(
    run_id: str,
    writes: RunWrites,
    vectors: VectorBlobs,
    *,
    refused: Collection[int] = (),
    refused_rewrites: Collection[int] = (),
    withdrawn_marks: int | None = None,
) -> dict[str, Any]:
    """The plan ``apply.lua`` reads for a run's writes (their vectors added to ``vectors``).

    ``refused`` (indexes of new cards) and ``refused_rewrites`` (of resolutions) state a
    withdrawn fact (:mod:`memory_worker.cards.withdrawals`): marked ``ret``, not written;
    ``withdrawn_marks`` is the count of withdrawn marks that check saw (``wn``).
    """
    cards = [card_plan(card, vectors.add(card.embedding)) for card in writes.cards]
    resolutions = [resolution_plan(res, vectors) for res in writes.resolutions]
    for index in refused:
        cards[index]["ret"] = "1"
    for index in refused_rewrites:
        resolutions[index]["ret"] = "1"
    plan: dict[str, Any] = {
        "obs_at": to_ms(writes.observed_at),
        "cards": cards,
        "res": resolutions,
        "links": [link_plan(link) for link in writes.links],
        "model": writes.embedding_model or "",
        "authors": author_fields(
            run_id,
            writes.authors,
            {m for card in writes.cards for m in card.source_message_ids},
        ),
    }
    if writes.forget_epoch is not None:
        plan["epoch"] = str(writes.forget_epoch)
    if withdrawn_marks is not None:
        plan["wn"] = str(withdrawn_marks)
    if writes.episode is not None:
        ep = writes.episode
        plan["episode"] = episode_plan(ep, vectors.add(ep.embedding))
    return plan


def episode_from_hash(chat_id: int, raw: dict[bytes, bytes]) -> Episode:
    """Parse a stored episode hash (the keys of :func:`episode_plan` plus the script's)."""
    data = {k.decode(): v for k, v in raw.items()}
    text = {k: v.decode() for k, v in data.items() if k != "emb"}
    return Episode(
        run_id=text["run"],
        chat_id=chat_id,
        thread_id=int(text.get("thread") or 0),
        summary=text.get("summary", ""),
        topics=orjson.loads(text.get("topics") or "[]"),
        participants=orjson.loads(text.get("participants") or "[]"),
        range_start=req_ms(text["start"]),
        range_end=req_ms(text["end"]),
        message_count=int(text.get("messages") or 0),
        card_ids=[s for s in text.get("cards", "").split(",") if s],
        created_at=req_ms(text["created"]),
        has_embedding="emb" in data,
    )


def apply_result(data: dict[str, Any]) -> ApplyResult:
    """The apply script's counts (an applied run; ``cards`` is the comma-joined id list)."""
    return ApplyResult(
        applied=True,
        inserted=int(data["inserted"]),
        observed=int(data["observed"]),
        superseded=int(data["superseded"]),
        competing=int(data["competing"]),
        rewritten=int(data["rewritten"]),
        merged=int(data["merged"]),
        reinforced=int(data["reinforced"]),
        demoted=int(data["demoted"]),
        skipped=int(data["skipped"]),
        links=int(data["links"]),
        episodes=int(data["episodes"]),
        card_ids=tuple(s for s in str(data.get("cards") or "").split(",") if s),
        vectors_refused=int(data.get("vectors_refused") or 0),
        retracted=int(data.get("retracted") or 0),
    )
