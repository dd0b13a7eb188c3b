"""Consolidation overhead per run with an instant farm vs a bare arq no-op job (same run).

Both go through a real arq worker (burst mode, one job at a time, the same
poll delay) on the same private Valkey:

- baseline: N bare arq no-op jobs;
- ours: N memory runs (the demo's multilingual chats, distinct windows) through
  the production pipeline — claim, lease, noise filter, budgets, prompt, the
  routed walker with its breaker round trips, decoding, validation, embedding
  call, the atomic card write, completion, follow-up ticks — with an in-process
  farm whose model time is measured and subtracted ("everything but the LLM").

    python bench/consolidation_overhead.py [--runs 300] [--rounds 3]
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import numpy as np
import orjson
from arq.connections import ArqRedis
from arq.worker import Worker
from common import fresh_bench, run_bench
from redis.asyncio import Redis

from llm_client import ChatResult, EmbedResult, RouteTarget
from memory_worker.demo import load_sample_chats
from memory_worker.farmsim.extractor import answer
from memory_worker.models import RunRequest
from memory_worker.pipeline.runner import TickRunner
from memory_worker.pipeline.ticks import Mode, TickPlan
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.wiring import build_tick_runner
from memory_worker.worker.main import create_worker


class InstantFarm:
    """The in-process model: rule-based answers and hashed vectors; it times itself.

    It is every target's chat and embedding transport; it takes the options a real
    transport does (idempotency key, timeout, task description) and ignores them.
    """

    def __init__(self) -> None:
        self.model_seconds = 0.0

    async def chat(self, request: Mapping[str, Any], **_options: Any) -> ChatResult:
        t0 = time.perf_counter()
        payload = orjson.loads(request["messages"][-1]["content"])
        content = orjson.dumps(answer(payload)).decode()
        self.model_seconds += time.perf_counter() - t0
        return ChatResult(content=content, model="instant")

    async def embed(self, texts: Sequence[str], *, dimension: int, **_options: Any) -> EmbedResult:
        t0 = time.perf_counter()
        vectors = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            v = np.random.default_rng(seed).standard_normal(dimension)
            vectors.append((v / np.linalg.norm(v)).tolist())
        self.model_seconds += time.perf_counter() - t0
        return EmbedResult(embeddings=vectors, dimension=dimension)


class Transports:
    """The transport factory: the instant farm serves every target."""

    def __init__(self, farm: InstantFarm) -> None:
        self.farm = farm

    def chat(self, target: RouteTarget) -> InstantFarm:
        return self.farm

    def embed(self, target: RouteTarget) -> InstantFarm:
        return self.farm


def requests(n: int) -> list[RunRequest]:
    chats = load_sample_chats()
    out = []
    for i in range(n):
        base = chats[i % len(chats)]
        shift = timedelta(days=1 + i // len(chats))
        data = base.model_dump(mode="json")
        data["chat_id"] = base.chat_id * 1000 + i // len(chats)
        for key in ("range_start", "range_end"):
            data[key] = (getattr(base, key) + shift).isoformat()
        for m, orig in zip(data["messages"], base.messages, strict=True):
            m["sent_at"] = (orig.sent_at + shift).isoformat()
        out.append(RunRequest.model_validate(data))
    return out


async def noop(ctx: dict[str, Any]) -> None:
    return None


async def baseline(client: Redis, n: int, poll: float) -> tuple[float, float]:
    """Wall and this process's CPU seconds per bare arq no-op job."""
    redis = ArqRedis(connection_pool=client.connection_pool)  # arq's pool over our client's
    queue = "bench:noop"
    for _ in range(n):
        await redis.enqueue_job("noop", _queue_name=queue)
    worker = Worker(
        functions=[noop],
        redis_pool=redis,
        queue_name=queue,
        burst=True,
        max_jobs=1,
        poll_delay=poll,
        handle_signals=False,
        keep_result=0,
    )
    t0, c0 = time.perf_counter(), time.process_time()
    await worker.async_run()
    return (time.perf_counter() - t0) / n, (time.process_time() - c0) / n


async def ours(
    settings: Settings, redis: ArqRedis, n: int
) -> tuple[float, float, float, int, float]:
    """Per run: wall, tick work and model seconds, runs completed, and this process's CPU
    seconds (model excluded)."""
    store = RunStore(redis, settings)
    for request in requests(n):
        await store.enqueue(request)
    farm = InstantFarm()
    tick_seconds = 0.0

    async def factory(s: Settings, r: Redis) -> TickRunner:
        pipeline = await build_tick_runner(s, r, transports=Transports(farm))
        tick = pipeline.tick

        async def timed(job_id: str, *, go_on: bool = False) -> str:
            nonlocal tick_seconds
            t0 = time.perf_counter()
            try:
                return await tick(job_id, go_on=go_on)
            finally:
                tick_seconds += time.perf_counter() - t0

        pipeline.tick = timed  # type: ignore[method-assign]
        return pipeline

    worker = create_worker(
        settings, redis, runner_factory=factory, burst=True, handle_signals=False
    )
    worker.cron_jobs = []  # burst mode: only ticks
    await redis.delete(worker.queue_name)
    pipeline_probe = await factory(settings, redis)
    await pipeline_probe.ticks.schedule(TickPlan(Mode.AMPLIFY, base=1), target=1)
    t0, c0 = time.perf_counter(), time.process_time()
    await worker.async_run()
    total = time.perf_counter() - t0
    cpu = (time.process_time() - c0 - farm.model_seconds) / n
    await worker.close()
    counts = await store.counts()
    return (
        total / n,
        (tick_seconds - farm.model_seconds) / n,
        farm.model_seconds / n,
        counts["completed"],
        cpu,
    )


async def one_round(n: int, poll: float) -> tuple[float, float, float, float, int, float, float]:
    """A round's figures; the last two: CPU ms per run (model excluded) and per no-op job."""
    async with fresh_bench(
        worker_concurrency=1, pipeline_target=1, poll_delay_seconds=poll
    ) as bench:
        base, base_cpu = await baseline(bench.redis, n, poll)
        per_run, in_tick, model, completed, cpu = await ours(bench.settings, bench.redis, n)
    return base, per_run, in_tick, model, completed, cpu * 1e3, base_cpu * 1e3


async def main(n: int, poll: float, rounds: int) -> None:
    """``rounds`` alternating rounds (each: baseline, then ours, on a fresh Valkey); the
    median round's ratio is reported, so a neighbour's burst of CPU moves one round only."""
    results = [await one_round(n, poll) for _ in range(rounds)]
    results.sort(key=lambda r: (r[1] - r[3]) / r[0])
    base, per_run, in_tick, model, completed, _, base_cpu = results[len(results) // 2]
    every = ", ".join(f"{(r[1] - r[3]) / r[0]:.2f}x" for r in results)
    cpu = sorted(r[5] for r in results)
    print(
        f"bare arq no-op job:            {base * 1e3:7.2f} ms/job (baseline; arq poll_delay {poll}s)"
    )
    print(
        f"memory run, instant farm:      {per_run * 1e3:7.2f} ms/run end to end ({completed}/{n} completed)"
    )
    print(f"  model time (in-process):     {model * 1e3:7.2f} ms/run (subtracted)")
    print(f"  our work inside the tick:    {in_tick * 1e3:7.2f} ms/run")
    print(f"rounds (sorted): {every}")
    print(
        f"this process's CPU per run (model excluded): median {cpu[len(cpu) // 2]:.2f} ms "
        f"(rounds {', '.join(f'{c:.2f}' for c in cpu)}); a no-op job: "
        f"{base_cpu:.2f} ms (the host's speed moves these, not the sleeps)"
    )
    print(
        f"end-to-end, model excluded: {(per_run - model) / base:.2f}x a no-op job; "
        f"tick work alone {in_tick / base:.2f}x (median of {rounds} rounds)"
    )


if __name__ == "__main__":
    run_bench(main, __doc__, runs=300, poll=0.005, rounds=3)
