"""Per-process latency histograms (§11): farm calls, capacity waits, runs, claims.

The fleet's state is sampled from Redis (:mod:`memory_worker.ops.metrics`); durations are
what *this process* measured, so they are Prometheus histograms kept in memory and served
by the process that measured them (``memory-worker run --serve``). Summing the series of
every worker's endpoint gives the fleet's. Labels are identifiers only:

- ``memory_worker_farm_call_seconds{workflow, target, outcome}`` — one routed attempt
  (outcome ``success``, ``failure``, ``neutral``, ``not_charged`` or ``cancelled``);
- ``memory_worker_capacity_wait_seconds{workflow}`` — how long a routed call waited for
  capacity (busy answers, caps), from the first busy answer to the end of its walk;
- ``memory_worker_run_seconds{outcome}`` — a claimed run, from its claim to its settlement
  (``completed``, ``deferred``, ``failed``, ``abandoned``, ``store_error``);
- ``memory_worker_claim_seconds`` — the claim's round trip (the gate's read excluded).

The buckets are part of each metric's definition (changing them breaks dashboards and
the recording rules), so they are constants here, not settings. The fleet-wide view of
a target's latency — the one slow-node detection reads, and the console shows — lives in
Redis with its breaker (``llm_client.TargetStatus``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from prometheus_client import Histogram
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from llm_client import WalkObserver

NS = "memory_worker"

FARM_CALL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)
CAPACITY_WAIT_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
RUN_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900)
CLAIM_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)


class LatencyMetrics(Collector):
    """This process's histograms; a walker observer, and a collector for its endpoint."""

    def __init__(self) -> None:
        self.farm_call = Histogram(
            f"{NS}_farm_call_seconds",
            "Routed farm attempts by workflow, target and outcome (this process).",
            ["workflow", "target", "outcome"],
            buckets=FARM_CALL_BUCKETS,
            registry=None,
        )
        self.capacity_wait = Histogram(
            f"{NS}_capacity_wait_seconds",
            "Time a routed call waited for capacity (busy answers, caps), by workflow.",
            ["workflow"],
            buckets=CAPACITY_WAIT_BUCKETS,
            registry=None,
        )
        self.run = Histogram(
            f"{NS}_run_seconds",
            "Claimed runs from claim to settlement, by outcome (this process).",
            ["outcome"],
            buckets=RUN_BUCKETS,
            registry=None,
        )
        self.claim = Histogram(
            f"{NS}_claim_seconds",
            "Round trip of a run claim (this process).",
            buckets=CLAIM_BUCKETS,
            registry=None,
        )

    # --- the walker's observer --------------------------------------------------------

    def attempt_finished(self, workflow: str, target: str, outcome: str, seconds: float) -> None:
        self.farm_call.labels(workflow, target, outcome).observe(max(seconds, 0.0))

    def capacity_waited(self, workflow: str, seconds: float) -> None:
        self.capacity_wait.labels(workflow).observe(max(seconds, 0.0))

    # --- the pipeline -----------------------------------------------------------------

    def run_settled(self, outcome: str, seconds: float) -> None:
        self.run.labels(outcome).observe(max(seconds, 0.0))

    def claimed(self, seconds: float) -> None:
        self.claim.observe(max(seconds, 0.0))

    # --- Collector --------------------------------------------------------------------

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        for histogram in (self.farm_call, self.capacity_wait, self.run, self.claim):
            yield from histogram.collect()


_: type[WalkObserver] = LatencyMetrics  # structural check: it is a walk observer


@lru_cache(maxsize=1)
def process_latency() -> LatencyMetrics:
    """This process's histograms (one set per process, shared by its walker and ticks)."""
    return LatencyMetrics()
