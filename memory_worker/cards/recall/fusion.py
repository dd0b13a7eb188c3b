"""Fusing the dense and the lexical ranking into one (§16): plain functions on score arrays.

Both inputs are one score per row (a matrix row, or a card of a list):
``dense`` the cosine, ``lexical`` BM25 (0 for a row sharing no term), and a
mask of the **candidates** (live, visible, in the asked time). The fusions, chosen by
:class:`FusionParams.method` (measured on the long-conversation suite's
held-out split, ``bench/meaning.py``):

- ``rrf``: reciprocal-rank fusion, ``1/(k + dense rank) + w/(k + lexical rank)``;
  a row without a lexical match gets no lexical share;
- ``convex``: ``(1 - w)·dense + w·lexical``, each min-max scaled over the candidates;
- ``relative``: the same, but the lexical score as the share of the query a row
  matches (BM25 over the query's ``ideal``, :meth:`LexicalIndex.ideal
  <memory_worker.cards.recall.bm25.LexicalIndex.ideal>`): a row matching only a name the
  whole chat uses gains little;
- ``dense``: the cosine alone (the lexical side is ignored).

A time boost (:func:`boost_window`) raises the fused score of rows in the
window a question names by a proportion of it. Non-candidates stay ``-inf`` throughout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from memory_worker.settings import Settings

Method = Literal["rrf", "convex", "relative", "dense"]
Scores = np.ndarray[Any, Any]


@dataclass(frozen=True, slots=True)
class FusionParams:
    """How recall fuses its two rankings (settings ``MEMORY_RECALL_*``)."""

    method: Method = "relative"
    #: RRF's rank offset: larger flattens the head of each ranking.
    rrf_k: float = 60.0
    #: The lexical ranking's weight (``rrf``: its share's factor; else its part in [0, 1]).
    lexical_weight: float = 0.3
    #: Factor added to the fused score of a card inside a time a question names (0: off).
    time_boost: float = 0.25
    #: BM25's length normalisation (0: none, 1: full): chat cards are short, and a strong
    #: one ranks "Maria: lol" first for any question naming Maria.
    bm25_b: float = 0.0

    @classmethod
    def from_settings(cls, settings: Settings) -> FusionParams:
        """The ``MEMORY_RECALL_*`` settings."""
        return cls(
            method=settings.recall_fusion,
            rrf_k=settings.recall_rrf_k,
            lexical_weight=settings.recall_lexical_weight,
            time_boost=settings.recall_time_boost,
            bm25_b=settings.recall_bm25_b,
        )


def ranks(scores: Scores, valid: Scores) -> Scores:
    """1-based rank of each ``valid`` row by descending score, tied rows sharing the best
    rank of their tie ("1, 2, 2, 4"); ``inf`` for the other rows."""
    out = np.full(len(scores), np.inf)
    values = scores[valid]
    if len(values):
        descending = -np.sort(values)[::-1]
        out[valid] = np.searchsorted(descending, -values, side="left") + 1.0
    return out


#: Below the gap between any two reciprocal ranks of a realistic chat: breaks a fused tie
#: by the cosine without reordering anything else.
_TIE_BREAK = 1e-9


def fuse(
    dense: Scores | None,
    lexical: Scores,
    candidates: Scores,
    params: FusionParams,
    *,
    ideal: float = 0.0,
) -> Scores:
    """One score per row, higher is better; ``-inf`` outside ``candidates`` (see the module).

    ``dense`` None (no query vector): the lexical ranking alone, rows without a
    lexical match left out. A candidate whose ``dense`` is not finite (a row without a
    vector) is ranked by its words alone: its dense share is none (``rrf``) or the lowest
    (``convex``, ``relative``); without a lexical match, or with ``dense`` fusion, it is
    left out.
    """
    candidates = np.asarray(candidates, dtype=bool)
    fused = np.full(len(candidates), -np.inf)
    if dense is None:
        matched = candidates & (lexical > 0)
        fused[matched] = lexical[matched]
        return fused
    words = candidates & ~np.isfinite(dense) & (lexical > 0)
    candidates = candidates & np.isfinite(dense)
    if not candidates.any() and not words.any():
        return fused
    if params.method == "dense":
        fused[candidates] = dense[candidates]
        return fused
    ranked = candidates | words
    matched = ranked & (lexical > 0)
    scaled = _minmax(dense, candidates) if candidates.any() else np.zeros(len(dense))
    scaled = np.where(candidates, scaled, 0.0)
    if params.method == "rrf":
        share = 1.0 / (params.rrf_k + ranks(dense, candidates))
        if matched.any():
            share = share + params.lexical_weight / (params.rrf_k + ranks(lexical, matched))
        share = share + _TIE_BREAK * scaled
        fused[ranked] = share[ranked]
        return fused
    weight = min(1.0, max(0.0, params.lexical_weight))
    if params.method == "relative":
        share = np.minimum(lexical / ideal, 1.0) if ideal > 0 else np.zeros(len(lexical))
    else:
        share = _scaled(lexical, ranked)
    fused[ranked] = (1.0 - weight) * scaled[ranked] + weight * share[ranked]
    return fused


def _minmax(scores: Scores, rows: Scores) -> Scores:
    low, high = float(scores[rows].min()), float(scores[rows].max())
    if high <= low:
        return np.where(rows, 1.0, 0.0)
    return (scores - low) / (high - low)


def _scaled(scores: Scores, rows: Scores) -> Scores:
    high = float(scores[rows].max())
    return scores / high if high > 0 else np.zeros(len(scores))


def boost_window(fused: Scores, inside: Scores, factor: float) -> Scores:
    """``fused`` with the rows ``inside`` a named time raised by ``factor`` of their own
    score (``fused + factor·|fused|``: a proportion, so it means the same on any fusion's
    scale); ``-inf`` rows stay out."""
    if factor == 0 or not inside.any():
        return fused
    lifted = fused + factor * np.abs(np.where(np.isfinite(fused), fused, 0.0))
    return np.where(inside & np.isfinite(fused), lifted, fused)
