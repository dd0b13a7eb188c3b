"""A settlement the store refuses is owed, never charged (§7 "Store faults").

The run store's completion and release answer as a Redis user whose ACL denies their keys
answers (redis-py's ``NoPermissionError``, the reply a real server sent: fault row 35 gets
it from a real Valkey); the rest is a real store on the shared test server. The tick ends
at once, the worker owes the run a release (held, listed by its heartbeat, on its
readiness and gauge), and the release lands as soon as the store takes it: 0 attempts.
A worker stopped while it owes one releases it on its way out.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from redis.exceptions import NoPermissionError

from memory_worker.models import RunStatus
from memory_worker.pipeline.process_metrics import WorkerMetrics
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from tests.support.factories import make_request
from tests.support.harness import eventually
from tests.support.runner import tick_runner

DENIED = "No permissions to access a key"  # what Valkey says (its NOPERM code cut off)


class Done:
    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        return ProcessResult(summary={"cards": 0})


class DeniedStore(RunStore):
    """A real run store whose completion and release are refused while ``denied`` is set."""

    denied = True
    releases_refused = 0

    async def complete(self, claim: ClaimedRun, result: dict[str, Any], **kw: Any) -> bool:
        if self.denied:
            raise NoPermissionError(DENIED)
        return await super().complete(claim, result, **kw)

    async def release(self, claim: ClaimedRun, **kw: Any) -> bool:
        if self.denied:
            self.releases_refused += 1
            raise NoPermissionError(DENIED)
        return await super().release(claim, **kw)


def _runner(settings: Settings, redis: Any) -> Any:
    s = settings.model_copy(update={"store_retry_max_seconds": 0.2})
    runner = tick_runner(settings=s, redis=redis, processor=Done(), metrics=WorkerMetrics("t"))
    runner.store = DeniedStore(redis, s)
    return runner


def _gauge(runner: Any) -> float:
    (family,) = [m for m in runner.metrics.collect() if m.name.endswith("writes_refused")]
    (sample,) = family.samples
    return float(sample.value)


async def test_a_refused_settlement_frees_the_tick_and_is_released_uncharged(
    settings: Settings, redis: Any
) -> None:
    runner = _runner(settings, redis)
    rid = (await runner.store.enqueue(make_request(31))).run_id or ""
    started = time.monotonic()
    outcome = await runner.tick(runner.keys.tick_job_id("t1"))
    assert outcome == "store_error"
    assert time.monotonic() - started < 10  # the tick did not wait for the store
    assert runner.owed == {rid: "noperm"}
    assert runner.writes_refused() == ["noperm"]
    assert rid in runner.held
    assert _gauge(runner) == 1.0
    await eventually(lambda: runner.store.releases_refused >= 3, timeout=20)  # still retried
    run = await runner.store.get(rid)
    assert (run.status, run.attempts) == (RunStatus.PROCESSING, 1)

    runner.store.denied = False  # the operator grants the keys
    await eventually(lambda: not runner.owed, timeout=20)
    run = await runner.store.get(rid)
    assert (run.status, run.attempts, run.releases, run.error_log) == (
        RunStatus.QUEUED,
        0,
        1,
        [],
    )
    assert [e.reason for e in run.release_log] == ["store_refused"]
    assert [e.code for e in run.release_log] == ["noperm"]
    assert rid not in runner.held
    assert rid not in runner.unsettled
    assert _gauge(runner) == 0.0
    assert await runner.tick(runner.keys.tick_job_id("t2")) == "completed"
    assert (await runner.store.get(rid)).attempts == 1


async def test_a_worker_stopping_while_it_owes_a_release_gives_the_run_back(
    settings: Settings, redis: Any
) -> None:
    runner = _runner(settings, redis)
    rid = (await runner.store.enqueue(make_request(32))).run_id or ""
    assert await runner.tick(runner.keys.tick_job_id("t1")) == "store_error"
    assert rid in runner.owed
    runner.stopping = True
    runner.store.denied = False
    assert await runner.release_unsettled() == 1
    await asyncio.sleep(0)
    run = await runner.store.get(rid)
    assert (run.status, run.attempts, run.releases) == (RunStatus.QUEUED, 0, 1)
    assert not runner.owed
    assert not runner.unsettled
