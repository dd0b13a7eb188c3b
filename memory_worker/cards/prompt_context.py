"""A prompt-ready memory context (§13), the functional core: rank, deduplicate, budget, render.

``MemoryQueue.context`` hands over the candidates — the most recently observed live cards
of the reader's scopes (the chat's and the user's own), read as light :class:`Entry`
records, plus, with a query, :meth:`MemoryQueue.recall`'s best cards in its order — and
this module decides what the bot's prompt gets:

1. **rank** (:func:`rank`): a weighted sum of the card's relevance to the query (1 /
   its rank in recall's answer, 0 for a card recall did not return: :func:`relevance`), salience, confidence and recency (0.5 ** (age / half-life), the age measured from the
   newest candidate, so the order depends on the store alone, not on the clock); ties go to
   the newer observation, then the lower id;
2. **deduplicate**: one card per normalised fact text (the chat's and a user's card of the
   same fact; superseded and retracted cards are never candidates);
3. **budget** (:func:`select`): cards in rank order while their lines fit ``max_tokens``
   (a line that does not fit is skipped and smaller ones still tried). The first line is
   always the best card whose line fits the budget alone; the header is budgeted only when
   it fits beside that line, so a small budget drops the header, never the best fact;
4. **render** (:func:`render`): a fixed English header (when :func:`with_header`: it and
   every line fit the budget) and one line per card — ``- [first seen – last seen] fact`` with UTC
   dates — the fact exactly as stored, in its own language (never translated).

Token estimate (:func:`estimate_tokens`): one token per 3 bytes of UTF-8, rounded up — no
tokenizer, the same on every machine, and on the safe side: English runs about 4 bytes a
token in common tokenizers, Cyrillic and Greek about 2-3 (2 bytes a letter), CJK about
one token per 3-byte character. The context's ``tokens`` is the estimate of its whole text,
never above ``max_tokens``. Pure: no Redis, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from memory_worker.cards.model import Card, normalise

if TYPE_CHECKING:
    from memory_worker.errors import EmbeddingUnavailable
    from memory_worker.settings.memory_use import MemoryUseSettings

#: The context's first line (what the lines are; the facts below keep their own language).
HEADER = "Memory (facts about this chat and this user; [first seen – last seen], UTC):"
_BYTES_PER_TOKEN = 3
_DAY_MS = 86_400_000
#: Tokens of the shortest line there is (``- [YYYY-MM-DD] x``): less left, nothing fits.
_SHORTEST_LINE = 6


@dataclass(frozen=True, slots=True)
class MemoryContext:
    """Memory ready to put in a prompt: ``text`` (its cards' lines under a header; '' when
    none), the ``cards`` it shows in that order, and its estimated ``tokens``.

    ``degraded`` is true when a query was given and the embedding route could not answer:
    relevance then came from the query's words alone (see
    :class:`~memory_worker.cards.recall.RecallResult`, whose ``degraded_reason`` and
    ``degraded_error`` it carries)."""

    text: str
    cards: list[Card]
    tokens: int
    degraded_error: EmbeddingUnavailable | None = None

    @property
    def degraded(self) -> bool:
        return self.degraded_error is not None

    @property
    def degraded_reason(self) -> str | None:
        return None if self.degraded_error is None else str(self.degraded_error)


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as the context budgets them: ceil(UTF-8 bytes / 3)."""
    return math.ceil(len(text.encode()) / _BYTES_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Entry:
    """What ranking needs of a live card (read without building a :class:`Card`)."""

    card_id: str
    fact: str
    salience: float
    confidence: float
    valid_from_ms: int
    observed_ms: int

    @classmethod
    def from_card(cls, card: Card) -> Entry:
        return cls(
            card_id=card.id,
            fact=card.fact_text,
            salience=card.salience,
            confidence=card.confidence,
            valid_from_ms=int(card.valid_from.timestamp() * 1000),
            observed_ms=int(card.observed_at.timestamp() * 1000),
        )

    @classmethod
    def from_stored(cls, data: Mapping[str, str]) -> Entry:
        """From the stored card's fields (``cards/codec.py``'s short keys)."""
        return cls(
            card_id=data["id"],
            fact=data["fact"],
            salience=float(data["sal"]),
            confidence=float(data["conf"]),
            valid_from_ms=int(data["vf"]),
            observed_ms=int(data["obs_at"]),
        )


def visible(data: Mapping[str, str], now_ms: int) -> bool:
    """A stored card a reader may see: live and not past its expiry."""
    if data.get("status") not in ("active", "competing"):
        return False
    expires = data.get("exp") or ""
    return not expires or int(expires) > now_ms


@dataclass(frozen=True, slots=True)
class Weights:
    """The ranking's weights and the recency half-life (``MEMORY_CONTEXT_*``)."""

    @classmethod
    def from_settings(cls, settings: MemoryUseSettings) -> Weights:
        return cls(
            relevance=settings.context_relevance_weight,
            salience=settings.context_salience_weight,
            confidence=settings.context_confidence_weight,
            recency=settings.context_recency_weight,
            half_life_days=settings.context_recency_half_life_days,
        )

    relevance: float = 0.55
    salience: float = 0.2
    confidence: float = 0.1
    recency: float = 0.15
    half_life_days: float = 30.0


def relevance(ranked_ids: Sequence[str]) -> dict[str, float]:
    """Recall's answer (card ids, best first) as relevance: 1 / its rank (1, 1/2, 1/3 …),
    as reciprocal-rank fusion weighs a ranking — only recall's order counts, not the scale
    of its scores (cosines, fused scores), which cannot be compared across queries."""
    found: dict[str, float] = {}
    for i, card_id in enumerate(ranked_ids):
        found.setdefault(card_id, 1.0 / (i + 1))
    return found


def rank(entries: Iterable[Entry], relevant: Mapping[str, float], weights: Weights) -> list[Entry]:
    """``entries`` best first (see the module doc); ``relevant``: card id → relevance to the
    query (:func:`relevance`; empty without a query). Each card once (by id)."""
    unique = {e.card_id: e for e in entries}
    if not unique:
        return []
    newest = max(e.observed_ms for e in unique.values())

    def score(e: Entry) -> float:
        age_days = (newest - e.observed_ms) / _DAY_MS
        return (
            weights.relevance * relevant.get(e.card_id, 0.0)
            + weights.salience * e.salience
            + weights.confidence * e.confidence
            + weights.recency * math.pow(0.5, age_days / weights.half_life_days)
        )

    return sorted(unique.values(), key=lambda e: (-score(e), -e.observed_ms, _id_key(e)))


def _id_key(e: Entry) -> tuple[int, str]:
    return (int(e.card_id), "") if e.card_id.isdigit() else (0, e.card_id)


def line(e: Entry) -> str:
    """One card's line: its dates (first seen – last seen, one when the same day), its fact."""
    first, last = _day(e.valid_from_ms), _day(e.observed_ms)
    when = first if first == last else f"{first} – {last}"
    return f"- [{when}] {' '.join(e.fact.split())}"


def _day(ms: int) -> str:
    return _date(ms // _DAY_MS)


@lru_cache(maxsize=4096)
def _date(day: int) -> str:
    return datetime.fromtimestamp(day * 86_400, tz=UTC).strftime("%Y-%m-%d")


def line_tokens(e: Entry) -> int:
    """Tokens a card's line costs in the block (its line and its line break)."""
    return estimate_tokens(line(e) + "\n")


#: Tokens the header costs (with its line break).
HEADER_TOKENS = estimate_tokens(HEADER + "\n")


def select(ranked: Sequence[Entry], max_tokens: int) -> list[Entry]:
    """Ranked cards, one per normalised fact, whose lines fit ``max_tokens`` (see the module
    doc): the first is the best card whose line fits alone; the header is budgeted only when
    it fits beside that card, else the lines go alone (:func:`with_header`)."""
    first = next((e for e in ranked if line_tokens(e) <= max_tokens), None)
    if first is None:
        return []
    header = HEADER_TOKENS + line_tokens(first) <= max_tokens
    budget = max_tokens - HEADER_TOKENS if header else max_tokens
    chosen: list[Entry] = []
    facts: set[str] = set()
    for e in ranked:
        if budget < _SHORTEST_LINE:
            break
        cost = line_tokens(e)
        if cost > budget:
            continue
        key = normalise(e.fact)
        if key not in facts:
            chosen.append(e)
            facts.add(key)
            budget -= cost
    return chosen


def with_header(chosen: Sequence[Entry], max_tokens: int) -> bool:
    """Whether the block of ``chosen`` (as :func:`select` chose them for ``max_tokens``)
    opens with the header: when the header and every line fit together."""
    return bool(chosen) and HEADER_TOKENS + sum(map(line_tokens, chosen)) <= max_tokens


def render(chosen: Sequence[Entry], max_tokens: int | None = None) -> str:
    """The context's text ('' for no card): the header — unless ``max_tokens`` is given and
    the header does not fit beside the lines (:func:`with_header`) — then one line a card,
    in rank order."""
    if not chosen:
        return ""
    header = max_tokens is None or with_header(chosen, max_tokens)
    return "\n".join([HEADER, *(line(e) for e in chosen)][0 if header else 1 :]) + "\n"
