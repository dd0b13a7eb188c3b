"""§6 walker with fake transports and real Redis breakers: ordering, charging, budgets, fail-open."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from redis.asyncio import Redis

from llm_client import (
    AllCircuitsOpen,
    BackendUnavailable,
    BreakerConfig,
    CapacityUnavailable,
    CapacityWaitTimeout,
    Circuit,
    DeadlineExceeded,
    DecodeError,
    EventType,
    NoCandidates,
    RouteDefaults,
    RouteUnavailable,
    TaskTimeout,
    Transport,
    Upstream,
)
from llm_client._routing.routes import parse_routes
from tests.support.clock import ShiftedClock
from tests.support.harness import eventually
from tests.support.routing_fakes import (
    FakeFarm,
    RecordingSink,
    breaker_state,
    fail,
    hang,
    make_walker,
    ok,
    routes_of,
    scripted,
)

WF = "memory_extraction"
A, B, C = "farm/a", "hosted/b", "gpu/c"


def down() -> BackendUnavailable:
    return BackendUnavailable(
        "UPSTREAM_ERROR: [Errno -3] Temporary failure in name resolution", code="UPSTREAM_ERROR"
    )


def no_slots() -> CapacityUnavailable:
    return CapacityUnavailable("submit answered 503: no slots available", code="HTTP_503")


def rate_limited() -> Upstream:
    return Upstream("HTTP 429: rate limit exceeded", code="HTTP_429", status_code=429)


def bad_request() -> Upstream:
    return Upstream(
        "HTTP 400: invalid schema for response_format", code="HTTP_400", status_code=400
    )


async def test_primary_serves_when_healthy(redis: Redis, key_prefix: str) -> None:
    farm, sink, walker = scripted(
        redis, key_prefix, routes_of(A, B), {A: ok("from-a"), B: ok("from-b")}
    )
    routed = await walker.call(WF, farm.attempt, idempotency_key="run-1:1")
    assert (routed.value, routed.target.id) == ("from-a", A)
    assert farm.calls == {A: 1}
    assert farm.keys == ["run-1:1:farm/a"]
    assert sink.events == []  # success needs no event


async def test_failover_primary_down_fallback_healthy(redis: Redis, key_prefix: str) -> None:
    farm, sink, walker = scripted(
        redis, key_prefix, routes_of(A, B), {A: fail(down), B: ok("from-b")}
    )
    routed = await walker.call(WF, farm.attempt)
    assert (routed.value, routed.target.id) == ("from-b", B)
    assert [r.target for r in routed.attempts] == [A, B]
    primary = await walker.breakers.view(A)
    assert (primary.consecutive_failures, primary.window_failures) == (1, 1)
    (failed,) = sink.of(EventType.ATTEMPT_FAILED)
    assert (failed.target, failed.reason, failed.error_code) == (
        A,
        "provider_unavailable",
        "UPSTREAM_ERROR",
    )
    assert failed.counters["charged"] == 1


async def test_non_retryable_error_returns_at_once_without_fallback_or_charge(
    redis: Redis, key_prefix: str
) -> None:
    farm, sink, walker = scripted(
        redis, key_prefix, routes_of(A, B), {A: fail(bad_request), B: ok()}
    )
    for _ in range(6):
        with pytest.raises(Upstream) as info:
            await walker.call(WF, farm.attempt)
        assert info.value.status_code == 400
    assert farm.calls == {A: 6}  # never the fallback
    assert await breaker_state(walker, A) == (Circuit.CLOSED, 0, 0)
    assert EventType.ALL_ATTEMPTS_EXHAUSTED not in sink.types()


async def test_generic_job_failed_errors_charge_nothing(redis: Redis, key_prefix: str) -> None:
    farm, sink, walker = scripted(
        redis,
        key_prefix,
        routes_of(A),
        {A: fail(lambda: Upstream("JOB_FAILED: job failed", code="JOB_FAILED"))},
    )
    for _ in range(6):
        with pytest.raises(Upstream):
            await walker.call(WF, farm.attempt)
    view = await walker.breakers.view(A)
    assert (view.circuit, view.consecutive_failures) == (Circuit.CLOSED, 0)
    assert set(sink.types()) == {EventType.ATTEMPT_FAILED}
    assert {e.reason for e in sink.events} == {"not_retryable"}


@pytest.mark.parametrize("busy", [no_slots, rate_limited], ids=["503-no-slots", "429-rate-limit"])
async def test_capacity_answers_fail_over_and_never_open_a_breaker(
    redis: Redis, key_prefix: str, busy: object
) -> None:
    behaviours = {A: fail(busy), B: ok("from-b")}  # type: ignore[arg-type]
    farm, sink, walker = scripted(redis, key_prefix, routes_of(A, B, max_hops=1), behaviours)
    for _ in range(100):
        routed = await walker.call(WF, farm.attempt)
        assert routed.target.id == B  # a busy answer spent no hop: max_hops=1 still reached B
    assert await breaker_state(walker, A) == (Circuit.CLOSED, 0, 0)
    assert EventType.CIRCUIT_OPENED not in sink.types()


async def test_upstream_error_503_does_open_the_breaker(redis: Redis, key_prefix: str) -> None:
    farm, sink, walker = scripted(
        redis,
        key_prefix,
        routes_of(A, B),
        {
            A: fail(lambda: BackendUnavailable("UPSTREAM_ERROR: 503", code="UPSTREAM_ERROR")),
            B: ok(),
        },
    )
    for _ in range(5):
        await walker.call(WF, farm.attempt)
    assert (await walker.breakers.view(A)).circuit is Circuit.OPEN
    (opened,) = sink.of(EventType.CIRCUIT_OPENED)
    assert opened.target == A
    # While open, the primary is skipped (moved to the end) and the fallback serves directly.
    routed = await walker.call(WF, farm.attempt)
    assert [r.target for r in routed.attempts] == [B]
    assert farm.calls[A] == 5


async def test_every_target_busy_for_the_slot_wait_is_capacity_wait_timeout(
    redis: Redis, key_prefix: str
) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, fail(no_slots))
    farm.set(B, fail(rate_limited))
    routes = routes_of(A, B, max_hops=1, slot_wait_seconds=0.3, slot_poll_seconds=0.05)
    walker = make_walker(redis, key_prefix, routes, sink)
    started = time.monotonic()
    with pytest.raises(CapacityWaitTimeout) as info:
        await walker.call(WF, farm.attempt)
    assert 0.25 <= time.monotonic() - started < 2.0
    assert isinstance(info.value.__cause__, (CapacityUnavailable, Upstream))
    assert farm.calls[A] >= 3  # retried each poll, no hop spent
    assert farm.calls[A] == farm.calls[B]
    assert len(sink.of(EventType.CAPACITY_WAIT_TIMEOUT)) == 1
    for target in (A, B):
        assert (await walker.breakers.view(target)).window_calls == 0


async def test_busy_primary_then_capacity_frees_up(redis: Redis, key_prefix: str) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    answers = iter([no_slots(), no_slots()])

    async def flaky(timeout: float) -> str:
        error = next(answers, None)
        if error is not None:
            raise error
        return "finally"

    farm.set(A, flaky)
    walker = make_walker(
        redis, key_prefix, routes_of(A, slot_wait_seconds=5, slot_poll_seconds=0.01), sink
    )
    routed = await walker.call(WF, farm.attempt)
    assert routed.value == "finally"
    assert farm.calls[A] == 3


async def test_max_hops_bounds_the_walk_and_returns_the_last_error(
    redis: Redis, key_prefix: str
) -> None:
    farm, sink, walker = scripted(
        redis,
        key_prefix,
        routes_of(A, B, C, max_hops=2),
        {A: fail(down), B: fail(lambda: Transport("connection refused")), C: ok()},
    )
    with pytest.raises(Transport):
        await walker.call(WF, farm.attempt)
    assert farm.calls == {A: 1, B: 1}
    (exhausted,) = sink.of(EventType.ALL_ATTEMPTS_EXHAUSTED)
    assert exhausted.counters["failed_attempts"] == 2
    assert exhausted.reason == "provider_unavailable"


async def test_the_raised_attempt_error_names_its_route_and_target(
    redis: Redis, key_prefix: str
) -> None:
    """The run store records which route and target a release came from (§15)."""
    farm, _, walker = scripted(redis, key_prefix, routes_of(A, B), {A: fail(down), B: fail(down)})
    with pytest.raises(BackendUnavailable) as raised:
        await walker.call(WF, farm.attempt)
    assert (raised.value.workflow, raised.value.target, raised.value.code) == (
        WF,
        B,
        "UPSTREAM_ERROR",
    )
    unrouted = BackendUnavailable("x")
    assert (unrouted.workflow, unrouted.target) == (None, None)
    unrouted.note_origin(WF, A)
    unrouted.note_origin("embedding", B)  # the first origin noted stays
    assert (unrouted.workflow, unrouted.target) == (WF, A)


async def test_protocol_errors_charge_and_fail_over(redis: Redis, key_prefix: str) -> None:
    farm, _, walker = scripted(
        redis,
        key_prefix,
        routes_of(A, B),
        {A: fail(lambda: DecodeError("decode memory extractor response")), B: ok()},
    )
    await walker.call(WF, farm.attempt)
    assert (await walker.breakers.view(A)).consecutive_failures == 1


async def test_caller_deadline_cut_is_deadline_exceeded_without_charge(
    redis: Redis, key_prefix: str
) -> None:
    farm, sink, walker = scripted(redis, key_prefix, routes_of(A, B), {A: hang(), B: ok()})
    with pytest.raises(DeadlineExceeded) as info:
        await walker.call(WF, farm.attempt, deadline=time.monotonic() + 0.2)
    assert isinstance(info.value.__cause__, TaskTimeout)
    assert farm.calls == {A: 1}
    assert 0 < farm.timeouts[0] <= 0.2  # the attempt's cap is what is left of the deadline
    view = await walker.breakers.view(A)
    assert (view.consecutive_failures, view.window_calls) == (0, 0)
    (cut,) = sink.of(EventType.ATTEMPT_DEADLINE_EXCEEDED)
    assert cut.counters["charged"] == 0


async def test_deadline_already_passed_is_deadline_exceeded(redis: Redis, key_prefix: str) -> None:
    farm, _, walker = scripted(redis, key_prefix, routes_of(A), {A: ok()})
    with pytest.raises(DeadlineExceeded):
        await walker.call(WF, farm.attempt, deadline=time.monotonic() - 1)
    assert farm.total == 0


async def test_timeouts_charge_only_with_a_real_slice(redis: Redis, key_prefix: str) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, fail(lambda: TaskTimeout("job j did not finish", seconds=0.1), delay=0.1))
    farm.set(B, ok())
    short = make_walker(redis, key_prefix, routes_of(A, B), sink)  # min slice 30 s
    await short.call(WF, farm.attempt)
    assert (await short.breakers.view(A)).consecutive_failures == 0
    real_slice = make_walker(
        redis,
        key_prefix,
        routes_of(A, B),
        sink,
        breaker=BreakerConfig(timeout_min_slice_seconds=0.05),
    )
    await real_slice.call(WF, farm.attempt)
    assert (await real_slice.breakers.view(A)).consecutive_failures == 1


async def test_wall_budget_stops_the_walk(redis: Redis, key_prefix: str) -> None:
    farm, _, walker = scripted(
        redis, key_prefix, routes_of(A, B, wall_seconds=0.2), {A: hang(), B: ok()}
    )
    with pytest.raises(TaskTimeout):
        await walker.call(WF, farm.attempt)
    assert farm.calls == {A: 1}
    assert (await walker.breakers.view(A)).consecutive_failures == 0  # 0.2 s is no real slice


async def test_attempt_that_overruns_its_cap_is_cut_by_the_walker(
    redis: Redis, key_prefix: str
) -> None:
    farm, sink = FakeFarm(), RecordingSink()

    async def ignores_timeout(timeout: float) -> str:
        await asyncio.sleep(60)
        return "never"

    farm.set(A, ignores_timeout)
    walker = make_walker(redis, key_prefix, routes_of(A), sink)  # grace 1 s after the cap
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        await walker.call(WF, farm.attempt, deadline=time.monotonic() + 0.1)
    assert time.monotonic() - started < 3


async def test_route_unavailable_and_no_candidates(redis: Redis, key_prefix: str) -> None:
    sink = RecordingSink()
    walker = make_walker(redis, key_prefix, routes_of(A), sink)
    with pytest.raises(RouteUnavailable):
        await walker.call("embedding", FakeFarm().attempt)
    raw = {"routes": {WF: {"targets": [{"provider": "p", "model": "m", "enabled": False}]}}}
    disabled = make_walker(redis, key_prefix, parse_routes(raw, RouteDefaults()), sink)
    with pytest.raises(NoCandidates):
        await disabled.call(WF, FakeFarm().attempt)
    assert sink.types() == [EventType.ROUTE_UNAVAILABLE, EventType.NO_CANDIDATES]
    assert sink.events[0].workflow == "embedding"


async def open_breaker(walker_farm: FakeFarm, walker: object, target: str = A) -> None:
    from llm_client import Walker

    assert isinstance(walker, Walker)
    for _ in range(5):
        with pytest.raises(BackendUnavailable):
            await walker.call(WF, walker_farm.attempt)
    assert (await walker.breakers.view(target)).circuit is Circuit.OPEN


async def test_half_open_twenty_concurrent_callers_send_exactly_one_probe(
    redis: Redis, key_prefix: str
) -> None:
    clock = ShiftedClock()
    farm, sink, walker = scripted(redis, key_prefix, routes_of(A), {A: fail(down)}, clock=clock)
    await open_breaker(farm, walker)
    clock.advance(0.25)  # cooldown 0.2 s elapsed
    answered = 0

    async def twenty_callers() -> list[Any]:
        async def one() -> Any:
            nonlocal answered
            try:
                return await walker.call(WF, farm.attempt)
            finally:
                answered += 1

        return await asyncio.gather(*(one() for _ in range(20)), return_exceptions=True)

    def once_the_others_answered(behaviour: Any) -> Any:
        """The probe answers once the 19 others were refused (10 s at most): on a loaded
        host a caller could reach the gate after a fixed-delay probe had reopened or closed
        the breaker, and a closed one rightly lets it call A."""

        async def behave(timeout: float) -> Any:
            for _ in range(200):
                if answered >= 19:
                    break
                await asyncio.sleep(0.05)
            return await behaviour(timeout)

        return behave

    farm.set(A, once_the_others_answered(fail(down)))
    before = farm.total
    results = await twenty_callers()
    assert farm.total - before == 1
    assert sum(isinstance(r, BackendUnavailable) for r in results) == 1
    assert sum(isinstance(r, AllCircuitsOpen) for r in results) == 19
    view = await walker.breakers.view(A)
    assert view.trips == 2
    assert 0.2 < view.cooldown_remaining_s <= 0.4  # doubled from 0.2 s
    clock.advance(0.45)
    farm.set(A, once_the_others_answered(ok("back")))
    answered = 0
    results = await twenty_callers()
    assert farm.total - before == 2
    assert sum(getattr(r, "value", None) == "back" for r in results) == 1
    assert (await walker.breakers.view(A)).circuit is Circuit.CLOSED
    assert len(sink.of(EventType.CIRCUIT_CLOSED)) == 1
    routed = await walker.call(WF, farm.attempt)
    assert routed.value == "back"


async def test_cancelled_probe_frees_the_slot_for_the_next_caller(
    redis: Redis, key_prefix: str
) -> None:
    clock = ShiftedClock()
    farm, _, walker = scripted(redis, key_prefix, routes_of(A), {A: fail(down)}, clock=clock)
    await open_breaker(farm, walker)
    clock.advance(0.25)  # cooldown 0.2 s elapsed
    farm.set(A, ok(delay=10))
    probe = asyncio.create_task(walker.call(WF, farm.attempt))

    async def in_flight() -> bool:
        return (await walker.breakers.view(A)).probe_in_flight

    await eventually(in_flight, every=0.01)
    probe.cancel()
    with pytest.raises(asyncio.CancelledError):
        await probe
    farm.set(A, ok("next"))
    assert (await walker.call(WF, farm.attempt)).value == "next"


async def test_all_open_fails_open_once_per_interval_fleet_wide(
    redis: Redis, key_prefix: str
) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, fail(down))
    farm.set(B, fail(down))
    slow_cooldown = BreakerConfig(cooldown_seconds=60, cooldown_max_seconds=300)
    routes = routes_of(A, B)
    walker = make_walker(redis, key_prefix, routes, sink, breaker=slow_cooldown, probe_interval=0.3)
    for _ in range(5):
        with pytest.raises(BackendUnavailable):
            await walker.call(WF, farm.attempt)
    assert {(await walker.breakers.view(t)).circuit for t in (A, B)} == {Circuit.OPEN}
    before = dict(farm.calls)
    # Four "worker processes" (separate walkers on the same Redis) call in a loop for ~1 s.
    walkers = [
        make_walker(redis, key_prefix, routes, sink, breaker=slow_cooldown, probe_interval=0.3)
        for _ in range(4)
    ]
    refused = 0
    deadline = time.monotonic() + 1.0
    started = time.monotonic()

    async def hammer(w: object) -> None:
        nonlocal refused
        from llm_client import Walker

        assert isinstance(w, Walker)
        while time.monotonic() < deadline:
            try:
                await w.call(WF, farm.attempt)
            except AllCircuitsOpen:
                refused += 1
            except BackendUnavailable:
                pass
            await asyncio.sleep(0.01)

    await asyncio.gather(*(hammer(w) for w in walkers))
    elapsed = time.monotonic() - started
    probes = farm.calls[A] - before[A]
    assert farm.calls[B] == before[B]  # fail-open probes go to the first target only
    assert 2 <= probes <= int(elapsed / 0.3) + 1
    assert refused >= 2 * probes  # everyone else was refused at once, without farm traffic
    assert len(sink.of(EventType.FAILOPEN_PROBE)) == probes
    assert len(sink.of(EventType.CIRCUIT_OPEN_EXHAUSTION)) >= refused


async def test_route_is_open_is_a_read_only_gate(redis: Redis, key_prefix: str) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, fail(down))
    walker = make_walker(
        redis,
        key_prefix,
        routes_of(A),
        sink,
        breaker=BreakerConfig(cooldown_seconds=60),
        probe_interval=60,
    )
    assert not await walker.route_is_open(WF)
    assert not await walker.route_is_open("embedding")  # no route: not "open", report it instead
    await open_breaker(farm, walker)
    for _ in range(10):
        assert not await walker.route_is_open(WF)  # the fail-open permit is free
    with pytest.raises(BackendUnavailable):  # ... and still there for the probe
        await walker.call(WF, farm.attempt)
    assert await walker.route_is_open(WF)
    with pytest.raises(AllCircuitsOpen):
        await walker.call(WF, farm.attempt)
    await walker.breakers.reset(A)
    assert not await walker.route_is_open(WF)


async def test_events_never_carry_message_text(redis: Redis, key_prefix: str) -> None:
    canary = "CANARY-secret-message-text"
    farm, sink, walker = scripted(
        redis,
        key_prefix,
        routes_of(A, B),
        {
            A: fail(lambda: BackendUnavailable(f"UPSTREAM_ERROR: {canary}", code=canary + " x")),
            B: fail(lambda: Upstream(f"HTTP 503 service unavailable: {canary}", code="HTTP_503")),
        },
    )
    with pytest.raises(Upstream):
        await walker.call(WF, farm.attempt, context={"run_id": "r1", "note": canary + " text"})
    assert sink.events
    for event in sink.events:
        assert canary not in repr(event.as_dict())
        assert event.context.get("run_id") == "r1"
