"""Operating it (§11): what an operator, a supervisor or Prometheus reads off a process.

- :mod:`~memory_worker.ops.metrics`: Prometheus metrics sampled from Redis behind a cache,
  and the ``report`` document; :mod:`~memory_worker.ops.fleet_counters`: the fleet's
  counters with every known label at 0; :mod:`~memory_worker.ops.outage_metrics`: routes
  open and the paged incident (all fleet series: ``serve`` exports them).
- :mod:`~memory_worker.ops.health`: what ``/healthz`` and ``/readyz`` answer.
- :mod:`~memory_worker.ops.sentry`: unexpected errors to Sentry, nothing sensitive.
- :mod:`~memory_worker.ops.audit`: the audit trail of operators' actions (console and command
  line) on the routing-event stream.
"""
