"""How one attempt's result counts and is announced (§4, §5), decided on plain data.

:class:`Served` and :class:`Failed` are an attempt's results; :func:`judge_failure`
turns a failed attempt into its reason and breaker outcome; :func:`attempt_note` and
:func:`transition_note` are the events the shell (:class:`llm_client._routing.walker.Walk`)
announces with the breaker record. Pure: no clock, no Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llm_client._breaker.model import Outcome, Transition, classify
from llm_client._errors import Timeout
from llm_client._gateway.model import cooling_ms
from llm_client._retry.classify import retryable_reason
from llm_client._retry.reasons import FailureReason
from llm_client._routing.events import EventType
from llm_client._routing.plan import Note, WalkPlan
from llm_client._routing.routes import RouteTarget

#: The reasons of a busy answer: neutral for the breakers (§5), and a walk that ends on
#: one releases the run (§6, §7).
BUSY_REASONS = frozenset({FailureReason.CAPACITY_UNAVAILABLE, FailureReason.PROVIDER_OVERLOADED})


@dataclass(frozen=True, slots=True)
class Served:
    """An attempt that succeeded (``counted``: its success reached the attempt metrics)."""

    target: RouteTarget
    value: Any
    counted: bool
    elapsed: float


@dataclass(frozen=True, slots=True)
class Failed:
    """An attempt that failed, judged (:func:`judge_attempt`)."""

    target: RouteTarget
    error: BaseException
    reason: FailureReason | None
    outcome: Outcome
    cut: bool
    deadline_cut: bool
    cap_source: str
    elapsed: float
    #: How long the answer cools the target, fleet-wide (its Retry-After, capped; ms).
    cool_ms: int = 0


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
    the cap was the caller's deadline the attempt is not the target's fault. A busy
    answer stays busy however long it took (:data:`BUSY_REASONS`: a capacity wait the
    cap ended is still the farm saying "no slot", never a timeout charged to the target).
    """
    reason = retryable_reason(error)
    timeoutish = reason not in BUSY_REASONS and (
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


def judge_attempt(
    plan: WalkPlan,
    target: RouteTarget,
    error: BaseException,
    *,
    cap: float,
    cap_source: str,
    elapsed: float,
    guard_expired: bool,
    min_slice: float,
) -> Failed:
    """:func:`judge_failure` of an attempt on ``target`` that had ``cap`` seconds, as a
    :class:`Failed`."""
    reason, outcome, cut, deadline_cut = judge_failure(
        error,
        elapsed=elapsed,
        cap=cap,
        cap_source=cap_source,
        guard_expired=guard_expired,
        cut_tolerance=plan.config.cut_tolerance_seconds,
        min_slice=min_slice,
    )
    cool = 0
    if outcome is Outcome.NEUTRAL:  # a capacity answer or a 429 that named its pause (§3)
        cool = cooling_ms(getattr(error, "retry_after", None), plan.config.gateway)
    return Failed(target, error, reason, outcome, cut, deadline_cut, cap_source, elapsed, cool)


def attempt_note(failed: Failed) -> Note:
    """The event of a failed attempt (the breaker record goes out with it)."""
    counters = {
        "elapsed_ms": int(failed.elapsed * 1000),
        "charged": int(failed.outcome is Outcome.FAILURE),
    }
    reason = failed.reason if failed.deadline_cut else failed.reason or "not_retryable"
    event = EventType.ATTEMPT_DEADLINE_EXCEEDED if failed.deadline_cut else EventType.ATTEMPT_FAILED
    fields = {
        "target": failed.target.id,
        "reason": reason,
        "error_kind": type(failed.error).__name__,
        "error_code": getattr(failed.error, "code", None),
        "counters": counters,
    }
    return Note(event, fields)


def cooling_note(failed: Failed) -> Note | None:
    """The event of an answer that cooled its target (None: it named no pause)."""
    if failed.cool_ms <= 0:
        return None
    return Note(
        EventType.TARGET_COOLING,
        {
            "target": failed.target.id,
            "reason": failed.reason,
            "error_kind": type(failed.error).__name__,
            "error_code": getattr(failed.error, "code", None),
            "counters": {"cool_ms": failed.cool_ms},
        },
    )


def transition_note(target: RouteTarget, transition: Transition | None) -> Note | None:
    """The event a breaker transition caused by an attempt is announced with, if any."""
    if transition in (Transition.OPENED, Transition.REOPENED):
        reason = transition.value if transition else None
        return Note(EventType.CIRCUIT_OPENED, {"target": target.id, "reason": reason})
    if transition is Transition.CLOSED:
        return Note(EventType.CIRCUIT_CLOSED, {"target": target.id})
    return None
