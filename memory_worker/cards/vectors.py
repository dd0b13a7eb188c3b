"""Card vectors (§16): int8 quantisation and the per-chat matrix with its process cache.

A card's embedding is stored as int8 bytes of its direction (cosine needs no
magnitude), one row of ``dim`` bytes in the chat's ``vec`` string. Readers
keep a :class:`Matrix` of unit float32 rows per chat in a bounded LRU
(:class:`VectorCache`), revalidated by ``vecver`` and refreshed by deltas
(new rows and the live mask) — see :meth:`CardStore.similar_cards`. A matrix
carries the lexical index of its rows' texts (:attr:`Matrix.lexicon`, filled by
:mod:`memory_worker.cards.search`): appended with its rows, dropped with it.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from llm_client import as_text
from memory_worker.cards.recall.bm25 import LexicalIndex


def quantize(vector: Sequence[float]) -> bytes:
    """A vector as int8 bytes of its direction (cosine needs no magnitude)."""
    array = np.asarray(vector, dtype=np.float32)
    peak = float(np.max(np.abs(array))) if array.size else 0.0
    if peak == 0.0 or not np.isfinite(peak):
        return bytes(array.size)
    scaled = np.clip(np.rint(array / peak * 127.0), -127, 127).astype(np.int8)
    return bytes(scaled.tobytes())


class VectorBlobs:
    """Collects vector blobs for a script call; plan entries refer to them by 1-based index."""

    def __init__(self) -> None:
        self.blobs: list[bytes] = []

    def add(self, vector: Sequence[float] | None) -> int | None:
        if vector is None or len(vector) == 0:
            return None
        self.blobs.append(quantize(vector))
        return len(self.blobs)


class Matrix:
    """A chat's vector rows at one ``vecver``: ids, scope codes, unit float32 rows, live and
    withdrawn flags.

    Rows only ever get appended (a card keeps its row for life) or, rarely,
    rewritten; a refresh after appends and status changes fetches just the
    new rows and the one-byte-a-row mask.
    """

    def __init__(self, dim: int, model: str = "") -> None:
        self.version = b""
        self.rewrites = b""
        self.dim = dim
        #: Id of the model of the rows ('' = not recorded).
        self.model = model
        self.ids: list[str] = []
        self.scope_codes: dict[str, int] = {}
        self._rows = np.zeros((0, max(dim, 1)), dtype=np.float32)
        self._scopes = np.zeros(0, dtype=np.int32)
        self._nonzero = np.zeros(0, dtype=bool)
        self.live = np.zeros(0, dtype=bool)
        #: Rows of withdrawn facts (retracted or corrected away, ``vecmask`` byte 2) with a
        #: vector, and how many withdrawn marks the mask holds (with or without one).
        self.withdrawn = np.zeros(0, dtype=bool)
        self.withdrawn_marks = 0
        #: Rows with a vector whose fact is not withdrawn (live or retired): what a chat
        #: holds of what its messages taught.
        self.held = np.zeros(0, dtype=bool)
        #: Live rows without a vector (a zero row: a remembered card waiting for its vector,
        #: or a card a model switch gave a row): searched by their words only.
        self.words = np.zeros(0, dtype=bool)
        #: BM25 postings of the rows' card texts, row for row (the first ``lexicon.count``
        #: rows; the rest are read when a hybrid search needs them).
        self.lexicon = LexicalIndex()

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def rows(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        return self._rows[: self.count]

    @property
    def scopes(self) -> np.ndarray[Any, np.dtype[np.int32]]:
        return self._scopes[: self.count]

    @property
    def nbytes(self) -> int:
        return int(self._rows.nbytes + self._scopes.nbytes + 64 * self.count + self.lexicon.nbytes)

    def append(self, blob: bytes, entries: Sequence[bytes]) -> None:
        """Add rows (int8 bytes) and their ``id|scope`` entries; rows are unit-normalised."""
        fresh = min(len(entries), len(blob) // self.dim) if self.dim else 0
        if fresh == 0:
            return
        block = np.frombuffer(blob, dtype=np.int8, count=fresh * self.dim).reshape(fresh, self.dim)
        first, need = self.count, self.count + fresh
        if need > self._rows.shape[0]:
            capacity = need if first == 0 else max(need, 2 * self._rows.shape[0])
            rows = np.empty((capacity, self.dim), dtype=np.float32)
            rows[:first] = self.rows
            scopes = np.zeros(capacity, dtype=np.int32)
            scopes[:first] = self.scopes
            nonzero = np.zeros(capacity, dtype=bool)
            nonzero[:first] = self._nonzero[:first]
            self._rows, self._scopes, self._nonzero = rows, scopes, nonzero
        target = self._rows[first:need]
        target[...] = block
        norms = np.sqrt(np.einsum("ij,ij->i", target, target))
        self._nonzero[first:need] = norms > 0
        target *= (1.0 / np.where(norms > 0, norms, 1.0))[:, None]
        codes = self.scope_codes
        for offset, entry in enumerate(entries[:fresh]):
            card_id, _, sk = entry.decode().partition("|")
            code = codes.get(sk)
            if code is None:
                code = codes[sk] = len(codes)
            self._scopes[first + offset] = code
            self.ids.append(card_id)

    def cosines(self, unit: np.ndarray[Any, np.dtype[np.float32]]) -> np.ndarray[Any, Any]:
        """Cosine of every row with a unit query.

        einsum, not ``rows @ unit``: numpy hands a matrix-vector product to the
        threaded BLAS, whose threads spin for cores a busy worker host does not
        have (10,000 × 384 on 2 shared cores: p50 16 ms, against 3 ms here).
        """
        scores: np.ndarray[Any, Any] = np.einsum("ij,j->i", self.rows, unit)
        return scores

    def candidates(
        self, allowed: frozenset[str] | None, *, words: bool = False
    ) -> np.ndarray[Any, Any]:
        """Rows :meth:`scores` can rank: live (with a vector) and of an ``allowed`` scope
        (every scope: None); with ``words``, also the live rows without a vector (what a
        search by words ranks)."""
        live = self.live | self.words if words else self.live
        if allowed is not None:
            # a table over the (few, dense) scope codes: np.isin sorts, ~40x slower here
            wanted = np.zeros(len(self.scope_codes) + 1, dtype=bool)
            for sk, code in self.scope_codes.items():
                if sk in allowed:
                    wanted[code] = True
            live = live & wanted[self.scopes]
        return live

    def scores(
        self, embedding: Sequence[float], allowed: frozenset[str] | None
    ) -> np.ndarray[Any, Any] | None:
        """Cosine of each live row of an ``allowed`` scope with ``embedding``, else -inf.

        None when the query cannot be compared: another dimension, or a zero vector.
        ``allowed`` None means every scope.
        """
        query = np.asarray(embedding, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if query.shape != (self.rows.shape[1],) or norm == 0.0:
            return None
        return np.where(self.candidates(allowed), self.cosines(query / norm), -np.inf)

    def any_live(self, allowed: frozenset[str] | None) -> bool:
        """Whether a live row of an ``allowed`` scope (every scope: None) exists — the
        only rows :meth:`scores` can rank."""
        return bool(self.candidates(allowed).any())

    def held_view(self, held: np.ndarray[Any, Any]) -> Matrix:
        """This matrix with ``held`` (a flag a row) as its live rows: the memory as it stood
        at a past moment (:mod:`memory_worker.cards.history`). The rows, ids and lexicon are
        shared, not copied; the view is never cached."""
        view = copy.copy(self)
        nonzero = self._nonzero[: self.count]
        view.live = held & nonzero
        view.words = held & ~nonzero
        return view

    def set_mask(self, mask: bytes) -> None:
        flags = np.zeros(self.count, dtype=np.uint8)
        have = min(len(mask), self.count)
        flags[:have] = np.frombuffer(mask, dtype=np.uint8, count=have)
        self.live = (flags == 1) & self._nonzero[: self.count]
        self.withdrawn = (flags == 2) & self._nonzero[: self.count]
        self.held = (flags != 2) & self._nonzero[: self.count]
        self.words = (flags == 1) & ~self._nonzero[: self.count]
        self.withdrawn_marks = mask.count(b"\x02")


def ranked(scores: np.ndarray[Any, Any], want: int) -> list[int]:
    """Indices of the ``want`` best finite scores, best first (all of them if fewer)."""
    top = np.argpartition(-scores, want - 1)[:want] if want < len(scores) else None
    order = top[np.argsort(-scores[top])] if top is not None else np.argsort(-scores)
    order = order[np.isfinite(scores[order])]
    indices: list[int] = order.tolist()
    return indices


@dataclass
class VectorCache:
    """Per-process LRU of chat matrices, bounded by bytes."""

    max_bytes: int
    entries: OrderedDict[int, Matrix] = field(default_factory=OrderedDict)
    #: Each entry's size when it was put (a cached matrix grows in place before its next
    #: put) and their sum: summing every entry on each put cost O(cached chats) per run.
    sizes: dict[int, int] = field(default_factory=dict)
    held_bytes: int = 0

    def get(self, chat_id: int) -> Matrix | None:
        entry = self.entries.get(chat_id)
        if entry is not None:
            self.entries.move_to_end(chat_id)
        return entry

    def put(self, chat_id: int, matrix: Matrix) -> None:
        self.entries[chat_id] = matrix
        self.entries.move_to_end(chat_id)
        size = matrix.nbytes
        self.held_bytes += size - self.sizes.get(chat_id, 0)
        self.sizes[chat_id] = size
        while self.held_bytes > self.max_bytes and len(self.entries) > 1:
            evicted, _ = self.entries.popitem(last=False)
            self.held_bytes -= self.sizes.pop(evicted)


class MatrixReader:
    """Reads a chat's :class:`Matrix` from Redis through the :class:`VectorCache`: one
    ``refresh`` script call when the cached matrix is current or only rows were appended,
    a consistent full snapshot otherwise. ``key(chat_id, suffix)`` names the chat's keys."""

    def __init__(
        self,
        redis: Any,
        key: Callable[[int, str], str],
        refresh: Callable[..., Awaitable[Any]],
        cache: VectorCache,
    ) -> None:
        self._redis = redis
        self.key = key
        self._refresh = refresh
        self._cache = cache

    async def read(self, chat_id: int) -> Matrix:
        """The chat's matrix: one script call when current or after appends, a full read else
        (at once when nothing is cached: the script would only answer 'full')."""
        cached = self._cache.get(chat_id)
        reply = []
        if cached is not None:
            reply = list(
                await self._refresh(
                    keys=[
                        self.key(chat_id, suffix)
                        for suffix in ("vecver", "vecrw", "meta", "vec", "vecmask", "vecids")
                    ],
                    args=[str(chat_id), cached.version, cached.count, cached.rewrites],
                )
            )
        if cached is not None and len(reply) == 1:
            return cached
        if len(reply) == 8 and cached is not None and cached.count == int(reply[3]):
            version, rewrites, _, _, mask, rows, entries, model = reply
            matrix = cached
            matrix.model = as_text(model)
        else:  # empty cache, a rewritten row, or another query of ours refreshed meanwhile
            version, rewrites, dim, mask, rows, entries, model = await self._full_read(chat_id)
            matrix = Matrix(int(dim or 0), model.decode() if model else "")
        matrix.append(rows or b"", entries)
        matrix.set_mask(mask or b"")
        matrix.version, matrix.rewrites = version or b"0", rewrites or b"0"
        self._cache.put(chat_id, matrix)
        return matrix

    async def _full_read(self, chat_id: int) -> list[Any]:
        """The chat's vectors as one consistent snapshot, without MULTI (a cluster has none).

        Every change of them bumps ``vecver`` in the same script, so equal versions read
        first and last mean nothing changed in between; otherwise read again.
        """
        while True:
            pipe = self._redis.pipeline(transaction=False)
            pipe.get(self.key(chat_id, "vecver"))
            pipe.get(self.key(chat_id, "vecrw"))
            pipe.hget(self.key(chat_id, "meta"), "dim")
            pipe.get(self.key(chat_id, "vecmask"))
            pipe.get(self.key(chat_id, "vec"))
            pipe.lrange(self.key(chat_id, "vecids"), 0, -1)
            pipe.hget(self.key(chat_id, "meta"), "model")
            pipe.get(self.key(chat_id, "vecver"))
            *reply, last = await pipe.execute()
            if reply[0] == last:
                return list(reply)
