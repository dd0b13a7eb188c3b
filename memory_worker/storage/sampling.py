"""A rate-limited reader that keeps its last good sample.

The fleet's metrics (:mod:`memory_worker.ops.metrics`) and every store node's health
(:mod:`memory_worker.storage.health`) are read from Redis behind a :class:`Sampler`: at
most one read per interval, the clock advancing on every attempt, failed or not, so a
struggling Redis sees one read per interval however often Prometheus scrapes or a
readiness probe asks. A failed read keeps the last good sample and says so (``failed``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from memory_worker.logs import get_logger

log = get_logger(__name__)


class Timed(Protocol):
    """A sample: read at ``at`` (unix seconds)."""

    @property
    def at(self) -> float: ...


S = TypeVar("S", bound=Timed)


class Sampler(Generic[S]):
    """At most one Redis read per ``min_interval``; keeps the last good sample.

    The interval is measured from the last *attempt*, so failures are rate
    limited exactly like successes (no retry storm against a struggling Redis).
    ``failed`` says whether the latest attempt failed (readiness reads it: a last
    good sample is for the gauges, never evidence that a store answers now).
    """

    def __init__(
        self,
        read: Callable[[], Awaitable[S]],
        *,
        min_interval: float,
        timeout: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self.min_interval = min_interval
        self.timeout = timeout
        self._clock = clock
        self._lock = asyncio.Lock()
        self._last_attempt: float | None = None
        self.last: S | None = None
        self.attempts = 0
        self.errors = 0
        self.failed = False
        self.last_success: float | None = None

    def due(self) -> bool:
        return self._last_attempt is None or (
            self._clock() - self._last_attempt >= self.min_interval
        )

    async def refresh(self) -> S | None:
        """Sample if the interval has passed; return the last good sample (or None)."""
        async with self._lock:
            if not self.due():
                return self.last
            self._last_attempt = self._clock()
            self.attempts += 1
            try:
                async with asyncio.timeout(self.timeout):
                    sample = await self._read()
            except Exception as exc:  # any failure keeps the last good values
                self.errors += 1
                self.failed = True
                log.warning("metrics_sample_failed", error=type(exc).__name__)
            else:
                self.failed = False
                self.last = sample
                self.last_success = sample.at
            return self.last
