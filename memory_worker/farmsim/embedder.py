"""The simulator's deterministic embedder: hashed bag of words and trigrams.

Each text becomes a bag of lower-cased word unigrams and character trigrams
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
from collections.abc import Sequence
from functools import lru_cache

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
