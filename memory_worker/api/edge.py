"""The bot's API edge: what reaches a bot is ``memory_worker``'s own error tree (§13).

Foreign errors are mapped here, httpx-style, in one place, each with the original as its
``__cause__`` (types and ids in the message, never a text the bot sent):

- :func:`embedding_edge` — around every call of the embedding route: a routes file that
  cannot load becomes :class:`~memory_worker.errors.RoutesInvalid`; anything else the
  embedder raises (``llm_client``'s errors, and whatever a transport or a test's embedder
  lets through) becomes :class:`~memory_worker.errors.EmbeddingUnavailable`, which
  ``recall`` and ``context`` turn into a degraded answer and ``correct`` raises. A store
  fault inside the walker (its breakers live in Redis) is left to the outer edge.
- :func:`bot_error` — what one foreign error is in the tree: redis-py's answers no retry
  heals as :class:`~memory_worker.errors.StoreReplyError` (:func:`~memory_worker.storage.faults.store_answer`),
  the cluster client's tree and the programming-error types it leaks as
  :class:`~memory_worker.errors.StoreClientError`, any other Redis failure (a refused or
  lost connection, a timeout, ``LOADING``…) as :class:`~memory_worker.errors.StoreUnreachable`.
- :func:`bot_edge` — the class decorator that puts :func:`bot_error` around every public
  method of :class:`~memory_worker.MemoryQueue` (the ones added later too: the edge is
  generated from the class, so no method is forgotten) and refuses every call after
  ``close()`` with :class:`~memory_worker.errors.QueueClosed`.
- :func:`public_methods` — the class's public methods, as the edge and the sync client
  (:mod:`memory_worker.api.sync`) both read them.

An error of the tree passes as it is; an error of none of these kinds (a bug) is left
alone, so its traceback says where it came from.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from redis.exceptions import RedisClusterException, RedisError

from memory_worker.errors import (
    EmbeddingUnavailable,
    MemoryWorkerError,
    QueueClosed,
    RoutesInvalid,
    StoreError,
    StoreUnreachable,
)
from memory_worker.storage.faults import client_fault, is_store_fault, store_answer

T = TypeVar("T", bound=type)

#: The calls a closed queue still answers (closing again is a no-op; a context manager's
#: entry and exit wrap a close).
_AFTER_CLOSE = frozenset({"close", "__aenter__", "__aexit__"})


@contextlib.contextmanager
def embedding_edge(call: str, chat_id: int, sent: Sequence[str] = ()) -> Iterator[None]:
    """Around one call of the embedding route for ``call`` (``recall``, ``correct``,
    ``remember``) on ``chat_id``: see the module. Ids and type names only, never the text;
    the farm's error chained under it loses what it echoed of ``sent``, the texts given to
    the embedder (a bot that logs the error prints its chain)."""
    from llm_client import LLMError, RoutesError, retryable_reason
    from memory_worker.privacy.masking import forget_echoes

    try:
        yield
    except RoutesError as exc:
        raise RoutesInvalid(str(exc)) from exc
    except (MemoryWorkerError, RedisError, RedisClusterException):
        raise  # ours already, or the store's: the outer edge maps it
    except Exception as exc:
        if is_store_fault(exc):
            raise
        reason = retryable_reason(exc) if isinstance(exc, LLMError) else None
        forget_echoes(exc, sent)
        raise EmbeddingUnavailable(
            call, chat_id, kind=type(exc).__name__, reason=reason.value if reason else None
        ) from exc


def bot_error(exc: BaseException) -> MemoryWorkerError | None:
    """What ``exc`` is in ``memory_worker``'s tree, chained to it; None: leave it as it is
    (ours already, or no store error)."""
    if isinstance(exc, MemoryWorkerError) or not is_store_fault(exc):
        return None
    mapped: StoreError | None = store_answer(exc) or client_fault(exc)
    if mapped is None:
        mapped = StoreUnreachable(type(exc).__name__)
    if mapped.__cause__ is None:
        mapped.__cause__ = exc
    return mapped


def public_methods(cls: type) -> dict[str, Callable[..., Any]]:
    """The public methods of ``cls`` by name — functions and classmethods (as their
    function), its bases' included — in the order of ``dir``; properties, attributes and
    static seams (a clock) are not methods."""
    found: dict[str, Callable[..., Any]] = {}
    for name in dir(cls):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(cls, name)
        if isinstance(attr, classmethod):
            found[name] = attr.__func__
        elif inspect.isfunction(attr):
            found[name] = attr
    return found


def _edged(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` behind the edge: refused once its queue is closed, foreign errors mapped."""
    check_closed = name not in _AFTER_CLOSE

    def refuse(owner: object) -> None:
        if check_closed and getattr(owner, "closed", False) is True:
            raise QueueClosed(name)

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def call(owner: Any, *args: Any, **kwargs: Any) -> Any:
            refuse(owner)
            try:
                return await fn(owner, *args, **kwargs)
            except Exception as exc:
                mapped = bot_error(exc)
                if mapped is None:
                    raise
                raise mapped from exc

        call.__bot_edge__ = True  # type: ignore[attr-defined]
        return call

    @functools.wraps(fn)
    def call_sync(owner: Any, *args: Any, **kwargs: Any) -> Any:
        refuse(owner)
        try:
            return fn(owner, *args, **kwargs)
        except Exception as exc:
            mapped = bot_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    call_sync.__bot_edge__ = True  # type: ignore[attr-defined]
    return call_sync


def bot_edge(cls: T) -> T:
    """Put the edge around every public method of ``cls`` (and its async context
    manager's entry and exit): see the module."""
    for name in [*public_methods(cls), "__aenter__", "__aexit__"]:
        attr = inspect.getattr_static(cls, name, None)
        if isinstance(attr, classmethod):
            setattr(cls, name, classmethod(_edged(name, attr.__func__)))
        elif inspect.isfunction(attr):
            setattr(cls, name, _edged(name, attr))
    return cls
