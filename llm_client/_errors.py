"""The whole ``llm_client`` error tree, in one place (httpx-style).

Foreign exceptions (httpx, JSON, base64) are mapped onto this tree at a single
edge (``llm_client._edge``); nothing above that edge catches foreign types.
Callers branch on these types; only the classifier (``llm_client._retry.classify``)
ever reads message text.

::

    LLMError                         base of everything raised by llm_client
    ├── Transport                    connection refused, DNS failure, reset, local timeout
    │   └── RequestTimeout           one HTTP round trip exceeded the request budget
    ├── BackendUnavailable           the farm could not reach the backend (UPSTREAM_ERROR, …)
    │   ├── JobLost                  the farm no longer knows a job it issued (poll → 404)
    │   └── LocalModelUnavailable    a local target's model cannot load (extra missing, …)
    ├── Upstream                     the backend or the farm failed the job / answered >= 400
    ├── CapacityUnavailable          submit answered 429/503 "no slots" / "capacity"
    │   └── CapacityWaitExpired      still no capacity when the capacity-wait budget ran out
    ├── Timeout                      base of budget expiries (``.budget`` names which)
    │   ├── TaskTimeout              the job did not finish within the task budget
    │   ├── RequestTimeout           (also a Transport, see above)
    │   └── CapacityWaitExpired      (also a CapacityUnavailable, see above)
    ├── ProtocolError                the farm answered something we cannot use
    │   ├── EmptyResponse            succeeded job / 2xx answer without a body
    │   ├── DecodeError              undecodable envelope, base64, JSON or model output
    │   └── UnknownStatus            a job state outside the known vocabulary
    ├── LocalEngineError             a local target's engine failed a call (provider_error)
    ├── RequestError                 we could not build the request (caller bug; never retried)
    ├── RoutesError                  the routes configuration is invalid (every problem listed)
    └── RoutingError                 the routed walker could not serve the call
        ├── RouteUnavailable         no route configured for the workflow
        ├── NoCandidates             the route has no eligible target
        │   └── AllCircuitsOpen      every target is breaker-open and no probe permit is free
        ├── Exhausted                hops or wall budget spent without an attempt error to return
        ├── DeadlineExceeded         the caller's deadline cut the walk
        └── CapacityWaitTimeout      the walk ended on busy answers (slot wait or budget spent)
            └── CoolingDown          every target left is cooling (Retry-After) or out of tokens

Every class has a ``reason`` the retry classifier trusts (``typed_reason``);
``Upstream`` has none of its own, so its text goes through the phrase rules.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from llm_client._retry.reasons import FailureReason

Budget = Literal["request", "task", "capacity_wait"]


class LLMError(Exception):
    """Base of every error raised by ``llm_client``."""

    #: Whether the class's ``reason`` is authoritative for the classifier.
    typed: ClassVar[bool] = True
    #: The classifier's answer for this type (None = not retryable), if ``typed``.
    reason: ClassVar[FailureReason | None] = None

    #: The route (workflow) and the target an attempt's error came from: the routed walker
    #: notes them (:meth:`note_origin`) on every attempt's error; None outside a walk.
    workflow: str | None = None
    target: str | None = None

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: A short machine code (farm error code, HTTP status, …) safe to log.
        self.code = code

    def note_origin(self, workflow: str, target: str | None) -> None:
        """Where the error came from (what is already known is kept)."""
        if self.workflow is None:
            self.workflow = workflow
        if self.target is None:
            self.target = target

    def __str__(self) -> str:
        return self.message

    @property
    def kind(self) -> str:
        """Stable type name for logs, metrics and error logs."""
        return type(self).__name__


class Transport(LLMError):
    """The farm could not be reached: connection refused, DNS error, reset, local timeout."""

    reason = FailureReason.PROVIDER_UNAVAILABLE


class BackendUnavailable(LLMError):
    """The farm answered, but reports it never reached the backend (UPSTREAM_ERROR, …)."""

    reason = FailureReason.PROVIDER_UNAVAILABLE


class JobLost(BackendUnavailable):
    """The farm answered 404 to a poll of a job it had issued (a restart, a replica without
    the job): the farm's loss, so the target is unavailable — charged, failed over, and the
    run released, never failed (§3). The client resubmits once before raising it."""


class LocalModelUnavailable(BackendUnavailable):
    """A local target's model cannot be loaded (the ``local-embed`` extra is missing, …)."""


class Upstream(LLMError):
    """The backend (or the farm on its behalf) failed the job; classified by its text."""

    typed = False

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, code=code)
        #: Upstream HTTP status, when the failure came with one.
        self.status_code = status_code
        #: Seconds the provider asked us to wait (``Retry-After``), when it said so.
        self.retry_after = retry_after


class CapacityUnavailable(LLMError):
    """Submit answered 429/503 saying no slot or capacity is free."""

    reason = FailureReason.CAPACITY_UNAVAILABLE

    def __init__(
        self, message: str, *, code: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, code=code)
        #: Seconds the farm asked us to wait (``Retry-After``), when it said so: the walker
        #: cools the target that long, fleet-wide (§3).
        self.retry_after = retry_after


class Timeout(LLMError):
    """A budget expired; ``budget`` is one of ``request``, ``task``, ``capacity_wait``."""

    reason = FailureReason.PROVIDER_TIMEOUT
    budget: Budget = "task"

    def __init__(self, message: str, *, budget: Budget, seconds: float, code: str | None = None):
        super().__init__(message, code=code or f"{budget}_timeout")
        self.budget = budget
        #: The budget that expired, in seconds.
        self.seconds = seconds


class TaskTimeout(Timeout):
    """The job did not finish within the task budget (re-anchored at RUNNING)."""

    def __init__(self, message: str, *, seconds: float) -> None:
        super().__init__(message, budget="task", seconds=seconds)


class RequestTimeout(Transport, Timeout):
    """One HTTP round trip exceeded the request budget (a local timeout: Transport)."""

    reason = FailureReason.PROVIDER_UNAVAILABLE

    def __init__(self, message: str, *, seconds: float) -> None:
        Timeout.__init__(self, message, budget="request", seconds=seconds)


class CapacityWaitExpired(CapacityUnavailable, Timeout):
    """The capacity-wait budget ran out while every submit said 'no slots'."""

    reason = FailureReason.CAPACITY_UNAVAILABLE

    def __init__(self, message: str, *, seconds: float) -> None:
        Timeout.__init__(self, message, budget="capacity_wait", seconds=seconds)
        self.retry_after = None


class ProtocolError(LLMError):
    """The farm answered something we cannot use."""

    reason = FailureReason.PROVIDER_PROTOCOL_ERROR


class EmptyResponse(ProtocolError):
    """A succeeded job or a 2xx answer carried no body."""


class DecodeError(ProtocolError):
    """An envelope, base64 body, JSON payload or model output could not be decoded."""


class UnknownStatus(ProtocolError):
    """The job reported a state outside the known vocabulary and no usable response."""


class LocalEngineError(LLMError):
    """A local target's engine was reached and failed the call (charged, failed over)."""

    reason = FailureReason.PROVIDER_ERROR


class RequestError(LLMError):
    """The request could not be built (a caller bug); never retried."""

    reason: ClassVar[FailureReason | None] = None


class RoutingError(LLMError):
    """The routed walker could not serve the call."""

    reason: ClassVar[FailureReason | None] = None

    def __init__(self, message: str, *, workflow: str, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.workflow = workflow


class RouteUnavailable(RoutingError):
    """No route is configured for the workflow."""

    reason = FailureReason.PROVIDER_UNAVAILABLE


class NoCandidates(RoutingError):
    """The route has no eligible target."""

    reason = FailureReason.PROVIDER_UNAVAILABLE


class AllCircuitsOpen(NoCandidates):
    """Every target of the route is breaker-open and the fleet's probe permit is taken."""


class Exhausted(RoutingError):
    """Hops or wall budget ran out before any attempt produced an error to return."""

    reason = FailureReason.PROVIDER_UNAVAILABLE


class DeadlineExceeded(RoutingError):
    """The caller's deadline cut the walk (or the attempt in flight)."""

    reason = FailureReason.PROVIDER_TIMEOUT


class CapacityWaitTimeout(RoutingError):
    """The walk ended on busy answers: every target stayed busy for the whole slot-wait
    budget, or a budget (the wall, the caller's deadline) ended the wait first — a capacity
    answer whatever came before it, so the run is released (§6, §7)."""

    reason = FailureReason.CAPACITY_UNAVAILABLE


class RoutesError(LLMError, ValueError):
    """The routes configuration is invalid; ``problems`` lists every finding."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(f"invalid routes in {source}: " + "; ".join(problems), code="routes")


class CoolingDown(CapacityWaitTimeout):
    """Every target left was cooling down after a ``Retry-After`` (or had spent its
    ``tokens_per_day``): the walk ended at once, without waiting — a capacity answer, so
    the run is released (§3, §6)."""
