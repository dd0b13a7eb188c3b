"""The forget preview with 100 000 runs, walking every run against reading the per-chat run index.

``--runs`` runs are enqueued over 997 chats through the real enqueue script (which
indexes them by chat). The index keys and the "built" marker are then deleted, as on a
deployment whose runs predate the index, and in the same run:

- before: the console's forget preview (``/forget?chat=…&preview=1``, its server time
  from the ``Server-Timing`` header) and ``RunForget.chat_runs``, both walking every run;
- the one-time backfill, pass by pass as maintenance paces it (``MEMORY_CHAT_INDEX_BACKFILL_RUNS``);
- after: the same preview and ``chat_runs``, now read from the chat's index.

    python bench/chat_index.py [--runs 100000] [--samples 15]
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from common import fill, fresh_bench, run_bench

from memory_worker.console import add_console
from memory_worker.runs import RunStore
from memory_worker.runs.chat_index import ChatIndex
from memory_worker.runs.forget import RunForget

CHAT = 5  # tiny_request spreads runs over chats 1..997


async def timed(way: Callable[[], Awaitable[Any]], samples: int) -> float:
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        await way()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


async def preview(client: TestClient[web.Request, web.Application], samples: int) -> float:
    times = []
    for _ in range(samples):
        response = await client.get(f"/forget?chat={CHAT}&preview=1")
        assert response.status == 200, response.status
        await response.read()
        found = re.search(r"dur=([0-9.]+)", response.headers["Server-Timing"])
        assert found
        times.append(float(found.group(1)))
    return statistics.median(times)


async def main(runs: int, samples: int) -> None:
    async with fresh_bench() as bench:
        store = RunStore(bench.redis, bench.settings)
        t0 = time.perf_counter()
        await fill(store, runs)
        print(f"{runs} runs enqueued in {time.perf_counter() - t0:.0f} s")
        keys = store.keys
        await bench.redis.delete(*[keys.chat_runs(c) for c in range(1, 998)])
        await bench.redis.delete(keys.chat_runs_built, keys.chat_runs_cursor)
        forget = RunForget(bench.redis, keys, chunk=100)
        app = web.Application()
        add_console(app, bench.redis, bench.settings)
        async with TestClient(TestServer(app)) as client:
            walked = sorted(await forget.chat_runs(CHAT))
            before_page = await preview(client, samples)
            before_call = await timed(lambda: forget.chat_runs(CHAT), samples)
            await backfill(ChatIndex(bench.redis, keys), bench.settings.chat_index_backfill_runs)
            assert sorted(await forget.chat_runs(CHAT)) == walked, "index != walk"
            after_page = await preview(client, samples)
            after_call = await timed(lambda: forget.chat_runs(CHAT), samples)
        print(f"chat {CHAT}: {len(walked)} runs (index and walk agree)")
        print(f"{'':32} {'walk (before)':>14} {'index (after)':>14} {'ratio':>7}")
        for name, b, a in (
            ("forget preview, server ms", before_page, after_page),
            ("RunForget.chat_runs, ms", before_call, after_call),
        ):
            print(f"{name:32} {b:14.1f} {a:14.1f} {a / b:7.3f}")
        verdict = "OK" if after_page <= 300 else "OVER"
        print(f"forget preview after: {after_page:.1f} ms median (target <= 300 ms): {verdict}")


async def backfill(index: ChatIndex, per_pass: int) -> None:
    passes, longest, t0 = 0, 0.0, time.perf_counter()
    while not await index.built():
        t1 = time.perf_counter()
        await index.backfill(max_runs=per_pass)
        longest = max(longest, time.perf_counter() - t1)
        passes += 1
    total = time.perf_counter() - t0
    print(
        f"backfill: {passes} passes of {per_pass} runs, {total:.2f} s, longest pass {longest:.2f} s"
    )


if __name__ == "__main__":
    run_bench(main, __doc__, runs=100_000, samples=15)
