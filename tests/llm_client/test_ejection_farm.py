"""§5/§6 outlier ejection end to end: the walker with the real clients against the farm
simulator, breakers and outlier counts in a real Valkey.

A flaky target (60 % of its calls fail, fast) is ejected while its peer serves; never more
than the panic floor of a tier, even when every target is flaky; an ejected target comes
back on probation and is sent calls first while a healthy peer could serve them all;
busy, capacity and rate-limit answers never count; and a target whose breaker opened is
probed as soon as its probe is due, although a healthy peer serves every call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from llm_client import (
    BreakerConfig,
    BreakerStore,
    Circuit,
    ClientFactory,
    EjectionConfig,
    EventType,
    GatewayConfig,
    OutlierStore,
    RecordCarry,
    RedisEventLog,
    RouteDefaults,
    RoutesConfig,
    Standing,
    Walker,
    WalkerConfig,
)
from llm_client._routing.routes import parse_routes
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from tests.support.simulator import sim_config

WF = "memory_extraction"
REQUEST = {"messages": [{"role": "user", "content": "hello"}]}
DOWN = Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="[Errno -3] dns")
FLAKY = Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="[Errno -3] dns", share=0.6)
NO_SLOTS = Fault(kind=FaultKind.SUBMIT_STATUS, status_code=503, message="no slots available")
RATE_LIMITED = Fault(kind=FaultKind.SUBMIT_STATUS, status_code=429, message="rate limit exceeded")

#: Small windows: judged after 10 calls, out for 30 s unless a test says otherwise.
EJECTION = EjectionConfig(
    window_seconds=30,
    refresh_seconds=0,
    failure_percentage_min_volume=10,
    base_ejection_seconds=30,
)


def tier_routes(sim: FarmSimulator, *services: str) -> RoutesConfig:
    """Every service a target of one tier (``provider/m``)."""
    targets: list[dict[str, Any]] = [
        {"provider": s, "service": s, "model": "m", "base_url": sim.base_url, "tier": 0}
        for s in services
    ]
    return parse_routes({"routes": {WF: {"targets": targets}}}, RouteDefaults())


class Node:
    """One worker's routing stack, with outlier ejection. Calls come one at a time, so
    ``least_in_flight`` would never put a target that failed once ahead of its peer (its
    success ratio weighs it down) and never judge it; a weighted draw still sends it some."""

    def __init__(
        self,
        redis: Redis,
        key_prefix: str,
        sim: FarmSimulator,
        routes: RoutesConfig,
        ejection: EjectionConfig = EJECTION,
        breaker: BreakerConfig = BreakerConfig(),
        balance: str = "weighted_random",
    ) -> None:
        keys = Keys(key_prefix)
        self.http = httpx.AsyncClient()
        self.clients = ClientFactory(
            sim_config(sim, request_timeout=5, task_timeout=5, capacity_wait=0.0, job_poll=0.01),
            http=self.http,
        )
        self.events = RedisEventLog(redis, keys)
        self.outliers = OutlierStore(redis, keys, ejection)
        self.walker = Walker(
            routes,
            BreakerStore(redis, keys, breaker),
            self.events,
            self.clients,
            WalkerConfig(probe_interval_seconds=60, gateway=GatewayConfig(balance=balance)),
            outliers=self.outliers,
        )

    async def call(self) -> str:
        """One routed chat: the target that served it (``error`` when the walk failed)."""
        try:
            return (await self.walker.chat(WF, REQUEST)).target.provider
        except Exception:
            return "error"

    async def standings(self, *services: str) -> dict[str, Standing]:
        tallies = await self.outliers.sync([f"{s}/m" for s in services])
        return {t.target.split("/")[0]: t.standing for t in tallies}

    async def close(self) -> None:
        await self.clients.aclose()
        await self.http.aclose()


@pytest.fixture
async def made(redis: Redis, key_prefix: str, sim: FarmSimulator) -> AsyncIterator[list[Node]]:
    nodes: list[Node] = []
    yield nodes
    for node in nodes:
        await node.close()


def node(
    made: list[Node], redis: Redis, key_prefix: str, sim: FarmSimulator, *services: str, **kw: Any
) -> Node:
    made.append(Node(redis, key_prefix, sim, tier_routes(sim, *services), **kw))
    return made[-1]


async def test_a_flaky_target_is_ejected_and_its_peer_serves_every_call(
    redis: Redis, key_prefix: str, sim: FarmSimulator, made: list[Node]
) -> None:
    n = node(made, redis, key_prefix, sim, "llm-a", "llm-b")
    sim.set_fault("llm-a", FLAKY)
    served = [await n.call() for _ in range(80)]
    assert "error" not in served  # every failure of A fell over to B: no call failed
    (ejected,) = [e for e in await n.events.recent(limit=500) if e.type == EventType.TARGET_EJECTED]
    assert (ejected.target, ejected.reason) == ("llm-a/m", "failure_percentage")
    assert ejected.counters["times"] == 1
    assert ejected.counters["failures"] >= 0.5 * (
        ejected.counters["failures"] + ejected.counters["successes"]
    )
    # once out, A is called no more while B serves
    before = sim.submits("llm-a")
    assert [await n.call() for _ in range(20)] == ["llm-b"] * 20
    assert sim.submits("llm-a") == before
    assert (await n.standings("llm-a", "llm-b")) == {
        "llm-a": Standing.EJECTED,
        "llm-b": Standing.IN,
    }


async def test_the_panic_floor_keeps_half_of_an_all_flaky_tier_in_rotation(
    redis: Redis, key_prefix: str, sim: FarmSimulator, made: list[Node]
) -> None:
    services = ("llm-a", "llm-b", "llm-c", "llm-d")
    n = node(made, redis, key_prefix, sim, *services)
    for service in services:
        sim.set_fault(service, FLAKY)
    most_out = 0
    for _ in range(30):
        await asyncio.gather(*(n.call() for _ in range(4)))
        out = sum(s is Standing.EJECTED for s in (await n.standings(*services)).values())
        most_out = max(most_out, out)
    assert most_out == 2  # the floor was reached, and never passed
    ejected = [e for e in await n.events.recent(limit=2000) if e.type == EventType.TARGET_EJECTED]
    assert len(ejected) == 2
    # the two left in rotation are still called
    kept = [s for s, st in (await n.standings(*services)).items() if st is Standing.IN]
    before = {s: sim.submits(s) for s in kept}
    await asyncio.gather(*(n.call() for _ in range(12)))
    assert all(sim.submits(s) > before[s] for s in kept)


async def test_an_ejected_target_comes_back_on_probation_and_is_sent_calls_first(
    redis: Redis, key_prefix: str, sim: FarmSimulator, made: list[Node]
) -> None:
    ejection = EjectionConfig(
        window_seconds=30,
        refresh_seconds=0,
        failure_percentage_min_volume=10,
        base_ejection_seconds=1.5,
        probation_share=1.0,
    )
    n = node(made, redis, key_prefix, sim, "llm-a", "llm-b", ejection=ejection)
    sim.set_fault("llm-a", FLAKY)
    for _ in range(60):
        await n.call()
        if (await n.standings("llm-a"))["llm-a"] is Standing.EJECTED:
            break
    assert (await n.standings("llm-a"))["llm-a"] is Standing.EJECTED
    ejected_by = time.monotonic()  # it is out from before this until before this + 1.5 s
    sim.clear_faults("llm-a")
    for _ in range(10):  # out for its period: B serves
        served_by = await n.call()
        # judged when the whole call fell inside the period (a loaded host's calls are slow)
        if time.monotonic() - ejected_by < 1.5:
            assert served_by == "llm-b"
    await asyncio.sleep(1.6)
    assert (await n.standings("llm-a"))["llm-a"] is Standing.PROBATION
    served = [await n.call() for _ in range(20)]
    # on probation it is sent the calls first, although B could serve them all
    assert served.count("llm-a") == 20


async def test_capacity_and_rate_limit_answers_never_count_as_errors(
    redis: Redis, key_prefix: str, sim: FarmSimulator, made: list[Node]
) -> None:
    n = node(made, redis, key_prefix, sim, "llm-a", "llm-b")
    for fault in (NO_SLOTS, RATE_LIMITED):
        sim.set_fault("llm-a", fault)
        served = [await n.call() for _ in range(40)]
        assert set(served) == {"llm-b"}
    assert sim.submits("llm-a") >= 20  # it was asked, and said it was busy
    (a, b) = await n.outliers.sync(["llm-a/m", "llm-b/m"])
    assert (a.successes, a.failures, a.standing) == (0, 0, Standing.IN)
    assert b.failures == 0
    assert b.successes >= 79
    assert not [e for e in await n.events.recent(limit=500) if e.type == EventType.TARGET_EJECTED]
    assert (await n.walker.breakers.view("llm-a/m")).circuit is Circuit.CLOSED


async def test_an_opened_target_is_probed_while_its_peer_serves_every_call(
    redis: Redis, key_prefix: str, sim: FarmSimulator, made: list[Node]
) -> None:
    """Before: every walk ended on B's success, so A's half-open probe was never sent."""
    n = node(
        made,
        redis,
        key_prefix,
        sim,
        "llm-a",
        "llm-b",
        ejection=EjectionConfig(enabled=False),
        breaker=BreakerConfig(cooldown_seconds=1.0),
    )
    sim.set_fault("llm-a", DOWN)
    while (await n.walker.breakers.view("llm-a/m")).circuit is Circuit.CLOSED:
        assert await n.call() == "llm-b"
    sim.clear_faults("llm-a")
    started = time.monotonic()
    served = []
    while time.monotonic() - started < 3:
        served.append(await n.call())
    assert "llm-a" in served
    assert (await n.walker.breakers.view("llm-a/m")).circuit is Circuit.CLOSED
    assert served.index("llm-a") < len(served) - 1  # probed within the run, then shared


class BrokenOutliers(OutlierStore):
    async def sync(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("the store is unreachable")


async def test_an_unreachable_outlier_store_never_fails_a_call(
    redis: Redis, key_prefix: str, sim: FarmSimulator, made: list[Node]
) -> None:
    """Bookkeeping, best effort: the walk goes on in the order it had, the fault counted."""
    n = node(made, redis, key_prefix, sim, "llm-a", "llm-b")
    n.walker.outliers = BrokenOutliers(redis, Keys(key_prefix), EJECTION)
    assert {await n.call() for _ in range(5)} <= {"llm-a", "llm-b"}
    assert n.walker.bookkeeping_failures["outlier_sync"] == 5


async def test_a_flaky_targets_successes_are_recorded_at_once_not_held(
    redis: Redis, key_prefix: str, sim: FarmSimulator, made: list[Node]
) -> None:
    """Held successes (a worker's RecordCarry) would let a flaky target's failures, recorded
    at once, look consecutive to its breaker: a target with failures in its window has its
    successes sent in order with them; a steady one's are still held and folded."""
    steady = node(made, redis, key_prefix, sim, "llm-b")
    flaky = node(made, redis, key_prefix, sim, "llm-a")
    await flaky.outliers.sync(["llm-a/m"], {"llm-a/m": (5, 3)})  # under the volume: not out
    with RecordCarry(hold_seconds=60) as carry:
        assert await steady.call() == "llm-b"
        assert len(carry.pending) == 1
        assert await flaky.call() == "llm-a"
        held = [c for c in carry.pending if c.store is flaky.walker.breakers]
        assert held == []  # its record went at once
        view = await flaky.walker.breakers.view("llm-a/m")
        assert view.window_calls == 1  # landed before the call returned
        assert len(carry.pending) == 1  # the steady target's, still held
