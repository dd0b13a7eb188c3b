"""The one edge where foreign exceptions become ``llm_client`` errors (httpx-style).

Every HTTP round trip runs inside :func:`mapped`, and every JSON or base64
decode goes through the helpers below, which use it too. Inside, a foreign
exception is looked up in :data:`EXCEPTION_MAP` — the row of the *most specific*
matching class wins (the one nearest the exception's own type in its MRO, as httpx's
transport does with ``issubclass``), so the table's order cannot change behaviour —
and re-raised as the mapped ``llm_client`` error, chained to the original. Nothing
else in the package catches a foreign exception type, so the mapping lives
in one table.

Messages name *what* failed (``submit``, ``poll job 42``, ``decode job
envelope``) and the foreign exception's type and text; they never carry
request bodies or headers, which is where prompts and tokens live.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

import httpx
import orjson

from llm_client._errors import (
    DecodeError,
    LLMError,
    RequestError,
    RequestTimeout,
    Transport,
)

#: Longest foreign exception text kept in a mapped message.
_DETAIL_CHARS: Final = 200


@dataclass(frozen=True, slots=True)
class Edge:
    """What was running when a foreign exception arrived."""

    what: str
    #: The time slice the operation had (for timeout messages), if it was timed.
    seconds: float | None = None
    #: Connect budget; a connect timeout is then a ``RequestTimeout`` of this many seconds.
    connect_seconds: float | None = None
    #: Builds the error for a timeout when something other than the request budget cut it.
    timeout_error: Callable[[], LLMError] | None = None


Factory = Callable[[BaseException, Edge], LLMError]


def _detail(exc: BaseException) -> str:
    text = str(exc).strip()
    name = type(exc).__name__
    if not text:
        return name
    if len(text) > _DETAIL_CHARS:
        text = text[:_DETAIL_CHARS] + "…"
    return f"{name}: {text}"


def _seconds(value: float | None) -> str:
    return f"{value:g}s" if value is not None else "its budget"


def _connect_timed_out(exc: BaseException, edge: Edge) -> LLMError:
    if edge.connect_seconds is None:
        return _timed_out(exc, edge)
    return RequestTimeout(
        f"{edge.what}: connect timed out after {_seconds(edge.connect_seconds)}",
        seconds=edge.connect_seconds,
    )


def _timed_out(exc: BaseException, edge: Edge) -> LLMError:
    if edge.timeout_error is not None:
        return edge.timeout_error()
    return RequestTimeout(
        f"{edge.what} timed out after {_seconds(edge.seconds)}", seconds=edge.seconds or 0.0
    )


def _unreachable(exc: BaseException, edge: Edge) -> LLMError:
    return Transport(f"{edge.what}: {_detail(exc)}")


def _undecodable(exc: BaseException, edge: Edge) -> LLMError:
    return DecodeError(f"{edge.what}: {_detail(exc)}")


def _unbuildable(exc: BaseException, edge: Edge) -> LLMError:
    return RequestError(f"{edge.what}: {_detail(exc)}")


#: Foreign exception type → ``llm_client`` error factory. Row order does not matter: the
#: most specific matching class wins (``TimeoutError`` before its base ``OSError``,
#: ``httpx.ConnectTimeout`` before ``httpx.TimeoutException``), see :func:`factory_for`.
EXCEPTION_MAP: Final[tuple[tuple[type[BaseException], Factory], ...]] = (
    (httpx.ConnectTimeout, _connect_timed_out),
    (httpx.TimeoutException, _timed_out),
    (TimeoutError, _timed_out),
    (httpx.UnsupportedProtocol, _unbuildable),
    (httpx.LocalProtocolError, _unbuildable),
    (httpx.InvalidURL, _unbuildable),
    (httpx.DecodingError, _undecodable),
    (httpx.TransportError, _unreachable),
    (json.JSONDecodeError, _undecodable),
    (orjson.JSONEncodeError, _unbuildable),
    (binascii.Error, _undecodable),
    (UnicodeError, _undecodable),
    (OSError, _unreachable),
)


def factory_for(
    exc: BaseException,
    table: tuple[tuple[type[BaseException], Factory], ...] = EXCEPTION_MAP,
) -> Factory | None:
    """The factory of the most specific row of ``table`` that ``exc`` is an instance of."""
    mro = type(exc).__mro__
    matches = [(mro.index(foreign), factory) for foreign, factory in table if foreign in mro]
    return min(matches, key=lambda match: match[0])[1] if matches else None


@contextmanager
def mapped(
    what: str,
    *,
    seconds: float | None = None,
    connect_seconds: float | None = None,
    timeout_error: Callable[[], LLMError] | None = None,
) -> Iterator[None]:
    """Re-raise foreign exceptions from the block as ``llm_client`` errors (see the map)."""
    try:
        yield
    except LLMError:
        raise
    except Exception as exc:
        factory = factory_for(exc)
        if factory is None:
            raise
        raise factory(exc, Edge(what, seconds, connect_seconds, timeout_error)) from exc


def loads(raw: bytes, what: str) -> object:
    """Parse JSON; anything undecodable is a ``DecodeError`` naming ``what``."""
    with mapped(what):
        return orjson.loads(raw)


#: Returned by :func:`loads_or_missing` when the bytes are not JSON.
NOT_JSON: Final = object()


def loads_or_missing(raw: bytes) -> object:
    """Parse JSON if the bytes are JSON, else return :data:`NOT_JSON` (for error texts)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return NOT_JSON


def dumps(value: object, what: str) -> bytes:
    """Serialise a request; something unserialisable is a ``RequestError`` (a caller bug)."""
    with mapped(what):
        return orjson.dumps(value)


def b64decode(text: str, what: str) -> bytes:
    """Decode standard, URL-safe or unpadded base64 (whitespace ignored)."""
    compact = "".join(text.split()).replace("-", "+").replace("_", "/")
    compact += "=" * (-len(compact) % 4)
    with mapped(what):
        return base64.b64decode(compact.encode("ascii"), validate=True)


def b64encode(raw: bytes) -> str:
    """Standard padded base64, as the farm expects in ``invocation.body``."""
    return base64.b64encode(raw).decode("ascii")
