"""The bot's edge (§13): every error a bot's call raises is a documented ``memory_worker``
type, exported from the package — Redis down, the embedder raising anything, the queue
closed — and a read the embedder cannot serve answers from the words alone, degraded."""

from __future__ import annotations

import asyncio
import functools
import inspect
import uuid
from collections.abc import Callable
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.exceptions import BusyLoadingError, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

import llm_client
import memory_worker
from llm_client import LLMError, RoutesError
from memory_worker import MemoryQueue
from memory_worker.api.edge import public_methods
from memory_worker.cards import Card
from memory_worker.errors import EmbedderTimeout, RunControl
from memory_worker.settings import Settings
from memory_worker.storage.embedded import EmbeddedValkey
from tests.support.cards import CHAT, apply, new

REQUEST: dict[str, Any] = {
    "chat_id": CHAT,
    "range_start": "2026-11-02T18:00:00Z",
    "range_end": "2026-11-02T19:00:00Z",
    "messages": [
        {
            "message_id": 1,
            "user_id": 11,
            "sender_name": "Alice",
            "text": "I really love green tea.",
            "sent_at": "2026-11-02T18:05:00Z",
        }
    ],
}

#: A value for each parameter a public method may require, by name (else by its type).
VALUES: dict[str, Any] = {
    "chat_id": CHAT,
    "user_id": 11,
    "thread_id": 0,
    "run_id": "r-1",
    "text": "green tea",
    "query": "green tea",
    "fact_text": "Alice skis",
    "card_id": f"{CHAT}:1",
    "actor": "ops",
    "reason": "wrong",
    "request": REQUEST,
    "requests": [REQUEST],
    "embedding": [0.5] * 16,
    "lines": [b"{}"],
}


async def outcome(make: Callable[[], Any]) -> Any:
    """What ``make()`` answers (awaited when it is a coroutine), or the error it raised."""
    try:
        call = make()
        return await call if inspect.isawaitable(call) else call
    except Exception as error:
        return error


def arguments(method: Callable[..., Any]) -> dict[str, Any]:
    """Keyword arguments for every parameter of ``method`` without a default."""
    found: dict[str, Any] = {}
    for name, param in list(inspect.signature(method).parameters.items())[1:]:
        if param.default is not param.empty or param.kind in (
            param.VAR_POSITIONAL,
            param.VAR_KEYWORD,
        ):
            continue
        if name in VALUES:
            found[name] = VALUES[name]
        else:  # a method added since: the plainest value of its type
            found[name] = 1 if "int" in str(param.annotation) else "x"
    return found


# --- exported and documented ---------------------------------------------------------------


def test_every_error_a_bot_can_meet_is_exported_from_memory_worker() -> None:
    """Each class of the tree outside the worker's own control flow is importable from
    ``memory_worker`` and drawn in the tree (tests/test_structure.py holds the drawing)."""
    from memory_worker import errors

    bot_side = {
        name
        for name, cls in vars(errors).items()
        if inspect.isclass(cls)
        and issubclass(cls, errors.MemoryWorkerError)
        and not issubclass(cls, RunControl)
    }
    assert {"StoreUnreachable", "QueueClosed", "EmbeddingUnavailable"} <= bot_side
    assert sorted(bot_side - set(memory_worker.__all__)) == []
    assert all(getattr(memory_worker, name) is getattr(errors, name) for name in bot_side)


def test_every_public_method_stands_behind_the_edge() -> None:
    methods = public_methods(MemoryQueue)
    assert {"connect", "enqueue", "recall", "context", "correct", "close"} <= set(methods)
    unguarded = [name for name, fn in methods.items() if not getattr(fn, "__bot_edge__", False)]
    assert unguarded == []


# --- Redis down ------------------------------------------------------------------------------

#: The calls that must reach Redis with the arguments above (the others may answer first).
READS_REDIS = {
    "connect",
    "enqueue",
    "enqueue_many",
    "get_run",
    "list_runs",
    "forget",
    "visible_cards",
    "similar_cards",
    "recall",
    "context",
    "retract",
    "correct",
    "remember",
    "export",
}


async def test_with_redis_down_every_public_call_raises_a_store_error(
    settings: Settings, own_valkey: EmbeddedValkey
) -> None:
    """Every public method, Redis stopped under a connected queue: a ``StoreError`` (redis-py's
    error its ``__cause__``) or an answer — never redis-py's own type."""
    url = own_valkey.url
    s = settings.model_copy(update={"redis_url": url, "embedding_dimension": 16})
    queue = await MemoryQueue.connect(settings=s)
    own_valkey.stop()
    outcomes: dict[str, str] = {}
    try:
        for name, method in public_methods(MemoryQueue).items():
            if name == "close":
                continue
            args = arguments(method)
            target: Callable[..., Any] = getattr(queue, name)
            if name == "connect":
                target, args = MemoryQueue.connect, {"redis_url": url, "settings": s}
            answer = await outcome(functools.partial(target, **args))
            if isinstance(answer, memory_worker.StoreError):
                assert isinstance(answer.__cause__, RedisError), name
            assert not isinstance(answer, BaseException) or isinstance(
                answer, memory_worker.MemoryWorkerError
            ), (name, answer)
            outcomes[name] = type(answer).__name__
    finally:
        await queue.close()
    assert {outcomes[name] for name in READS_REDIS} == {"StoreUnreachable"}, outcomes


# --- closed ----------------------------------------------------------------------------------


async def test_a_closed_queue_refuses_every_call_with_queue_closed(settings: Settings) -> None:
    queue = await MemoryQueue.connect(settings=settings)
    await queue.close()
    await queue.close()  # again: nothing
    assert queue.closed
    refused = []
    for name, method in public_methods(MemoryQueue).items():
        if name in ("close", "connect"):
            continue
        answer = await outcome(functools.partial(getattr(queue, name), **arguments(method)))
        assert isinstance(answer, memory_worker.QueueClosed), (name, answer)
        assert isinstance(answer, memory_worker.Conflict)
        refused.append(answer.call)
    assert {"enqueue", "recall"} <= set(refused)


# --- whatever the embedder raises ------------------------------------------------------------


def _llm_errors() -> list[type[LLMError]]:
    found: list[type[LLMError]] = []
    todo: list[type[LLMError]] = [LLMError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(set(found), key=lambda c: c.__name__)


def _llm_error(cls: type[LLMError], text: str) -> LLMError:
    if issubclass(cls, RoutesError):
        return cls("routes.toml", [text])
    if cls is EmbedderTimeout:
        return cls(text)
    fill: dict[str, Any] = {"workflow": "embedding", "budget": "task", "seconds": 1.0}
    params = inspect.signature(cls).parameters
    required = {
        n: fill[n] for n, p in params.items() if p.kind is p.KEYWORD_ONLY and p.default is p.empty
    }
    return cls(text, **required)


FOREIGN: list[Callable[[str], BaseException]] = [
    Exception,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    RuntimeError,
    NotImplementedError,
    ZeroDivisionError,
    OSError,
    ConnectionError,
    TimeoutError,
    lambda t: httpx.ConnectError(t),
    lambda t: httpx.ReadTimeout(t),
    lambda t: httpx.RemoteProtocolError(t),
    RedisConnectionError,
    RedisTimeoutError,
    BusyLoadingError,
    lambda t: ResponseError(f"OOM {t}"),
    lambda t: ResponseError(f"ERR {t}"),
    lambda t: memory_worker.VectorSpaceMismatch(
        CHAT, chat_model="a", query_model="b", dimension=16
    ),
    *[(lambda t, c=cls: _llm_error(c, t)) for cls in _llm_errors()],
]


class _RaisingEmbedder:
    """An embedding route whose every call raises ``error`` (a walker's face)."""

    transports = None

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.routes: dict[str, Any] = {}

    async def embed(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error


async def _call_with_failing_embedder(redis_url: str, error: BaseException, call: str) -> object:
    """One bot call on a chat with vectors while the embedder raises ``error``: its answer,
    or the error it raised."""
    s = Settings(
        redis_url=redis_url, key_prefix=f"edge{uuid.uuid4().hex[:10]}:", embedding_dimension=16
    )
    queue = await MemoryQueue.connect(settings=s)
    queue.recall_walker = _RaisingEmbedder(error)  # type: ignore[assignment]
    try:
        await apply(queue.cards, "r1", new("Alice likes green tea", seed=1), embedding_model="m16")
        await apply(queue.cards, "r2", new("Alice lives in Lisbon", seed=2), embedding_model="m16")
        card: Card = (await queue.visible_cards(CHAT, user_id=11))[0]
        calls = {
            "recall": lambda: queue.recall(CHAT, "green tea", user_id=11),
            "context": lambda: queue.context(CHAT, user_id=11, query="green tea"),
            "correct": lambda: queue.correct(card, "Alice likes black tea", actor="ops"),
            "remember": lambda: queue.remember(CHAT, "Alice skis", user_id=11, actor="bot"),
        }
        return await outcome(calls[call])
    finally:
        keys = [k async for k in queue.redis.scan_iter(match=f"*{s.key_prefix}*", count=1000)]
        if keys:
            await queue.redis.delete(*keys)
        await queue.close()


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    make=st.sampled_from(FOREIGN),
    text=st.text(max_size=30),
    call=st.sampled_from(["recall", "context", "correct", "remember"]),
)
def test_whatever_the_embedder_raises_the_bot_sees_a_degraded_read_or_a_memory_worker_error(
    make: Callable[[str], BaseException], text: str, call: str, redis_url: str
) -> None:
    error = make(text)
    outcome = asyncio.run(_call_with_failing_embedder(redis_url, error, call))
    if isinstance(outcome, BaseException):
        assert isinstance(outcome, memory_worker.MemoryWorkerError), repr(outcome)
        assert outcome is error or outcome.__cause__ is error  # the original kept
        return
    if call in ("recall", "context"):
        assert isinstance(outcome, memory_worker.RecallResult | memory_worker.MemoryContext)
        assert outcome.degraded
        assert isinstance(outcome.degraded_error, memory_worker.EmbeddingUnavailable)
        assert outcome.degraded_error.__cause__ is error
        assert outcome.degraded_error.kind == type(error).__name__
    if call == "recall":
        assert isinstance(outcome, memory_worker.RecallResult)
        assert [hit.card.fact_text for hit in outcome] == ["Alice likes green tea"]
        assert outcome[0].dense is None
    if call == "remember":  # stored now, its vector waits for the farm
        assert isinstance(outcome, Card)
        assert not outcome.has_embedding
    assert call != "correct", "correct answered without its embedding"


def test_the_catalogue_holds_every_error_llm_client_exports() -> None:
    exported = {
        name
        for name in dir(llm_client)
        if inspect.isclass(getattr(llm_client, name))
        and issubclass(getattr(llm_client, name), LLMError)
    }
    assert exported <= {cls.__name__ for cls in _llm_errors()}
