"""Importing a 20,000-card export (§13): the longest single Redis call, chunked and whole.

A private Valkey holds one chat of ``--cards`` cards (512-byte int8 vector rows, written
by ``--runs`` runs through the real card write); it is exported, and the file imported into
two empty deployments (key prefixes apart):

- **chunked** — as ``MemoryQueue.import_export`` does it, ``MEMORY_IMPORT_CHUNK_ITEMS``
  (``--chunk``) items a script call;
- **whole** (baseline, the same run) — the same plan in one script call, as the import was
  written before it had chunks.

Figures: the import's wall time, its script calls and the longest command the server ran
meanwhile (SLOWLOG, threshold 0: how long one call blocks Redis — the budget is 50 ms).

    python bench/import_chunks.py [--cards 20000] [--chunk 200]
"""

from __future__ import annotations

import os
import statistics
import time
from datetime import timedelta

from common import BASE, fresh_bench, run_bench
from forget import call_times, write_memory

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore
from memory_worker.cards.export_format import parse_export
from memory_worker.cards.transfer import write_snapshot
from memory_worker.keys import Keys
from memory_worker.storage.connections import RedisHandle

CHAT = -1001


async def main(cards: int, runs: int, chunk: int) -> None:
    async with fresh_bench(forget_rewrite_aof=False, import_chunk_items=chunk) as bench:
        redis, settings = bench.redis, bench.settings
        await write_memory(CardStore(redis, Keys(settings.key_prefix)), cards, runs, CHAT)
        source = MemoryQueue(RedisHandle(redis, bench.server.url), settings)
        lines = list((await source.export(CHAT)).lines())
        size = sum(len(x) for x in lines)
        snap = parse_export(lines, card_max_bytes=settings.card_max_bytes)
        await redis.config_set("auto-aof-rewrite-percentage", 0)
        await redis.config_set("slowlog-log-slower-than", 0)
        await redis.config_set("slowlog-max-len", 100_000)
        rows = []
        for name, items in (("whole", 10**9), ("chunked", chunk)):
            target = CardStore(redis, Keys(f"{settings.key_prefix}{name}:"))
            await redis.slowlog_reset()
            t0 = time.perf_counter()
            done = await write_snapshot(
                target,
                snap,
                now=BASE + timedelta(days=1),
                chats_key="x",
                chunk_items=items,
                replans=settings.import_replans,
            )
            took = time.perf_counter() - t0
            calls = await call_times(redis)
            scripts = [d for d, command in calls if command == "EVALSHA"]
            rows.append((name, done, took, scripts, calls))
        print(
            f"one chat of {cards} cards ({size / 2**20:.1f} MiB of export); load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        whole_ms = rows[0][3][0]
        for name, done, took, scripts, calls in rows:
            print(
                f"{name:7}: {done['cards']} cards in {took:6.2f} s, {done['chunks']:4} script "
                f"call(s), median {statistics.median(scripts):7.2f} ms, longest "
                f"{scripts[0]:8.2f} ms ({scripts[0] / whole_ms:5.3f}x the whole file's call); "
                f"longest command of all {calls[0][0]:.2f} ms ({calls[0][1]})"
            )


if __name__ == "__main__":
    run_bench(main, __doc__, cards=20_000, runs=50, chunk=200)
