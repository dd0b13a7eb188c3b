"""BM25 over a chat's cards (§16): an append-only index whose documents are matrix rows.

Row ``i`` of :class:`LexicalIndex` is row ``i`` of the chat's vector matrix
(:class:`~memory_worker.cards.vectors.Matrix`): the card store appends the
texts of new rows as the matrix gains them and drops the index with the
matrix when a row is rewritten, so the two are always one snapshot. Beside each
document it keeps two hints read with the text: the card's time span and its
subject and episode (:class:`~memory_worker.cards.recall.connect.Ties`). Which
rows count is not the index's business: :meth:`LexicalIndex.scores` takes a
mask (live, visible, in the asked time window) and computes the collection's
statistics — document count, document frequencies, mean length — over the
masked rows only, at query time. Nothing here reads Redis or a clock.

Scoring is Okapi BM25 with Lucene's non-negative idf,
``log(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory_worker.cards.recall.connect import Ties

#: Bytes one posting costs in memory, roughly (for the vector cache's byte bound).
POSTING_BYTES = 72


@dataclass(frozen=True, slots=True)
class BM25:
    """BM25's two constants."""

    k1: float = 1.2
    b: float = 0.75


class LexicalIndex:
    """Postings of a chat's card texts, one document per matrix row (see the module)."""

    def __init__(self) -> None:
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._arrays: dict[str, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}
        self._lengths: list[int] = []
        self._length_array = np.zeros(0, dtype=np.float32)
        self.postings = 0
        #: Each row's (valid_from, end) in epoch ms, as the texts were read (a hint for
        #: ranking only: a card's times can move without its row changing).
        self.spans: list[tuple[int, int]] = []
        #: Each row's subject and episode, as the texts were read (what recall connects by).
        self.ties = Ties()

    @property
    def count(self) -> int:
        return len(self._lengths)

    @property
    def nbytes(self) -> int:
        return self.postings * POSTING_BYTES + 48 * self.count + self.ties.nbytes

    def add(self, documents: Iterable[Sequence[str]]) -> None:
        """Append documents (each a sequence of terms) as the next rows."""
        for terms in documents:
            row = len(self._lengths)
            self._lengths.append(len(terms))
            for term, tf in Counter(terms).items():
                rows, tfs = self._postings.setdefault(term, ([], []))
                rows.append(row)
                tfs.append(tf)
                self._arrays.pop(term, None)
                self.postings += 1
        if len(self._length_array) != len(self._lengths):
            self._length_array = np.asarray(self._lengths, dtype=np.float32)

    def _posting(self, term: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
        arrays = self._arrays.get(term)
        if arrays is None:
            raw = self._postings.get(term)
            if raw is None:
                return None
            arrays = (np.asarray(raw[0], dtype=np.int64), np.asarray(raw[1], dtype=np.float32))
            self._arrays[term] = arrays
        return arrays

    def rows_with(self, terms: Sequence[str]) -> np.ndarray[Any, Any]:
        """Rows holding every one of ``terms`` (none when ``terms`` is empty)."""
        found = np.zeros(self.count, dtype=bool)
        if not terms:
            return found
        found[:] = True
        for term in set(terms):
            posting = self._posting(term)
            if posting is None:
                return np.zeros(self.count, dtype=bool)
            has = np.zeros(self.count, dtype=bool)
            has[posting[0]] = True
            found &= has
        return found

    def ideal(
        self, query: Sequence[str], mask: np.ndarray[Any, Any], params: BM25 = BM25()
    ) -> float:
        """What a row holding each ``query`` term once, at the mean length, would score:
        ``sum(idf)`` over the query's terms (those in no masked row at their highest idf).
        A row's score over it is the share of the query it matches."""
        mask = _fit(mask, self.count)
        total = int(mask.sum())
        if total == 0:
            return 0.0
        ideal = 0.0
        for term, weight in Counter(query).items():
            posting = self._posting(term)
            df = int(mask[posting[0]].sum()) if posting is not None else 0
            ideal += weight * math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        return ideal

    def scores(
        self, query: Sequence[str], mask: np.ndarray[Any, Any], params: BM25 = BM25()
    ) -> np.ndarray[Any, Any]:
        """BM25 of every row for the ``query`` terms; 0 for a row outside ``mask`` or
        sharing no term. ``mask`` (bool, one per row; shorter: the rest are out) is the
        collection the statistics are computed over."""
        out = np.zeros(self.count, dtype=np.float32)
        mask = _fit(mask, self.count)
        total = int(mask.sum())
        if total == 0 or not query:
            return out
        lengths = self._length_array
        mean = float(lengths[mask].mean()) or 1.0
        norm = params.k1 * (1.0 - params.b + params.b * lengths / mean)
        for term, weight in Counter(query).items():
            posting = self._posting(term)
            if posting is None:
                continue
            rows, tfs = posting
            keep = mask[rows]
            df = int(keep.sum())
            if df == 0:
                continue
            rows, tfs = rows[keep], tfs[keep]
            idf = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
            out[rows] += weight * idf * tfs * (params.k1 + 1.0) / (tfs + norm[rows])
        return out


def _fit(mask: np.ndarray[Any, Any], count: int) -> np.ndarray[Any, Any]:
    """``mask`` as ``count`` booleans (a shorter one padded with False)."""
    mask = np.asarray(mask, dtype=bool)
    if len(mask) == count:
        return mask
    fitted = np.zeros(count, dtype=bool)
    have = min(count, len(mask))
    fitted[:have] = mask[:have]
    return fitted
