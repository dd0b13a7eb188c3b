"""A run's kept extraction (§7): the validated answer of its farm calls, kept between attempts.

When the embedding or the card write fails after every extraction call of a run succeeded,
the run is released (or failed) and its next attempt would ask the farm for the same
extraction again. Instead the attempt keeps its validated extraction with the run (the run
store's ``run:<id>:extraction``, written by ``runs/lua/keep_extraction.lua`` under the lease,
the forget epoch and a time to live), and the next attempt goes straight to the embedding
and the card write.

Pure, no Redis: what is kept (:class:`KeptExtraction`: the cards, resolutions, links and
episode facts exactly as the card write takes them, and the counts the completed run
reports), its bytes (:func:`encode`, :func:`decode`) and when it no longer holds
(:func:`stale_reason`). Every text in it is what the card store would keep: cards passed the
§10 checks (no secret), the summary and labels are masked as the episode stores them; a
stored value that is not such a record — misshapen, another format, a card text with a
secret — decodes to None and the run extracts again.

What invalidates it (:class:`Staleness`):

- ``prompt_version`` — the run is claimed under another prompt version;
- ``slice`` — its slice is not the one extracted: other messages (a forget stripped some),
  another window or cursor, other batches, or other validation limits
  (:func:`slice_digest`);
- ``forget_epoch`` — a forget of the chat came after the extraction (the forget also
  erases it; the epoch is the fence should an erase and a keep cross);
- ``expired`` — older than ``MEMORY_EXTRACTION_KEEP_SECONDS`` (Redis expires the key too).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

import orjson

from memory_worker.cards import LinkWrite, NewCard, ResolutionWrite
from memory_worker.cards.model import Durability, Scope
from memory_worker.cards.rules import (
    MAX_PARTICIPANT_NAMES,
    MAX_TOPICS,
    episode_labels,
    episode_summary,
    score_problem,
    text_problem,
)
from memory_worker.cards.writes import ResolutionOp
from memory_worker.consolidation.batching import PromptMessage
from memory_worker.consolidation.validation import Limits
from memory_worker.models import Message, RunRequest

#: The record's format; another one decodes to None (the run extracts again).
FORMAT = 1


class Staleness(StrEnum):
    """Why a kept extraction no longer serves the attempt (see the module docstring)."""

    PROMPT_VERSION = "prompt_version"
    SLICE = "slice"
    FORGET_EPOCH = "forget_epoch"
    EXPIRED = "expired"


@dataclass(frozen=True, slots=True)
class ExtractionCounts:
    """What the extraction cost and dropped: the completed run reports them (counts only)."""

    batches: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    existing_cards_shown: int = 0
    malformed_items: int = 0
    salvaged_answers: int = 0
    dropped_by_validation: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KeptExtraction:
    """A run's validated extraction as the card write takes it, and what it holds for."""

    prompt_version: str
    slice_digest: str
    forget_epoch: int
    kept_at_ms: int
    cards: tuple[NewCard, ...] = ()
    resolutions: tuple[ResolutionWrite, ...] = ()
    links: tuple[LinkWrite, ...] = ()
    summary: str = ""
    topics: tuple[str, ...] = ()
    participants: tuple[str, ...] = ()
    counts: ExtractionCounts = field(default_factory=ExtractionCounts)


def slice_digest(
    request: RunRequest,
    kept: Sequence[Message],
    covered: Sequence[Message],
    batches: Sequence[Sequence[PromptMessage]],
    limits: Limits,
) -> str:
    """What the extraction was made of: the chat, thread, window and cursor, every message
    sent to the farm (all its fields), the covered ids, the batches' pieces and the limits
    validation applied (sha256, hex)."""
    data = {
        "chat": request.chat_id,
        "thread": request.thread_id,
        "window": [request.range_start.isoformat(), request.range_end.isoformat()],
        "cursor": request.cursor.model_dump(mode="json") if request.cursor else None,
        "kept": [m.model_dump(mode="json") for m in kept],
        "covered": [m.message_id for m in covered],
        "batches": [[[p.message_id, p.part] for p in batch] for batch in batches],
        "limits": [
            limits.card_max_bytes,
            limits.ephemeral_ttl.total_seconds(),
            limits.short_ttl.total_seconds(),
        ],
    }
    return hashlib.sha256(orjson.dumps(data)).hexdigest()


def stale_reason(
    record: KeptExtraction,
    *,
    prompt_version: str,
    digest: str,
    forget_epoch: int,
    now_ms: int,
    ttl_ms: int,
) -> Staleness | None:
    """Why ``record`` does not serve this attempt (None: it does)."""
    if record.prompt_version != prompt_version:
        return Staleness.PROMPT_VERSION
    if record.slice_digest != digest:
        return Staleness.SLICE
    if record.forget_epoch != forget_epoch:
        return Staleness.FORGET_EPOCH
    if not record.kept_at_ms <= now_ms < record.kept_at_ms + ttl_ms:
        return Staleness.EXPIRED
    return None


# --- bytes ---------------------------------------------------------------------------------


def encode(record: KeptExtraction) -> bytes:
    """The record as stored (JSON; vectors are never kept: they come after it)."""
    c = record.counts
    return orjson.dumps(
        {
            "format": FORMAT,
            "prompt_version": record.prompt_version,
            "slice": record.slice_digest,
            "epoch": record.forget_epoch,
            "at": record.kept_at_ms,
            "cards": [_card_json(card) for card in record.cards],
            "resolutions": [
                [
                    r.old_card_id,
                    r.op.value,
                    r.new_index,
                    r.into_card_id,
                    r.new_fact_text,
                    r.new_dedup_hash,
                ]
                for r in record.resolutions
            ],
            "links": [[x.from_index, x.to_index, x.relation, x.confidence] for x in record.links],
            "summary": record.summary,
            "topics": list(record.topics),
            "participants": list(record.participants),
            "counts": [
                c.batches,
                c.llm_calls,
                c.prompt_tokens,
                c.completion_tokens,
                c.existing_cards_shown,
                c.malformed_items,
                c.salvaged_answers,
            ],
            "dropped": dict(c.dropped_by_validation),
        }
    )


def _card_json(card: NewCard) -> list[Any]:
    return [
        card.scope.value,
        card.thread_id,
        card.user_id,
        card.card_type,
        card.subject,
        card.predicate,
        card.object,
        card.fact_text,
        card.confidence,
        card.salience,
        card.durability.value if card.durability else None,
        list(card.source_message_ids),
        card.valid_from.isoformat(),
        card.observed_at.isoformat(),
        card.expires_at.isoformat() if card.expires_at else None,
    ]


def decode(raw: bytes | str | None, *, card_max_bytes: int) -> KeptExtraction | None:
    """The record in ``raw``; None when there is none, or it is not one this code would have
    written — any shape or format problem, a card the card store may not keep (§10: empty,
    longer than ``card_max_bytes``, a secret; a score outside 0–1), a summary or label not
    masked as the episode stores it. The run then extracts again; decoding never raises."""
    if raw is None:
        return None
    try:
        data = orjson.loads(raw)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        cards = tuple(_card(item, card_max_bytes) for item in _list(data, "cards"))
        resolutions = tuple(
            _resolution(item, len(cards), card_max_bytes) for item in _list(data, "resolutions")
        )
        links = tuple(_link(item, len(cards)) for item in _list(data, "links"))
        summary = _str(data.get("summary"))
        if episode_summary(summary) != summary:
            raise ValueError("summary")
        return KeptExtraction(
            prompt_version=_str(data.get("prompt_version")),
            slice_digest=_str(data.get("slice")),
            forget_epoch=_count(data.get("epoch")),
            kept_at_ms=_count(data.get("at")),
            cards=cards,
            resolutions=resolutions,
            links=links,
            summary=summary,
            topics=_labels(data.get("topics"), MAX_TOPICS),
            participants=_labels(data.get("participants"), MAX_PARTICIPANT_NAMES),
            counts=_counts(data.get("counts"), data.get("dropped")),
        )
    except (ValueError, TypeError, KeyError, OverflowError):
        return None


def _list(data: Mapping[str, Any], name: str) -> list[Any]:
    value = data.get(name)
    if not isinstance(value, list):
        raise ValueError(name)
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("text")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("integer")
    return value


def _count(value: Any) -> int:
    number = _int(value)
    if number < 0:
        raise ValueError("count")
    return number


def _opt_int(value: Any) -> int | None:
    return None if value is None else _int(value)


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError("number")
    return float(value)


def _score(value: Any) -> float:
    score = _float(value)
    if score_problem(score) is not None:
        raise ValueError("score")
    return score


def _when(value: Any) -> datetime:
    moment = datetime.fromisoformat(_str(value))
    if moment.tzinfo is None:
        raise ValueError("time")
    return moment


def _card(item: Any, max_bytes: int) -> NewCard:
    if not isinstance(item, list) or len(item) != 15:
        raise ValueError("card")
    scope, thread, user, kind, subject, predicate, obj, fact, conf, sal, dur, src = item[:12]
    if not isinstance(src, list):
        raise ValueError("sources")
    texts = (_str(fact), _str(subject), _str(predicate), _str(obj))
    if text_problem(*texts, max_bytes=max_bytes) is not None:
        raise ValueError("card text")
    return NewCard(
        scope=Scope(_str(scope)),
        thread_id=_int(thread),
        user_id=_opt_int(user),
        card_type=_str(kind),
        subject=texts[1],
        predicate=texts[2],
        object=texts[3],
        fact_text=texts[0],
        confidence=_score(conf),
        salience=_score(sal),
        durability=None if dur is None else Durability(_str(dur)),
        source_message_ids=tuple(_int(m) for m in src),
        valid_from=_when(item[12]),
        observed_at=_when(item[13]),
        expires_at=None if item[14] is None else _when(item[14]),
    )


def _index(value: Any, cards: int) -> int | None:
    if value is None:
        return None
    index = _int(value)
    if not 0 <= index < cards:
        raise ValueError("index")
    return index


def _resolution(item: Any, cards: int, max_bytes: int) -> ResolutionWrite:
    if not isinstance(item, list) or len(item) != 6:
        raise ValueError("resolution")
    old, op, new_index, into, text, digest = item
    if text is not None and text_problem(_str(text), "-", "-", "-", max_bytes=max_bytes):
        raise ValueError("resolution text")
    return ResolutionWrite(
        old_card_id=_str(old),
        op=ResolutionOp(_str(op)),
        new_index=_index(new_index, cards),
        into_card_id=None if into is None else _str(into),
        new_fact_text=text,
        new_dedup_hash=None if digest is None else _str(digest),
    )


def _link(item: Any, cards: int) -> LinkWrite:
    if not isinstance(item, list) or len(item) != 4:
        raise ValueError("link")
    source, target = _index(item[0], cards), _index(item[1], cards)
    if source is None or target is None:
        raise ValueError("link")
    return LinkWrite(source, target, _str(item[2]), _score(item[3]))


def _labels(value: Any, limit: int) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError("labels")
    labels = [_str(v) for v in value]
    if episode_labels(labels, limit) != labels:  # kept as the episode stores them
        raise ValueError("labels")
    return tuple(labels)


def _counts(value: Any, dropped: Any) -> ExtractionCounts:
    if not isinstance(value, list) or len(value) != 7 or not isinstance(dropped, dict):
        raise ValueError("counts")
    batches, calls, prompt, completion, shown, malformed, salvaged = (_count(v) for v in value)
    return ExtractionCounts(
        batches=batches,
        llm_calls=calls,
        prompt_tokens=prompt,
        completion_tokens=completion,
        existing_cards_shown=shown,
        malformed_items=malformed,
        salvaged_answers=salvaged,
        dropped_by_validation={_str(k): _count(v) for k, v in dropped.items()},
    )
