"""The arq wing: every place memory-worker overrides or drives arq.

- :mod:`~memory_worker.worker.main`: the job functions (tick, safety net, maintenance),
  ``WorkerSettings`` (``arq memory_worker.worker.WorkerSettings`` — resolved lazily here,
  so importing this package does not import the worker), the
  :class:`MemoryWorker` poll loop, graceful shutdown and Redis reconnects.
- :mod:`~memory_worker.worker.process`: the ``memory-worker run`` process — waiting for
  Redis at start, the bounded shutdown release; every phase obeys SIGTERM/SIGINT.
- :mod:`~memory_worker.worker.watchdog`: the liveness rule and the thread that releases a
  wedged worker's runs and exits it non-zero.
- :mod:`~memory_worker.worker.pinned`: the pinned rule (demand, no run completed while the
  peers complete theirs), its restart guard and the monitor that hands the watchdog the exit.
- :mod:`~memory_worker.worker.prelude`: a tick's job start without ``MULTI``/``EXEC``;
  its script is ``lua/job_start.lua``.
- :mod:`~memory_worker.worker.fleet`: worker processes on demand (``python -m
  memory_worker run`` with settings in the environment), for the demo, tests and benches.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    """``arq memory_worker.worker.WorkerSettings``: the worker's settings class, built lazily."""
    if name != "WorkerSettings":
        raise AttributeError(name)
    from memory_worker.worker import main

    return main.WorkerSettings
