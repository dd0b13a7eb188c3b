"""Prometheus metrics (§11), sampled from Redis behind a cache.

The fleet's state lives in Redis, so every number here is read from Redis:
runs by status, the oldest queued run and the oldest lease, the monotonic
counters hash (released / failed / retired by reason, …), tick counts, the
pipeline's outage deferral, breaker states, routed attempts and admin pages.
The stores' own health (``INFO`` of the queue's server and of each
card node: memory, evictions, persistence, replication…) is sampled the same way by
:mod:`memory_worker.storage.health`.

Scrapes never hit Redis directly. A :class:`~memory_worker.storage.sampling.Sampler` reads one
:class:`Sample` at most every ``MEMORY_METRICS_CACHE_SECONDS``, and its
clock advances on **every** attempt, failed or not, so a struggling Redis
sees one read per interval however often Prometheus scrapes. A failed sample
keeps the last good one (the scrape still answers 200) and counts
``memory_worker_sample_errors_total``; before the first good sample the
gauges are absent rather than zero (a zero would read as "all is well").

:class:`MemoryCollector` turns the last sample into metric families; it is
registered on a private ``CollectorRegistry`` (see ``server.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from redis.asyncio import Redis

from llm_client import (
    BreakerStore,
    BreakerView,
    Circuit,
    OutlierStore,
    Standing,
    Tally,
    as_text,
    parse_attempts,
)
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.models import RunStatus
from memory_worker.ops.fleet_counters import attempt_metrics, counter_metrics, page_metrics
from memory_worker.ops.outage_metrics import incident_metrics, route_open_metrics
from memory_worker.pipeline.ticks import TickCounts
from memory_worker.settings import Settings
from memory_worker.storage.sampling import Sampler
from memory_worker.upkeep.reembed import parse_progress
from memory_worker.wiring import breaker_store, event_log, outlier_store, run_store, tick_queue

log = get_logger(__name__)

NS = "memory_worker"

#: Breaker state as a number: alert on ``max(memory_worker_breaker_state) == 2``.
BREAKER_STATE = {Circuit.CLOSED: 0, Circuit.HALF_OPEN: 1, Circuit.OPEN: 2}

# --- what one sample holds -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    """Everything one scrape reports, read from Redis at ``at`` (unix seconds)."""

    at: float
    runs: Mapping[str, int]
    oldest_queued_age_s: float | None
    oldest_processing_age_s: float | None
    lease_overdue_s: float
    leases_expired: int
    counters: Mapping[str, int]
    ticks: TickCounts
    deferred_since_s: float | None
    workers_live: int
    breakers: Sequence[BreakerView] = ()
    #: Each routed target's error window and standing (outlier ejection, §5).
    outliers: Sequence[Tally] = ()
    attempts: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    admin_pages: Mapping[str, int] = field(default_factory=dict)
    admin_outbox: int = 0
    #: Model switches in progress (§16): chat id → (cards re-embedded, live cards at start).
    reembed: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: The configured routes: workflow → its eligible targets (``route_open`` reads them).
    routes: Mapping[str, Sequence[str]] = field(default_factory=dict)
    #: ``MEMORY_MAX_QUEUED_RUNS`` of the process that sampled (the queue cap alerts compare to).
    queue_cap: int = 0
    #: Since when the fleet's paged incident is open (unix seconds; None: none is, §9).
    incident_since_s: float | None = None


def route_map(settings: Settings) -> dict[str, list[str]]:
    """Each configured route's eligible target ids, by workflow (best effort: {} when the
    routes file is unusable, as for :func:`route_target_ids`)."""
    from llm_client import RoutesError, load_routes

    try:
        routes = load_routes(settings.routes_file, settings.route_defaults(), require_secrets=False)
    except (RoutesError, ValueError):
        return {}
    return {workflow: [t.id for t in route.eligible] for workflow, route in routes.routes.items()}


def route_target_ids(settings: Settings, *, strict: bool = False) -> list[str]:
    """Target ids of the configured routes.

    Best effort by default ([] if the file is unusable: a scrape must still answer);
    ``strict`` raises ``RoutesError`` instead (the CLI: an empty table would read as
    "no breakers", not as "your routes file is broken").
    """
    from llm_client import RoutesError, load_routes

    try:
        routes = load_routes(settings.routes_file, settings.route_defaults(), require_secrets=False)
        return routes.target_ids()
    except (RoutesError, ValueError):
        if strict:
            raise
        return []


# --- reading a sample ----------------------------------------------------------------------


async def read_sample(
    redis: Redis,
    settings: Settings,
    *,
    breakers: BreakerStore | None = None,
    targets: Sequence[str] = (),
    routes: Mapping[str, Sequence[str]] | None = None,
    now: float | None = None,
    outliers: OutlierStore | None = None,
) -> Sample:
    """One consistent-enough read of everything the metrics report (a few round trips)."""
    keys = Keys(settings.key_prefix)
    at = time.time() if now is None else now
    now_ms = int(at * 1000)
    runs = await run_store(redis, settings).counts()
    replies = await _read_state(redis, keys, now_ms)
    ticks = await tick_queue(redis, settings).counts(at_ms=now_ms)
    views: list[BreakerView] = []
    if breakers is not None:
        # the routes' targets (no keyspace SCAN at scrape cadence); stored ones only without routes
        views = await (breakers.views(targets) if targets else breakers.list())
    sample = _sample(at, replies, runs=runs, ticks=ticks, breakers=views)
    # the routes' targets only (a read: the sync adds nothing)
    tallies = await outliers.sync(targets, now_ms=now_ms) if outliers and targets else []
    return replace(
        sample, routes=dict(routes or {}), queue_cap=settings.max_queued_runs, outliers=tallies
    )


async def _read_state(redis: Redis, keys: Keys, now_ms: int) -> list[Any]:
    """The run, lease, pipeline, routing and admin state in one pipeline (read by :func:`_sample`)."""
    async with redis.pipeline(transaction=False) as pipe:
        pipe.zrange(keys.by_status(RunStatus.QUEUED.value), 0, 0, withscores=True)
        pipe.zrange(keys.by_status(RunStatus.PROCESSING.value), 0, 0, withscores=True)
        pipe.zrange(keys.leases, 0, 0, withscores=True)
        pipe.zcount(keys.leases, "-inf", now_ms - 1)
        pipe.hgetall(keys.counters)
        pipe.hget(keys.pipeline_state, "deferred_since")
        pipe.zcount(keys.workers, now_ms, "+inf")
        pipe.hgetall(keys.routing_attempts)
        pipe.hgetall(keys.admin_counters)
        pipe.zcard(keys.admin_outbox)
        pipe.hgetall(keys.reembed_progress)
        pipe.hget(keys.admin_incident, "started")
        replies: list[Any] = await pipe.execute()
    return replies


def _sample(
    at: float,
    replies: Sequence[Any],
    *,
    runs: Mapping[str, int],
    ticks: TickCounts,
    breakers: Sequence[BreakerView],
) -> Sample:
    """The sample at ``at`` from :func:`_read_state`'s replies and the other reads (pure)."""
    (
        queued,
        processing,
        lease,
        expired,
        counters,
        deferred,
        workers,
        attempts,
        admin,
        outbox,
        reembed,
        incident,
    ) = replies

    def age(rows: list[tuple[Any, float]]) -> float | None:
        return max(0.0, at - rows[0][1] / 1000) if rows else None

    return Sample(
        at=at,
        runs=runs,
        oldest_queued_age_s=age(queued),
        oldest_processing_age_s=age(processing),
        lease_overdue_s=max(0.0, at - lease[0][1] / 1000) if lease else 0.0,
        leases_expired=int(expired),
        counters={as_text(k): int(v) for k, v in counters.items()},
        ticks=ticks,
        deferred_since_s=int(deferred) / 1000 if deferred else None,
        workers_live=int(workers),
        breakers=breakers,
        attempts=parse_attempts(attempts),
        admin_pages={as_text(k): int(v) for k, v in admin.items()},
        admin_outbox=int(outbox),
        reembed={as_text(k): parse_progress(v) for k, v in reembed.items()},
        incident_since_s=int(incident) / 1000 if incident else None,
    )


def redis_sampler(
    redis: Redis, settings: Settings, *, clock: Callable[[], float] = time.monotonic
) -> Sampler[Sample]:
    """A sampler of the fleet's state in ``redis`` for these settings."""
    breakers = breaker_store(redis, settings)
    outliers = outlier_store(redis, settings)
    targets = route_target_ids(settings)
    routes = route_map(settings)

    async def read() -> Sample:
        return await read_sample(
            redis, settings, breakers=breakers, targets=targets, routes=routes, outliers=outliers
        )

    return Sampler(
        read,
        min_interval=settings.metrics_cache_seconds,
        timeout=max(1.0, min(settings.metrics_cache_seconds, 5.0)),
        clock=clock,
    )


# --- the collector -----------------------------------------------------------------------


def _g(name: str, doc: str, labels: Sequence[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{NS}_{name}", doc, labels=list(labels))


def _c(name: str, doc: str, labels: Sequence[str] = ()) -> CounterMetricFamily:
    return CounterMetricFamily(f"{NS}_{name}", doc, labels=list(labels))


def sample_metrics(sample: Sample) -> Iterator[Metric]:
    """Metric families of one sample (pure: the collector's core). Fleet-wide series: only
    ``serve`` exports them (see ``server.py``), so each is counted once."""
    yield from _run_metrics(sample)
    yield from _pipeline_metrics(sample)
    yield from reembed_metrics(sample.reembed)
    yield from counter_metrics(sample.counters)
    yield from _routing_metrics(sample)
    yield from route_open_metrics(sample.routes, sample.breakers)
    yield from attempt_metrics(
        sample.attempts, sorted({t for targets in sample.routes.values() for t in targets})
    )
    yield from page_metrics(sample.admin_pages)
    yield _gauge("admin_pages_pending", "Admin pages waiting in the outbox.", sample.admin_outbox)
    yield from incident_metrics(sample.incident_since_s)
    if sample.queue_cap:
        yield _gauge(
            "queue_cap",
            "MEMORY_MAX_QUEUED_RUNS: queued + processing runs beyond it answer queue_full.",
            sample.queue_cap,
        )


def since(at: float, age: float | None) -> float:
    """A "since" as Prometheus wants it: the moment, in unix seconds (0 = none), from a
    sample taken at ``at`` and the age it read; a dashboard or alert computes
    ``time() - x``, which stays right while a cached sample is served."""
    return 0.0 if age is None else at - age


def _run_metrics(sample: Sample) -> Iterator[Metric]:
    """Runs by status, their ages and the leases."""
    runs = _g("runs", "Runs by status (retired runs are also counted as failed).", ["status"])
    for status in RunStatus:
        runs.add_metric([status.value], sample.runs.get(status.value, 0))
    yield runs
    yield _gauge(
        "retired_runs",
        "Retired runs now (failed, attempts exhausted; replay resets them).",
        sample.runs["retired"],
    )
    yield _gauge(
        "oldest_queued_run_timestamp_seconds",
        "When the longest-waiting queued run was queued or released (unix seconds; 0 = none "
        "queued). Its wait: time() minus it.",
        since(sample.at, sample.oldest_queued_age_s),
    )
    yield _gauge(
        "oldest_processing_run_timestamp_seconds",
        "When the oldest processing run was claimed (unix seconds; 0 = none processing).",
        since(sample.at, sample.oldest_processing_age_s),
    )
    yield _gauge(
        "oldest_expired_lease_timestamp_seconds",
        "When the oldest lease past its expiry expired (unix seconds; 0 = none overdue; "
        "a lost worker otherwise).",
        since(sample.at, sample.lease_overdue_s or None),
    )
    yield _gauge("leases_expired", "Leases past their expiry.", sample.leases_expired)


def _pipeline_metrics(sample: Sample) -> Iterator[Metric]:
    """Ticks, the outage deferral and the live workers."""
    ticks = _g("ticks", "Pipeline ticks: pending (delayed included), delayed, running.", ["state"])
    ticks.add_metric(["pending"], sample.ticks.pending)
    ticks.add_metric(["delayed"], sample.ticks.delayed)
    ticks.add_metric(["running"], sample.ticks.running)
    yield ticks
    yield _gauge(
        "pipeline_deferred",
        "1 while the pipeline defers for a farm outage (single delayed probe).",
        1 if sample.deferred_since_s is not None else 0,
    )
    yield _gauge(
        "pipeline_deferred_since_timestamp_seconds",
        "When the pipeline began deferring for an outage (unix seconds; 0 when it does not).",
        sample.deferred_since_s or 0.0,
    )
    yield _gauge("workers", "Live workers in the registry.", sample.workers_live)


def _routing_metrics(sample: Sample) -> Iterator[Metric]:
    """Breakers per target, and each target's error ratio and ejection (§5)."""
    state = _g("breaker_state", "Breaker per target: 0 closed, 1 half-open, 2 open.", ["target"])
    trips = _g("breaker_trips", "Consecutive trips of a target's breaker.", ["target"])
    for view in sample.breakers:
        state.add_metric([view.target], BREAKER_STATE[view.circuit])
        trips.add_metric([view.target], view.trips)
    yield state
    yield trips
    ratio = _g(
        "target_error_ratio",
        "Charged failures over calls of a target in the ejection window, fleet-wide (busy "
        "and capacity answers never count; 0 without calls).",
        ["target"],
    )
    calls = _g(
        "target_window_calls",
        "Successes and charged failures of a target in the ejection window, fleet-wide.",
        ["target"],
    )
    ejected = _g(
        "target_ejected",
        "1 while a target is ejected for its error rate (tried after every other target).",
        ["target"],
    )
    for tally in sample.outliers:
        ratio.add_metric([tally.target], tally.error_ratio)
        calls.add_metric([tally.target], tally.calls)
        ejected.add_metric([tally.target], 1 if tally.standing is Standing.EJECTED else 0)
    yield ratio
    yield calls
    yield ejected


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{NS}_{name}", doc, value=value)


def reembed_metrics(progress: Mapping[str, tuple[int, int]]) -> Iterator[Metric]:
    """Model switches in progress (§16), summed over chats (no per-chat labels)."""
    yield _gauge("reembed_chats", "Chats whose model switch is in progress.", len(progress))
    yield _gauge(
        "reembed_cards_done",
        "Cards re-embedded so far by the model switches in progress.",
        sum(done for done, _ in progress.values()),
    )
    yield _gauge(
        "reembed_cards_planned",
        "Live cards of the chats being switched, counted when each switch started.",
        sum(total for _, total in progress.values()),
    )


class MemoryCollector(Collector):
    """The last good sample as Prometheus families, plus the sampler's own health."""

    def __init__(self, sampler: Sampler[Sample]) -> None:
        self.sampler = sampler

    def describe(self) -> Iterable[Metric]:
        return []  # no collect() at registration time: the gauges are dynamic

    def collect(self) -> Iterable[Metric]:
        sampler = self.sampler
        errors = _c("sample_errors", "Failed Redis samples (the last good values are kept).")
        errors.add_metric([], sampler.errors)
        yield errors
        attempts = _c("sample_attempts", "Redis sample attempts (rate limited by the cache).")
        attempts.add_metric([], sampler.attempts)
        yield attempts
        if sampler.last is None:
            return  # absent until the first good sample: no misleading zeros
        yield _gauge(
            "sample_last_success_timestamp_seconds",
            "Unix time of the last good Redis sample.",
            sampler.last_success or 0.0,
        )
        yield from sample_metrics(sampler.last)


# --- the operators' report ------------------------------------------------------------------


async def report_data(
    redis: Redis,
    settings: Settings,
    *,
    limit: int = 50,
    types: list[str] | None = None,
    workflow: str | None = None,
) -> dict[str, Any]:
    """The ``report`` document: events (newest first) plus the fleet's current state."""
    events = await event_log(redis, settings).recent(limit=limit, types=types, workflow=workflow)
    sample = await read_sample(
        redis,
        settings,
        breakers=breaker_store(redis, settings),
        targets=route_target_ids(settings),
    )
    deferred = sample.deferred_since_s
    from memory_worker.paging.notifiers import configured_channels
    from memory_worker.paging.policy import unconfigured_warning
    from memory_worker.upkeep.forgetter import recent_audit

    channels = configured_channels(settings)

    return {
        "events": [e.as_dict() for e in events],
        "audit": await recent_audit(redis, Keys(settings.key_prefix), limit=limit),
        "pages": dict(sample.admin_pages),
        "pages_pending": sample.admin_outbox,
        "paging": {
            "channels": channels,
            "warning": unconfigured_warning(channels, sample.admin_pages),
        },
        "breakers": [v.as_dict() for v in sample.breakers],
        "runs": dict(sample.runs),
        "ticks": {
            "pending": sample.ticks.pending,
            "delayed": sample.ticks.delayed,
            "running": sample.ticks.running,
        },
        "pipeline_deferred_since": None
        if deferred is None
        else datetime.fromtimestamp(deferred, tz=UTC).isoformat(),
    }
