"""Gateway figures (§3, §6): load sharing, slow nodes, Retry-After, rate caps, balance.

Three worker processes (``memory-worker run --serve``, 4 ticks each) on a private Valkey
work a large backlog against the loopback farm simulator (extraction jobs of ``--job``
seconds, blocking submits). Each scenario runs its own fleet and prints its figures, each
measured in this one run:

- ``share``: two equal targets in one tier for ``--steady`` seconds — each one's share;
  then one made 10× slower (the simulator's ``slow`` fault): its share every 10 s, when it
  first falls to ≤ 10 %, its share over the minute after that; then it recovers: when it
  is back to ≥ 30 %. Breaker charges over the whole scenario (must be 0);
- ``retry``: one of two targets answers ``429 too many requests`` with ``Retry-After:
  --pause``: how many calls reach it in the pause (those admitted before the cooling was
  recorded, within 0.1 s of the 429, counted apart), and when it is called again;
- ``rate``: a ``requests_per_minute = --rpm`` target (tier 0) over a fallback (tier 1),
  demand far above the cap, for ``--rate-minutes``: its calls per minute and in total,
  against ``rpm × minutes``;
- ``balance``: one target 2.5× slower than the other (below the slow-node factor), each
  strategy (``least_in_flight``, ``weighted_random``) for ``--steady`` seconds: shares,
  mean farm-call latency and run p95 from the workers' own ``/metrics`` histograms.

- ``eject``: two equal targets in one tier, one failing 60 % of its calls fast (the
  simulator's ``job_failed`` on a share of submits): its share every 10 s for a minute,
  when it first falls to <= 10 %, and over the rest of that minute; the run attempts spent
  (every failure must fall over to the peer: 0); then it heals: when it is back to >= 30 %.
  Then a target failing every call until its breaker opens, healed at once: its share
  every 10 s after, and when it is back to >= 25 %. Small ejection windows (``EJECT``).

    python bench/gateway.py [--only share,retry,rate,balance,eject] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import structlog
from common import Bench, fill, fresh_bench

from llm_client import RedisEventLog
from memory_worker.api import MemoryQueue
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle
from memory_worker.worker.fleet import worker_env

A, B = "llm-a", "llm-b"
WORKERS, TICKS = 3, 4


def routes_toml(*targets: str) -> str:
    """``memory_extraction`` over ``targets`` (TOML target tables) and the farm's embedder."""
    lines = ["[routes.memory_extraction]", "slot_poll_seconds = 0.2"]
    for target in targets:
        lines += ["[[routes.memory_extraction.targets]]", target]
    lines += [
        "[routes.embedding]",
        "[[routes.embedding.targets]]",
        'service = "embedder"\nendpoint = "encode"\nmodel = "embedder"',
    ]
    return "\n".join(lines) + "\n"


def target(service: str, **options: object) -> str:
    extra = "".join(f"\n{key} = {value!r}" for key, value in options.items())
    return f'service = "{service}"\nmodel = "model-{service}"' + extra.replace("'", '"')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Fleet:
    """Worker processes with their own /metrics (``run --serve``)."""

    procs: list[subprocess.Popen[bytes]]
    ports: list[int]

    async def scrape(self) -> list[str]:
        async with httpx.AsyncClient(timeout=5) as client:
            return [(await client.get(f"http://127.0.0.1:{p}/metrics")).text for p in self.ports]

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def start_workers(env: dict[str, str], tmp: Path, name: str) -> tuple[Fleet, list[Any]]:
    """``WORKERS`` × ``memory-worker run --serve`` on free loopback ports, logging to files."""
    ports = [free_port() for _ in range(WORKERS)]
    logs = [open(tmp / f"{name}-{i}.log", "wb") for i in range(WORKERS)]  # noqa: SIM115
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "memory_worker", "run", "--serve", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        for port, log in zip(ports, logs, strict=True)
    ]
    return Fleet(procs, ports), logs


@asynccontextmanager
async def fleet(
    bench: Bench, sim: FarmSimulator, routes: str, name: str, **overrides: Any
) -> AsyncIterator[Fleet]:
    """A fresh backlog, ``WORKERS`` serving workers on ``routes``, woken; stopped on exit."""
    path = bench.tmp / f"routes-{name}.toml"
    path.write_text(routes)
    prefix = f"{bench.settings.key_prefix}{name}:"
    settings = bench.settings.model_copy(update={"key_prefix": prefix})
    store = RunStore(bench.redis, settings)
    await fill(store, 20_000)
    env = worker_env(
        settings,
        {
            "discovery_base_url": sim.base_url,
            "routes_file": str(path),
            "worker_concurrency": TICKS,
            **overrides,
        },
    )
    running, logs = start_workers(env, bench.tmp, name)
    try:
        await asyncio.sleep(3)
        await MemoryQueue(
            RedisHandle(bench.redis, reveal(settings.redis_url) or ""), settings
        ).wake()
        yield running
    finally:
        during = await charges(bench, prefix)
        # in a thread: the farm simulator shares this event loop and must keep answering
        # the calls the stopping workers finish (a blocked loop would time them out)
        await asyncio.to_thread(running.stop)
        for log in logs:
            log.close()
        after = await charges(bench, prefix)
        print(f"  breaker charges while it ran: {sum(during.values())} {during or ''}")
        stopped = {k: n - during.get(k, 0) for k, n in after.items() if n > during.get(k, 0)}
        print(f"  breaker charges while the workers stopped (SIGTERM): {stopped or 0}")


async def charges(bench: Bench, prefix: str) -> dict[str, int]:
    """Charged attempts so far, by ``target|failure|reason``."""
    attempts = await bench.redis.hgetall(Keys(prefix).routing_attempts)
    return {k.decode(): int(v) for k, v in attempts.items() if b"|failure|" in k}


def calls(sim: FarmSimulator, service: str) -> int:
    return sim.stats().get(service, {}).get("submits", 0)


@contextlib.contextmanager
def sampled(sim: FarmSimulator, every: float = 0.01) -> Iterator[list[tuple[float, int, int, int]]]:
    """(time, A's calls, B's calls, A's rejections) every ``every`` seconds while inside."""
    seen: list[tuple[float, int, int, int]] = []

    async def watch() -> None:
        while True:
            a = sim.stats().get(A, {})
            seen.append(
                (time.monotonic(), a.get("submits", 0), calls(sim, B), a.get("rejected", 0))
            )
            await asyncio.sleep(every)

    task = asyncio.get_running_loop().create_task(watch())
    try:
        yield seen
    finally:
        task.cancel()


def share_between(
    seen: list[tuple[float, int, int, int]], start: float, end: float
) -> tuple[int, int]:
    """(A's calls, B's calls) between two instants of ``seen``."""
    first = next(s for s in seen if s[0] >= start)
    last = [s for s in seen if s[0] <= end][-1]
    return last[1] - first[1], last[2] - first[2]


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "n/a"


async def scenario_share(bench: Bench, sim: FarmSimulator, job: float, steady: float) -> None:
    print(f"== share: two equal targets in one tier, then {B} 10x slower, then recovered")
    routes = routes_toml(target(A, tier=0), target(B, tier=0))
    async with fleet(bench, sim, routes, "share"):
        with sampled(sim, 0.1) as seen:
            await asyncio.sleep(15)  # ramp
            t0 = time.monotonic()
            await asyncio.sleep(steady)
            a, b = share_between(seen, t0, time.monotonic())
            print(
                f"  steady {steady:.0f} s: {A} {a} calls ({pct(a, a + b)}), {B} {b} ({pct(b, a + b)})"
            )
            sim.set_fault(B, Fault(FaultKind.SLOW, seconds=10 * job))
            slowed = time.monotonic()
            slow_for = max(30, round(2.5 * steady / 10) * 10)
            await asyncio.sleep(slow_for)
            buckets = [
                share_between(seen, slowed + i, slowed + i + 10) for i in range(0, slow_for, 10)
            ]
            line = " ".join(pct(b, a + b) for a, b in buckets)
            print(f"  {B} 10x slower: its share per 10 s: {line}")
            low = next((i * 10 for i, (a, b) in enumerate(buckets) if b <= 0.1 * (a + b)), None)
            print(f"  first 10 s window with {B} <= 10 %: from +{low} s")
            if low is not None:
                a, b = share_between(seen, slowed + low, min(slowed + low + 60, slowed + slow_for))
                print(f"  from there on (<= 60 s): {B} {b} of {a + b} calls ({pct(b, a + b)})")
            a, b = share_between(seen, slowed + slow_for - 60, slowed + slow_for)
            print(f"  its last minute slow: {B} {b} of {a + b} calls ({pct(b, a + b)})")
            sim.clear_faults(B)
            healed = time.monotonic()
            heal_for = max(30, round(1.5 * steady / 10) * 10)
            await asyncio.sleep(heal_for)
            buckets = [
                share_between(seen, healed + i, healed + i + 10) for i in range(0, heal_for, 10)
            ]
            print(f"  recovered: its share per 10 s: {' '.join(pct(b, a + b) for a, b in buckets)}")
            back = next((i * 10 for i, (a, b) in enumerate(buckets) if b >= 0.3 * (a + b)), None)
            print(f"  back to >= 30 % of calls from +{back} s")


#: The ejection's settings for the bench (small windows, so it takes about four minutes).
EJECT = {
    "ejection_window_seconds": 10,
    "ejection_refresh_seconds": 0.5,
    "ejection_failure_min_volume": 10,
    "ejection_base_seconds": 5,
    "ejection_max_seconds": 20,
}

FLAKY = Fault(
    FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="[Errno -3] flaky node", share=0.6
)
DOWN = Fault(FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="[Errno -3] node down")


def per_10s(
    seen: list[tuple[float, int, int, int]], since: float, seconds: int
) -> list[tuple[int, int]]:
    return [share_between(seen, since + i, since + i + 10) for i in range(0, seconds, 10)]


def first_window(buckets: list[tuple[int, int]], ok: Any) -> int | None:
    """The start (s) of the first 10 s window with calls where ``ok(A's calls, all)``."""
    return next((i * 10 for i, (a, b) in enumerate(buckets) if a + b and ok(a, a + b)), None)


async def ramped(sim: FarmSimulator, calls_needed: int = 100) -> None:
    """Until the fleet's calls flow (worker starts take a while on a loaded host), then 5 s."""
    start = calls(sim, A) + calls(sim, B)
    while calls(sim, A) + calls(sim, B) - start < calls_needed:
        await asyncio.sleep(0.2)
    await asyncio.sleep(5)


async def attempts_spent(bench: Bench, prefix: str) -> tuple[int, int]:
    """(attempts runs spent beyond their first, runs failed) in this fleet's store."""
    settings = bench.settings.model_copy(update={"key_prefix": prefix})
    store = RunStore(bench.redis, settings)
    keys = Keys(prefix)
    spent = 0
    for status in ("completed", "queued", "processing", "failed"):
        ids = [i.decode() for i in await bench.redis.zrange(keys.by_status(status), 0, -1)]
        for start in range(0, len(ids), 2000):
            runs = await store.get_many(ids[start : start + 2000])
            spent += sum(max(r.attempts - 1, 0) for r in runs)  # a claim in flight is one
    return spent, (await store.counts())["failed"]


async def standing(bench: Bench, prefix: str) -> str:
    """A's breaker and ejection as stored, and the ejections announced so far."""
    keys = Keys(prefix)
    breaker = await bench.redis.hgetall(keys.breaker(f"{A}/model-{A}"))
    outlier = await bench.redis.hgetall(keys.outlier(f"{A}/model-{A}"))
    events = await RedisEventLog(bench.redis, keys).recent(limit=5000, types=["target_ejected"])
    trips = int(breaker.get(b"trips", 0))
    opened = breaker.get(b"opened") == b"1"
    times = int(outlier.get(b"times", 0))
    return (
        f"{A}: breaker {'open' if opened else 'closed'} (trips {trips}), "
        f"{len(events)} ejections announced (the last {times} in a row)"
    )


async def scenario_eject(bench: Bench, sim: FarmSimulator) -> None:
    print(f"== eject: {A} fails 60 % of its calls fast beside {B} (one tier), then heals")
    routes = routes_toml(target(A, tier=0), target(B, tier=0))
    async with fleet(bench, sim, routes, "eject", **EJECT):
        with sampled(sim, 0.1) as seen:
            await ramped(sim)
            sim.set_fault(A, FLAKY)
            flaky = time.monotonic()
            await asyncio.sleep(60)
            buckets = per_10s(seen, flaky, 60)
            print(f"  {A} flaky: its share per 10 s: {' '.join(pct(a, a + b) for a, b in buckets)}")
            low = first_window(buckets, lambda part, whole: part <= 0.1 * whole)
            print(f"  first 10 s window with {A} <= 10 %: from +{low} s")
            if low is not None:
                a, b = share_between(seen, flaky + low, flaky + 60)
                print(f"  from there to +60 s: {A} {a} of {a + b} calls ({pct(a, a + b)})")
            print(f"  at +60 s: {await standing(bench, f'{bench.settings.key_prefix}eject:')}")
            sim.clear_faults(A)
            healed = time.monotonic()
            await asyncio.sleep(60)
            buckets = per_10s(seen, healed, 60)
            print(f"  healed: its share per 10 s: {' '.join(pct(a, a + b) for a, b in buckets)}")
            back = first_window(buckets, lambda part, whole: part >= 0.3 * whole)
            print(f"  back to >= 30 % of calls from +{back} s")
            print(f"  at +60 s: {await standing(bench, f'{bench.settings.key_prefix}eject:')}")
        spent, failed = await attempts_spent(bench, f"{bench.settings.key_prefix}eject:")
        print(f"  run attempts spent on its failures: {spent} (runs failed: {failed})")

    print(f"== eject: {A} fails every call until its breaker opens beside {B}, then heals")
    prefix = f"{bench.settings.key_prefix}tripped:"
    async with fleet(bench, sim, routes, "tripped", **EJECT):
        with sampled(sim, 0.1) as seen:
            await ramped(sim)
            sim.set_fault(A, DOWN)
            down = time.monotonic()
            breaker = Keys(prefix).breaker(f"{A}/model-{A}")
            while await bench.redis.hget(breaker, "opened") != b"1":
                await asyncio.sleep(0.05)
            sim.clear_faults(A)
            healed = time.monotonic()
            print(f"  its breaker opened {healed - down:.1f} s after the fault; healed at once")
            print(f"  then: {await standing(bench, prefix)}")
            await asyncio.sleep(60)
            buckets = per_10s(seen, healed, 60)
            print(f"  healed: its share per 10 s: {' '.join(pct(a, a + b) for a, b in buckets)}")
            back = first_window(buckets, lambda part, whole: part >= 0.25 * whole)
            print(f"  back to >= 25 % of calls from +{back} s")
            print(f"  at +60 s: {await standing(bench, prefix)}")
        spent, failed = await attempts_spent(bench, prefix)
        print(f"  run attempts spent on its failures: {spent} (runs failed: {failed})")


async def scenario_retry(bench: Bench, sim: FarmSimulator, pause: float) -> None:
    print(f"== retry: {A} answers 429 with Retry-After: {pause:g} once")
    routes = routes_toml(target(A, tier=0), target(B, tier=0))
    async with fleet(bench, sim, routes, "retry"):
        await asyncio.sleep(15)
        with sampled(sim) as seen:
            fault = Fault(
                FaultKind.SUBMIT_STATUS,
                status_code=429,
                message="too many requests",
                seconds=pause,
                times=1,
            )
            sim.set_fault(A, fault)
            while not seen or seen[-1][3] < 1:
                await asyncio.sleep(0.01)
            answered = next(s for s in seen if s[3] >= 1)
            await asyncio.sleep(pause + 10)
        after = [s for s in seen if s[0] >= answered[0]]

        def calls_until(offset: float) -> int:
            return [s for s in after if s[0] - answered[0] <= offset][-1][1]

        racing = calls_until(0.1) - answered[1]
        inside = calls_until(pause - 0.01) - calls_until(0.1)
        again = next(s[0] - answered[0] for s in after if s[1] > calls_until(pause - 0.01))
        print(
            f"  calls to {A} admitted before the cooling landed (<= 0.1 s after the 429): {racing}"
        )
        print(f"  calls to {A} from 0.1 s to {pause:g} s after the 429, 3 workers: {inside}")
        print(f"  first call to {A} again: {again:.2f} s after the 429")
        arrivals = [
            round(s[0] - answered[0], 2) for p, s in itertools.pairwise(after) if s[1] > p[1]
        ]
        print(f"  arrivals at {A} after the 429 (s): {arrivals[:12]}")


async def scenario_rate(bench: Bench, sim: FarmSimulator, rpm: int, minutes: float) -> None:
    print(f"== rate: {A} capped at requests_per_minute = {rpm} (tier 0), {B} the fallback")
    routes = routes_toml(target(A, tier=0, requests_per_minute=rpm), target(B, tier=1))
    async with fleet(bench, sim, routes, "rate"):
        await asyncio.sleep(15)
        start, per_minute = calls(sim, A), []
        b0, t0 = calls(sim, B), time.monotonic()
        for _ in range(int(minutes)):
            before = calls(sim, A)
            await asyncio.sleep(60)
            per_minute.append(calls(sim, A) - before)
        rest = minutes - int(minutes)
        if rest:
            await asyncio.sleep(rest * 60)
        total, elapsed = calls(sim, A) - start, time.monotonic() - t0
        expected = rpm * elapsed / 60
        print(f"  {A} per minute: {per_minute}; {B} took {calls(sim, B) - b0} calls meanwhile")
        print(
            f"  {A} total {total} in {elapsed:.0f} s against {expected:.0f} allowed: "
            f"{total / expected:.3f}x (target within 5 %)"
        )


def histogram(
    texts: list[str], name: str, **labels: str
) -> tuple[float, float, list[tuple[float, float]]]:
    """(sum, count, cumulative buckets) of a histogram summed over every worker's /metrics."""
    total = count = 0.0
    buckets: dict[float, float] = {}
    want = [f'{k}="{v}"' for k, v in labels.items()]
    for text in texts:
        for line in text.splitlines():
            if not line.startswith(name) or not all(label in line for label in want):
                continue
            value = float(line.rsplit(" ", 1)[1])
            if line.startswith(f"{name}_sum"):
                total += value
            elif line.startswith(f"{name}_count"):
                count += value
            elif match := re.search(r'le="([^"]+)"', line):
                bound = float(match.group(1))
                buckets[bound] = buckets.get(bound, 0.0) + value
    if not buckets:  # a renamed metric must stop the bench, not print nan
        raise LookupError(f"no {name} series with {labels} in the workers' /metrics")
    return total, count, sorted(buckets.items())


def quantile(buckets: list[tuple[float, float]], q: float) -> float:
    """The q-quantile of cumulative buckets, interpolated linearly inside its bucket (as
    Prometheus' ``histogram_quantile`` does): the bounds alone are too coarse to compare."""
    total = buckets[-1][1] if buckets else 0
    lower, below = 0.0, 0.0
    for bound, cumulative in buckets:
        if total and cumulative >= q * total:
            if bound == float("inf"):
                return lower
            share = (q * total - below) / max(cumulative - below, 1e-12)
            return lower + (bound - lower) * share
        lower, below = bound, cumulative
    return float("nan")


async def scenario_balance(bench: Bench, sim: FarmSimulator, job: float, steady: float) -> None:
    print(f"== balance: {B} 2.5x slower than {A}, one tier; which strategy keeps latency lower")
    sim.set_fault(B, Fault(FaultKind.SLOW, seconds=2.5 * job))
    try:
        for strategy in ("least_in_flight", "weighted_random"):
            routes = routes_toml(target(A, tier=0), target(B, tier=0))
            async with fleet(
                bench, sim, routes, f"balance-{strategy}", routing_balance=strategy
            ) as f:
                await asyncio.sleep(15)
                before = await f.scrape()
                a0, b0 = calls(sim, A), calls(sim, B)
                await asyncio.sleep(steady)
                after = await f.scrape()
                a, b = calls(sim, A) - a0, calls(sim, B) - b0
                name, wf = "memory_worker_farm_call_seconds", "memory_extraction"
                s1, c1, _ = histogram(after, name, workflow=wf, outcome="success")
                s0, c0, _ = histogram(before, name, workflow=wf, outcome="success")
                run_name = "memory_worker_run_duration_seconds"
                _, _, runs = histogram(after, run_name, outcome="completed")
                runs0 = dict(histogram(before, run_name, outcome="completed")[2])
                window = [(bound, n - runs0.get(bound, 0.0)) for bound, n in runs]
                print(
                    f"  {strategy:16} {A} {pct(a, a + b)}, {B} {pct(b, a + b)}; "
                    f"extraction call mean {(s1 - s0) / max(c1 - c0, 1):.3f} s over {c1 - c0:.0f}; "
                    f"run p95 ~ {quantile(window, 0.95):.2f} s; {(c1 - c0) / steady:.1f} calls/s"
                )
    finally:
        sim.clear_faults(B)


async def main(args: argparse.Namespace) -> None:
    scenarios = set(args.only.split(","))
    async with (
        fresh_bench(max_queued_runs=100_000, max_daily_enqueued_runs=1_000_000) as bench,
        FarmSimulator(run_seconds=args.job, submit_block_seconds=5.0, embedder="hashed") as sim,
    ):
        if "share" in scenarios:
            await scenario_share(bench, sim, args.job, args.steady)
        if "retry" in scenarios:
            await scenario_retry(bench, sim, args.pause)
        if "rate" in scenarios:
            await scenario_rate(bench, sim, args.rpm, args.rate_minutes)
        if "balance" in scenarios:
            await scenario_balance(bench, sim, args.job, args.steady)
        if "eject" in scenarios:
            await scenario_eject(bench, sim)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="share,retry,rate,balance,eject")
    parser.add_argument("--job", type=float, default=0.2, help="farm job seconds")
    parser.add_argument("--steady", type=float, default=60.0, help="steady-state window (s)")
    parser.add_argument("--pause", type=float, default=30.0, help="Retry-After seconds")
    parser.add_argument("--rpm", type=int, default=60)
    parser.add_argument("--rate-minutes", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true", help="short windows (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steady, args.pause, args.rate_minutes = 20.0, 5.0, 1.0
    return args


if __name__ == "__main__":
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    asyncio.run(main(parse()))
