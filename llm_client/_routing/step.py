"""One routed call's walk (§6) as pure decisions on an immutable state.

:class:`WalkState` is everything a walk has learnt so far; :func:`next_step` reads it
(with the walk's :class:`WalkPlan` and the time ``now``) and names the one effect to
perform next — begin, read the breakers, acquire a permit, make an attempt, release a
permit, take the fail-open probe, pause, announce events — or the walk's end
(:class:`Done`, :class:`Stop`). The ``after_*`` functions fold an effect's result
back into the state. Nothing here awaits, reads a clock or touches Redis: the shell
(:class:`llm_client._routing.walker.Walk`) only performs the steps, the way
:mod:`llm_client._breaker.model` is the policy behind :mod:`llm_client._breaker.store`.

The pure bookkeeping between effects (skipping targets the begin script refused,
a budget that ran out, the end of a pass) happens inside :func:`next_step`, which
therefore returns the state the step's result is to be folded into.

Capacity refusals (:class:`~llm_client._gateway.model.Refusal`) spend no hop and charge
nothing: a target over ``max_in_flight`` or ``requests_per_minute`` is waited for like a
busy one (the capacity passes, within the slot-wait budget); a cooling target (its
``Retry-After``, or a busy answer that named one) or one whose day's tokens are spent
is left for the rest of the call. A walk that found nothing but such targets ends
without a fail-open probe: :class:`~llm_client._errors.CoolingDown` when only resting
targets were left, the capacity wait's ending when a capped one was waited for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from llm_client._breaker.model import Outcome, Permit
from llm_client._errors import (
    AllCircuitsOpen,
    CapacityWaitTimeout,
    CoolingDown,
    DeadlineExceeded,
    Exhausted,
    NoCandidates,
)
from llm_client._gateway.model import Refusal
from llm_client._retry.classify import retryable_reason
from llm_client._retry.reasons import FailureReason
from llm_client._routing.events import EventType
from llm_client._routing.judge import Failed, Served
from llm_client._routing.plan import AttemptRecord, Note, Routed, WalkPlan, cap, lease
from llm_client._routing.routes import RouteTarget


class Phase(StrEnum):
    """Where a walk is."""

    START = "start"  # nothing asked yet
    VIEWS = "views"  # the begin round trip failed: read the breakers the slow way
    PASS = "pass"  # trying the candidates of a pass, one by one
    FAILOPEN = "failopen"  # nothing granted: the fleet's one probe, then the busy retries
    CAPACITY = "capacity"  # between passes over targets that were only busy
    END = "end"  # decided: served, or an error to raise


@dataclass(frozen=True, slots=True)
class WalkState:
    """Everything one walk has learnt so far (immutable: every change is a new state)."""

    phase: Phase = Phase.START
    hops: int = 0
    failed_attempts: int = 0
    records: tuple[AttemptRecord, ...] = ()
    last_error: BaseException | None = None
    last_busy_error: BaseException | None = None
    first_busy: float | None = None
    #: Targets that were only busy in the current pass (retried by the next one): busy
    #: answers, and targets over a cap worth waiting for (in flight, rate).
    busy: tuple[RouteTarget, ...] = ()
    #: Targets left for the rest of the call: cooling (Retry-After) or out of tokens.
    resting: tuple[RouteTarget, ...] = ()
    #: A cap refused a target (the walk waited for capacity without a busy answer).
    capped: bool = False
    #: The budget that ended the walk ("hops", "wall", "deadline"), if one did.
    stop: str | None = None
    #: The walk began with every target breaker-open: its attempts were only probes.
    all_open: bool = False
    #: Targets that crashed on this call (``provider_error``), by id.
    crashed: frozenset[str] = frozenset()
    #: The pass in progress: its candidates, the next index, the permits granted.
    candidates: tuple[RouteTarget, ...] = ()
    index: int = 0
    granted: int = 0
    #: The begin script's answer for the first pass: candidates before ``first[0]``
    #: refused, and that one's permit (None when every candidate refused).
    first: tuple[int, Permit | None] | None = None
    #: Why the begin script refused those candidates (target id → refusal).
    begun: tuple[tuple[str, Refusal], ...] = ()
    #: A capacity pass (over busy targets) rather than the walk's first pass.
    retry_pass: bool = False
    #: A permit held and not yet spent on an attempt.
    holding: tuple[RouteTarget, Permit] | None = None
    #: Events to announce before the next effect.
    pending: tuple[Note, ...] = ()
    served: Served | None = None
    error: BaseException | None = None


# --- steps -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Announce:
    notes: tuple[Note, ...]


@dataclass(frozen=True, slots=True)
class Begin:
    """Snapshot + first permit in one round trip (:meth:`BreakerStore.begin`)."""

    targets: tuple[RouteTarget, ...]
    lease_seconds: float


@dataclass(frozen=True, slots=True)
class ReadViews:
    targets: tuple[RouteTarget, ...]


@dataclass(frozen=True, slots=True)
class Acquire:
    target: RouteTarget
    lease_seconds: float


@dataclass(frozen=True, slots=True)
class AcquireFailOpen:
    target: RouteTarget
    lease_seconds: float


@dataclass(frozen=True, slots=True)
class Attempt:
    target: RouteTarget
    permit: Permit
    cap: float
    cap_source: str


@dataclass(frozen=True, slots=True)
class Release:
    """Hand back a permit unused (recorded as not charged)."""

    target: RouteTarget
    permit: Permit


@dataclass(frozen=True, slots=True)
class Pause:
    seconds: float


@dataclass(frozen=True, slots=True)
class Done:
    routed: Routed[Any]


@dataclass(frozen=True, slots=True)
class Stop:
    """The walk ends with ``error``, after announcing ``notes``."""

    error: BaseException
    notes: tuple[Note, ...] = ()


Step = Announce | Begin | ReadViews | Acquire | AcquireFailOpen | Attempt | Release | Pause
Ending = Done | Stop


# --- budgets -----------------------------------------------------------------------------


def budget_stop(state: WalkState, plan: WalkPlan, now: float) -> str | None:
    """The budget that stops the walk now, if any (hops before time)."""
    if state.stop is not None:
        return state.stop
    if state.hops >= plan.max_hops:
        return "hops"
    seconds, source = cap(plan, now)
    return source if seconds <= 0 else None


# --- the step function -------------------------------------------------------------------


def next_step(state: WalkState, plan: WalkPlan, now: float) -> tuple[WalkState, Step | Ending]:
    """The next effect to perform (or the walk's end), and the state its result folds into.

    Pure bookkeeping that needs no effect — skipping targets the begin script refused,
    a budget running out, the end of a pass — is done here on the way.
    """
    while True:
        if state.pending:
            return state, Announce(state.pending)
        if state.served is not None:
            served = state.served
            return state, Done(Routed(served.value, served.target, state.records, served.counted))
        if state.error is not None:
            return state, Stop(state.error)
        if state.holding is not None:
            return _spend(state, plan, now)
        if state.phase is Phase.START:
            if not plan.targets:
                error = NoCandidates(
                    f"route {plan.workflow} has no enabled target", workflow=plan.workflow
                )
                return state, Stop(error, (Note(EventType.NO_CANDIDATES),))
            if budget_stop(state, plan, now) is None:
                return state, Begin(plan.targets, lease(plan, now))
            state = replace(state, phase=Phase.VIEWS)  # a budget already spent: no permit
        elif state.phase is Phase.VIEWS:
            return state, ReadViews(plan.targets)
        elif state.phase is Phase.PASS:
            stepped = _pass_step(state, plan, now)
            if not isinstance(stepped, WalkState):
                return stepped
            state = stepped
        elif state.phase is Phase.FAILOPEN:
            return state, AcquireFailOpen(failopen_target(plan), lease(plan, now))
        elif state.phase is Phase.CAPACITY:
            if state.busy and state.first_busy is None:  # a cap refused: the wait starts
                state = replace(state, first_busy=now)
            pause = _capacity_pause(state, plan, now)
            if pause is not None:
                return state, Pause(pause)
            state = replace(state, phase=Phase.END)
        else:
            return state, finish(state, plan, now)


def _spend(state: WalkState, plan: WalkPlan, now: float) -> tuple[WalkState, Step]:
    """A held permit: the attempt, or its release when no time is left for one."""
    assert state.holding is not None
    target, permit = state.holding
    seconds, source = cap(plan, now)
    if seconds <= 0:
        return replace(state, stop=source), Release(target, permit)
    return state, Attempt(target, permit, seconds, source)


def _pass_step(state: WalkState, plan: WalkPlan, now: float) -> WalkState | tuple[WalkState, Step]:
    """One move through the pass in progress: a step to perform, or the next state."""
    index, first = state.index, state.first
    if index >= len(state.candidates):
        return _pass_over(state, plan)
    target = state.candidates[index]
    taken = first is not None and index == first[0]
    stop = budget_stop(state, plan, now)
    if stop is not None:
        ended = replace(state, stop=stop, index=len(state.candidates))
        if taken and first is not None and first[1] is not None:
            return ended, Release(target, first[1])
        return ended
    if first is not None and index < first[0]:  # refused by the begin script, no hop
        return replace(refused(state, target, dict(state.begun).get(target.id)), index=index + 1)
    if taken and first is not None:
        if first[1] is None:
            return replace(state, index=index + 1)
        return replace(state, granted=state.granted + 1, holding=(target, first[1]))
    return state, Acquire(target, lease(plan, now))


def _pass_over(state: WalkState, plan: WalkPlan) -> WalkState:
    """A pass has tried every candidate: retry the busy ones, fail open, or end. A pass
    that met capacity refusals never fails open (the route is not breaker-open)."""
    if state.retry_pass:
        return replace(state, phase=Phase.CAPACITY if state.granted or state.busy else Phase.END)
    if state.granted or state.stop is not None or state.busy or state.resting:
        return replace(state, phase=Phase.CAPACITY)
    if not plan.probes:
        error = AllCircuitsOpen(
            f"no closed target of {plan.workflow} for an optional call", workflow=plan.workflow
        )
        return replace(state, error=error)
    notes = () if state.all_open else (_exhaustion(plan),)
    return replace(state, phase=Phase.FAILOPEN, pending=notes)


def _capacity_pause(state: WalkState, plan: WalkPlan, now: float) -> float | None:
    """How long to wait before retrying the targets that were only busy (None: don't)."""
    if not state.busy or state.stop is not None or state.first_busy is None:
        return None
    waited = now - state.first_busy
    if waited >= plan.slot_wait_seconds:
        return None
    pause = min(plan.slot_poll_seconds, plan.slot_wait_seconds - waited)
    return pause if pause < cap(plan, now)[0] else None


def failopen_target(plan: WalkPlan) -> RouteTarget:
    """Where the fleet's fail-open probe goes: the route's primary (first of its lowest
    tier), whatever order load sharing gave this walk."""
    return plan.primary if plan.primary is not None else plan.targets[0]


def refused(state: WalkState, target: RouteTarget, refusal: Refusal | None) -> WalkState:
    """A target refused for capacity joins the waited-for (a cap that frees up soon) or
    the resting (cooling, tokens spent); a breaker refusal changes nothing here."""
    if refusal is None or not refusal.capacity:
        return state
    if refusal.waitable:
        busy = state.busy if target in state.busy else (*state.busy, target)
        return replace(state, busy=busy, capped=True)
    resting = state.resting if target in state.resting else (*state.resting, target)
    return replace(state, resting=resting)


def _exhaustion(plan: WalkPlan) -> Note:
    return Note(EventType.CIRCUIT_OPEN_EXHAUSTION, {"counters": {"targets": len(plan.targets)}})


# --- folding results in ------------------------------------------------------------------


def announced(state: WalkState) -> WalkState:
    """The pending events went out."""
    return replace(state, pending=())


def after_order(
    state: WalkState,
    plan: WalkPlan,
    closed: Sequence[bool],
    permit: tuple[int, Permit] | None,
    *,
    begun: tuple[tuple[str, Refusal], ...] = (),
    refused_all: bool = False,
    due: Sequence[bool] = (),
) -> WalkState:
    """The breakers' verdict (``closed`` flags in route order) starts the first pass:
    open targets whose half-open probe is ``due`` first (§6: an opened target is probed
    even while a healthy peer could serve), then the closed ones, then the other open
    ones as probes (no open one for an optional call).

    ``permit``: the begin script's grant (index into the route's targets), if it ran;
    ``refused_all``: it ran and refused every candidate (``begun`` says why)."""
    kept = [t for t, flag in zip(plan.targets, closed, strict=True) if flag]
    probing = [t for t, flag in zip(plan.targets, due, strict=False) if flag and plan.probes]
    probing = [t for t in probing if t not in kept]
    ordered = probing + kept
    ordered += [t for t in plan.targets if t not in ordered and plan.probes]
    first: tuple[int, Permit | None] | None = None
    if permit is not None:
        first = (ordered.index(plan.targets[permit[0]]), permit[1])
    elif refused_all:
        first = (len(ordered), None)
    exhaustion = not kept
    return replace(
        state,
        phase=Phase.PASS,
        candidates=tuple(ordered),
        index=0,
        granted=0,
        first=first,
        begun=begun,
        busy=(),
        all_open=exhaustion,
        pending=(_exhaustion(plan),) if exhaustion else (),
    )


def after_begin(
    state: WalkState,
    plan: WalkPlan,
    closed: Sequence[bool] | None,
    index: int | None,
    permit: Permit | None,
    refusals: Sequence[Refusal | None] = (),
    due: Sequence[bool] = (),
) -> WalkState:
    """The begin round trip's answer (``closed`` None: it failed, read the views);
    ``refusals``: why each target tried before the grant was refused, in plan order;
    ``due``: the open targets whose half-open probe was due (tried first)."""
    if closed is None:
        return replace(state, phase=Phase.VIEWS)
    begun = tuple((t.id, r) for t, r in zip(plan.targets, refusals, strict=False) if r is not None)
    if index is None or permit is None:  # every candidate refused
        return after_order(state, plan, closed, None, begun=begun, refused_all=True, due=due)
    return after_order(state, plan, closed, (index, permit), begun=begun, due=due)


def after_acquire(
    state: WalkState, permit: Permit | None, refusal: Refusal | None = None
) -> WalkState:
    """An acquire's answer (None: open, its probe taken elsewhere, or ``refusal`` for
    capacity: skipped, no hop)."""
    target = state.candidates[state.index]
    if permit is None:
        return replace(refused(state, target, refusal), index=state.index + 1)
    return replace(state, granted=state.granted + 1, holding=(target, permit))


def after_failopen(
    state: WalkState, plan: WalkPlan, permit: Permit | None, taken: bool
) -> WalkState:
    """The fleet's fail-open probe: ours to spend on the first target, or refused."""
    if permit is None:
        error = AllCircuitsOpen(
            f"every target of {plan.workflow} is breaker-open; the fleet's probe is taken",
            workflow=plan.workflow,
        )
        return replace(state, error=error)
    target = failopen_target(plan)
    notes = (Note(EventType.FAILOPEN_PROBE, {"target": target.id}),) if taken else ()
    return replace(state, phase=Phase.CAPACITY, holding=(target, permit), pending=notes)


def after_release(state: WalkState) -> WalkState:
    """A permit went back unused."""
    return _next_candidate(replace(state, holding=None))


def after_pause(state: WalkState) -> WalkState:
    """The pause is over: a pass over the targets that were only busy."""
    return replace(
        state,
        phase=Phase.PASS,
        candidates=state.busy,
        index=0,
        granted=0,
        first=None,
        begun=(),
        busy=(),
        retry_pass=True,
    )


def _next_candidate(state: WalkState) -> WalkState:
    if state.phase is Phase.PASS:
        return replace(state, index=state.index + 1)
    return state


def after_attempt(
    state: WalkState, plan: WalkPlan, result: Served | Failed, now: float
) -> WalkState:
    """An attempt's result, judged and recorded, folded in (``now``: when it was)."""
    state = replace(state, holding=None)
    if isinstance(result, Served):
        record = AttemptRecord(result.target.id, Outcome.SUCCESS, None, None, result.elapsed)
        return replace(state, records=(*state.records, record), served=result)
    error, target = result.error, result.target
    record = AttemptRecord(
        target.id, result.outcome, result.reason, type(error).__name__, result.elapsed
    )
    state = replace(state, records=(*state.records, record))
    if result.deadline_cut:
        cut = DeadlineExceeded(
            f"the caller's deadline cut the attempt on {target.id}",
            workflow=plan.workflow,
        )
        return replace(state, error=_caused(cut, error))
    if result.reason is None:
        return replace(state, error=error)  # non-retryable: at once, no charge, no fallback
    if result.cut and result.cap_source == "wall":
        state = replace(state, stop="wall")
    if result.outcome is Outcome.NEUTRAL:
        first_busy = now if state.first_busy is None else state.first_busy
        state = replace(state, last_busy_error=error, first_busy=first_busy)
        if result.cool_ms > 0:  # it named a Retry-After: left for the rest of the call
            return _next_candidate(refused(state, target, Refusal.COOLING))
        return _next_candidate(replace(state, busy=(*state.busy, target)))
    crashed = state.crashed
    if retryable_reason(error) is FailureReason.PROVIDER_ERROR:
        crashed = crashed | {target.id}
    state = replace(
        state,
        hops=state.hops + 1,
        failed_attempts=state.failed_attempts + 1,
        last_error=error,
        crashed=crashed,
    )
    return _next_candidate(state)


def _caused(error: BaseException, cause: BaseException) -> BaseException:
    """``error`` as ``raise error from cause`` leaves it."""
    error.__cause__ = cause
    error.__suppress_context__ = True
    return error


# --- the ending --------------------------------------------------------------------------


def ended_busy(state: WalkState) -> bool:
    """Whether the walk's last attempt was a busy answer (capacity, or a 429 / overload)."""
    return bool(state.records) and state.records[-1].outcome is Outcome.NEUTRAL


def finish(state: WalkState, plan: WalkPlan, now: float) -> Stop:
    """The error that ends a walk without success, and what to announce first.

    A walk whose last attempt was a busy answer (:func:`ended_busy`) ends on capacity
    whatever came before it and however much budget is left: :class:`CoolingDown` when
    only resting targets were left, else :class:`CapacityWaitTimeout` — a capacity error,
    so the run is released (§6, §7); the same when only busy answers and caps came back
    and the caller's deadline stopped the walk.

    Otherwise, after failed attempts, the last attempt's error — except a
    ``provider_error`` on a route not every target of which crashed on it: §4 fails the
    run only when every target crashed (a prompt that crashes every backend must
    retire). Once every target is open, a probe that crashed again is the outage; and
    when some target was skipped (breaker-open, probe taken, busy, out of hops) the route
    could not serve the run: a routing error (:class:`NoCandidates`), released.
    """
    last = state.last_error
    busy_end = ended_busy(state)
    if last is not None and not busy_end:
        return _failed_ending(state, plan, last)
    if state.stop == "deadline" and not (busy_end or state.capped):
        return Stop(
            DeadlineExceeded(
                f"the caller's deadline ended the walk of {plan.workflow}", workflow=plan.workflow
            )
        )
    if state.busy or state.capped or (state.last_busy_error and not state.resting):
        return _busy_ending(state, plan, state.last_busy_error, now)
    if state.resting:
        error = CoolingDown(
            f"every target of {plan.workflow} left is cooling down or out of tokens "
            f"({len(state.resting)} resting)",
            workflow=plan.workflow,
        )
        if state.last_busy_error is not None:
            error.__cause__ = state.last_busy_error
        return Stop(error)
    return Stop(
        Exhausted(
            f"routed attempts of {plan.workflow} exhausted ({state.stop or 'no target admitted'})",
            workflow=plan.workflow,
        )
    )


def _failed_ending(state: WalkState, plan: WalkPlan, last: BaseException) -> Stop:
    """A walk that ended on a charged failure: its error, or :class:`NoCandidates` for a
    crash on a route not every target of which crashed (see :func:`finish`)."""
    note = Note(
        EventType.ALL_ATTEMPTS_EXHAUSTED,
        {
            "reason": retryable_reason(last),
            "error_kind": type(last).__name__,
            "counters": {
                "failed_attempts": state.failed_attempts,
                "busy_attempts": len(state.records) - state.failed_attempts,
            },
        },
    )
    every_crashed = all(t.id in state.crashed for t in plan.targets)
    if retryable_reason(last) is FailureReason.PROVIDER_ERROR and (
        state.all_open or not every_crashed
    ):
        quarantined = NoCandidates(
            f"{plan.workflow}: a target crashed and the others were breaker-open, "
            "busy or not reached",
            workflow=plan.workflow,
        )
        quarantined.__cause__ = last
        return Stop(quarantined, (note,))
    return Stop(last, (note,))


def _busy_ending(state: WalkState, plan: WalkPlan, busy: BaseException | None, now: float) -> Stop:
    """The walk ended on busy answers (or caps): the capacity wait ran out, or a budget
    (the wall, the caller's deadline, the time left for one more poll) cut it short.
    Either way a capacity error chained to the last busy answer: the run is released."""
    waited = now - (state.first_busy if state.first_busy is not None else now)
    busy_attempts = len(state.records) - state.failed_attempts
    fields: dict[str, Any] = {
        "counters": {"busy_attempts": busy_attempts, "waited_ms": int(waited * 1000)}
    }
    why = ""
    if waited < plan.slot_wait_seconds:
        why = f" (the walk's {state.stop or 'budget'} ended the wait)"
        if state.stop != "wall" and busy is not None:
            # the caller's deadline, or too little time for one more poll: the run is
            # released and nobody paged (a farm busy for the whole wait or wall pages)
            fields |= {"severity": "info", "admin_actionable": False}
    error = CapacityWaitTimeout(
        f"every target of {plan.workflow} stayed busy for {waited:.1f}s{why}",
        workflow=plan.workflow,
    )
    note = Note(EventType.CAPACITY_WAIT_TIMEOUT, fields)
    error.__cause__ = busy
    return Stop(error, (note,))
