"""Operating it (§11): what an operator, a supervisor or Prometheus reads off a process.

- :mod:`~memory_worker.ops.metrics`: Prometheus metrics sampled from Redis behind a cache,
  and the ``report`` document.
- :mod:`~memory_worker.ops.latency`: this process's latency histograms (farm calls,
  capacity waits, runs, claims), served next to a worker.
- :mod:`~memory_worker.ops.health`: what ``/healthz`` and ``/readyz`` answer.
- :mod:`~memory_worker.ops.serve`: the HTTP server (health, metrics, the console).
- :mod:`~memory_worker.ops.sentry`: unexpected errors to Sentry, nothing sensitive.
- :mod:`~memory_worker.ops.logs`: structured logging.
"""
