"""What the console says beside its numbers and errors (§15): meanings and what to do.

- :data:`FIGURES`: every figure the overview shows, with what it counts and where the same
  number is in ``memory-worker report --json`` and on ``/metrics``. The console, the report
  and the metrics read one sample (:func:`memory_worker.ops.metrics.read_sample`), so the
  numbers agree by construction; this table makes the *definitions* agree too (a test
  checks every metric named here is one ``/metrics`` exposes).
- :func:`advice`: what to do about a route's last farm error, one line, and the anchor of
  the runbook section that says more (``docs/runbook.md``; a test checks each anchor is a
  heading there). :func:`runbook_href` makes the link from ``MEMORY_CONSOLE_RUNBOOK_URL``.

Pure data and functions: no Redis, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_worker.models import RouteError


@dataclass(frozen=True, slots=True)
class Figure:
    """One number of the overview: its label, what it counts, and its twins elsewhere."""

    id: str
    label: str
    meaning: str
    #: The Prometheus series (name{labels}) with the same number, if any.
    metric: str | None = None
    #: The ``report --json`` path with the same number, if any.
    report: str | None = None


#: The run counts by status: how many runs are in that state *now* (not a total).
STATUS_FIGURES: tuple[Figure, ...] = (
    Figure(
        "queued",
        "queued",
        "runs waiting for a worker now (released runs come back here)",
        'memory_worker_runs{status="queued"}',
        "runs.queued",
    ),
    Figure(
        "processing",
        "processing",
        "runs a worker holds under a lease now",
        'memory_worker_runs{status="processing"}',
        "runs.processing",
    ),
    Figure(
        "completed",
        "completed",
        "completed runs still stored (pruned after the retention)",
        'memory_worker_runs{status="completed"}',
        "runs.completed",
    ),
    Figure(
        "failed",
        "failed",
        "runs whose last attempt failed, now: waiting for a retry, or retired (counted here too)",
        'memory_worker_runs{status="failed"}',
        "runs.failed",
    ),
    Figure(
        "skipped",
        "skipped",
        "runs never processed: of an older prompt version, or forgotten (the run says which)",
        'memory_worker_runs{status="skipped"}',
        "runs.skipped",
    ),
    Figure(
        "cancelled",
        "cancelled",
        "runs an operator took out for good (runs cancel, a run's page): replay by id puts one back",
        'memory_worker_runs{status="cancelled"}',
        "runs.cancelled",
    ),
    Figure(
        "retired",
        "retired",
        "failed runs with every attempt spent, now: they wait for a replay",
        "memory_worker_retired_runs",
        "runs.retired",
    ),
)

#: Totals since the store began: events, not runs (one run can fail or be released often).
TOTAL_FIGURES: tuple[Figure, ...] = (
    Figure(
        "total-completed",
        "completions",
        "runs completed, ever",
        "memory_worker_runs_completed_total",
    ),
    Figure(
        "total-failed",
        "failures",
        "failed attempts, ever (an attempt spent; one run may fail several times) — not the "
        "failed runs above",
        "memory_worker_runs_failed_total",
    ),
    Figure(
        "total-retired",
        "retirements",
        "runs retired, ever (a replayed run that retires again counts again)",
        "memory_worker_runs_retired_total",
    ),
    Figure(
        "total-released",
        "releases",
        "runs given back with the attempt refunded, ever: no backend could take them (an "
        "outage, a busy farm) or the worker stopped",
        "memory_worker_runs_released_total",
    ),
)

#: The rest of the overview's table.
STATE_FIGURES: tuple[Figure, ...] = (
    Figure(
        "oldest-queued",
        "Oldest queued run",
        "how long the longest-waiting queued run has waited since it was queued or released "
        "(/metrics has the moment: the wait is time() minus it)",
        "memory_worker_oldest_queued_run_timestamp_seconds",
    ),
    Figure(
        "in-flight",
        "In flight",
        "runs held by a worker now (the processing count)",
        'memory_worker_runs{status="processing"}',
        "runs.processing",
    ),
    Figure(
        "leases-expired",
        "Expired leases",
        "leases past their expiry now: a worker died or Redis paused (reclaimed by the next claim)",
        "memory_worker_leases_expired",
    ),
    Figure(
        "workers-live",
        "Workers alive",
        "workers whose heartbeat has not expired (see the workers page)",
        "memory_worker_workers",
    ),
    Figure(
        "ticks",
        "Ticks pending / delayed / running",
        "pipeline ticks in arq's queue (delayed ones included), the delayed ones (during an "
        "outage: the one probe), and those running now",
        "memory_worker_ticks{state}",
        "ticks",
    ),
    Figure(
        "pages",
        "Admin pages sent / suppressed / pending",
        "pages delivered, repeats held back by the cooldown, pages waiting for delivery",
        "memory_worker_admin_pages_total{result} / memory_worker_admin_pages_pending",
        "pages.sent / pages.suppressed / pages_pending",
    ),
    Figure(
        "deferred-since",
        "Pipeline deferred since",
        "when the fleet stopped claiming for an outage and left one delayed probe",
        "memory_worker_pipeline_deferred_since_timestamp_seconds",
        "pipeline_deferred_since",
    ),
)

#: What the banner's and the breakers page's time figures mean.
NEXT_PROBE_MEANING = (
    "when the pipeline tries the farm again: the delayed tick, else the earliest breaker "
    "cooldown end"
)
COOLDOWN_MEANING = (
    "how long this breaker stays open before it lets one probe through (doubles with each "
    "trip, at most MEMORY_BREAKER_COOLDOWN_MAX_SECONDS); the pipeline's next probe may come "
    "sooner, on a fallback route's fail-open probe"
)


# --- what to do about a route's last farm error ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Advice:
    text: str
    #: A heading anchor of docs/runbook.md.
    anchor: str


#: Failure reason → what to do (see docs/runbook.md, "What the outage banner tells you").
ADVICE: dict[str, Advice] = {
    "provider_unavailable": Advice(
        "Nothing, usually: runs wait with their attempts refunded and one probe per interval "
        "checks the farm. Fix the farm or its backend; then reset the breaker to skip the "
        "cooldown.",
        "provider_unavailable",
    ),
    "capacity_unavailable": Advice(
        "The farm is busy (no free slot): runs wait, attempts refunded, breakers not charged. "
        "If it lasts, add farm capacity or run fewer worker slots.",
        "capacity_unavailable",
    ),
    "provider_error": Advice(
        "A backend crashes on the call (HTTP 5xx): check that target's logs on the farm. Runs "
        "fail only when every target of the route crashes; replay them after the fix.",
        "provider_error",
    ),
    "provider_timeout": Advice(
        "The farm answers too slowly: check its load and queue. Raise the task timeout only if "
        "jobs really need longer.",
        "provider_timeout",
    ),
}
#: A farm answer with no retryable reason, or a protocol error: the run fails, not waits.
OTHER_ADVICE = Advice(
    "The farm refused the call or answered something unusable: the run fails and spends an "
    "attempt. Read the run's error log (memory-worker runs show ID), check the routes file's "
    "target and model, then replay.",
    "other-farm-errors",
)
#: No farm answer recorded for the route yet (every call was refused by an open breaker).
NO_ANSWER_ADVICE = Advice(
    "No farm answer recorded for this route yet: its breakers opened before this store kept "
    "one. See the breakers page and the events timeline.",
    "what-the-outage-banner-tells-you",
)


def advice(error: RouteError | None) -> Advice:
    """What to do about a route's last farm error (pure)."""
    if error is None:
        return NO_ANSWER_ADVICE
    return ADVICE.get(error.reason or "", OTHER_ADVICE)


def runbook_href(base: str, anchor: str) -> str:
    """The link to a runbook section: ``MEMORY_CONSOLE_RUNBOOK_URL`` plus the anchor."""
    return f"{base.split('#', 1)[0]}#{anchor}"
