"""The reads behind the withdrawn-fact check (§10): a chat's withdrawn facts near some cards.

:func:`check` is what a write path runs before it writes: the chat's vectors as they stand
(the cached matrix, revalidated), the withdrawn rows near any candidate's vector, those
cards read back (one ``HMGET``, only when a row is near), the siblings of a candidate that
comes from a message a near withdrawn card came from (:func:`near_siblings`: among the
chat's ``Thresholds.sibling_reads`` rows nearest it, not withdrawn, the cards from one of
its messages; one more ``HMGET``, only then), and the decision of
:func:`memory_worker.cards.withdrawn.refusals`. A sibling beyond those nearest rows is not
seen: the tier then asks the higher threshold of a message that taught nothing else. It
answers the refusals and the count of
withdrawn marks it saw: the run's write script compares that count with the chat's, so a
retraction that lands after the check sends the write back to check again (the check is
as good as inside the atomic write). Candidates whose vectors are of another space than the
chat's (model or dimension) are checked by hash only, in the script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from memory_worker.cards.codec import card_from_json, run_plan, to_ms
from memory_worker.cards.vectors import VectorBlobs, ranked
from memory_worker.cards.withdrawn import (
    Candidate,
    Sibling,
    Statement,
    Thresholds,
    WithdrawnFact,
    refusals,
    shares_evidence,
)
from memory_worker.cards.writes import NewCard, RunWrites

if TYPE_CHECKING:
    from memory_worker.cards.search import ReadRaw
    from memory_worker.cards.vectors import Matrix


@dataclass(frozen=True, slots=True)
class Check:
    """What :func:`check` decided: a refusal per candidate (None: may be written) and the
    withdrawn marks of the chat it saw (None: no meaning check was possible)."""

    refused: list[WithdrawnFact | None]
    marks: int | None

    def refused_at(self, index: int) -> bool:
        return self.refused[index] is not None


def card_candidate(card: NewCard) -> Candidate:
    """A run's new card as the check sees it."""
    statement = Statement(card.subject, card.object, card.fact_text, card.user_id, card.dedup_hash)
    sources = frozenset(card.source_message_ids)
    return Candidate(statement, int(to_ms(card.observed_at)), card.embedding, sources)


def run_candidates(writes: RunWrites) -> tuple[list[Candidate], list[int]]:
    """A run's new cards, then its rewritten facts (a subject is not known for those: they
    are compared by their text alone); and the index of each rewrite's resolution."""
    candidates = [card_candidate(card) for card in writes.cards]
    slots = [i for i, r in enumerate(writes.resolutions) if r.new_fact_text]
    seen = int(to_ms(writes.observed_at))
    for slot in slots:
        res = writes.resolutions[slot]
        statement = Statement("", "", res.new_fact_text or "", None, res.new_dedup_hash or "")
        candidates.append(Candidate(statement, seen, res.embedding))
    return candidates, slots


def comparable(matrix: Matrix, model: str | None) -> bool:
    """Whether vectors of ``model`` live in the chat's space (as the write script decides)."""
    return not matrix.model or matrix.model == (model or "")


async def check(
    matrix: Matrix,
    read: ReadRaw,
    candidates: Sequence[Candidate],
    model: str | None,
    thresholds: Thresholds,
) -> Check:
    """The refusals of ``candidates`` (vectors of ``model``) against the withdrawn facts of
    the chat whose vectors are ``matrix`` (its cards read with ``read``), and the withdrawn
    marks seen (see the module doc)."""
    if not comparable(matrix, model):
        return Check([None] * len(candidates), None)
    found = await gather(matrix, read, candidates, thresholds)
    return Check(refusals(candidates, found.facts, thresholds, found.siblings), found.marks)


@dataclass(frozen=True, slots=True)
class Gathered:
    """What the check reads of a chat for some candidates: its withdrawn facts near them,
    their siblings, and the withdrawn marks it saw."""

    facts: list[WithdrawnFact]
    siblings: list[Sibling]
    marks: int


async def gather(
    matrix: Matrix, read: ReadRaw, candidates: Sequence[Candidate], thresholds: Thresholds
) -> Gathered:
    """The reads of :func:`check` (an import's plan makes them too)."""
    facts = await near_facts(matrix, read, candidates, thresholds)
    siblings = await near_siblings(matrix, read, candidates, facts, thresholds.sibling_reads)
    return Gathered(facts, siblings, matrix.withdrawn_marks)


def _unit(vector: Sequence[float]) -> np.ndarray[Any, np.dtype[np.float32]]:
    query = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    return query / norm if norm > 0 and np.isfinite(norm) else query


def _comparable_vector(matrix: Matrix, candidate: Candidate) -> bool:
    return candidate.vector is not None and len(candidate.vector) == matrix.dim


async def near_facts(
    matrix: Matrix, read: ReadRaw, candidates: Sequence[Candidate], thresholds: Thresholds
) -> list[WithdrawnFact]:
    """The chat's withdrawn facts whose vectors come within ``thresholds.floor`` of a
    candidate's (read back from their cards)."""
    rows = np.flatnonzero(matrix.withdrawn)
    queries = [
        np.asarray(c.vector, dtype=np.float32) for c in candidates if _comparable_vector(matrix, c)
    ]
    if rows.size == 0 or not queries:
        return []
    block = np.stack(queries)
    norms = np.linalg.norm(block, axis=1, keepdims=True)
    unit = block / np.where(norms > 0, norms, 1.0)
    scores = np.einsum("ij,kj->ik", matrix.rows[rows], unit)
    near = rows[(scores >= thresholds.floor).any(axis=1)]
    if near.size == 0:
        return []
    ids = [matrix.ids[int(row)] for row in near]
    raws = await read(ids)
    facts: list[WithdrawnFact] = []
    for row, raw in zip(near, raws, strict=True):
        if raw is None:
            continue
        card = card_from_json(0, raw)
        if card.retracted_at is None:
            continue
        statement = Statement(
            card.subject, card.object, card.fact_text, card.user_id, card.dedup_hash
        )
        vector = matrix.rows[int(row)].tolist()
        sources = frozenset(card.source_message_ids)
        at_ms = int(to_ms(card.retracted_at))
        facts.append(WithdrawnFact(card.id, at_ms, statement, vector, sources))
    return facts


async def near_siblings(
    matrix: Matrix,
    read: ReadRaw,
    candidates: Sequence[Candidate],
    facts: Sequence[WithdrawnFact],
    reads: int,
) -> list[Sibling]:
    """The siblings of the candidates that come from a message one of ``facts`` came from:
    among the ``reads`` rows nearest each (a vector, not withdrawn), the cards from one of
    its messages (read back; their vectors the stored rows)."""
    asking = [
        c
        for c in candidates
        if c.sources and _comparable_vector(matrix, c) and any(shares_evidence(c, f) for f in facts)
    ]
    held = np.flatnonzero(matrix.held)
    if not asking or held.size == 0 or reads <= 0:
        return []
    block = matrix.rows[held]
    rows: set[int] = set()
    for c in asking:
        scores = np.einsum("ij,j->i", block, _unit(c.vector or ()))
        rows.update(int(held[i]) for i in ranked(scores, reads))
    wanted = frozenset().union(*(c.sources for c in asking))
    ordered = sorted(rows)
    raws = await read([matrix.ids[row] for row in ordered])
    siblings: list[Sibling] = []
    for row, raw in zip(ordered, raws, strict=True):
        if raw is None:
            continue
        card = card_from_json(0, raw)
        sources = frozenset(card.source_message_ids)
        if not sources.isdisjoint(wanted):
            siblings.append(Sibling(card.id, sources, matrix.rows[row].tolist()))
    return siblings


async def checked_plan(
    run_id: str,
    writes: RunWrites,
    matrix: Matrix,
    read: ReadRaw,
    thresholds: Thresholds,
) -> tuple[dict[str, Any], VectorBlobs]:
    """The run's plan for ``apply.lua`` with its refusals marked and the marks it saw."""
    candidates, slots = run_candidates(writes)
    found = await check(matrix, read, candidates, writes.embedding_model, thresholds)
    cards = len(writes.cards)
    vectors = VectorBlobs()
    plan = run_plan(
        run_id,
        writes,
        vectors,
        refused=[i for i in range(cards) if found.refused_at(i)],
        refused_rewrites=[s for i, s in enumerate(slots) if found.refused_at(cards + i)],
        withdrawn_marks=found.marks,
    )
    return plan, vectors
