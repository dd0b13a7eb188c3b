"""Recovery after an outage (default settings: 15 s probe interval).

Three workers wait out an UPSTREAM_ERROR outage with 300 runs queued (one
delayed probe). At t=0 the farm comes back. Figures: time to the first
completed run (target ≤ one retry interval + 2 s, the interval being the
baseline) and time until the pipeline runs at full target concurrency.

    python bench/recovery.py [--runs 300] [--job-seconds 0.5]
"""

from __future__ import annotations

import asyncio
import time

from common import OUTAGE, farm_fleet, fresh_bench, pipeline, run_bench

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind


async def main(runs: int, job_seconds: float) -> None:
    async with fresh_bench() as bench, FarmSimulator(submit_block_seconds=30) as sim:
        interval = bench.settings.consolidation_backend_retry_interval
        target = bench.settings.worker_concurrency * 3
        sim.set_fault("*", OUTAGE)
        store, queue, ticks = await pipeline(bench, runs)
        with farm_fleet(bench, sim, 3):
            await asyncio.sleep(3)
            await queue.wake()
            while (await ticks.counts()).delayed != 1:
                await asyncio.sleep(0.1)
            await asyncio.sleep(interval / 3)  # somewhere inside a probe interval
            sim.clear_faults()
            sim.set_fault("llm-openai", Fault(kind=FaultKind.SLOW, seconds=job_seconds))
            t0 = time.perf_counter()
            first = full = None
            while full is None or first is None:
                if first is None and (await store.counts())["completed"] > 0:
                    first = time.perf_counter() - t0
                if full is None and (await ticks.counts()).running >= target:
                    full = time.perf_counter() - t0
                await asyncio.sleep(0.05)
    print(
        f"farm back -> first completed run: {first:.1f} s (target <= {interval:.0f} + 2 s; "
        f"{first / (interval + 2):.2f} of the bound)"
    )
    print(
        f"farm back -> full concurrency ({target} running ticks): {full:.1f} s "
        f"({full - first:.1f} s after the first completion)"
    )


if __name__ == "__main__":
    run_bench(main, __doc__, runs=300, job_seconds=0.5)
