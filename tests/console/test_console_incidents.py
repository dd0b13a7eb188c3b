"""The events page groups an outage into one incident and collapses its repeated probes into
counted lines (§15).

User story: "a four-minute outage left ~100 events for one run, six per probe; the events
page showed them row by row". Now: one incident per outage (events less than
``INCIDENT_GAP_MS`` apart), one line per kind of event with its count, the worst severity
and whether it paged. The grouping is a pure function tested on a synthetic outage; the page
is read over HTTP from a real event stream.
"""

from __future__ import annotations

import re
from typing import Any

from llm_client import EventType, RedisEventLog, RoutingEvent
from memory_worker.console.data import INCIDENT_GAP_MS, TimelineItem, incidents
from memory_worker.keys import Keys
from memory_worker.paging.policy import page_decision
from memory_worker.settings import Settings
from tests.support.console import MakeClient
from tests.support.console import make_client as make_client  # the fixture

WF, A, B = "memory_extraction", "llm-openai/memory-extractor", "llm-backup/memory-extractor"
T0 = 1_800_000_000_000


def probe(at_ms: int, *, first: bool) -> list[RoutingEvent]:
    """What one probe of a fully open route leaves: six events."""
    ev = [
        RoutingEvent(type=EventType.FAILOPEN_PROBE, workflow=WF, target=A, at_ms=at_ms),
        RoutingEvent(
            type=EventType.ATTEMPT_FAILED,
            workflow=WF,
            target=A,
            reason="provider_unavailable",
            error_code="UPSTREAM_ERROR",
            at_ms=at_ms + 1,
        ),
        RoutingEvent(type=EventType.CIRCUIT_OPENED, workflow=WF, target=A, at_ms=at_ms + 2),
        RoutingEvent(
            type=EventType.ATTEMPT_FAILED,
            workflow=WF,
            target=B,
            reason="provider_unavailable",
            error_code="UPSTREAM_ERROR",
            at_ms=at_ms + 3,
        ),
        RoutingEvent(type=EventType.ALL_ATTEMPTS_EXHAUSTED, workflow=WF, at_ms=at_ms + 4),
        RoutingEvent(
            type=EventType.CIRCUIT_OPEN_EXHAUSTION,
            workflow=WF,
            severity="error" if first else "warn",
            at_ms=at_ms + 5,
        ),
    ]
    return ev


def outage(start_ms: int, probes: int = 16) -> list[RoutingEvent]:
    """Four minutes of probes every 15 s, then the breaker closes."""
    events = [e for n in range(probes) for e in probe(start_ms + n * 15_000, first=n == 0)]
    closed = RoutingEvent(
        type=EventType.CIRCUIT_CLOSED, workflow=WF, target=A, at_ms=start_ms + probes * 15_000
    )
    return [*events, closed]


def timeline(events: list[RoutingEvent]) -> list[TimelineItem]:
    newest_first = sorted(events, key=lambda e: e.at_ms, reverse=True)
    return [TimelineItem(e, page_decision(e)) for e in newest_first]


def test_an_outage_is_one_incident_with_one_counted_line_per_kind_of_event() -> None:
    audit = RoutingEvent(type="console_breaker_reset", workflow="console", at_ms=T0 - 3_600_000)
    later = outage(T0 + 3_600_000, probes=2)
    found = incidents(timeline([audit, *outage(T0), *later]))
    assert [i.events for i in found] == [13, 97, 1]  # newest first
    four_minutes = found[1]
    assert (four_minutes.start_ms, four_minutes.end_ms) == (T0, T0 + 240_000)
    assert four_minutes.recovered
    assert four_minutes.pages
    counts = {(line.latest.type, line.latest.target): line.count for line in four_minutes.lines}
    assert counts == {
        (EventType.CIRCUIT_CLOSED, A): 1,
        (EventType.CIRCUIT_OPEN_EXHAUSTION, None): 16,
        (EventType.ALL_ATTEMPTS_EXHAUSTED, None): 16,
        (EventType.ATTEMPT_FAILED, B): 16,
        (EventType.CIRCUIT_OPENED, A): 16,
        (EventType.ATTEMPT_FAILED, A): 16,
        (EventType.FAILOPEN_PROBE, A): 16,
    }
    assert sum(line.count for line in four_minutes.lines) == four_minutes.events
    exhaustion = next(
        line for line in four_minutes.lines if line.latest.type == EventType.CIRCUIT_OPEN_EXHAUSTION
    )
    assert exhaustion.severity == "error"  # the first one paged; the repeats were warnings
    assert exhaustion.first_ms == T0 + 5
    assert exhaustion.latest.at_ms == T0 + 15 * 15_000 + 5
    assert found[2].lines[0].latest.type == "console_breaker_reset"


def test_events_further_apart_than_the_gap_are_two_incidents() -> None:
    one = RoutingEvent(type=EventType.CIRCUIT_OPENED, workflow=WF, target=A, at_ms=T0)
    near = RoutingEvent(
        type=EventType.CIRCUIT_OPENED, workflow=WF, target=A, at_ms=T0 + INCIDENT_GAP_MS
    )
    far = RoutingEvent(
        type=EventType.CIRCUIT_OPENED, workflow=WF, target=A, at_ms=T0 + 2 * INCIDENT_GAP_MS + 1
    )
    assert [i.events for i in incidents(timeline([one, near, far]))] == [1, 2]
    assert incidents([]) == []


async def test_the_events_page_shows_the_outage_as_one_incident(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    log = RedisEventLog(redis, Keys(settings.key_prefix))
    for event in outage(T0):
        await log.emit(event)
    body = await (await (await make_client(settings)).get("/events")).text()
    sections = re.findall(r'<section class="incident" data-events="(\d+)">', body)
    assert sections == ["97"]
    rows = re.findall(r'<li class="sev-(\w+)" data-type="(\w+)" data-count="(\d+)">', body)
    assert len(rows) == 7  # not 97
    assert ("error", "circuit_open_exhaustion", "16") in rows
    assert "×16" in body
    assert "recovered" in body
