"""The arq worker: tick jobs, the cron safety net, graceful shutdown, Redis reconnects.

``memory-worker run`` (:mod:`memory_worker.worker.process`) builds a :class:`MemoryWorker` (arq's ``Worker`` plus
two fixes arq lacks: it survives Redis going away, reconnecting with capped
back-off instead of exiting — arq #435 — and on SIGTERM it stops claiming,
lets in-flight runs finish within the grace period and releases the rest).
``arq memory_worker.worker.main.WorkerSettings`` runs the same jobs on plain arq.

All state lives in the run store; a tick is "claim one run and process it" (and, while runs
complete, the next one: ``MEMORY_TICK_LOOP_SECONDS``).

Ticks themselves run in :mod:`memory_worker.pipeline.runner` (:class:`TickRunner`);
this module is everything arq: the job functions, ``worker_kwargs``,
:class:`MemoryWorker` and ``WorkerSettings`` (an overridden arq private name that
changes fails ``tests/worker/test_worker_arq_names.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from arq import cron
from arq.connections import ArqRedis
from arq.constants import abort_jobs_ss, in_progress_key_prefix, job_key_prefix, retry_key_prefix
from arq.utils import timestamp_ms
from arq.worker import Worker
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from llm_client import lua_text, reply_pairs
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.ops.sentry import init_sentry, report_failure
from memory_worker.pipeline.jobcodec import JOB_CODEC, use_json_jobs  # row 21
from memory_worker.pipeline.runner import TickRunner
from memory_worker.pipeline.ticks import TICK_FUNCTION
from memory_worker.runs import now_ms
from memory_worker.settings import Settings
from memory_worker.storage.checks import check_redis
from memory_worker.storage.connections import LOG_RETRY_AT, backoff_delay, next_failure_count
from memory_worker.wiring import build_tick_runner
from memory_worker.worker.pinned import PinnedMonitor
from memory_worker.worker.prelude import next_pipeline_plain, plain_prelude_pipelines
from memory_worker.worker.watchdog import Watchdog

log = get_logger(__name__)


# arq's job start in one script (see the file)
_START = lua_text(__package__, "job_start")
_REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError)


# --- arq glue -------------------------------------------------------------------------------------

ProcessorFactory = Callable[[Settings, Redis], Awaitable["TickRunner"]]


async def memory_tick(ctx: dict[str, Any]) -> str:
    runner: TickRunner = ctx["runner"]
    return await runner.tick(ctx["job_id"], go_on=True)


async def safety_net(ctx: dict[str, Any]) -> str:
    runner: TickRunner = ctx["runner"]
    return await runner.safety_net()


async def maintenance(ctx: dict[str, Any]) -> str:
    runner: TickRunner = ctx["runner"]
    if runner.maintenance is None or runner.stopping:
        return "off"
    return await runner.maintenance()


def worker_kwargs(
    settings: Settings,
    *,
    runner_factory: ProcessorFactory = build_tick_runner,
) -> dict[str, Any]:
    """arq ``Worker`` keyword arguments for these settings."""
    keys = Keys(settings.key_prefix)
    step = settings.safety_net_seconds

    on_startup = partial(_on_startup, settings, runner_factory)

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
        "job_timeout": settings.tick_job_timeout,
        "keep_result": 0,
        "poll_delay": settings.poll_delay_seconds,
        # a cancelled tick (shutdown) goes back to arq's queue for another worker
        "retry_jobs": True,
        "job_completion_wait": int(settings.shutdown_grace_seconds),
        "health_check_interval": 30,
        "on_startup": on_startup,
        "on_shutdown": _on_shutdown,
        # row 21: jobs are JSON, never pickle (a pickled payload is refused, not run)
        **JOB_CODEC,
    }


async def _on_startup(
    settings: Settings, runner_factory: ProcessorFactory, ctx: dict[str, Any]
) -> None:
    """arq's on_startup: checks, the tick runner, its heartbeat and background loops."""
    init_sentry(settings)  # no-op without SENTRY_DSN
    # §2: no evicting Redis, scripts allowed; §11: the user may use our keys
    await check_redis(ctx["redis"], role="worker", keys=Keys(settings.key_prefix))
    runner = await runner_factory(settings, ctx["redis"])
    if runner.report_failure is None:  # a failed run's error reaches Sentry (when it is on)
        runner.report_failure = report_failure
    ctx["runner"] = runner
    with contextlib.suppress(RedisError):  # heartbeat_forever retries it
        await runner.heartbeat()
    ctx["heartbeat_task"] = asyncio.create_task(runner.heartbeat_forever())
    stop = asyncio.Event()
    ctx["background_stop"] = stop
    ctx["background_tasks"] = [asyncio.create_task(loop(stop)) for loop in runner.background]
    ctx["watchdog"] = Watchdog.arm(runner, settings, ctx.get("store_url"))
    # a pinned worker (§11) leaves through the watchdog too
    ctx["pinned"] = PinnedMonitor(runner, settings, ctx["watchdog"])
    ctx["background_tasks"].append(asyncio.create_task(ctx["pinned"].run(stop)))
    log.info("worker_started", worker=runner.worker_id, concurrency=settings.worker_concurrency)


async def _on_shutdown(ctx: dict[str, Any]) -> None:
    """arq's on_shutdown: release unsettled runs, stop the loops, deregister, close (the
    runner's first closer lands the breaker successes it still holds)."""
    runner: TickRunner | None = ctx.get("runner")
    if runner is not None and runner.unsettled:
        # before the heartbeat stops: it lists these runs while their release retries
        released = await runner.release_unsettled()
        log.info("shutdown_released", runs=released)
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
    if runner is not None:
        await runner.deregister()
        for close in runner.closers:
            with contextlib.suppress(Exception):
                await close()
        log.info("worker_stopped", worker=runner.worker_id)


class MemoryWorker(Worker):
    """arq's Worker, made to survive Redis outages and to stop claiming on SIGTERM.

    The poll loop (fault-matrix row 8): arq's ``_poll_iteration`` re-raises the
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
    #: The queue's keys and a running tick's mark lifetime (ms), set by :func:`create_worker`:
    #: starting a tick job also marks it running and started (one round trip).
    tick_keys: Keys | None = None
    #: ZDIFF (Redis ≥ 6.2) reads the unstarted jobs in one command (off on Redis 6.0/6.1).
    has_zdiff = True
    running_ttl_ms = 0
    #: How often (ms) the poll prunes ``ticks:started`` (each tick's schedule prunes it too).
    PRUNE_STARTED_MS = 1_000

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Jobs whose finish (arq's cleanup) failed because Redis was away.
        self._orphans: set[str] = set()
        self._start_script: Any = None
        #: Set when a job's slot frees up (the poll loop may start the next job at once).
        self._slot_freed = asyncio.Event()
        #: When this worker's poll last pruned ``ticks:started`` (unix ms).
        self._started_pruned_at: int | None = None
        #: The pending re-cancel of a stop (:meth:`_insist`).
        self._insist_handle: asyncio.TimerHandle | None = None

    async def _poll_iteration(self) -> None:
        """One tick of arq's poll clock; while every slot is busy, a slot freed before the
        next tick polls at once (a freed slot would otherwise idle half a poll delay on
        average before its follow-up started — 2–3 % of a 1 s farm's slot time)."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        if (runner := self.ctx.get("runner")) is not None:
            runner.polled()  # the watchdog's: every iteration counts, good or not
        self._slot_freed.clear()
        await self._poll_and_recover()
        while self.allow_pick_jobs and self.job_counter >= self.max_jobs:
            left = self.poll_delay_s - (loop.time() - began)
            if left <= 0:
                return
            # asyncio.timeout, not wait_for: on 3.11 wait_for returns the inner result and
            # drops a cancel that arrives as the event is set — exactly when SIGTERM's
            # wait-for-completion cancels the main task (the last job just freed its slot),
            # and the worker then polled on, never exiting (a clean-clone CI run hit it).
            try:
                async with asyncio.timeout(left):
                    await self._slot_freed.wait()
            except TimeoutError:
                return
            self._slot_freed.clear()
            await self._poll_and_recover()

    def _job_done(self, job_id: str, task: asyncio.Task[Any]) -> None:
        self._release_sem_dec_counter_on_complete()
        self._slot_freed.set()
        if not task.cancelled() and (exc := task.exception()) is not None:
            # arq's run_job raises only when Redis failed around the job (its prelude or its
            # finish): the job stays in its queue and runs again; said here, not as "never retrieved"
            log.warning("job_task_failed", job_id=job_id, error=type(exc).__name__)

    async def _poll_and_recover(self) -> None:
        try:
            await self._poll_once()
        except (*_REDIS_DOWN, RedisError) as exc:
            self._redis_failures = next_failure_count(self._redis_failures, iteration_ok=False)
            delay = backoff_delay(self._redis_failures, base=0.05, cap=self.reconnect_max_seconds)
            if self._redis_failures in LOG_RETRY_AT or self._redis_failures % 64 == 0:
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
        runner: TickRunner | None = self.ctx.get("runner")
        if runner is not None:
            runner.last_loop_ms = now_ms()
            if recovered and not runner.stopping:
                # don't wait for the cron: restart the pipeline now (ticks may be lost)
                with contextlib.suppress(*_REDIS_DOWN, RedisError):
                    await runner.safety_net()

    async def _poll_once(self) -> None:
        """arq's poll iteration, except that finished tasks' errors are logged, not raised."""
        count = self.queue_read_limit
        if self.burst and self.max_burst_jobs >= 0:
            count = min(self.max_burst_jobs - self._jobs_started(), count)
            if count < 1:
                return
        if self.allow_pick_jobs and self.job_counter < self.max_jobs:
            await self.start_jobs(await self._ready_jobs(count))
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

    async def _ready_jobs(self, count: int) -> list[bytes]:
        """The jobs to try to start: due, and not started by anyone.

        arq reads the queue's oldest due entries, which include every job running
        anywhere in the fleet (a job leaves the queue when it finishes), and tries each:
        the wasted starts would grow with the fleet's running ticks. Started ticks are in
        ``ticks:started`` (until arq's in-progress lease would end), so the queue minus
        that set is what may start; a crashed tick's entry lapses with its lease, and is
        pruned by the next tick's schedule or, at most :attr:`PRUNE_STARTED_MS` later, here.
        """
        now = timestamp_ms()
        keys = self.tick_keys
        if keys is None:
            return list(
                await self.pool.zrangebyscore(
                    self.queue_name,
                    min=float("-inf"),
                    start=self._queue_read_offset,
                    num=count,
                    max=now,
                )
            )
        last = self._started_pruned_at
        prune = last is None or not last <= now < last + self.PRUNE_STARTED_MS
        if self.has_zdiff:
            try:
                async with self.pool.pipeline(transaction=False) as pipe:
                    if prune:
                        pipe.zremrangebyscore(keys.ticks_started, "-inf", now)
                    pipe.zdiff([self.queue_name, keys.ticks_started], withscores=True)
                    candidates = (await pipe.execute())[-1]
            except ResponseError as exc:
                if "unknown command" not in str(exc).lower():
                    raise
                self.has_zdiff = False  # Redis < 6.2: read both sets and diff them here
        if not self.has_zdiff:
            async with self.pool.pipeline(transaction=False) as pipe:
                if prune:
                    pipe.zremrangebyscore(keys.ticks_started, "-inf", now)
                pipe.zrangebyscore(self.queue_name, "-inf", now, withscores=True)
                pipe.zrange(keys.ticks_started, 0, -1)
                *_, queued, started = await pipe.execute()
            skip = set(started)
            candidates = [
                (job_id, score) for job_id, score in reply_pairs(queued) if job_id not in skip
            ]
        if prune:
            self._started_pruned_at = now
        due = sorted(
            (float(score), job_id)
            for job_id, score in reply_pairs(candidates)
            if float(score) <= now
        )
        return [job_id for _, job_id in due[:count]]

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
        """arq's WATCH/MULTI job start as one script: one round trip, and a worker that
        loses the race to another costs the queue one command, not six."""
        keys = self.tick_keys
        is_tick = keys is not None and job_id.startswith(keys.tick_job_id(""))
        now = timestamp_ms()
        try:
            score = await self._start(job_id, keys, is_tick, now)
        except ResponseError:
            return False  # e.g. OOM refusing the in-progress key: as arq, not started
        if score is None:
            return False  # running elsewhere, finished, or re-deferred by another worker
        runner: TickRunner | None = self.ctx.get("runner")
        if is_tick and runner is not None:
            runner.premarked.add(job_id)
        task = self.loop.create_task(self.run_job(job_id, int(float(score))))
        task.add_done_callback(partial(self._job_done, job_id))
        self.tasks[job_id] = task
        return True

    async def run_job(self, job_id: str, score: int) -> None:
        """arq's, but a tick's prelude goes without MULTI/EXEC (:mod:`memory_worker.worker.prelude`)."""
        if self.tick_keys is not None and job_id.startswith(self.tick_keys.tick_job_id("")):
            next_pipeline_plain()
        await super().run_job(job_id, score)

    async def _start(self, job_id: str, keys: Keys | None, is_tick: bool, now: int) -> Any:
        if self._start_script is None:
            self._start_script = self.pool.register_script(_START)
        return await self._start_script(
            keys=[
                in_progress_key_prefix + job_id,
                self.queue_name,
                keys.ticks_running if keys else self.queue_name,
                keys.ticks_started if keys else self.queue_name,
            ],
            args=[
                job_id,
                now,
                int(self.in_progress_timeout_s * 1000),
                now + self.running_ttl_ms if is_tick else 0,
            ],
        )

    async def finish_job(
        self,
        job_id: str,
        finish: bool,
        result_data: bytes | None,
        result_timeout_s: float | None,
        keep_result_forever: bool,
        incr_score: int | None,
        keep_in_progress: float | None,
    ) -> None:
        """arq's finish of a job that keeps no result (every tick): the same commands
        without MULTI/EXEC (2 commands, not 5).

        The order alone keeps it safe: the job leaves the queue while its in-progress
        key still blocks every start, then its keys go. Anything else is arq's finish.
        arq reads its abort set (and clears a starting job's mark there) only with
        ``allow_abort_jobs``; without it (ours), a mark ``Job.abort`` left is never read, and
        the finish leaves it alone too (one command a run saved). A finished tick
        stays in ``ticks:started`` until its lease would end (:mod:`memory_worker.pipeline.ticks`)
        unless the poll reads that whole set (Redis < 6.2) or arq will run the tick again.
        A job task that outlives :meth:`close` finds no pool: its entries stay as after
        a crash (the in-progress key expires, the queue entry runs again).
        """
        if self._pool is None:
            log.info("job_finished_after_close", job_id=job_id)
            return
        if not finish or result_data or keep_in_progress is not None:
            await super().finish_job(
                job_id,
                finish,
                result_data,
                result_timeout_s,
                keep_result_forever,
                incr_score,
                keep_in_progress,
            )
            keys = self.tick_keys
            if not finish and keys is not None and job_id.startswith(keys.tick_job_id("")):
                # arq runs it again: its schedule left it "started" (the poll skips it)
                await self.pool.zrem(keys.ticks_started, job_id)
            return
        async with self.pool.pipeline(transaction=False) as pipe:
            pipe.zrem(self.queue_name, job_id)
            if self.allow_abort_jobs:
                pipe.zrem(abort_jobs_ss, job_id)
            if not self.has_zdiff and self.tick_keys is not None:
                # Redis < 6.2: the poll reads all of "started", so a finished tick leaves it
                pipe.zrem(self.tick_keys.ticks_started, job_id)
            pipe.delete(
                retry_key_prefix + job_id, in_progress_key_prefix + job_id, job_key_prefix + job_id
            )
            await pipe.execute()

    def handle_sig(self, signum: signal.Signals) -> None:
        runner: TickRunner | None = self.ctx.get("runner")
        if runner is not None:
            runner.stopping = True
        super().handle_sig(signum)
        self._insist(signum, self.STOP_INSIST_SECONDS)

    def handle_sig_wait_for_completion(self, signum: signal.Signals) -> None:
        runner: TickRunner | None = self.ctx.get("runner")
        if runner is not None:
            runner.stopping = True
        log.info("worker_stopping", signal=signal.Signals(signum).name, in_flight=len(self.tasks))
        super().handle_sig_wait_for_completion(signum)
        # arq cancels the main task once the grace is over (or every job ended)
        self._insist(signum, self._job_completion_wait + self.STOP_INSIST_SECONDS)

    #: A stop's cancel of the main task is repeated this often until the task ends.
    STOP_INSIST_SECONDS = 1.0

    def _insist(self, signum: signal.Signals, delay: float) -> None:
        """Cancel the main task (and its jobs) again should it still run ``delay`` from now.

        A cancel can be lost: a library that catches ``CancelledError`` around a call (or
        an ``asyncio.wait_for`` that returns the result its inner call had just got, on
        3.11) leaves the poll loop running, claiming nothing — and the process would only
        stop at the supervisor's SIGKILL (a clean-clone CI run waited 30 s on one). arq
        cancels once; this cancels until the task has ended.
        """
        if self._insist_handle is not None or self.main_task is None:
            return

        def again() -> None:
            self._insist_handle = None
            if self.main_task is None or self.main_task.done():
                return
            log.warning(
                "worker_stop_cancel_lost", signal=signal.Signals(signum).name, jobs=len(self.tasks)
            )
            for task in self.tasks.values():
                if not task.done():
                    task.cancel()
            self.main_task.cancel()
            self._insist(signum, self.STOP_INSIST_SECONDS)

        self._insist_handle = self.loop.call_later(delay, again)

    async def close(self) -> None:
        """arq's close, tolerant of cancelled ticks and of Redis being gone."""
        if not self._handle_signals:
            self.handle_sig(signal.SIGUSR1)
        if not self._pool:
            return
        self.allow_pick_jobs = False  # a poll still running starts no job after this
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
    redis: Redis,
    *,
    runner_factory: ProcessorFactory = build_tick_runner,
    burst: bool = False,
    handle_signals: bool = True,
    url: str | None = None,
) -> MemoryWorker:
    # arq's pool: any client's connections (a client of the library is no ArqRedis)
    pool = redis if isinstance(redis, ArqRedis) else ArqRedis(connection_pool=redis.connection_pool)
    use_json_jobs(pool)  # row 21: arq's cron enqueues go through this pool
    plain_prelude_pipelines(pool)  # a tick's run_job prelude without MULTI/EXEC
    worker = MemoryWorker(
        redis_pool=pool,
        burst=burst,
        handle_signals=handle_signals,
        ctx={"store_url": url},  # the watchdog releases through a client of its own
        **worker_kwargs(settings, runner_factory=runner_factory),
    )
    worker.reconnect_max_seconds = settings.redis_reconnect_max_seconds
    worker.tick_keys = Keys(settings.key_prefix)
    worker.running_ttl_ms = int(settings.worker_heartbeat_seconds * 3 * 1000)
    return worker


def __getattr__(name: str) -> Any:
    """``arq memory_worker.worker.WorkerSettings``: built lazily from the environment."""
    if name != "WorkerSettings":
        raise AttributeError(name)
    from arq.connections import RedisSettings

    from memory_worker.errors import SettingsError, SettingsRefused
    from memory_worker.settings import get_settings
    from memory_worker.storage.connections import resolve_url

    try:
        settings = get_settings()
    except SettingsError as exc:  # under arq's command line: memory-worker's line, exit 2
        raise SettingsRefused(exc.problems) from None
    url, _ = resolve_url(settings)
    attrs = worker_kwargs(settings)
    attrs["redis_settings"] = RedisSettings.from_dsn(url)
    return type("WorkerSettings", (), attrs)
