"""Pipeline ticks (§8): stateless arq jobs that each claim and process one run at a time.

- :mod:`~memory_worker.pipeline.ticks`: the follow-up plan of a tick (pure) and the
  tick queue in Redis (one script counts pending ticks and adds arq jobs).
- :mod:`~memory_worker.pipeline.jobcodec`: arq job payloads as JSON, never pickle (the
  tick queue writes them, the worker reads them).
- :mod:`~memory_worker.pipeline.runner`: :class:`TickRunner` — claim one run, process it
  under its lease, settle it (complete, release, fail), queue the follow-ups.
- :mod:`~memory_worker.pipeline.lease`: the lease renewer — a claimed run's lease kept
  while its tick works on it; only "not yours" ends the work, never a Redis error.
- :mod:`~memory_worker.pipeline.gate`: the pre-claim route gate — a tick defers before
  claiming while a route it needs is entirely breaker-open.
- :mod:`~memory_worker.pipeline.processing`: what a tick does with a claimed run, behind
  one small interface (``RunProcessor``).
- :mod:`~memory_worker.pipeline.process_metrics`: one worker process's own series, the
  tick runner's (slots; tick, run, claim-wait, claim, farm-call and capacity-wait
  histograms; ``run --serve`` exports them) and the build info.
"""
