"""The worker's watchdog (§11): a wedged worker releases what it holds and exits non-zero.

Readiness already turns 503 when the poll loop stalls or a tick outlives its budget, but a
supervisor restarts a process on liveness, not readiness: a worker whose poll loop hung, or
whose every busy slot stopped moving (a tick that ignores its cancellation, an event loop
blocked by a synchronous call), would hold its runs forever while ``/healthz`` said 200. Liveness is a heartbeat of the work itself (STYLE: Temporal / procrastinate):

- the **policy** (:func:`judge`, pure): given when the poll loop last began an iteration,
  when each busy slot last made progress (started, claimed, processed, tried a store write —
  a write retrying through a Redis outage is progress), ``now`` and the window
  (``MEMORY_WATCHDOG_SECONDS``, default tick budget + shutdown grace + 60 s, so no tick within
  its budget can trip it): wedged when the poll loop, or every busy slot, made no progress
  for longer than the window — with the reason. A stopping worker's poll loop is idle by
  design and is not judged (its slots still are: a shutdown can hang on a stuck tick).
- the **shell** (:class:`Watchdog`): a thread, so that it acts even when the event loop is
  blocked. When the policy says wedged it logs one line saying why, stops the worker
  claiming, gives a liveness probe a moment to see ``/healthz`` answer 503 (it does from the
  moment the window passes: :meth:`Watchdog.verdict`), releases the runs the worker holds
  (attempts refunded, reason ``watchdog``) through a Redis client of its own on an event
  loop of its own, and exits with
  :data:`WEDGED_EXIT` (``os._exit``: nothing of a wedged process can be trusted to unwind), so
  ``Procfile``/systemd/Kubernetes restart it.

A **pinned** worker (:mod:`memory_worker.worker.pinned`: demand, no run completed for a
window while its peers complete theirs) leaves the same way: its monitor, on the event loop,
:meth:`Watchdog.pin` s the verdict (reason ``pinned``) and this thread does the rest — 503,
the release (reason ``pinned``) and exit 70. When its restart guard holds it instead, the
monitor :meth:`Watchdog.note` s it: ``/healthz`` stays 200 and says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from memory_worker.logs import get_logger
from memory_worker.runs import ClaimedRun
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import client_from_url, retry_store_write, timeout_options
from memory_worker.wiring import run_store

if TYPE_CHECKING:
    from memory_worker.pipeline.runner import TickRunner

log = get_logger(__name__)

#: The exit status of a wedged worker (EX_SOFTWARE): not 0, so every supervisor restarts it.
WEDGED_EXIT = 70
#: How long a wedged worker lingers after its release, so a liveness probe sees the 503.
LINGER_SECONDS = 1.0


#: The reason of a pinned worker's exit (and of the release of its runs).
PINNED = "pinned"
#: The reason a pinned worker stays up: its restart guard held it, the admins were paged.
PINNED_HELD = "pinned_held"


@dataclass(frozen=True, slots=True)
class Liveness:
    """The watchdog's verdict: wedged (the worker exits) or not, why, for how long nothing
    moved, and the counts behind a pinned verdict (name, value)."""

    wedged: bool
    reason: str | None = None  # poll_loop_stalled | slots_stalled | pinned | pinned_held
    stalled_s: float = 0.0
    detail: tuple[tuple[str, int], ...] = ()


ALIVE = Liveness(False)


def judge(
    *,
    now: float,
    window: float,
    poll_progress: float,
    slots: Mapping[str, float],
    stopping: bool = False,
) -> Liveness:
    """Wedged when the poll loop (unless stopping) or every busy slot (when any is busy) made
    no progress for longer than ``window`` seconds (times in one monotonic clock)."""
    if not stopping and now - poll_progress > window:
        return Liveness(True, "poll_loop_stalled", now - poll_progress)
    if slots:
        latest = max(slots.values())
        if now - latest > window:
            return Liveness(True, "slots_stalled", now - latest)
    return ALIVE


#: Releases the given runs (with the reason) from the watchdog's thread; answers how many.
Release = Callable[[list[ClaimedRun], str], int]


def release_held(url: str, settings: Settings, claims: list[ClaimedRun], reason: str) -> int:
    """Release ``claims`` (``reason``, attempts refunded) on an event loop and a Redis
    client of this thread's own — the worker's loop may be the thing that is wedged. Each
    release retries through a Redis blip for ``MEMORY_SHUTDOWN_RELEASE_SECONDS``, fenced by
    the lease token (a run settled meanwhile answers "not yours")."""

    async def release_all() -> int:
        client = client_from_url(url, **timeout_options(settings))
        try:
            store = run_store(client, settings)
            results = await asyncio.gather(
                *(
                    retry_store_write(
                        "release",
                        partial(store.release, claim, reason=reason),
                        cap=settings.store_retry_max_seconds,
                        give_up_after=settings.shutdown_release_seconds,
                    )
                    for claim in claims
                ),
                return_exceptions=True,
            )
        finally:
            await client.aclose()
        return sum(result is True for result in results)

    return asyncio.run(release_all()) if claims else 0


class Watchdog:
    """Watches a worker's :class:`TickRunner` from a thread; see the module docstring."""

    def __init__(
        self,
        pipeline: TickRunner,
        window: float,
        release: Release | None,
        *,
        exit: Callable[[int], None] = os._exit,
        clock: Callable[[], float] = time.monotonic,
        linger: float = LINGER_SECONDS,
    ) -> None:
        self.pipeline = pipeline
        self.window = window
        self.release = release
        self.check_every = min(1.0, window / 10)
        self.fired: Liveness | None = None
        #: A pinned verdict to act on (set by the pinned monitor on the event loop).
        self.pinned: Liveness | None = None
        #: What ``/healthz`` adds while the restart guard keeps a pinned worker up.
        self.noted: Liveness | None = None
        self._exit = exit
        self._clock = clock
        self._linger = linger
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="watchdog", daemon=True)

    @classmethod
    def arm(cls, pipeline: TickRunner, settings: Settings, url: str | None) -> Watchdog:
        """Start watching ``pipeline``; released through ``url`` (or REDIS_URL), and stopped
        with the worker's other closers."""
        url = url or reveal(settings.redis_url)
        release = partial(release_held, url, settings) if url else None
        watchdog = cls(pipeline, settings.watchdog_window, release)
        pipeline.closers.append(watchdog.aclose)
        watchdog._thread.start()
        return watchdog

    def verdict(self) -> Liveness:
        """Wedged or pinned now? (``/healthz`` asks: 503 from the moment the window has
        passed, or the worker was found pinned.)"""
        if self.fired is not None:
            return self.fired
        pipeline = self.pipeline
        slots: dict[str, float] = {}
        for _ in range(3):  # the worker's loop may change the dict while we copy it
            with contextlib.suppress(RuntimeError):
                slots = dict(pipeline.progress)
                break
        wedge = judge(
            now=self._clock(),
            window=self.window,
            poll_progress=pipeline.poll_progress,
            slots=slots,
            stopping=pipeline.stopping,
        )
        if wedge.wedged:
            return wedge
        return self.pinned or self.noted or wedge

    def pin(self, verdict: Liveness) -> None:
        """The worker is pinned and may exit: the next look fires (release, exit 70)."""
        self.pinned = verdict

    def note(self, verdict: Liveness | None) -> None:
        """What ``/healthz`` says of a pinned worker the restart guard keeps up (None: no
        longer pinned)."""
        self.noted = verdict

    def check(self) -> bool:
        """One look; on a wedge, fire (release, exit). True when it fired."""
        verdict = self.verdict()
        if verdict.wedged:
            self._fire(verdict)
        return verdict.wedged

    def _watch(self) -> None:
        while not self._stop.wait(self.check_every):
            if self.check():
                return

    def _fire(self, verdict: Liveness) -> None:
        self.fired = verdict
        pinned = verdict.reason == PINNED
        event = "worker_pinned" if pinned else "worker_wedged"
        if not pinned:  # a pinned worker's monitor logged why, with its counts
            log.error(
                event,
                reason=verdict.reason,
                stalled_s=round(verdict.stalled_s, 1),
                window_s=self.window,
                holding=len(self._held()),
                exit_code=WEDGED_EXIT,
            )
        # claim nothing more (a live loop would take the released runs straight back); the
        # linger lets a claim in flight land and a liveness probe see /healthz answer 503
        self.pipeline.stopping = True
        self._stop.wait(self._linger)
        claims = self._held()
        released = 0
        if self.release is not None:
            try:
                released = self.release(claims, PINNED if pinned else "watchdog")
            except Exception as exc:  # exit all the same: the leases lapse, the runs come back
                log.error(f"{event}_release_failed", error=type(exc).__name__)
        log.error(f"{event}_exit", released=released, of=len(claims), exit_code=WEDGED_EXIT)
        _flush()
        self._exit(WEDGED_EXIT)

    def _held(self) -> list[ClaimedRun]:
        """The runs the worker holds and has not settled (copied from this thread)."""
        for _ in range(3):  # the worker's loop may change the dict while we copy it
            with contextlib.suppress(RuntimeError):
                return list(self.pipeline.unsettled.values())
        return []

    def stop(self) -> None:
        self._stop.set()

    async def aclose(self) -> None:
        self.stop()


def _flush() -> None:
    """Write out what the logs hold before ``os._exit`` skips every buffer."""
    for handler in logging.getLogger().handlers:
        with contextlib.suppress(Exception):
            handler.flush()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
