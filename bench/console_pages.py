"""Server time of every console page with 100 000 runs stored (target ≤ 300 ms each).

The store is filled through the real scripts: ``--runs`` enqueued, then most of
them claimed and completed, a share failed (retired, with error codes), some
left processing, the rest queued; one chat gets a few hundred cards and
episodes, the event stream a few thousand events. Each page is then fetched
``--samples`` times from the console on a loopback server and the server's own
time (its ``Server-Timing`` header) is reported as median and max. Then the read gate's
cost (§15): the same pages from a console bound off loopback, read with a login
cookie and with a bearer token, as a ratio to the open console measured in the same run.

    python bench/console_pages.py [--runs 100000] [--samples 15]
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from common import fill, fresh_bench, run_bench
from pydantic import SecretStr

from llm_client import EventType, RoutingEvent
from memory_worker.cards import CardStore, EpisodeWrite, RunWrites, Scope
from memory_worker.console import add_console
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.runs.chat_index import ChatIndex
from memory_worker.runs.policy import FailurePlan
from memory_worker.runs.replay import ReplayFilter, plan
from memory_worker.wiring import replay_store
from tests.support.cards import new as card
from tests.support.console import log_in

CHAT = 5  # tiny_request spreads runs over chats 1..997


async def shape(store: RunStore, runs: int) -> None:
    """Move the enqueued runs into a realistic mix of states."""
    sem = asyncio.Semaphore(256)
    completed = int(runs * 0.70)
    failed = int(runs * 0.05)
    processing = min(200, runs // 10)  # small --runs: the mix still fits in what was enqueued

    async def claim_then(kind: str) -> None:
        async with sem:
            claim = await store.claim("bench-worker")
            assert claim is not None
            if kind == "complete":
                await store.complete(claim, {"cards": 1})
            elif kind == "fail":
                await store.fail(
                    claim,
                    FailurePlan(retire=True, next_attempt_at_ms=None),
                    code="upstream_error" if hash(claim.id) % 2 else "task_timeout",
                    reason="backend_unavailable",
                    message="the farm said no",
                )

    plan = ["complete"] * completed + ["fail"] * failed + ["hold"] * processing
    for start in range(0, len(plan), 10_000):
        await asyncio.gather(*(claim_then(k) for k in plan[start : start + 10_000]))


async def memory(cards: CardStore, n_runs: int = 60) -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    for r in range(n_runs):
        at = t0 + timedelta(hours=r)
        new = [
            card(
                f"user{100 + i % 7} likes thing {r}-{i} and green tea",
                subject=f"user{100 + i % 7}",
                obj=f"thing {r}-{i}",
                scope=Scope.USER if i % 2 else Scope.CHAT,
                user=100 + i % 7,
                at=at,
                conf=0.8,
                sources=(i + 1,),
                seed=None,
                card_type="fact",
            )
            for i in range(5)
        ]
        episode = EpisodeWrite(
            summary=f"window {r}: talked about tea",
            topics=["tea"],
            participants=["user100"],
            range_start=at,
            range_end=at + timedelta(hours=1),
            thread_id=0,
            message_count=10,
        )
        await cards.apply_run(CHAT, f"bench-{r}", RunWrites(at, new, episode=episode), now=at)


async def events(redis: Any, keys: Keys, n: int = 3000) -> None:
    """Routing events straight into the stream (RedisEventLog.emit would also log each)."""
    kinds = [EventType.ATTEMPT_FAILED, EventType.CIRCUIT_OPENED, EventType.NO_CANDIDATES]
    async with redis.pipeline(transaction=False) as pipe:
        for i in range(n):
            event = RoutingEvent(
                type=kinds[i % 3],
                workflow="memory_extraction",
                target="llm-openai/memory-extractor",
                reason="provider_unavailable",
                counters={"failed_attempts": 2},
            )
            pipe.xadd(keys.events, event.to_fields(), maxlen=10_000, approximate=True)
        await pipe.execute()


async def main(runs: int, samples: int) -> None:
    async with fresh_bench() as bench:
        store = RunStore(bench.redis, bench.settings)
        t0 = time.perf_counter()
        await fill(store, runs)
        await shape(store, runs)
        keys = Keys(bench.settings.key_prefix)
        await memory(CardStore(bench.redis, keys))
        await events(bench.redis, keys)
        # what maintenance does on a deployment's first passes: the per-chat run index
        index = ChatIndex(bench.redis, keys)
        while not await index.built():
            await index.backfill(max_runs=bench.settings.chat_index_backfill_runs)
        counts = await store.counts()
        print(f"store: {counts} (filled in {time.perf_counter() - t0:.0f} s)")
        some_run = (await store.list_runs(limit=1))[0].id
        app = web.Application()
        add_console(app, bench.redis, bench.settings)
        pages = [
            "/",
            "/runs",
            "/runs?status=completed",
            "/runs?status=queued&offset=20000",
            "/runs?status=retired",
            f"/runs?chat={CHAT}",
            "/runs?code=upstream_error",
            "/runs?since=1h",
            f"/runs/{some_run}",
            "/breakers",
            "/events",
            "/events?type=no_candidates",
            "/memory",
            f"/memory/{CHAT}",
            f"/memory/{CHAT}?q=tea",
            "/settings",
            "/replay",
            "/replay?preview=1&code=upstream_error",
            "/forget",
            f"/forget?chat={CHAT}&preview=1",
            f"/forget?chat={CHAT}&user=100&preview=1",
        ]
        async with TestClient(TestServer(app)) as client:
            print(f"{'page':45} {'median ms':>10} {'max ms':>8}")
            worst = 0.0
            for path in pages:
                times = []
                for _ in range(samples):
                    response = await client.get(path)
                    assert response.status == 200, (path, response.status)
                    await response.read()
                    found = re.search(r"dur=([0-9.]+)", response.headers["Server-Timing"])
                    assert found
                    times.append(float(found.group(1)))
                worst = max(worst, statistics.median(times))
                print(f"{path:45} {statistics.median(times):10.1f} {max(times):8.1f}")
            verdict = "OK" if worst <= 300 else "OVER"
            print(f"slowest page median {worst:.1f} ms (target <= 300 ms): {verdict}")
        await gate_cost(bench.redis, bench.settings, samples)
        await replay_baseline(bench.redis, bench.settings, samples)


async def server_ms(client: TestClient[Any, Any], path: str, **kw: Any) -> float:
    """The server's own time for one GET of ``path`` (its ``Server-Timing``)."""
    response = await client.get(path, **kw)
    assert response.status == 200, (path, response.status)
    await response.read()
    found = re.search(r"dur=([0-9.]+)", response.headers["Server-Timing"])
    assert found
    return float(found.group(1))


async def gate_cost(redis: Any, settings: Any, samples: int) -> None:
    """Server time of pages behind the read gate (a cookie, a bearer) against the open console,
    interleaved sample by sample so both see the same machine load."""
    token = "bench-console-token-0f3e"
    closed = settings.model_copy(
        update={"serve_host": "0.0.0.0", "console_token": SecretStr(token)}
    )
    bearer = {"Authorization": f"Bearer {token}"}
    open_app, closed_app = web.Application(), web.Application()
    add_console(open_app, redis, settings)
    add_console(closed_app, redis, closed)  # the test server still listens on loopback
    async with (
        TestClient(TestServer(open_app)) as plain,
        TestClient(TestServer(closed_app)) as gated,
    ):
        login = await log_in(gated, token)
        assert login.status == 303
        ways: dict[str, tuple[TestClient[Any, Any], dict[str, str]]] = {
            "open": (plain, {}),
            "cookie": (gated, {}),
            "bearer": (gated, bearer),
        }
        print(f"{'read gate':24} {'open ms':>8} {'cookie ms':>10} {'bearer ms':>10} {'ratio':>7}")
        for path in ("/settings", "/", "/runs", f"/memory/{CHAT}"):
            times: dict[str, list[float]] = {way: [] for way in ways}
            for n in range(samples + 1):
                for way, (client, headers) in ways.items():
                    took = await server_ms(client, path, headers=headers)
                    if n:  # the first round compiles each console's templates
                        times[way].append(took)
            base, cookie, header = (statistics.median(t) for t in times.values())
            ratio = max(cookie, header) / base if base else float("nan")
            print(f"{path:24} {base:8.2f} {cookie:10.2f} {header:10.2f} {ratio:6.2f}x")


async def replay_baseline(redis: Any, settings: Any, samples: int) -> None:
    """The replay preview from the summary, against reading every retired run (the baseline), in this run."""
    replay = replay_store(redis, settings)
    wanted = ReplayFilter(error_code="upstream_error")
    now = int(time.time() * 1000)

    async def every_run() -> int:
        found = await replay.read_every_run(wanted, "-inf", "+inf")
        return len(plan(found, wanted, now_ms=now).items)

    async def summary() -> int:
        return (await replay.preview(wanted, now_ms=now)).matched

    medians = {}
    for name, way in (("reading every retired run (before)", every_run), ("summary", summary)):
        times = []
        for _ in range(samples):
            t0 = time.perf_counter()
            matched = await way()
            times.append((time.perf_counter() - t0) * 1000)
        medians[name] = statistics.median(times)
        print(f"replay preview, {name:36} {medians[name]:8.1f} ms median ({matched} match)")
    before, after = medians.values()
    print(f"replay preview: summary takes {after / before:.3f}x the time of reading every run")


if __name__ == "__main__":
    run_bench(main, __doc__, runs=100_000, samples=15)
