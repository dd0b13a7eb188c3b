"""Recall that connects facts (§16): the best hits lift what the store ties them to.

A question such as "where does the person who works as a nurse live?" names
one fact (the job) and asks for another (the home) that shares nothing with
it but its subject. The fused ranking finds the first; this module then
re-ranks around the best hits with what a card carries anyway:

- **its subject** (``Card.subject``): a card of the same subject as one of
  the ``seeds`` best hits gains ``subject`` × that hit's score (the largest
  such gain, not their sum: a person with many cards does not outvote the
  question);
- **its episode** (the run that first wrote it, ``Card.first_run_id``):
  likewise with ``episode``. A link (``links[]``) only ever joins two cards of
  one run (§10), so the episode holds every card a link could name;
- **restatements**: among the hits, a card whose vector is within
  ``restatement`` (cosine) of a better hit of the same subject is the same
  fact said again — what the maintenance merge pass folds per subject — and
  goes after the other hits, so the k places hold k facts.

It is a graph-distance re-rank in the manner of Graphiti's node-distance
reranker, with every best hit a centre and a shared subject or episode one hop;
the hop adds a share of the centre's score instead of sorting by distance, so
one person's small talk does not go before another person's fact.

Every row keeps its place in or out of the candidates: a row outside them
(``-inf``: another scope, not live, outside the asked time) stays out, so
the connection never returns a card the plain ranking could not. Pure and
deterministic: ties break by row.

:class:`Ties` is each row's subject and episode as small codes, kept beside a
chat's lexical index (read with the cards' texts: no read of its own);
:func:`connect` is the whole re-ranking on plain arrays, :func:`spread` and
:func:`restatements_last` its two steps, which the card store runs around its
reads of the winners (:mod:`memory_worker.cards.search`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from memory_worker.cards.recall.tokens import fold

if TYPE_CHECKING:
    from memory_worker.settings import Settings

Scores = np.ndarray[Any, Any]

#: The code of a row without a subject or an episode: tied to nothing.
NONE = -1


@dataclass(frozen=True, slots=True)
class ConnectParams:
    """How recall connects its best hits (settings ``MEMORY_RECALL_*``)."""

    #: How many of the best hits lift their ties (0: off, the plain ranking).
    seeds: int = 5
    #: Share of a seed's score a card of the same subject gains.
    subject: float = 0.2
    #: Share of a seed's score a card of the same episode (first run) gains.
    episode: float = 0.1
    #: Cosine from which a hit is a restatement of a better hit of its subject (above 1: off).
    restatement: float = 0.95

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectParams:
        """The ``MEMORY_RECALL_*`` settings."""
        return cls(
            seeds=settings.recall_seeds,
            subject=settings.recall_subject_spread,
            episode=settings.recall_episode_spread,
            restatement=settings.recall_restatement_cosine,
        )

    @property
    def spreads(self) -> bool:
        """Whether the seeds lift anything."""
        return self.seeds > 0 and (self.subject > 0 or self.episode > 0)


class Ties:
    """Each row's subject and episode as codes (:data:`NONE`: none), appended row for row."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self._subjects: list[int] = []
        self._episodes: list[int] = []
        self._arrays: tuple[Scores, Scores] | None = None

    @property
    def count(self) -> int:
        return len(self._subjects)

    @property
    def nbytes(self) -> int:
        return 16 * self.count + 64 * len(self._codes)

    def _code(self, kind: str, name: str | None) -> int:
        key = fold(name or "").strip()
        if not key:
            return NONE
        return self._codes.setdefault(f"{kind}\x00{key}", len(self._codes))

    def add(self, subject: str | None, episode: str | None) -> None:
        """The next row's subject and episode (the run that first wrote its card)."""
        self._subjects.append(self._code("s", subject))
        self._episodes.append(self._code("e", episode))
        self._arrays = None

    def arrays(self) -> tuple[Scores, Scores]:
        """(subject codes, episode codes), one per row."""
        if self._arrays is None:
            self._arrays = (
                np.asarray(self._subjects, dtype=np.int64),
                np.asarray(self._episodes, dtype=np.int64),
            )
        return self._arrays


def top_rows(scores: Scores, want: int) -> list[int]:
    """The ``want`` best finite rows, best first, ties by row."""
    finite = np.flatnonzero(np.isfinite(scores))
    order = finite[np.lexsort((finite, -scores[finite]))]
    rows: list[int] = order[: max(0, want)].tolist()
    return rows


def spread(
    scores: Scores,
    seeds: Sequence[int],
    subjects: Scores,
    episodes: Scores,
    params: ConnectParams,
) -> Scores:
    """``scores`` with every finite row tied to a seed raised by the tie's share of the
    seed's score (the largest such lift; see the module). ``-inf`` rows stay ``-inf``;
    a seed is not lifted by itself."""
    out = np.array(scores, dtype=np.float64, copy=True)
    if not params.spreads or not len(out):
        return out
    finite = np.isfinite(out)
    lift = np.zeros(len(out))
    for seed in seeds[: params.seeds]:
        worth = float(scores[seed])
        if not np.isfinite(worth) or worth <= 0:
            continue
        for codes, share in ((subjects, params.subject), (episodes, params.episode)):
            code = int(codes[seed])
            if share <= 0 or code == NONE:
                continue
            tied = codes[: len(out)] == code
            tied[seed] = False
            np.maximum(lift, np.where(tied, share * worth, 0.0), out=lift)
    out[finite] += lift[finite]
    return out


def restatements_last(
    rows: Sequence[int],
    subjects: Scores,
    vectors: Scores | None,
    threshold: float,
) -> list[int]:
    """``rows`` (best first) with each restatement — a row whose unit vector is within
    ``threshold`` of an earlier kept row of the same subject — moved after the others,
    both groups in their order. Without vectors, or a threshold above 1, ``rows``."""
    if vectors is None or threshold > 1.0 or len(rows) < 2:
        return list(rows)
    kept: list[int] = []
    later: list[int] = []
    for row in rows:
        subject = int(subjects[row])
        same = [r for r in kept if subject != NONE and int(subjects[r]) == subject]
        if same and float(np.max(vectors[same] @ vectors[row])) >= threshold:
            later.append(row)
        else:
            kept.append(row)
    return kept + later


def pool_size(k: int) -> int:
    """How many hits the restatement step looks at for ``k`` answers."""
    return 2 * k


def connect(
    scores: Scores,
    subjects: Scores,
    episodes: Scores,
    vectors: Scores | None,
    params: ConnectParams,
    k: int,
) -> list[int]:
    """The ``k`` best rows of ``scores`` connected (see the module): the best
    ``params.seeds`` finite rows lift their ties, the best ``2k`` of the result are
    reordered with restatements last, and the first ``k`` answer. ``vectors``: one unit
    row per score (None: no restatement step)."""
    if k <= 0:
        return []
    seeds = top_rows(scores, params.seeds)
    lifted = spread(scores, seeds, subjects, episodes, params)
    pool = top_rows(lifted, pool_size(k))
    return restatements_last(pool, subjects, vectors, params.restatement)[:k]
