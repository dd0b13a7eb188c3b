"""Store faults (§7): leases kept for live owners, retried outcome writes, tick budgets.

Pure decisions are pinned by tables; the claim script's lease branch is checked
against its Python twin (:func:`lease_kept_for_owner` + :func:`touch_pulse`) on
random timelines against real Valkey.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from memory_worker.models import RunStatus
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.pipeline.ticks import tick_budgets
from memory_worker.runs import (
    ClaimedRun,
    ClaimResult,
    Pulse,
    RunStore,
    lease_kept_for_owner,
    touch_pulse,
)
from memory_worker.settings import Settings
from memory_worker.storage.connections import backoff_delay, next_failure_count
from tests.support.factories import make_request
from tests.support.runner import tick_runner

T0 = 1_800_000_000_000


@pytest.mark.parametrize(
    ("failures", "base", "cap", "expected"),
    [
        (0, 0.05, 1.0, 0.0),
        (1, 0.05, 1.0, 0.05),
        (2, 0.05, 1.0, 0.1),
        (5, 0.05, 1.0, 0.8),
        (6, 0.05, 1.0, 1.0),
        (1000, 0.05, 1.0, 1.0),
        (3, 0.1, 2.0, 0.4),
    ],
)
def test_backoff_delay(failures: int, base: float, cap: float, expected: float) -> None:
    assert backoff_delay(failures, base=base, cap=cap) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("before", "ok", "after"),
    [(0, True, 0), (0, False, 1), (7, False, 8), (7, True, 0), (1000, True, 0)],
    ids=["steady", "first-failure", "counting", "reset-on-success", "long-outage-reset"],
)
def test_poll_failure_counter(before: int, ok: bool, after: int) -> None:
    assert next_failure_count(before, iteration_ok=ok) == after


@pytest.mark.parametrize(
    ("tick_timeout", "soft", "hard"),
    [(3600.0, 3595.0, 3598.0), (10.0, 9.0, 9.5), (2.0, 1.8, 1.9)],
)
def test_tick_budgets_end_before_arqs_timeout(
    tick_timeout: float, soft: float, hard: float
) -> None:
    assert tick_budgets(tick_timeout) == pytest.approx((soft, hard))
    assert soft < hard < tick_timeout


@pytest.mark.parametrize(
    ("pulse", "now", "expected"),
    [
        (Pulse(None, None), 100, Pulse(100, 100)),  # first touch ever: the store "came back"
        (Pulse(100, 50), 150, Pulse(150, 50)),  # within the gap: continuous
        (Pulse(100, 50), 301, Pulse(301, 301)),  # silence > gap: an outage ended at 301
        (Pulse(100, 50), 300, Pulse(300, 50)),  # exactly the gap: still continuous
        (Pulse(500, 50), 400, Pulse(500, 50)),  # a late clock never moves the pulse back
    ],
)
def test_touch_pulse(pulse: Pulse, now: int, expected: Pulse) -> None:
    assert touch_pulse(pulse, now=now, gap_ms=200) == expected


@pytest.mark.parametrize(
    ("expiry", "listed", "since", "now", "kept"),
    [
        (1000, True, 0, 900, True),  # alive and holding
        (1000, True, 0, 1001, False),  # heartbeat gone: dead
        (1000, False, 0, 900, False),  # alive but dropped the run
        (None, True, 0, 900, False),  # never registered / deregistered
        (1000, True, 5000, 5500, True),  # store came back at 5000: grace of one TTL
        (1000, True, 5000, 6001, False),  # grace over, no heartbeat since: dead
        (1000, False, 5000, 5500, False),  # grace never covers a run it dropped
    ],
    ids=["alive", "dead", "dropped", "unknown", "post-outage-grace", "grace-over", "grace-dropped"],
)
def test_lease_kept_for_owner(
    expiry: int | None, listed: bool, since: int, now: int, kept: bool
) -> None:
    assert (
        lease_kept_for_owner(
            owner_expiry_ms=expiry,
            owner_lists_run=listed,
            since_ms=since,
            now=now,
            heartbeat_ttl_ms=1000,
        )
        is kept
    )


@pytest.fixture
def quick(settings: Settings) -> Settings:
    # heartbeat TTL 1.5 s = the pulse gap, lease 2 s
    return settings.model_copy(update={"worker_heartbeat_seconds": 0.5, "lease_seconds": 2.0})


async def _status(store: RunStore, rid: str) -> tuple[RunStatus, int, str | None]:
    run = await store.get(rid)
    return run.status, run.attempts, run.lease_owner


async def _claimed_by_a(store: RunStore, *, heartbeat: bool) -> tuple[str, ClaimedRun]:
    """One run enqueued and claimed by owner A at T0 (after A's first heartbeat when asked)."""
    rid = (await store.enqueue(make_request(1), at_ms=T0)).run_id
    assert rid
    if heartbeat:
        await store.heartbeat("A", [], concurrency=1, at_ms=T0)
    claim = await store.claim("A", at_ms=T0)
    assert claim is not None
    assert claim.id == rid
    return rid, claim


async def test_returning_owner_renews_its_expired_lease_after_an_outage(
    redis: Any, quick: Settings
) -> None:
    store = RunStore(redis, quick)
    rid, claim = await _claimed_by_a(store, heartbeat=True)
    # the store was away for 60 s: nobody could heartbeat or renew
    back = T0 + 60_000
    assert await store.claim("B", at_ms=back) is None  # A gets one heartbeat TTL of grace
    assert await store.renew(claim, at_ms=back + 100)  # A is back: nobody took it
    assert await store.complete(claim, {"cards": 1}, at_ms=back + 200)
    run = await store.get(rid)
    assert (run.status, run.attempts, run.error_log) == (RunStatus.COMPLETED, 1, [])


async def test_dead_owner_loses_its_lease_and_the_attempt_counts(
    redis: Any, quick: Settings
) -> None:
    store = RunStore(redis, quick)
    rid, claim = await _claimed_by_a(store, heartbeat=True)
    # A was killed -9: B keeps the store's pulse going, A's heartbeat lapses
    for t in range(T0, T0 + 3000, 500):
        await store.heartbeat("B", [], concurrency=1, at_ms=t)
    taken = await store.claim("B", at_ms=T0 + 3000)
    assert taken is not None
    assert taken.id == rid
    assert taken.attempts == 2  # a crash still spends one (poison-run protection)
    assert not await store.renew(claim, at_ms=T0 + 3100)  # definite: another owner


async def test_live_owner_that_dropped_the_run_loses_it(redis: Any, quick: Settings) -> None:
    store = RunStore(redis, quick)
    rid, _ = await _claimed_by_a(store, heartbeat=False)
    for t in range(T0, T0 + 3000, 500):
        await store.heartbeat("A", [], concurrency=1, at_ms=t)  # alive, holds nothing
    taken = await store.claim("B", at_ms=T0 + 3000)
    assert taken is not None
    assert taken.id == rid


async def test_live_owner_keeps_its_expired_lease(redis: Any, quick: Settings) -> None:
    store = RunStore(redis, quick)
    rid, _ = await _claimed_by_a(store, heartbeat=False)
    for t in range(T0, T0 + 3000, 500):
        await store.heartbeat("A", [rid], concurrency=1, at_ms=t)
    assert await store.claim("B", at_ms=T0 + 3000) is None
    assert await _status(store, rid) == (RunStatus.PROCESSING, 1, "A")
    counters = await redis.hgetall(store.keys.counters)
    assert int(counters[b"lease_kept_for_owner"]) == 1


@pytest.mark.parametrize("keep_listed", [False, True])
async def test_a_heartbeat_sent_while_a_claim_is_in_flight_keeps_the_claimed_run_listed(
    redis: Any, quick: Settings, keep_listed: bool
) -> None:
    """A's claim lands, then A's heartbeat whose ``held`` was read before the claim's answer
    (found by the chaos soak): replacing the list made A's live lease look like a lost
    worker's once the store paused longer than the lease — B took the run, attempt 2."""
    store = RunStore(redis, quick)
    rid, claim = await _claimed_by_a(store, heartbeat=True)
    await store.heartbeat("A", [], concurrency=1, at_ms=T0 + 100, keep_listed=keep_listed)
    listed = await redis.hget(store.keys.worker_runs, "A")
    # the store pauses for 10 s (lease 2 s): nobody writes; then B claims first
    taken = await store.claim("B", at_ms=T0 + 10_000)
    if not keep_listed:  # the old heartbeat: the list lost the run, B took it
        assert listed is None
        assert taken is not None
        assert taken.attempts == 2
        return
    assert listed == rid.encode()
    assert taken is None  # A gets its grace, renews and completes on its only attempt
    assert await store.renew(claim, at_ms=T0 + 10_100)
    assert await store.complete(claim, {"cards": 1}, at_ms=T0 + 10_200)
    assert await _status(store, rid) == (RunStatus.COMPLETED, 1, None)


async def test_a_worker_heartbeat_between_a_claim_and_its_answer_keeps_the_run_listed(
    redis: Any, quick: Settings
) -> None:
    """The worker's side: its heartbeat fires after the claim landed and before the tick
    put the run in ``held`` — the run stays listed, and while the run is processed the
    list is exact again."""
    store = RunStore(redis, quick)
    rid = (await store.enqueue(make_request(1))).run_id
    assert rid is not None
    seen: dict[str, Any] = {}

    class Processor:
        async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
            await runner.heartbeat()
            seen["processing"] = await redis.hget(store.keys.worker_runs, runner.worker_id)
            return ProcessResult(summary={})

    runner = tick_runner(settings=quick, redis=redis, processor=Processor())
    claim = runner.store.claim_detailed

    async def claim_then_heartbeat(owner: str, *, at_ms: int | None = None) -> ClaimResult:
        result = await claim(owner, at_ms=at_ms)
        await runner.heartbeat()  # the heartbeat task ran before the tick saw the answer
        seen["in_flight"] = await redis.hget(store.keys.worker_runs, runner.worker_id)
        return result

    runner.store.claim_detailed = claim_then_heartbeat  # type: ignore[method-assign]
    assert await runner.tick("job-1") == "completed"
    assert seen == {"in_flight": rid.encode(), "processing": rid.encode()}
    await runner.heartbeat()
    assert await redis.hget(store.keys.worker_runs, runner.worker_id) is None  # exact


async def test_a_heartbeat_keeping_listed_runs_adds_to_them_without_repeats(
    redis: Any, quick: Settings
) -> None:
    store = RunStore(redis, quick)
    await redis.hset(store.keys.worker_runs, "A", "r1,r2")
    await store.heartbeat("A", ["r2", "r3"], concurrency=1, at_ms=T0, keep_listed=True)
    listed = (await redis.hget(store.keys.worker_runs, "A")).decode().split(",")
    assert sorted(listed) == ["r1", "r2", "r3"]
    await store.heartbeat("A", ["r3"], concurrency=1, at_ms=T0 + 500)  # exact again
    assert await redis.hget(store.keys.worker_runs, "A") == b"r3"
    await store.heartbeat("A", [], concurrency=1, at_ms=T0 + 1000, keep_listed=True)
    assert await redis.hget(store.keys.worker_runs, "A") == b"r3"


async def test_claim_script_agrees_with_its_twin_on_random_timelines(
    redis: Any, quick: Settings
) -> None:
    """Random heartbeats of the owner A and a bystander B, then B claims: kept ⇔ twin."""
    rng = random.Random(9)
    gap, ttl = 1500, 1500
    for case in range(40):
        s = quick.model_copy(update={"key_prefix": f"{quick.key_prefix}tw{case}:"})
        store = RunStore(redis, s)
        rid, _ = await _claimed_by_a(store, heartbeat=False)
        pulse = touch_pulse(Pulse(None, None), now=T0, gap_ms=gap)
        expiry: int | None = None
        listed = True  # the claim itself lists the run under A
        now = T0
        for _ in range(rng.randint(0, 8)):
            now += rng.choice([200, 500, 900, 1200, 4000])
            who = rng.choice(["A", "A", "B"])
            held = [rid] if rng.random() < 0.7 else []
            await store.heartbeat(who, held if who == "A" else [], concurrency=1, at_ms=now)
            pulse = touch_pulse(pulse, now=now, gap_ms=gap)
            if who == "A":
                expiry, listed = now + ttl, bool(held)
        claim_at = max(now, T0 + 2000) + rng.choice([1, 300, 1400, 1600, 5000])
        pulse = touch_pulse(pulse, now=claim_at, gap_ms=gap)
        expected_kept = lease_kept_for_owner(
            owner_expiry_ms=expiry,
            owner_lists_run=listed,
            since_ms=pulse.since,
            now=claim_at,
            heartbeat_ttl_ms=ttl,
        )
        taken = await store.claim("B", at_ms=claim_at)
        assert (taken is None) is expected_kept, f"case {case}"
