"""Store faults: which exceptions mean "Redis failed", never "the work is bad" (§7).

The one home of that classification, at the connections edge: the tick, the
lease renewer and the store's retries all ask :func:`is_store_fault`, and the card
store's cluster client maps what redis-py raises onto our tree at the call
(:func:`store_edge`, httpx-style) while the traceback still says where it came from —
a failover's slot without a node, a lost connection in disguise.

A store fault is either transient — it heals by itself, so a write retries it in place
(:func:`is_transient_fault`: a lost connection, a timeout, ``LOADING``, ``TRYAGAIN``,
``CLUSTERDOWN``…) — or an answer no retry heals, which :func:`store_answer` maps onto
:class:`~memory_worker.errors.StoreReplyError`: the store refusing writes (``OOM``…), data
that is not what the code wrote (``WRONGTYPE``, a counter ``INCR`` cannot raise), a script's
own error. Which reply is which is :mod:`memory_worker.storage.replies`' one table.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import redis
from redis.exceptions import (
    AskError,
    ClusterCrossSlotError,
    ClusterDownError,
    DataError,
    ExecAbortError,
    MasterDownError,
    MovedError,
    NoPermissionError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TryAgainError,
)

from memory_worker.errors import (
    StoreClientError,
    StoreDataCorrupt,
    StoreError,
    StoreReplyError,
    StoreScriptError,
    StoreWriteRefused,
)
from memory_worker.storage.replies import ReplyClass, classify_reply

#: Where redis-py and the asyncio streams under it live: an error raised in there, and not in
#: any code of ours it called, is the client's, whatever its type.
_CLIENT_DIRS = tuple(
    str(Path(module.__file__ or "").parent) + os.sep for module in (redis, asyncio)
)
_REDIS_DIR = _CLIENT_DIRS[0]

#: Programming-error types redis-py leaks when a connection or the cluster's slot map changes
#: under a command: a lost connection (``'NoneType' object has no attribute 'writelines'``,
#: redis/redis-py#4287) or a failover's dropped node (``… no attribute 'name'``).
_LEAKED_TYPES = (AttributeError, TypeError, KeyError, IndexError)


def raised_in_client(error: BaseException) -> bool:
    """Whether ``error`` was raised inside redis-py (or asyncio's streams under it), below
    every frame of ours: the innermost frames are the client's and one of them is redis-py's.

    Read where the error is first caught (:func:`store_edge`): an error object re-raised
    through a task or future later may carry another traceback.
    """
    frames: list[str] = []
    tb = error.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    in_redis = False
    for filename in reversed(frames):
        if not filename.startswith(_CLIENT_DIRS):
            break
        in_redis = in_redis or filename.startswith(_REDIS_DIR)
    return in_redis


def is_transport_race(error: BaseException) -> bool:
    """A programming-error type raised inside the Redis client: a lost connection or a
    cluster slot without a node, in disguise (redis-py 5 leaks them; arq pins redis < 6)."""
    return isinstance(error, _LEAKED_TYPES) and raised_in_client(error)


def is_store_fault(error: BaseException) -> bool:
    """A Redis error of any kind: never evidence against the work (§7).

    ``RedisError`` and our ``StoreError`` (:class:`StoreClientError` included: what
    :func:`store_edge` made of the cluster client's foreign errors); the cluster client's own
    tree, which is not a ``RedisError`` (``RedisClusterException``, ``SlotNotCoveredError``),
    should one get past the edge; and what the plain client leaks as an AttributeError,
    TypeError, KeyError or IndexError (:func:`is_transport_race`).
    """
    if isinstance(error, RedisError | StoreError | RedisClusterException):
        return True
    return is_transport_race(error)


def client_fault(error: BaseException) -> StoreClientError | None:
    """What ``error``, just raised by the Redis client, is in our tree (None: leave it be)."""
    if isinstance(error, RedisError | StoreError):
        return None  # already typed
    if isinstance(error, RedisClusterException) or is_transport_race(error):
        fault = StoreClientError(type(error).__name__)
        fault.__cause__ = error
        return fault
    return None


@contextlib.contextmanager
def store_edge() -> Iterator[None]:
    """Map what the Redis client raises inside onto our tree, at the call (httpx-style edge):
    the cluster tree and leaked programming-error types become :class:`StoreClientError`."""
    try:
        yield
    except Exception as exc:
        fault = client_fault(exc)
        if fault is None:
            raise
        raise fault from exc


#: The code word redis-py cuts off the replies it raises as these types (its parsers'
#: ``EXCEPTION_CLASSES``, the cluster's included); a plain ``ResponseError`` keeps its code,
#: except ``ERR``. Looked up along the exception's MRO: the most specific type wins.
_CUT_CODES: dict[type[ResponseError], str] = {
    OutOfMemoryError: "OOM",
    NoScriptError: "NOSCRIPT",
    ReadOnlyError: "READONLY",
    NoPermissionError: "NOPERM",
    ExecAbortError: "EXECABORT",
    MasterDownError: "MASTERDOWN",
    ClusterDownError: "CLUSTERDOWN",
    TryAgainError: "TRYAGAIN",
    MovedError: "MOVED",
    AskError: "ASK",
    ClusterCrossSlotError: "CROSSSLOT",
}
_CODE_WORD = re.compile(r"[A-Z][A-Z_]+")


def reply_text(error: ResponseError) -> str:
    """The server's whole error reply behind ``error``, its code word put back."""
    text = str(error)
    for cls in type(error).__mro__:
        if cls in _CUT_CODES:
            return f"{_CUT_CODES[cls]} {text}"
    if _CODE_WORD.fullmatch(text.partition(" ")[0]):
        return text
    return f"ERR {text}"


def store_answer(error: BaseException) -> StoreReplyError | None:
    """What ``error`` is when it is an answer no retry heals, in our tree (chained to it);
    None when it is not one — a transient fault, or no store error at all.

    An error reply by :func:`~memory_worker.storage.replies.classify_reply`; the client
    refusing to encode our arguments (``DataError``: a bug) as an answer of its own."""
    if isinstance(error, StoreReplyError):
        return error
    answer: StoreReplyError
    if isinstance(error, ResponseError):
        reply = classify_reply(reply_text(error))
        if reply.kind is ReplyClass.TRANSIENT:
            return None
        if reply.kind is ReplyClass.REFUSED:
            answer = StoreWriteRefused(reply.code)
        elif reply.kind is ReplyClass.CORRUPT:
            answer = StoreDataCorrupt(reply.code)
        elif reply.kind is ReplyClass.SCRIPT:
            answer = StoreScriptError(reply.code)
        else:
            answer = StoreReplyError(reply.code)
    elif isinstance(error, DataError):
        answer = StoreReplyError("client_data")
    else:
        return None
    answer.__cause__ = error
    return answer


def is_transient_fault(error: BaseException) -> bool:
    """A store fault that heals by itself (a write retries it in place, §7): a lost
    connection, a timeout, a server loading or a cluster failing over — any store fault
    that is not an answer no retry heals (:func:`store_answer`)."""
    return is_store_fault(error) and store_answer(error) is None


def is_store_outage(error: BaseException) -> bool:
    """A store fault that is the store's, never the run's (§7): transient, or the store
    refusing writes. The run is released, its attempt refunded; any other answer (corrupt
    data, a script's error) fails it."""
    return is_transient_fault(error) or isinstance(store_answer(error), StoreWriteRefused)
