"""§4/§5/§6 with the walker: provider_error fails over and charges; busy answers never do.

Fake transports, real Redis breakers (see ``tests/routing_fakes.py``).
"""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from llm_client import (
    AllCircuitsOpen,
    BreakerConfig,
    CapacityWaitTimeout,
    Circuit,
    EventType,
    NoCandidates,
    Upstream,
)
from memory_worker.runs.policy import Verdict, decide
from tests.support.clock import ShiftedClock
from tests.support.routing_fakes import (
    FakeFarm,
    RecordingSink,
    breaker_state,
    fail,
    make_walker,
    ok,
    routes_of,
    scripted,
)

WF = "memory_extraction"
A, B = "farm/a", "hosted/b"


def crashed() -> Upstream:
    return Upstream(
        "upstream returned status 500: Internal Server Error", code="HTTP_500", status_code=500
    )


def busy(text: str) -> Upstream:
    return Upstream(f"upstream returned status 503: {text}", code="HTTP_503", status_code=503)


async def test_a_500_fails_over_and_charges_the_breaker(redis: Redis, key_prefix: str) -> None:
    farm, sink, walker = scripted(
        redis, key_prefix, routes_of(A, B), {A: fail(crashed), B: ok("from-b")}
    )
    routed = await walker.call(WF, farm.attempt)
    assert (routed.value, routed.target.id) == ("from-b", B)
    view = await walker.breakers.view(A)
    assert (view.consecutive_failures, view.window_failures) == (1, 1)
    (failed,) = sink.of(EventType.ATTEMPT_FAILED)
    assert (failed.reason, failed.error_code, failed.counters["charged"]) == (
        "provider_error",
        "HTTP_500",
        1,
    )


async def test_a_node_answering_500_to_everything_is_quarantined(
    redis: Redis, key_prefix: str
) -> None:
    farm, _, walker = scripted(redis, key_prefix, routes_of(A, B), {A: fail(crashed), B: ok()})
    for _ in range(5):
        assert (await walker.call(WF, farm.attempt)).target.id == B
    assert (await walker.breakers.view(A)).circuit is Circuit.OPEN
    routed = await walker.call(WF, farm.attempt)  # the open node is skipped
    assert [r.target for r in routed.attempts] == [B]
    assert farm.calls[A] == 5


async def test_a_walk_ending_on_provider_error_fails_the_run(redis: Redis, key_prefix: str) -> None:
    farm, sink, walker = scripted(
        redis, key_prefix, routes_of(A, B), {A: fail(crashed), B: fail(crashed)}
    )
    with pytest.raises(Upstream) as info:
        await walker.call(WF, farm.attempt)
    assert farm.calls == {A: 1, B: 1}
    assert decide(info.value).verdict is Verdict.FAIL
    assert decide(info.value).reason == "provider_error"
    (exhausted,) = sink.of(EventType.ALL_ATTEMPTS_EXHAUSTED)
    assert exhausted.reason == "provider_error"


@pytest.mark.parametrize("other", ["open", "busy"])
async def test_a_crash_while_the_other_target_could_not_serve_releases(
    redis: Redis, key_prefix: str, other: str
) -> None:
    """Only a call that crashes *every* target fails its run; a skipped target means the
    route could not serve it (the chaos soak found a 500 on one node + an open breaker on
    the other spending attempts)."""
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, fail(crashed))
    breaker = BreakerConfig(failure_threshold=2, cooldown_seconds=60, cooldown_max_seconds=60)
    route = routes_of(A, B, slot_wait_seconds=0.3, slot_poll_seconds=0.1)
    walker = make_walker(redis, key_prefix, route, sink, breaker=breaker)
    if other == "open":  # B crashed on its own route until its breaker opened
        farm.set(B, fail(crashed))
        only_b = make_walker(redis, key_prefix, routes_of(B), sink, breaker=breaker)
        for _ in range(2):
            with pytest.raises(Upstream):
                await only_b.call(WF, farm.attempt)
        assert (await walker.breakers.view(B)).circuit is Circuit.OPEN
        assert (await walker.breakers.view(A)).circuit is Circuit.CLOSED
    else:
        farm.set(B, fail(lambda: busy("server busy")))
    # A walk that ends on B's busy answer ends on capacity (§6) — released either way.
    ending = NoCandidates if other == "open" else CapacityWaitTimeout
    with pytest.raises(ending) as info:
        await walker.call(WF, farm.attempt)
    assert isinstance(info.value.__cause__, Upstream)
    assert decide(info.value).verdict is Verdict.RELEASE
    assert farm.calls[A] >= 1


async def test_once_every_target_is_open_the_run_is_released(redis: Redis, key_prefix: str) -> None:
    farm, sink = FakeFarm(), RecordingSink()
    farm.set(A, fail(crashed))
    farm.set(B, fail(crashed))
    breaker = BreakerConfig(failure_threshold=2, cooldown_seconds=0.2, cooldown_max_seconds=5)
    clock = ShiftedClock()
    walker = make_walker(redis, key_prefix, routes_of(A, B), sink, breaker=breaker, clock=clock)
    verdicts = []
    for _ in range(2):  # the walks that trip both breakers fail their runs
        with pytest.raises(Upstream) as info:
            await walker.call(WF, farm.attempt)
        verdicts.append(decide(info.value).verdict)
    assert verdicts == [Verdict.FAIL, Verdict.FAIL]
    assert {(await walker.breakers.view(t)).circuit for t in (A, B)} == {Circuit.OPEN}
    # Quarantined route: the fleet's fail-open probe crashes again → a routing error, released.
    with pytest.raises(NoCandidates) as probed:
        await walker.call(WF, farm.attempt)
    assert isinstance(probed.value.__cause__, Upstream)
    assert decide(probed.value).verdict is Verdict.RELEASE
    # Every other caller in the interval is refused without farm traffic, and released too.
    before = farm.total
    with pytest.raises(AllCircuitsOpen) as refused:
        await walker.call(WF, farm.attempt)
    assert farm.total == before
    assert decide(refused.value).verdict is Verdict.RELEASE
    # After the cooldown the half-open probe also crashes: still an outage, still released.
    clock.advance(0.25)
    with pytest.raises(NoCandidates):
        await walker.call(WF, farm.attempt)
    assert farm.total == before + 1
    # The node heals: the next probe closes its breaker and serves.
    clock.advance(0.45)
    farm.set(A, ok("back"))
    routed = await walker.call(WF, farm.attempt)
    assert routed.value == "back"
    assert (await walker.breakers.view(A)).circuit is Circuit.CLOSED


@pytest.mark.parametrize(
    "text",
    [
        "server busy",
        "queue full",
        "too many requests",
        "try again later",
        "draining",
        "model loading",
        "insufficient memory",
        "out of memory",
        "kv cache full",
        "token budget exhausted",
    ],
)
async def test_busy_answers_never_quarantine_a_healthy_node(
    redis: Redis, key_prefix: str, text: str
) -> None:
    farm, sink, walker = scripted(
        redis,
        key_prefix,
        routes_of(A, B, max_hops=1),
        {A: fail(lambda: busy(text)), B: ok("from-b")},
    )
    for _ in range(10):
        assert (await walker.call(WF, farm.attempt)).target.id == B
    assert await breaker_state(walker, A) == (Circuit.CLOSED, 0, 0)
    assert EventType.CIRCUIT_OPENED not in sink.types()
