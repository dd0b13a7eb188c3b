"""The bot's API (§13): :class:`MemoryQueue` — enqueue runs, read them back, use memory.

- :mod:`~memory_worker.api.queue`: :class:`MemoryQueue` — connecting, enqueue, runs,
  memory reads, recall (hybrid and time-aware), forget, ``context`` (a prompt-ready
  block), ``retract`` / ``correct`` one card, ``export`` / ``import_export``.
- :mod:`~memory_worker.api.query_args`: the checks every memory call runs on its
  arguments before any read (typed errors, nothing read or written on bad input).
- :mod:`~memory_worker.api.edge`: the bot's edge — every public method's foreign errors
  (Redis, the embedder) mapped onto ``memory_worker``'s tree, calls after close refused.
- :mod:`~memory_worker.api.sync`: :class:`SyncMemoryQueue`, the blocking twin (the same
  methods, generated from :class:`MemoryQueue`'s, on a loop thread of its own).

Import them from the package: ``from memory_worker import MemoryQueue, SyncMemoryQueue``.
"""

from memory_worker.api.queue import MemoryQueue
from memory_worker.api.sync import SyncMemoryQueue

__all__ = ["MemoryQueue", "SyncMemoryQueue"]
