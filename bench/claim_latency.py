"""Claim latency p50 at a 1 000 000-run backlog vs 1 000 (target ≤ 1.5×).

Each sample is one claim (the real Lua script: expired leases → due retries →
newest queued) followed by a release, so the backlog stays the same size.

    python bench/claim_latency.py [--big 1000000] [--small 1000] [--samples 3000]
"""

from __future__ import annotations

import time

from common import fill, fresh_bench, median, pct, run_bench

from memory_worker.runs import RunStore


async def measure(store: RunStore, samples: int) -> list[float]:
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        claim = await store.claim("bench")
        out.append(time.perf_counter() - t0)
        assert claim is not None
        await store.release(claim, reason="bench")
    return out


async def main(big: int, small: int, samples: int) -> None:
    async with fresh_bench() as bench:
        store = RunStore(bench.redis, bench.settings)
        await fill(store, small)
        await measure(store, 200)  # warm-up
        small_lat = await measure(store, samples)
        t0 = time.perf_counter()
        await fill(store, big - small, start=small)
        fill_s = time.perf_counter() - t0
        big_lat = await measure(store, samples)
        memory = (await bench.redis.info("memory"))["used_memory_human"]
    p50_small, p50_big = median(small_lat) * 1e3, median(big_lat) * 1e3
    print(
        f"backlog {small:>9,}: claim p50 {p50_small:.3f} ms  p99 {pct(small_lat, 0.99) * 1e3:.3f} ms"
    )
    print(f"backlog {big:>9,}: claim p50 {p50_big:.3f} ms  p99 {pct(big_lat, 0.99) * 1e3:.3f} ms")
    print(
        f"(filled {big - small:,} runs through the enqueue script in {fill_s:.1f} s; Redis {memory})"
    )
    print(f"ratio p50 {big:,} / {small:,} = {p50_big / p50_small:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    run_bench(main, __doc__, big=1_000_000, small=1_000, samples=3000)
