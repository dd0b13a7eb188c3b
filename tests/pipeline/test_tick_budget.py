"""§7: a tick that outlives its budget fails its run as ``task_timeout``.

The production pipeline (``build_tick_runner``: the routed walker, the real Discovery client
over HTTP, the run store on the test Valkey) with a farm whose extraction job never
finishes. The processor honours its deadline, so the walk is cut by the run's own deadline
(``DeadlineExceeded``) just inside the tick budget: that is the tick outliving its budget, and
the run's error log says ``task_timeout``, not ``DeadlineExceeded``/``provider_timeout``.
(Row 13 of the fault matrix covers a processor that ignores its deadline.)
"""

from __future__ import annotations

import time
from typing import Any

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.models import RunStatus
from memory_worker.pipeline.ticks import tick_budgets
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.wiring import build_tick_runner
from tests.support.factories import make_request

# The hard stop leaves min(2 s, 5 %) of the tick for failing the run: at 2 s that was 0.1 s, and
# a loaded CI host once spent 0.15 s writing the failure. At 8 s the margin is 0.4 s.
TICK_SECONDS = 8.0


async def test_a_tick_cut_by_its_own_budget_fails_its_run_as_task_timeout(
    settings: Settings, redis: Any, sim: FarmSimulator
) -> None:
    s = settings.model_copy(
        update={
            "discovery_base_url": sim.base_url,
            "tick_timeout_seconds": TICK_SECONDS,
            "task_timeout_seconds": 600.0,  # the farm's budget is far away: the tick's cuts
            "job_poll_seconds": 0.02,
            "backoff_unit_seconds": 0.01,
        }
    )
    store = RunStore(redis, s)
    run_id = (await store.enqueue(make_request(901))).run_id
    assert run_id
    sim.set_fault("llm-openai", Fault(FaultKind.HANG))
    pipe = await build_tick_runner(s, redis)
    try:
        started = time.monotonic()
        assert await pipe.tick("budget") == "failed"
        soft, _ = tick_budgets(TICK_SECONDS)
        assert soft <= time.monotonic() - started < TICK_SECONDS  # cut inside arq's timeout
    finally:
        for closer in pipe.closers:
            await closer()
    run = await store.get(run_id)
    assert (run.status, run.attempts, run.releases, run.retired) == (RunStatus.FAILED, 1, 0, False)
    (entry,) = run.error_log
    assert (entry.code, entry.reason) == ("task_timeout", "task_timeout")
    counters = await redis.hgetall(store.keys.counters)
    assert int(counters[b"failed:task_timeout"]) == 1
    assert b"failed:provider_timeout" not in counters
    assert sim.submits("llm-openai") == 1  # one hung job, never resubmitted
