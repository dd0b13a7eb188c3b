"""One routed call's walk over a route's targets (§6): the attempts, budgets and ending.

:class:`Walk` is the per-call state and loop behind :meth:`llm_client.routing.Walker.call`;
it talks to the walker only through :class:`WalkHost` (clock, sleep, events, breakers),
so this module needs nothing from ``routing``. The walk's rules are documented in
:mod:`llm_client.routing`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from llm_client.breaker import Circuit, Outcome, Permit, Transition, classify
from llm_client.breaker_store import Begun, BreakerStore
from llm_client.errors import (
    AllCircuitsOpen,
    CapacityWaitTimeout,
    DeadlineExceeded,
    Exhausted,
    NoCandidates,
    TaskTimeout,
    Timeout,
)
from llm_client.events import EventType, RoutingEvent
from llm_client.reasons import FailureReason
from llm_client.retry import retryable_reason
from llm_client.routes import Route, RouteTarget

T = TypeVar("T")

#: An attempt on one target: ``(target, timeout_seconds, idempotency_key) -> result``.
AttemptFn = Callable[[RouteTarget, float, str | None], Awaitable[T]]

#: The leave given when the breaker store could not be asked (fail-open on store faults):
#: no generation ever matches it, and its outcome is not recorded.
UNTRACKED = Permit(generation=-1, probe=False)


@dataclass(frozen=True, slots=True)
class WalkerConfig:
    """Walker knobs (memory-worker builds this from its settings)."""

    #: One fail-open probe per workflow per this many seconds, fleet-wide
    #: (``MEMORY_CONSOLIDATION_BACKEND_RETRY_INTERVAL``).
    probe_interval_seconds: float = 15.0
    #: An attempt that ignores its timeout is abandoned this long after it.
    probe_lease_grace_seconds: float = 5.0
    #: Lease of a probe permit (half-open or fail-open), renewed every third of it while
    #: the call runs (``MEMORY_BREAKER_PERMIT_LEASE_SECONDS``).
    permit_lease_seconds: float = 30.0
    #: A timeout this close to the attempt's cap counts as "cut by the cap".
    cut_tolerance_seconds: float = 0.05


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """What one attempt did (for logs and the caller's metrics)."""

    target: str
    outcome: Outcome
    reason: FailureReason | None
    error_kind: str | None
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class Routed(Generic[T]):
    """A successful routed call: the value, the target that served it, every attempt."""

    value: T
    target: RouteTarget
    attempts: tuple[AttemptRecord, ...]
    #: The success was counted in the attempt metrics with its breaker record.
    counted: bool = False


class _Succeeded(Exception):
    """Internal: carries a successful attempt's value out of the walk loop."""

    def __init__(self, value: Any, target: RouteTarget, counted: bool) -> None:
        self.value = value
        self.target = target
        self.counted = counted


class WalkHost(Protocol):
    """What a walk needs from its walker (:class:`llm_client.routing.Walker` is one)."""

    breakers: BreakerStore
    config: WalkerConfig

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...

    async def emit(self, event: RoutingEvent, context: Mapping[str, str] | None = None) -> None: ...

    def bookkeeping_failed(self, operation: str, error: BaseException, **fields: Any) -> None: ...


def judge_failure(
    error: BaseException,
    *,
    elapsed: float,
    cap: float,
    cap_source: str,
    guard_expired: bool,
    cut_tolerance: float,
    min_slice: float,
) -> tuple[FailureReason | None, Outcome, bool, bool]:
    """A failed attempt, judged (pure): (reason, breaker outcome, cut by the cap, cut by
    the caller's deadline).

    A timeout-like failure that ran to its cap (within ``cut_tolerance``) was cut by
    the cap, whatever the transport said: its reason is ``provider_timeout``, and when
    the cap was the caller's deadline the attempt is not the target's fault.
    """
    reason = retryable_reason(error)
    timeoutish = (
        guard_expired or isinstance(error, Timeout) or reason is FailureReason.PROVIDER_TIMEOUT
    )
    cut = timeoutish and elapsed >= cap - cut_tolerance
    if cut:
        reason = FailureReason.PROVIDER_TIMEOUT
    deadline_cut = cut and cap_source == "deadline"
    outcome = classify(
        reason, slice_seconds=elapsed, deadline_cut=deadline_cut, min_slice_seconds=min_slice
    )
    return reason, outcome, cut, deadline_cut


class Walk(Generic[T]):
    """The state of one routed call."""

    def __init__(
        self,
        walker: WalkHost,
        route: Route,
        attempt: AttemptFn[T],
        deadline: float | None,
        key: str | None,
        context: Mapping[str, str],
        probes: bool = True,
    ) -> None:
        self.w = walker
        self.probes = probes
        self.route = route
        self.workflow = route.workflow
        self.attempt_fn = attempt
        self.deadline = deadline
        self.key = key
        self.context = context
        self.started = walker.now()
        self.hops = 0
        self.records: list[AttemptRecord] = []
        self.failed_attempts = 0
        self.last_error: BaseException | None = None
        self.last_busy_error: BaseException | None = None
        self.first_busy: float | None = None
        self.busy: list[RouteTarget] = []
        self.stop: str | None = None
        #: The walk began with every target breaker-open: its attempts were only probes.
        self.all_open = False
        #: Targets that crashed on this call (``provider_error``), by id.
        self.crashed: set[str] = set()

    async def emit(self, event_type: str, **fields: Any) -> None:
        await self.w.emit(RoutingEvent(event_type, self.workflow, **fields), self.context)

    # --- the walk -------------------------------------------------------------------------

    async def run(self) -> Routed[T]:
        targets = self.route.eligible
        if not targets:
            await self.emit(EventType.NO_CANDIDATES)
            raise NoCandidates(
                f"route {self.workflow} has no enabled target", workflow=self.workflow
            )
        begun = await self._begin(targets)
        if begun is not None:
            closed = [t for t, c in zip(targets, begun.closed, strict=True) if c]
        else:
            closed = await self._closed(targets)
        # Open targets go last, as probes; an optional call (probes=False) skips them.
        ordered = closed + [t for t in targets if t not in closed and self.probes]
        exhaustion = not closed
        self.all_open = exhaustion
        if exhaustion:
            await self.emit(EventType.CIRCUIT_OPEN_EXHAUSTION, counters={"targets": len(targets)})
        first = None
        if begun is not None:  # the targets before the granted one refused, no hop spent
            granted_at = targets[begun.index] if begun.index is not None else None
            first = (ordered.index(granted_at) if granted_at else len(ordered), begun.permit)
        try:
            granted = await self._pass(ordered, first)
            if not granted and self.stop is None:
                if not self.probes:
                    raise AllCircuitsOpen(
                        f"no closed target of {self.workflow} for an optional call",
                        workflow=self.workflow,
                    )
                await self._fail_open(targets[0], exhaustion_emitted=exhaustion)
            await self._capacity_passes()
        except _Succeeded as done:
            return Routed(done.value, done.target, tuple(self.records), done.counted)
        raise await self._exhausted()

    async def _begin(self, targets: Sequence[RouteTarget]) -> Begun | None:
        """Snapshot + first permit in one round trip; None: walk the slow way (a store
        fault, or a budget already spent)."""
        if self._budget_spent():
            self.stop = None  # let the pass find it again, as it always did
            return None
        try:
            return await self.w.breakers.begin(
                [t.id for t in targets],
                self.workflow,
                lease_seconds=self._lease(),
                interval_seconds=self.w.config.probe_interval_seconds,
                probes=self.probes,
            )
        except Exception as exc:  # the slow path reads and acquires (each failing open)
            self.w.bookkeeping_failed("breaker_begin", exc, workflow=self.workflow)
            return None

    async def _closed(self, targets: Sequence[RouteTarget]) -> list[RouteTarget]:
        try:
            views = await self.w.breakers.views(t.id for t in targets)
        except Exception as exc:  # fail open: an unreadable breaker counts as closed
            self.w.bookkeeping_failed("breaker_views", exc, workflow=self.workflow)
            return list(targets)
        return [t for t, v in zip(targets, views, strict=True) if v.circuit is Circuit.CLOSED]

    async def _pass(
        self,
        candidates: Sequence[RouteTarget],
        first: tuple[int, Permit | None] | None = None,
    ) -> int:
        """Try each candidate once; returns how many permits were granted.

        ``first``: the begin script's answer — candidates before that index refused,
        and that one's permit (None when every candidate refused)."""
        self.busy = []
        granted = 0
        for index, target in enumerate(candidates):
            taken = first is not None and index == first[0]
            if self._budget_spent():
                if taken and first is not None and first[1] is not None:
                    await self._release(target, first[1])
                break
            if first is not None and index < first[0]:
                continue  # refused by the begin script
            if taken and first is not None:
                permit: Permit | None = first[1]
            else:
                permit = await self._acquire(target)
            if permit is None:
                continue  # open (or probe taken elsewhere): skipped, no hop
            granted += 1
            await self._attempt(target, permit)
        return granted

    async def _acquire(self, target: RouteTarget) -> Permit | None:
        try:
            return await self.w.breakers.acquire(
                target.id,
                lease_seconds=self._lease(),
                workflow=self.workflow,
                interval_seconds=self.w.config.probe_interval_seconds,
            )
        except Exception as exc:  # fail open: call it, untracked
            self.w.bookkeeping_failed("breaker_acquire", exc, target=target.id)
            return UNTRACKED

    async def _capacity_passes(self) -> None:
        """Retry targets that were only busy, until the route's slot-wait budget is spent."""
        while self.busy and self.stop is None and self.first_busy is not None:
            waited = self.w.now() - self.first_busy
            if waited >= self.route.slot_wait_seconds:
                return
            pause = min(self.route.slot_poll_seconds, self.route.slot_wait_seconds - waited)
            cap, _ = self._cap()
            if pause >= cap:
                return
            await self.w.sleep(pause)
            if not await self._pass(list(self.busy)):
                return

    async def _fail_open(self, first: RouteTarget, *, exhaustion_emitted: bool) -> None:
        """Every target refused: one fleet-wide probe per interval to the first target."""
        if not exhaustion_emitted:
            await self.emit(
                EventType.CIRCUIT_OPEN_EXHAUSTION, counters={"targets": len(self.route.eligible)}
            )
        try:
            permit, taken = await self.w.breakers.acquire_failopen(
                first.id,
                self.workflow,
                lease_seconds=self._lease(),
                interval_seconds=self.w.config.probe_interval_seconds,
            )
        except Exception as exc:  # fail open: call it, untracked
            self.w.bookkeeping_failed("breaker_acquire", exc, target=first.id)
            permit, taken = UNTRACKED, False
        if permit is None:
            raise AllCircuitsOpen(
                f"every target of {self.workflow} is breaker-open; the fleet's probe is taken",
                workflow=self.workflow,
            )
        if taken:
            await self.emit(EventType.FAILOPEN_PROBE, target=first.id)
        await self._attempt(first, permit)

    # --- one attempt ----------------------------------------------------------------------

    async def _attempt(self, target: RouteTarget, permit: Permit) -> None:
        cap, cap_source = self._cap()
        if cap <= 0:
            await self._release(target, permit)
            self.stop = cap_source
            return
        key = f"{self.key}:{target.id}" if self.key else None
        start = self.w.now()
        guard_expired = False
        renewer = self._renewer(target, permit)
        try:
            async with asyncio.timeout(cap + self.w.config.probe_lease_grace_seconds) as guard:
                value = await self.attempt_fn(target, cap, key)
        except asyncio.CancelledError:
            await _stop(renewer)
            await asyncio.shield(self._release(target, permit))
            raise
        except Exception as exc:
            await _stop(renewer)
            error: BaseException = exc
            if isinstance(exc, TimeoutError) and guard.expired():
                guard_expired = True
                error = TaskTimeout(f"attempt on {target.id} overran its {cap:g}s cap", seconds=cap)
            await self._failed(target, permit, error, start, cap, cap_source, guard_expired)
            return
        await _stop(renewer)
        elapsed = self.w.now() - start
        transition, counted = await self._record_success(target, permit)
        await self._transition_event(target, transition)
        self.records.append(AttemptRecord(target.id, Outcome.SUCCESS, None, None, elapsed))
        raise _Succeeded(value, target, counted)

    async def _failed(
        self,
        target: RouteTarget,
        permit: Permit,
        error: BaseException,
        start: float,
        cap: float,
        cap_source: str,
        guard_expired: bool,
    ) -> None:
        elapsed = self.w.now() - start
        reason, outcome, cut, deadline_cut = judge_failure(
            error,
            elapsed=elapsed,
            cap=cap,
            cap_source=cap_source,
            guard_expired=guard_expired,
            cut_tolerance=self.w.config.cut_tolerance_seconds,
            min_slice=self.w.breakers.config.timeout_min_slice_seconds,
        )
        kind = type(error).__name__
        code = getattr(error, "code", None)
        self.records.append(AttemptRecord(target.id, outcome, reason, kind, elapsed))
        counters = {"elapsed_ms": int(elapsed * 1000), "charged": int(outcome is Outcome.FAILURE)}
        # the breaker record and the attempt's event (stream, pages, metrics) at once
        transition, _ = await asyncio.gather(
            self._record(target, permit, outcome),
            self.emit(
                EventType.ATTEMPT_DEADLINE_EXCEEDED if deadline_cut else EventType.ATTEMPT_FAILED,
                target=target.id,
                reason=reason if deadline_cut else reason or "not_retryable",
                error_kind=kind,
                error_code=code,
                counters=counters,
            ),
        )
        if deadline_cut:
            raise DeadlineExceeded(
                f"the caller's deadline cut the attempt on {target.id}", workflow=self.workflow
            ) from error
        await self._transition_event(target, transition)
        if reason is None:
            raise error  # non-retryable: at once, no charge, no fallback
        if cut and cap_source == "wall":
            self.stop = "wall"
        if outcome is Outcome.NEUTRAL:
            self.busy.append(target)
            self.last_busy_error = error
            if self.first_busy is None:
                self.first_busy = self.w.now()
            return
        self.hops += 1
        self.failed_attempts += 1
        self.last_error = error
        if retryable_reason(error) is FailureReason.PROVIDER_ERROR:
            self.crashed.add(target.id)

    async def _record_success(
        self, target: RouteTarget, permit: Permit
    ) -> tuple[Transition | None, bool]:
        """Record a success and count it in the attempt metrics, one round trip, best
        effort; returns the transition and whether the metrics counted it."""
        if permit is UNTRACKED:
            return None, False
        try:
            transition = await self.w.breakers.record(
                target.id, permit, Outcome.SUCCESS, count=True
            )
        except Exception as exc:
            self.w.bookkeeping_failed(
                "breaker_record", exc, target=target.id, outcome=Outcome.SUCCESS
            )
            return None, False
        return transition, self.w.breakers.success_counter is not None

    async def _release(self, target: RouteTarget, permit: Permit) -> None:
        await self._record(target, permit, Outcome.NOT_CHARGED)

    async def _record(
        self, target: RouteTarget, permit: Permit, outcome: Outcome
    ) -> Transition | None:
        """Charge the breaker, best effort: a store fault never changes the call's result."""
        if permit is UNTRACKED:
            return None
        try:
            return await self.w.breakers.record(target.id, permit, outcome)
        except Exception as exc:
            self.w.bookkeeping_failed("breaker_record", exc, target=target.id, outcome=outcome)
            return None

    def _renewer(self, target: RouteTarget, permit: Permit) -> asyncio.Task[None] | None:
        """Keep a probe permit's lease alive while its call runs (None for shared permits)."""
        if not permit.probe:
            return None
        return asyncio.create_task(self._renew_loop(target, permit))

    async def _renew_loop(self, target: RouteTarget, permit: Permit) -> None:
        lease = self._lease()
        while True:
            await asyncio.sleep(lease / 3)
            try:
                current = await self.w.breakers.renew(target.id, permit, lease_seconds=lease)
            except Exception as exc:  # keep trying: the store may answer again in time
                self.w.bookkeeping_failed("breaker_renew", exc, target=target.id)
                continue
            if not current:
                return  # reset, or the lease lapsed and another probe took the slot

    async def _transition_event(self, target: RouteTarget, transition: Transition | None) -> None:
        if transition in (Transition.OPENED, Transition.REOPENED):
            await self.emit(
                EventType.CIRCUIT_OPENED,
                target=target.id,
                reason=transition.value if transition else None,
            )
        elif transition is Transition.CLOSED:
            await self.emit(EventType.CIRCUIT_CLOSED, target=target.id)

    # --- budgets --------------------------------------------------------------------------

    def _cap(self) -> tuple[float, str]:
        """Seconds the next attempt may take, and which budget sets that."""
        now = self.w.now()
        wall = self.route.wall_seconds - (now - self.started)
        if self.deadline is not None and self.deadline - now <= wall:
            return self.deadline - now, "deadline"
        return wall, "wall"

    def _lease(self) -> float:
        """A probe permit's lease: short and renewed, never longer than the attempt may run."""
        attempt = max(self._cap()[0], 0.0) + self.w.config.probe_lease_grace_seconds
        return min(self.w.config.permit_lease_seconds, attempt)

    def _budget_spent(self) -> bool:
        if self.stop is not None:
            return True
        if self.hops >= self.route.max_hops:
            self.stop = "hops"
            return True
        cap, source = self._cap()
        if cap <= 0:
            self.stop = source
            return True
        return False

    def _every_target_crashed(self) -> bool:
        return all(t.id in self.crashed for t in self.route.eligible)

    async def _exhausted(self) -> Exception:
        """The error that ends a walk without success (see the module docstring)."""
        if self.last_error is not None:
            await self.emit(
                EventType.ALL_ATTEMPTS_EXHAUSTED,
                reason=retryable_reason(self.last_error),
                error_kind=type(self.last_error).__name__,
                counters={
                    "failed_attempts": self.failed_attempts,
                    "busy_attempts": len(self.records) - self.failed_attempts,
                },
            )
            assert isinstance(self.last_error, Exception)
            if retryable_reason(self.last_error) is FailureReason.PROVIDER_ERROR and (
                self.all_open or not self._every_target_crashed()
            ):
                # §4 rev 2: the run fails on provider_error only when every target of the
                # route crashed on it (a prompt that crashes every backend must retire).
                # Once every target is open, a probe that crashed again is the outage; and
                # when some target was skipped (breaker-open, probe taken, busy, out of
                # hops) the route could not serve the run: a routing error, released.
                quarantined = NoCandidates(
                    f"{self.workflow}: a target crashed and the others were breaker-open, "
                    "busy or not reached",
                    workflow=self.workflow,
                )
                quarantined.__cause__ = self.last_error
                return quarantined
            return self.last_error
        if self.stop == "deadline":
            return DeadlineExceeded(
                f"the caller's deadline ended the walk of {self.workflow}", workflow=self.workflow
            )
        if self.last_busy_error is not None:
            waited = self.w.now() - (self.first_busy or self.w.now())
            if waited >= self.route.slot_wait_seconds or self.stop == "wall":
                await self.emit(
                    EventType.CAPACITY_WAIT_TIMEOUT,
                    counters={"busy_attempts": len(self.records), "waited_ms": int(waited * 1000)},
                )
                error = CapacityWaitTimeout(
                    f"every target of {self.workflow} stayed busy for {waited:.1f}s",
                    workflow=self.workflow,
                )
                error.__cause__ = self.last_busy_error
                return error
            assert isinstance(self.last_busy_error, Exception)
            return self.last_busy_error
        return Exhausted(
            f"routed attempts of {self.workflow} exhausted ({self.stop or 'no target admitted'})",
            workflow=self.workflow,
        )


async def _stop(task: asyncio.Task[None] | None) -> None:
    """Cancel a lease renewer and wait until it has stopped.

    ``asyncio.wait`` never raises the renewer's own cancellation, so a cancellation of
    the *calling* task that arrives meanwhile still propagates (nothing is swallowed).
    """
    if task is None:
        return
    task.cancel()
    await asyncio.wait([task])
