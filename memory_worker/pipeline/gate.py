"""The pre-claim route gate (§8): a tick defers before claiming when a route it needs is open."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from llm_client import Walker
from memory_worker.pipeline.ticks import TickOutcome


class WalkerGate:
    """The pre-claim gate: defer when a route the run needs is entirely breaker-open.

    One ``routes.open`` script reads every gated workflow's breakers (≈ 3 commands). At
    fleet rates one process's ticks ask many times a second and nearly always hear
    "passable", so a "not blocked" answer is reused for ``reuse_seconds``
    (``MEMORY_ROUTE_GATE_REUSE_SECONDS``, 0 = always read). A "blocked" answer is never
    reused, and the reused one is dropped as soon as this process learns anything that
    could mean a route opened: a tick that did not complete (deferred, released for an
    outage, failed, abandoned, idle, a store error), breaker news from this process's
    walker (:attr:`Walker.breaker_news`: a transition, an all-open walk, a fail-open
    probe), a gate read that failed or said "blocked". A read that began before such news
    does not store its answer.

    What a stale "passable" costs: the tick claims, and its walk finds the route open —
    ``circuit_open_exhaustion`` (its page is deduplicated fleet-wide), then either the
    route's fail-open probe, which the fleet gets at most once per probe interval however
    many walkers ask (a fresh read that found the permit free would have let the tick
    claim and probe too), or :class:`AllCircuitsOpen`, a routing error that releases the
    run without spending an attempt. The deferral (§8) then happens there: that tick ends
    ``deferred`` and queues the single delayed probe, and its outcome drops the reused
    answer. What is lost is the claim, the release and any farm call the run made before
    the open route's (an extraction before an open embedding route is kept for the run's next attempt), for
    at most the ticks this process starts inside one window — a tick that read the gate
    just before the trip costs the same. During an outage each tick defers, so nothing
    is reused across probe intervals (a window is ≤ 5 s against the 15 s retry interval
    anyway): one delayed probe, O(1) work per interval.
    """

    def __init__(
        self,
        walker: Walker,
        workflows: Sequence[str],
        *,
        reuse_seconds: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.walker = walker
        self.workflows = tuple(workflows)
        self.reuse_seconds = reuse_seconds
        self._clock = clock
        #: Until when (``clock``) the last "passable" may be reused; None: read next time.
        self._passable_until: float | None = None
        self._news_seen = 0  # the walker's breaker news when that answer was read
        self._generation = 0  # moves on every drop: a read that began before it is not kept
        #: Gate questions answered from the reused answer (process-local, for tests).
        self.reused = 0

    async def blocked(self) -> bool:
        """Fails open: an unreadable breaker store never blocks (the claim meets it next).

        Every workflow's routes in one round trip (no breaker window is read)."""
        now = self._clock()
        if self._reusable(now):
            self.reused += 1
            return False
        generation, news = self._generation, self.walker.breaker_news
        try:
            flags = await self.walker.routes_open(self.workflows)
        except Exception as exc:
            self.forget()
            self.walker.bookkeeping_failed("route_gate", exc, workflows=",".join(self.workflows))
            return False
        if any(flags.values()):
            self.forget()
            return True
        if (
            self.reuse_seconds > 0
            and generation == self._generation
            and news == self.walker.breaker_news
        ):
            self._passable_until, self._news_seen = now + self.reuse_seconds, news
        return False

    def _reusable(self, now: float) -> bool:
        return (
            self._passable_until is not None
            and now < self._passable_until
            and self.walker.breaker_news == self._news_seen
        )

    def tick_ended(self, outcome: TickOutcome) -> None:
        """Only a completed run says the routes still work; anything else drops the answer."""
        if outcome is not TickOutcome.COMPLETED:
            self.forget()

    def forget(self) -> None:
        """Drop the reused answer: the next question reads the breakers."""
        self._passable_until = None
        self._generation += 1
