"""Scale-out: runs/s, Redis commands per run and Redis CPU per 1,000 runs as the fleet grows.

For each fleet size (worker processes, ``--ticks`` concurrent ticks each) and farm job
time, a fresh queue on a private Valkey holds a backlog; the fleet works it against the
loopback farm simulator. After the ramp, two snapshots ``--seconds`` apart (nothing
polls in between, so the figures are the fleet's own) give:

- completed runs/s, and its ratio to the ideal (processes × ticks ÷ job seconds);
- Redis commands per completed run (``INFO commandstats``: commands inside Lua
  scripts count too, as they cost the server);
- Redis CPU-seconds per 1,000 runs (``used_cpu_sys + used_cpu_user``), as measured and
  net of what the same server burns idle over the same window (its cron, ``hz`` 10:
  measured first, with no client connected).

Baselines of the same run (``--baseline``, on by default): the server idle, and bare arq
no-op jobs worked by one plain arq worker (``--ticks`` jobs at a time, queued beforehand,
like the backlog) — Redis CPU-s per 1,000 of them and its ratio, so the figure reads
against what the queue library alone costs on this host.

Cards live on the same server unless ``--cards-url`` (or ``MEMORY_CARDS_URL``) names
another one (e.g. ``redis+cluster://…``); the figures are then the queue primary's only.
``--breakdown`` adds a MONITOR tally of where the queue's commands come from (MONITOR
costs the server CPU: the CPU column is then not meaningful).

Commands per run are countable on a 2-core machine (most processes wait on the farm);
runs/s and CPU figures at 8–12 processes need as many cores as processes to mean
anything: on fewer cores they measure the machine, not the queue.

    python bench/scale_out.py [--quick] [--procs 1,2,4,8,12] [--farm 1.0,0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from dataclasses import dataclass
from typing import Any

from common import farm_fleet, fresh_bench, pipeline
from redis_monitor import CommandTally, record_script_names

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind


@dataclass(frozen=True)
class Row:
    procs: int
    job_seconds: float
    runs_per_s: float
    ideal: float
    commands_per_run: float
    cpu_per_1000: float
    busy: float
    #: CPU-s per 1,000 runs net of the server's idle CPU over the window.
    net_per_1000: float = 0.0
    #: Round trips a run (the server's read events).
    trips_per_run: float = 0.0


@dataclass(frozen=True)
class Baseline:
    idle_cpu_per_s: float
    arq_cpu_per_1000: float
    arq_commands_per_job: float


async def noop(ctx: dict[str, Any]) -> None:
    return None


async def idle_cpu_per_s(seconds: float = 5.0) -> float:
    """CPU-s per second of a fresh private Valkey that nobody uses (its own cron)."""
    async with fresh_bench() as bench:
        _, cpu0 = await server_stats(bench.redis)
        t0 = time.perf_counter()
        await asyncio.sleep(seconds)
        _, cpu1 = await server_stats(bench.redis)
        return (cpu1 - cpu0 - IDLE_PROBE_CPU) / (time.perf_counter() - t0)


#: What the two INFO reads of a snapshot cost the server (subtracted from the idle figure).
IDLE_PROBE_CPU = 0.0002


async def arq_baseline(ticks: int, jobs: int) -> tuple[float, float, float]:
    """(CPU-s per 1,000 jobs, commands per job, idle CPU-s per s) of bare arq no-op jobs
    worked by one plain arq worker, ``ticks`` at a time, queued beforehand."""
    from arq.connections import ArqRedis
    from arq.worker import Worker

    idle = await idle_cpu_per_s()
    async with fresh_bench() as bench:
        queue = "bench:noop"
        arq = ArqRedis(connection_pool=bench.redis.connection_pool)  # the bench's client is plain
        for _ in range(jobs):
            await arq.enqueue_job("noop", _queue_name=queue)
        worker = Worker(
            functions=[noop],
            redis_pool=arq,
            queue_name=queue,
            burst=True,
            max_jobs=ticks,
            poll_delay=0.5,
            handle_signals=False,
            keep_result=0,
        )
        calls0, cpu0 = await server_stats(bench.redis)
        t0 = time.perf_counter()
        await worker.async_run()
        elapsed = time.perf_counter() - t0
        calls1, cpu1 = await server_stats(bench.redis)
    spent = delta(calls1, calls0)
    spent.pop(READS, None)
    measured = sum(spent.values()) - 6
    net = cpu1 - cpu0 - idle * elapsed
    return net / jobs * 1000, measured / jobs, idle


async def server_stats(redis: Any) -> tuple[dict[str, int], float]:
    """(calls per command so far, CPU seconds so far) of one Valkey; the calls also hold
    ``READS``: read events the server processed (one per round trip a client sent)."""
    stats = await redis.info("commandstats")
    cpu = await redis.info("cpu")
    reads = (await redis.info("stats"))["total_reads_processed"]
    calls = {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}
    calls[READS] = int(reads)
    return calls, float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"])


async def server_usec(redis: Any) -> dict[str, int]:
    """Microseconds spent in each command so far (``INFO commandstats``; free to read,
    unlike MONITOR)."""
    stats = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["usec"]) for name, v in stats.items()}


async def script_usec(redis: Any, names: dict[str, str]) -> dict[str, tuple[int, int]]:
    """(calls, µs) per script name from the slow log (every command logged since reset)."""
    await redis.config_set("slowlog-log-slower-than", 10_000)
    entries = await redis.slowlog_get(1_000_000)
    out: dict[str, tuple[int, int]] = {}
    for entry in entries:
        parts = entry["command"].split()
        if not parts or parts[0].lower() not in (b"evalsha", b"fcall"):
            continue
        sha = parts[1].decode() if len(parts) > 1 else "?"
        name = names.get(sha, sha[:12])
        n, usec = out.get(name, (0, 0))
        out[name] = (n + 1, usec + int(entry["duration"]))
    return out


#: The key of ``server_stats``'s read events among its command calls.
READS = "(read events)"


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0) > 0}


async def wait_for(predicate: Any, timeout: float, step: float = 0.2) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if await predicate():
            return
        await asyncio.sleep(step)


async def measure(
    procs: int,
    job_seconds: float,
    ticks: int,
    seconds: float,
    cards_url: str | None,
    breakdown: bool,
    idle: float = 0.0,
    cpu_breakdown: bool = False,
) -> Row:
    ideal = procs * ticks / job_seconds
    backlog = int(ideal * (seconds + 20) * 1.2) + 50
    names = record_script_names() if breakdown or cpu_breakdown else {}
    async with (
        fresh_bench(worker_concurrency=ticks, pipeline_target=procs * ticks) as bench,
        FarmSimulator(submit_block_seconds=job_seconds * 5) as sim,
    ):
        sim.set_fault("llm-openai", Fault(kind=FaultKind.SLOW, seconds=job_seconds))
        store, queue, tick_queue = await pipeline(bench, backlog)
        if breakdown or cpu_breakdown:  # name the scripts: build a pipeline here
            from memory_worker.wiring import build_tick_runner

            await build_tick_runner(bench.settings, bench.redis)
        overrides: dict[str, Any] = {"worker_concurrency": ticks, "pipeline_target": procs * ticks}
        if cards_url:
            overrides["cards_url"] = cards_url
        with farm_fleet(bench, sim, procs, **overrides):
            await asyncio.sleep(2 + procs * 0.6)  # processes up (2 cores: they start in turn)
            await queue.wake()

            async def ramped() -> bool:
                return (await tick_queue.counts()).running >= procs * ticks

            await wait_for(ramped, 30 + procs * 2)
            await asyncio.sleep(job_seconds * 2)
            done0 = (await store.counts())["completed"]
            usec0 = await server_usec(bench.redis) if cpu_breakdown else {}
            if cpu_breakdown:  # every command into the slow log, with its duration
                await bench.redis.config_set("slowlog-max-len", 1_000_000)
                await bench.redis.config_set("slowlog-log-slower-than", 0)
                await bench.redis.slowlog_reset()
            calls0, cpu0 = await server_stats(bench.redis)
            t0 = time.perf_counter()
            if breakdown:
                async with CommandTally(bench.server.url, names) as tally:
                    await asyncio.sleep(seconds)
            else:
                await asyncio.sleep(seconds)
            elapsed = time.perf_counter() - t0
            calls1, cpu1 = await server_stats(bench.redis)
            usec1 = await server_usec(bench.redis) if cpu_breakdown else {}
            scripts = await script_usec(bench.redis, names) if cpu_breakdown else {}
            done1 = (await store.counts())["completed"]
    runs = max(done1 - done0, 1)
    if cpu_breakdown:
        print(f"--- where the server's command time goes, {procs} process(es), per run")
        print("(a script's time holds its inner commands' time, which also show on their own)")
        for name, usec in sorted(delta(usec1, usec0).items(), key=lambda kv: -kv[1])[:20]:
            print(f"{usec / runs:9.1f} µs  {name}")
        print("scripts (slow log at 0 µs: it adds its own cost), µs per run and per call:")
        for name, (n, usec) in sorted(scripts.items(), key=lambda kv: -kv[1][1])[:20]:
            print(f"{usec / runs:9.1f} µs  {n / runs:5.2f} calls  {usec / n:7.1f} µs/call  {name}")
    calls = delta(calls1, calls0)
    trips = calls.pop(READS, 0) - 3  # the snapshots' own round trips
    measured = sum(calls.values()) - 7  # the snapshots' own commands
    if breakdown:
        print(f"--- where the commands of {procs} process(es), {job_seconds:g} s farm come from")
        print(tally.table(runs))
        print("commandstats (scripts' inner commands included), per run:")
        for name, n in sorted(calls.items(), key=lambda kv: -kv[1])[:25]:
            print(f"{n / runs:8.2f}  {name}")
    return Row(
        procs,
        job_seconds,
        runs / elapsed,
        ideal,
        measured / runs,
        (cpu1 - cpu0) / runs * 1000,
        (cpu1 - cpu0) / elapsed,
        (cpu1 - cpu0 - idle * elapsed) / runs * 1000,
        trips / runs,
    )


def report(rows: list[Row], base: Baseline | None) -> None:
    print(
        "| worker processes | farm job | runs/s (ideal) | vs ideal | Redis commands per run "
        "| round trips per run "
        "| Redis CPU-s per 1,000 runs | net of idle | vs arq no-op | Redis busy |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r.net_per_1000 / base.arq_cpu_per_1000:.2f}x" if base else "-"
        net = f"{r.net_per_1000:.2f}" if base else "-"  # no idle measured: nothing to net
        print(
            f"| {r.procs} | {r.job_seconds:g} s | {r.runs_per_s:.1f} ({r.ideal:.0f}) "
            f"| {r.runs_per_s / r.ideal:.2f} | {r.commands_per_run:.0f} | {r.trips_per_run:.1f} "
            f"| {r.cpu_per_1000:.2f} | {net} | {ratio} | {r.busy * 100:.0f} % |"
        )
    if base:
        print(
            f"baselines (same run): the idle server {base.idle_cpu_per_s * 1000:.2f} CPU-ms/s; "
            f"bare arq no-op jobs {base.arq_cpu_per_1000:.2f} CPU-s per 1,000 "
            f"({base.arq_commands_per_job:.1f} commands a job)"
        )
    for farm in sorted({r.job_seconds for r in rows}, reverse=True):
        same = [r for r in rows if r.job_seconds == farm]
        first = same[0]
        ratios = ", ".join(
            f"{r.procs}p: runs/s {r.runs_per_s / first.runs_per_s:.2f}x, "
            f"commands/run {r.commands_per_run / first.commands_per_run:.2f}x"
            for r in same[1:]
        )
        if ratios:
            print(f"{farm:g} s farm, against {first.procs} process(es): {ratios}")


async def main(args: argparse.Namespace) -> None:
    if args.cards_cluster:  # the cards on a private 3-master + 3-replica cluster
        import tempfile
        from pathlib import Path

        from tests.support.cluster import LocalCluster

        with tempfile.TemporaryDirectory(prefix="mw-scale-cluster-") as tmp:
            cluster = LocalCluster(Path(tmp)).start()
            try:
                args.cards_url = cluster.url
                print("cards on a private 3-master cluster (figures: the queue primary's)")
                await measure_all(args)
            finally:
                cluster.stop()
    else:
        await measure_all(args)


async def measure_all(args: argparse.Namespace) -> None:
    base = None
    if args.baseline:
        arq_cpu, arq_commands, idle = await arq_baseline(args.ticks, args.arq_jobs)
        base = Baseline(idle, arq_cpu, arq_commands)
        print(
            f"baselines: idle server {idle * 1000:.2f} CPU-ms/s; bare arq no-op jobs "
            f"{arq_cpu:.2f} CPU-s/1000, {arq_commands:.1f} commands a job",
            flush=True,
        )
    rows = []
    for farm in args.farm:
        for procs in args.procs:
            row = await measure(
                procs,
                farm,
                args.ticks,
                args.seconds,
                args.cards_url,
                args.breakdown,
                base.idle_cpu_per_s if base else 0.0,
                args.cpu_breakdown,
            )
            rows.append(row)
            print(
                f"{procs} process(es), {farm:g} s farm: {row.runs_per_s:.1f} runs/s, "
                f"{row.commands_per_run:.0f} commands/run, {row.trips_per_run:.1f} round trips/run, "
                f"{row.cpu_per_1000:.2f} CPU-s/1000 runs"
                + (f" ({row.net_per_1000:.2f} net of idle)" if base else " (idle not measured)"),
                flush=True,
            )
    report(rows, base)


def floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x]


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--procs", type=ints, default=[1, 2, 4, 8, 12])
    parser.add_argument("--farm", type=floats, default=[1.0, 0.2], help="farm job seconds")
    parser.add_argument("--ticks", type=int, default=8, help="concurrent ticks per process")
    parser.add_argument("--seconds", type=float, default=15.0, help="measuring window")
    parser.add_argument("--cards-url", default=os.environ.get("MEMORY_CARDS_URL"))
    parser.add_argument(
        "--cards-cluster",
        action="store_true",
        help="start a private 3-master cluster for the cards (overrides --cards-url)",
    )
    parser.add_argument("--breakdown", action="store_true", help="MONITOR tally of origins")
    parser.add_argument(
        "--cpu-breakdown", action="store_true", help="server time per command (commandstats)"
    )
    parser.add_argument("--quick", action="store_true", help="1, 2, 4 processes, 1 s farm, 6 s")
    parser.add_argument(
        "--baseline",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="measure the idle server and bare arq no-op jobs first (same run)",
    )
    parser.add_argument("--arq-jobs", type=int, default=3000, help="bare arq jobs in the baseline")
    args = parser.parse_args()
    if args.quick:
        args.procs, args.farm, args.seconds = [1, 2, 4], [1.0], 6.0
    asyncio.run(main(args))
