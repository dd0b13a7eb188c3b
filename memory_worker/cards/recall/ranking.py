"""Hybrid ranking of cards (§16): what ``recall()`` answers, as plain functions.

:class:`RecallHit` is one answer: the card, its fused score, and the two
scores it was fused from. It unpacks like the ``(card, score)`` pair recall
answered before (``for card, score in hits``). :class:`RecallResult` is the whole
answer: a list of hits that also says whether it was ranked without the query's
vector (``degraded``: the embedding route could not answer, so the words alone ranked it).

:func:`rank_cards` ranks a list of cards for a text the way
:meth:`CardStore.search <memory_worker.cards.CardStore.search>` ranks a chat's
matrix: BM25 over the cards' texts (:mod:`memory_worker.cards.recall.tokens`,
:mod:`memory_worker.cards.recall.bm25`), the cosine when vectors are given, fused
(:mod:`memory_worker.cards.recall.fusion`), cards outside ``since``/``until``
(:mod:`memory_worker.cards.recall.timing`) left out, and, when asked, the best hits
connected (:mod:`memory_worker.cards.recall.connect`). For callers that hold their
cards already (a prompt's context, an export, a test); pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from memory_worker.cards.recall.bm25 import BM25, LexicalIndex
from memory_worker.cards.recall.connect import (
    ConnectParams,
    Ties,
    pool_size,
    restatements_last,
    spread,
    top_rows,
)
from memory_worker.cards.recall.fusion import FusionParams, boost_window, fuse
from memory_worker.cards.recall.timing import (
    Window,
    card_in_window,
    card_span,
    named_window,
    without_time_words,
)
from memory_worker.cards.recall.tokens import fold, terms

if TYPE_CHECKING:  # the card store imports this module: no import of it back at run time
    from memory_worker.cards.model import Card
    from memory_worker.errors import EmbeddingUnavailable

    _Pair = tuple[Card, float]
else:
    _Pair = tuple


class RecallHit(_Pair):
    """One recalled card: ``(card, score)`` plus the scores fused into ``score``.

    ``dense`` is the cosine (None when no query vector was compared), ``lexical``
    the BM25 score (0: no word in common). ``observed_at`` / ``valid_from`` are the
    card's, so a bot can answer "when".
    """

    dense: float | None
    lexical: float

    def __new__(
        cls, card: Card, score: float, dense: float | None = None, lexical: float = 0.0
    ) -> RecallHit:
        hit = super().__new__(cls, (card, score))
        hit.dense = dense
        hit.lexical = lexical
        return hit

    @property
    def card(self) -> Card:
        return self[0]

    @property
    def score(self) -> float:
        return self[1]

    @property
    def observed_at(self) -> datetime:
        return self[0].observed_at

    @property
    def valid_from(self) -> datetime:
        return self[0].valid_from

    def __repr__(self) -> str:
        return (
            f"RecallHit(card={self[0].id!r}, score={self[1]:.4f}, dense={self.dense}, "
            f"lexical={self.lexical:.3f})"
        )


class RecallResult(list[RecallHit]):
    """``recall()``'s answer: its hits, best first — a ``list`` as before — and whether
    they were ranked without the query's vector.

    ``degraded`` is true when the embedding route could not answer (the farm down, its
    breakers open, the call out of time, the embedder raising): the hits are then ranked by
    the words alone (BM25; each hit's ``dense`` is None), and a card sharing no word with
    the text is not found. ``degraded_reason`` says why in one log-safe line (types and
    ids, never the text); ``degraded_error`` is the
    :class:`~memory_worker.errors.EmbeddingUnavailable` (the embedder's error its
    ``__cause__``) for a caller that would rather raise it. Both None when not degraded.
    """

    degraded_error: EmbeddingUnavailable | None

    def __init__(
        self, hits: Sequence[RecallHit] = (), *, degraded_error: EmbeddingUnavailable | None = None
    ) -> None:
        super().__init__(hits)
        self.degraded_error = degraded_error

    @property
    def degraded(self) -> bool:
        return self.degraded_error is not None

    @property
    def degraded_reason(self) -> str | None:
        return None if self.degraded_error is None else str(self.degraded_error)

    def __repr__(self) -> str:
        flag = f", degraded_reason={self.degraded_reason!r}" if self.degraded else ""
        return f"RecallResult({list.__repr__(self)}{flag})"


def card_text(subject: str, fact_text: str) -> str:
    """The text a card is indexed by: its fact, and its subject when the fact does not
    name it."""
    if not subject or fold(subject) in fold(fact_text):
        return fact_text
    return f"{subject}\n{fact_text}"


@lru_cache(maxsize=65_536)
def card_terms(subject: str, fact_text: str) -> tuple[str, ...]:
    """A card's index terms (memoised: a chat's index is rebuilt whole after a row rewrite,
    and most of its texts are unchanged)."""
    return tuple(terms(card_text(subject, fact_text)))


def rank_cards(
    query: str,
    cards: Sequence[Card],
    *,
    k: int = 5,
    query_vector: Sequence[float] | None = None,
    card_vectors: Sequence[Sequence[float] | None] | None = None,
    params: FusionParams = FusionParams(),
    window: Window | None = None,
    now: datetime | None = None,
    connect: ConnectParams | None = None,
) -> list[RecallHit]:
    """The ``k`` of ``cards`` best for ``query``, best first (see the module).

    Only live cards inside ``window`` compete (and not past their expiry at ``now``,
    when given). With ``query_vector`` and ``card_vectors`` (one per card, None for a
    card without one: it competes lexically only) the rankings are fused; without,
    the lexical ranking alone answers, so a card sharing no word is left out.
    ``now`` also anchors a time the query names (``params.time_boost``). ``connect``:
    the best hits lift the cards of their subject and first run, restatements go last, as
    ``recall()`` does (:mod:`memory_worker.cards.recall.connect`; the restatement step
    needs ``card_vectors``).
    """
    if k <= 0 or not cards:
        return []
    index = LexicalIndex()
    index.add(card_terms(c.subject, c.fact_text) for c in cards)
    candidates = np.array(
        [
            (c.visible_at(now) if now is not None else c.live)
            and (window is None or card_in_window(c, window))
            for c in cards
        ],
        dtype=bool,
    )
    named = named_window(query, now) if params.time_boost and now is not None else None
    inside = None
    if named is not None:
        inside = np.array([named.meets(*card_span(c)) for c in cards], dtype=bool)
        inside = inside if (inside & candidates).any() else None  # no card of that time
    query_terms = terms(without_time_words(query) if inside is not None else query)
    lexical = index.scores(query_terms, candidates, BM25(b=params.bm25_b))
    dense = _cosines(query_vector, card_vectors, len(cards))
    ideal = index.ideal(query_terms, candidates) if params.method == "relative" else 0.0
    fused = fuse(_floored(dense), lexical, candidates, params, ideal=ideal)
    if inside is not None:
        fused = boost_window(fused, inside, params.time_boost)
    if connect is not None:
        ties = Ties()
        for card in cards:
            ties.add(card.subject, card.first_run_id)
        subjects, episodes = ties.arrays()
        seeds = top_rows(fused, connect.seeds)
        fused = spread(fused, seeds, subjects, episodes, connect)
        pool = top_rows(fused, pool_size(k))
        order = restatements_last(pool, subjects, _units(card_vectors, dense), connect.restatement)
    else:
        order = [int(i) for i in np.argsort(-fused, kind="stable") if np.isfinite(fused[i])]
    return [
        RecallHit(
            cards[i],
            float(fused[i]),
            None if dense is None or not np.isfinite(dense[i]) else float(dense[i]),
            float(lexical[i]),
        )
        for i in order[:k]
    ]


def _units(
    vectors: Sequence[Sequence[float] | None] | None, dense: np.ndarray[Any, Any] | None
) -> np.ndarray[Any, Any] | None:
    """The cards' vectors as unit rows (zero for a card without one, or of another size than
    the query's: never a restatement); None without vectors."""
    if vectors is None or dense is None:
        return None
    size = max((len(v) for v in vectors if v is not None), default=0)
    rows = np.zeros((len(vectors), size))
    for i, vector in enumerate(vectors):
        if vector is not None and len(vector) == size and np.isfinite(dense[i]):
            row = np.asarray(vector, dtype=np.float64)
            norm = float(np.linalg.norm(row))
            rows[i] = row / norm if norm > 0 else 0.0
    return rows


def _floored(dense: np.ndarray[Any, Any] | None) -> np.ndarray[Any, Any] | None:
    """``dense`` with a card without a vector below every other (it still competes lexically)."""
    if dense is None:
        return None
    finite = np.isfinite(dense)
    floor = float(dense[finite].min()) - 1.0 if finite.any() else 0.0
    return np.where(finite, dense, floor)


def _cosines(
    query: Sequence[float] | None, vectors: Sequence[Sequence[float] | None] | None, count: int
) -> np.ndarray[Any, Any] | None:
    """Cosine of each card's vector with ``query`` (-inf: the card has none)."""
    if query is None or vectors is None:
        return None
    if len(vectors) != count:
        raise ValueError("card_vectors needs one entry per card")
    unit = np.asarray(query, dtype=np.float64)
    norm = float(np.linalg.norm(unit))
    out = np.full(count, -np.inf)
    if norm == 0:
        return out
    unit /= norm
    for i, vector in enumerate(vectors):
        if vector is None or len(vector) != len(unit):
            continue
        row = np.asarray(vector, dtype=np.float64)
        size = float(np.linalg.norm(row))
        if size > 0:
            out[i] = float(row @ unit) / size
    return out
