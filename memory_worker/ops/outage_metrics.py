"""A farm outage as the fleet's metrics show it (§9, §11): routes open, the paged incident.

Fleet series (``serve`` exports them, :mod:`memory_worker.ops.metrics` calls these):

- ``memory_worker_route_open{workflow}`` — 1 while every target of the workflow's route is
  breaker-open or half-open (what the admin pages call "open routes"; the farm-outage
  alert reads it), 0 otherwise; every configured route is present from the start;
- ``memory_worker_incident_open`` / ``…_incident_opened_timestamp_seconds`` (when, unix
  seconds; 0 = none) — the incident the admins were paged about (:mod:`memory_worker.paging.incident`), from its first page until its
  resolved page.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from prometheus_client.core import GaugeMetricFamily, Metric

from llm_client import BreakerView
from memory_worker.paging.policy import open_workflows

NS = "memory_worker"


def route_open_metrics(
    routes: Mapping[str, Sequence[str]], breakers: Sequence[BreakerView]
) -> Iterator[Metric]:
    """``route_open`` per configured workflow, from its targets' breaker views."""
    views = {view.target: view for view in breakers}
    known = {wf: [views[t] for t in targets if t in views] for wf, targets in routes.items()}
    opened = set(open_workflows(known))
    family = GaugeMetricFamily(
        f"{NS}_route_open",
        "1 while every target of the workflow's route is breaker-open (a farm outage).",
        labels=["workflow"],
    )
    for workflow in sorted(routes):
        family.add_metric([workflow], int(workflow in opened))
    yield family


def incident_metrics(since: float | None) -> Iterator[Metric]:
    """The paged incident open since ``since`` (unix seconds; None: none)."""
    yield GaugeMetricFamily(
        f"{NS}_incident_open",
        "1 from an outage's first admin page until its resolved page (§9), else 0.",
        value=0 if since is None else 1,
    )
    yield GaugeMetricFamily(
        f"{NS}_incident_opened_timestamp_seconds",
        "When the paged incident opened (unix seconds; 0 when none is open).",
        value=0.0 if since is None else since,
    )
