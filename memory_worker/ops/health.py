"""Liveness and readiness (§11): what ``/healthz`` and ``/readyz`` answer.

- **alive** (``/healthz``): the process answers HTTP, and (``run --serve``) its
  worker is not wedged (:mod:`memory_worker.worker.watchdog`: 503 from the moment the
  watchdog's window has passed, until the worker exits) nor pinned
  (:mod:`memory_worker.worker.pinned`: 503 until it exits). Nothing else — a
  liveness probe that checks dependencies restarts healthy pods during a
  Redis blip.
- **ready** (``/readyz``): every store a run writes takes writes — the queue's Redis
  answers a PING within a short timeout, and the card store (``MEMORY_CARDS_URL``: its
  server, or every master of its cluster with every slot covered) answered the latest probe
  (§11, :mod:`memory_worker.storage.health`, one probe per sampling interval), every node
  a run writes takes a write (``redis_refuses_writes``, ``cards_refuse_writes``: out of
  memory, ``MISCONF``, a read-only replica; §7) — the
  Redis user may use the deployment's keys and run ``INFO``
  (``redis_keys_forbidden``, ``redis_info_forbidden``:
  :func:`memory_worker.storage.checks.access_problems`) and Lua scripts (every enqueue and
  claim is one; a user
  without ``EVALSHA`` would otherwise read as ready while all work fails —
  :func:`memory_worker.storage.checks.scripts_allowed`) and,
  when this process runs a worker, the worker is demonstrably working
  (§11: fed by the work itself, not by a side task): its poll loop's
  last good iteration (``TickRunner.last_loop_ms``, set by
  ``MemoryWorker._poll_iteration`` only) is younger than
  ``MEMORY_READINESS_STALL_SECONDS``, and no tick has run longer than its
  budget (``MEMORY_TICK_TIMEOUT_SECONDS``; ``TickRunner.oldest_tick_age``) —
  a wedged loop or a wedged tick is 503.

A farm outage is **not** unreadiness: the worker is doing exactly what it
should (one delayed probe, runs released). It shows in the body instead —
``pipeline_deferred_since``, the open breakers, the tick counts — and in the
metrics, so a dashboard sees it without a deploy being rolled back for it.

:func:`readiness` is the pure decision; :class:`HealthCheck` gathers the facts.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from redis.asyncio import Redis

from llm_client import BreakerStore, Circuit
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from memory_worker.storage.checks import access_problems, scripts_allowed
from memory_worker.storage.connections import awaited
from memory_worker.storage.health import StoreHealth
from memory_worker.wiring import tick_queue

#: Returns the worker loop's last heartbeat (unix ms), or None before the worker started.
Heartbeat = Callable[[], int | None]

#: Returns how long (s) the worker's longest-running tick has run, or None when none runs.
TickAge = Callable[[], float | None]

#: Returns the codes of the refusals the worker owes runs a release for (§7; empty: none).
WritesRefused = Callable[[], Sequence[str]]


@dataclass(frozen=True, slots=True)
class Verdict:
    ready: bool
    problems: tuple[str, ...]


def readiness(
    *,
    redis_ok: bool,
    runs_worker: bool,
    loop_heartbeat_ms: int | None,
    now_ms: int,
    stall_seconds: float,
    scripts_ok: bool = True,
    oldest_tick_age_s: float | None = None,
    tick_budget_s: float | None = None,
    store_problems: Sequence[str] = (),
    access_problems: Sequence[str] = (),
    settlements_refused: Sequence[str] = (),
) -> Verdict:
    """Ready when Redis answers and lets this user use our keys, commands and scripts, the
    card store takes writes (``store_problems``:
    :func:`memory_worker.storage.health.card_problems`), and (for a worker) its loop and
    ticks are not wedged and it owes no run a release the store refused
    (``settlements_refused``: ``redis_refuses_writes``, as when the probe's write is refused)."""
    problems: list[str] = []
    if not redis_ok:
        problems.append("redis_unreachable")
    else:
        problems += access_problems
        if not scripts_ok:
            problems.append("redis_scripts_forbidden")
    problems.extend(store_problems)
    if settlements_refused and "redis_refuses_writes" not in problems:
        problems.append("redis_refuses_writes")
    if runs_worker:
        if loop_heartbeat_ms is None:
            problems.append("worker_starting")
        elif now_ms - loop_heartbeat_ms > stall_seconds * 1000:
            problems.append("worker_loop_stalled")
        if (
            oldest_tick_age_s is not None
            and tick_budget_s is not None
            and oldest_tick_age_s > tick_budget_s
        ):
            problems.append("tick_past_budget")
    return Verdict(not problems, tuple(problems))


def _iso(ms: float | None) -> str | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()


class HealthCheck:
    """Gathers readiness facts from Redis (short timeouts) and this process's worker."""

    def __init__(
        self,
        redis: Redis,
        settings: Settings,
        *,
        worker_heartbeat: Heartbeat | None = None,
        worker_tick_age: TickAge | None = None,
        worker_writes_refused: WritesRefused | None = None,
        breakers: BreakerStore | None = None,
        targets: Sequence[str] = (),
        stores: StoreHealth | None = None,
        timeout: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.redis = redis
        self.stores = stores
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self.worker_heartbeat = worker_heartbeat
        self.worker_tick_age = worker_tick_age
        self.worker_writes_refused = worker_writes_refused
        self.breakers = breakers
        self.targets = list(targets)
        self.timeout = timeout
        self._clock = clock
        self._ticks = tick_queue(redis, settings)

    async def _ping(self) -> float | None:
        """PING round trip in ms, or None when Redis did not answer within the timeout."""
        start = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout):
                await self.redis.ping()
        except Exception:
            return None
        return (time.perf_counter() - start) * 1000

    async def _scripts(self) -> bool | None:
        """Whether this Redis user may run Lua scripts (None: Redis did not say in time)."""
        try:
            async with asyncio.timeout(self.timeout):
                return await scripts_allowed(self.redis)
        except Exception:
            return None

    async def _access(self) -> list[str]:
        """This user's permission problems (keys, ``INFO``); none when Redis did not say in time."""
        try:
            async with asyncio.timeout(self.timeout):
                return await access_problems(self.redis, self.keys)
        except Exception:
            return []

    async def _outage(self) -> dict[str, Any]:
        """Farm-outage facts for the body (best effort: missing keys when a read fails)."""
        facts: dict[str, Any] = {}
        with contextlib.suppress(Exception):
            async with asyncio.timeout(self.timeout):
                since = await awaited(self.redis.hget(self.keys.pipeline_state, "deferred_since"))
                facts["pipeline_deferred_since"] = _iso(int(since)) if since else None
                counts = await self._ticks.counts()
                facts["ticks"] = {
                    "pending": counts.pending,
                    "delayed": counts.delayed,
                    "running": counts.running,
                }
                if self.breakers is not None and self.targets:
                    views = await self.breakers.views(self.targets)
                    facts["open_breakers"] = [
                        v.target for v in views if v.circuit is not Circuit.CLOSED
                    ]
        return facts

    async def ready(self) -> tuple[bool, dict[str, Any]]:
        """(ready, JSON body) for ``/readyz``."""
        latency = await self._ping()
        scripts = await self._scripts() if latency is not None else None
        stores = await self.stores.problems() if self.stores is not None else ()
        access = await self._access() if latency is not None else []
        now_ms = int(self._clock() * 1000)
        runs_worker = self.worker_heartbeat is not None
        heartbeat = self.worker_heartbeat() if self.worker_heartbeat is not None else None
        tick_age = self.worker_tick_age() if self.worker_tick_age is not None else None
        refused = list(self.worker_writes_refused()) if self.worker_writes_refused else []
        verdict = readiness(
            redis_ok=latency is not None,
            runs_worker=runs_worker,
            loop_heartbeat_ms=heartbeat,
            now_ms=now_ms,
            stall_seconds=self.settings.readiness_stall_seconds,
            scripts_ok=scripts is not False,
            oldest_tick_age_s=tick_age,
            tick_budget_s=self.settings.tick_timeout_seconds,
            store_problems=stores,
            access_problems=access,
            settlements_refused=refused,
        )
        body: dict[str, Any] = {
            "status": "ready" if verdict.ready else "unready",
            "problems": list(verdict.problems),
            "redis": {
                "ok": latency is not None,
                "latency_ms": None if latency is None else round(latency, 2),
                "scripts_allowed": scripts,
            },
            "stores": None
            if self.stores is None
            else {"cards": self.stores.probe.mode, "nodes": self.stores.nodes()},
            "worker": None
            if not runs_worker
            else {
                "loop_heartbeat_at": _iso(heartbeat),
                "loop_heartbeat_age_s": None
                if heartbeat is None
                else round((now_ms - heartbeat) / 1000, 3),
                "stall_seconds": self.settings.readiness_stall_seconds,
                "oldest_tick_age_s": None if tick_age is None else round(tick_age, 3),
                "tick_budget_s": self.settings.tick_timeout_seconds,
                "settlements_refused": refused,
            },
        }
        if latency is not None:
            body.update(await self._outage())
            body["farm_outage"] = bool(
                body.get("pipeline_deferred_since") or body.get("open_breakers")
            )
        return verdict.ready, body
