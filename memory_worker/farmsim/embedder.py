"""The simulator's embedders: the real multilingual model, or a hashed bag of words.

The farm simulator embeds with one of two :class:`SimEmbedder` kinds:

- ``local`` (the default, §16): multilingual-e5-small through
  :func:`llm_client._transport.local_embed.load_model` — the same engine, the same
  ``query:``/``passage:`` convention as a ``transport = "local"`` route target
  (a request with a ``task_description`` is a query, one without is a
  passage). Its 384 floats are fitted to the requested dimension: zero-padded
  when more are asked for (cosines unchanged; the farm's default is 512),
  cut and re-normalised when fewer are. Vectors are cached per
  ``(text, query)`` for the life of the process, so a test suite that embeds
  the same sample texts over and over pays for each once.
- ``hashed``: the bag of words and trigrams below, for the few unit tests that
  need exact control over similarities (no model, no cost).

The hashed embedder: each text becomes a bag of lower-cased word unigrams and character trigrams
(of each word padded with spaces, so word starts and ends count). Every
feature is hashed with BLAKE2b into one of ``dimension`` buckets with a sign
taken from the hash, and the sum is L2-normalised. Texts sharing words share
buckets, so their cosine is clearly higher than that of unrelated texts, and
the same text always gives the same vector. No model, no randomness.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Sequence
from enum import StrEnum
from functools import lru_cache
from typing import Protocol

import numpy as np

DEFAULT_DIMENSION = 512
MAX_DIMENSION = 8192

#: A word counts twice as much as each of its trigrams.
WORD_WEIGHT = 1.0
TRIGRAM_WEIGHT = 0.5

_WORD = re.compile(r"\w+")
#: The feature an empty text gets, so its vector still has norm 1.
_EMPTY_FEATURE = "\x00empty"


def features(text: str) -> list[tuple[str, float]]:
    """The weighted features of ``text``: words, then trigrams of each word."""
    words = _WORD.findall(text.casefold())
    if not words:
        return [(_EMPTY_FEATURE, 1.0)]
    found: list[tuple[str, float]] = [(f"w:{word}", WORD_WEIGHT) for word in words]
    for word in words:
        padded = f" {word} "
        found.extend((f"t:{padded[i : i + 3]}", TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return found


@lru_cache(maxsize=65536)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    sign = -1.0 if value >> 63 else 1.0
    return value % dimension, sign


def embed_text(text: str, dimension: int = DEFAULT_DIMENSION) -> list[float]:
    """The unit vector of ``text`` in ``dimension`` floats."""
    if not 1 <= dimension <= MAX_DIMENSION:
        raise ValueError(f"dimension must be within 1..{MAX_DIMENSION}")
    vector = [0.0] * dimension
    for feature, weight in features(text):
        index, sign = _bucket(feature, dimension)
        vector[index] += sign * weight
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:  # every feature cancelled out: fall back to the empty feature
        index, sign = _bucket(_EMPTY_FEATURE, dimension)
        vector[index] = sign
        return vector
    return [x / norm for x in vector]


def embed_texts(texts: Sequence[str], dimension: int = DEFAULT_DIMENSION) -> list[list[float]]:
    """One unit vector per text, in input order."""
    return [embed_text(text, dimension) for text in texts]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors of equal length."""
    if len(a) != len(b):
        raise ValueError("vectors differ in length")
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return dot / (na * nb)


# --------------------------------------------------------------------------- the simulator's choice


class EmbedderKind(StrEnum):
    """Which embedder a simulator runs (setting ``farmsim_embedder``, ``MEMORY_FARMSIM_EMBEDDER``)."""

    LOCAL = "local"
    HASHED = "hashed"


#: The real model the ``local`` kind runs (a name of ``llm_client._transport.local_embed.LOCAL_MODELS``).
LOCAL_MODEL = "multilingual-e5-small"
#: Vectors a process keeps per ``(text, query)`` before the cache is emptied (float32 rows:
#: 1.5 KB each, so about 30 MB at most).
CACHE_LIMIT = 20_000


class SimEmbedder(Protocol):
    """What the simulator's embedding backend needs: vectors, and a way to warm them."""

    kind: EmbedderKind

    def embed(self, texts: Sequence[str], dimension: int, is_query: bool) -> list[list[float]]:
        """One unit vector of ``dimension`` floats per text (blocking)."""
        ...

    def warm(self, texts: Sequence[str], is_query: bool) -> None:
        """Compute and keep what :meth:`embed` will need (called off the event loop)."""
        ...


class HashedEmbedder:
    """The bag-of-words embedder: exact, cheap, blind to meaning."""

    kind = EmbedderKind.HASHED

    def embed(self, texts: Sequence[str], dimension: int, is_query: bool) -> list[list[float]]:
        return embed_texts(texts, dimension)

    def warm(self, texts: Sequence[str], is_query: bool) -> None:
        return None


def fit_dimension(vector: Sequence[float], dimension: int) -> list[float]:
    """``vector`` (a unit vector) as ``dimension`` floats: zero-padded, or cut and re-normalised."""
    if dimension >= len(vector):
        return [float(x) for x in vector] + [0.0] * (dimension - len(vector))
    head = [float(x) for x in vector[:dimension]]
    norm = math.sqrt(sum(x * x for x in head))
    if norm == 0.0:
        return [1.0] + [0.0] * (dimension - 1)
    return [x / norm for x in head]


class LocalEmbedder:
    """multilingual-e5-small in the simulator's process, cached per text.

    The engine is the process-wide one of :func:`llm_client._transport.local_embed.load_model`
    (shared with any local route target in the same process); calls are
    serialised by a lock, since the C engine already spreads one call over the
    cores. Without the ``local-embed`` extra the first call raises
    :class:`~llm_client._errors.LocalModelUnavailable`.
    """

    kind = EmbedderKind.LOCAL

    def __init__(self, model: str = LOCAL_MODEL) -> None:
        self.model = model

    def warm(self, texts: Sequence[str], is_query: bool) -> None:
        self._rows(texts, is_query)

    def embed(self, texts: Sequence[str], dimension: int, is_query: bool) -> list[list[float]]:
        if not 1 <= dimension <= MAX_DIMENSION:
            raise ValueError(f"dimension must be within 1..{MAX_DIMENSION}")
        rows = self._rows(texts, is_query)
        return [fit_dimension(rows[text].tolist(), dimension) for text in texts]

    def _rows(self, texts: Sequence[str], is_query: bool) -> dict[str, np.ndarray]:
        """The model's vector of every text, from the cache or the engine."""
        found: dict[str, np.ndarray] = {}
        for text in texts:
            row = _CACHE.get((text, is_query))
            if row is not None:
                found[text] = row
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if not missing:
            return found
        from llm_client import load_model

        engine = load_model(self.model)
        with _ENGINE_LOCK:
            rows = engine.encode(missing, is_query=is_query)
        if len(_CACHE) + len(missing) > CACHE_LIMIT:
            _CACHE.clear()
        matrix = np.asarray(rows, dtype=np.float32)
        for text, row in zip(missing, matrix, strict=True):
            found[text] = _CACHE[(text, is_query)] = row
        return found


#: The local embedder's vectors, per (text, query), for the whole process (all simulators).
_CACHE: dict[tuple[str, bool], np.ndarray] = {}
#: One engine call at a time from the simulators (the engine spreads a call over the cores).
_ENGINE_LOCK = threading.Lock()


def make_embedder(kind: EmbedderKind | str) -> SimEmbedder:
    """A simulator's embedder of ``kind``."""
    if EmbedderKind(kind) is EmbedderKind.HASHED:
        return HashedEmbedder()
    return LocalEmbedder()
