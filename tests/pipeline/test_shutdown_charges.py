"""A deploy charges no breaker (§5, §7): the farm calls a SIGTERM cuts are nobody's fault.

Real worker processes, busy with slow farm calls on both routes (extraction and the
embedder), are stopped with SIGTERM and a short grace. Every call in flight is cut by the
shutdown, not failed by the farm: no breaker may be charged for it, so a rolling deploy can
never open a healthy route, and no run spends an attempt.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from llm_client import BreakerStore
from memory_worker.api import MemoryQueue
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually

pytestmark = pytest.mark.slow


async def test_a_sigterm_mid_farm_call_charges_no_breaker(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    slow = Fault(kind=FaultKind.SLOW, seconds=4.0)  # inside the 5 s task budget: never a timeout
    sim.set_fault(settings.extraction_service, slow)
    sim.set_fault(settings.embedder_service, slow)
    store = RunStore(redis, settings)
    ids = [(await store.enqueue(make_request(500 + i, hour=i))).run_id for i in range(8)]
    fleet = Fleet(
        settings,
        tmp_path,
        {"discovery_base_url": sim.base_url, "shutdown_grace_seconds": 1.0},
    )
    workers = fleet.start(2)
    await MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), settings).wake()

    def submitted() -> int:
        return sim.submits(settings.extraction_service) + sim.submits(settings.embedder_service)

    await eventually(lambda: submitted() >= 3, timeout=60)
    for worker in workers:
        worker.terminate()
    for worker in workers:
        assert await asyncio.to_thread(worker.wait, 60) == 0, fleet.logs()

    breakers = BreakerStore(redis, Keys(settings.key_prefix), settings.breaker_config())
    views = await breakers.list([])
    charged = {v.target: v.consecutive_failures for v in views if v.consecutive_failures}
    assert charged == {}, fleet.logs()
    for run_id in ids:  # finished within the grace, or released with its attempt refunded
        run = await store.get(run_id or "")
        assert run.error_log == [], (run, fleet.logs())
        assert (run.status, run.attempts) in {(RunStatus.COMPLETED, 1), (RunStatus.QUEUED, 0)}
