"""Checks of the bot's memory-call arguments: ids, ``k``, query vectors, query texts, time
windows.

Pure functions: each returns the value it checked or raises one of the
:class:`~memory_worker.errors.InvalidQuery` errors, before the call reads or
writes anything (§13: a wrong type or size is a typed error, never an
``AttributeError`` or a silent ``[]``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sized
from datetime import datetime
from numbers import Real
from typing import cast

from memory_worker.cards.recall.timing import Window
from memory_worker.errors import EmbeddingSizeMismatch, InvalidId, InvalidQuery, QueryTooLarge
from memory_worker.models import INT64_MAX, INT64_MIN


def _check_int(name: str, value: object) -> int:
    """``value`` if it is an int (a bool is not: ``True`` is no chat id)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidId(name, value)
    return value


def check_id(name: str, value: object) -> int:
    """``value`` if it is an int of 64 bits, signed (every id the store keeps is one)."""
    checked = _check_int(name, value)
    if not INT64_MIN <= checked <= INT64_MAX:
        raise InvalidId(name, value)
    return checked


def check_optional_id(name: str, value: object) -> int | None:
    return None if value is None else check_id(name, value)


def check_k(k: object, limit: int, *, name: str = "k") -> int:
    """How many results to return (or tokens to fill): an int from 0 (none) to ``limit``."""
    count = _check_int(name, k)
    if count < 0:
        raise InvalidQuery(f"{name} must be 0 or more, got {count}")
    if count > limit:
        raise QueryTooLarge(name, count, limit)
    return count


def check_query_text(text: object, limit: int) -> str:
    """A recall text: a non-blank str of at most ``limit`` characters."""
    if not isinstance(text, str):
        raise InvalidQuery(f"the recall text must be a str, got {type(text).__name__}")
    if not text.strip():
        raise InvalidQuery("recall needs a non-empty text")
    if len(text) > limit:
        raise QueryTooLarge("the recall text's length", len(text), limit)
    return text


def check_embedding(chat_id: int, embedding: object, expected: int) -> list[float]:
    """A query vector (a list, tuple or 1-d numpy array): ``expected`` finite real numbers."""
    if (
        isinstance(embedding, str | bytes | Mapping)
        or not isinstance(embedding, Sized)
        or not isinstance(embedding, Iterable)
    ):
        kind = type(embedding).__name__
        raise InvalidQuery(f"the embedding must be a sequence of floats, got {kind}")
    if len(embedding) != expected:
        raise EmbeddingSizeMismatch(chat_id, expected=expected, got=len(embedding))
    values: list[float] = []
    for value in cast(Iterable[object], embedding):
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise InvalidQuery("the embedding must hold finite real numbers only")
        values.append(float(value))
    return values


def check_window(since: object, until: object) -> Window | None:
    """Recall's ``since``/``until``: aware datetimes (or None), ``until`` after ``since``;
    None when both are open."""
    for name, moment in (("since", since), ("until", until)):
        if moment is None:
            continue
        if not isinstance(moment, datetime):
            raise InvalidQuery(f"{name} must be a datetime, got {type(moment).__name__}")
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise InvalidQuery(f"{name} needs a timezone (an aware datetime)")
    if since is None and until is None:
        return None
    start = cast("datetime | None", since)
    end = cast("datetime | None", until)
    if start is not None and end is not None and end <= start:
        raise InvalidQuery("until must be after since")
    return Window(start, end)


def check_as_of(as_of: object) -> datetime | None:
    """``as_of``: None, or an aware datetime (else :class:`InvalidQuery`)."""
    if as_of is None:
        return None
    if not isinstance(as_of, datetime):
        raise InvalidQuery(f"as_of must be an aware datetime, got {type(as_of).__name__}")
    if as_of.tzinfo is None or as_of.utcoffset() is None:
        raise InvalidQuery("as_of must be an aware datetime (with a time zone)")
    return as_of
