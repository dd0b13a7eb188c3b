"""The fleet's counters as Prometheus counters, every label known up front at 0 (§11).

The counters live in Redis (the queue's ``counters`` hash, routed attempts, admin pages)
and only grow, so Prometheus reads them as counters. A series that first appears with
the value 2 hides those two events from ``increase()`` (it has no earlier sample to
compare with): "the first retirements are invisible". So every label value this code
knows before it happens — enqueue results, claim buckets, release, failure, retirement
and skip reasons, forget scopes, page results, each route target's attempt outcomes — is
exported at 0 from the first scrape on; a value nobody foresaw still appears when it first
happens (and ``memory_worker_events_total`` takes fields of no known family).

Pure: :func:`counter_metrics`, :func:`attempt_metrics` and :func:`page_metrics` turn
plain mappings into metric families; :mod:`memory_worker.ops.metrics` reads the mappings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from prometheus_client.core import CounterMetricFamily, Metric

from llm_client import FailureReason, Outcome
from memory_worker.privacy.forget import FORGOTTEN
from memory_worker.runs.model import EnqueueStatus
from memory_worker.runs.policy import (
    RELEASE_REASONS,
    STORE_REFUSED,
    STORE_UNAVAILABLE,
    TASK_TIMEOUT,
)

NS = "memory_worker"

#: The reason a failure without a retryable reason is counted under (see the run store).
NOT_RETRYABLE = "not_retryable"

#: Counters-hash field prefix → (metric name without ``_total``, label name, help).
COUNTER_FAMILIES: dict[str, tuple[str, str, str]] = {
    "enqueue": ("enqueue", "result", "Enqueue answers by result."),
    "claimed": (
        "runs_claimed",
        "bucket",
        "Runs claimed, by bucket (queued, retry, lease_expired).",
    ),
    "released": ("runs_released", "reason", "Runs released (attempt refunded), by reason."),
    "failed": ("runs_failed", "reason", "Run failures (attempt spent), by reason."),
    "retired": ("runs_retired", "reason", "Runs retired (attempts exhausted), by reason."),
    "skipped": ("runs_skipped", "reason", "Runs skipped, by reason."),
    "forgets": ("forgets", "scope", "Forget requests carried out (§14), by scope (user, chat)."),
    "degraded": (
        "reads_degraded",
        "call",
        "Bot reads answered from the words alone (the embedding route could not answer), "
        "by call (recall, context).",
    ),
    "cancelled": (
        "runs_cancelled",
        "status",
        "Runs cancelled by an operator (§13), by the status they were in.",
    ),
}
#: Counters-hash fields without a label → (metric name without ``_total``, help).
PLAIN_COUNTERS: dict[str, tuple[str, str]] = {
    "completed": ("runs_completed", "Runs completed."),
    "replayed": ("runs_replayed", "Runs replayed by an operator."),
    "pipeline:deferred": ("pipeline_deferred", "Ticks that deferred for an outage."),
}

_FAILED = (
    *(r.value for r in FailureReason if r not in RELEASE_REASONS),
    TASK_TIMEOUT,
    NOT_RETRYABLE,
)

#: Every label value each family is known to take, exported at 0 before it happens.
KNOWN_LABELS: dict[str, tuple[str, ...]] = {
    "enqueue": tuple(s.value for s in EnqueueStatus),
    "claimed": ("queued", "retry", "lease_expired"),
    "released": (
        *(r.value for r in RELEASE_REASONS),
        FailureReason.PROVIDER_TIMEOUT.value,  # an embedding call's own timeout (§7)
        STORE_UNAVAILABLE,
        STORE_REFUSED,  # the store refused the run's write (OOM…): uncharged (§7)
        "shutdown",
        "watchdog",
        "pinned",  # a pinned worker gave its runs back before it exited (§11)
        FORGOTTEN,
    ),
    "failed": _FAILED,
    "retired": (*_FAILED, "worker_lost"),
    "skipped": ("prompt_version", FORGOTTEN),
    "forgets": ("user", "chat"),
    "degraded": ("recall", "context"),
    "cancelled": ("queued", "processing", "failed"),
}

#: Admin page results (``admin_counters``), all exported at 0.
PAGE_RESULTS = (
    "queued",
    "sent",
    "suppressed",
    "failed",
    "not_configured",
    "delivery_errors",
    "resolved",
)

#: A routed attempt's (outcome, reason) pairs known for every target: a success has no
#: reason ("-"); a charged failure any reason (or none: not retryable); a neutral one is
#: a busy answer or an uncharged timeout.
ATTEMPT_KINDS: tuple[tuple[str, str], ...] = (
    (Outcome.SUCCESS.value, "-"),
    *((Outcome.FAILURE.value, r.value) for r in FailureReason),
    (Outcome.FAILURE.value, "-"),
    (Outcome.NEUTRAL.value, FailureReason.CAPACITY_UNAVAILABLE.value),
    (Outcome.NEUTRAL.value, FailureReason.PROVIDER_TIMEOUT.value),
)


def _c(name: str, doc: str, labels: Sequence[str] = ()) -> CounterMetricFamily:
    return CounterMetricFamily(f"{NS}_{name}", doc, labels=list(labels))


def counter_metrics(counters: Mapping[str, int]) -> Iterator[Metric]:
    """The counters hash as counter families, every known label at 0; fields of no known
    family go to ``memory_worker_events``."""
    values: dict[str, dict[str, int]] = {
        prefix: dict.fromkeys(KNOWN_LABELS.get(prefix, ()), 0) for prefix in COUNTER_FAMILIES
    }
    other = _c("events", "Other pipeline counters, by name.", ["name"])
    plain: dict[str, int] = {}
    for name, value in sorted(counters.items()):
        prefix, sep, label = name.partition(":")
        if name in PLAIN_COUNTERS:
            plain[name] = value
        elif sep and prefix in values:
            values[prefix][label] = value
        else:
            other.add_metric([name], value)
    for prefix, (metric, label_name, doc) in COUNTER_FAMILIES.items():
        family = _c(metric, doc, [label_name])
        for label, value in sorted(values[prefix].items()):
            family.add_metric([label], value)
        yield family
    for name, (metric, doc) in PLAIN_COUNTERS.items():
        family = _c(metric, doc)
        family.add_metric([], plain.get(name, 0))
        yield family
    yield other


def attempt_metrics(
    attempts: Mapping[tuple[str, str, str], int], targets: Sequence[str] = ()
) -> Iterator[Metric]:
    """Routed attempts by target, outcome and reason; every ``targets``' known kinds at 0."""
    values = {(t, outcome, reason): 0 for t in targets for outcome, reason in ATTEMPT_KINDS}
    values.update(attempts)
    family = _c(
        "routing_attempts",
        "Routed attempts by target, outcome (success/failure/neutral) and reason.",
        ["target", "outcome", "reason"],
    )
    for (target, outcome, reason), count in sorted(values.items()):
        family.add_metric([target, outcome, reason], count)
    yield family


def page_metrics(pages: Mapping[str, int]) -> Iterator[Metric]:
    """Admin pages by result, every known result at 0."""
    family = _c("admin_pages", "Admin pages by result (sent, suppressed, failed, …).", ["result"])
    for result, count in sorted({**dict.fromkeys(PAGE_RESULTS, 0), **pages}.items()):
        family.add_metric([result], count)
    yield family
