"""similar_cards at 10 000 cards in one chat vs a bare GET round trip of one card (target p50 ≤ 20 ms).

Fills one chat through the real run-write script (``apply_run``, 200 cards a
run, 512-d vectors), then measures in the same run:

- baseline: ``GET`` of one card's JSON (one Redis round trip);
- ``similar_cards`` hot: the chat's matrix is cached in the process, each
  query costs one ``GET vecver`` + numpy scan + one ``HMGET`` of the winners;
- ``similar_cards`` after a run write: one card was written before each query,
  so the cache refreshes incrementally (new rows + the one-byte-a-row mask);
- ``similar_cards`` full fetch: an empty cache (a new process, or a row was
  rewritten), so the whole packed matrix crosses the wire and is rebuilt;
- recall@10 of the int8 rows against an exact float32 scan;
- bytes per card (``MEMORY USAGE`` of every key of the chat ÷ cards).

    python bench/similar_cards.py [--cards 10000] [--dim 512] [--queries 300]
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import numpy as np
from common import fresh_bench, median, pct, run_bench

from memory_worker.cards import CardStore, Durability, NewCard, RunWrites, Scope
from memory_worker.keys import Keys

CHAT = -1001234567890
T0 = datetime(2026, 3, 1, tzinfo=UTC)
USERS = 50


def _one(i: int, vector: np.ndarray) -> NewCard:
    return make_cards(i, 1, {i: vector})[0]


def make_cards(start: int, count: int, vectors: Any) -> list[NewCard]:
    cards = []
    for i in range(start, start + count):
        user = i % USERS
        scope = Scope.USER if i % 3 else Scope.CHAT
        cards.append(
            NewCard(
                scope=scope,
                thread_id=0,
                user_id=1000 + user if scope == Scope.USER else None,
                card_type="preference",
                subject=f"person {user}",
                predicate=f"fact_{i % 40}",
                object=f"object {i}",
                fact_text=f"Person {user} said something memorable, number {i}, about topic {i % 97}.",
                confidence=0.8,
                salience=0.5,
                durability=Durability.LONG,
                source_message_ids=(i,),
                valid_from=T0,
                observed_at=T0,
                expires_at=None,
                embedding=vectors[i].tolist(),
            )
        )
    return cards


async def main(n_cards: int, dim: int, queries: int) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(n_cards, dim)).astype(np.float32)
    async with fresh_bench() as bench:
        keys = Keys(bench.settings.key_prefix)
        store = CardStore(bench.redis, keys)
        t0 = time.perf_counter()
        for run, start in enumerate(range(0, n_cards, 200)):
            count = min(200, n_cards - start)
            await store.apply_run(
                CHAT,
                f"fill-{run}",
                RunWrites(observed_at=T0, cards=make_cards(start, count, vectors)),
                now=T0,
            )
        fill_s = time.perf_counter() - t0

        one = (await bench.redis.hget(keys.chat(CHAT, "cards"), "1")) or b""
        probe = keys.chat(CHAT, "bench-one-card")
        await bench.redis.set(probe, one)
        baseline = []
        for _ in range(queries):
            q0 = time.perf_counter()
            await bench.redis.get(probe)
            baseline.append(time.perf_counter() - q0)
        await bench.redis.delete(probe)

        query_vectors = rng.normal(size=(queries, dim)).astype(np.float32)
        await store.similar_cards(CHAT, query_vectors[0].tolist(), 10, now=T0)  # warm the cache
        hot = []
        hits: list[list[str]] = []
        for q in query_vectors:
            q0 = time.perf_counter()
            found = await store.similar_cards(CHAT, q.tolist(), 10, now=T0)
            hot.append(time.perf_counter() - q0)
            hits.append([c.id for c, _ in found])

        extra = rng.normal(size=(max(10, queries // 10), dim)).astype(np.float32)
        after_write = []
        for i, q in enumerate(query_vectors[: len(extra)]):
            await store.apply_run(
                CHAT,
                f"delta-{i}",
                RunWrites(observed_at=T0, cards=[_one(n_cards + i, extra[i])]),
                now=T0,
            )
            q0 = time.perf_counter()
            await store.similar_cards(CHAT, q.tolist(), 10, now=T0)
            after_write.append(time.perf_counter() - q0)

        full = []
        for q in query_vectors[: len(extra)]:
            fresh = CardStore(bench.redis, keys)
            q0 = time.perf_counter()
            await fresh.similar_cards(CHAT, q.tolist(), 10, now=T0)
            full.append(time.perf_counter() - q0)

        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        recall = []
        for q, got in zip(query_vectors, hits, strict=True):
            exact = np.argsort(-(unit @ (q / np.linalg.norm(q))))[:10]
            recall.append(len({str(i + 1) for i in exact} & set(got)) / 10)

        memory = 0
        per_key: dict[str, int] = {}
        for key in await store.chat_keys(CHAT):
            used = int(await bench.redis.memory_usage(key, samples=0) or 0)
            memory += used
            suffix = key.split("}:", 1)[1].split(":", 1)[0]
            per_key[suffix] = per_key.get(suffix, 0) + used

    base_p50 = median(baseline)
    print(
        f"cards in one chat          : {n_cards} (dim {dim}), filled in {fill_s:.1f} s "
        f"({n_cards / fill_s:.0f} cards/s through apply_run)"
    )
    print(
        f"baseline GET one card      : p50 {base_p50 * 1e3:.3f} ms  p95 {pct(baseline, 0.95) * 1e3:.3f} ms"
    )
    print(
        f"similar_cards hot (cached) : p50 {median(hot) * 1e3:.3f} ms  p95 {pct(hot, 0.95) * 1e3:.3f} ms"
        f"  ratio p50 {median(hot) / base_p50:.1f}x baseline"
    )
    for label, values in (
        ("after a run write (delta)", after_write),
        ("full fetch (cold process)", full),
    ):
        print(
            f"similar_cards {label}: p50 {median(values) * 1e3:.3f} ms  "
            f"p95 {pct(values, 0.95) * 1e3:.3f} ms  ratio p50 {median(values) / base_p50:.1f}x"
        )
    print(f"recall@10 int8 vs float32  : {float(np.mean(recall)):.3f}")
    print(f"bytes per card (MEMORY USAGE of every chat key / cards): {memory / n_cards:.0f}")
    for name, used in sorted(per_key.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<10} {used / n_cards:8.1f} B/card")
    verdict = "OK" if median(hot) <= 0.020 else "OVER"
    print(
        f"target p50 <= 20 ms (hot)  : {verdict}; full fetch "
        f"{'OK' if median(full) <= 0.020 else 'OVER'}"
    )


if __name__ == "__main__":
    run_bench(main, __doc__, cards=10_000, dim=512, queries=300)
