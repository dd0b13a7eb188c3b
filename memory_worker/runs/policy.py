"""A run's life as pure decisions (§7): backoff, failure plans, release-vs-fail.

Nothing here touches Redis or the clock; ``run_store`` applies these plans
atomically and the tick calls :func:`decide` on whatever a run raised.

State machine::

    queued ──claim──▶ processing ──complete──▶ completed
       ▲                 │  │
       │   release       │  └──fail──▶ failed ──(backoff passed)──claim──▶ processing
       └─(refund attempt)┘             │
                                       └─(attempts exhausted)── retired (failed + retired)
    queued/failed of another prompt version ──claim──▶ skipped
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import StrEnum

from llm_client import (
    CapacityWaitTimeout,
    DeadlineExceeded,
    Exhausted,
    FailureReason,
    LLMError,
    NoCandidates,
    RouteUnavailable,
    retryable_reason,
)
from memory_worker.errors import EmbedderTimeout, ForgottenWrite, LeaseLost, StoreWriteRefused
from memory_worker.privacy.forget import FORGOTTEN
from memory_worker.storage.faults import is_transient_fault, store_answer

#: Reasons for which a run is released (not failed): no backend could take it.
RELEASE_REASONS = frozenset(
    {FailureReason.PROVIDER_UNAVAILABLE, FailureReason.CAPACITY_UNAVAILABLE}
)

#: Release reasons of a store fault (§7 "Store faults"): an outage, and a store that refuses
#: writes (OOM…). Neither is the run's fault: its attempt is refunded.
STORE_UNAVAILABLE = "store_unavailable"
STORE_REFUSED = "store_refused"

#: Routing errors that mean "no backend could take the run" (§7).
RELEASE_ROUTING_ERRORS: tuple[type[LLMError], ...] = (
    RouteUnavailable,
    NoCandidates,
    Exhausted,
    CapacityWaitTimeout,
)


def backoff_seconds(attempts: int, unit: float, max_units: float = 60.0) -> float:
    """``clamp(attempts² × unit, unit, max_units × unit)`` → 1, 4, 9, 16 … units."""
    return float(min(max(attempts * attempts * unit, unit), max_units * unit))


@dataclass(frozen=True, slots=True)
class FailurePlan:
    """What a failure does to a run that has spent ``attempts`` attempts."""

    retire: bool
    next_attempt_at_ms: int | None


def plan_failure(
    attempts: int, *, max_attempts: int, unit: float, max_units: float, now_ms: int
) -> FailurePlan:
    """Retire at ``max_attempts``; otherwise retry after the backoff."""
    if attempts >= max_attempts:
        return FailurePlan(retire=True, next_attempt_at_ms=None)
    delay_ms = int(backoff_seconds(attempts, unit, max_units) * 1000)
    return FailurePlan(retire=False, next_attempt_at_ms=now_ms + delay_ms)


class Verdict(StrEnum):
    RELEASE = "release"
    FAIL = "fail"
    ABANDON = "abandon"  # the lease is gone: someone else owns the run now


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    #: Failure reason for counters and the error log (``None`` = not retryable).
    reason: str | None
    #: Short code for the error log and replay selection (farm code, error type…).
    code: str


def error_code(error: BaseException) -> str:
    """A short, log-safe code: the farm's code when it sent one, else the type name."""
    if isinstance(error, LLMError) and error.code:
        return error.code
    return type(error).__name__


def decide(error: BaseException) -> Decision:
    """Release or fail a run after ``error`` (§7).

    Release when no backend could take the run: ``provider_unavailable`` or
    ``capacity_unavailable`` (typed, or an Upstream whose text says so, e.g.
    a 503 "model loading"), the routing errors NoCandidates, Exhausted,
    RouteUnavailable, CapacityWaitTimeout, and an embedding call that timed out
    (:class:`EmbedderTimeout`). Timeouts, protocol/decode errors,
    ``provider_error`` (a walk that ended on a backend crash: HTTP 500),
    deadline errors and generic errors fail the run. A store outage is never evidence
    against the work (§7 "Store faults"): a transient fault releases the run as
    ``store_unavailable``, a store that refuses writes (OOM…) as ``store_refused``, each
    with its attempt refunded; a store answer no retry heals that is not a refusal
    (corrupt data, a script's error) fails it, coded by its type.
    """
    code = error_code(error)
    if isinstance(error, ForgottenWrite):  # §14: extracted again from what remains
        return Decision(Verdict.RELEASE, FORGOTTEN, FORGOTTEN)
    if isinstance(error, LeaseLost):
        return Decision(Verdict.ABANDON, None, code)
    if isinstance(error, asyncio.CancelledError):
        return Decision(Verdict.RELEASE, "shutdown", "shutdown")
    answer = store_answer(error)
    if isinstance(answer, StoreWriteRefused):
        return Decision(Verdict.RELEASE, STORE_REFUSED, error_code(answer))
    if answer is not None:
        return Decision(Verdict.FAIL, None, error_code(answer))
    if is_transient_fault(error):
        return Decision(Verdict.RELEASE, STORE_UNAVAILABLE, code)
    if isinstance(error, RELEASE_ROUTING_ERRORS):
        return Decision(Verdict.RELEASE, _reason_name(error), code)
    if isinstance(error, EmbedderTimeout):
        return Decision(Verdict.RELEASE, str(error.reason), code)
    if isinstance(error, LLMError):
        reason = retryable_reason(error)
        if reason in RELEASE_REASONS:
            return Decision(Verdict.RELEASE, str(reason), code)
        return Decision(Verdict.FAIL, str(reason) if reason else None, code)
    return Decision(Verdict.FAIL, None, code)


@dataclass(frozen=True, slots=True)
class ReleaseOrigin:
    """Where a release came from (§15): the route and target, and what the farm said.

    ``answer`` is set only when a target's own answer is known (an attempt's error, maybe
    under the routing error that ended the walk): that is the route's last error, which the
    outage banner shows. A walk refused before any attempt (every breaker open) names its
    route and no answer, so the last farm error stays the one the farm really gave.
    """

    workflow: str | None = None
    target: str | None = None
    code: str | None = None
    answer: str | None = None


#: How deep :func:`release_origin` follows ``__cause__`` (a routing error over an attempt's).
CAUSE_DEPTH = 4


def release_origin(error: BaseException) -> ReleaseOrigin:
    """The route, target, code and farm answer of a released run's ``error`` (pure)."""
    chain: list[BaseException] = []
    cause: BaseException | None = error
    while cause is not None and len(chain) < CAUSE_DEPTH:
        chain.append(cause)
        cause = cause.__cause__
    routed = [e for e in chain if isinstance(e, LLMError) and e.workflow]
    if not routed:
        return ReleaseOrigin(code=error_code(error))
    answered = [e for e in routed if e.target]
    if not answered:
        return ReleaseOrigin(workflow=routed[0].workflow, code=error_code(routed[0]))
    farm = answered[0]
    return ReleaseOrigin(
        workflow=farm.workflow, target=farm.target, code=error_code(farm), answer=str(farm)
    )


#: The code and reason of a run whose tick outlived its budget (§7).
TASK_TIMEOUT = "task_timeout"


def outlived_budget(error: BaseException, *, deadline_passed: bool) -> bool:
    """Whether a processor's ``error`` is the tick's own budget cutting the work, so the run
    fails as :data:`TASK_TIMEOUT` (§7) rather than as the farm call it cut.

    That is the run's deadline (``DeadlineExceeded``: inside a tick the only caller
    deadline is the run's), or any other timeout that would fail the run, raised once
    that deadline had passed (``deadline_passed``). What would release the run (an
    outage, a busy farm, an embedder's own timeout) still releases it.
    """
    decision = decide(error)
    if decision.verdict is not Verdict.FAIL:
        return False
    if isinstance(error, DeadlineExceeded):
        return True
    return deadline_passed and decision.reason == FailureReason.PROVIDER_TIMEOUT


def is_outage(error: LLMError) -> bool:
    """Whether ``error`` means no backend could serve the call (release, not fail)."""
    return retryable_reason(error) in RELEASE_REASONS


def _reason_name(error: LLMError) -> str:
    reason = retryable_reason(error)
    return str(reason) if reason else type(error).__name__
