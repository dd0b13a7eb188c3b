"""Slot efficiency: the farm answers each extraction after 1 s; pipeline target 16.

Ideal throughput is 16 runs/s (16 slots, 1 s each). Four worker processes ×
concurrency 4 run the real pipeline (claim → Discovery submit/poll →
embed → complete → follow-up ticks). Prints completed runs/s in the steady
state (after the ramp 1 → 16) and overall, as ratios to the ideal (targets: ≥ 0.9 overall, ≥ 0.95 in the steady state).

    python bench/slot_efficiency.py [--runs 480] [--job-seconds 1.0]
"""

from __future__ import annotations

import asyncio
import time

from common import farm_fleet, fresh_bench, pipeline, run_bench

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind

TARGET = 16


async def main(runs: int, job_seconds: float) -> None:
    async with (
        fresh_bench(worker_concurrency=4, pipeline_target=TARGET) as bench,
        FarmSimulator(submit_block_seconds=job_seconds * 5) as sim,
    ):
        sim.set_fault("llm-openai", Fault(kind=FaultKind.SLOW, seconds=job_seconds))
        store, queue, ticks = await pipeline(bench, runs)
        with farm_fleet(bench, sim, 4, worker_concurrency=4, pipeline_target=TARGET):
            await asyncio.sleep(4)  # workers up
            t0 = time.perf_counter()
            await queue.wake()
            samples: list[tuple[float, int, int]] = []
            while True:
                done = (await store.counts())["completed"]
                running = (await ticks.counts()).running
                samples.append((time.perf_counter() - t0, done, running))
                if done >= runs:
                    break
                await asyncio.sleep(0.1)
            total = time.perf_counter() - t0
    at_target = next((s for s in samples if s[2] >= TARGET), samples[0])
    tail = next((s for s in samples if s[1] >= runs - TARGET), samples[-1])
    steady = (tail[1] - at_target[1]) / max(tail[0] - at_target[0], 1e-9)
    ideal = TARGET / job_seconds
    print(f"ramp to {TARGET} running ticks: {at_target[0]:.1f} s")
    print(
        f"steady state: {steady:.2f} runs/s vs ideal {ideal:.0f}/s -> {steady / ideal:.3f} (target >= 0.95)"
    )
    print(
        f"overall: {runs} runs in {total:.1f} s = {runs / total:.2f} runs/s -> {runs / total / ideal:.3f} of ideal"
    )


if __name__ == "__main__":
    run_bench(main, __doc__, runs=480, job_seconds=1.0)
