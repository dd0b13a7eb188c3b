"""Fault-matrix rows of the store area (§7 "Store faults", §8): 7, 8, 9, 13, 17, 31, 32, 33.

Rows 7–9 pause, kill or starve a *private* Valkey (never the shared test
server) under real worker processes and the farm simulator; rows 13 and 17
drive the real arq worker / pipeline in-process with a processor that hangs
or a route gate that is closed, so the moment that matters is exact.

Rows 31–33 are the store's deterministic answers, which no retry heals, under real
worker processes: a private Valkey out of memory for as long as the row needs (row 31:
the run is released at once, uncharged, ``/readyz`` and the stores' gauge say the store
refuses writes, and nothing is extracted again until it takes writes), and one chat's
data that is not what the code wrote — a key of the wrong type (row 32), a card counter
``INCR`` cannot raise (row 33): that chat's run fails within seconds, naming the chat and
the key's role, while six other chats' runs complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from redis.exceptions import RedisError

from llm_client import as_text
from memory_worker.farmsim import FarmSimulator
from memory_worker.farmsim.faults import Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.pipeline.runner import TickRunner
from memory_worker.pipeline.ticks import TickOutcome, TickQueue
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.worker.main import create_worker
from tests.faults.context import FaultContext, Scenario
from tests.support.factories import make_request
from tests.support.harness import Fleet, completed_run, eventually, free_port, workers_up
from tests.support.runner import tick_runner
from tests.support.scrape import ServingFleet, parse, scrape

#: Worker settings of the store rows: a 2 s lease, a 1.5 s heartbeat TTL, 1 s socket timeouts.
STORE_FAST: dict[str, Any] = {
    "lease_seconds": 2.0,
    "lease_renew_seconds": 0.5,
    "worker_heartbeat_seconds": 0.5,
    "redis_socket_timeout_seconds": 1.0,
    "redis_connect_timeout_seconds": 1.0,
    "store_retry_max_seconds": 0.5,
    "redis_reconnect_max_seconds": 0.5,
}


@dataclass
class PrivateStore:
    server: EmbeddedValkey
    settings: Settings
    redis: Any
    fleet: Fleet
    store: RunStore

    def pause(self) -> None:
        assert self.server.pid is not None
        os.kill(self.server.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.server.pid is not None
        os.kill(self.server.pid, signal.SIGCONT)

    def kill(self) -> None:
        assert self.server.pid is not None
        os.kill(self.server.pid, signal.SIGKILL)

    async def get(self, rid: str) -> Any:
        while True:
            with contextlib.suppress(RedisError, OSError):
                return await self.store.get(rid)
            await asyncio.sleep(0.05)

    async def counts(self) -> dict[str, int]:
        try:
            return await self.store.counts()
        except (RedisError, OSError):
            return {}


@contextlib.asynccontextmanager
async def private_store(
    base: Settings, sim: FarmSimulator, tmp: Path, **overrides: Any
) -> AsyncIterator[PrivateStore]:
    """A private Valkey (AOF) with a fleet configured for it; everything stopped afterwards."""
    server = EmbeddedValkey(tmp / "valkey").ensure()
    settings = base.model_copy(update={"redis_url": server.url})
    redis = client_from_url(server.url, socket_timeout=2.0)
    fleet = Fleet(
        settings,
        tmp,
        env_overrides={"discovery_base_url": sim.base_url, **STORE_FAST, **overrides},
    )
    try:
        yield PrivateStore(server, settings, redis, fleet, RunStore(redis, settings))
    finally:
        if server.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(server.pid, signal.SIGCONT)
        fleet.stop_all()
        with contextlib.suppress(Exception):
            await redis.aclose()
        server.stop()


async def _enqueue(store: RunStore, n: int, first_chat: int = 7000) -> list[str]:
    ids = []
    for i in range(n):
        result = await store.enqueue(make_request(first_chat + i, hour=i % 24))
        assert result.run_id
        ids.append(result.run_id)
    return ids


async def row7(ctx: FaultContext) -> None:
    """Redis paused (SIGSTOP) for 2× the lease mid-run, 2 workers: attempts = 1, clean log.

    (Whether the farm's answer is kept — no release — also depends on the walker's
    breaker bookkeeping being best effort, row 6; the bench prints the releases.)"""
    async with private_store(ctx.settings, ctx.sim, ctx.tmp_path) as p:
        _, releases = await assert_pause_costs_nothing(p, ctx.sim)
        assert releases <= 1


async def assert_pause_costs_nothing(p: PrivateStore, sim: FarmSimulator) -> tuple[float, int]:
    """One trial of acceptance (a); returns (seconds from SIGCONT to completion, releases).

    A release (attempt refunded) happens when the run's card write hit the pause."""
    (rid,) = await _enqueue(p.store, 1)
    sim.set_fault(p.settings.extraction_service, Fault(kind=FaultKind.SLOW, seconds=1.0, times=1))
    before = sim.submits(p.settings.extraction_service)
    if not p.fleet.workers:
        await workers_up(p.fleet.start(2))  # (the 30 s wait below is for the submit only)
    await eventually(lambda: sim.submits(p.settings.extraction_service) > before, timeout=30)
    p.pause()
    await asyncio.sleep(2 * float(STORE_FAST["lease_seconds"]))
    p.resume()
    resumed = time.monotonic()

    run = await completed_run(lambda: p.get(rid), timeout=30)
    took = time.monotonic() - resumed
    assert run.attempts == 1, (run.attempts, run.error_log, p.fleet.logs())
    assert run.error_log == []
    assert not run.retired
    assert all(w.proc.poll() is None for w in p.fleet.workers), p.fleet.logs()
    return took, run.releases


async def row8(ctx: FaultContext) -> None:
    """Redis killed -9 and restarted from its AOF under 2 busy workers: resume ≤ 2 s."""
    # the production back-off cap, not a test-compressed one: the cap is part of the fault
    cap = Settings.model_fields["redis_reconnect_max_seconds"].default
    async with private_store(
        ctx.settings, ctx.sim, ctx.tmp_path, redis_reconnect_max_seconds=cap
    ) as p:
        resume = await measure_resume_after_kill(p, ctx.sim, runs=40)
        assert resume <= 2.0, (resume, p.fleet.logs())


async def measure_resume_after_kill(p: PrivateStore, sim: FarmSimulator, *, runs: int) -> float:
    """Seconds from Redis answering again to the next run completed; asserts nothing retired."""
    ids = await _enqueue(p.store, runs)
    sim.set_fault(p.settings.extraction_service, Fault(kind=FaultKind.SLOW, seconds=0.3))
    p.fleet.start(2)
    await eventually(lambda: _completed_at_least(p, 3), timeout=60)
    p.kill()
    await asyncio.sleep(1.5)
    p.server.ensure()  # same data dir and port: the AOF is replayed
    answered = time.monotonic()
    base = (await p.counts()).get("completed", 0)
    await eventually(lambda: _completed_at_least(p, base + 1), timeout=60, every=0.02)
    resume = time.monotonic() - answered
    sim.clear_faults()
    await eventually(lambda: _completed_at_least(p, runs), timeout=120)
    finished = await p.store.get_many(ids)
    assert all(r.status is RunStatus.COMPLETED for r in finished)
    assert not any(r.retired for r in finished)
    assert (await p.counts()).get("retired", 0) == 0
    return resume


async def _completed_at_least(p: PrivateStore, n: int) -> bool:
    return (await p.counts()).get("completed", 0) >= n


async def row9(ctx: FaultContext) -> None:
    """Redis out of memory mid-run (every write refused) for 2× the lease: nothing spent."""
    async with private_store(ctx.settings, ctx.sim, ctx.tmp_path) as p:
        (rid,) = await _enqueue(p.store, 1)
        service = p.settings.extraction_service
        ctx.sim.set_fault(service, Fault(kind=FaultKind.SLOW, seconds=1.0, times=1))
        p.fleet.start(2)
        await eventually(lambda: ctx.sim.submits(service) >= 1, timeout=30)
        await p.redis.config_set("maxmemory", "1")  # noeviction: every write is OOM
        await asyncio.sleep(2 * float(STORE_FAST["lease_seconds"]))
        await p.redis.config_set("maxmemory", "0")

        run = await completed_run(lambda: p.get(rid), timeout=30)
        assert run.attempts == 1, (run.attempts, run.error_log, p.fleet.logs())
        assert run.error_log == []
        assert not run.retired
        counters = await p.redis.hgetall(p.store.keys.counters)
        assert not any(k.startswith((b"failed:", b"retired:")) for k in counters), counters
        assert "OutOfMemoryError" in p.fleet.logs(tail=None)  # the fault really happened
        assert run.releases <= 1  # at most one refunded go-around


class _Hang:
    """A processor that ignores its deadline (a wedged extraction)."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        self.calls += 1
        await asyncio.sleep(3600)
        return ProcessResult(summary={})


async def row13(ctx: FaultContext) -> None:
    """A tick that outlives its budget fails its run as task_timeout; a poison run retires."""
    s = ctx.settings.model_copy(
        update={
            "tick_timeout_seconds": 1.5,
            "max_attempts": 2,
            "backoff_unit_seconds": 0.1,
            "poll_delay_seconds": 0.02,
            "safety_net_seconds": 1,
            "worker_heartbeat_seconds": 0.5,
            "lease_renew_seconds": 0.5,
        }
    )
    store = RunStore(ctx.redis, s)
    (rid,) = await _enqueue(store, 1)
    processor = _Hang()

    async def factory(settings: Settings, redis: Any) -> TickRunner:
        return tick_runner(settings=settings, redis=redis, processor=processor)

    client = client_from_url(ctx.redis_url)
    worker = create_worker(s, client, runner_factory=factory, handle_signals=False)
    task = asyncio.create_task(worker.async_run())
    try:

        async def retired() -> bool:
            return (await store.get(rid)).retired

        await eventually(retired, timeout=30)
    finally:
        task.cancel()
        await worker.close()
    run = await store.get(rid)
    assert (run.status, run.attempts, run.releases) == (RunStatus.FAILED, 2, 0)
    assert [e.code for e in run.error_log] == ["task_timeout", "task_timeout"]
    counters = await ctx.redis.hgetall(store.keys.counters)
    assert int(counters[b"failed:task_timeout"]) == 2
    assert b"released:shutdown" not in counters
    assert processor.calls == 2


class _Closed:
    async def blocked(self) -> bool:
        return True

    def tick_ended(self, outcome: TickOutcome) -> None:
        pass


async def row17(ctx: FaultContext) -> None:
    """A wake-up at the moment a deferring tick leaves the running set adds no second tick."""
    s = ctx.settings.model_copy(update={"consolidation_backend_retry_interval": 30.0})
    store = RunStore(ctx.redis, s)
    await _enqueue(store, 1)
    pipeline = tick_runner(settings=s, redis=ctx.redis, processor=_Hang(), gate=_Closed())
    ticks = TickQueue(ctx.redis, pipeline.keys)
    schedule = pipeline.ticks.schedule

    async def leave_then_wake(plan: Any, **kwargs: Any) -> Any:
        done = await schedule(plan, **kwargs)  # the follow-ups go in as the tick leaves
        if kwargs.get("done"):
            await pipeline.wake()  # an enqueue's wake-up (or the safety net) right after it left
        return done

    pipeline.ticks.schedule = leave_then_wake  # type: ignore[method-assign]
    assert await pipeline.tick(pipeline.keys.tick_job_id("t1")) == "deferred"
    counts = await ticks.counts()
    assert (counts.pending, counts.delayed, counts.running) == (1, 1, 0)  # one delayed probe only


#: How soon a run whose store write met a deterministic answer must be settled (seconds from
#: the moment it could first have been: generous for a loaded 2-core host; before the
#: bounded retries such a run stayed ``processing`` for its whole tick budget, an hour).
SETTLED_WITHIN = 15.0


async def _readyz(port: int) -> tuple[int, dict[str, Any]]:
    async with httpx.AsyncClient(timeout=5) as client:
        try:
            answer = await client.get(f"http://127.0.0.1:{port}/readyz")
        except httpx.HTTPError:
            return 0, {}
    return answer.status_code, answer.json()


async def _writes_refused(url: str) -> float | None:
    """The ``serve`` endpoint's ``memory_worker_redis_writes_refused`` of the queue's node."""
    series = parse(await scrape(url)).get("memory_worker_redis_writes_refused", {})
    values = [v for labels, v in series.items() if ("store", "queue") in labels]
    return values[0] if values else None


async def row31(ctx: FaultContext) -> None:
    """Redis out of memory (``maxmemory`` reached, ``noeviction``) for as long as it takes:
    the run whose card write it refused is released at once (0 attempts, reason
    ``store_refused``), its tick is free, ``/readyz`` is 503 ``redis_refuses_writes`` and the
    stores' gauge says 1; no run is extracted again while the store refuses writes (claims
    are refused too), and once it takes writes the run completes on attempt 1."""
    port = free_port()
    async with private_store(
        ctx.settings, ctx.sim, ctx.tmp_path, serve_port=port, metrics_cache_seconds=0.2
    ) as p:
        fleet = ServingFleet(p.settings, ctx.tmp_path / "serve")
        serve_url = await fleet.start_serve()
        try:
            (rid,) = await _enqueue(p.store, 1)
            service = p.settings.extraction_service
            ctx.sim.set_fault(service, Fault(kind=FaultKind.SLOW, seconds=1.0, times=1))
            p.fleet.start(1, args=["--serve"])
            await eventually(lambda: ctx.sim.submits(service) >= 1, timeout=30)
            await p.redis.config_set("maxmemory", "1")  # noeviction: writes are refused
            refused_at = time.monotonic()

            async def released() -> bool:
                run = await p.store.get(rid)
                return run.status is RunStatus.QUEUED and run.releases == 1

            await eventually(released, timeout=SETTLED_WITHIN)
            took = time.monotonic() - refused_at
            run = await p.store.get(rid)
            assert (run.attempts, run.error_log) == (0, []), (run, p.fleet.logs())
            assert [e.reason for e in run.release_log] == ["store_refused"]
            print(f"released {took:.2f} s after the store began refusing writes")

            async def unready() -> bool:
                code, body = await _readyz(port)
                return code == 503 and "redis_refuses_writes" in body.get("problems", [])

            await eventually(unready, timeout=SETTLED_WITHIN)

            async def gauge_is(value: float) -> bool:
                return await _writes_refused(serve_url) == value

            await eventually(lambda: gauge_is(1.0), timeout=SETTLED_WITHIN)
            assert ctx.sim.submits(service) == 1  # refused claims: nothing extracted again

            await p.redis.config_set("maxmemory", "0")
            run = await completed_run(lambda: p.get(rid), timeout=60)
            assert (run.attempts, run.releases, run.error_log) == (1, 1, []), p.fleet.logs()
            assert ctx.sim.submits(service) == 2  # the refused write's extraction, redone once
            await eventually(lambda: gauge_is(0.0), timeout=SETTLED_WITHIN)

            async def ready() -> bool:
                return (await _readyz(port))[0] == 200

            await eventually(ready, timeout=SETTLED_WITHIN)
            counters = await p.redis.hgetall(p.store.keys.counters)
            assert int(counters[b"released:store_refused"]) == 1, counters
            assert not any(k.startswith((b"failed:", b"retired:")) for k in counters), counters
        finally:
            await fleet.stop()


#: Six chats whose data is sound, beside the one whose data is not.
GOOD_CHATS = range(7101, 7107)
BAD_CHAT = 7100
#: A stored value that must reach no failure, log or page (it stands for chat text).
CANARY = "canary-7c1f0e: Alice's door code is 4471"


async def _one_chat_corrupt(ctx: FaultContext, role: str, plant: Any) -> None:
    """One chat's ``role`` key planted (``plant(redis, key)``); its run (the newest window,
    so the first claimed) and six other chats' runs enqueued; then two workers. The bad
    chat's run fails within :data:`SETTLED_WITHIN` s of the workers starting, as
    ``StoreDataCorrupt`` naming the chat and ``role``; the six complete."""
    keys = Keys(ctx.settings.key_prefix)
    await plant(ctx.redis, keys.chat(BAD_CHAT, role))
    store = RunStore(ctx.redis, ctx.settings)
    bad = (await store.enqueue(make_request(BAD_CHAT, hour=23))).run_id or ""
    good = [
        (await store.enqueue(make_request(c, hour=i))).run_id or ""
        for i, c in enumerate(GOOD_CHATS)
    ]
    fleet = Fleet(ctx.settings, ctx.tmp_path, {"discovery_base_url": ctx.sim.base_url})
    # timed from the workers being up (their start-up took 13-20 s on a loaded host)
    started = await workers_up(fleet.start(2))
    try:

        async def failed() -> bool:
            return bool((await store.get(bad)).error_log)

        await eventually(failed, timeout=SETTLED_WITHIN + 10)
        took = time.monotonic() - started
        first = (await store.get(bad)).error_log[0]
        assert first.code == "StoreDataCorrupt", (first, fleet.logs())
        assert f"chat {BAD_CHAT}" in first.message, first
        assert role in first.message, first
        # nothing of the bad chat's card write landed: the preflight refused it before its
        # first write (the chat's only key is the planted one)
        written = sorted(
            [as_text(k) async for k in ctx.redis.scan_iter(match=keys.chat(BAD_CHAT, "*"))]
        )
        assert written == [keys.chat(BAD_CHAT, role)], written
        print(
            f"chat {BAD_CHAT}'s run failed {took:.2f} s after the workers started: {first.message}"
        )
        for rid in good:
            run = await completed_run(partial(store.get, rid), timeout=60)
            assert (run.attempts, run.error_log) == (1, []), (run, fleet.logs())
        logs = fleet.logs(tail=None)
        assert CANARY not in logs
        assert all(CANARY not in e.message for e in (await store.get(bad)).error_log)
    finally:
        fleet.stop_all()


async def row32(ctx: FaultContext) -> None:
    """A chat whose card hash was overwritten with a string (a planted wrong-type key)."""

    async def plant(redis: Any, key: str) -> None:
        await redis.set(key, CANARY)

    await _one_chat_corrupt(ctx, "cards", plant)


async def row33(ctx: FaultContext) -> None:
    """A chat whose card counter is at the top of ``INCR``'s range (2^63 - 1)."""

    async def plant(redis: Any, key: str) -> None:
        await redis.set(key, str(2**63 - 1))

    await _one_chat_corrupt(ctx, "seq", plant)


ROWS: dict[int, Scenario] = {
    7: row7,
    8: row8,
    9: row9,
    13: row13,
    17: row17,
    31: row31,
    32: row32,
    33: row33,
}
