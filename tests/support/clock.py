"""A clock a test moves by hand, for code that takes an injected ``clock: Callable[[], float]``.

Time passes only when the test says so (``clock.advance(s)`` or ``clock.now = t``), so a
test steps through timings without waiting and an assertion that something has *not*
happened yet holds by construction, not by a race against a sleep.
"""

from __future__ import annotations


class ManualClock:
    """Reads ``now``; nothing moves it but the test."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
