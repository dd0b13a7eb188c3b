"""This worker process's own series (§11), served by ``memory-worker run --serve``.

Who exports what (docs/runbook.md, "Who exports which series"):

- **fleet series** — runs, counters, ticks, breakers, routes, pages, the stores' health —
  are read from Redis and describe the whole fleet: ``memory-worker serve`` alone exports
  them (:mod:`memory_worker.ops.metrics`), so each is counted once;
- **process series** — this module — are what one worker process measured itself: its
  slots, and how long its ticks, runs and claim waits took. Each carries
  ``worker="<host>"``, or ``"<host>/<slot>"`` with ``MEMORY_WORKER_SLOT`` (:func:`worker_identity`):
  a name that survives restarts, so a restarted worker continues its series instead of
  starting new ones (Prometheus' ``instance`` tells endpoints apart); summing over every
  ``run --serve`` endpoint gives the fleet's totals (no series is in two places);
- ``memory_worker_build_info{version, prompt_version}`` (:func:`build_info`) is on both
  kinds of endpoint: one series per process, value 1.

Histograms (buckets are part of each metric's meaning, so they are constants, not
settings):

- ``memory_worker_tick_duration_seconds{worker, outcome}`` — one tick from its start to
  its end (outcome: completed, failed, idle, deferred, shutdown, abandoned, store_error);
- ``memory_worker_run_duration_seconds{worker, outcome}`` — a claimed run from its claim
  to its settlement (completed, failed, deferred, abandoned, store_error, shutdown);
- ``memory_worker_claim_wait_seconds{worker}`` — how long a run had been claimable when
  this worker claimed it: since it was queued or released, since its retry fell due, or
  since its lease expired;
- ``memory_worker_claim_seconds{worker}`` — the claim's own round trip (the gate's read
  excluded);
- ``memory_worker_farm_call_seconds{worker, workflow, target, outcome}`` — one routed
  attempt (outcome ``success``, ``failure``, ``neutral``, ``not_charged`` or
  ``cancelled``); this object is the walker's observer;
- ``memory_worker_capacity_wait_seconds{worker, workflow}`` — how long a routed call
  waited for capacity (busy answers, caps), from the first busy answer to the end of its
  walk.

And one gauge: ``memory_worker_redis_writes_refused{worker, store, node}`` — 1 while this
worker owes a release to a run whose settlement the store refused (§7: an ACL's ``NOPERM``
on a key or command the settlement needs, which the stores' write probe cannot see; and
``OOM``, ``MISCONF``, ``NOREPLICAS``); ``serve``'s gauge of the same name is the probe's.

The fleet-wide view of a target's latency — the one slow-node detection reads and the
console shows — lives in Redis with its breaker (``llm_client.TargetStatus``).

Every label value is known up front, so every series exists at 0 from the start.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Iterator
from functools import lru_cache

from prometheus_client import Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from llm_client import WalkObserver
from memory_worker.pipeline.ticks import TickOutcome
from memory_worker.settings import Settings
from memory_worker.version import __version__

NS = "memory_worker"
#: The label every process series carries.
PROCESS_LABEL = "worker"

TICK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600)
RUN_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900, 3600)
CLAIM_WAIT_BUCKETS = (0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 86400)
CLAIM_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)
FARM_CALL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)
CAPACITY_WAIT_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

#: How a claimed run's processing ended (the tick outcomes a claimed run can have).
RUN_OUTCOMES = tuple(o.value for o in TickOutcome if o is not TickOutcome.IDLE)


def worker_identity(host: str, slot: str | None) -> str:
    """The worker's identity across restarts: its host, and its slot on that host when set
    (``MEMORY_WORKER_SLOT``). The pinned restart guard keys on it, the process series carry it."""
    return f"{host}/{slot}" if slot else host


def process_name(slot: str | None = None) -> str:
    """This process as its series name it: :func:`worker_identity` of this host — never the
    process id, which every restart changes."""
    return worker_identity(socket.gethostname(), slot)


class WorkerMetrics(Collector):
    """One worker process's slots and durations; the walker's observer, and a collector for
    its endpoint."""

    def __init__(self, worker: str | None = None) -> None:
        self.worker = worker or process_name()
        labels = [PROCESS_LABEL]
        self.slots = Gauge(
            f"{NS}_worker_slots", "Ticks this worker runs at once.", labels, registry=None
        )
        self.busy = Gauge(
            f"{NS}_worker_slots_busy", "Ticks this worker runs now.", labels, registry=None
        )
        self.tick = Histogram(
            f"{NS}_tick_duration_seconds",
            "Ticks of this worker from start to end, by outcome.",
            [*labels, "outcome"],
            buckets=TICK_BUCKETS,
            registry=None,
        )
        self.run = Histogram(
            f"{NS}_run_duration_seconds",
            "Runs this worker claimed, from claim to settlement, by outcome.",
            [*labels, "outcome"],
            buckets=RUN_BUCKETS,
            registry=None,
        )
        self.claim_wait = Histogram(
            f"{NS}_claim_wait_seconds",
            "How long a run had been claimable (queued, released, due, lease expired) when "
            "this worker claimed it.",
            labels,
            buckets=CLAIM_WAIT_BUCKETS,
            registry=None,
        )
        self.claim = Histogram(
            f"{NS}_claim_seconds",
            "Round trip of this worker's run claims.",
            labels,
            buckets=CLAIM_BUCKETS,
            registry=None,
        )
        self.farm_call = Histogram(
            f"{NS}_farm_call_seconds",
            "Routed farm attempts of this worker by workflow, target and outcome.",
            [*labels, "workflow", "target", "outcome"],
            buckets=FARM_CALL_BUCKETS,
            registry=None,
        )
        self.capacity_wait = Histogram(
            f"{NS}_capacity_wait_seconds",
            "Time a routed call of this worker waited for capacity (busy answers, caps).",
            [*labels, "workflow"],
            buckets=CAPACITY_WAIT_BUCKETS,
            registry=None,
        )
        self.writes_refused = Gauge(
            f"{NS}_redis_writes_refused",
            "1 while this worker owes a release to a run whose settlement the store refused "
            "(OOM, MISCONF, NOREPLICAS, NOPERM): the store's fault, never the run's.",
            [*labels, "store", "node"],
            registry=None,
        )
        self.claim.labels(self.worker)
        for outcome in TickOutcome:  # every series at 0 from the start
            self.tick.labels(self.worker, outcome.value)
        for run_outcome in RUN_OUTCOMES:
            self.run.labels(self.worker, run_outcome)
        self.claim_wait.labels(self.worker)
        self.slots.labels(self.worker)
        self.busy.labels(self.worker)

    def set_slots(self, slots: int) -> None:
        self.slots.labels(self.worker).set(slots)

    def set_writes_refused(self, store: str, node: str, *, refused: bool) -> None:
        """Whether this worker owes a release the store refused on ``store``'s ``node``."""
        self.writes_refused.labels(self.worker, store, node).set(int(refused))

    def tick_started(self) -> None:
        self.busy.labels(self.worker).inc()

    def tick_ended(self, outcome: str, seconds: float) -> None:
        self.busy.labels(self.worker).dec()
        self.tick.labels(self.worker, outcome).observe(max(seconds, 0.0))

    def run_settled(self, outcome: str, seconds: float) -> None:
        self.run.labels(self.worker, outcome).observe(max(seconds, 0.0))

    def claimed(self, waited_seconds: float) -> None:
        self.claim_wait.labels(self.worker).observe(max(waited_seconds, 0.0))

    def claim_answered(self, seconds: float) -> None:
        self.claim.labels(self.worker).observe(max(seconds, 0.0))

    # --- the walker's observer (llm_client.WalkObserver) ------------------------------------

    def attempt_finished(self, workflow: str, target: str, outcome: str, seconds: float) -> None:
        self.farm_call.labels(self.worker, workflow, target, outcome).observe(max(seconds, 0.0))

    def capacity_waited(self, workflow: str, seconds: float) -> None:
        self.capacity_wait.labels(self.worker, workflow).observe(max(seconds, 0.0))

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        gauges = (self.slots, self.busy, self.writes_refused)
        histograms = (self.tick, self.run, self.claim_wait, self.claim)
        for metric in (*gauges, *histograms, self.farm_call, self.capacity_wait):
            for family in metric.collect():
                # no ``…_created`` gauges: a series' start time no alert or dashboard reads
                family.samples = [s for s in family.samples if not s.name.endswith("_created")]
                yield family


_: type[WalkObserver] = WorkerMetrics  # structural check: it is a walk observer


@lru_cache(maxsize=1)
def process_metrics(slot: str | None = None) -> WorkerMetrics:
    """This process's series (one set per process, whatever number of workers it starts),
    named by ``slot`` (``MEMORY_WORKER_SLOT``) on this host."""
    return WorkerMetrics(process_name(slot))


def build_info(settings: Settings) -> GaugeMetricFamily:
    """``memory_worker_build_info{version, prompt_version} 1``: what this process runs."""
    family = GaugeMetricFamily(
        f"{NS}_build_info",
        "The build this process runs: its version and prompt version (value 1).",
        labels=["version", "prompt_version"],
    )
    family.add_metric([__version__, str(settings.prompt_version)], 1)
    return family


class BuildInfoCollector(Collector):
    """:func:`build_info` on a registry."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        yield build_info(self.settings)
