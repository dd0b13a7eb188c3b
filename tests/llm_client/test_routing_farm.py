"""§5/§6/§9 end to end: the walker with the real clients against the farm simulator,
events in Redis, and admin pages delivered to a loopback fake Telegram."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from llm_client import (
    AllCircuitsOpen,
    BackendUnavailable,
    BreakerConfig,
    BreakerStore,
    Circuit,
    ClientFactory,
    EventType,
    Fanout,
    RedisEventLog,
    RouteDefaults,
    RoutesConfig,
    Upstream,
    Walker,
    WalkerConfig,
)
from llm_client._routing.routes import parse_routes
from memory_worker.farmsim import DIRECT_SERVICE, FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.paging.notifiers import TelegramNotifier
from memory_worker.paging.policy import ReportConfig
from memory_worker.paging.reports import AdminReporter, page_counters, route_breakers
from tests.support.admin_fakes import FakeTelegram
from tests.support.clock import ShiftedClock
from tests.support.simulator import sim_config

WF = "memory_extraction"
TOKEN = "424242:telegram-bot-token-CANARY"
CANARY_TEXT = "CANARY-user-message-text: my secret plan"
CANARY_FAULT = "CANARY-farm-error-detail"
REQUEST = {"messages": [{"role": "user", "content": CANARY_TEXT}], "temperature": 0.2}

DOWN = Fault(
    kind=FaultKind.JOB_FAILED,
    code="UPSTREAM_ERROR",
    message=f"[Errno -3] Temporary failure in name resolution {CANARY_FAULT}",
)
JOB_FAILED = Fault(kind=FaultKind.JOB_FAILED, code="JOB_FAILED", message="job failed")
NO_SLOTS = Fault(kind=FaultKind.SUBMIT_STATUS, status_code=503, message="no slots available")
RATE_LIMITED = Fault(kind=FaultKind.SUBMIT_STATUS, status_code=429, message="rate limit exceeded")
BAD_REQUEST = Fault(kind=FaultKind.UPSTREAM_STATUS, status_code=400, message="invalid schema")


def farm_routes(sim: FarmSimulator, *services: str, direct: bool = False) -> RoutesConfig:
    targets: list[dict[str, Any]] = [
        {"provider": service, "service": service, "model": "m", "base_url": sim.base_url}
        for service in services
    ]
    if direct:
        targets.append(
            {
                "transport": "openai",
                "provider": "direct",
                "url": f"{sim.base_url}/v1",
                "model": "m",
                "auth_env": "SIM_DIRECT_KEY",
            }
        )
    raw = {"routes": {WF: {"targets": targets}}}
    return parse_routes(raw, RouteDefaults(), env={"SIM_DIRECT_KEY": "sk-sim"})


@dataclass
class Node:
    """One worker's routing stack (its own Redis connection and HTTP clients)."""

    walker: Walker
    reporter: AdminReporter
    events: RedisEventLog
    clients: ClientFactory
    http: httpx.AsyncClient

    async def close(self) -> None:
        await self.clients.aclose()
        await self.http.aclose()


def make_node(
    redis: Redis,
    key_prefix: str,
    routes: RoutesConfig,
    sim: FarmSimulator,
    *,
    breaker: BreakerConfig = BreakerConfig(),
    probe_interval: float = 60.0,
    telegram: FakeTelegram | None = None,
    clock: Callable[[], float] = time.time,
) -> Node:
    keys = Keys(key_prefix)
    store = BreakerStore(redis, keys, breaker, clock=clock)
    http = httpx.AsyncClient()
    notifiers = (
        [TelegramNotifier(api_base=telegram.base_url, token=TOKEN, chat_id=77, http=http)]
        if telegram is not None
        else []
    )

    async def waiting_runs() -> int:
        return 42

    reporter = AdminReporter(
        redis,
        keys,
        notifiers,
        ReportConfig(),
        breakers=route_breakers(routes, store),
        waiting_runs=waiting_runs,
    )
    events = RedisEventLog(redis, keys)
    config = sim_config(
        sim, request_timeout=5, task_timeout=5, capacity_wait=0.0, capacity_poll=0.01, job_poll=0.01
    )
    clients = ClientFactory(config, http=http, env={"SIM_DIRECT_KEY": "sk-sim"})
    walker = Walker(
        routes,
        store,
        Fanout(events, reporter),
        clients,
        WalkerConfig(probe_interval_seconds=probe_interval),
    )
    return Node(walker, reporter, events, clients, http)


class Nodes:
    """The test's nodes: made on its Redis, key prefix and simulator, closed after it."""

    def __init__(self, redis: Redis, key_prefix: str, sim: FarmSimulator) -> None:
        self.redis, self.key_prefix, self.sim = redis, key_prefix, sim
        self.made: list[Node] = []

    def add(self, routes: RoutesConfig, *, redis: Redis | None = None, **options: Any) -> Node:
        """A node on ``redis`` (a worker's own connection) or the test's; ``options`` as
        :func:`make_node`'s."""
        on = self.redis if redis is None else redis
        node = make_node(on, self.key_prefix, routes, self.sim, **options)
        self.made.append(node)
        return node

    async def close(self) -> None:
        for node in self.made:
            await node.close()


@pytest.fixture
async def nodes(redis: Redis, key_prefix: str, sim: FarmSimulator) -> AsyncIterator[Nodes]:
    made = Nodes(redis, key_prefix, sim)
    yield made
    await made.close()


async def calls(walker: Walker, n: int) -> list[object]:
    results: list[object] = []
    for _ in range(n):
        try:
            results.append(await walker.chat(WF, REQUEST))
        except Exception as exc:
            results.append(exc)
    return results


def kinds(results: Sequence[object]) -> list[str]:
    return [type(r).__name__ for r in results]


async def test_six_backend_unavailable_failures_open_the_circuit_and_page_once(
    redis: Redis, key_prefix: str, sim: FarmSimulator, telegram: FakeTelegram, nodes: Nodes
) -> None:
    node = nodes.add(farm_routes(sim, "llm-a"), telegram=telegram)
    sim.set_fault("llm-a", DOWN)
    results = await calls(node.walker, 6)
    # Five charged failures trip the breaker; the sixth is the fleet's fail-open probe.
    assert kinds(results) == ["BackendUnavailable"] * 6
    assert sim.submits("llm-a") == 6
    view = await node.walker.breakers.view("llm-a/m")
    assert (view.circuit, view.trips) == (Circuit.OPEN, 2)
    # Everyone else is refused at once: no farm traffic, no extra pages.
    assert kinds(await calls(node.walker, 10)) == ["AllCircuitsOpen"] * 10
    assert sim.submits("llm-a") == 6
    await node.reporter.deliver_due()
    await node.reporter.deliver_due()
    (message,) = telegram.messages()
    text = message.json["text"]
    assert message.json["chat_id"] == 77
    assert "routing report: circuit_open_exhaustion" in text
    assert "workflow: memory_extraction" in text
    assert "llm-a/m: open" in text
    assert "runs waiting: 42" in text
    assert "since: " in text
    assert CANARY_TEXT not in text
    assert CANARY_FAULT not in text
    assert TOKEN not in text
    counters = await page_counters(redis, Keys(key_prefix))
    assert (counters["queued"], counters["sent"], counters["suppressed"]) == (1, 1, 10)
    recent = await node.events.recent(limit=1000)
    types = {e.type for e in recent}
    assert {
        EventType.ATTEMPT_FAILED,
        EventType.CIRCUIT_OPENED,
        EventType.CIRCUIT_OPEN_EXHAUSTION,
        EventType.FAILOPEN_PROBE,
    } <= types
    raw_stream = repr(await redis.xrange(Keys(key_prefix).events))
    assert CANARY_TEXT not in raw_stream
    assert CANARY_FAULT not in raw_stream


async def test_six_generic_job_failures_charge_nothing_and_page_nobody(
    redis: Redis, key_prefix: str, sim: FarmSimulator, telegram: FakeTelegram, nodes: Nodes
) -> None:
    node = nodes.add(farm_routes(sim, "llm-a", "llm-b"), telegram=telegram)
    sim.set_fault("llm-a", JOB_FAILED)
    results = await calls(node.walker, 6)
    assert kinds(results) == ["Upstream"] * 6
    assert (sim.submits("llm-a"), sim.submits("llm-b")) == (6, 0)  # no fallback
    view = await node.walker.breakers.view("llm-a/m")
    assert (view.circuit, view.consecutive_failures, view.window_calls) == (Circuit.CLOSED, 0, 0)
    await node.reporter.deliver_due()
    assert telegram.messages() == []
    assert (await page_counters(redis, Keys(key_prefix)))["queued"] == 0


async def test_no_slots_and_rate_limits_fail_over_and_never_open_a_breaker(
    sim: FarmSimulator, nodes: Nodes
) -> None:
    node = nodes.add(farm_routes(sim, "llm-busy", "llm-b"))
    for fault in (NO_SLOTS, RATE_LIMITED):
        sim.set_fault("llm-busy", fault)
        results = await calls(node.walker, 100)
        assert all(getattr(r, "target", None) is not None for r in results), kinds(results)[:3]
        assert {r.target.id for r in results} == {"llm-b/m"}  # type: ignore[attr-defined]
        view = await node.walker.breakers.view("llm-busy/m")
        assert (view.circuit, view.consecutive_failures, view.window_calls) == (
            Circuit.CLOSED,
            0,
            0,
        )
    assert sim.submits("llm-busy") == 200
    # A 503 UPSTREAM_ERROR is the backend being unreachable: that does open the breaker.
    sim.set_fault("llm-busy", DOWN)
    await calls(node.walker, 5)
    assert (await node.walker.breakers.view("llm-busy/m")).circuit is Circuit.OPEN


async def test_half_open_lets_exactly_one_probe_reach_the_farm(
    sim: FarmSimulator, nodes: Nodes
) -> None:
    breaker = BreakerConfig(cooldown_seconds=0.3, cooldown_max_seconds=10)
    clock = ShiftedClock()
    node = nodes.add(farm_routes(sim, "llm-a"), breaker=breaker, clock=clock)
    sim.set_fault("llm-a", DOWN)
    await calls(node.walker, 5)
    assert (await node.walker.breakers.view("llm-a/m")).circuit is Circuit.OPEN
    clock.advance(0.35)  # the cooldown has passed
    before = sim.submits("llm-a")
    results = await asyncio.gather(
        *(node.walker.chat(WF, REQUEST) for _ in range(20)), return_exceptions=True
    )
    assert sim.submits("llm-a") - before == 1
    assert kinds(results).count("BackendUnavailable") == 1
    assert kinds(results).count("AllCircuitsOpen") == 19
    reopened = await node.walker.breakers.view("llm-a/m")
    assert reopened.trips == 2
    assert 0.3 < reopened.cooldown_remaining_s <= 0.6  # probe failure doubled the cooldown
    clock.advance(reopened.cooldown_remaining_s + 0.05)
    # the probe runs 2 s: every caller reaches the gate before it closes the breaker (with
    # 0.2 s, a loaded host's late callers found it closed and rightly called A: 6 submits)
    sim.set_fault("llm-a", Fault(kind=FaultKind.SLOW, seconds=2.0))
    before = sim.submits("llm-a")
    results = await asyncio.gather(
        *(node.walker.chat(WF, REQUEST) for _ in range(20)), return_exceptions=True
    )
    assert sim.submits("llm-a") - before == 1
    assert kinds(results).count("Routed") == 1
    assert (await node.walker.breakers.view("llm-a/m")).circuit is Circuit.CLOSED
    sim.clear_faults()
    assert kinds(await calls(node.walker, 3)) == ["Routed"] * 3


async def test_all_targets_open_one_failopen_probe_per_interval_across_workers(
    redis_url: str, sim: FarmSimulator, nodes: Nodes, open_client: Callable[[str], Any]
) -> None:
    routes = farm_routes(sim, "llm-a", "llm-b")
    breaker = BreakerConfig(cooldown_seconds=60, cooldown_max_seconds=300)
    workers = [  # four workers, each on its own connection
        nodes.add(routes, redis=open_client(redis_url), breaker=breaker, probe_interval=0.3)
        for _ in range(4)
    ]
    sim.set_fault("*", DOWN)
    await calls(workers[0].walker, 5)
    for target in ("llm-a/m", "llm-b/m"):
        assert (await workers[0].walker.breakers.view(target)).circuit is Circuit.OPEN
    before = {s: sim.submits(s) for s in ("llm-a", "llm-b")}
    refused = 0
    started = time.monotonic()
    stop_at = started + 1.2

    async def hammer(node: Node) -> None:
        nonlocal refused
        while time.monotonic() < stop_at:
            try:
                await node.walker.chat(WF, REQUEST)
            except AllCircuitsOpen:
                refused += 1
            except BackendUnavailable:
                pass
            await asyncio.sleep(0.005)

    await asyncio.gather(*(hammer(w) for w in workers for _ in range(3)))
    elapsed = time.monotonic() - started
    probes = sim.submits("llm-a") - before["llm-a"]
    assert sim.submits("llm-b") == before["llm-b"]  # only the first target is probed
    assert 2 <= probes <= int(elapsed / 0.3) + 1
    assert refused >= 2 * probes
    exhaustion = await workers[1].events.recent(limit=5, types=[EventType.CIRCUIT_OPEN_EXHAUSTION])
    assert exhaustion
    assert exhaustion[0].dedupe_key == "circuit_open_exhaustion:memory_extraction:-"


async def test_failover_to_a_direct_fallback_and_400_returns_at_once(
    sim: FarmSimulator, nodes: Nodes
) -> None:
    node = nodes.add(farm_routes(sim, "llm-a", direct=True))
    sim.set_fault("llm-a", DOWN)
    routed = await node.walker.chat(WF, REQUEST)
    assert routed.target.id == "direct/m"
    assert routed.value.content
    assert [a.target for a in routed.attempts] == ["llm-a/m", "direct/m"]
    assert sim.submits(DIRECT_SERVICE) == 1
    sim.set_fault("llm-a", BAD_REQUEST)
    with pytest.raises(Upstream) as info:
        await node.walker.chat(WF, REQUEST)
    assert info.value.status_code == 400
    assert sim.submits(DIRECT_SERVICE) == 1  # no fallback after a non-retryable error


@pytest.mark.usefixtures("e5_loaded")  # the simulator's embedder: no model load in 5 s
async def test_embedding_route_through_the_walker(sim: FarmSimulator, nodes: Nodes) -> None:
    from llm_client import default_routes

    node = nodes.add(default_routes(RouteDefaults(discovery_base_url=sim.base_url)))
    routed = await node.walker.embed("embedding", ["alpha", "beta"], dimension=512)
    assert routed.target.id == "embedder/embedder"
    assert len(routed.value.embeddings) == 2
    assert routed.value.dimension == 512
