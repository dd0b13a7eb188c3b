"""The bot's API (§13): :class:`MemoryQueue` — enqueue runs, read them back, use memory.

- :mod:`~memory_worker.api.queue`: :class:`MemoryQueue` — connecting, enqueue, runs,
  memory reads, recall (hybrid and time-aware), forget, ``context`` (a prompt-ready
  block), ``retract`` / ``correct`` one card, ``export`` / ``import_export``.
- :mod:`~memory_worker.api.query_args`: the checks every memory call runs on its
  arguments before any read (typed errors, nothing read or written on bad input).

Import it from the package: ``from memory_worker import MemoryQueue``.
"""

from memory_worker.api.queue import MemoryQueue

__all__ = ["MemoryQueue"]
