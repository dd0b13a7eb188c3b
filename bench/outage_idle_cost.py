"""Redis cost of a full farm outage vs an idle fleet (targets ≤ 1.1×, backlog-independent).

Three real worker processes with default settings (15 s probe interval).
Baseline: the same workers idle on an empty queue. Then the farm fails every
job with UPSTREAM_ERROR while 10 000 and then 100 000 runs wait. Figures are
Redis commands per minute from ``INFO commandstats`` deltas. Each outage window starts half a
probe interval after a probe, so a 60 s window holds 4 probes every time (a window of any
phase held 3 to 5, and the figure moved by a probe's commands with it).

    python bench/outage_idle_cost.py [--window 60] [--big 100000] [--small 10000]
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from common import OUTAGE, farm_fleet, fill, fresh_bench, pipeline, run_bench

from memory_worker.farmsim import FarmSimulator


def farm_calls(sim: FarmSimulator) -> int:
    return sum(service["submits"] for service in sim.stats().values())


async def mid_interval(sim: FarmSimulator, interval: float) -> None:
    """Wait for the next probe, then half a probe interval: a window that starts here and
    lasts whole intervals holds the same number of probes on every run (one a window's
    interval), instead of one more or one fewer as its phase falls."""
    seen = farm_calls(sim)
    deadline = asyncio.get_running_loop().time() + 3 * interval
    while farm_calls(sim) == seen:
        if asyncio.get_running_loop().time() > deadline:  # no probe: the fleet is not probing
            raise SystemExit(f"no farm probe within {3 * interval:.0f} s: the outage never settled")
        await asyncio.sleep(0.05)
    await asyncio.sleep(interval / 2)


@dataclass(frozen=True)
class Rate:
    """A window's Redis work per minute: every command, the TYPE reads among them (the
    scripts' preflight checks each declared key's type before the first write) and the
    server's CPU seconds."""

    commands: float
    type_reads: float
    cpu: float


async def _sample(redis: Any) -> tuple[int, int, float]:
    stats = await redis.info("commandstats")
    cpu = await redis.info("cpu")
    types = int(stats.get("cmdstat_type", {}).get("calls", 0))
    total = sum(int(v["calls"]) for v in stats.values())
    return total, types, float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


async def rate(redis: Any, window: float) -> Rate:
    total, types, cpu = await _sample(redis)
    await asyncio.sleep(window)
    total2, types2, cpu2 = await _sample(redis)
    per_minute = 60.0 / window
    return Rate(
        (total2 - total - 4) * per_minute,  # minus our own four INFO calls
        (types2 - types) * per_minute,
        (cpu2 - cpu) * per_minute,
    )


async def main(window: float, small: int, big: int) -> None:
    async with fresh_bench() as bench, FarmSimulator() as sim:
        sim.set_fault("*", OUTAGE)
        store, queue, ticks = await pipeline(bench)
        with farm_fleet(bench, sim, 3):
            await asyncio.sleep(5)  # workers up and registered
            idle = await rate(bench.redis, window)
            results = {}
            filled = 0
            for backlog in (small, big):
                await fill(store, backlog - filled, start=filled)
                filled = backlog
                await queue.wake()
                while (await ticks.counts()).delayed != 1:  # the outage settled into one probe
                    await asyncio.sleep(0.2)
                await mid_interval(sim, bench.settings.consolidation_backend_retry_interval)
                probes_before = farm_calls(sim)
                results[backlog] = (
                    await rate(bench.redis, window),
                    farm_calls(sim) - probes_before,
                )
                counts = await store.counts()
                assert counts["retired"] == 0, counts
                assert counts["failed"] == 0, counts
    print(
        f"idle fleet, empty queue:        {idle.commands:8.0f} Redis commands/min (baseline),"
        f" {idle.type_reads:.0f} of them TYPE, {idle.cpu:.2f} CPU-s/min"
    )
    for backlog, (value, probes) in results.items():
        print(
            f"outage, {backlog:>7,} runs queued: {value.commands:8.0f} commands/min, {probes} farm"
            f" probes in {window:.0f} s  -> {value.commands / idle.commands:.3f}x idle"
            " (target <= 1.1x)"
        )
        bare = (value.commands - value.type_reads) / (idle.commands - idle.type_reads)
        print(
            f"    without the preflight's TYPE reads ({value.type_reads:.0f}/min): {bare:.3f}x idle;"
            f" server CPU {value.cpu:.2f} CPU-s/min -> {value.cpu / idle.cpu:.2f}x idle"
        )
    a, b = results[small][0].commands, results[big][0].commands
    print(f"backlog independence: {big:,} vs {small:,} runs -> {b / a:.3f}x (target within 10 %)")


if __name__ == "__main__":
    run_bench(main, __doc__, window=60.0, small=10_000, big=100_000)
