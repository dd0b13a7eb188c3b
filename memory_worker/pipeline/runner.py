"""Ticks: "claim one run and process it", and everything a worker process shares between them.

:class:`TickRunner` holds the worker's run store, tick queue and processor; the
arq job functions in :mod:`memory_worker.worker.main` call its ``tick``,
``safety_net`` and ``maintenance``.

Store faults (§7) — a Redis error is never evidence against the work:

- the lease renewer never cancels work on a Redis error; only a renewal
  answered "not yours" does (see ``runs/store.py`` for how a claim tells a live
  owner that could not renew from a dead one: heartbeats listing held runs,
  and the store's pulse);
- completion, release and failure writes are retried on transient faults with backoff
  (:func:`backoff_delay`, capped by ``MEMORY_STORE_RETRY_MAX_SECONDS``) until they land
  or the fenced script answers that the lease is someone else's; never in the tick on an
  answer no retry heals;
- a settlement the store refuses (``OOM``, ``MISCONF``, ``NOREPLICAS``, ``NOPERM``: the
  store's fault, not the run's) frees the tick at once and leaves the run *owed*: a
  background task of this worker retries its release (attempt refunded) until the store
  takes it, while the heartbeat lists the run as held, so no claim takes it from a live
  owner and spends an attempt; ``/readyz`` and ``memory_worker_redis_writes_refused`` say
  so while any is owed (:attr:`TickRunner.owed`);
- a store outage raised by the processor (transient, or writes refused: an OOM Redis)
  releases the run, attempt refunded, and leaves one delayed probe; any other store answer
  (corrupt data, a script's error) fails it, naming the chat;
- a tick that outlives its budget fails its run as ``task_timeout`` (the tick
  enforces the budget itself, just inside arq's job timeout, and treats a
  cancellation outside a shutdown the same way); so does a processor that
  honoured its deadline and was cut by it (``runs.outlived_budget``: the run's
  ``DeadlineExceeded``, not a ``provider_timeout`` of the farm call it cut);
  only a real shutdown (SIGTERM/SIGINT) releases.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, TypeVar

from redis.asyncio import Redis
from redis.exceptions import RedisError

from llm_client import RecordCarry, bind_log_context, unbind_log_context
from memory_worker.errors import (
    RunCancelled,
    StoreDataCorrupt,
    StoredRunUnreadable,
    StoreError,
    StoreWriteRefused,
    TickTimeout,
)
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.models import RunRequest
from memory_worker.pipeline import ticks as tick_rules
from memory_worker.pipeline.lease import keep_lease
from memory_worker.pipeline.process_metrics import WorkerMetrics, process_metrics
from memory_worker.pipeline.processing import ProcessResult, RouteGate, RunProcessor
from memory_worker.pipeline.ticks import Mode, TickOutcome, TickPlan, TickQueue, plan_followups
from memory_worker.privacy.forget import FORGOTTEN
from memory_worker.runs import ClaimedRun, RunStore, now_ms
from memory_worker.runs.forget import RunForget
from memory_worker.runs.model import UnreadableClaim
from memory_worker.runs.policy import (
    STORE_REFUSED,
    STORE_UNAVAILABLE,
    TASK_TIMEOUT,
    Decision,
    ReleaseOrigin,
    Verdict,
    decide,
    outlived_budget,
    plan_failure,
    release_origin,
)
from memory_worker.runs.workers import heartbeat_info
from memory_worker.settings import Settings
from memory_worker.storage.connections import (
    LOG_RETRY_AT,
    awaited,
    backoff_delay,
    retry_store_write,
)
from memory_worker.storage.faults import is_store_outage, store_answer
from memory_worker.storage.health import QUEUE, client_address

log = get_logger(__name__)

T = TypeVar("T")

#: The tick job a task works for (set by :meth:`TickRunner.tick`; read by ``touch``).
_SLOT: ContextVar[str | None] = ContextVar("tick_slot", default=None)

#: Called when runs are retired (the admin-report hook): (run ids, reason code).
RetiredHook = Callable[[list[str], str, str | None], Awaitable[None]]
#: Called when this worker is pinned and its restart guard holds it (the admin-report hook):
#: (the worker's stable identity, its counts over the window — names to integers).
PinnedHook = Callable[[str, dict[str, int]], Awaitable[None]]


class FailureReport(Protocol):
    """Told of every error a claimed run's processing raised, store outages aside, with the
    decision taken (the worker gives :func:`memory_worker.ops.sentry.report_failure`)."""

    def __call__(
        self, error: BaseException, decision: Decision, *, run_id: str, chat_id: int
    ) -> None: ...


@dataclass
class TickRunner:
    """Runs ticks: everything a worker process shares between its ticks."""

    settings: Settings
    redis: Redis
    processor: RunProcessor
    #: The run store and the tick queue on ``redis`` (built by the composition root).
    store: RunStore
    ticks: TickQueue
    gate: RouteGate | None = None
    on_retired: RetiredHook | None = None
    on_pinned: PinnedHook | None = None
    worker_id: str = field(
        default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    )
    stopping: bool = False
    target: int = 1
    #: Running tick job ids → when they started (``time.monotonic()``).
    running: dict[str, float] = field(default_factory=dict)
    #: Ids of the runs this worker holds a lease on; the heartbeat lists them (§7).
    held: set[str] = field(default_factory=set)
    #: Ticks between sending a claim and listing its run in :attr:`held`.
    claiming: int = 0
    #: Runs this process claimed since it started: its demand (a pinned worker, §11).
    claims: int = 0
    #: Claims whose outcome has not landed in Redis yet. A tick cancelled by a shutdown
    #: (arq's grace ran out while a write was retrying) leaves its run here, and
    #: :meth:`release_unsettled` (on_shutdown) gives it back before the process exits.
    unsettled: dict[str, ClaimedRun] = field(default_factory=dict)
    #: Runs whose settlement the store refused (§7: OOM, MISCONF, NOREPLICAS, NOPERM) → the
    #: refusal's code: each is still ``held`` and ``unsettled``, and a background task
    #: (:meth:`_pay_owed`) retries its release until the store takes it.
    owed: dict[str, str] = field(default_factory=dict)
    _owed_tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict, init=False)
    #: Tick job ids whose start already marked them running and started (MemoryWorker).
    premarked: set[str] = field(default_factory=set)
    #: The poll loop's last good iteration (unix ms): readiness is fed by the loop itself.
    last_loop_ms: int = 0
    #: Liveness (the watchdog, ``time.monotonic()``): when the poll loop last began an
    #: iteration, good or not, and when each running tick last made progress (started,
    #: claimed, processed, or tried a store write) — tick job id → time.
    poll_progress: float = field(default_factory=time.monotonic)
    progress: dict[str, float] = field(default_factory=dict)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    #: Long-lived loops (e.g. admin-page delivery) run while the worker runs.
    background: list[Callable[[asyncio.Event], Coroutine[Any, Any, None]]] = field(
        default_factory=list
    )
    #: Memory maintenance, called by a cron every minute (it paces itself fleet-wide).
    maintenance: Callable[[], Awaitable[str]] | None = None
    #: Where a failed run's error goes beyond the log (the worker passes Sentry's reporter).
    report_failure: FailureReport | None = None
    #: This process's own series (slots, tick and run durations, claim waits), §11.
    metrics: WorkerMetrics = field(default_factory=process_metrics)
    #: When a going-on tick last found the fleet at its target (``time.monotonic()``).
    _ramp_checked_at: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.keys = Keys(self.settings.key_prefix)
        self.target = self.settings.pipeline_target or self.settings.worker_concurrency
        self.metrics.set_slots(self.settings.worker_concurrency)
        #: Closed breakers' successes of every run of this process, held and folded
        #: (llm_client._breaker.carry): they ride on later walks and completions.
        self.carry = RecordCarry(self.settings.breaker_success_hold_seconds)
        self.closers.insert(0, self.carry.close)  # held successes land before clients close
        self.queue_node = client_address(self.redis)
        self.metrics.set_writes_refused(QUEUE, self.queue_node, refused=False)

    # --- one tick -------------------------------------------------------------------------------
    async def tick(self, job_id: str, *, go_on: bool = False) -> str:
        """Claim and process a run, then queue the follow-ups §8 asks for; with ``go_on``
        (the arq job), a completed run's follow-up is this tick itself while
        :meth:`_goes_on` says so. Follow-ups are queued while this tick is still in the
        running set (§8), so no wake-up or safety-net pass slips an immediate tick in."""
        if self.stopping:
            self.premarked.discard(job_id)
            if not await self._schedule(TickPlan(Mode.PROBE, base=1), done=job_id):
                with contextlib.suppress(RedisError):
                    await self.ticks.unmark_running(job_id)
            return "stopping"
        job_started = time.monotonic()
        self.running[job_id] = self.progress[job_id] = job_started
        slot = _SLOT.set(job_id)  # this tick's task (and the tasks it starts) touch its progress
        outcome = TickOutcome.STORE_ERROR
        left = False
        try:
            if job_id in self.premarked:
                self.premarked.discard(job_id)
            else:
                with contextlib.suppress(RedisError):
                    await self.ticks.mark_running(
                        job_id, self.running_ttl, started_s=self.settings.tick_job_timeout + 10
                    )
            outcome = await self._iteration(job_id)
            first = True
            while go_on and await self._goes_on(outcome, job_started, first=first):
                outcome, first = await self._iteration(job_id), False
            left = await self._schedule(
                plan_followups(
                    outcome, retry_interval=self.settings.consolidation_backend_retry_interval
                ),
                done=job_id,
                clear_deferred=outcome is TickOutcome.COMPLETED,
            )
        finally:
            self.running.pop(job_id, None)
            self.progress.pop(job_id, None)
            _SLOT.reset(slot)
            if not left:
                with contextlib.suppress(RedisError):
                    await asyncio.shield(self.ticks.unmark_running(job_id))
        if not left or outcome is TickOutcome.DEFERRED:
            await self._note_pipeline_state(outcome)
        return outcome.value

    async def _iteration(self, job_id: str) -> TickOutcome:
        """One claim and its run: what tick metrics, the gate, readiness and the watchdog see."""
        started = time.monotonic()
        self.running[job_id] = self.progress[job_id] = started
        self.metrics.tick_started()
        outcome = TickOutcome.STORE_ERROR
        try:
            outcome = await self._tick_once()
            return outcome
        finally:  # at once, before the follow-ups' round trip
            if self.gate is not None:
                self.gate.tick_ended(outcome)
            self.metrics.tick_ended(outcome.value, time.monotonic() - started)

    async def _goes_on(self, outcome: TickOutcome, job_started: float, *, first: bool) -> bool:
        """:func:`goes_on`, after queueing the ramp's extra when :func:`ramp_check_due`
        (a store error there ends the loop: the tick leaves through its follow-up step)."""
        now, loop_s = time.monotonic(), self.settings.tick_loop_seconds
        if not tick_rules.goes_on(outcome, self.stopping, now - job_started, loop_s):
            return False
        if tick_rules.ramp_check_due(first=first, checked_at=self._ramp_checked_at, now=now):
            plan = tick_rules.GOING_ON
            try:
                added = await self.ticks.schedule(plan, target=self.target, clear_deferred=first)
            except RedisError as exc:
                log.warning("tick_store_error", error=type(exc).__name__)
                return False
            self._ramp_checked_at = now if added.added == 0 else None
        return not self.stopping

    @property
    def running_ttl(self) -> float:
        """How long a running tick's mark lives without a heartbeat."""
        return self.settings.worker_heartbeat_seconds * 3

    async def _tick_once(self) -> TickOutcome:
        # From before the claim is sent until its run is in ``held``, a heartbeat keeps the
        # runs a claim listed for us meanwhile: its snapshot of ``held`` cannot know them
        # yet, and overwriting the list would make our live lease look like a lost worker's
        # to the next claim after a Redis pause longer than the lease (an attempt spent).
        self.claiming += 1
        try:
            claimed = await self._claim()
        finally:
            self.claiming -= 1
        self.touch()
        if isinstance(claimed, TickOutcome):
            return claimed
        claim = claimed
        lost, cancelled = asyncio.Event(), asyncio.Event()
        renewer = asyncio.create_task(
            keep_lease(self.store, claim, lost, self.settings.lease_renew_seconds, cancelled)
        )
        claimed_at = time.monotonic()
        outcome = TickOutcome.STORE_ERROR
        try:
            log.info("run_claimed", attempt=claim.attempts, releases=claim.releases)
            outcome = await self._process(claim, lost, cancelled)
            if claim.id not in self.owed:
                self.unsettled.pop(claim.id, None)  # settled, or abandoned (no longer ours)
            return outcome
        except asyncio.CancelledError:  # released at a shutdown, else failed (outlived budget)
            outcome = TickOutcome.SHUTDOWN if self.stopping else TickOutcome.FAILED
            raise
        finally:
            self.metrics.run_settled(outcome.value, time.monotonic() - claimed_at)
            renewer.cancel()
            if claim.id not in self.owed and not (self.stopping and claim.id in self.unsettled):
                # a stopping worker keeps listing a run it still owes a release in its
                # heartbeat, so no claim reads the lease as a lost worker meanwhile (and
                # so does any worker for a run whose settlement the store refused)
                self.unsettled.pop(claim.id, None)
                self.held.discard(claim.id)
            unbind_log_context("run_id", "chat_id")

    async def _claim(self) -> ClaimedRun | TickOutcome:
        """The gate, then one claim; a claimed run is ``held`` and ``unsettled`` on return."""
        try:
            if self.gate is not None and await self.gate.blocked():
                log.info("tick_deferred_route_open", worker=self.worker_id)
                return TickOutcome.DEFERRED
            started = time.monotonic()
            result = await self.store.claim_detailed(self.worker_id)
            self.metrics.claim_answered(time.monotonic() - started)
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
        if result.unreadable is not None:
            return await self._fail_unreadable(result.unreadable)
        claim = result.run
        if claim is None:
            return TickOutcome.IDLE
        if claim.ready_at_ms is not None:
            self.metrics.claimed((now_ms() - claim.ready_at_ms) / 1000)
        bind_log_context(run_id=claim.id, chat_id=claim.request.chat_id)
        self.claims += 1
        self.held.add(claim.id)
        self.unsettled[claim.id] = claim
        return claim

    async def _fail_unreadable(self, run: UnreadableClaim) -> TickOutcome:
        """A run claimed whose stored request no longer validates can never heal (§7): it is
        retired at once (``StoredRunUnreadable``, naming its fields, never their values) and
        the tick goes on; a store that refuses the write leaves it to its lease."""
        code = StoredRunUnreadable.__name__
        bind_log_context(run_id=run.id)
        try:
            log.warning("run_unreadable", attempt=run.attempts, problems=list(run.problems))
            try:
                failed = await self._store_write("fail", lambda: self.store.fail_unreadable(run))
            except StoreError as answer:  # an answer no retry heals: left to the lease
                log.warning("run_fail_store_error", error=type(answer).__name__, code=code)
                return TickOutcome.STORE_ERROR
            log.warning("run_retired", attempt=run.attempts, code=code, reason=None, error=code)
        finally:
            unbind_log_context("run_id")
        if failed and self.on_retired is not None:
            with contextlib.suppress(Exception):
                await self.on_retired([run.id], code, None)
        return TickOutcome.FAILED if failed else TickOutcome.ABANDONED

    async def _process(
        self, claim: ClaimedRun, lost: asyncio.Event, cancelled: asyncio.Event
    ) -> TickOutcome:
        """Run the processor under the lease and the tick budget, then settle the run
        (``cancelled``: the lease renewal found the run cancelled by an operator, §13)."""
        soft, hard = tick_rules.tick_budgets(self.settings.tick_timeout_seconds)
        started = time.monotonic()
        carry = self.carry
        with carry:  # the run's walks hold plain successes' records (the process's carry)
            work = asyncio.create_task(self.processor(claim, deadline=started + soft))
        lost_wait = asyncio.create_task(lost.wait())
        try:
            async with asyncio.timeout(hard):
                await asyncio.wait({work, lost_wait}, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            await _cancel(work)
            await carry.land()
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
        self.touch()
        if work.done() and not work.cancelled() and work.exception() is None:
            return await self._complete(claim, work.result(), carry)  # the records ride along
        lease_lost = not work.done()
        await _cancel(work)
        await carry.land()
        if lease_lost:
            if cancelled.is_set():  # §13: dropped at this checkpoint, nothing of it written
                log.info("run_cancelled", attempt=claim.attempts, at="lease_renewal")
            else:
                log.warning("run_lease_lost", attempt=claim.attempts)
            return TickOutcome.ABANDONED
        if work.cancelled():
            raise asyncio.CancelledError
        exc = work.exception()
        assert exc is not None  # a run that raised nothing was completed above
        if isinstance(exc, Exception):
            if outlived_budget(exc, deadline_passed=time.monotonic() >= started + soft):
                log.warning("tick_timeout", attempt=claim.attempts, cut=type(exc).__name__)
                return await self._settle_error(claim, TickTimeout())
            return await self._settle_error(claim, exc)
        raise exc

    async def _store_write(
        self, what: str, write: Callable[[], Awaitable[T]], *, give_up_after: float | None = None
    ) -> T:
        """Retry a fenced outcome write with backoff until it lands (§7).

        The scripts are fenced by the lease token, so a retry of a write that landed
        answers "not yours" instead of applying twice. ``give_up_after`` (seconds)
        bounds it where the process cannot wait (shutdown): the error is raised.
        """
        return await retry_store_write(
            what,
            write,
            cap=self.settings.store_retry_max_seconds,
            give_up_after=give_up_after,
            on_attempt=self.touch,
        )

    async def _complete(
        self, claim: ClaimedRun, result: ProcessResult, carry: RecordCarry
    ) -> TickOutcome:
        if result.continuations:  # the run goes on in another (rare): its records go alone
            await carry.land()
        try:
            for continuation in result.continuations:  # idempotent by natural key
                await self._store_write(
                    "continuation", partial(self._enqueue_continuation, claim, continuation)
                )
            done = await self._store_write(  # the records ride on the completion's first try
                "complete",
                lambda: self.store.complete(claim, result.summary, riders=carry.riders()),
            )
        except StoreError as exc:  # an answer no retry heals (the card write stands: idempotent)
            return await self._settle_error(claim, exc)
        if not done:
            log.warning("run_lease_lost_at_completion", attempt=claim.attempts)
            return TickOutcome.ABANDONED
        log.info("run_completed", attempt=claim.attempts, continuations=len(result.continuations))
        return TickOutcome.COMPLETED

    async def _enqueue_continuation(self, claim: ClaimedRun, request: RunRequest) -> None:
        """The rest of the run, minus what a forget since the claim removed (§14)."""
        forgets = RunForget(self.redis, self.keys, chunk=1)
        remembered = await forgets.remembered(claim, request)
        if remembered is None:
            log.info("continuation_forgotten")
            return
        added = await self.store.enqueue(remembered, bypass_caps=True)
        if added.run_id and await forgets.epoch(claim.request.chat_id) != claim.forget_epoch:
            await forgets.restrict(added.run_id, claim.id)  # a forget raced the enqueue

    async def _release(
        self,
        claim: ClaimedRun,
        reason: str,
        *,
        patient: bool = True,
        origin: ReleaseOrigin | None = None,
    ) -> bool:
        try:
            released = await self._store_write(
                "release",
                lambda: self.store.release(claim, reason=reason, origin=origin),
                give_up_after=None if patient else self.settings.shutdown_release_seconds,
            )
        except (RedisError, StoreError) as exc:  # patience ran out, or an answer no retry heals
            refused = store_answer(exc)
            if patient and isinstance(refused, StoreWriteRefused):
                self._owe(claim, "release", refused.code)
                return False
            log.warning("run_release_store_error", error=type(exc).__name__, reason=reason)
            return False
        self.unsettled.pop(claim.id, None)  # Redis answered: released, or not ours any more
        log.info("run_released", reason=reason, attempt=claim.attempts, released=released)
        return released

    def _owe(self, claim: ClaimedRun, write: str, code: str) -> None:
        """The store refused ``claim``'s settlement (``write``; ``code``: ``oom``, ``misconf``,
        ``noreplicas``, ``noperm``…): the store's fault, never the run's (§7). The tick goes
        on at once; the run stays held (the heartbeat lists it: no claim reads its lease as
        a lost worker's) and a background task releases it, attempt refunded, once the store
        takes the write. A stopping worker leaves it to :meth:`release_unsettled`."""
        log.warning("run_settlement_refused", write=write, code=code, attempt=claim.attempts)
        self.owed[claim.id] = code
        self.held.add(claim.id)
        self.unsettled[claim.id] = claim
        self.metrics.set_writes_refused(QUEUE, self.queue_node, refused=True)
        if self.stopping or claim.id in self._owed_tasks:
            return
        self._owed_tasks[claim.id] = asyncio.create_task(self._pay_owed(claim, code))

    async def _pay_owed(self, claim: ClaimedRun, code: str) -> None:
        """Release an owed run (reason ``store_refused``, attempt refunded) as soon as the store
        takes the write: retried with the outcome writes' backoff on a refusal or an outage;
        any other answer (corrupt data, a script's error) leaves it to its lease, logged."""
        failures = 0
        origin = ReleaseOrigin(code=code)
        try:
            while True:
                try:
                    released = await self.store.release(claim, reason=STORE_REFUSED, origin=origin)
                except Exception as exc:
                    if not is_store_outage(exc):
                        answer = store_answer(exc)
                        log.warning(
                            "run_owed_release_failed",
                            error=type(answer or exc).__name__,
                            code=getattr(answer, "code", None),
                        )
                        return
                    failures += 1
                    if failures in LOG_RETRY_AT or failures % 64 == 0:
                        answer = store_answer(exc)
                        log.warning(
                            "run_owed_release_retry",
                            code=getattr(answer, "code", None),
                            error=type(exc).__name__,
                            failures=failures,
                        )
                    cap = self.settings.store_retry_max_seconds
                    await asyncio.sleep(backoff_delay(failures, base=0.05, cap=cap))
                    continue
                log.info(
                    "run_released",
                    reason=STORE_REFUSED,
                    attempt=claim.attempts,
                    released=released,
                    owed=True,
                    refused=code,
                )
                return
        finally:
            self._owed_tasks.pop(claim.id, None)
            self.owed.pop(claim.id, None)
            if not self.stopping:
                self.unsettled.pop(claim.id, None)
                self.held.discard(claim.id)
            if not self.owed:
                self.metrics.set_writes_refused(QUEUE, self.queue_node, refused=False)

    def writes_refused(self) -> list[str]:
        """The codes of the refusals this worker owes runs a release for (readiness, §7)."""
        return sorted(set(self.owed.values()))

    async def release_unsettled(self) -> int:
        """Give back every run a cancelled tick left unsettled (on_shutdown, §7).

        arq cancels ticks when the shutdown grace ends; a tick cancelled while its
        outcome write was retrying (Redis away) never settled its run. Each such run is
        released here, retried for ``MEMORY_SHUTDOWN_RELEASE_SECONDS`` while Redis is
        away, so a deploy during a Redis blip spends no attempt. Returns how many landed.
        """
        for task in list(self._owed_tasks.values()):  # one last try each, below
            await _cancel(task)
        claims = list(self.unsettled.values())
        results = await asyncio.gather(
            *(self._release(claim, "shutdown", patient=False) for claim in claims)
        )
        for claim in claims:
            self.held.discard(claim.id)
            self.unsettled.pop(claim.id, None)
        return sum(results)

    async def _settle_error(self, claim: ClaimedRun, exc: Exception) -> TickOutcome:
        if isinstance(exc, RunCancelled):  # §13: an operator took it out; nothing was written
            log.info("run_cancelled", attempt=claim.attempts, at="checkpoint")
            return TickOutcome.ABANDONED
        if is_store_outage(exc):
            # §7: an outage, or a store refusing writes, is never evidence against the work.
            # The run goes back with its attempt refunded; a delayed probe (not the
            # farm-outage deferral) picks the pipeline up again.
            log.warning("run_store_fault", attempt=claim.attempts, error=type(exc).__name__)
            await self._release(claim, decide(exc).reason or STORE_UNAVAILABLE)
            return TickOutcome.STORE_ERROR
        if isinstance(exc, TickTimeout):
            return await self._fail(claim, exc, TASK_TIMEOUT, TASK_TIMEOUT)
        answer = store_answer(exc)
        if isinstance(answer, StoreDataCorrupt) and answer.chat_id is None:
            exc = answer.located(claim.request.chat_id, answer.problems)  # names the chat
        decision = decide(exc)
        if self.report_failure is not None:
            self.report_failure(exc, decision, run_id=claim.id, chat_id=claim.request.chat_id)
        if decision.verdict is Verdict.ABANDON:
            log.warning("run_lease_lost", attempt=claim.attempts, code=decision.code)
            return TickOutcome.ABANDONED
        if decision.verdict is Verdict.RELEASE:
            released = await self._release(
                claim, decision.reason or "unavailable", origin=release_origin(exc)
            )
            if decision.reason == FORGOTTEN:  # §14: not an outage; the run is redone now
                return TickOutcome.ABANDONED
            if claim.id in self.owed:  # the store refused the release: it is owed
                return TickOutcome.STORE_ERROR
            return TickOutcome.DEFERRED if released else TickOutcome.ABANDONED
        return await self._fail(claim, exc, decision.code, decision.reason)

    async def _fail(
        self, claim: ClaimedRun, exc: Exception, code: str, reason: str | None
    ) -> TickOutcome:
        """Fail the run: its attempt spent, retried after its backoff or retired at the last."""
        s = self.settings
        plan = plan_failure(
            claim.attempts,
            max_attempts=s.max_attempts,
            unit=s.backoff_unit_seconds,
            max_units=s.backoff_max_units,
            now_ms=now_ms(),
        )
        timeout = isinstance(exc, TickTimeout)
        message = "the tick outlived its budget" if timeout else str(exc)
        origin = None if timeout else release_origin(exc)
        try:
            failed = await self._store_write(
                "fail",
                lambda: self.store.fail(
                    claim, plan, code=code, reason=reason, message=message, origin=origin
                ),
            )
        except StoreError as answer:  # an answer no retry heals
            if isinstance(answer, StoreWriteRefused):  # the store's fault: released, uncharged
                self._owe(claim, "fail", answer.code)
                return TickOutcome.STORE_ERROR
            log.warning("run_fail_store_error", error=type(answer).__name__, code=code)
            return TickOutcome.ABANDONED
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

    async def _schedule(
        self, plan: TickPlan, *, done: str | None = None, clear_deferred: bool = False
    ) -> bool:
        """Queue follow-ups (and, with ``done``, leave the running set in the same step);
        False when the store refused."""
        try:
            await self.ticks.schedule(
                plan, target=self.target, done=done, clear_deferred=clear_deferred
            )
        except RedisError as exc:  # the safety net restarts the pipeline later
            log.warning("tick_schedule_failed", error=type(exc).__name__)
            return False
        return True

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
        mode = Mode.IF_NONE_PENDING if claimable == 2 else Mode.IF_IDLE
        scheduled = await self.ticks.schedule(TickPlan(mode, base=1), target=self.target)
        return f"kicked={scheduled.added}"

    async def wake(self) -> None:
        """After an enqueue: start a tick unless the pipeline is already alive or deferred."""
        await self._schedule(TickPlan(Mode.IF_IDLE, base=1))

    async def heartbeat(self) -> None:
        """Register this worker with the runs it holds, refresh its ticks, recompute the target."""
        s = self.settings
        live = await self.store.heartbeat(
            self.worker_id,
            sorted(self.held),
            concurrency=s.worker_concurrency,
            keep_listed=self.claiming > 0,  # a claim in flight may have listed a run
            info=heartbeat_info(prompt_version=s.prompt_version, busy=len(self.running)),
        )
        await self.ticks.refresh_running(sorted(self.running), self.running_ttl)
        self.premarked.intersection_update(self.running)  # a start whose tick never ran
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
                if failing in LOG_RETRY_AT or failing % 64 == 0:
                    log.warning("heartbeat_failed", error=type(exc).__name__, failures=failing)
            await asyncio.sleep(
                min(period, backoff_delay(failing, base=0.1, cap=1.0)) if failing else period
            )

    async def deregister(self) -> None:
        with contextlib.suppress(RedisError):
            await self.store.deregister(self.worker_id)

    def touch(self) -> None:
        """The calling tick made progress (for the watchdog)."""
        job_id = _SLOT.get()
        if job_id is not None and job_id in self.progress:
            self.progress[job_id] = time.monotonic()

    def polled(self) -> None:
        """The poll loop began an iteration (for the watchdog)."""
        self.poll_progress = time.monotonic()

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
