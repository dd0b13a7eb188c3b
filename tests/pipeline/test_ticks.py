"""§8 tick planning: the pure table, and the Lua that applies it atomically."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import orjson
import pytest
from arq.constants import in_progress_key_prefix

from memory_worker.keys import Keys
from memory_worker.pipeline.ticks import (
    GOING_ON,
    RAMP_CHECK_SECONDS,
    Mode,
    TickOutcome,
    TickPlan,
    TickQueue,
    goes_on,
    plan_followups,
    ramp_check_due,
    ticks_to_add,
)
from memory_worker.settings import Settings

T0 = 1_800_000_000_000


@pytest.mark.parametrize(
    ("outcome", "mode", "base", "extra", "delay"),
    [
        (TickOutcome.COMPLETED, Mode.AMPLIFY, 1, 1, 0.0),
        (TickOutcome.FAILED, Mode.AMPLIFY, 1, 0, 0.0),
        (TickOutcome.IDLE, Mode.AMPLIFY, 0, 0, 0.0),
        (TickOutcome.STORE_ERROR, Mode.PROBE, 1, 0, 15.0),
        (TickOutcome.DEFERRED, Mode.PROBE, 1, 0, 15.0),
        (TickOutcome.SHUTDOWN, Mode.PROBE, 1, 0, 0.0),
        (TickOutcome.ABANDONED, Mode.PROBE, 1, 0, 0.0),
    ],
)
def test_followup_table(
    outcome: TickOutcome, mode: Mode, base: int, extra: int, delay: float
) -> None:
    assert plan_followups(outcome, retry_interval=15.0) == TickPlan(mode, base, extra, delay)


@pytest.mark.parametrize(
    ("plan", "pending", "running", "target", "expected"),
    [
        (TickPlan(Mode.AMPLIFY, 1, 1), 0, 1, 4, 2),  # ramp up
        (TickPlan(Mode.AMPLIFY, 1, 1), 2, 4, 4, 2),  # 2 + 1 < 4
        (TickPlan(Mode.AMPLIFY, 1, 1), 3, 4, 4, 1),  # at target: replace itself only
        (TickPlan(Mode.AMPLIFY, 1, 1), 9, 4, 4, 1),
        (TickPlan(Mode.AMPLIFY, 1, 1), 0, 0, 1, 1),  # target 1: never more than one
        (TickPlan(Mode.AMPLIFY, 1, 0), 0, 0, 4, 1),  # failed run: one follow-up
        (TickPlan(Mode.PROBE, 1, 0, 15), 0, 3, 4, 1),  # deferral: only when none pending
        (TickPlan(Mode.PROBE, 1, 0, 15), 1, 0, 4, 0),
        (TickPlan(Mode.IF_IDLE, 1), 0, 0, 4, 1),
        (TickPlan(Mode.IF_IDLE, 1), 0, 1, 4, 0),  # a live tick is running: no kick
        (TickPlan(Mode.IF_IDLE, 1), 1, 0, 4, 0),
        (
            TickPlan(Mode.IF_NONE_PENDING, 1),
            0,
            2,
            4,
            1,
        ),  # expired leases: running ticks may be dead
        (TickPlan(Mode.AMPLIFY, 0, 0), 0, 0, 4, 0),
        # a productive tick going on itself is its own base: only the ramp's extra
        (GOING_ON, 0, 1, 4, 1),
        (GOING_ON, 2, 4, 4, 1),  # 2 + 1 < 4
        (GOING_ON, 3, 4, 4, 0),  # at target: nothing queued
        (GOING_ON, 0, 0, 1, 0),  # target 1: the tick itself is the one
    ],
)
def test_ticks_to_add(
    plan: TickPlan, pending: int, running: int, target: int, expected: int
) -> None:
    assert ticks_to_add(plan, pending=pending, running=running, target=target) == expected


@pytest.fixture(params=["server", "redis6"])
def queue(
    request: pytest.FixtureRequest, redis: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> TickQueue:
    """The tick queue as this server runs it, and as a Redis 6 server (no ZINTERCARD) would."""
    if request.param == "redis6":
        import memory_worker.pipeline.ticks as ticks

        line = "local has_zintercard = redis.REDIS_VERSION_NUM ~= nil"
        assert line in ticks._SCHEDULE
        monkeypatch.setattr(
            ticks, "_SCHEDULE", ticks._SCHEDULE.replace(line, "local has_zintercard = false --")
        )
    return TickQueue(redis, Keys(settings.key_prefix))


PLANS = [
    TickPlan(Mode.AMPLIFY, 1, 1),
    TickPlan(Mode.AMPLIFY, 1, 0),
    TickPlan(Mode.PROBE, 1, 0, 15),
    TickPlan(Mode.IF_IDLE, 1),
    TickPlan(Mode.IF_NONE_PENDING, 1),
    GOING_ON,
]


async def test_lua_matches_the_pure_table(queue: TickQueue, redis: Any) -> None:
    """Drive every plan from many fleet states; the script adds what ticks_to_add says."""
    for pending, running, in_progress, plan in itertools.product(
        range(3), range(2), range(2), PLANS
    ):
        seeds = [queue.keys.tick_job_id(f"seed{i}") for i in range(4)]
        await redis.delete(
            queue.keys.arq_queue,
            queue.running_key,
            queue.keys.ticks_queued,
            queue.keys.ticks_started,
            *(in_progress_key_prefix + s for s in seeds),
        )
        for i in range(pending + in_progress):
            job_id = queue.keys.tick_job_id(f"seed{i}")
            # as queued by TickQueue.schedule
            await redis.zadd(queue.keys.arq_queue, {job_id: T0})
            await redis.zadd(queue.keys.ticks_queued, {job_id: T0 + 86_400_000})
            if i >= pending:  # as started by MemoryWorker: arq's in-progress key, "started"
                await redis.set(in_progress_key_prefix + job_id, b"1", px=60_000)
                await redis.zadd(queue.keys.ticks_started, {job_id: T0 + 60_000})
        for i in range(running):
            await redis.zadd(queue.running_key, {f"run{i}": T0 + 60_000})
        await redis.zadd(
            queue.keys.arq_queue, {queue.keys.cron_prefix + "safety_net:1": T0}
        )  # not a tick
        result = await queue.schedule(plan, target=3, at_ms=T0)
        expected = ticks_to_add(plan, pending=pending, running=running, target=3)
        counted = running if plan.mode is Mode.IF_IDLE else None  # only if_idle reads it
        assert (result.added, result.pending_before, result.running) == (expected, pending, counted)
        counts = await queue.counts(at_ms=T0)
        assert counts.pending == pending + expected


async def test_concurrent_probes_leave_exactly_one(queue: TickQueue) -> None:
    plan = plan_followups(TickOutcome.DEFERRED, retry_interval=15)
    results = await asyncio.gather(*(queue.schedule(plan, target=8, at_ms=T0) for _ in range(20)))
    assert sum(r.added for r in results) == 1
    counts = await queue.counts(at_ms=T0)
    assert (counts.pending, counts.delayed) == (1, 1)
    ((_job_id, score),) = await queue.redis.zrange(queue.keys.arq_queue, 0, -1, withscores=True)
    assert score == T0 + 15_000  # not dequeued before the retry interval


async def test_job_blob_is_a_real_arq_job(queue: TickQueue, redis: Any) -> None:
    from arq.constants import job_key_prefix
    from arq.jobs import deserialize_job

    from memory_worker.pipeline.jobcodec import load_job

    await queue.schedule(TickPlan(Mode.AMPLIFY, 1), target=1, at_ms=T0)
    (job_id,) = await redis.zrange(queue.keys.arq_queue, 0, -1)
    raw = await redis.get(job_key_prefix + job_id.decode())
    assert orjson.loads(raw)["f"] == "memory_tick"  # JSON, not pickle (row 21)
    job = deserialize_job(raw, deserializer=load_job)
    assert job.function == "memory_tick"
    assert queue.keys.queue_tag in job_id.decode()  # arq's keys hash with the queue


@pytest.mark.parametrize(
    ("outcome", "stopping", "elapsed", "expected"),
    [
        (TickOutcome.COMPLETED, False, 0.0, True),
        (TickOutcome.COMPLETED, False, 29.9, True),
        (TickOutcome.COMPLETED, False, 30.0, False),  # the loop window ended
        (TickOutcome.COMPLETED, True, 1.0, False),  # a stopping worker claims nothing more
        *((o, False, 1.0, False) for o in TickOutcome if o is not TickOutcome.COMPLETED),
    ],
)
def test_only_a_completed_run_in_the_window_goes_on(
    outcome: TickOutcome, stopping: bool, elapsed: float, expected: bool
) -> None:
    assert goes_on(outcome, stopping, elapsed, 30.0) is expected
    assert goes_on(outcome, stopping, elapsed, 0.0) is False  # 0: one run per tick job


@pytest.mark.parametrize(
    ("first", "checked_at", "now", "expected"),
    [
        (True, 100.0, 100.1, True),  # a job's first completion always asks
        (False, None, 100.0, True),  # the last check queued an extra: still ramping
        (False, 100.0, 100.0 + RAMP_CHECK_SECONDS - 0.01, False),  # at target: once a second
        (False, 100.0, 100.0 + RAMP_CHECK_SECONDS, True),
    ],
)
def test_a_going_on_tick_asks_for_the_ramp_while_below_target_then_once_a_second(
    first: bool, checked_at: float | None, now: float, expected: bool
) -> None:
    assert ramp_check_due(first=first, checked_at=checked_at, now=now) is expected
