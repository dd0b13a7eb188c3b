"""The bot's API (§13): :class:`MemoryQueue` — enqueue runs, read them back, use memory.

- :mod:`~memory_worker.api.queue`: :class:`MemoryQueue` — connecting, enqueue, runs,
  memory reads, recall (hybrid and time-aware), forget.
- :mod:`~memory_worker.api.memory_ops`: what the bot does with memory beyond recall —
  ``context`` (a prompt-ready block), ``retract`` / ``correct`` one card, ``export`` /
  ``import_export`` (a base of :class:`MemoryQueue`).
- :mod:`~memory_worker.api.query_args`: the checks every memory call runs on its
  arguments before any read (typed errors, nothing read or written on bad input).

Import it from the package: ``from memory_worker import MemoryQueue``.
"""

from memory_worker.api.queue import MemoryQueue

__all__ = ["MemoryQueue"]
