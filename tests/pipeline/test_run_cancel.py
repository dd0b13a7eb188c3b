"""§13: the tick's side of a cancel. A worker whose run an operator cancels drops it at its
next checkpoint — the lease renewal answering "cancelled", or the processor's own checkpoint
and card write raising :class:`RunCancelled` — as neither a failure nor a release: no attempt
is charged, nothing is settled, and the tick goes on."""

from __future__ import annotations

import asyncio
from typing import Any

from memory_worker.errors import RunCancelled
from memory_worker.models import RunStatus
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from memory_worker.upkeep.run_actions import cancel_entry
from tests.support.factories import make_request
from tests.support.logs import capture_logs
from tests.support.runner import tick_runner


async def cancel(store: RunStore, run_id: str) -> None:
    run = await store.get(run_id)
    entry = cancel_entry(run, actor="test", now_ms=0).model_dump_json()
    assert (await store.cancel(run_id, entry)).outcome == "cancelled"


async def test_the_lease_renewal_finds_the_cancel_and_the_work_stops(
    settings: Settings, redis: Any
) -> None:
    s = settings.model_copy(update={"lease_renew_seconds": 0.05})
    store = RunStore(redis, s)
    run_id = (await store.enqueue(make_request(71))).run_id
    assert run_id is not None
    started, stopped = asyncio.Event(), asyncio.Event()

    async def processor(run: ClaimedRun, *, deadline: float) -> ProcessResult:
        started.set()
        try:
            await asyncio.sleep(60)  # the farm call the cancel lands in
        except asyncio.CancelledError:
            stopped.set()
            raise
        return ProcessResult(summary={})

    pipe = tick_runner(settings=s, redis=redis, processor=processor)
    with capture_logs() as logs:
        tick = asyncio.create_task(pipe.tick("t1"))
        await asyncio.wait_for(started.wait(), 10)
        await cancel(store, run_id)
        assert await asyncio.wait_for(tick, 10) != "failed"
    assert stopped.is_set()
    assert [e.get("at") for e in logs if e["event"] == "run_cancelled"] == ["lease_renewal"]
    assert not any(e["event"] == "run_lease_lost" for e in logs)
    run = await store.get(run_id)
    assert (run.status, run.attempts) == (RunStatus.CANCELLED, 1)
    assert [e.kind for e in run.error_log] == ["cancel"]
    counters = await redis.hgetall(store.keys.counters)
    assert not any(k.startswith((b"failed:", b"released:")) for k in counters)
    assert run_id not in pipe.held


async def test_a_checkpoint_or_the_card_write_raising_the_cancel_drops_the_run(
    settings: Settings, redis: Any
) -> None:
    store = RunStore(redis, settings)
    run_id = (await store.enqueue(make_request(72))).run_id
    assert run_id is not None

    async def processor(run: ClaimedRun, *, deadline: float) -> ProcessResult:
        await cancel(store, run.id)
        await store.checkpoint(run)  # what the processor's checkpoint does: raises
        return ProcessResult(summary={})

    pipe = tick_runner(settings=settings, redis=redis, processor=processor)
    with capture_logs() as logs:
        assert await pipe.tick("t2") != "failed"
    assert [e.get("at") for e in logs if e["event"] == "run_cancelled"] == ["checkpoint"]
    run = await store.get(run_id)
    assert run.status is RunStatus.CANCELLED
    assert [e.kind for e in run.error_log] == ["cancel"]
    counters = await redis.hgetall(store.keys.counters)
    assert not any(k.startswith((b"failed:", b"released:")) for k in counters)
    assert isinstance(RunCancelled("x"), Exception)
