"""A tick's queue cost does not grow with the fleet's ticks in flight.

Scheduling counts pending ticks with set intersections (no command per queued tick), and
a worker's poll offers only ticks nobody started (arq's own poll offers every running one too).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from arq.constants import in_progress_key_prefix

from memory_worker.keys import Keys
from memory_worker.pipeline.ticks import Mode, TickPlan, TickQueue
from memory_worker.settings import Settings
from memory_worker.worker.main import create_worker

T0 = 1_800_000_000_000


async def commands(admin: Any) -> int:
    stats = await admin.info("commandstats")
    return sum(int(v["calls"]) for v in stats.values())


async def start_all(queue: TickQueue, redis: Any, n: int, at_ms: int = T0) -> None:
    """``n`` ticks queued and started, as MemoryWorker's start leaves them."""
    await queue.schedule(TickPlan(Mode.AMPLIFY, base=n), target=1, at_ms=at_ms)
    for job_id in await redis.zrange(queue.keys.arq_queue, 0, -1):
        await redis.set(in_progress_key_prefix + job_id.decode(), b"1", px=60_000)
        await redis.zadd(queue.keys.ticks_started, {job_id: at_ms + 60_000})


async def test_scheduling_costs_the_same_with_2_or_80_ticks_in_flight(
    admin: Any, private_valkey: Any
) -> None:
    cost = []
    for n, prefix in ((2, "s2:"), (80, "s80:")):
        queue = TickQueue(admin, Keys(prefix))
        await start_all(queue, admin, n)
        await queue.schedule(TickPlan(Mode.AMPLIFY, base=1), target=1, at_ms=T0)  # script loaded
        before = await commands(admin)
        result = await queue.schedule(
            TickPlan(Mode.AMPLIFY, base=1, extra_below_target=1), target=200, at_ms=T0
        )
        cost.append(await commands(admin) - before)
        assert result.pending_before == 1  # the warm-up tick; the n started ones are not pending
        counts = await queue.counts(at_ms=T0)
        assert counts.pending == 3  # the exact scan agrees
    assert cost[0] == cost[1]


@pytest.mark.parametrize("zdiff", [True, False], ids=["zdiff", "redis6.0"])
async def test_the_poll_offers_only_ticks_nobody_started(
    redis: Any, settings: Settings, zdiff: bool
) -> None:
    queue = TickQueue(redis, Keys(settings.key_prefix))
    now = int(time.time() * 1000) - 1000
    await start_all(queue, redis, 5, now)  # running elsewhere in the fleet
    await queue.schedule(TickPlan(Mode.AMPLIFY, base=2), target=1, at_ms=now)
    started = {m for m in await redis.zrange(queue.keys.ticks_started, 0, -1)}
    worker = create_worker(settings, redis, burst=True, handle_signals=False)
    worker.has_zdiff = zdiff  # False: as after a Redis 6.0 server refused ZDIFF
    worker.PRUNE_STARTED_MS = 60_000  # a slow machine's calls stay within it
    offered = await worker._ready_jobs(100)
    assert len(offered) == 2
    assert not set(offered) & started
    # a started tick whose in-progress lease lapsed (its worker died) is offered again once
    # its entry is pruned: by the next tick's schedule, or by a poll PRUNE_STARTED_MS later
    await redis.zadd(queue.keys.ticks_started, {next(iter(started)): 1})
    assert len(await worker._ready_jobs(100)) == 2  # this worker pruned it a moment ago
    assert worker._started_pruned_at is not None
    worker._started_pruned_at -= worker.PRUNE_STARTED_MS
    assert len(await worker._ready_jobs(100)) == 3
