"""What one routed call's walk (§6) starts from and hands back, and its budgets.

:class:`WalkPlan` is what a walk knows before it starts (route targets and budgets,
clock origin, the caller's deadline); :class:`Routed` and :class:`AttemptRecord` are
what it returns; :class:`Note` is an event it asks the shell to announce. :func:`cap`
and :func:`lease` are its budgets at an instant. Pure data and arithmetic: the
decisions are in :mod:`llm_client._routing.step`, the effects in
:class:`llm_client._routing.walker.Walk`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from llm_client._breaker.model import Outcome, Permit
from llm_client._gateway.model import GatewayConfig
from llm_client._retry.reasons import FailureReason
from llm_client._routing.routes import RouteTarget

T = TypeVar("T")

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
    #: Cooling, caps, load sharing and slow nodes (``MEMORY_RETRY_AFTER_MAX_SECONDS``,
    #: ``MEMORY_ROUTING_*``).
    gateway: GatewayConfig = field(default_factory=GatewayConfig)


class WalkObserver(Protocol):
    """Where a walker reports durations (memory-worker's per-process histograms). Called
    synchronously, never awaited; a failing observer never fails a call."""

    def attempt_finished(self, workflow: str, target: str, outcome: str, seconds: float) -> None:
        """One attempt on ``target`` ended with ``outcome`` after ``seconds``."""

    def capacity_waited(self, workflow: str, seconds: float) -> None:
        """A walk waited ``seconds`` for capacity (from the first busy answer or cap)."""


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


@dataclass(frozen=True, slots=True)
class WalkPlan:
    """What a walk knows before it starts: its route's targets and budgets, its clock
    origin, the caller's deadline and whether it may probe."""

    workflow: str
    #: The route's enabled targets, in the order this walk prefers them (tiers, load
    #: sharing, slow nodes last in their tier: ``llm_client._gateway.balance``).
    targets: tuple[RouteTarget, ...]
    max_hops: int
    wall_seconds: float
    slot_wait_seconds: float
    slot_poll_seconds: float
    started: float
    deadline: float | None = None
    probes: bool = True
    config: WalkerConfig = WalkerConfig()
    #: The route's primary (its first target, tier by tier): the fail-open probe's target.
    primary: RouteTarget | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """An event to announce: its type and fields (the shell adds workflow and context)."""

    type: str
    fields: Mapping[str, Any] = field(default_factory=dict)


def cap(plan: WalkPlan, now: float) -> tuple[float, str]:
    """Seconds the next attempt may take, and which budget sets that."""
    wall = plan.wall_seconds - (now - plan.started)
    if plan.deadline is not None and plan.deadline - now <= wall:
        return plan.deadline - now, "deadline"
    return wall, "wall"


def lease(plan: WalkPlan, now: float) -> float:
    """A probe permit's lease: short and renewed, never longer than the attempt may run."""
    attempt = max(cap(plan, now)[0], 0.0) + plan.config.probe_lease_grace_seconds
    return min(plan.config.permit_lease_seconds, attempt)
