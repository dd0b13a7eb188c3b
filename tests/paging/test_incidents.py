"""§9: an outage that ends — the incident a page opens, and its one "resolved" page.

User story: "I was paged when the farm went down; I am told once, fleet-wide, when it is
back — how long it lasted, what it released, that it spent no attempt — and not told about
an outage that never was." Pure steps as tables and hypothesis, the Lua scripts against
their twins on random sequences, then the reporter with racing workers and faults.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio import Redis

from llm_client import EventType, RoutingEvent
from memory_worker.keys import Keys
from memory_worker.paging.incident import (
    RESOLVED,
    Counts,
    Incident,
    fleet_counts,
    open_step,
    render_resolved,
    resolve_step,
)
from memory_worker.paging.incident_store import IncidentStore
from memory_worker.paging.notifiers import LogNotifier, Notifier
from memory_worker.paging.policy import ReportConfig
from memory_worker.paging.reports import AdminReporter, page_counters, pending_pages
from memory_worker.storage.connections import awaited, client_from_url
from tests.support.logs import capture_logs

WF = "memory_extraction"
EMB = "embedding"
T0 = 1_700_000_000_000
ROUTES = (WF, EMB, "memory_merge")

# --- the pure steps --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counters", "expected"),
    [
        pytest.param({}, Counts(0, 0, 0), id="empty"),
        pytest.param(
            {"released:provider_unavailable": 4, "released:shutdown": 1, "completed": 9},
            Counts(5, 9, 0),
            id="releases-summed",
        ),
        pytest.param(
            {"failed:provider_timeout": 2, "failed:not_retryable": 1, "claimed:lease_expired": 3},
            Counts(0, 0, 6),
            id="spent-failures-and-lost-leases",
        ),
        pytest.param(
            {"claimed:queued": 50, "enqueue:enqueued": 50, "retired:worker_lost": 1},
            Counts(0, 0, 0),
            id="not-counted",
        ),
    ],
)
def test_fleet_counts(counters: dict[str, int], expected: Counts) -> None:
    assert fleet_counts(counters) == expected


C1 = Counts(1, 2, 3)
OPEN = Incident(T0, frozenset({WF}), C1)


@pytest.mark.parametrize(
    ("state", "routes", "expected"),
    [
        pytest.param(None, [], None, id="no-route-opens-nothing"),
        pytest.param(None, [WF], OPEN, id="first-page-opens"),
        pytest.param(OPEN, [EMB], Incident(T0, frozenset({WF, EMB}), C1), id="later-adds"),
        pytest.param(OPEN, [], OPEN, id="later-without-routes-keeps"),
        pytest.param(OPEN, [WF], OPEN, id="same-route-again"),
    ],
)
def test_open_step(state: Incident | None, routes: list[str], expected: Incident | None) -> None:
    now = T0 if state is None else T0 + 5_000
    assert open_step(state, now, routes, C1 if state is None else Counts(9, 9, 9)) == expected


@pytest.mark.parametrize(
    ("state", "open_now", "ends"),
    [
        pytest.param(None, [], False, id="no-incident"),
        pytest.param(OPEN, [WF], False, id="its-route-still-open"),
        pytest.param(OPEN, [WF, EMB], False, id="still-open-among-others"),
        pytest.param(OPEN, [EMB], True, id="another-route-open-only"),
        pytest.param(OPEN, [], True, id="all-closed"),
        pytest.param(Incident(T0, frozenset({WF, EMB})), [EMB], False, id="one-of-two-open"),
    ],
)
def test_resolve_step(state: Incident | None, open_now: list[str], ends: bool) -> None:
    assert resolve_step(state, open_now) is ends


COUNTS = st.builds(Counts, st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))


@given(start=COUNTS, now=COUNTS, lasted_ms=st.integers(0, 10**10))
def test_the_resolved_page_reports_what_the_counters_moved_during_the_incident(
    start: Counts, now: Counts, lasted_ms: int
) -> None:
    """Whatever the counters did (a counters hash reset by an operator included), the page
    reports what moved since the incident opened, never a negative count."""
    text = render_resolved(
        Incident(T0, frozenset({WF}), start), now_ms=T0 + lasted_ms, counts=now, waiting_runs=0
    )
    lines = text.splitlines()
    released, spent = now.released - start.released, now.spent - start.spent
    assert f"runs released during it: {max(released, 0)} (attempts refunded)" in lines
    assert f"attempts spent during it: {max(spent, 0)}" in lines
    assert f"runs completed during it: {max(now.completed - start.completed, 0)};" in text


def test_the_resolved_page_says_how_long_what_it_released_and_what_it_spent() -> None:
    incident = Incident(T0, frozenset({WF, "memory_merge"}), Counts(10, 100, 4))
    text = render_resolved(incident, now_ms=T0 + 32_000, counts=Counts(24, 103, 4), waiting_runs=11)
    lines = text.splitlines()
    assert lines[0] == f"memory-worker routing report: {RESOLVED}"
    assert (
        "resolved: every route that paged is closed again (memory_extraction, memory_merge)"
        in lines
    )
    assert any(line.startswith("lasted: 32s (since 2023-11-14 22:13:20 UTC") for line in lines)
    assert "runs released during it: 14 (attempts refunded)" in lines
    assert "attempts spent during it: 0" in lines
    assert "runs completed during it: 3; waiting now: 11 (draining)" in lines


def test_a_route_name_that_is_not_an_identifier_never_reaches_the_page() -> None:
    canary = "CANARY my secret plan: the wifi password is hunter2"
    incident = Incident(T0, frozenset({canary}))
    text = render_resolved(incident, now_ms=T0 + 1, counts=Counts(), waiting_runs=None)
    assert "CANARY" not in text
    assert "hunter2" not in text
    assert "waiting now: unknown" in text


# --- the scripts equal their twins -------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
async def test_the_incident_scripts_match_their_pure_twins(
    redis: Redis, key_prefix: str, seed: int
) -> None:
    rng = random.Random(seed)
    keys = Keys(key_prefix)
    store = IncidentStore(redis, keys, ttl_ms=600_000)
    state: Incident | None = None
    now = T0
    for step in range(80):
        now += rng.choice([0, 1, 500, 20_000])
        routes = rng.sample(ROUTES, rng.randint(0, 2))
        if rng.random() < 0.5:
            counts = Counts(rng.randint(0, 99), rng.randint(0, 99), rng.randint(0, 9))
            expected = open_step(state, now, routes, counts)
            opened = await store.open(now, routes, counts)
            assert opened is (state is None and expected is not None), step
            state = expected
        else:
            read = state if state is not None and rng.random() < 0.9 else Incident(now, frozenset())
            ends = resolve_step(read, routes) and read == state
            page = f"p{step}"
            resolved = await store.resolve(
                read, routes, now_ms=now, page_id=page, fields={"text": "resolved"}
            )
            assert resolved is ends, step
            if ends:
                state = None
                assert await redis.zscore(keys.admin_outbox, page) == now
        assert await store.read() == state, step


# --- the reporter ------------------------------------------------------------------------------


class Channel:
    external = True

    def __init__(self) -> None:
        self.name = "channel"
        self.pages: list[str] = []

    async def send(self, page: object) -> None:
        self.pages.append(page.text)  # type: ignore[attr-defined]


class Routes:
    """The open-routes lookup a test controls (``None``: the lookup fails)."""

    def __init__(self, *open_now: str) -> None:
        self.open: list[str] | None = list(open_now)

    async def __call__(self) -> Sequence[str]:
        if self.open is None:
            raise ConnectionError("breakers unreachable")
        return list(self.open)


def reporter_for(
    redis: Redis, key_prefix: str, routes: Routes, notifiers: Sequence[Notifier]
) -> AdminReporter:
    async def waiting() -> int:
        return 7

    return AdminReporter(
        redis,
        Keys(key_prefix),
        notifiers,
        ReportConfig(context_timeout_seconds=0.5),
        waiting_runs=waiting,
        open_routes=routes,
    )


def exhaustion(workflow: str = WF) -> RoutingEvent:
    return RoutingEvent(EventType.CIRCUIT_OPEN_EXHAUSTION, workflow)


CLOSED = RoutingEvent(EventType.CIRCUIT_CLOSED, WF, target="llm-a/m")


async def test_one_opening_and_one_resolved_page_across_racing_workers(
    redis: Redis, key_prefix: str, redis_url: str
) -> None:
    """Five workers, each on its own connection, see the outage and then the breaker close:
    the admins get exactly one opening and one resolved page."""
    routes = Routes(WF, "memory_merge")
    channel = Channel()
    clients = [client_from_url(redis_url) for _ in range(5)]
    keys = Keys(key_prefix)
    await awaited(
        redis.hset(keys.counters, mapping={"released:provider_unavailable": 3, "completed": 40})
    )
    try:
        workers = [reporter_for(c, key_prefix, routes, [channel]) for c in clients]
        outcomes = await asyncio.gather(*(w.observe(exhaustion()) for w in workers))
        assert sorted(outcomes) == ["queued"] + ["suppressed"] * 4
        assert await workers[0].incidents.read() is not None
        assert not await workers[1].resolve_if_closed()  # still open: nothing to say
        await awaited(redis.hset(keys.counters, mapping={"released:provider_unavailable": 15}))
        await awaited(redis.hincrby(keys.counters, "completed", 2))
        routes.open = []  # the probe succeeded: every breaker closed
        await asyncio.gather(*(w.observe(CLOSED) for w in workers for _ in range(3)))
        await asyncio.gather(*(w.resolve_if_closed() for w in workers))
        for worker in workers:
            await worker.deliver_due()
    finally:
        for client in clients:
            await client.aclose()
    opening, resolved = channel.pages
    assert opening.startswith("memory-worker routing report: circuit_open_exhaustion")
    assert resolved.startswith(f"memory-worker routing report: {RESOLVED}")
    assert "(memory_extraction, memory_merge)" in resolved
    assert "runs released during it: 12 (attempts refunded)" in resolved.splitlines()
    assert "attempts spent during it: 0" in resolved.splitlines()
    assert "runs completed during it: 2; waiting now: 7 (draining)" in resolved.splitlines()
    counters = await page_counters(redis, keys)
    assert (counters["queued"], counters["resolved"], counters["sent"]) == (2, 1, 2)


async def test_a_page_about_no_open_route_opens_no_incident(redis: Redis, key_prefix: str) -> None:
    routes = Routes()  # nothing open: a retirement, a capacity wait on a healthy route
    channel = Channel()
    reporter = reporter_for(redis, key_prefix, routes, [channel])
    retired = RoutingEvent(EventType.RUNS_RETIRED, WF, counters={"runs": 1})
    assert await reporter.observe(retired) == "queued"
    assert await reporter.observe(RoutingEvent(EventType.CAPACITY_WAIT_TIMEOUT, WF)) == "queued"
    assert await reporter.incidents.read() is None
    assert not await reporter.resolve_if_closed()
    await reporter.deliver_due()
    assert len(channel.pages) == 2  # no resolved page for an outage that never was


async def test_an_incident_with_two_routes_ends_when_the_last_one_closes(
    redis: Redis, key_prefix: str
) -> None:
    routes = Routes(WF)
    channel = Channel()
    reporter = reporter_for(redis, key_prefix, routes, [channel])
    assert await reporter.observe(exhaustion(WF)) == "queued"
    routes.open = [WF, EMB]
    assert await reporter.observe(exhaustion(EMB)) == "queued"  # another dedupe key
    routes.open = [EMB]
    assert not await reporter.resolve_if_closed()
    routes.open = []
    assert await reporter.resolve_if_closed()
    assert not await reporter.resolve_if_closed()  # once
    await reporter.deliver_due()
    assert [p.splitlines()[0].rsplit(" ", 1)[1] for p in channel.pages] == [
        "circuit_open_exhaustion",
        "circuit_open_exhaustion",
        RESOLVED,
    ]
    assert "(embedding, memory_extraction)" in channel.pages[2]


async def test_an_unknown_route_state_keeps_the_incident_open(
    redis: Redis, key_prefix: str
) -> None:
    """Fault: the breakers cannot be read when a breaker closes — no resolved page on a
    guess; it goes out at the next check that can tell."""
    routes = Routes(WF)
    channel = Channel()
    reporter = reporter_for(redis, key_prefix, routes, [channel])
    assert await reporter.observe(exhaustion()) == "queued"
    routes.open = None
    assert await reporter.observe(CLOSED) == "none"
    assert await reporter.incidents.read() is not None
    routes.open = []
    assert await reporter.resolve_if_closed()


async def test_without_a_channel_the_resolved_page_is_logged_and_counted(
    redis: Redis, key_prefix: str
) -> None:
    routes = Routes(WF)
    reporter = reporter_for(redis, key_prefix, routes, [LogNotifier()])
    with capture_logs() as logs:
        assert await reporter.observe(exhaustion()) == "not_configured"
        routes.open = []
        await reporter.observe(CLOSED)
    assert await pending_pages(redis, Keys(key_prefix)) == 0
    counters = await page_counters(redis, Keys(key_prefix))
    assert (counters["not_configured"], counters["resolved"], counters["queued"]) == (2, 1, 0)
    texts = [e.get("text", "") for e in logs if e.get("event") == "admin.page_not_configured"]
    assert len(texts) == 2
    assert texts[1].startswith(f"memory-worker routing report: {RESOLVED}")


async def test_the_delivery_loop_ends_an_incident_no_event_told_it_about(
    redis: Redis, key_prefix: str
) -> None:
    """A breaker reset by an operator (or closed in another process) emits nothing here:
    the loop's periodic check still sends the resolved page."""
    routes = Routes(WF)
    channel = Channel()
    reporter = reporter_for(redis, key_prefix, routes, [channel])
    reporter.config = ReportConfig(deliver_interval_seconds=0.02, resolve_check_seconds=0.05)
    assert await reporter.observe(exhaustion()) == "queued"
    stop = asyncio.Event()
    loop = asyncio.create_task(reporter.run(stop))
    try:
        routes.open = []
        deadline = time.monotonic() + 5
        while len(channel.pages) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    finally:
        stop.set()
        await asyncio.wait_for(loop, timeout=2)
    assert len(channel.pages) == 2
    assert channel.pages[1].startswith(f"memory-worker routing report: {RESOLVED}")


async def test_a_closed_breaker_with_redis_gone_never_raises(key_prefix: str) -> None:
    broken = client_from_url("redis://127.0.0.1:1", socket_connect_timeout=0.2)
    reporter = reporter_for(broken, key_prefix, Routes(), [Channel()])
    await asyncio.wait_for(reporter.emit(CLOSED), timeout=5)
    assert reporter.enqueue_failures == 1  # counted, logged, never the pipeline's problem
    await broken.aclose()


async def test_a_page_still_goes_out_when_its_incident_cannot_be_recorded(
    redis: Redis, key_prefix: str
) -> None:
    """Fault: the counters the incident starts from cannot be read (WRONGTYPE here, a store
    error in life): the opening page is queued and sent all the same, the failure logged."""
    keys = Keys(key_prefix)
    await awaited(redis.set(keys.counters, "not-a-hash"))
    channel = Channel()
    reporter = reporter_for(redis, key_prefix, Routes(WF), [channel])
    with capture_logs() as logs:
        assert await reporter.observe(exhaustion()) == "queued"
    assert any(e.get("event") == "admin.incident_open_failed" for e in logs)
    assert await reporter.incidents.read() is None
    await reporter.deliver_due()
    assert len(channel.pages) == 1
