"""Clocks a test moves by hand, for code that takes an injected ``clock: Callable[[], float]``.

With :class:`ManualClock` time passes only when the test says so (``clock.advance(s)`` or
``clock.now = t``), so a test steps through timings without waiting and an assertion that
something has *not* happened yet holds by construction, not by a race against a sleep.
:class:`ShiftedClock` is wall time that the test can move forward, for code whose clock also
lands in Redis (TTLs as unix instants), where a clock that stood still would let keys expire.
"""

from __future__ import annotations

import time


class ManualClock:
    """Reads ``now``; nothing moves it but the test."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class ShiftedClock:
    """``time.time()`` plus however far the test has moved it forward."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds
