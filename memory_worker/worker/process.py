"""The ``memory-worker run`` process: wait for Redis, run the worker, stop within bounds.

Every phase obeys SIGTERM and SIGINT:

- **start-up** — Redis may be down (or go away while the worker starts): the
  process waits with capped back-off, and a signal ends the wait at once
  (``worker_stopped_while_starting``). arq's own handlers exist only while an
  arq ``Worker`` runs; between attempts :class:`StopSignals` holds them.
- **running** — arq's handlers: stop claiming, let in-flight runs finish within
  ``MEMORY_SHUTDOWN_GRACE_SECONDS``, cancel the rest.
- **shutdown release** — ``on_shutdown`` gives back the runs a cancelled tick
  left unsettled, retrying for ``MEMORY_SHUTDOWN_RELEASE_SECONDS`` while Redis is
  away. The whole close is bounded by that grace (plus
  :data:`CLOSE_MARGIN_SECONDS`: a single Redis call may hang for its socket
  timeout), and another signal cuts it short (``shutdown_release_cut``): the
  connections are dropped so that calls waiting on an unanswering Redis fail, and
  if tasks still hold on (arq shields its job finish) the process exits at once —
  the runs still held go back when their leases expire, as after a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import redis.exceptions as rx
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memory_worker.errors import StoreError
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.settings import Settings

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from memory_worker.worker.main import MemoryWorker

log = get_logger(__name__)
T = TypeVar("T")

_REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError, RedisError)
#: Answers that waiting cannot change (wrong password, an ACL refusal): raised at once, the CLI
#: says which in one line.
_REDIS_REFUSES = (rx.AuthenticationError, rx.AuthorizationError, rx.NoPermissionError)
#: What the close may take beyond ``MEMORY_SHUTDOWN_RELEASE_SECONDS`` (deregistering,
#: stopping the loops) before it is cut.
CLOSE_MARGIN_SECONDS = 2.0


class StopSignals:
    """SIGTERM/SIGINT as an event, for the phases no arq ``Worker`` handles them in."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.received: str | None = None

    def install(self) -> None:
        """Handle both signals from now on (replacing arq's handlers of a finished worker)."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._receive, sig)

    def _receive(self, sig: signal.Signals) -> None:
        self.received = sig.name
        self.event.set()

    @property
    def stopping(self) -> bool:
        return self.event.is_set()

    async def sleep(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless a signal comes first (True then)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.event.wait(), seconds)
        return self.stopping

    async def race(self, awaitable: Awaitable[T], timeout: float | None = None) -> T | None:
        """``awaitable``'s result, or None once a signal came or ``timeout`` passed first
        (then it is cancelled); its exception propagates."""
        task = asyncio.ensure_future(awaitable)
        waiter = asyncio.ensure_future(self.event.wait())
        try:
            await asyncio.wait({task, waiter}, timeout=timeout, return_when="FIRST_COMPLETED")
        finally:
            waiter.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        return None


async def wait_for_redis(redis: Redis, signals: StopSignals, cap: float) -> bool:
    """PING until Redis answers (True) or a signal comes (False), backing off up to ``cap``."""
    # a paused Redis says nothing: after a second this says where we are (a Redis that answers
    # at once — or refuses the credentials at once — leaves no line)
    waiting = asyncio.get_running_loop().call_later(
        1.0, lambda: log.info("worker_waiting_for_redis")
    )
    delay = 0.5
    try:
        while not signals.stopping:
            try:
                if await signals.race(redis.ping()) is not None:
                    return True
            except _REDIS_REFUSES:
                raise
            except _REDIS_DOWN as exc:
                log.warning(
                    "redis_unavailable_at_startup", error=type(exc).__name__, retry_in=delay
                )
                await signals.sleep(delay)
                delay = min(delay * 2, cap)
        return False
    finally:
        waiting.cancel()


async def close_within(worker: MemoryWorker, signals: StopSignals, settings: Settings) -> None:
    """``worker.close()`` — the shutdown release — bounded by its grace, cut by a signal."""
    signals.install()  # arq's handlers would only start another grace wait
    budget = settings.shutdown_release_seconds + CLOSE_MARGIN_SECONDS
    log.info("worker_closing", budget_seconds=budget)
    closing = asyncio.ensure_future(worker.close())

    async def closed() -> bool:
        await asyncio.shield(closing)
        return True

    try:
        if await signals.race(closed(), timeout=budget):
            return
    except _REDIS_DOWN:
        return
    closing.cancel()
    await _drop_connections(worker)  # calls waiting on an unanswering Redis fail now
    done, _ = await asyncio.wait({closing}, timeout=1.0)
    runner = worker.ctx.get("runner")
    log.warning(
        "shutdown_release_cut",
        reason="signal" if signals.stopping else "timeout",
        signal=signals.received,
        budget_seconds=budget,
        unsettled=len(runner.unsettled) if runner is not None else 0,
    )
    if not done:
        # tasks still inside a shielded Redis call would hold asyncio.run's clean-up for a
        # socket timeout: what the runs hold goes back when their leases expire
        logging.shutdown()
        os._exit(0)


async def _drop_connections(worker: MemoryWorker) -> None:
    """Close every connection of the worker's pool, those in use included."""
    redis = worker.ctx.get("redis")
    if redis is None:
        return
    with contextlib.suppress(Exception):
        await asyncio.wait_for(redis.connection_pool.disconnect(inuse_connections=True), 1.0)


async def run_worker(
    settings: Settings, *, on_worker: Callable[[MemoryWorker], None] | None = None
) -> None:
    """``memory-worker run``: connect (embedded Valkey if no REDIS_URL) and work until SIGTERM.

    ``on_worker`` sees the worker before it starts (``run --serve`` reads its loop heartbeat).
    """
    from memory_worker.storage.checks import check_access
    from memory_worker.storage.connections import client_from_url, resolve_url, timeout_options
    from memory_worker.worker.main import create_worker

    url, embedded = resolve_url(settings)
    signals = StopSignals()
    delay = 0.5
    try:
        while True:
            signals.install()
            redis = client_from_url(url, **timeout_options(settings))
            if not await wait_for_redis(redis, signals, settings.redis_reconnect_max_seconds):
                await redis.aclose()
                log.info("worker_stopped_while_starting", signal=signals.received)
                return
            # Redis answered: arq's worker takes the signals over until it returns
            worker = create_worker(settings, redis, url=url)
            if on_worker is not None:
                on_worker(worker)
            try:
                # before arq's start reads INFO: a refused key or command is one clear error
                await check_access(redis, Keys(settings.key_prefix))
                await worker.async_run()
                return
            except asyncio.CancelledError:
                return
            except _REDIS_REFUSES:
                raise
            except (*_REDIS_DOWN, StoreError) as exc:  # the queue's or the cards' store went away
                log.warning(
                    "redis_unavailable_at_startup", error=type(exc).__name__, retry_in=delay
                )
                delay = min(delay * 2, settings.redis_reconnect_max_seconds)
                if await signals.sleep(delay):
                    return
            finally:
                await close_within(worker, signals, settings)
    finally:
        if embedded is not None:
            embedded.stop()
