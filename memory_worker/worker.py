"""The arq worker: tick jobs, the cron safety net, graceful shutdown, Redis reconnects.

``memory-worker run`` builds a :class:`MemoryWorker` (arq's ``Worker`` plus
two fixes arq lacks: it survives Redis going away, reconnecting with capped
back-off instead of exiting — arq #435 — and on SIGTERM it stops claiming,
lets in-flight runs finish within the grace period and releases the rest).
``arq memory_worker.worker.WorkerSettings`` runs the same jobs on plain arq.

All state lives in the run store; a tick is "claim one run and process it".

Store faults (§7 rev 2) — a Redis error is never evidence against the work:

- the lease renewer never cancels work on a Redis error; only a renewal
  answered "not yours" does (see ``run_store`` for how a claim tells a live
  owner that could not renew from a dead one: heartbeats listing held runs,
  and the store's pulse);
- completion, release and failure writes are retried with backoff
  (:func:`backoff_delay`, capped by ``MEMORY_STORE_RETRY_MAX_SECONDS``) until
  they land or the fenced script answers that the lease is someone else's;
- a store error raised by the processor (e.g. the card write refused by an
  OOM Redis) releases the run, attempt refunded, and leaves one delayed probe;
- a tick that outlives its budget fails its run as ``task_timeout`` (the tick
  enforces the budget itself, just inside arq's job timeout, and treats a
  cancellation outside a shutdown the same way); only a real shutdown
  (SIGTERM/SIGINT) releases.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import structlog
from arq import cron
from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix, job_key_prefix
from arq.utils import timestamp_ms
from arq.worker import Worker
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError, WatchError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memory_worker.connections import LOG_RETRY_AT, awaited, backoff_delay, retry_store_write
from memory_worker.errors import StoreError
from memory_worker.jobcodec import JOB_CODEC, use_json_jobs  # row 21
from memory_worker.keys import Keys
from memory_worker.models import RunRequest
from memory_worker.processing import ProcessResult, RouteGate, RunProcessor
from memory_worker.redis_checks import check_redis
from memory_worker.run_store import ClaimedRun, RunStore, now_ms
from memory_worker.runs import Verdict, decide, plan_failure
from memory_worker.sentry import init_sentry, report_failure
from memory_worker.settings import Settings
from memory_worker.ticks import (
    TICK_FUNCTION,
    Mode,
    TickOutcome,
    TickPlan,
    TickQueue,
    plan_followups,
)

log = structlog.get_logger(__name__)

T = TypeVar("T")

#: Called when runs are retired (the admin-report hook): (run ids, reason code).
RetiredHook = Callable[[list[str], str, str | None], Awaitable[None]]

_REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError)


class TickTimeout(Exception):
    """A tick outlived its budget (``MEMORY_TICK_TIMEOUT_SECONDS``): the run fails as task_timeout."""


#: Retries log at these failure counts only (then every 64th).
_LOG_RETRY_AT = LOG_RETRY_AT


def next_failure_count(failures: int, *, iteration_ok: bool) -> int:
    """The poll loop's Redis-failure counter: +1 on a failed iteration, 0 on a good one.

    Only the iteration's *own* Redis calls count; errors of finished job tasks
    (stale: they happened while Redis was away) are logged, never counted.
    """
    return 0 if iteration_ok else failures + 1


def tick_budgets(tick_timeout: float) -> tuple[float, float]:
    """(processor deadline, hard stop) in seconds from the tick's start.

    Both end before arq's job timeout so the tick, not arq, decides what a
    timeout does to the run (§7 rev 2: fail it as task_timeout).
    """
    hard = tick_timeout - min(2.0, tick_timeout * 0.05)
    soft = tick_timeout - min(5.0, tick_timeout * 0.1)
    return soft, hard


def is_store_fault(error: BaseException) -> bool:
    """A Redis error of any kind: never evidence against the work (§7 rev 2)."""
    return isinstance(error, RedisError | StoreError)


@dataclass
class Pipeline:
    """Everything a worker process shares between its ticks."""

    settings: Settings
    redis: ArqRedis
    processor: RunProcessor
    gate: RouteGate | None = None
    on_retired: RetiredHook | None = None
    worker_id: str = field(
        default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    )
    stopping: bool = False
    target: int = 1
    #: Running tick job ids → when they started (``time.monotonic()``).
    running: dict[str, float] = field(default_factory=dict)
    #: Ids of the runs this worker holds a lease on; the heartbeat lists them (§7 rev 2).
    held: set[str] = field(default_factory=set)
    #: The poll loop's last good iteration (unix ms): readiness is fed by the loop itself.
    last_loop_ms: int = 0
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    #: Long-lived loops (e.g. admin-page delivery) run while the worker runs.
    background: list[Callable[[asyncio.Event], Coroutine[Any, Any, None]]] = field(
        default_factory=list
    )
    #: Memory maintenance, called by a cron every minute (it paces itself fleet-wide).
    maintenance: Callable[[], Awaitable[str]] | None = None

    def __post_init__(self) -> None:
        self.keys = Keys(self.settings.key_prefix)
        self.store = RunStore(self.redis, self.settings)
        self.ticks = TickQueue(self.redis, self.keys)
        self.target = self.settings.pipeline_target or self.settings.worker_concurrency

    # --- one tick -------------------------------------------------------------------------------
    async def tick(self, job_id: str) -> str:
        """Claim and process one run, then queue the follow-ups §8 asks for.

        The follow-ups are queued while this tick is still in the running set
        (§8 rev 2), so no wake-up or safety-net pass slips an immediate tick in.
        """
        if self.stopping:
            await self._schedule(TickPlan(Mode.PROBE, base=1))
            return "stopping"
        ttl = self.settings.worker_heartbeat_seconds * 3
        self.running[job_id] = time.monotonic()
        outcome = TickOutcome.STORE_ERROR
        try:
            with contextlib.suppress(RedisError):
                await self.ticks.mark_running(job_id, ttl)
            outcome = await self._tick_once()
            await self._schedule(
                plan_followups(
                    outcome, retry_interval=self.settings.consolidation_backend_retry_interval
                )
            )
        finally:
            self.running.pop(job_id, None)
            with contextlib.suppress(RedisError):
                await asyncio.shield(self.ticks.unmark_running(job_id))
        await self._note_pipeline_state(outcome)
        return outcome.value

    async def _tick_once(self) -> TickOutcome:
        try:
            if self.gate is not None and await self.gate.blocked():
                log.info("tick_deferred_route_open", worker=self.worker_id)
                return TickOutcome.DEFERRED
            result = await self.store.claim_detailed(self.worker_id)
        except RedisError as exc:
            log.warning("tick_store_error", error=type(exc).__name__)
            return TickOutcome.STORE_ERROR
        for run_id in result.skipped:
            log.info("run_skipped", run_id=run_id, reason="prompt_version")
        if result.retired:
            for run_id in result.retired:
                log.warning(
                    "run_retired", run_id=run_id, code="lease_expired", reason="worker_lost"
                )
            if self.on_retired is not None:
                with contextlib.suppress(Exception):
                    await self.on_retired(result.retired, "lease_expired", "worker_lost")
        claim = result.run
        if claim is None:
            return TickOutcome.IDLE
        structlog.contextvars.bind_contextvars(run_id=claim.id, chat_id=claim.request.chat_id)
        self.held.add(claim.id)
        lost = asyncio.Event()
        renewer = asyncio.create_task(self._keep_lease(claim, lost))
        try:
            log.info("run_claimed", attempt=claim.attempts, releases=claim.releases)
            return await self._process(claim, lost)
        finally:
            renewer.cancel()
            self.held.discard(claim.id)
            structlog.contextvars.unbind_contextvars("run_id", "chat_id")

    async def _process(self, claim: ClaimedRun, lost: asyncio.Event) -> TickOutcome:
        """Run the processor under the lease and the tick budget, then settle the run."""
        soft, hard = tick_budgets(self.settings.tick_timeout_seconds)
        started = time.monotonic()
        work = asyncio.create_task(self.processor(claim, deadline=started + soft))
        lost_wait = asyncio.create_task(lost.wait())
        try:
            async with asyncio.timeout(hard):
                await asyncio.wait({work, lost_wait}, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            await _cancel(work)
            log.warning("tick_timeout", attempt=claim.attempts, budget_s=hard)
            return await self._settle_error(claim, TickTimeout())
        except asyncio.CancelledError:
            await _cancel(work)
            if self.stopping:  # a real shutdown: the run goes back, its attempt refunded
                await asyncio.shield(self._release(claim, "shutdown", patient=False))
            else:  # arq's job timeout fired first: the tick outlived its budget
                await asyncio.shield(self._settle_error(claim, TickTimeout()))
            raise
        finally:
            lost_wait.cancel()
        if not work.done():
            await _cancel(work)
            log.warning("run_lease_lost", attempt=claim.attempts)
            return TickOutcome.ABANDONED
        if work.cancelled():
            raise asyncio.CancelledError
        exc = work.exception()
        if exc is None:
            return await self._complete(claim, work.result())
        if isinstance(exc, Exception):
            return await self._settle_error(claim, exc)
        raise exc

    async def _keep_lease(self, claim: ClaimedRun, lost: asyncio.Event) -> None:
        """Renew the lease while the run is worked on and settled (§7 rev 2).

        A Redis error is never read as a loss: the owner keeps working and renews
        when Redis answers again (the claim leaves its lease alone while its
        heartbeat lists the run). Only a renewal answered "not yours" sets ``lost``.
        """
        failing = 0
        period = self.settings.lease_renew_seconds
        while True:
            # after a failure retry soon, so the lease is renewed right after Redis is back
            await asyncio.sleep(
                min(period, backoff_delay(failing, base=0.1, cap=1.0)) if failing else period
            )
            try:
                ok = await self.store.renew(claim)
            except RedisError as exc:
                failing += 1
                if failing == 1:
                    log.warning("lease_renew_store_error", error=type(exc).__name__)
                continue
            if failing:
                log.info("lease_renewed_after_store_error", failures=failing)
                failing = 0
            if not ok:
                lost.set()
                return

    async def _store_write(
        self, what: str, write: Callable[[], Awaitable[T]], *, give_up_after: float | None = None
    ) -> T:
        """Retry a fenced outcome write with backoff until it lands (§7 rev 2).

        The scripts are fenced by the lease token, so a retry of a write that landed
        answers "not yours" instead of applying twice. ``give_up_after`` (seconds)
        bounds it where the process cannot wait (shutdown): the error is raised.
        """
        return await retry_store_write(
            what, write, cap=self.settings.store_retry_max_seconds, give_up_after=give_up_after
        )

    async def _complete(self, claim: ClaimedRun, result: ProcessResult) -> TickOutcome:
        for continuation in result.continuations:  # idempotent by natural key
            await self._store_write(
                "continuation", partial(self._enqueue_continuation, continuation)
            )
        done = await self._store_write(
            "complete", lambda: self.store.complete(claim, result.summary)
        )
        if not done:
            log.warning("run_lease_lost_at_completion", attempt=claim.attempts)
            return TickOutcome.ABANDONED
        log.info("run_completed", attempt=claim.attempts, continuations=len(result.continuations))
        return TickOutcome.COMPLETED

    async def _enqueue_continuation(self, request: RunRequest) -> None:
        await self.store.enqueue(request, bypass_caps=True)

    async def _release(self, claim: ClaimedRun, reason: str, *, patient: bool = True) -> bool:
        try:
            released = await self._store_write(
                "release",
                lambda: self.store.release(claim, reason=reason),
                give_up_after=None if patient else self.settings.shutdown_grace_seconds,
            )
        except RedisError as exc:
            log.warning("run_release_store_error", error=type(exc).__name__, reason=reason)
            return False
        log.info("run_released", reason=reason, attempt=claim.attempts, released=released)
        return released

    async def _settle_error(self, claim: ClaimedRun, exc: Exception) -> TickOutcome:
        if is_store_fault(exc):
            # §7 rev 2: a store error is never evidence against the work. The run goes
            # back with its attempt refunded; a delayed probe (not the farm-outage
            # deferral) picks the pipeline up again.
            log.warning("run_store_fault", attempt=claim.attempts, error=type(exc).__name__)
            await self._release(claim, "store_unavailable")
            return TickOutcome.STORE_ERROR
        code: str
        reason: str | None
        if isinstance(exc, TickTimeout):
            code, reason = "task_timeout", "task_timeout"
        else:
            decision = decide(exc)
            report_failure(exc, decision, run_id=claim.id, chat_id=claim.request.chat_id)
            if decision.verdict is Verdict.ABANDON:
                log.warning("run_lease_lost", attempt=claim.attempts, code=decision.code)
                return TickOutcome.ABANDONED
            if decision.verdict is Verdict.RELEASE:
                released = await self._release(claim, decision.reason or "unavailable")
                return TickOutcome.DEFERRED if released else TickOutcome.ABANDONED
            code, reason = decision.code, decision.reason
        s = self.settings
        plan = plan_failure(
            claim.attempts,
            max_attempts=s.max_attempts,
            unit=s.backoff_unit_seconds,
            max_units=s.backoff_max_units,
            now_ms=now_ms(),
        )
        message = "the tick outlived its budget" if isinstance(exc, TickTimeout) else str(exc)
        failed = await self._store_write(
            "fail",
            lambda: self.store.fail(claim, plan, code=code, reason=reason, message=message),
        )
        log.warning(
            "run_retired" if plan.retire else "run_failed",
            attempt=claim.attempts,
            code=code,
            reason=reason,
            error=type(exc).__name__,
        )
        if failed and plan.retire and self.on_retired is not None:
            with contextlib.suppress(Exception):
                await self.on_retired([claim.id], code, reason)
        return TickOutcome.FAILED if failed else TickOutcome.ABANDONED

    async def _schedule(self, plan: TickPlan) -> None:
        try:
            await self.ticks.schedule(plan, target=self.target)
        except RedisError as exc:  # the safety net restarts the pipeline later
            log.warning("tick_schedule_failed", error=type(exc).__name__)

    async def _note_pipeline_state(self, outcome: TickOutcome) -> None:
        with contextlib.suppress(RedisError):
            if outcome is TickOutcome.DEFERRED:
                await awaited(
                    self.redis.hsetnx(self.keys.pipeline_state, "deferred_since", str(now_ms()))
                )
                await awaited(self.redis.hincrby(self.keys.counters, "pipeline:deferred", 1))
            elif outcome is TickOutcome.COMPLETED:
                await awaited(self.redis.hdel(self.keys.pipeline_state, "deferred_since"))

    # --- housekeeping ---------------------------------------------------------------------------
    async def safety_net(self) -> str:
        """Queue a tick when claimable runs exist and no tick is pending (self-healing)."""
        claimable = await self.store.has_claimable()
        if claimable == 0:
            return "nothing"
        mode = Mode.KICK_LEASES if claimable == 2 else Mode.KICK
        scheduled = await self.ticks.schedule(TickPlan(mode, base=1), target=self.target)
        return f"kicked={scheduled.added}"

    async def wake(self) -> None:
        """After an enqueue: start a tick unless the pipeline is already alive or deferred."""
        await self._schedule(TickPlan(Mode.KICK, base=1))

    async def heartbeat(self) -> None:
        """Register this worker with the runs it holds, refresh its ticks, recompute the target."""
        s = self.settings
        live = await self.store.heartbeat(
            self.worker_id, sorted(self.held), concurrency=s.worker_concurrency
        )
        await self.ticks.refresh_running(sorted(self.running), s.worker_heartbeat_seconds * 3)
        if s.pipeline_target:
            self.target = s.pipeline_target
        elif live:
            values = await awaited(self.redis.hmget(self.keys.worker_concurrency, live))
            self.target = max(1, sum(int(v or 0) for v in values))

    async def heartbeat_forever(self) -> None:
        failing = 0
        period = self.settings.worker_heartbeat_seconds
        while True:
            try:
                await self.heartbeat()
                failing = 0
            except RedisError as exc:
                failing += 1
                if failing in _LOG_RETRY_AT or failing % 64 == 0:
                    log.warning("heartbeat_failed", error=type(exc).__name__, failures=failing)
            await asyncio.sleep(
                min(period, backoff_delay(failing, base=0.1, cap=1.0)) if failing else period
            )

    async def deregister(self) -> None:
        with contextlib.suppress(RedisError):
            await self.store.deregister(self.worker_id)

    def oldest_tick_age(self, now: float | None = None) -> float | None:
        """Seconds the longest-running tick of this process has run (None: no tick running)."""
        if not self.running:
            return None
        return (time.monotonic() if now is None else now) - min(self.running.values())


async def _cancel(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait for it to end (its own exception, if any, is dropped)."""
    task.cancel()
    with contextlib.suppress(BaseException):
        await task


# --- arq glue -------------------------------------------------------------------------------------

ProcessorFactory = Callable[[Settings, ArqRedis], Awaitable["Pipeline"]]


async def memory_tick(ctx: dict[str, Any]) -> str:
    pipeline: Pipeline = ctx["pipeline"]
    return await pipeline.tick(ctx["job_id"])


async def safety_net(ctx: dict[str, Any]) -> str:
    pipeline: Pipeline = ctx["pipeline"]
    return await pipeline.safety_net()


async def maintenance(ctx: dict[str, Any]) -> str:
    pipeline: Pipeline = ctx["pipeline"]
    if pipeline.maintenance is None or pipeline.stopping:
        return "off"
    return await pipeline.maintenance()


async def build_pipeline(settings: Settings, redis: ArqRedis) -> Pipeline:
    """The default pipeline: processor, route gate and report hooks from the settings."""
    from memory_worker.wiring import build_default_pipeline

    return await build_default_pipeline(settings, redis)


def worker_kwargs(
    settings: Settings,
    *,
    pipeline_factory: ProcessorFactory = build_pipeline,
) -> dict[str, Any]:
    """arq ``Worker`` keyword arguments for these settings."""
    keys = Keys(settings.key_prefix)
    step = settings.safety_net_seconds

    async def on_startup(ctx: dict[str, Any]) -> None:
        init_sentry(settings)  # no-op without SENTRY_DSN
        await check_redis(ctx["redis"], role="worker")  # §2 rev 2: no evicting Redis, scripts
        pipeline = await pipeline_factory(settings, ctx["redis"])
        ctx["pipeline"] = pipeline
        with contextlib.suppress(RedisError):  # heartbeat_forever retries it
            await pipeline.heartbeat()
        ctx["heartbeat_task"] = asyncio.create_task(pipeline.heartbeat_forever())
        stop = asyncio.Event()
        ctx["background_stop"] = stop
        ctx["background_tasks"] = [asyncio.create_task(loop(stop)) for loop in pipeline.background]
        log.info(
            "worker_started", worker=pipeline.worker_id, concurrency=settings.worker_concurrency
        )

    async def on_shutdown(ctx: dict[str, Any]) -> None:
        task: asyncio.Task[None] | None = ctx.get("heartbeat_task")
        if task is not None:
            task.cancel()
        stop: asyncio.Event | None = ctx.get("background_stop")
        if stop is not None:
            stop.set()
            loops: list[asyncio.Task[None]] = ctx.get("background_tasks", [])
            if loops:
                _, pending = await asyncio.wait(loops, timeout=5)
                for loop in pending:
                    loop.cancel()
        pipeline: Pipeline | None = ctx.get("pipeline")
        if pipeline is not None:
            await pipeline.deregister()
            for close in pipeline.closers:
                with contextlib.suppress(Exception):
                    await close()
            log.info("worker_stopped", worker=pipeline.worker_id)

    from arq.worker import func

    return {
        "functions": [
            func(memory_tick, name=TICK_FUNCTION, max_tries=1_000_000, keep_result=0),
        ],
        "cron_jobs": [
            cron(
                safety_net,
                name=keys.cron_prefix + "safety_net",
                second=set(range(0, 60, step)),
                run_at_startup=True,
                keep_result=0,
                timeout=60,
            ),
            cron(
                maintenance,
                name=keys.cron_prefix + "maintenance",
                second={30},
                keep_result=0,
                timeout=max(settings.route_wall_seconds, 60),
            ),
        ],
        "queue_name": keys.arq_queue,
        "max_jobs": settings.worker_concurrency,
        "job_timeout": settings.tick_timeout_seconds,
        "keep_result": 0,
        "poll_delay": settings.poll_delay_seconds,
        # a cancelled tick (shutdown) goes back to arq's queue for another worker
        "retry_jobs": True,
        "job_completion_wait": int(settings.shutdown_grace_seconds),
        "health_check_interval": 30,
        "on_startup": on_startup,
        "on_shutdown": on_shutdown,
        # row 21: jobs are JSON, never pickle (a pickled payload is refused, not run)
        **JOB_CODEC,
    }


class MemoryWorker(Worker):
    """arq's Worker, made to survive Redis outages and to stop claiming on SIGTERM.

    The poll loop (row 8 of issue 9): arq's ``_poll_iteration`` re-raises the
    exception of every finished job task, so errors a tick hit while Redis was
    away surfaced one by one *after* Redis came back, each counted as a fresh
    outage (and the counter never reset): 70–130 s to resume. Here an
    iteration counts as failed only when its own Redis calls fail
    (:func:`next_failure_count`), finished tasks' errors are logged, the
    back-off is short (:func:`backoff_delay`, capped by
    ``MEMORY_REDIS_RECONNECT_MAX_SECONDS``) and the first good iteration after
    an outage runs the safety net at once, so work resumes within about a
    second of Redis answering.
    """

    _redis_failures = 0
    reconnect_max_seconds = 1.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Jobs whose finish (arq's cleanup) failed because Redis was away.
        self._orphans: set[str] = set()

    async def _poll_iteration(self) -> None:
        try:
            await self._poll_once()
        except (*_REDIS_DOWN, RedisError) as exc:
            self._redis_failures = next_failure_count(self._redis_failures, iteration_ok=False)
            delay = backoff_delay(self._redis_failures, base=0.05, cap=self.reconnect_max_seconds)
            if self._redis_failures in _LOG_RETRY_AT or self._redis_failures % 64 == 0:
                log.warning(
                    "redis_unavailable",
                    error=type(exc).__name__,
                    failures=self._redis_failures,
                    retry_in=round(delay, 2),
                )
            await asyncio.sleep(delay)
            return
        recovered = self._redis_failures > 0
        if recovered:
            log.info("redis_reconnected", after_failures=self._redis_failures)
        self._redis_failures = next_failure_count(self._redis_failures, iteration_ok=True)
        if self._orphans:
            await self._finish_orphans()
        pipeline: Pipeline | None = self.ctx.get("pipeline")
        if pipeline is not None:
            pipeline.last_loop_ms = now_ms()
            if recovered and not pipeline.stopping:
                # don't wait for the cron: restart the pipeline now (ticks may be lost)
                with contextlib.suppress(*_REDIS_DOWN, RedisError):
                    await pipeline.safety_net()

    async def _poll_once(self) -> None:
        """arq's poll iteration, except that finished tasks' errors are logged, not raised."""
        count = self.queue_read_limit
        if self.burst and self.max_burst_jobs >= 0:
            count = min(self.max_burst_jobs - self._jobs_started(), count)
            if count < 1:
                return
        if self.allow_pick_jobs and self.job_counter < self.max_jobs:
            job_ids = await self.pool.zrangebyscore(
                self.queue_name,
                min=float("-inf"),
                start=self._queue_read_offset,
                num=count,
                max=timestamp_ms(),
            )
            await self.start_jobs(job_ids)
        if self.allow_abort_jobs:
            await self._cancel_aborted_jobs()
        for job_id, task in list(self.tasks.items()):
            if task.done():
                del self.tasks[job_id]
                error = None if task.cancelled() else task.exception()
                if error is not None:
                    log.warning("job_task_error", error=type(error).__name__)
                    if isinstance(error, (*_REDIS_DOWN, RedisError)):
                        self._orphans.add(job_id)  # arq could not finish it
        await self.heart_beat()

    async def _finish_orphans(self) -> None:
        """Do arq's finish for jobs that ended while Redis was away (best effort).

        Otherwise their in-progress keys block the job ids for the whole job timeout
        and their queue entries take read slots of every poll until then.
        """
        ids = sorted(self._orphans)
        try:
            async with self.pool.pipeline(transaction=False) as pipe:
                for job_id in ids:
                    pipe.delete(in_progress_key_prefix + job_id, job_key_prefix + job_id)
                    pipe.zrem(self.queue_name, job_id)
                await pipe.execute()
        except (*_REDIS_DOWN, RedisError):
            return
        self._orphans.difference_update(ids)

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        """arq's start_jobs, but a Redis error gives back the slot it had taken.

        arq increments its job counter and takes a semaphore permit before the
        WATCH/MULTI that claims a job; if Redis fails in between, both leak and
        the worker runs one job fewer for the rest of its life.
        """
        for job_id_b in job_ids:
            await self.sem.acquire()
            if self.job_counter >= self.max_jobs:
                self.sem.release()
                return
            self.job_counter += 1
            job_id = job_id_b.decode()
            try:
                started = await self._try_start(job_id)
            except BaseException:
                self.job_counter -= 1
                self.sem.release()
                raise
            if not started:
                self.job_counter -= 1
                self.sem.release()

    async def _try_start(self, job_id: str) -> bool:
        in_progress_key = in_progress_key_prefix + job_id
        async with self.pool.pipeline(transaction=True) as pipe:
            await pipe.watch(in_progress_key)
            ongoing = await pipe.exists(in_progress_key)
            score = await pipe.zscore(self.queue_name, job_id)
            if ongoing or not score or score > timestamp_ms():
                return False  # running elsewhere, finished, or re-deferred by another worker
            pipe.multi()  # type: ignore[no-untyped-call]
            pipe.psetex(in_progress_key, int(self.in_progress_timeout_s * 1000), b"1")
            try:
                await pipe.execute()
            except (ResponseError, WatchError):
                return False  # another worker started it first
        task = self.loop.create_task(self.run_job(job_id, int(score)))
        task.add_done_callback(lambda _: self._release_sem_dec_counter_on_complete())
        self.tasks[job_id] = task
        return True

    def handle_sig(self, signum: signal.Signals) -> None:
        pipeline: Pipeline | None = self.ctx.get("pipeline")
        if pipeline is not None:
            pipeline.stopping = True
        super().handle_sig(signum)

    def handle_sig_wait_for_completion(self, signum: signal.Signals) -> None:
        pipeline: Pipeline | None = self.ctx.get("pipeline")
        if pipeline is not None:
            pipeline.stopping = True
        log.info("worker_stopping", signal=signal.Signals(signum).name, in_flight=len(self.tasks))
        super().handle_sig_wait_for_completion(signum)

    async def close(self) -> None:
        """arq's close, tolerant of cancelled ticks and of Redis being gone."""
        if not self._handle_signals:
            self.handle_sig(signal.SIGUSR1)
        if not self._pool:
            return
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        with contextlib.suppress(*_REDIS_DOWN, RedisError):
            await self.pool.delete(self.health_check_key)
        if self.on_shutdown:
            await self.on_shutdown(self.ctx)
        with contextlib.suppress(*_REDIS_DOWN, RedisError):
            await self.pool.aclose(close_connection_pool=True)
        self._pool = None


def create_worker(
    settings: Settings,
    redis: ArqRedis,
    *,
    pipeline_factory: ProcessorFactory = build_pipeline,
    burst: bool = False,
    handle_signals: bool = True,
) -> MemoryWorker:
    use_json_jobs(redis)  # row 21: arq's cron enqueues go through this pool
    worker = MemoryWorker(
        redis_pool=redis,
        burst=burst,
        handle_signals=handle_signals,
        **worker_kwargs(settings, pipeline_factory=pipeline_factory),
    )
    worker.reconnect_max_seconds = settings.redis_reconnect_max_seconds
    return worker


async def run_worker(
    settings: Settings, *, on_worker: Callable[[MemoryWorker], None] | None = None
) -> None:
    """``memory-worker run``: connect (embedded Valkey if no REDIS_URL) and work until SIGTERM.

    ``on_worker`` sees the worker before it starts (``run --serve`` reads its loop heartbeat).
    """
    from memory_worker.connections import client_from_url, resolve_url, timeout_options

    url, embedded = resolve_url(settings)
    delay = 0.5
    try:
        while True:
            # Redis may be away at startup (or go away during it): wait and start
            # again instead of exiting. Once running, the poll loop rides out outages.
            # close() below closes the client's pool
            redis = client_from_url(url, **timeout_options(settings))
            worker = create_worker(settings, redis)
            if on_worker is not None:
                on_worker(worker)
            try:
                await redis.ping()
                await worker.async_run()
                return
            except asyncio.CancelledError:
                return
            except (*_REDIS_DOWN, RedisError) as exc:
                log.warning(
                    "redis_unavailable_at_startup", error=type(exc).__name__, retry_in=delay
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, settings.redis_reconnect_max_seconds)
            finally:
                await worker.close()
    finally:
        if embedded is not None:
            embedded.stop()


def __getattr__(name: str) -> Any:
    """``arq memory_worker.worker.WorkerSettings``: built lazily from the environment."""
    if name != "WorkerSettings":
        raise AttributeError(name)
    from arq.connections import RedisSettings

    from memory_worker.connections import resolve_url
    from memory_worker.settings import get_settings

    settings = get_settings()
    url, _ = resolve_url(settings)
    attrs = worker_kwargs(settings)
    attrs["redis_settings"] = RedisSettings.from_dsn(url)
    return type("WorkerSettings", (), attrs)
