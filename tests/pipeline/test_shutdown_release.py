"""A SIGTERM racing a Redis outage spends no attempt (§7).

A worker SIGTERMed about a second before Valkey is killed may still be retrying
a run's outcome write when arq's shutdown grace runs out; arq then cancels the
tick, and a release made from the tick would never land — the run's attempt
would be spent. So a stopping worker keeps such runs as *unsettled*, keeps listing
them in its heartbeat, and releases them from on_shutdown (retried for
``MEMORY_SHUTDOWN_RELEASE_SECONDS`` while Redis is away).

Both tests pause a private Valkey (SIGSTOP) — a real server, a real store — and
assert what the contract promises: the run is back in the queue with its attempt
refunded, and the next worker completes it on its first attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.models import RunStatus
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from tests.faults.rows_store import private_store
from tests.support.factories import make_request
from tests.support.harness import completed_run, eventually
from tests.support.runner import tick_runner


class StoreAwayProcessor:
    """Waits to be let go, then fails the way a card read fails while Redis is away."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.go = asyncio.Event()

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        self.started.set()
        await self.go.wait()
        raise RedisConnectionError("store away")


async def test_run_whose_release_was_cancelled_is_released_on_shutdown(
    tmp_path: Path, settings: Settings
) -> None:
    server = EmbeddedValkey(tmp_path / "valkey").ensure()
    assert server.pid is not None
    s = settings.model_copy(
        update={
            "redis_url": server.url,
            "store_retry_max_seconds": 0.2,
            "shutdown_release_seconds": 10.0,
        }
    )
    redis = client_from_url(server.url, socket_timeout=0.3, socket_connect_timeout=0.3)
    try:
        store = RunStore(redis, s)
        rid = (await store.enqueue(make_request(4242))).run_id
        assert rid
        processor = StoreAwayProcessor()
        runner = tick_runner(settings=s, redis=redis, processor=processor)
        tick = asyncio.create_task(runner.tick("tick-1"))
        await asyncio.wait_for(processor.started.wait(), 10)

        os.kill(server.pid, signal.SIGSTOP)  # Redis goes away mid-run …
        runner.stopping = True  # … as a SIGTERM arrives
        processor.go.set()  # the run's store read fails → a patient release starts retrying
        await asyncio.sleep(0.8)
        tick.cancel()  # arq's shutdown grace ends: the tick is cancelled mid-retry
        with contextlib.suppress(asyncio.CancelledError):
            await tick
        assert set(runner.unsettled) == {rid}
        assert rid in runner.held  # still listed by the heartbeat: no claim reads it as lost

        releasing = asyncio.create_task(runner.release_unsettled())
        await asyncio.sleep(1.0)
        os.kill(server.pid, signal.SIGCONT)  # Redis answers again within the release window
        assert await asyncio.wait_for(releasing, 15) == 1
        assert not runner.unsettled
        assert not runner.held

        run = await store.get(rid)
        assert run.status is RunStatus.QUEUED
        assert run.attempts == 0  # the attempt of the interrupted claim was refunded
        assert run.releases == 1
        assert run.error_log == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGCONT)
        with contextlib.suppress(Exception):
            await redis.aclose()
        server.stop()


async def test_sigterm_during_a_redis_pause_spends_no_attempt(
    settings: Settings, sim: FarmSimulator, tmp_path: Path
) -> None:
    """A real worker process SIGTERMed while its Valkey is paused mid-run.

    Here arq's cancel meets the tick inside the farm call (the shielded shutdown
    release in ``_process``); the test above pins the path the soak caught — a
    cancel inside an outcome write's retry — which only on_shutdown can settle."""
    overrides: dict[str, Any] = {"shutdown_grace_seconds": 1.0, "shutdown_release_seconds": 10.0}
    async with private_store(settings, sim, tmp_path, **overrides) as p:
        rid = (await p.store.enqueue(make_request(4343))).run_id
        assert rid
        service = p.settings.extraction_service
        sim.set_fault(service, Fault(kind=FaultKind.SLOW, seconds=3.0, times=1))
        (worker,) = p.fleet.start(1)
        await eventually(lambda: sim.submits(service) > 0, timeout=30)

        p.pause()
        worker.terminate()  # SIGTERM: grace 1 s, then arq cancels the tick
        await asyncio.sleep(3.0)
        p.resume()
        assert await asyncio.to_thread(worker.wait, 60) == 0, p.fleet.logs()  # a loaded host

        run = await p.get(rid)
        assert run.status is RunStatus.QUEUED, (run.status, p.fleet.logs())
        assert run.attempts == 0
        assert run.releases >= 1

        p.fleet.start(1)  # the next worker completes it on its first attempt

        run = await completed_run(lambda: p.get(rid), timeout=60)
        assert run.attempts == 1, (run.attempts, run.error_log, p.fleet.logs())
        assert run.error_log == []
