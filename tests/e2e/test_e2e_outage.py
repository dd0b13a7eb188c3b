"""End-to-end (§7, §8): real worker processes, real Redis, the farm simulator over HTTP.

User stories: "a farm outage never loses work, never burns a run's attempts,
never makes the fleet spin" and "a crashed or redeployed worker loses nothing".
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.pipeline.ticks import TickQueue
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from tests.support.factories import make_request
from tests.support.harness import Fleet, completed_run, eventually, workers_up

UPSTREAM_ERROR = Fault(
    kind=FaultKind.JOB_FAILED,
    code="UPSTREAM_ERROR",
    message="[Errno -3] Temporary failure in name resolution",
)

pytestmark = pytest.mark.slow


@pytest.fixture
def fleet(settings: Settings, sim: FarmSimulator, tmp_path: Path) -> Any:
    fleet = Fleet(settings, tmp_path, env_overrides={"discovery_base_url": sim.base_url})
    yield fleet
    fleet.stop_all()


async def enqueue_runs(redis: Any, settings: Settings, n: int) -> list[str]:
    store = RunStore(redis, settings)
    ids = []
    for i in range(n):
        result = await store.enqueue(make_request(1000 + i, hour=i % 24))
        assert result.run_id
        ids.append(result.run_id)
    return ids


async def test_unreachable_backend_releases_and_timeout_spends(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    store = RunStore(redis, settings)
    (rid,) = await enqueue_runs(redis, settings, 1)
    sim.set_fault("*", UPSTREAM_ERROR)
    await workers_up(fleet.start(1))  # (bounds below are timed from its start-up's end)

    async def released() -> bool:
        return (await store.get(rid)).releases >= 1

    await eventually(released)
    run = await store.get(rid)
    assert run.attempts == 0
    assert run.error_log == []
    assert not run.retired

    # The extraction job never finishes: its task budget expires and the run fails. (A hung
    # embedder would release instead, §7: the embedder is a side service.)
    sim.clear_faults()
    sim.set_fault("llm-openai", Fault(kind=FaultKind.HANG))

    async def failed() -> bool:
        return (await store.get(rid)).status is RunStatus.FAILED

    await eventually(failed, timeout=30)
    run = await store.get(rid)
    assert run.attempts == 1
    assert [e.code for e in run.error_log] == ["task_timeout"]


@pytest.mark.soak
async def test_outage_soak_spends_nothing_and_never_spins(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    """200 runs, 3 workers, a long UPSTREAM_ERROR outage, then recovery: every run once."""
    # 15 h of 15 s intervals by default (SOAK_INTERVALS=7200 for 30 h: CI time is budgeted)
    intervals = int(os.environ.get("SOAK_INTERVALS", "3600"))
    interval = 0.02
    ids = await enqueue_runs(redis, settings, 200)
    store = RunStore(redis, settings)
    ticks = TickQueue(redis, Keys(settings.key_prefix))
    sim.set_fault("*", UPSTREAM_ERROR)
    fleet.env_overrides["consolidation_backend_retry_interval"] = interval
    fleet.start(3)
    await RunStore(redis, settings).has_claimable()
    from memory_worker.api import MemoryQueue
    from memory_worker.storage.connections import RedisHandle

    queue = MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), settings)
    await queue.wake()

    def farm_calls() -> int:
        return sum(service["submits"] for service in sim.stats().values())

    await eventually(lambda: farm_calls() >= 3, timeout=20)
    loop = asyncio.get_running_loop()
    first_interval_end = loop.time() + 1.0
    max_pending = 0
    end = loop.time() + intervals * interval
    while loop.time() < end:
        counts = await ticks.counts()
        if loop.time() > first_interval_end:
            max_pending = max(max_pending, counts.pending)
        await asyncio.sleep(interval / 2)
    probes = farm_calls()
    assert max_pending <= 1
    # O(1) work per interval: at most one probe per interval (plus the first burst)
    assert probes <= intervals + 10
    by_status = await store.counts()
    assert by_status["retired"] == 0
    assert by_status["failed"] == 0
    runs = await store.get_many(ids)
    assert all(r.error_log == [] for r in runs)
    # the probe in flight right now holds one claimed attempt; it is refunded on release
    assert all(r.attempts == 0 for r in runs if r.status is not RunStatus.PROCESSING)
    assert sum(r.status is RunStatus.PROCESSING for r in runs) <= 1

    sim.clear_faults()

    async def all_completed() -> bool:
        return (await store.counts())["completed"] == 200

    await eventually(all_completed, timeout=90)
    runs = await store.get_many(ids)
    assert all(r.attempts == 1 for r in runs)  # each completed on its first real attempt
    counters = await redis.hgetall(Keys(settings.key_prefix).counters)
    assert int(counters[b"completed"]) == 200  # once each


async def test_kill_9_mid_run_is_reclaimed_and_completed_once(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    store = RunStore(redis, settings)
    (rid,) = await enqueue_runs(redis, settings, 1)
    sim.set_fault("llm-openai", Fault(kind=FaultKind.SLOW, seconds=3.0, times=1))
    (victim,) = fleet.start(1)
    await workers_up([victim])  # (bounds below are timed from its start-up's end)
    await eventually(lambda: sim.submits("llm-openai") == 1, timeout=20)
    victim.kill()
    await workers_up(fleet.start(1))

    run = await completed_run(lambda: store.get(rid), timeout=30)
    assert run.attempts == 2  # the crashed attempt counted; the run was not retired
    counters = await redis.hgetall(Keys(settings.key_prefix).counters)
    assert int(counters[b"completed"]) == 1
    assert int(counters[b"claimed:lease_expired"]) == 1


async def test_sigterm_mid_run_releases_with_attempt_refunded(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    store = RunStore(redis, settings)
    (rid,) = await enqueue_runs(redis, settings, 1)
    sim.set_fault("llm-openai", Fault(kind=FaultKind.SLOW, seconds=30.0))
    (worker,) = fleet.start(1)
    await workers_up([worker])  # (bounds below are timed from its start-up's end)
    await eventually(lambda: sim.submits("llm-openai") == 1, timeout=20)
    worker.terminate()
    assert worker.wait(timeout=15) == 0
    run = await store.get(rid)
    assert run.status is RunStatus.QUEUED
    assert run.attempts == 0
    assert run.releases == 1
    assert run.error_log == []


async def test_redis_restart_mid_processing_loses_nothing(
    settings: Settings, sim: FarmSimulator, tmp_path: Path
) -> None:
    from memory_worker.storage.connections import client_from_url
    from memory_worker.storage.embedded import EmbeddedValkey

    server = EmbeddedValkey(tmp_path / "valkey").ensure()
    own = settings.model_copy(update={"redis_url": server.url})
    redis = client_from_url(server.url)
    fleet = Fleet(own, tmp_path, env_overrides={"discovery_base_url": sim.base_url})
    try:
        ids = await enqueue_runs(redis, own, 6)
        sim.set_fault("llm-openai", Fault(kind=FaultKind.SLOW, seconds=1.5, times=2))
        await workers_up(fleet.start(2))  # (bounds below are timed from its start-up's end)
        await eventually(lambda: sim.submits("llm-openai") >= 1, timeout=20)
        server.stop()  # SIGTERM: the AOF is flushed; workers see connection errors
        await asyncio.sleep(2.0)
        assert all(w.proc.poll() is None for w in fleet.workers), fleet.logs()  # still alive
        server.ensure()  # same data dir, same port
        store = RunStore(redis, own)

        async def all_done() -> bool:
            try:
                return (await store.counts())["completed"] == 6
            except RedisConnectionError:  # our own client may see the restart too
                return False

        await eventually(all_done, timeout=60)
        runs = await store.get_many(ids)
        assert all(r.status is RunStatus.COMPLETED for r in runs)
        assert any("redis_unavailable" in w.log() for w in fleet.workers)
    finally:
        fleet.stop_all()
        await redis.aclose()
        server.stop()


async def test_non_outage_failures_retire_after_five_attempts_with_backoff(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    """Garbage model output is a protocol error: attempts are spent, 1/4/9/16 units apart."""
    store = RunStore(redis, settings)
    (rid,) = await enqueue_runs(redis, settings, 1)
    sim.set_fault("llm-openai", Fault(kind=FaultKind.GARBAGE))
    fleet.env_overrides["backoff_unit_seconds"] = 0.3
    await workers_up(fleet.start(1))  # (bounds below are timed from its start-up's end)

    async def retired() -> bool:
        return (await store.get(rid)).retired

    await eventually(retired, timeout=60)
    run = await store.get(rid)
    assert run.attempts == 5
    assert run.releases == 0
    assert [e.attempt for e in run.error_log] == [1, 2, 3, 4, 5]
    assert {e.reason for e in run.error_log} == {"provider_protocol_error"}
    gaps = [
        (b.failed_at - a.failed_at).total_seconds()
        for a, b in zip(run.error_log, run.error_log[1:], strict=False)
    ]
    for gap, units in zip(gaps, (1, 4, 9, 16), strict=True):
        assert units * 0.3 <= gap < units * 0.3 + 1.5  # backoff, then the next tick picks it up
    from llm_client import RedisEventLog

    log = RedisEventLog(redis, Keys(settings.key_prefix))

    async def reported() -> bool:  # the retirement's event follows the run's own write
        events = await log.recent(limit=100)
        return any(e.type == "runs_retired" and e.context.get("run_id") == rid for e in events)

    await eventually(reported, timeout=10)
