"""A pinned worker restarts itself (§11): demand, no run completed, while its peers complete.

A worker whose own state is broken — its in-process embedder, a corrupt local cache — can
fail every run it claims while the farm and the other workers are fine: each run goes back
(released, attempt refunded) and a healthy peer completes it, but the broken worker stays up
and keeps claiming. d-inference's watchdog calls such a node *pinned*: demand, and zero
successes for a sustained window. Here:

- the **policy** (:func:`judge_pinned`, pure): given samples of this worker's claims (its
  demand, counted by the process), its completions and the fleet's (both read from Redis:
  ``workers:completed``, which the completion script counts by lease owner, and the
  ``completed`` counter), a worker is pinned when, over the last ``MEMORY_PINNED_WINDOW_SECONDS``,
  it claimed at least ``MEMORY_PINNED_MIN_CLAIMS`` runs, completed none, and the other
  workers completed at least ``MEMORY_PINNED_PEER_COMPLETIONS``. A counter that went
  backwards (a flushed store) judges nothing; neither does a worker up for less than a
  window, nor samples older than a window (the store stopped answering).
- the **restart guard** (:func:`worker_identity`, the ``workers:pinned:<identity>`` key):
  a pinned worker may exit only when no pinned exit of the same identity — the host, and
  ``MEMORY_WORKER_SLOT`` when set — happened within ``MEMORY_PINNED_GUARD_SECONDS``; the key
  is set ``NX`` with that time to live in the same command, so its memory survives the
  restart and two workers of one identity cannot both take it. Held by the guard, the worker
  stays up and pages instead (``worker_pinned``, deduplicated by identity), at most once per
  guard window.
- the **shell** (:class:`PinnedMonitor`): a loop on the worker's event loop that samples
  every heartbeat period, logs ``worker_pinned`` with the counts once when the verdict turns,
  and either hands the watchdog the exit (:meth:`Watchdog.pin`: ``/healthz`` 503 ``pinned``,
  the runs released with reason ``pinned``, exit 70 — the wedge's path) or notes the held
  state for ``/healthz`` (200, reason ``pinned_held``) and pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from memory_worker.logs import get_logger
from memory_worker.pipeline.process_metrics import worker_identity
from memory_worker.settings import Settings
from memory_worker.storage.connections import LOG_RETRY_AT, awaited
from memory_worker.worker.watchdog import PINNED, PINNED_HELD, WEDGED_EXIT, Liveness, Watchdog

if TYPE_CHECKING:
    from memory_worker.pipeline.runner import TickRunner

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Sample:
    """One look at the counts: when (a monotonic clock, seconds), this process's claims, this
    worker's completions and the fleet's (Redis)."""

    at: float
    claims: int
    completed: int
    fleet: int


@dataclass(frozen=True, slots=True)
class Pinned:
    """The verdict: pinned or not, and the counts over the window it judged."""

    pinned: bool
    claims: int = 0
    completed: int = 0
    peers: int = 0
    span_s: float = 0.0

    def detail(self) -> tuple[tuple[str, int], ...]:
        """The counts, as ``/healthz`` and the page show them."""
        return (
            ("claims", self.claims),
            ("completed", self.completed),
            ("peer_completions", self.peers),
            ("window_s", int(self.span_s)),
        )


NOT_PINNED = Pinned(False)


def judge_pinned(
    samples: Sequence[Sample],
    *,
    now: float,
    window: float,
    min_claims: int,
    min_peers: int,
) -> Pinned:
    """Pinned when, from the newest sample at least ``window`` older than the latest (the
    baseline) to the latest — itself no older than ``window`` at ``now`` — this worker
    claimed ``min_claims`` runs or more, completed none, and the rest of the fleet completed
    ``min_peers`` or more. ``samples`` oldest first."""
    if not samples:
        return NOT_PINNED
    latest = samples[-1]
    if now - latest.at > window:  # the store stopped answering: nothing is known of now
        return NOT_PINNED
    base = None
    for sample in samples:
        if sample.at <= latest.at - window:
            base = sample
    if base is None:  # up for less than a window
        return NOT_PINNED
    claims = latest.claims - base.claims
    completed = latest.completed - base.completed
    fleet = latest.fleet - base.fleet
    if claims < 0 or completed < 0 or fleet < 0:  # a counter went back: a flushed store
        return NOT_PINNED
    peers = fleet - completed
    verdict = Pinned(
        claims >= min_claims and completed == 0 and peers >= min_peers,
        claims,
        completed,
        peers,
        latest.at - base.at,
    )
    return verdict if verdict.pinned else Pinned(False, claims, completed, peers, verdict.span_s)


def trimmed(samples: Sequence[Sample], window: float) -> list[Sample]:
    """``samples`` without those no judgement needs: every sample older than the newest one
    at least ``window`` before the latest."""
    if not samples:
        return []
    edge = samples[-1].at - window
    keep = 0
    for i, sample in enumerate(samples):
        if sample.at <= edge:
            keep = i
    return list(samples[keep:])


class PinnedMonitor:
    """Samples the counts, judges, and acts (see the module docstring)."""

    def __init__(
        self,
        runner: TickRunner,
        settings: Settings,
        watchdog: Watchdog,
        *,
        identity: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.runner = runner
        self.settings = settings
        self.watchdog = watchdog
        self.identity = identity or worker_identity(socket.gethostname(), settings.worker_slot)
        self._clock = clock
        self._wall_ms = wall_ms
        self.samples: list[Sample] = []
        self.verdict = NOT_PINNED
        #: When the guard last made this worker page instead of exiting (monotonic).
        self.paged_at: float | None = None

    async def run(self, stop: asyncio.Event) -> None:
        """Look every heartbeat period until ``stop``; an error (Redis away) skips a look: the
        monitor never stops the worker it watches."""
        failing = 0
        while not stop.is_set():
            try:
                await self.check()
                failing = 0
            except Exception as exc:
                failing += 1
                if failing in LOG_RETRY_AT or not isinstance(exc, RedisError):
                    log.warning("pinned_check_failed", error=type(exc).__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.settings.worker_heartbeat_seconds)

    async def sample(self) -> Sample:
        """This worker's and the fleet's completions (one round trip) and its claims."""
        keys = self.runner.keys
        async with self.runner.redis.pipeline(transaction=False) as pipe:
            pipe.hget(keys.worker_completed, self.runner.worker_id)
            pipe.hget(keys.counters, "completed")
            mine, fleet = await pipe.execute()
        return Sample(self._clock(), self.runner.claims, int(mine or 0), int(fleet or 0))

    async def check(self) -> Pinned:
        """One look: sample, judge, and act on a verdict that turned pinned."""
        s = self.settings
        self.samples = trimmed([*self.samples, await self.sample()], s.pinned_window_seconds)
        if self.runner.stopping or self.watchdog.pinned is not None:
            return self.verdict
        verdict = judge_pinned(
            self.samples,
            now=self._clock(),
            window=s.pinned_window_seconds,
            min_claims=s.pinned_min_claims,
            min_peers=s.pinned_peer_completions,
        )
        turned = verdict.pinned and not self.verdict.pinned
        self.verdict = verdict
        if not verdict.pinned:
            self.watchdog.note(None)
            return verdict
        if turned:
            log.error(
                "worker_pinned",
                reason=PINNED,
                identity=self.identity,
                window_s=round(verdict.span_s, 1),
                claims=verdict.claims,
                completed=verdict.completed,
                peer_completions=verdict.peers,
                holding=len(self.runner.unsettled),
            )
        if await self._may_exit():
            log.error("worker_pinned_exiting", identity=self.identity, exit_code=WEDGED_EXIT)
            self.watchdog.pin(Liveness(True, PINNED, verdict.span_s, verdict.detail()))
            return verdict
        self.watchdog.note(Liveness(False, PINNED_HELD, verdict.span_s, verdict.detail()))
        await self._page(verdict)
        return verdict

    async def _may_exit(self) -> bool:
        """The restart guard: True (and remembered) when no pinned exit of this identity
        happened within the guard window."""
        taken = await awaited(
            self.runner.redis.set(
                self.runner.keys.pinned_exit(self.identity),
                str(self._wall_ms()),
                nx=True,
                px=int(self.settings.pinned_guard_seconds * 1000),
            )
        )
        return bool(taken)

    async def _page(self, verdict: Pinned) -> None:
        """Page once per guard window while the guard keeps this worker up."""
        now = self._clock()
        if self.paged_at is not None and now - self.paged_at < self.settings.pinned_guard_seconds:
            return
        self.paged_at = now
        log.error(
            "worker_pinned_held",
            identity=self.identity,
            guard_s=self.settings.pinned_guard_seconds,
            claims=verdict.claims,
            peer_completions=verdict.peers,
        )
        hook = self.runner.on_pinned
        if hook is not None:
            try:
                await hook(self.identity, dict(verdict.detail()))
            except Exception as exc:  # paging is bookkeeping: the worker goes on
                log.warning("worker_pinned_page_failed", error=type(exc).__name__)
