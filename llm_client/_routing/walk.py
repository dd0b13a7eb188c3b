"""One routed call's walk over a route's targets (§6): the thin async shell.

The walk's decisions — order, budgets, passes, fail-open, the ending — are pure
functions in :mod:`llm_client._routing.step`; :class:`Walk` only performs the steps they
name (breaker begin/acquire/record/renew through the store, events, the call, pauses)
and feeds the results back. It talks to the walker only through :class:`WalkHost`
(clock, sleep, events, breakers, the preferred order, in-flight counts, durations), so
this module needs nothing from ``routing``. The walk's rules are documented in
:mod:`llm_client._routing.walker`.

Each admission carries the target's caps, each record what the answer left behind: the
cooling a ``Retry-After`` asked for, a success's duration and tokens (``usage``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, Generic, Protocol, TypeVar, cast

from llm_client._breaker.model import Circuit, Outcome, Permit, Transition
from llm_client._breaker.store import BreakerStore
from llm_client._errors import LLMError, TaskTimeout
from llm_client._gateway.model import Latency, Refusal
from llm_client._gateway.target import Report
from llm_client._routing.events import RoutingEvent
from llm_client._routing.judge import (
    Failed,
    Served,
    attempt_note,
    cooling_note,
    judge_attempt,
    judge_failure,
    transition_note,
)
from llm_client._routing.plan import (
    UNTRACKED,
    AttemptRecord,
    Note,
    Routed,
    WalkerConfig,
    WalkPlan,
    lease,
)
from llm_client._routing.routes import Route, RouteTarget
from llm_client._routing.step import (
    Acquire,
    AcquireFailOpen,
    Announce,
    Attempt,
    Begin,
    Done,
    Pause,
    ReadViews,
    Release,
    Step,
    Stop,
    WalkState,
    after_acquire,
    after_attempt,
    after_begin,
    after_failopen,
    after_order,
    after_pause,
    after_release,
    announced,
    next_step,
)

__all__ = [
    "UNTRACKED",
    "AttemptFn",
    "AttemptRecord",
    "Routed",
    "UsageFn",
    "Walk",
    "WalkHost",
    "WalkerConfig",
    "judge_failure",
]

T = TypeVar("T")

#: An attempt on one target: ``(target, timeout_seconds, idempotency_key) -> result``.
AttemptFn = Callable[[RouteTarget, float, str | None], Awaitable[T]]

#: The tokens a result used (``tokens_per_day``): reported usage, or an estimate.
UsageFn = Callable[[T], int]


class WalkHost(Protocol):
    """What a walk needs from its walker (:class:`llm_client._routing.walker.Walker` is one)."""

    breakers: BreakerStore
    config: WalkerConfig

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...

    async def emit(self, event: RoutingEvent, context: Mapping[str, str] | None = None) -> None: ...

    def bookkeeping_failed(self, operation: str, error: BaseException, **fields: Any) -> None: ...

    def prefer(self, route: Route) -> tuple[RouteTarget, ...]: ...

    def note_latency(self, targets: Sequence[RouteTarget], latency: Sequence[Latency]) -> None: ...

    def attempt_started(self, target: RouteTarget) -> None: ...

    def attempt_ended(
        self, workflow: str, target: RouteTarget, outcome: str, seconds: float
    ) -> None: ...

    def capacity_waited(self, workflow: str, seconds: float) -> None: ...


class Walk(Generic[T]):
    """One routed call: performs what :func:`~llm_client._routing.step.next_step` decides."""

    def __init__(
        self,
        walker: WalkHost,
        route: Route,
        attempt: AttemptFn[T],
        deadline: float | None,
        key: str | None,
        context: Mapping[str, str],
        probes: bool = True,
        usage: UsageFn[T] | None = None,
    ) -> None:
        self.w = walker
        self.workflow = route.workflow
        self.attempt_fn = attempt
        self.key = key
        self.context = context
        self.usage = usage
        ordered = route.ordered
        self.plan = WalkPlan(
            workflow=route.workflow,
            targets=walker.prefer(route),
            max_hops=route.max_hops,
            wall_seconds=route.wall_seconds,
            slot_wait_seconds=route.slot_wait_seconds,
            slot_poll_seconds=route.slot_poll_seconds,
            started=walker.now(),
            deadline=deadline,
            probes=probes,
            config=walker.config,
            primary=ordered[0] if ordered else None,
        )

    async def run(self) -> Routed[T]:
        """Step until the walk ends: the routed value, or its error raised."""
        state = WalkState()
        while True:
            state, step = next_step(state, self.plan, self.w.now())
            if isinstance(step, Done | Stop) and state.first_busy is not None:
                self.w.capacity_waited(self.workflow, self.w.now() - state.first_busy)
            if isinstance(step, Done):
                return cast(Routed[T], step.routed)
            if isinstance(step, Stop):
                await self._announce(step.notes)
                raise step.error
            state = await self._perform(state, step)

    async def _perform(self, state: WalkState, step: Step) -> WalkState:
        """Perform one effect and fold its result into ``state``."""
        plan = self.plan
        if isinstance(step, Announce):
            await self._announce(step.notes)
            return announced(state)
        if isinstance(step, Begin):
            return await self._begin(state, step)
        if isinstance(step, ReadViews):
            return after_order(state, plan, await self._closed(step.targets), None)
        if isinstance(step, Acquire):
            permit, refusal = await self._acquire(step.target, step.lease_seconds)
            return after_acquire(state, permit, refusal)
        if isinstance(step, AcquireFailOpen):
            permit, taken = await self._fail_open(step)
            return after_failopen(state, plan, permit, taken)
        if isinstance(step, Attempt):
            result = await self._attempt(step)
            return after_attempt(state, plan, result, self.w.now())
        if isinstance(step, Release):
            await self._release(step.target, step.permit)
            return after_release(state)
        assert isinstance(step, Pause)
        await self.w.sleep(step.seconds)
        return after_pause(state)

    async def _announce(self, notes: Sequence[Note]) -> None:
        for note in notes:
            await self.w.emit(RoutingEvent(note.type, self.workflow, **note.fields), self.context)

    # --- the breakers (best effort: a store fault fails open) -----------------------------

    async def _begin(self, state: WalkState, step: Begin) -> WalkState:
        """Snapshot + first permit in one round trip; on a store fault, the slow way."""
        try:
            begun = await self.w.breakers.begin(
                [t.id for t in step.targets],
                self.workflow,
                lease_seconds=step.lease_seconds,
                interval_seconds=self.w.config.probe_interval_seconds,
                probes=self.plan.probes,
                limits=[t.limits for t in step.targets],
            )
        except Exception as exc:  # the slow path reads and acquires (each failing open)
            self.w.bookkeeping_failed("breaker_begin", exc, workflow=self.workflow)
            return after_begin(state, self.plan, None, None, None)
        self.w.note_latency(step.targets, begun.latency)
        return after_begin(
            state, self.plan, begun.closed, begun.index, begun.permit, begun.refusals
        )

    async def _closed(self, targets: Sequence[RouteTarget]) -> list[bool]:
        try:
            views = await self.w.breakers.views(t.id for t in targets)
        except Exception as exc:  # fail open: an unreadable breaker counts as closed
            self.w.bookkeeping_failed("breaker_views", exc, workflow=self.workflow)
            return [True] * len(targets)
        return [v.circuit is Circuit.CLOSED for v in views]

    async def _acquire(
        self, target: RouteTarget, lease_seconds: float
    ) -> tuple[Permit | None, Refusal | None]:
        try:
            admitted = await self.w.breakers.admit(
                target.id,
                lease_seconds=lease_seconds,
                workflow=self.workflow,
                interval_seconds=self.w.config.probe_interval_seconds,
                limits=target.limits,
            )
        except Exception as exc:  # fail open: call it, untracked
            self.w.bookkeeping_failed("breaker_acquire", exc, target=target.id)
            return UNTRACKED, None
        return admitted.permit, admitted.refusal

    async def _fail_open(self, step: AcquireFailOpen) -> tuple[Permit | None, bool]:
        """The workflow's one fleet-wide probe per interval (to the first target)."""
        try:
            return await self.w.breakers.acquire_failopen(
                step.target.id,
                self.workflow,
                lease_seconds=step.lease_seconds,
                interval_seconds=self.w.config.probe_interval_seconds,
                limits=step.target.limits,
            )
        except Exception as exc:  # fail open: call it, untracked
            self.w.bookkeeping_failed("breaker_acquire", exc, target=step.target.id)
            return UNTRACKED, False

    async def _record_success(
        self, target: RouteTarget, permit: Permit, report: Report
    ) -> tuple[Transition | None, bool]:
        """Record a success (its duration and tokens) and count it in the attempt metrics,
        one round trip, best effort; returns the transition and whether the metrics
        counted it."""
        if permit is UNTRACKED:
            return None, False
        try:
            transition = await self.w.breakers.record(
                target.id,
                permit,
                Outcome.SUCCESS,
                count=True,
                report=report,
                carried_failed=partial(self._record_lost, target),
            )
        except Exception as exc:
            self.w.bookkeeping_failed(
                "breaker_record", exc, target=target.id, outcome=Outcome.SUCCESS
            )
            return None, False
        return transition, self.w.breakers.success_counter is not None

    def _record_lost(self, target: RouteTarget, exc: BaseException) -> None:
        """A carried success's record never landed (llm_client._breaker.carry): nor did the
        attempt count it carried."""
        self.w.bookkeeping_failed("breaker_record", exc, target=target.id, outcome=Outcome.SUCCESS)
        if self.w.breakers.success_counter is not None:
            self.w.bookkeeping_failed("attempt_counter", exc, target=target.id)

    async def _release(self, target: RouteTarget, permit: Permit) -> None:
        await self._record(target, permit, Outcome.NOT_CHARGED)

    async def _record(
        self, target: RouteTarget, permit: Permit, outcome: Outcome, report: Report = Report()
    ) -> Transition | None:
        """Charge the breaker, best effort: a store fault never changes the call's result."""
        if permit is UNTRACKED:
            return None
        try:
            return await self.w.breakers.record(target.id, permit, outcome, report=report)
        except Exception as exc:
            self.w.bookkeeping_failed("breaker_record", exc, target=target.id, outcome=outcome)
            return None

    # --- one attempt ----------------------------------------------------------------------

    async def _attempt(self, step: Attempt) -> Served | Failed:
        """Make the call under its cap (plus a grace), renewing a probe's lease meanwhile;
        record the outcome on the breaker and announce it."""
        target, permit = step.target, step.permit
        key = f"{self.key}:{target.id}" if self.key else None
        start = self.w.now()
        renewer = self._renewer(target, permit)
        self.w.attempt_started(target)
        try:
            grace = self.w.config.probe_lease_grace_seconds
            async with asyncio.timeout(step.cap + grace) as guard:
                value = await self.attempt_fn(target, step.cap, key)
        except asyncio.CancelledError:
            await _stop(renewer)
            self.w.attempt_ended(self.workflow, target, "cancelled", self.w.now() - start)
            await asyncio.shield(self._release(target, permit))
            raise
        except Exception as exc:
            await _stop(renewer)
            if isinstance(exc, TimeoutError) and guard.expired():
                overran = TaskTimeout(
                    f"attempt on {target.id} overran its {step.cap:g}s cap", seconds=step.cap
                )
                return await self._failed(step, overran, start, guard_expired=True)
            return await self._failed(step, exc, start, guard_expired=False)
        await _stop(renewer)
        elapsed = self.w.now() - start
        self.w.attempt_ended(self.workflow, target, Outcome.SUCCESS.value, elapsed)
        report = Report(elapsed_ms=round(elapsed * 1000), tokens=self._tokens(value))
        transition, counted = await self._record_success(target, permit, report)
        await self._announce_transition(target, transition)
        return Served(target, value, counted, elapsed)

    def _tokens(self, value: T) -> int:
        """The tokens a result used, if the caller said how to count them (never fails)."""
        if self.usage is None:
            return 0
        try:
            return max(int(self.usage(value)), 0)
        except Exception:  # bookkeeping: a result without usage counts nothing
            return 0

    async def _failed(
        self, step: Attempt, error: BaseException, start: float, *, guard_expired: bool
    ) -> Failed:
        failed = judge_attempt(
            self.plan,
            step.target,
            error,
            cap=step.cap,
            cap_source=step.cap_source,
            elapsed=self.w.now() - start,
            guard_expired=guard_expired,
            min_slice=self.w.breakers.config.timeout_min_slice_seconds,
        )
        if isinstance(failed.error, LLMError):  # the route and target the answer came from
            failed.error.note_origin(self.workflow, step.target.id)
        self.w.attempt_ended(self.workflow, step.target, failed.outcome.value, failed.elapsed)
        cooling = cooling_note(failed)
        notes = (attempt_note(failed),) + (() if cooling is None else (cooling,))
        # the breaker record and the attempt's event (stream, pages, metrics) at once
        transition, _ = await asyncio.gather(
            self._record(step.target, step.permit, failed.outcome, Report(cool_ms=failed.cool_ms)),
            self._announce(notes),
        )
        if not failed.deadline_cut:  # a deadline cut ends the walk unannounced
            await self._announce_transition(step.target, transition)
        return failed

    async def _announce_transition(
        self, target: RouteTarget, transition: Transition | None
    ) -> None:
        note = transition_note(target, transition)
        if note is not None:
            await self._announce((note,))

    def _renewer(self, target: RouteTarget, permit: Permit) -> asyncio.Task[None] | None:
        """Keep a probe permit's lease (and an in-flight slot's) alive while its call runs
        (None for shared permits without a slot)."""
        if not permit.probe and permit.slot is None:
            return None
        return asyncio.create_task(self._renew_loop(target, permit))

    async def _renew_loop(self, target: RouteTarget, permit: Permit) -> None:
        seconds = lease(self.plan, self.w.now())
        while True:
            await asyncio.sleep(seconds / 3)
            try:
                current = await self.w.breakers.renew(target.id, permit, lease_seconds=seconds)
            except Exception as exc:  # keep trying: the store may answer again in time
                self.w.bookkeeping_failed("breaker_renew", exc, target=target.id)
                continue
            if not current:
                return  # reset, or the lease lapsed and another took the probe / slot


async def _stop(task: asyncio.Task[None] | None) -> None:
    """Cancel a lease renewer and wait until it has stopped.

    ``asyncio.wait`` never raises the renewer's own cancellation, so a cancellation of
    the *calling* task that arrives meanwhile still propagates (nothing is swallowed).
    """
    if task is None:
        return
    task.cancel()
    await asyncio.wait([task])
