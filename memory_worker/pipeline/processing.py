"""What a tick does with a claimed run, behind one small interface.

``RunProcessor`` turns a claimed run into a :class:`ProcessResult` or raises;
the tick decides release vs fail from the exception's type (``runs.decide``),
except for store faults: a Redis error (``RedisError``/``StoreError``, e.g. the
card write refused by an OOM Redis) is never evidence against the work, so the
run is released with its attempt refunded (§7). A processor must finish
before its ``deadline``; the tick enforces the budget itself and fails a run
whose processor overruns it as ``task_timeout``.
The production processor is ``consolidation.routed.ConsolidationProcessor``
(:mod:`memory_worker.consolidation.consolidate` behind the routed walker); tests plug in
their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from memory_worker.models import RunRequest
from memory_worker.pipeline.ticks import TickOutcome
from memory_worker.runs import ClaimedRun


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """Counts stored on the completed run, and continuation runs to enqueue first."""

    summary: dict[str, Any]
    continuations: list[RunRequest] = field(default_factory=list)


class RunProcessor(Protocol):
    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        """Process ``run`` before ``deadline`` (``time.monotonic()`` seconds)."""
        ...


class RouteGate(Protocol):
    async def blocked(self) -> bool:
        """True when a route the pipeline needs is entirely breaker-open right now."""
        ...

    def tick_ended(self, outcome: TickOutcome) -> None:
        """A tick of this process ended so (a gate that reuses answers learns from it)."""
        ...
