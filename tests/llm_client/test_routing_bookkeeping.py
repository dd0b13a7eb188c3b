"""§5/§7 in the walker: probe permits are renewed leases; bookkeeping faults never
change a call's result (fail open before the call, result stands after it)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from llm_client import (
    AllCircuitsOpen,
    BackendUnavailable,
    BreakerConfig,
    BreakerStore,
    Circuit,
    EventType,
    Outcome,
    RouteTarget,
    RoutingEvent,
    Walker,
    WalkerConfig,
)
from llm_client._breaker.model import Permit
from memory_worker.keys import Keys
from tests.support.routing_fakes import FakeFarm, RecordingSink, fail, ok, routes_of

WF = "memory_extraction"
A, B = "farm/a", "hosted/b"
BREAKER = BreakerConfig(failure_threshold=2, cooldown_seconds=0.2, cooldown_max_seconds=5.0)


def down() -> BackendUnavailable:
    return BackendUnavailable("UPSTREAM_ERROR: unreachable", code="UPSTREAM_ERROR")


class FaultyStore(BreakerStore):
    """A real store whose chosen operations raise the error a dropped connection raises."""

    def __init__(self, *args: Any, failing: set[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failing = failing

    def _check(self, op: str) -> None:
        if op in self.failing:
            raise RedisConnectionError("Connection closed by server.")

    async def begin(self, *args: Any, **kwargs: Any) -> Any:
        # the walk's first round trip reads the views and takes a permit
        self._check("views")
        self._check("acquire")
        return await super().begin(*args, **kwargs)

    async def views(self, *args: Any, **kwargs: Any) -> Any:
        self._check("views")
        return await super().views(*args, **kwargs)

    async def admit(self, *args: Any, **kwargs: Any) -> Any:  # acquire() asks admit()
        self._check("acquire")
        return await super().admit(*args, **kwargs)

    async def acquire_failopen(self, *args: Any, **kwargs: Any) -> Any:
        self._check("acquire")
        return await super().acquire_failopen(*args, **kwargs)

    async def record(self, *args: Any, **kwargs: Any) -> Any:
        self._check("record")
        return await super().record(*args, **kwargs)

    async def renew(self, *args: Any, **kwargs: Any) -> Any:
        self._check("renew")
        return await super().renew(*args, **kwargs)


class BrokenSink:
    async def emit(self, event: RoutingEvent) -> None:
        raise RedisConnectionError("Connection closed by server.")


def walker_with(
    redis: Redis, key_prefix: str, store: BreakerStore, sink: Any, *targets: str, **config: Any
) -> Walker:
    return Walker(
        routes_of(*targets),
        store,
        sink,
        config=WalkerConfig(
            probe_interval_seconds=config.pop("probe_interval", 15.0),
            probe_lease_grace_seconds=1.0,
            **config,
        ),
    )


def faulty(redis: Redis, key_prefix: str, *failing: str) -> FaultyStore:
    return FaultyStore(redis, Keys(key_prefix), BREAKER, failing=set(failing))


async def open_breaker(store: BreakerStore, target: str, *, at_ms: int | None = None) -> None:
    """Trip ``target``'s breaker now, or at ``at_ms`` on the store's clock."""
    for _ in range(BREAKER.failure_threshold):
        permit = await store.acquire(target, lease_seconds=60, now_ms=at_ms)
        assert permit is not None
        await store.record(target, permit, Outcome.FAILURE, now_ms=at_ms)
    assert (await store.view(target, now_ms=at_ms)).circuit is Circuit.OPEN


# --- store faults (§7) ------------------------------------------------------------------------

STORE_FAULTS = [
    pytest.param(("record",), "breaker_record", id="record-after-success"),
    pytest.param(("acquire", "record"), "breaker_acquire", id="acquire-before-call"),
    pytest.param(("views", "acquire", "record"), "breaker_views", id="store-unreachable"),
]


@pytest.mark.parametrize(("failing", "counted"), STORE_FAULTS)
async def test_a_store_fault_never_changes_a_successful_call(
    redis: Redis, key_prefix: str, failing: tuple[str, ...], counted: str
) -> None:
    farm = FakeFarm()
    farm.set(A, ok("served"))
    store = faulty(redis, key_prefix, *failing)
    walker = walker_with(redis, key_prefix, store, BrokenSink(), A)
    routed = await walker.call(WF, farm.attempt)
    assert (routed.value, routed.target.id) == ("served", A)
    assert walker.bookkeeping_failures[counted] >= 1
    assert farm.calls == {A: 1}


async def test_failed_attempts_still_fail_over_when_nothing_can_be_recorded(
    redis: Redis, key_prefix: str
) -> None:
    farm = FakeFarm()
    farm.set(A, fail(down))
    farm.set(B, ok("from-b"))
    store = faulty(redis, key_prefix, "record")
    walker = walker_with(redis, key_prefix, store, BrokenSink(), A, B)
    routed = await walker.call(WF, farm.attempt)
    assert routed.target.id == B
    assert walker.bookkeeping_failures["breaker_record"] == 2
    assert walker.bookkeeping_failures["emit"] >= 1  # attempt_failed could not be emitted
    assert (await store.view(A)).consecutive_failures == 0  # nothing recorded, nothing invented


async def test_an_open_breaker_that_cannot_be_read_is_called_fail_open(
    redis: Redis, key_prefix: str
) -> None:
    """Fail-open on store faults: the call goes out untracked rather than failing the run."""
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, ok("served"))
    healthy = BreakerStore(redis, Keys(key_prefix), BREAKER)
    await open_breaker(healthy, A)
    walker = walker_with(redis, key_prefix, faulty(redis, key_prefix, "views", "acquire"), sink, A)
    routed = await walker.call(WF, farm.attempt)
    assert routed.value == "served"
    # the untracked success did not touch the (unreachable) breaker
    assert (await healthy.view(A)).circuit is Circuit.OPEN


async def test_a_healthy_store_still_refuses_an_open_route(redis: Redis, key_prefix: str) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, ok())
    store = BreakerStore(redis, Keys(key_prefix), BREAKER)
    await open_breaker(store, A)
    walker = walker_with(redis, key_prefix, store, sink, A)
    await walker.breakers.acquire_failopen(A, WF, lease_seconds=1, interval_seconds=15)
    with pytest.raises(AllCircuitsOpen):
        await walker.call(WF, farm.attempt)
    assert farm.total == 0


# --- probe permits are renewed leases (§5) ------------------------------------------------------


async def half_open(store: BreakerStore, target: str) -> None:
    """Trip ``target``'s breaker a cooldown ago (injected time, not waited for): half-open now."""
    cooldown_ago = store.now_ms() - int(BREAKER.cooldown_seconds * 1000) - 50
    await open_breaker(store, target, at_ms=cooldown_ago)
    assert (await store.view(target)).circuit is Circuit.HALF_OPEN


async def test_a_long_probe_keeps_its_slot_by_renewing_a_short_lease(
    redis: Redis, key_prefix: str
) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, ok("late", delay=1.2))
    store = BreakerStore(redis, Keys(key_prefix), BREAKER)
    await half_open(store, A)
    walker = walker_with(redis, key_prefix, store, sink, A, permit_lease_seconds=0.3)
    call = asyncio.create_task(walker.call(WF, farm.attempt))
    for _ in range(8):  # for 1 s: four leases long, the probe slot stays taken
        await asyncio.sleep(0.125)
        view = await store.view(A)
        assert view.probe_in_flight
        assert await store.acquire(A, lease_seconds=1) is None
    routed = await call
    assert routed.value == "late"
    assert (await store.view(A)).circuit is Circuit.CLOSED
    assert sink.of(EventType.CIRCUIT_CLOSED)


async def test_a_prober_that_dies_mid_call_frees_the_slot_within_one_lease(
    redis: Redis, key_prefix: str
) -> None:
    """A killed prober stops renewing: the next caller probes one lease later, not a call budget
    later (the lease is what is left behind; the task is cancelled without releasing)."""
    store = BreakerStore(redis, Keys(key_prefix), BREAKER)
    await half_open(store, A)
    walker = walker_with(redis, key_prefix, store, RecordingSink(), A, permit_lease_seconds=0.4)
    started = asyncio.Event()

    async def stuck(target: RouteTarget, timeout: float, key: str | None) -> str:
        started.set()
        await asyncio.sleep(3600)
        return "never"

    # What kill -9 leaves: a probe permit and no renewer. Simulate by stopping renewals.
    async def no_renew(*args: Any, **kwargs: Any) -> bool:
        await asyncio.sleep(3600)
        return True

    walker.breakers.renew = no_renew  # type: ignore[method-assign]
    prober = asyncio.create_task(walker.call(WF, stuck))
    await started.wait()
    taken_at = store.now_ms()
    state = await store.state(A)
    assert 0 < state.probe_until_ms - taken_at <= 400  # the lease, not the 900 s wall budget
    assert await store.acquire(A, lease_seconds=1) is None
    # one lease on (injected: the next caller's clock reads 450 ms later)
    probe = await store.acquire(A, lease_seconds=1, now_ms=taken_at + 450)
    assert probe is not None
    assert probe.probe
    prober.cancel()
    with pytest.raises(asyncio.CancelledError):
        await prober
    # the dead prober's late release is stale: it cannot free the new probe's slot
    assert (await store.view(A)).probe_in_flight


async def test_renewal_stops_once_the_permit_is_stale(redis: Redis, key_prefix: str) -> None:
    store = BreakerStore(redis, Keys(key_prefix), BREAKER)
    await half_open(store, A)
    calls: list[bool] = []
    real_renew = store.renew

    async def counting(target: str, permit: Permit, **kwargs: Any) -> bool:
        result = await real_renew(target, permit, **kwargs)
        calls.append(result)
        return result

    store.renew = counting  # type: ignore[method-assign]
    walker = walker_with(redis, key_prefix, store, RecordingSink(), A, permit_lease_seconds=0.15)
    farm = FakeFarm()
    farm.set(A, ok("x", delay=0.6))
    call = asyncio.create_task(walker.call(WF, farm.attempt))
    await asyncio.sleep(0.12)
    await store.reset(A)  # operator reset: the in-flight probe's permit goes stale
    await call
    assert calls
    assert calls[-1] is False
    assert calls.count(False) == 1  # it stopped renewing at once


async def test_renewal_store_faults_are_counted_and_the_call_stands(
    redis: Redis, key_prefix: str
) -> None:
    healthy = BreakerStore(redis, Keys(key_prefix), BREAKER)
    await half_open(healthy, A)
    store = faulty(redis, key_prefix, "renew")
    walker = walker_with(redis, key_prefix, store, RecordingSink(), A, permit_lease_seconds=0.15)
    farm = FakeFarm()
    farm.set(A, ok("x", delay=0.4))
    routed = await walker.call(WF, farm.attempt)
    assert routed.value == "x"
    assert walker.bookkeeping_failures["breaker_renew"] >= 2
    assert (await healthy.view(A)).circuit is Circuit.CLOSED


# --- optional calls never probe (§6) ------------------------------------------------------------


async def test_an_optional_call_never_probes_an_open_route(redis: Redis, key_prefix: str) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, ok())
    store = BreakerStore(redis, Keys(key_prefix), BREAKER)
    await half_open(store, A)  # a free probe slot, and the fail-open permit is free too
    walker = walker_with(redis, key_prefix, store, sink, A)
    with pytest.raises(AllCircuitsOpen):
        await walker.call(WF, farm.attempt, probes=False)
    assert farm.total == 0
    assert sink.of(EventType.CIRCUIT_OPEN_EXHAUSTION)  # the admins still hear about it
    assert not (await store.view(A)).probe_in_flight
    assert await store.failopen_free(WF)  # the interval's probe is left to a required call
    routed = await walker.call(WF, farm.attempt)  # …which takes it
    assert routed.target.id == A
    assert (await store.view(A)).circuit is Circuit.CLOSED


async def test_an_optional_call_uses_the_closed_targets(redis: Redis, key_prefix: str) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, ok("from-a"))
    farm.set(B, fail(down))
    store = BreakerStore(redis, Keys(key_prefix), BREAKER)
    await half_open(store, A)
    walker = walker_with(redis, key_prefix, store, sink, A, B)
    with pytest.raises(BackendUnavailable):
        await walker.call(WF, farm.attempt, probes=False)
    assert farm.calls == {B: 1}
