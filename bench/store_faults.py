"""Store faults (§7): Redis paused for 2× the lease, and Redis killed -9 and restarted.

Acceptance figures of the store-fault promises, measured with real worker processes, a private
Valkey (AOF, everysec) and the loopback farm simulator:

(a) Redis SIGSTOPped for 2× the lease (2 s lease here) while a run is in
    flight, 2 workers: the run completes with attempts = 1 and a clean error
    log — target 10/10 trials; the figure is also the time from SIGCONT to
    completion.
(b) Redis killed -9 and restarted from its AOF under 2 busy workers (40 runs,
    0.3 s per extraction): seconds from Redis answering again to the next
    completed run — target ≤ 2 s — and no run retired.

The scenarios are the fault-matrix rows 7 and 8 (``tests/faults/rows_store.py``);
this script repeats them and prints the figures. Run from the repository root:

    PYTHONPATH=. python bench/store_faults.py [--pause-trials 10] [--kill-trials 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import common  # noqa: F401  (puts the repository root on sys.path, for tests.faults)

from memory_worker.farmsim import FarmSimulator
from memory_worker.settings import Settings
from tests.faults.rows_store import (
    assert_pause_costs_nothing,
    measure_resume_after_kill,
    private_store,
)


def _base(trial: str) -> Settings:
    return Settings(key_prefix=f"bench-store-{trial}-{int(time.time())}:")


async def pause_trials(n: int) -> tuple[int, list[float]]:
    ok, took, releases = 0, [], []
    for i in range(n):
        with tempfile.TemporaryDirectory() as tmp:
            async with FarmSimulator() as sim, private_store(_base(f"p{i}"), sim, Path(tmp)) as p:
                try:
                    seconds, released = await assert_pause_costs_nothing(p, sim)
                    took.append(seconds)
                    releases.append(released)
                    ok += 1
                except AssertionError as exc:
                    print(f"  trial {i + 1}: FAILED {str(exc)[:300]}")
                    continue
        print(
            f"  pause trial {i + 1}/{n}: ok (attempts 1, releases {releases[-1]}), "
            f"completed {took[-1]:.2f}s after SIGCONT"
        )
    return ok, took


async def kill_trials(n: int) -> tuple[int, list[float]]:
    cap = Settings.model_fields["redis_reconnect_max_seconds"].default
    ok, resumes = 0, []
    for i in range(n):
        with tempfile.TemporaryDirectory() as tmp:
            async with (
                FarmSimulator() as sim,
                private_store(_base(f"k{i}"), sim, Path(tmp), redis_reconnect_max_seconds=cap) as p,
            ):
                try:
                    resume = await measure_resume_after_kill(p, sim, runs=40)
                except AssertionError as exc:
                    print(f"  trial {i + 1}: FAILED {str(exc)[:300]}")
                    continue
        resumes.append(resume)
        ok += resume <= 2.0
        print(f"  kill trial {i + 1}/{n}: work resumed {resume:.2f}s after Redis answered")
    return ok, resumes


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pause-trials", type=int, default=10)
    parser.add_argument("--kill-trials", type=int, default=3)
    args = parser.parse_args()
    print(f"(a) Redis SIGSTOP for 2x lease mid-run, 2 workers, {args.pause_trials} trials")
    ok_a, took = await pause_trials(args.pause_trials)
    print(f"(b) Redis kill -9 + AOF restart under 2 busy workers, {args.kill_trials} trials")
    ok_b, resumes = await kill_trials(args.kill_trials)
    print()
    print(f"(a) attempts = 1 and clean error log: {ok_a}/{args.pause_trials} (target all)")
    if took:
        print(
            f"    SIGCONT -> completion: median {statistics.median(took):.2f}s, max {max(took):.2f}s"
        )
    print(f"(b) resume <= 2 s and nothing retired: {ok_b}/{args.kill_trials}")
    if resumes:
        print(
            f"    Redis answering -> next completion: median {statistics.median(resumes):.2f}s, "
            f"max {max(resumes):.2f}s (target <= 2 s)"
        )


if __name__ == "__main__":
    asyncio.run(main())
