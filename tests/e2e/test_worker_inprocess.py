"""The arq worker in-process against real Redis: deferral, amplification, outcomes (§7, §8).

These use fake processors so they are fast and exact; the farm-simulator
end-to-end versions live in test_e2e_*.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from arq.constants import in_progress_key_prefix
from redis.exceptions import BusyLoadingError, OutOfMemoryError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from llm_client import BackendUnavailable, BreakerConfig, BreakerStore, Outcome, TaskTimeout
from llm_client._breaker.carry import current_carry
from llm_client._breaker.model import Permit
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.pipeline.runner import _SLOT, TickRunner
from memory_worker.pipeline.ticks import Mode, TickPlan, TickQueue
from memory_worker.runs import ClaimedRun, RunStore, now_ms
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url
from memory_worker.worker.main import MemoryWorker, create_worker
from tests.support.factories import make_request
from tests.support.harness import eventually
from tests.support.runner import tick_runner


class FakeProcessor:
    """Counts calls; behaviour is swappable while workers run."""

    def __init__(self, behaviour: Callable[[ClaimedRun], Any] | None = None, delay: float = 0.0):
        self.calls = 0
        #: ``time.monotonic()`` of every call: spacing is asserted from it, not by sleeping
        self.times: list[float] = []
        self.behaviour = behaviour
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        self.calls += 1
        self.times.append(time.monotonic())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.behaviour is not None:
                outcome = self.behaviour(run)
                if isinstance(outcome, BaseException):
                    raise outcome
            return ProcessResult(summary={"cards": 1})
        finally:
            self.in_flight -= 1


def unreachable(_: ClaimedRun) -> BaseException:
    return BackendUnavailable(
        "UPSTREAM_ERROR: [Errno -3] Temporary failure in name resolution", code="UPSTREAM_ERROR"
    )


@pytest.fixture
def fast(settings: Settings) -> Settings:
    return settings.model_copy(
        update={
            "consolidation_backend_retry_interval": 1.5,
            "poll_delay_seconds": 0.02,
            "lease_seconds": 3.0,
            "lease_renew_seconds": 0.5,
            "backoff_unit_seconds": 0.2,
            "worker_concurrency": 2,
            "safety_net_seconds": 1,
            "worker_heartbeat_seconds": 0.5,
            "shutdown_grace_seconds": 1,
        }
    )


@contextlib.asynccontextmanager
async def workers(
    settings: Settings,
    redis_url: str,
    processor: FakeProcessor,
    n: int = 1,
    *,
    patch: Callable[[TickRunner], None] | None = None,
) -> AsyncIterator[list[MemoryWorker]]:
    """``n`` workers on their own clients; ``patch`` (if any) is applied to each new pipeline."""

    async def factory(s: Settings, redis: Any) -> TickRunner:
        pipeline = tick_runner(settings=s, redis=redis, processor=processor)
        if patch is not None:
            patch(pipeline)
        return pipeline

    clients = [client_from_url(redis_url) for _ in range(n)]
    started = [
        create_worker(settings, c, runner_factory=factory, handle_signals=False) for c in clients
    ]
    tasks = [asyncio.create_task(w.async_run()) for w in started]
    try:
        yield started
    finally:
        for t in tasks:
            t.cancel()
        for w in started:
            await w.close()


async def queued(redis: Any, settings: Settings, chats: int) -> RunStore:
    """A store on ``settings`` with one queued run for each of chats ``0..chats-1``."""
    store = RunStore(redis, settings)
    for chat in range(chats):
        await store.enqueue(make_request(chat))
    return store


async def one_run(redis: Any, settings: Settings) -> tuple[RunStore, str]:
    """A store on ``settings`` with one queued run (chat 1): the store and the run's id."""
    store = RunStore(redis, settings)
    rid = (await store.enqueue(make_request(1))).run_id
    assert rid
    return store, rid


async def until(store: RunStore, rid: str, status: RunStatus, *, timeout: float = 20.0) -> None:
    """Observe run ``rid`` reach ``status``."""

    async def reached() -> bool:
        return (await store.get(rid)).status is status

    await eventually(reached, timeout=timeout, every=0.02)


async def test_runs_complete_and_pipeline_drains(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    store = await queued(redis, fast, 12)
    processor = FakeProcessor(delay=0.05)
    async with workers(fast, redis_url, processor, n=2) as _:

        async def done() -> bool:
            return (await store.counts())["completed"] == 12

        await eventually(done, every=0.02)
        ticks = TickQueue(redis, store.keys)
        await eventually(lambda: _no_ticks(ticks), every=0.02)
    assert processor.calls == 12
    assert processor.max_in_flight > 1  # amplification ramped the pipeline up


class JobTally(FakeProcessor):
    """Also notes the arq tick job each run was processed in."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(delay=delay)
        self.jobs: list[str | None] = []

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        self.jobs.append(_SLOT.get())
        return await super().__call__(run, deadline=deadline)


@pytest.mark.parametrize(("loop_seconds", "jobs"), [(30.0, 1), (0.0, 12)])
async def test_a_productive_tick_claims_the_next_run_in_its_own_job(
    fast: Settings, redis: Any, redis_url: str, loop_seconds: float, jobs: int
) -> None:
    """§8: a completed run's follow-up is the tick itself while its loop window lasts, so
    one arq job works the whole backlog of a one-slot pipeline; 0 = one run per job."""
    processor, store = await backlog(
        fast,
        redis,
        redis_url,
        runs=12,
        delay=0.01,
        worker_concurrency=1,
        tick_loop_seconds=loop_seconds,
    )
    assert processor.calls == 12
    assert len(set(processor.jobs)) == jobs
    assert all(r.attempts == 1 for r in await store.list_runs(limit=20))


async def test_a_tick_leaves_when_its_loop_window_ends(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    processor, _ = await backlog(
        fast, redis, redis_url, runs=12, delay=0.1, worker_concurrency=1, tick_loop_seconds=0.25
    )
    starts: dict[str | None, list[float]] = {}
    for job, at in zip(processor.jobs, processor.times, strict=True):
        starts.setdefault(job, []).append(at)
    # one job would take ≥ 1.1 s for the 12 runs; each claims only inside its 0.25 s window
    assert len(starts) >= 2
    assert all(at[-1] - at[0] < 0.5 for at in starts.values()), starts


async def test_going_on_ticks_still_ramp_the_fleet_to_its_target(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    """Two processes × 2 slots: the going-on ticks queue the ramp's extras, so both
    processes' slots fill (4 in flight) though no tick ever hands over."""
    processor, _ = await backlog(
        fast, redis, redis_url, runs=60, delay=0.05, n=2, tick_loop_seconds=60.0
    )
    assert processor.max_in_flight == 4
    assert len(set(processor.jobs)) < 60 // 4  # most runs went on in a job already running


async def test_a_stopping_worker_claims_no_further_run(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    settings = fast.model_copy(update={"worker_concurrency": 1, "tick_loop_seconds": 60.0})
    store = await queued(redis, settings, 20)
    processor = JobTally(delay=0.1)
    async with workers(settings, redis_url, processor) as (worker,):
        await tick_runner(settings=settings, redis=redis, processor=processor).wake()
        await eventually(lambda: processor.calls >= 2, every=0.01)
        worker.handle_sig_wait_for_completion(signal.SIGTERM)
        await eventually(lambda: processor.in_flight == 0, every=0.01)
        calls = processor.calls
        await eventually(lambda: worker.main_task is None or worker.main_task.done(), every=0.02)
    assert processor.calls == calls  # the loop saw the stop: no claim after the run in hand
    counts = await store.counts()
    assert counts["completed"] == calls
    assert counts["queued"] == 20 - calls
    assert all(
        r.attempts == 0 for r in await store.list_runs(limit=30) if r.status is RunStatus.QUEUED
    )


async def backlog(
    fast: Settings,
    redis: Any,
    redis_url: str,
    *,
    runs: int,
    delay: float,
    n: int = 1,
    **update: Any,
) -> tuple[JobTally, RunStore]:
    """``runs`` queued runs worked off by ``n`` workers on ``fast`` + ``update``, until the
    pipeline drained; the tally and the store."""
    settings = fast.model_copy(update=update)
    store = await queued(redis, settings, runs)
    processor = JobTally(delay=delay)
    async with workers(settings, redis_url, processor, n=n):
        await work_off(settings, redis, processor, store, runs)
        await eventually(lambda: _no_ticks(TickQueue(redis, store.keys)), every=0.02)
    return processor, store


async def work_off(
    settings: Settings, redis: Any, processor: FakeProcessor, store: RunStore, n: int
) -> None:
    """Wake the pipeline and observe ``n`` runs completed."""
    await tick_runner(settings=settings, redis=redis, processor=processor).wake()

    async def done() -> bool:
        return (await store.counts())["completed"] == n

    await eventually(done, every=0.02)


async def _no_ticks(ticks: TickQueue) -> bool:
    counts = await ticks.counts()
    return counts.pending == 0 and counts.running == 0


async def test_three_workers_deferring_leave_one_delayed_probe(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    store = await queued(redis, fast, 10)
    processor = FakeProcessor(unreachable, delay=0.2)
    ticks = TickQueue(redis, store.keys)
    async with workers(fast, redis_url, processor, n=3):
        await ticks.schedule(
            TickPlan(Mode.AMPLIFY, base=6), target=6
        )  # a busy pipeline hits the outage

        async def one_delayed() -> bool:
            counts = await ticks.counts()
            return processor.calls >= 6 and counts.running == 0 and counts.pending == 1

        interval = fast.consolidation_backend_retry_interval
        await eventually(one_delayed, every=0.02)
        counts = await ticks.counts()
        assert (counts.pending, counts.delayed) == (1, 1)
        calls = processor.calls
        # two more probes, observed rather than slept for: the call log says when each came
        await eventually(lambda: processor.calls >= calls + 2, timeout=4 * interval, every=0.02)
        probes = processor.times[calls : calls + 2]
        # nothing dequeued before the retry interval, then exactly one probe per interval
        # (3 workers, yet never two calls within an interval)
        assert probes[0] - processor.times[calls - 1] >= 0.6 * interval
        assert probes[1] - probes[0] >= 0.9 * interval
        await eventually(one_delayed, every=0.02)  # and the pipeline is back to one delayed probe
    runs = await store.list_runs(limit=20)
    assert all(r.attempts == 0 for r in runs)
    assert all(r.status is RunStatus.QUEUED for r in runs)
    assert all(r.error_log == [] for r in runs)
    assert sum(r.releases for r in runs) == processor.calls


async def test_outage_recovery_ramps_back_up(fast: Settings, redis: Any, redis_url: str) -> None:
    store = await queued(redis, fast, 8)
    processor = FakeProcessor(unreachable, delay=0.05)
    async with workers(fast, redis_url, processor, n=2):
        await tick_runner(settings=fast, redis=redis, processor=processor).wake()
        await eventually(lambda: processor.calls >= 1, every=0.02)
        processor.behaviour = None  # the farm is back

        async def all_done() -> bool:
            return (await store.counts())["completed"] == 8

        await eventually(
            all_done, timeout=fast.consolidation_backend_retry_interval + 5, every=0.02
        )
    assert all(r.attempts == 1 for r in await store.list_runs(limit=20))


async def test_timeout_spends_the_attempt(fast: Settings, redis: Any, redis_url: str) -> None:
    store, rid = await one_run(redis, fast)
    processor = FakeProcessor(lambda _: TaskTimeout("job did not finish within 720s", seconds=720))
    async with workers(fast, redis_url, processor):
        await tick_runner(settings=fast, redis=redis, processor=processor).wake()
        await until(store, rid, RunStatus.FAILED)
    run = await store.get(rid)
    assert run.attempts == 1
    assert run.releases == 0
    assert [e.code for e in run.error_log] == ["task_timeout"]
    assert run.next_attempt_at is not None


async def test_lease_is_renewed_while_a_long_run_works(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    store, rid = await one_run(redis, fast)
    processor = FakeProcessor(delay=fast.lease_seconds * 2.5)
    async with workers(fast, redis_url, processor, n=2):
        await tick_runner(settings=fast, redis=redis, processor=processor).wake()
        await until(store, rid, RunStatus.COMPLETED, timeout=15)
    assert processor.calls == 1  # never reclaimed by the other worker
    assert (await store.get(rid)).attempts == 1


async def test_graceful_shutdown_releases_in_flight_runs(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    store, rid = await one_run(redis, fast)
    processor = FakeProcessor(delay=30)
    async with workers(fast, redis_url, processor) as (worker,):
        await tick_runner(settings=fast, redis=redis, processor=processor).wake()
        await eventually(lambda: processor.calls == 1, every=0.02)
        worker.handle_sig_wait_for_completion(signal.SIGTERM)  # grace 1 s, then cancel + release
        await until(store, rid, RunStatus.QUEUED, timeout=5)
    run = await store.get(rid)
    assert run.attempts == 0
    assert run.releases == 1
    assert run.error_log == []


async def test_a_run_lost_on_its_last_attempt_is_retired_and_reported(
    fast: Settings, redis: Any
) -> None:
    s = fast.model_copy(update={"max_attempts": 1, "lease_seconds": 0.2})
    store = RunStore(redis, s)
    second_ago = now_ms() - 1000  # claimed a second ago: its lease expired with no attempt left
    rid = (await store.enqueue(make_request(1), at_ms=second_ago)).run_id
    assert await store.claim("a-worker-that-dies", at_ms=second_ago) is not None
    reported: list[tuple[list[str], str, str | None]] = []

    async def on_retired(ids: list[str], code: str, reason: str | None) -> None:
        reported.append((ids, code, reason))

    pipeline = tick_runner(
        settings=s, redis=redis, processor=FakeProcessor(), on_retired=on_retired
    )
    assert await pipeline.tick("job-1") == "idle"
    assert reported == [([rid], "lease_expired", "worker_lost")]
    assert (await store.get(rid or "")).retired


class Flaky:
    """Wraps an async store method: raises ``error`` for the first ``times`` calls or until
    ``until`` (loop time), then delegates."""

    def __init__(self, real: Any, error: Exception, *, times: int = 0, until: float = 0.0):
        self.real = real
        self.error = error
        self.times = times
        self.until = until
        self.calls = 0

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.times or asyncio.get_running_loop().time() < self.until:
            raise self.error
        return await self.real(*args, **kwargs)


async def test_completion_write_is_retried_through_a_store_fault(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    store, rid = await one_run(redis, fast)
    loading = BusyLoadingError("Redis is loading the dataset in memory")
    flaky: list[Flaky] = []

    def patch(pipeline: TickRunner) -> None:
        flaky.append(Flaky(pipeline.store.complete, loading, times=3))
        pipeline.store.complete = flaky[-1]  # type: ignore[method-assign]

    processor = FakeProcessor()
    async with workers(fast, redis_url, processor, patch=patch):
        await tick_runner(settings=fast, redis=redis, processor=processor).wake()
        await until(store, rid, RunStatus.COMPLETED)
    run = await store.get(rid)
    assert (run.attempts, run.releases, run.error_log) == (1, 0, [])
    assert flaky[0].calls == 4  # three refusals, then it landed
    assert processor.calls == 1  # the farm result was kept, not redone


async def test_a_completion_the_store_refuses_is_not_retried_but_released(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    """OOM is an answer no retry heals (§7): the tick releases the run at once, uncharged,
    instead of retrying the refused write; the run's next claim completes it."""
    store, rid = await one_run(redis, fast)
    oom = OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")
    flaky: list[Flaky] = []

    def patch(pipeline: TickRunner) -> None:
        flaky.append(Flaky(pipeline.store.complete, oom, times=1))
        pipeline.store.complete = flaky[-1]  # type: ignore[method-assign]

    s = fast.model_copy(update={"consolidation_backend_retry_interval": 0.2})
    processor = FakeProcessor()
    async with workers(s, redis_url, processor, patch=patch):
        await tick_runner(settings=s, redis=redis, processor=processor).wake()
        await until(store, rid, RunStatus.COMPLETED)
    run = await store.get(rid)
    assert (run.attempts, run.releases, run.error_log) == (1, 1, [])
    assert [e.reason for e in run.release_log] == ["store_refused"]
    assert flaky[0].calls == 2  # refused once, not retried; the second claim's landed
    assert processor.calls == 2


async def test_renewals_failing_longer_than_the_lease_never_cancel_the_work(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    store, rid = await one_run(redis, fast)
    blackout_until = asyncio.get_running_loop().time() + fast.lease_seconds * 2

    def patch(pipeline: TickRunner) -> None:
        pipeline.store.renew = Flaky(  # type: ignore[method-assign]
            pipeline.store.renew,
            RedisTimeoutError("Timeout reading from socket"),
            until=blackout_until,
        )

    processor = FakeProcessor(delay=fast.lease_seconds * 2.5)
    async with workers(fast, redis_url, processor, n=2, patch=patch):
        await tick_runner(settings=fast, redis=redis, processor=processor).wake()
        await until(store, rid, RunStatus.COMPLETED, timeout=20)
    run = await store.get(rid)
    assert processor.calls == 1  # never cancelled, never reclaimed by the other worker
    assert (run.attempts, run.releases, run.error_log) == (1, 0, [])


async def test_a_store_fault_inside_processing_releases_and_spends_nothing(
    fast: Settings, redis: Any, redis_url: str
) -> None:
    store, rid = await one_run(redis, fast.model_copy(update={"max_attempts": 1}))
    s = fast.model_copy(update={"max_attempts": 1, "consolidation_backend_retry_interval": 0.2})
    faults = iter([RedisConnectionError("Connection closed by server.")])
    processor = FakeProcessor(lambda _: next(faults, None))
    async with workers(s, redis_url, processor):
        await tick_runner(settings=s, redis=redis, processor=processor).wake()
        await until(store, rid, RunStatus.COMPLETED, timeout=15)
    run = await store.get(rid)
    # even with a single attempt allowed, a store fault neither failed nor retired it
    assert (run.attempts, run.releases, run.error_log) == (1, 1, [])
    counters = await redis.hgetall(store.keys.counters)
    assert int(counters[b"released:store_unavailable"]) == 1


async def test_poll_loop_ignores_stale_task_errors_and_resets_its_counter(
    fast: Settings, redis_url: str
) -> None:
    worker = create_worker(fast, client_from_url(redis_url), handle_signals=False)
    try:

        async def died_during_the_outage() -> None:
            raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379.")

        stale = [asyncio.create_task(died_during_the_outage()) for _ in range(3)]
        await asyncio.gather(*stale, return_exceptions=True)
        ids = [f"{fast.key_prefix}stale{i}" for i in range(3)]
        worker.tasks.update(dict(zip(ids, stale, strict=True)))
        pool = worker.pool
        for job_id in ids:  # what arq could not clean up while Redis was away
            await pool.psetex(in_progress_key_prefix + job_id, 3_600_000, b"1")
            await pool.zadd(worker.queue_name, {job_id: 1})
        worker._redis_failures = 12  # the loop was riding out an outage
        await worker._poll_iteration()  # Redis answers again: one good iteration
        assert worker._redis_failures == 0
        assert worker.tasks == {}
        await worker._poll_iteration()  # the next one finishes the orphaned jobs
        for job_id in ids:
            assert not await pool.exists(in_progress_key_prefix + job_id)
            assert await pool.zscore(worker.queue_name, job_id) is None
    finally:
        await worker.close()


async def test_a_job_finishing_after_close_leaves_its_entries_as_a_crash_would(
    fast: Settings, redis_url: str
) -> None:
    """close() stops picking jobs at once; a job task that outlives it finds no pool and
    returns (no AttributeError that nobody would retrieve), leaving its queue entry
    and in-progress key to the next worker, as a crash does."""
    worker = create_worker(fast, client_from_url(redis_url), handle_signals=False)
    pool = worker.pool
    job_id = f"{fast.key_prefix}late"
    observer = client_from_url(redis_url)
    try:
        await pool.psetex(in_progress_key_prefix + job_id, 3_600_000, b"1")
        await pool.zadd(worker.queue_name, {job_id: 1})
        await worker.close()
        assert worker.allow_pick_jobs is False
        await worker.finish_job(job_id, True, None, None, False, None, None)
        assert await observer.zscore(worker.queue_name, job_id) == 1
        assert await observer.exists(in_progress_key_prefix + job_id)
    finally:
        await observer.delete(in_progress_key_prefix + job_id)
        await observer.zrem(worker.queue_name, job_id)
        await observer.aclose()


@pytest.mark.parametrize("turns", range(6))
async def test_a_stop_arriving_as_a_slot_frees_cancels_the_poll_loop(
    fast: Settings, redis_url: str, turns: int
) -> None:
    """SIGTERM's wait-for-completion cancels the main task just as the last job frees its
    slot. However many loop turns lie between the two, the cancel must end the poll
    iteration (asyncio.wait_for on 3.11 swallowed it when the wait had just finished, and
    the stopped worker polled on)."""
    worker = create_worker(fast, client_from_url(redis_url), handle_signals=False)
    worker.poll_delay_s = 5.0
    worker.job_counter = worker.max_jobs  # every slot busy: the iteration waits for one
    try:
        iteration = asyncio.create_task(worker._poll_iteration())
        await eventually(lambda: _waiting(worker._slot_freed))
        worker._slot_freed.set()  # the last job's slot frees …
        for _ in range(turns):
            await asyncio.sleep(0)
        iteration.cancel()  # … and the stop cancels the loop
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(iteration), 3)
    finally:
        worker.job_counter = 0
        await worker.close()


async def test_a_stop_whose_cancel_is_lost_is_insisted_on_until_the_worker_ends(
    fast: Settings, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A library that swallows the stop's cancel (here: the poll step, once) must not
    leave the worker polling on after SIGTERM: the cancel is repeated until the main task
    ends, within the grace plus one insist period."""
    worker = create_worker(fast, client_from_url(redis_url), handle_signals=False)
    worker.poll_delay_s = 0.01
    lost = 0
    looping = asyncio.Event()

    async def lossy_step() -> None:  # every moment of the loop is inside this step
        nonlocal lost
        looping.set()
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            if lost:
                raise
            lost += 1
            task = asyncio.current_task()
            assert task is not None
            task.uncancel()  # what a swallowing library leaves behind

    worker._poll_iteration = lossy_step  # type: ignore[method-assign]
    running = asyncio.create_task(worker.async_run())
    try:
        # started and in its loop (a cancel during a slow start-up would end it there)
        async with asyncio.timeout(20):
            await looping.wait()
        began = time.monotonic()
        worker.handle_sig_wait_for_completion(signal.SIGTERM)
        async with asyncio.timeout(fast.shutdown_grace_seconds + 3 * worker.STOP_INSIST_SECONDS):
            with contextlib.suppress(asyncio.CancelledError):
                await running
        took = time.monotonic() - began
        assert lost == 1  # the first cancel was swallowed, the insisted one ended it
        assert took >= fast.shutdown_grace_seconds + worker.STOP_INSIST_SECONDS - 0.1
        assert "worker_stop_cancel_lost" in caplog.text
    finally:
        running.cancel()
        await worker.close()


def _waiting(event: asyncio.Event) -> bool:
    """Someone is parked on the event (asyncio keeps its waiters' futures there)."""
    return bool(getattr(event, "_waiters", None))


async def test_a_store_error_at_the_ramp_check_ends_the_loop_not_the_run(
    fast: Settings, redis: Any
) -> None:
    """Redis refusing the going-on tick's ramp check: the tick leaves after the run it
    completed, through its usual follow-up step, and claims nothing more in this job."""
    settings = fast.model_copy(update={"tick_loop_seconds": 60.0})
    store = await queued(redis, settings, 3)
    processor = FakeProcessor()
    runner = tick_runner(settings=settings, redis=redis, processor=processor)
    schedule = runner.ticks.schedule

    async def ramp_refused(plan: TickPlan, **kwargs: Any) -> Any:
        if plan.mode is Mode.CONTINUE:
            raise RedisConnectionError("Connection refused")
        return await schedule(plan, **kwargs)

    runner.ticks.schedule = ramp_refused  # type: ignore[method-assign]
    assert await runner.tick("job-ramp", go_on=True) == "completed"
    assert processor.calls == 1
    assert (await store.counts())["completed"] == 1
    counts = await TickQueue(redis, store.keys).counts()
    assert counts.pending >= 1  # its follow-up was queued the usual way


class CarryingProcessor:
    """A run whose farm call succeeded on a closed breaker (its record is carried, not sent),
    then completes, fails, or outlives its lease."""

    def __init__(self, redis: Any, settings: Settings, ends: str) -> None:
        keys = Keys(settings.key_prefix)
        self.counter = keys.routing_tag + ":attempts"
        self.breakers = BreakerStore(
            redis, keys, BreakerConfig(), success_counter=lambda t: (self.counter, f"{t}:ok")
        )
        self.ends = ends
        self.carried = 0

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        await self.breakers.record("farm/a", Permit(0, False), Outcome.SUCCESS, count=True)
        carry = current_carry()
        self.carried = len(carry.pending) if carry is not None else 0
        if self.ends == "fails":
            raise ValueError("the run's own bug")
        return ProcessResult(summary={"cards": 0})


@pytest.mark.parametrize("ends", ["completes", "fails"])
async def test_a_runs_carried_record_lands_however_the_run_settles(
    fast: Settings, redis: Any, ends: str
) -> None:
    """With no hold (``MEMORY_BREAKER_SUCCESS_HOLD_SECONDS=0``), completed: the record rides
    on the completion's round trip; failed: it goes alone before the failure is written.
    Either way the success is counted once."""
    fast = fast.model_copy(update={"breaker_success_hold_seconds": 0.0})
    store, rid = await one_run(redis, fast)
    processor = CarryingProcessor(redis, fast, ends)
    await tick_runner(settings=fast, redis=redis, processor=processor).tick("carry-job")
    assert processor.carried == 1  # held back while the run worked
    assert await redis.hgetall(processor.counter) == {b"farm/a:ok": b"1"}
    run = await store.get(rid)
    assert run.status is (RunStatus.COMPLETED if ends == "completes" else RunStatus.FAILED)


async def test_a_process_holds_its_runs_successes_and_lands_them(
    fast: Settings, redis: Any
) -> None:
    """The default hold: two completed runs' successes are held (none sent with either
    completion), then land as one folded record, within twice the hold with nothing else
    going out, or at once when the worker stops (on_shutdown closes the carry)."""
    settings = fast.model_copy(update={"breaker_success_hold_seconds": 0.5})
    store = await queued(redis, settings, 2)
    processor = CarryingProcessor(redis, settings, "completes")
    runner = tick_runner(settings=settings, redis=redis, processor=processor)
    assert await runner.tick("hold-1") == "completed"
    assert await runner.tick("hold-2") == "completed"
    assert processor.carried == 2  # the second run saw the first's record still held
    assert await redis.hgetall(processor.counter) == {}  # neither completion took them
    for _ in range(40):
        await asyncio.sleep(0.05)
        if await redis.hgetall(processor.counter):
            break
    assert await redis.hgetall(processor.counter) == {b"farm/a:ok": b"2"}  # the timer
    await store.enqueue(make_request(7))
    assert await runner.tick("hold-3") == "completed"
    for close in runner.closers:  # what a stopping worker does (on_shutdown)
        await close()
    assert await redis.hgetall(processor.counter) == {b"farm/a:ok": b"3"}
