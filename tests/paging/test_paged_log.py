"""An outage's repeated probes log at WARNING once it has paged (§9, §11): ERROR is for what
needs a person.

User story: "during a four-minute outage every probe found every target open; the log had
one ERROR (the page), not one per probe". The admin reporter decides first (its fleet-wide
dedup window, in the real Lua script on a real Valkey); the event stream and its log line
follow its verdict. Both with a channel configured and with only the log as the channel;
the cooldown's end pages (and logs ERROR) again; a retirement is never quieted.
"""

from __future__ import annotations

from typing import Any

import pytest

from llm_client import EventType, Fanout, RedisEventLog, RoutingEvent
from memory_worker.keys import Keys
from memory_worker.paging.notifiers import Notifier, Page
from memory_worker.paging.policy import ReportConfig
from memory_worker.paging.reports import AdminReporter, PagedLog
from memory_worker.settings import Settings
from memory_worker.wiring import build_routing
from tests.support.logs import capture_logs

WF = "memory_extraction"


class Channel:
    """A channel that reaches a human (kept in memory)."""

    name = "test"
    external = True

    def __init__(self) -> None:
        self.pages: list[Page] = []

    async def send(self, page: Page) -> None:
        self.pages.append(page)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def exhaustion() -> RoutingEvent:
    return RoutingEvent(
        type=EventType.CIRCUIT_OPEN_EXHAUSTION, workflow=WF, counters={"targets": 2}
    )


def _sink(redis: Any, prefix: str, notifiers: list[Notifier], clock: Clock) -> PagedLog:
    keys = Keys(prefix)
    config = ReportConfig(cooldown_seconds=600, context_timeout_seconds=0.5)
    reporter = AdminReporter(redis, keys, notifiers, config, clock=clock)
    return PagedLog(RedisEventLog(redis, keys), reporter)


def _levels(events: list[dict[str, Any]], name: str) -> list[str]:
    return [e["log_level"] for e in events if e["event"] == name]


@pytest.mark.parametrize("channel", [True, False], ids=["telegram-like", "log-only"])
async def test_an_outages_repeated_probes_log_warning_after_the_first_page(
    redis: Any, key_prefix: str, channel: bool
) -> None:
    clock = Clock()
    sink = _sink(redis, key_prefix, [Channel()] if channel else [], clock)
    with capture_logs() as logged:
        for _ in range(16):  # four minutes of probes, one per 15 s
            await sink.emit(exhaustion())
            clock.now += 15
    assert _levels(logged, "routing.circuit_open_exhaustion") == ["error"] + ["warning"] * 15
    stored = await sink.events.recent(limit=50)  # type: ignore[attr-defined]
    assert [e.severity for e in reversed(stored)] == ["error"] + ["warn"] * 15
    assert all(e.context.get("page") == "repeat" for e in stored[:-1])
    assert "page" not in stored[-1].context
    # the cooldown ends with the outage still on: the reminder pages, and is an ERROR again
    clock.now += 600
    with capture_logs() as logged:
        await sink.emit(exhaustion())
    assert _levels(logged, "routing.circuit_open_exhaustion") == ["error"]


async def test_retirements_are_never_quieted(redis: Any, key_prefix: str) -> None:
    clock = Clock()
    sink = _sink(redis, key_prefix, [Channel()], clock)
    retired = RoutingEvent(type=EventType.RUNS_RETIRED, workflow=WF, severity="error")
    with capture_logs() as logged:
        for _ in range(3):
            await sink.emit(retired)
    assert _levels(logged, "routing.runs_retired") == ["error"] * 3


async def test_the_workers_routing_puts_the_event_log_behind_the_reporter(
    settings: Settings, redis: Any
) -> None:
    routing = build_routing(settings, redis, require_secrets=False)
    try:
        assert isinstance(routing.events, Fanout)
        (paged,) = [s for s in routing.events.sinks if isinstance(s, PagedLog)]
        assert isinstance(paged.events, RedisEventLog)
        assert paged.reporter is routing.reporter
        assert routing.reporter not in routing.events.sinks  # asked once, by the PagedLog
    finally:
        await routing.aclose()
