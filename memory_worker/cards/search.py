"""The card store's hybrid search (§16): the lexical index beside the vectors, and the read
of the winners.

A chat's lexical index lives in the process, inside the chat's cached
:class:`~memory_worker.cards.vectors.Matrix` (``matrix.lexicon``): row ``i``
of the index is the text of the card of matrix row ``i``. So it is
invalidated exactly when the vectors are — a full reload (a row rewritten:
a fold or a correction changed a card's text, a re-embedding switched the
model, a forget compacted the rows) builds a new matrix with an empty index;
a refresh after appends keeps both and :func:`fill_lexicon` indexes just the
new rows' texts (one ``HMGET``); the live mask (expiry, supersede, merge,
forget) is the search's candidate mask for both rankings. On a cluster it is
the same: every key read is the chat's, in one slot.

A live card whose row is a zero row — remembered while the embedder was down
(:mod:`memory_worker.cards.remember`), until its vector comes — is searched by its
words alone: a lexical candidate with no cosine (its hit's ``dense`` is None), ranked by
its lexical share of the fusion. Cards without a vector row at all (a vector refused)
are not searched, by either ranking.

``recall()``'s search then connects its best hits (:func:`connected`,
:mod:`memory_worker.cards.recall.connect`): the subject and first run of each row
are read with its text into the index's :class:`~memory_worker.cards.recall.connect.Ties`,
so the connection reads nothing of its own but the pool of winners.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import orjson

from memory_worker.cards.codec import card_from_json
from memory_worker.cards.history import live_as_of
from memory_worker.cards.model import Card
from memory_worker.cards.recall.bm25 import BM25, LexicalIndex
from memory_worker.cards.recall.connect import (
    ConnectParams,
    pool_size,
    restatements_last,
    spread,
)
from memory_worker.cards.recall.fusion import FusionParams, boost_window, fuse
from memory_worker.cards.recall.ranking import RecallHit, card_terms
from memory_worker.cards.recall.timing import (
    Window,
    card_in_window,
    named_window,
    without_time_words,
)
from memory_worker.cards.recall.tokens import terms
from memory_worker.cards.vectors import Matrix, ranked

#: Reads card JSON by id (None for an id not stored): an ``HMGET`` of the chat's cards.
ReadRaw = Callable[[Sequence[str]], Awaitable[Sequence[bytes | None]]]
#: Whether a search counts a card at a moment: visible now (``Card.visible_at``), or held
#: by the memory then (:func:`~memory_worker.cards.history.live_as_of`).
Held = Callable[[Card, datetime], bool]


def hmget_reader(redis: Any, key: str) -> ReadRaw:
    """A :data:`ReadRaw` of the cards hash ``key`` (one ``HMGET`` a call)."""

    async def read(card_ids: Sequence[str]) -> Sequence[bytes | None]:
        if not card_ids:
            return []
        found: list[bytes | None] = await redis.hmget(key, list(card_ids))
        return found

    return read


@dataclass(frozen=True, slots=True)
class _Doc:
    """What the index keeps of a stored card: its terms, span (epoch ms), subject, first run."""

    terms: Sequence[str]
    span: tuple[int, int]
    subject: str | None = None
    run: str | None = None


def _doc(raw: bytes | None) -> _Doc:
    """A stored card as the index keeps it (span: see :mod:`memory_worker.cards.recall.timing`)."""
    if raw is None:  # forgotten meanwhile: the next read rebuilds the matrix
        return _Doc([], (0, 0))
    data: dict[str, str] = orjson.loads(raw)
    subject = data.get("subject", "")
    return _Doc(card_terms(subject, data.get("fact", "")), _span(data), subject, data.get("run"))


def _span(data: dict[str, str]) -> tuple[int, int]:
    """A stored card's span in epoch ms: ``vf`` to the later of ``obs_at`` and ``vu``."""
    start, end = int(data.get("vf") or 0), int(data.get("obs_at") or 0)
    end = max(end, int(data.get("vu") or 0))
    return min(start, end), end


async def fill_lexicon(read: ReadRaw, matrix: Matrix) -> LexicalIndex:
    """``matrix.lexicon`` holding every row of ``matrix``: the texts of rows not indexed yet
    read and indexed (a concurrent search of the same matrix may do it first)."""
    lexicon = matrix.lexicon
    while lexicon.count < matrix.count:
        start = lexicon.count
        raws = await read(matrix.ids[start : matrix.count])
        if lexicon.count != start:
            continue
        docs = [_doc(raw) for raw in raws]
        lexicon.add(doc.terms for doc in docs)
        lexicon.spans.extend(doc.span for doc in docs)
        for doc in docs:
            lexicon.ties.add(doc.subject, doc.run)
    return lexicon


@dataclass(frozen=True, slots=True)
class Favour:
    """Cards a search favours (the related lookup's run authors): ``boost`` is added to the
    cosine of a card of one of ``scopes`` (their user cards) or naming one of ``names``
    (every word of the name, stemmed: "Марии" names "Мария"), before the fusion."""

    scopes: frozenset[str]
    names: tuple[str, ...]
    boost: float


@dataclass(frozen=True, slots=True)
class Query:
    """What a hybrid search looks for: a text, its vector (None: lexical only), the time
    window its cards must meet, how the rankings fuse, the cards it favours, and how its
    best hits connect."""

    text: str
    embedding: Sequence[float] | None
    window: Window | None
    params: FusionParams
    favour: Favour | None = None
    #: How the best hits lift the cards tied to them (None: the fused ranking alone).
    connect: ConnectParams | None = None
    #: The memory as it stood at ``now`` (a past moment): the matrix's live rows are what
    #: it held then, and a card qualifies when it was held then
    #: (:func:`~memory_worker.cards.history.live_as_of`), not when it is visible now.
    past: bool = False


def favoured_rows(matrix: Matrix, lexicon: LexicalIndex, favour: Favour) -> np.ndarray[Any, Any]:
    """Rows of ``favour``'s scopes, or whose text names one of its names."""
    rows = matrix.candidates(favour.scopes) if favour.scopes else np.zeros(matrix.count, bool)
    rows = rows[: lexicon.count].copy()
    for name in favour.names:
        stems = [t for t in terms(name) if not t.startswith("~")]
        if stems:
            rows |= lexicon.rows_with(stems)
    return rows


async def hybrid_search(
    chat_id: int,
    read: ReadRaw,
    matrix: Matrix,
    query: Query,
    k: int,
    *,
    allowed: frozenset[str] | None,
    now: datetime,
    cache: Callable[[], None],
) -> list[RecallHit]:
    """:meth:`CardStore.search <memory_worker.cards.CardStore.search>` on a chat's matrix.

    ``cache`` puts the matrix back in the store's cache once its index has grown.
    """
    candidates = matrix.candidates(allowed, words=True)
    dense = None if query.embedding is None else matrix.scores(query.embedding, allowed)
    if query.embedding is not None and dense is None:
        return []  # another dimension, or a zero vector
    lexicon = await fill_lexicon(read, matrix)
    cache()
    # a concurrent refresh may have appended rows meanwhile: this search ranks the rows
    # it started with
    rows = len(candidates)
    params = query.params
    named = named_window(query.text, now) if params.time_boost else None
    inside = spans_meet(lexicon, named)[:rows] if named is not None else None
    if inside is not None and not inside.any():
        inside = None  # a time no card is of: its words stay evidence, nothing is lifted
    query_terms = terms(without_time_words(query.text) if inside is not None else query.text)
    lexical = lexicon.scores(query_terms, candidates, BM25(b=params.bm25_b))[:rows]
    ranked_dense = dense
    if dense is not None and query.favour is not None and query.favour.boost:
        favoured = favoured_rows(matrix, lexicon, query.favour)[:rows]
        ranked_dense = dense + query.favour.boost * favoured
    ideal = lexicon.ideal(query_terms, candidates) if params.method == "relative" else 0.0
    fused = fuse(ranked_dense, lexical, candidates, params, ideal=ideal)
    if inside is not None:
        fused = boost_window(fused, inside, params.time_boost)
    held = live_as_of if query.past else Card.visible_at
    if query.connect is None:
        found = await best_visible(chat_id, read, matrix, fused, k, now, query.window, held)
    else:
        found, fused = await connected(
            chat_id, read, matrix, fused, k, now, query.window, query.connect, held
        )
    return [
        RecallHit(
            card,
            float(fused[row]),
            None if dense is None or not np.isfinite(dense[row]) else float(dense[row]),
            float(lexical[row]),
        )
        for card, row in found
    ]


async def connected(
    chat_id: int,
    read: ReadRaw,
    matrix: Matrix,
    fused: np.ndarray[Any, Any],
    k: int,
    moment: datetime,
    window: Window | None,
    params: ConnectParams,
    held: Held = Card.visible_at,
) -> tuple[list[tuple[Card, int]], np.ndarray[Any, Any]]:
    """The ``k`` best visible cards once the best hits lift the cards tied to them
    (:func:`~memory_worker.cards.recall.connect.connect`, with the seeds and the pool
    read as :func:`best_visible` reads: visible ones only), and the lifted scores.

    One ``HMGET`` more than the fused ranking at most: the seeds' read, then the
    pool's, whose rows already read are not read again.
    """
    read = memoised(read)
    subjects, episodes = matrix.lexicon.ties.arrays()
    scores = fused
    if params.spreads:
        seeds = await best_visible(chat_id, read, matrix, fused, params.seeds, moment, window, held)
        scores = spread(fused, [row for _, row in seeds], subjects, episodes, params)
    pool = await best_visible(chat_id, read, matrix, scores, pool_size(k), moment, window, held)
    cards = {row: card for card, row in pool}
    order = restatements_last(list(cards), subjects, matrix.rows, params.restatement)
    return [(cards[row], row) for row in order[:k]], scores


def memoised(read: ReadRaw) -> ReadRaw:
    """``read``, answering ids it already read from what it read (one search's reads)."""
    seen: dict[str, bytes | None] = {}

    async def again(card_ids: Sequence[str]) -> Sequence[bytes | None]:
        missing = [card_id for card_id in dict.fromkeys(card_ids) if card_id not in seen]
        if missing:
            seen.update(zip(missing, await read(missing), strict=True))
        return [seen[card_id] for card_id in card_ids]

    return again


def spans_meet(lexicon: LexicalIndex, window: Window) -> np.ndarray[Any, Any]:
    """Rows whose span, as indexed, meets ``window`` (a ranking hint: see
    :attr:`LexicalIndex.spans`)."""
    return np.array([window.meets_ms(start, end) for start, end in lexicon.spans], dtype=bool)


def _in_window(raw: bytes, window: Window | None) -> bool:
    """Whether a stored card's span meets ``window``, from its JSON alone (cheap: most
    cards read by a narrow window's widening search are outside it)."""
    if window is None:
        return True
    return window.meets_ms(*_span(orjson.loads(raw)))


async def best_visible(
    chat_id: int,
    read: ReadRaw,
    matrix: Matrix,
    scores: np.ndarray[Any, Any],
    k: int,
    moment: datetime,
    window: Window | None = None,
    held: Held = Card.visible_at,
) -> list[tuple[Card, int]]:
    """The ``k`` best-scored cards visible at ``moment`` (``held``: a card as the search
    sees it at ``moment``; and inside ``window``, read from the stored card: exact), with
    their rows; a few more than ``k`` are read, and the read widened while too many of
    them turn out not to qualify."""
    want = min(len(matrix.ids), max(2 * k, k + 8))
    while True:
        order = ranked(scores, want)
        raws = await read([matrix.ids[i] for i in order])
        found: list[tuple[Card, int]] = []
        for index, raw in zip(order, raws, strict=True):
            if raw is None or not _in_window(raw, window):
                continue
            card = card_from_json(chat_id, raw)
            if held(card, moment) and (window is None or card_in_window(card, window)):
                found.append((card, index))
                if len(found) == k:
                    return found
        if want >= len(matrix.ids) or len(order) < want:
            return found
        want = min(len(matrix.ids), want * 4)
