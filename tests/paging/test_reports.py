"""§9 admin reports: paging rules, fleet-wide dedup, the page body, the outbox and its delivery."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence

import httpx
import pytest
from redis.asyncio import Redis

from llm_client import BreakerView, Circuit, EventType, RoutingEvent
from memory_worker.keys import Keys
from memory_worker.paging.notifiers import LogNotifier, Notifier, TelegramNotifier, WebhookNotifier
from memory_worker.paging.policy import (
    DedupState,
    ReportConfig,
    dedup_step,
    delivery_backoff,
    open_workflows,
    page_decision,
    render_page,
)
from memory_worker.paging.reports import AdminReporter, page_counters, pending_pages
from memory_worker.storage.connections import client_from_url
from tests.support.admin_fakes import FakeTelegram

TOKEN = "987654:bot-token-CANARY"
WF = "memory_extraction"
T0 = 1_700_000_000_000


def ev(event_type: str, **fields: object) -> RoutingEvent:
    return RoutingEvent(event_type, WF, **fields)  # type: ignore[arg-type]


# --- paging decision -----------------------------------------------------------------------

DECISION_ROWS = [
    pytest.param(ev(EventType.CIRCUIT_OPEN_EXHAUSTION), True, id="exhaustion"),
    pytest.param(ev(EventType.ROUTE_UNAVAILABLE), True, id="route-unavailable"),
    pytest.param(ev(EventType.NO_CANDIDATES), True, id="no-candidates"),
    pytest.param(ev(EventType.CAPACITY_WAIT_TIMEOUT), True, id="capacity-wait-timeout"),
    pytest.param(ev(EventType.RUNS_RETIRED, counters={"runs": 3}), True, id="runs-retired"),
    pytest.param(
        ev(EventType.ALL_ATTEMPTS_EXHAUSTED, counters={"failed_attempts": 2}), True, id="multi"
    ),
    pytest.param(
        ev(EventType.ALL_ATTEMPTS_EXHAUSTED, counters={"failed_attempts": 1}), False, id="single"
    ),
    pytest.param(ev(EventType.ALL_ATTEMPTS_EXHAUSTED), False, id="exhausted-no-count"),
    pytest.param(
        ev(
            EventType.ALL_ATTEMPTS_EXHAUSTED, counters={"failed_attempts": 1}, admin_actionable=True
        ),
        True,
        id="single-forced",
    ),
    pytest.param(
        ev(EventType.CIRCUIT_OPEN_EXHAUSTION, admin_actionable=False), False, id="opted-out"
    ),
    pytest.param(ev(EventType.ATTEMPT_FAILED), False, id="attempt-failed"),
    pytest.param(ev(EventType.CIRCUIT_OPENED), False, id="circuit-opened"),
    pytest.param(ev(EventType.CIRCUIT_CLOSED), False, id="circuit-closed"),
    pytest.param(ev(EventType.FAILOPEN_PROBE), False, id="failopen-probe"),
]


@pytest.mark.parametrize(("event", "expected"), DECISION_ROWS)
def test_page_decision(event: RoutingEvent, expected: bool) -> None:
    assert page_decision(event) is expected


# --- dedup ---------------------------------------------------------------------------------


def test_dedup_pages_first_counts_repeats_and_reports_them_next_window() -> None:
    cooldown = 600_000
    state, first = dedup_step(None, T0, cooldown)
    assert (first.page, first.suppressed_repeats, first.first_seen_ms) == (True, 0, T0)
    for i in range(1, 6):
        state, repeat = dedup_step(state, T0 + i * 1000, cooldown)
        assert not repeat.page
    state, edge = dedup_step(state, T0 + cooldown - 1, cooldown)
    assert not edge.page
    state, next_page = dedup_step(state, T0 + cooldown, cooldown)
    assert (next_page.page, next_page.suppressed_repeats, next_page.first_seen_ms) == (True, 6, T0)
    assert state == DedupState(T0 + 2 * cooldown, 0, T0)


@pytest.mark.parametrize(
    ("attempts", "seconds"), [(1, 5), (2, 10), (3, 20), (7, 320), (8, 600), (100, 600)]
)
def test_delivery_backoff(attempts: int, seconds: float) -> None:
    assert delivery_backoff(attempts, ReportConfig()) == seconds


@pytest.mark.parametrize("seed", range(6))
async def test_lua_dedup_matches_the_pure_step(redis: Redis, key_prefix: str, seed: int) -> None:
    rng = random.Random(seed)
    keys = Keys(key_prefix)
    cooldown = rng.choice([1000, 5000])
    reporter = make_reporter(redis, key_prefix, [Always()], cooldown_s=cooldown / 1000)
    state: DedupState | None = None
    now = T0
    for _ in range(60):
        now += rng.choice([0, 10, 300, 900, 2500])
        state, expected = dedup_step(state, now, cooldown)
        page, reported, first = await reporter._dedup(
            keys=[keys.admin_dedup("k"), keys.admin_counters], args=[now, cooldown]
        )
        assert (bool(page), int(reported), int(first)) == (
            expected.page,
            expected.suppressed_repeats,
            expected.first_seen_ms,
        )


# --- the page ------------------------------------------------------------------------------


def test_render_page_aggregates_the_incident() -> None:
    views = [
        BreakerView("farm/a", Circuit.OPEN, 6, 2, T0 - 60_000, 54.2, False, 6, 6, 5),
        BreakerView("hosted/b", Circuit.HALF_OPEN, 5, 1, T0 - 30_000, 0, True, 5, 5, 3),
    ]
    text = render_page(
        ev(
            EventType.CIRCUIT_OPEN_EXHAUSTION,
            counters={"targets": 2},
            context={"run_id": "r-9"},
        ),
        now_ms=T0 + 720_000,
        first_seen_ms=T0,
        suppressed_repeats=41,
        breakers=views,
        waiting_runs=1234,
    )
    assert text.startswith("memory-worker routing report: circuit_open_exhaustion\n")
    for fragment in (
        "workflow: memory_extraction",
        "counts: targets=2",
        "farm/a: open, trips 2",
        "cooldown 54s left",
        "hosted/b: half_open, trips 1",
        "probe in flight",
        "6 consecutive failures",
        "since: 2023-11-14 22:13:20 UTC (12m ago, first event of this incident)",
        "runs waiting: 1234",
        "suppressed repeats: 41",
        "context: run_id=r-9",
    ):
        assert fragment in text


def test_render_page_without_context_says_unknown() -> None:
    text = render_page(
        ev(EventType.ROUTE_UNAVAILABLE),
        now_ms=T0,
        first_seen_ms=T0,
        suppressed_repeats=0,
        breakers=None,
        waiting_runs=None,
    )
    assert "breakers: unknown" in text
    assert "runs waiting: unknown" in text
    assert "suppressed repeats" not in text


def view_of(target: str, circuit: Circuit) -> BreakerView:
    return BreakerView(target, circuit, 5, 1, T0, 0, False, 5, 5, 1)


OPEN_ROWS = [
    pytest.param({"wf": [Circuit.OPEN, Circuit.HALF_OPEN]}, ["wf"], id="all-targets-open"),
    pytest.param({"wf": [Circuit.OPEN, Circuit.CLOSED]}, [], id="one-closed-target"),
    pytest.param({"wf": []}, [], id="no-targets-is-not-open"),
    pytest.param(
        {"embedding": [Circuit.OPEN], WF: [Circuit.OPEN, Circuit.OPEN], "memory_merge": []},
        ["embedding", WF],
        id="farm-wide",
    ),
]


@pytest.mark.parametrize(("states", "expected"), OPEN_ROWS)
def test_open_workflows(states: dict[str, list[Circuit]], expected: list[str]) -> None:
    routes = {
        wf: [view_of(f"{wf}/t{i}", c) for i, c in enumerate(circuits)]
        for wf, circuits in states.items()
    }
    assert open_workflows(routes) == expected


@pytest.mark.parametrize(
    ("open_routes", "line"),
    [
        pytest.param(["embedding", WF], "open routes: embedding, memory_extraction", id="named"),
        pytest.param([], "open routes: none", id="none"),
        pytest.param("unknown", "open routes: unknown", id="unknown"),
    ],
)
def test_render_page_names_every_open_route(open_routes: list[str] | str, line: str) -> None:
    text = render_page(
        RoutingEvent(EventType.CIRCUIT_OPEN_EXHAUSTION, "embedding"),
        now_ms=T0,
        first_seen_ms=T0,
        suppressed_repeats=0,
        breakers=[],
        waiting_runs=0,
        open_routes=open_routes,
    )
    assert line in text.splitlines()


async def test_an_embedding_page_names_extraction_when_its_route_is_open_too(
    redis: Redis, key_prefix: str
) -> None:
    """§6: whichever route pages first, the page says extraction is down too."""
    from llm_client import BreakerConfig, BreakerStore, Outcome, RouteDefaults
    from llm_client._routing.routes import parse_routes
    from memory_worker.paging.reports import route_breakers, route_open_workflows

    def target(service: str) -> dict[str, str]:
        return {"transport": "discovery", "service": service, "model": service}

    routes = parse_routes(
        {
            "routes": {
                WF: {"targets": [target("llm-a"), target("llm-b")]},
                "embedding": {"targets": [{**target("embedder"), "endpoint": "encode"}]},
                "memory_merge": {"targets": [target("llm-b"), target("llm-c")]},
            }
        },
        RouteDefaults(),
    )
    store = BreakerStore(redis, Keys(key_prefix), BreakerConfig(failure_threshold=1))
    for target_id in ("llm-a/llm-a", "llm-b/llm-b", "embedder/embedder"):
        permit = await store.acquire(target_id, lease_seconds=30)
        assert permit is not None
        await store.record(target_id, permit, Outcome.FAILURE)
    channel = Always()
    reporter = AdminReporter(
        redis,
        Keys(key_prefix),
        [channel],
        breakers=route_breakers(routes, store),
        open_routes=route_open_workflows(routes, store),
    )
    assert await reporter.observe(RoutingEvent(EventType.CIRCUIT_OPEN_EXHAUSTION, "embedding"))
    await reporter.deliver_due()
    (page,) = channel.pages
    assert "open routes: memory_extraction, embedding" in page.splitlines()  # merge has llm-c


# --- the reporter --------------------------------------------------------------------------


class Always:
    """An external channel that records pages."""

    external = True

    def __init__(self, name: str = "always") -> None:
        self.name = name
        self.pages: list[str] = []

    async def send(self, page: object) -> None:
        self.pages.append(page.text)  # type: ignore[attr-defined]


def make_reporter(
    redis: Redis,
    key_prefix: str,
    notifiers: Sequence[Notifier],
    *,
    cooldown_s: float = 600.0,
    max_attempts: int = 8,
    waiting: int | None = None,
    clock: Callable[[], float] = time.time,
) -> AdminReporter:
    async def waiting_runs() -> int:
        assert waiting is not None
        return waiting

    return AdminReporter(
        redis,
        Keys(key_prefix),
        notifiers,
        ReportConfig(
            cooldown_seconds=cooldown_s, max_attempts=max_attempts, backoff_base_seconds=1
        ),
        waiting_runs=waiting_runs if waiting is not None else None,
        clock=clock,
    )


async def test_a_page_goes_out_when_its_context_lookups_fail_or_hang(
    redis: Redis, key_prefix: str
) -> None:
    """Fault: the store behind a page's context is gone (raises) or stuck (never answers).

    The page still goes out, each missing part says "unknown", and a stuck lookup costs at most
    the context timeout, never the page."""
    never = asyncio.Event()

    async def broken(workflow: str) -> Sequence[BreakerView]:
        raise ConnectionError("redis is gone")

    async def stuck() -> int:
        await never.wait()
        return 0

    async def stuck_routes() -> Sequence[str]:
        await never.wait()
        return []

    channel = Always()
    reporter = AdminReporter(
        redis,
        Keys(key_prefix),
        [channel],
        ReportConfig(context_timeout_seconds=0.05),
        breakers=broken,
        waiting_runs=stuck,
        open_routes=stuck_routes,
    )
    assert await reporter.observe(ev(EventType.CIRCUIT_OPEN_EXHAUSTION))
    started = time.monotonic()
    await reporter.deliver_due()
    (page,) = channel.pages
    assert "breakers: unknown" in page
    assert "runs waiting: unknown" in page
    assert "open routes: unknown" in page.splitlines()
    assert time.monotonic() - started < 2.0  # two stuck lookups, 0.05 s each: not the page's loss


async def test_one_page_per_cooldown_across_the_fleet(
    redis: Redis, key_prefix: str, telegram: FakeTelegram
) -> None:
    async with httpx.AsyncClient() as http:
        channels: list[Notifier] = [
            TelegramNotifier(api_base=telegram.base_url, token=TOKEN, chat_id=chat, http=http)
            for chat in (11, 22)
        ]
        workers = [make_reporter(redis, key_prefix, channels, waiting=7) for _ in range(5)]
        event = ev(EventType.CIRCUIT_OPEN_EXHAUSTION)
        outcomes = await asyncio.gather(*(w.observe(event) for w in workers for _ in range(10)))
        assert outcomes.count("queued") == 1
        assert outcomes.count("suppressed") == 49
        assert await pending_pages(redis, Keys(key_prefix)) == 1
        stats = await asyncio.gather(*(w.deliver_due() for w in workers))
        assert sum(s.sent for s in stats) == 1
    assert sorted(m.json["chat_id"] for m in telegram.messages()) == [11, 22]
    text = telegram.messages()[0].json["text"]
    assert "circuit_open_exhaustion" in text
    assert "runs waiting: 7" in text
    assert await page_counters(redis, Keys(key_prefix)) == {
        "queued": 1,
        "sent": 1,
        "suppressed": 49,
        "failed": 0,
        "not_configured": 0,
    }
    assert await pending_pages(redis, Keys(key_prefix)) == 0


async def test_next_page_after_the_window_reports_suppressed_repeats(
    redis: Redis, key_prefix: str
) -> None:
    channel = Always()
    now = [time.time()]  # injected time: the window passes without sleeping
    reporter = make_reporter(redis, key_prefix, [channel], cooldown_s=0.3, clock=lambda: now[0])
    event = ev(EventType.NO_CANDIDATES)
    assert await reporter.observe(event) == "queued"
    for _ in range(4):
        assert await reporter.observe(event) == "suppressed"
    other = ev(EventType.ROUTE_UNAVAILABLE)  # another dedupe key pages on its own
    assert await reporter.observe(other) == "queued"
    now[0] += 0.29
    assert await reporter.observe(event) == "suppressed"  # still inside the window
    now[0] += 0.06
    assert await reporter.observe(event) == "queued"
    await reporter.deliver_due()
    assert len(channel.pages) == 3
    later = next(p for p in channel.pages if "suppressed repeats: 5" in p)
    assert "no_candidates" in later


async def test_without_an_external_channel_the_log_pages_once_per_cooldown(
    redis: Redis, key_prefix: str
) -> None:
    unconfigured = make_reporter(redis, key_prefix, [LogNotifier()])
    event = ev(EventType.CAPACITY_WAIT_TIMEOUT)
    assert await unconfigured.observe(event) == "not_configured"
    assert await unconfigured.observe(event) == "suppressed"  # a 30 h outage logs once per window
    assert await pending_pages(redis, Keys(key_prefix)) == 0
    configured = make_reporter(redis, key_prefix, [Always()])
    assert await configured.observe(event) == "queued"  # the channel's own window was free
    counters = await page_counters(redis, Keys(key_prefix))
    assert (counters["not_configured"], counters["queued"]) == (1, 1)


async def test_non_actionable_events_are_not_paged(redis: Redis, key_prefix: str) -> None:
    reporter = make_reporter(redis, key_prefix, [Always()])
    single = ev(EventType.ALL_ATTEMPTS_EXHAUSTED, counters={"failed_attempts": 1})
    assert await reporter.observe(single) == "none"
    assert await reporter.observe(ev(EventType.ATTEMPT_FAILED)) == "none"
    assert await pending_pages(redis, Keys(key_prefix)) == 0


async def test_failed_delivery_is_retried_with_backoff_only_for_failed_channels(
    redis: Redis, key_prefix: str, telegram: FakeTelegram
) -> None:
    telegram.hook_failures.extend([500, 500])
    async with httpx.AsyncClient() as http:
        channels: list[Notifier] = [
            TelegramNotifier(api_base=telegram.base_url, token=TOKEN, chat_id=1, http=http),
            WebhookNotifier(f"{telegram.base_url}/hook", http=http),
        ]
        reporter = make_reporter(redis, key_prefix, channels)
        await reporter.observe(ev(EventType.ROUTE_UNAVAILABLE))
        now = reporter.now_ms()
        first = await reporter.deliver_due(now_ms=now)
        assert (first.sent, first.retried) == (0, 1)
        early = await reporter.deliver_due(now_ms=now + 900)  # backoff 1 s not over yet
        assert (early.sent, early.retried) == (0, 0)
        second = await reporter.deliver_due(now_ms=now + 1000)
        assert (second.sent, second.retried) == (0, 1)
        third = await reporter.deliver_due(now_ms=now + 1000 + 2000)  # then 2 s
        assert third.sent == 1
    assert len(telegram.messages()) == 1  # telegram succeeded once and was not re-sent
    assert len(telegram.hooks()) == 3
    counters = await page_counters(redis, Keys(key_prefix))
    assert (counters["sent"], counters["delivery_errors"], counters["failed"]) == (1, 2, 0)


async def test_delivery_gives_up_after_max_attempts(redis: Redis, key_prefix: str) -> None:
    async with httpx.AsyncClient() as http:
        dead = TelegramNotifier(api_base="http://127.0.0.1:1", token=TOKEN, chat_id=1, http=http)
        reporter = make_reporter(redis, key_prefix, [dead], max_attempts=3)
        await reporter.observe(ev(EventType.ROUTE_UNAVAILABLE))
        now = reporter.now_ms()
        results = [await reporter.deliver_due(now_ms=now + i * 3_600_000) for i in range(4)]
    assert [(r.retried, r.dropped) for r in results] == [(1, 0), (1, 0), (0, 1), (0, 0)]
    assert (await page_counters(redis, Keys(key_prefix)))["failed"] == 1
    assert await pending_pages(redis, Keys(key_prefix)) == 0


async def test_telegram_retry_after_is_honoured(
    redis: Redis, key_prefix: str, telegram: FakeTelegram
) -> None:
    telegram.failures.append((429, {"ok": False, "parameters": {"retry_after": 30}}))
    async with httpx.AsyncClient() as http:
        channel = TelegramNotifier(api_base=telegram.base_url, token=TOKEN, chat_id=1, http=http)
        reporter = make_reporter(redis, key_prefix, [channel])
        await reporter.observe(ev(EventType.ROUTE_UNAVAILABLE))
        now = reporter.now_ms()
        await reporter.deliver_due(now_ms=now)
        assert (await reporter.deliver_due(now_ms=now + 29_000)).sent == 0
        assert (await reporter.deliver_due(now_ms=now + 30_000)).sent == 1


async def test_a_crashed_deliverer_is_covered_by_the_claim_lease(
    redis: Redis, key_prefix: str
) -> None:
    channel = Always()
    reporter = make_reporter(redis, key_prefix, [channel])
    await reporter.observe(ev(EventType.ROUTE_UNAVAILABLE))
    now = reporter.now_ms()
    keys = Keys(key_prefix)
    claimed = await reporter._claim(
        keys=[keys.admin_outbox], args=[now, 60_000, 10]
    )  # then "crash"
    assert len(claimed) == 1
    assert (await reporter.deliver_due(now_ms=now + 1000)).sent == 0  # hidden by the lease
    assert (await reporter.deliver_due(now_ms=now + 60_000)).sent == 1
    assert len(channel.pages) == 1


async def test_emit_never_raises_or_blocks_when_redis_is_gone(key_prefix: str) -> None:
    broken = client_from_url("redis://127.0.0.1:1", socket_connect_timeout=0.2)
    reporter = make_reporter(broken, key_prefix, [Always()])
    await asyncio.wait_for(reporter.emit(ev(EventType.CIRCUIT_OPEN_EXHAUSTION)), timeout=5)
    await broken.aclose()


async def test_delivery_loop_runs_until_stopped(redis: Redis, key_prefix: str) -> None:
    channel = Always()
    reporter = make_reporter(redis, key_prefix, [channel])
    reporter.config = ReportConfig(deliver_interval_seconds=0.05)
    stop = asyncio.Event()
    loop = asyncio.create_task(reporter.run(stop))
    await reporter.emit(ev(EventType.ROUTE_UNAVAILABLE))
    for _ in range(100):
        if channel.pages:
            break
        await asyncio.sleep(0.02)
    stop.set()
    await asyncio.wait_for(loop, timeout=2)
    assert len(channel.pages) == 1


async def test_a_store_fault_while_paging_is_logged_and_counted_never_raised(
    redis: Redis, key_prefix: str
) -> None:
    reporter = make_reporter(redis, key_prefix, [Always()])
    event = ev(EventType.CIRCUIT_OPEN_EXHAUSTION)
    await redis.set(Keys(key_prefix).admin_dedup(event.dedupe_key), "not-a-hash")  # WRONGTYPE
    await reporter.emit(event)
    assert reporter.enqueue_failures == 1
    assert await pending_pages(redis, Keys(key_prefix)) == 0
