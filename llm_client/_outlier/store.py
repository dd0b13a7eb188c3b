"""Fleet-shared outlier ejection in Redis (§5): the counts and standings of every target.

The policy is :mod:`llm_client._outlier.model`; each script (``lua/outlier_*.lua``) is the
translation of one of its transitions, so every worker of the fleet counts into and reads
the same window, and an ejection (and its panic floor) is decided once, atomically.

Layout per target: ``outlier(target)`` — HASH ``until, times, at`` (the ejection) and
``b<slot>, s<slot>, f<slot>`` (the ring buckets: bucket number, successes, failures), in
the routing hash tag next to the breakers; idle hashes expire after a day (plus the
longest ejection and a window).

A walker does not write per call: it adds its outcomes up and flushes them with the read
it makes at most once per ``refresh_seconds`` (:meth:`OutlierStore.sync`), one round trip.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, cast

from redis.asyncio import Redis

from llm_client._lua import lua_text
from llm_client._outlier.model import (
    Ejected,
    EjectionConfig,
    Health,
    Tally,
    Verdict,
    allowed,
    standing,
)
from llm_client._redis_text import as_text

_LIB = """
local function num(v) if v then return tonumber(v) end return 0 end
local function s(x) return string.format('%d', x) end
"""

_SYNC = _LIB + lua_text(__package__, "outlier_sync")
_EJECT = _LIB + lua_text(__package__, "outlier_eject")

DAY_MS = 86_400_000


class OutlierKeys(Protocol):
    """The key names the store needs (``memory_worker.keys.Keys`` satisfies it)."""

    def outlier(self, target: str) -> str: ...


class OutlierStore:
    """The fleet's outlier counts and ejections, one hash per route target."""

    def __init__(
        self,
        redis: Redis,
        keys: OutlierKeys,
        config: EjectionConfig,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis = redis
        self._keys = keys
        self.config = config
        self._clock = clock
        self._sync = redis.register_script(_SYNC)
        self._eject = redis.register_script(_EJECT)

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    @property
    def ttl_ms(self) -> int:
        return DAY_MS + self.config.max_ms + self.config.window_ms

    async def sync(
        self,
        targets: Sequence[str],
        counts: Mapping[str, tuple[int, int]] | None = None,
        *,
        now_ms: int | None = None,
    ) -> list[Tally]:
        """Add ``counts`` (target → successes, failures) and read every target's window and
        standing, in the given order (one round trip)."""
        now = self.now_ms() if now_ms is None else now_ms
        counts = counts or {}
        cfg = self.config
        args: list[Any] = [now, cfg.bucket_ms, cfg.buckets, self.ttl_ms]
        for target in targets:
            ok, bad = counts.get(target, (0, 0))
            args += [max(ok, 0), max(bad, 0)]
        reply = await self._sync(keys=[self._keys.outlier(t) for t in targets], args=args)
        tallies = []
        for target, (ok, bad, until, times) in zip(targets, reply, strict=True):
            where = standing(Health(ejected_until_ms=int(until)), now, cfg)
            tallies.append(Tally(target, int(ok), int(bad), where, int(until), int(times)))
        return tallies

    async def eject(
        self, tier: Sequence[str], verdicts: Sequence[Verdict], *, now_ms: int | None = None
    ) -> list[Ejected]:
        """Eject ``verdicts`` (targets of ``tier``, worst first) within the panic floor,
        atomically; returns the ones ejected (none ejected meanwhile by another worker)."""
        if not verdicts:
            return []
        now = self.now_ms() if now_ms is None else now_ms
        cfg = self.config
        index = {target: i for i, target in enumerate(tier)}
        reply = await self._eject(
            keys=[self._keys.outlier(t) for t in tier],
            args=[
                now,
                allowed(len(tier), cfg),
                cfg.base_ms,
                cfg.max_ms,
                self.ttl_ms,
                *(index[v.target] + 1 for v in verdicts),
            ],
        )
        return [Ejected(tier[int(i) - 1], int(until), int(times)) for i, until, times in reply]

    async def reset(self, target: str) -> None:
        """Operator reset: in rotation, counts and ejections forgotten."""
        await self._redis.delete(self._keys.outlier(target))

    async def health(self, target: str) -> Health:
        """The stored state of ``target`` (for the twin tests and the operators)."""
        stored = await cast(
            Awaitable[dict[Any, Any]], self._redis.hgetall(self._keys.outlier(target))
        )
        raw = {as_text(k): int(v) for k, v in stored.items()}
        ring = {
            int(name[1:]): (value, raw.get(f"s{name[1:]}", 0), raw.get(f"f{name[1:]}", 0))
            for name, value in raw.items()
            if name.startswith("b")
        }
        return Health(raw.get("until", 0), raw.get("times", 0), raw.get("at", 0), ring)
