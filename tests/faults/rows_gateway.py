"""Fault row 30: a rate-limited farm that names its pause (``429`` + ``Retry-After``).

- 30: every extraction submit is answered ``429 too many requests`` with
  ``Retry-After: 2``: the target cools fleet-wide — about one submit per pause for the
  whole fleet, never charged, runs released with 0 attempts and a clean error log — and
  once the farm stops limiting, every run completes on its first attempt.
"""

from __future__ import annotations

import asyncio
import time

from memory_worker.api import MemoryQueue
from memory_worker.farmsim import Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.storage.connections import RedisHandle
from tests.faults.context import FaultContext, Scenario
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually
from tests.support.routes import FARM_EMBEDDER, farm_target, route, write_routes

PAUSE = 2.0
LIMITED = Fault(
    FaultKind.SUBMIT_STATUS, status_code=429, message="too many requests", seconds=PAUSE
)


async def row30(ctx: FaultContext) -> None:
    routes = write_routes(
        ctx.tmp_path,
        memory_extraction=route(farm_target("llm-limited", "limited-model")),
        embedding=route(FARM_EMBEDDER),
    )
    fleet = Fleet(
        ctx.settings,
        ctx.tmp_path,
        {
            "discovery_base_url": ctx.sim.base_url,
            "routes_file": str(routes),
            "consolidation_backend_retry_interval": 0.5,
        },
    )
    store = RunStore(ctx.redis, ctx.settings)
    ids = [(await store.enqueue(make_request(chat, hour=chat))).run_id for chat in range(6)]
    ctx.sim.set_fault("llm-limited", LIMITED)
    try:
        fleet.start(2)
        await MemoryQueue(RedisHandle(ctx.redis, ctx.redis_url), ctx.settings).wake()
        await eventually(lambda: ctx.sim.submits("llm-limited") >= 1, timeout=60)
        first, started = ctx.sim.submits("llm-limited"), time.monotonic()
        await asyncio.sleep(4 * PAUSE)
        limited = ctx.sim.submits("llm-limited") - first
        # one submit per pause, fleet-wide (+1 for a call admitted as a cooling ended)
        assert limited <= (time.monotonic() - started) / PAUSE + 2, limited
        counts = await store.counts()
        assert (counts["failed"], counts["retired"], counts["completed"]) == (0, 0, 0)
        attempts = await ctx.redis.hgetall(Keys(ctx.settings.key_prefix).routing_attempts)
        assert not [k for k in attempts if b"|failure|" in k]  # never charged
        ctx.sim.clear_faults("llm-limited")

        async def all_done() -> bool:
            return (await store.counts())["completed"] == len(ids)

        await eventually(all_done, timeout=60)
        runs = await store.get_many([i for i in ids if i])
        assert all(r.attempts == 1 and r.error_log == [] for r in runs)
        assert any(r.releases > 0 for r in runs)
    finally:
        fleet.stop_all()


ROWS: dict[int, Scenario] = {30: row30}
