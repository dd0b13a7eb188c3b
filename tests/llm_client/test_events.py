"""§6 routing events: the event model, the bounded Redis stream and its reader, the fan-out."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from llm_client import EventType, Fanout, RedisEventLog, RoutingEvent, safe_token
from memory_worker.keys import Keys
from tests.support.routing_fakes import RecordingSink


def test_default_dedupe_key_and_severity() -> None:
    event = RoutingEvent(EventType.CIRCUIT_OPEN_EXHAUSTION, "memory_extraction")
    assert event.dedupe_key == "circuit_open_exhaustion:memory_extraction:-"
    assert event.severity == "error"
    targeted = RoutingEvent(EventType.ATTEMPT_FAILED, "embedding", target="embedder/embedder")
    assert targeted.dedupe_key == "attempt_failed:embedding:embedder/embedder"
    assert targeted.severity == "info"
    custom = RoutingEvent("runs_retired", "memory_extraction", dedupe="runs_retired:fleet")
    assert custom.dedupe_key == "runs_retired:fleet"
    assert RoutingEvent(EventType.ALL_ATTEMPTS_EXHAUSTED, "w").severity == "warn"
    assert RoutingEvent(EventType.ATTEMPT_FAILED, "w", severity="error").severity == "error"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("UPSTREAM_ERROR", "UPSTREAM_ERROR"),
        ("HTTP_503", "HTTP_503"),
        ("openrouter/meta-llama/llama-3.1-70b", "openrouter/meta-llama/llama-3.1-70b"),
        ("127.0.0.1/qwen2.5:14b", "127.0.0.1/qwen2.5:14b"),
        ("no slots available", None),
        ("line\nbreak", None),
        ("x" * 121, None),
        ("", None),
        (None, None),
        (503, "503"),
    ],
)
def test_safe_token(value: object, expected: str | None) -> None:
    assert safe_token(value) == expected


def test_free_text_never_enters_an_event() -> None:
    event = RoutingEvent(
        EventType.ATTEMPT_FAILED,
        "memory_extraction",
        target="farm/m",
        error_code="UPSTREAM_ERROR: Temporary failure in name resolution",
        context={"run_id": "r-1", "text": "hello, my password is hunter2"},
    )
    assert event.error_code is None
    assert event.context == {"run_id": "r-1"}


def test_stream_fields_round_trip() -> None:
    event = RoutingEvent(
        EventType.ALL_ATTEMPTS_EXHAUSTED,
        "memory_merge",
        target="a/b",
        reason="provider_unavailable",
        error_kind="BackendUnavailable",
        error_code="UPSTREAM_ERROR",
        counters={"failed_attempts": 3},
        context={"run_id": "r"},
        admin_actionable=False,
        at_ms=1234,
    )
    back = RoutingEvent.from_fields("1-0", event.to_fields())
    assert back.as_dict() == {**event.as_dict(), "id": "1-0"}


async def test_redis_log_is_bounded_and_read_newest_first(redis: Redis, key_prefix: str) -> None:
    keys = Keys(key_prefix)
    events = RedisEventLog(redis, keys, maxlen=50)
    for i in range(400):
        workflow = "embedding" if i % 2 else "memory_extraction"
        kind = EventType.ATTEMPT_FAILED if i % 3 else EventType.CIRCUIT_OPENED
        await events.emit(RoutingEvent(kind, workflow, counters={"i": i}, at_ms=i))
    length = await redis.xlen(keys.events)
    assert 50 <= length < 400  # MAXLEN ~ trims by whole stream nodes
    latest = await events.recent(limit=5)
    assert [e.counters["i"] for e in latest] == [399, 398, 397, 396, 395]
    assert all(e.id for e in latest)
    opened = await events.recent(limit=4, types=[EventType.CIRCUIT_OPENED], batch=3)
    assert [e.counters["i"] for e in opened] == [399, 396, 393, 390]
    embedding_opened = await events.recent(
        limit=3, types=["circuit_opened"], workflow="embedding", batch=2
    )
    assert [e.counters["i"] for e in embedding_opened] == [399, 393, 387]
    everything = await events.recent(limit=10_000, batch=7)
    assert len(everything) == length
    assert [e.counters["i"] for e in everything] == sorted(
        (e.counters["i"] for e in everything), reverse=True
    )


async def test_recent_on_an_empty_log(redis: Redis, key_prefix: str) -> None:
    assert await RedisEventLog(redis, Keys(key_prefix)).recent() == []


class Broken:
    async def emit(self, event: RoutingEvent) -> None:
        raise ConnectionError("redis went away")


class Stuck:
    async def emit(self, event: RoutingEvent) -> None:
        await asyncio.sleep(60)


async def test_fanout_survives_failing_and_slow_sinks() -> None:
    recorder = RecordingSink()
    fanout = Fanout(Broken(), Stuck(), recorder, timeout=0.1)
    event = RoutingEvent(EventType.NO_CANDIDATES, "embedding")
    await fanout.emit(event)
    assert recorder.events == [event]
    assert fanout.failures == {"Broken": 1, "Stuck": 1}


async def test_recent_events_as_json(redis: Redis, key_prefix: str) -> None:
    import json

    events = RedisEventLog(redis, Keys(key_prefix))
    await events.emit(RoutingEvent(EventType.ROUTE_UNAVAILABLE, "embedding"))
    await events.emit(RoutingEvent(EventType.NO_CANDIDATES, "memory_merge"))
    found = [e.as_dict() for e in await events.recent(workflow="embedding")]
    assert [e["type"] for e in found] == ["route_unavailable"]
    assert json.loads(json.dumps(found)) == found
