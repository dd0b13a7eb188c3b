"""Fleet-shared circuit breakers in Redis (§5): one Lua script per transition.

The policy lives in ``llm_client._breaker.model`` (pure, tested without Redis); each
script (``lua/breaker_*.lua``) is a line-by-line translation of one of its functions, so every
worker process of the fleet sees and changes the same breaker atomically, and
the state survives worker restarts. A test drives random outcome sequences
through both and asserts identical states.

Layout per target ``provider/model``:

- ``breaker(target)`` — HASH ``opened, gen, consec, trips, opened_at,
  open_until, probe_until, seq, ttl_at`` (milliseconds; idle hashes expire after a week);
- ``breaker_window(target)`` — ZSET of recent calls for the failure-rate rule,
  member ``<seq>:<1|0>`` (1 = charged failure), score = time in ms; entries older than
  the window may linger (successes prune lazily): readers prune by time.

TTLs without a command per call: ``ttl_at`` is when ``breaker.record`` last set both
keys' TTLs (caller's clock; absent or 0 = not yet, e.g. a new hash or a window deleted by
a close). A closed breaker's success refreshes them only when ``ttl_at`` is absent or at
least one window away from its ``now`` (either way: a worker's clock may be off), so the
TTLs are long enough to outlast that gap: the hash's is a week plus one window (an idle
hash still lives a week after its last call), the window's two windows plus
``WINDOW_TTL_MARGIN_MS`` (every entry outlives its own window, with room for clock
skew). Every 16th call also re-sets the window's TTL (with the lazy prune), so a window
that lost its key meanwhile (an operator's DEL) has a TTL again within 16 calls.
Failures and transitions refresh every time.

Times come from the caller's clock (``now_ms``), like the pure policy; the
fleet's clocks are assumed NTP-synced (a skew of seconds only shifts
cooldowns by that much).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from redis.asyncio import Redis

from llm_client._breaker.model import (
    BreakerConfig,
    BreakerState,
    BreakerView,
    Outcome,
    Permit,
    Transition,
    view,
)
from llm_client._lua import lua_text
from llm_client._redis_text import as_text

#: ``target -> (hash key, field)`` where a recorded success is counted (metrics).
SuccessCounter = Callable[[str], tuple[str, str]]

#: Idle breaker state is forgotten after a week (far beyond any cooldown).
STATE_TTL_MS = 7 * 24 * 3600 * 1000

#: A window's TTL is two windows plus this margin (clock skew between workers and the
#: server; tests pass 0 to watch a window expire).
WINDOW_TTL_MARGIN_MS = 10_000


class BreakerKeys(Protocol):
    """The key names the store needs (``memory_worker.keys.Keys`` satisfies it)."""

    def breaker(self, target: str) -> str: ...

    def breaker_window(self, target: str) -> str: ...

    def failopen_permit(self, workflow: str) -> str: ...

    @property
    def breaker_prefix(self) -> str: ...


_LIB = """
local function num(v) if v then return tonumber(v) end return 0 end
local function s(x) return string.format('%d', x) end
"""


def _lua(name: str) -> str:
    """One transition's script (``lua/breaker_<name>.lua``, documented at its top)."""
    return _LIB + lua_text(__package__, f"breaker_{name}")


_ACQUIRE = _lua("acquire")  # breaker.acquire
_RECORD = _lua("record")  # breaker.record
_RENEW = _lua("renew")  # breaker.renew
_RESET = _lua("reset")  # breaker.reset
_BEGIN = _lua("begin")  # walk.begin: snapshot + the first permit
_ROUTES_OPEN = _lua("routes_open")  # the pre-claim gate of several workflows
_READ = _lua("read")  # one breaker, read consistently


@dataclass(frozen=True, slots=True)
class Begun:
    """What :meth:`BreakerStore.begin` found: closed flags in route order, and the first
    permit granted in the walker's order (``index`` into the route's targets), if any."""

    closed: tuple[bool, ...]
    index: int | None
    permit: Permit | None


def _state_from(raw_hash: Sequence[Any], raw_window: Sequence[Any]) -> BreakerState:
    fields = {
        as_text(raw_hash[i]): int(as_text(raw_hash[i + 1])) for i in range(0, len(raw_hash), 2)
    }
    window = tuple(
        (int(float(as_text(raw_window[i + 1]))), as_text(raw_window[i]).endswith(":1"))
        for i in range(0, len(raw_window), 2)
    )
    return BreakerState(
        opened=fields.get("opened", 0) == 1,
        generation=fields.get("gen", 0),
        consecutive=fields.get("consec", 0),
        trips=fields.get("trips", 0),
        opened_at_ms=fields.get("opened_at", 0),
        open_until_ms=fields.get("open_until", 0),
        probe_until_ms=fields.get("probe_until", 0),
        window=tuple(sorted(window)),
    )


def _glob_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


class BreakerStore:
    """The fleet's breakers, one per route target, in Redis."""

    def __init__(
        self,
        redis: Redis,
        keys: BreakerKeys,
        config: BreakerConfig,
        *,
        clock: Callable[[], float] = time.time,
        success_counter: SuccessCounter | None = None,
        window_ttl_margin_ms: int = WINDOW_TTL_MARGIN_MS,
    ) -> None:
        self._redis = redis
        self._keys = keys
        self.config = config
        self._clock = clock
        #: Where a recorded success counts itself (the attempt metrics), if anywhere.
        self.success_counter = success_counter
        self._window_ttl_margin_ms = window_ttl_margin_ms
        self._begin = redis.register_script(_BEGIN)
        self._routes_open = redis.register_script(_ROUTES_OPEN)
        self._acquire = redis.register_script(_ACQUIRE)
        self._record = redis.register_script(_RECORD)
        self._reset = redis.register_script(_RESET)
        self._renew = redis.register_script(_RENEW)
        self._read = redis.register_script(_READ)

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    async def acquire(
        self,
        target: str,
        *,
        lease_seconds: float,
        workflow: str | None = None,
        interval_seconds: float = 0.0,
        now_ms: int | None = None,
    ) -> Permit | None:
        """Leave for one attempt on ``target`` (``breaker.acquire``), or None if refused.

        With ``workflow``, a probe permit also holds that workflow's fail-open permit
        for ``interval_seconds``, so a fully open route gets no extra fail-open probe
        right after a half-open one."""
        failopen = self._keys.failopen_permit(workflow) if workflow else ""
        interval = interval_seconds if workflow else 0.0
        permit, _ = await self._run_acquire(
            target, failopen, lease_seconds, "normal", interval, now_ms
        )
        return permit

    async def acquire_failopen(
        self,
        target: str,
        workflow: str,
        *,
        lease_seconds: float,
        interval_seconds: float,
        now_ms: int | None = None,
    ) -> tuple[Permit | None, bool]:
        """Like :meth:`acquire`, but an open target may be probed during its cooldown
        when ``workflow``'s fleet-wide fail-open permit (one per ``interval_seconds``)
        is free. Returns the permit and whether the fail-open permit was taken."""
        return await self._run_acquire(
            target,
            self._keys.failopen_permit(workflow),
            lease_seconds,
            "failopen",
            interval_seconds,
            now_ms,
        )

    async def _run_acquire(
        self,
        target: str,
        failopen_key: str,
        lease_seconds: float,
        mode: str,
        interval_seconds: float,
        now_ms: int | None,
    ) -> tuple[Permit | None, bool]:
        now = self.now_ms() if now_ms is None else now_ms
        failopen = failopen_key or self._keys.failopen_permit("-")
        granted, generation, probe, taken = await self._acquire(
            keys=[self._keys.breaker(target), failopen],
            args=[
                now,
                max(round(lease_seconds * 1000), 1),
                mode,
                max(round(interval_seconds * 1000), 0 if mode == "normal" else 1),
                STATE_TTL_MS,
            ],
        )
        if not int(granted):
            return None, False
        return Permit(int(generation), probe=bool(int(probe))), bool(int(taken))

    async def record(
        self,
        target: str,
        permit: Permit,
        outcome: Outcome,
        *,
        now_ms: int | None = None,
        count: bool = False,
    ) -> Transition | None:
        """Apply one attempt's outcome (``breaker.record``); returns the transition, if any.

        ``count``: a success also counts itself in :attr:`success_counter` (same round trip).
        """
        cfg = self.config
        now = self.now_ms() if now_ms is None else now_ms
        keys = [self._keys.breaker(target), self._keys.breaker_window(target)]
        counted: list[str] = []
        if count and self.success_counter is not None and outcome is Outcome.SUCCESS:
            counter_key, counter_field = self.success_counter(target)
            keys.append(counter_key)
            counted.append(counter_field)
        result = await self._record(
            keys=keys,
            args=[
                permit.generation,
                outcome.value,
                now,
                cfg.failure_threshold,
                cfg.rate_min_calls,
                cfg.rate_window_ms,
                repr(float(cfg.rate_threshold)),
                cfg.cooldown_ms,
                cfg.cooldown_max_ms,
                STATE_TTL_MS + cfg.rate_window_ms,
                2 * cfg.rate_window_ms + self._window_ttl_margin_ms,
                *counted,
            ],
        )
        text = as_text(result)
        return Transition(text) if text else None

    async def renew(
        self, target: str, permit: Permit, *, lease_seconds: float, now_ms: int | None = None
    ) -> bool:
        """Extend ``permit``'s probe lease (``breaker.renew``); False once it is not current."""
        if not permit.probe:
            return False  # closed-state permits are shared and never expire
        now = self.now_ms() if now_ms is None else now_ms
        renewed = await self._renew(
            keys=[self._keys.breaker(target)],
            args=[permit.generation, now, max(round(lease_seconds * 1000), 1), STATE_TTL_MS],
        )
        return bool(int(renewed))

    async def begin(
        self,
        targets: Sequence[str],
        workflow: str,
        *,
        lease_seconds: float,
        interval_seconds: float,
        probes: bool = True,
        now_ms: int | None = None,
    ) -> Begun:
        """A walk's first round trip (``walk.begin``): which targets are closed, and the
        first permit :meth:`acquire` would grant in the walker's order (closed targets
        first, then the open ones as probes when ``probes``)."""
        now = self.now_ms() if now_ms is None else now_ms
        index, generation, probe, flags = await self._begin(
            keys=[*(self._keys.breaker(t) for t in targets), self._keys.failopen_permit(workflow)],
            args=[
                now,
                max(round(lease_seconds * 1000), 1),
                max(round(interval_seconds * 1000), 0),
                STATE_TTL_MS,
                int(probes),
            ],
        )
        closed = tuple(bool(int(flag)) for flag in flags)
        if not int(index):
            return Begun(closed, None, None)
        return Begun(closed, int(index) - 1, Permit(int(generation), probe=bool(int(probe))))

    async def routes_open(
        self, routes: Sequence[tuple[str, Sequence[str]]], *, now_ms: int | None = None
    ) -> list[bool]:
        """For each ``(workflow, target ids)``: would a call be refused right now? Takes
        nothing; one round trip for all of them, reading no window."""
        if not routes:
            return []
        now = self.now_ms() if now_ms is None else now_ms
        keys = [self._keys.breaker(t) for _, targets in routes for t in targets]
        keys += [self._keys.failopen_permit(workflow) for workflow, _ in routes]
        flags = await self._routes_open(
            keys=keys, args=[now, *(len(targets) for _, targets in routes)]
        )
        return [bool(int(flag)) for flag in flags]

    async def state(self, target: str) -> BreakerState:
        """The stored state of ``target`` (a never-seen target is a fresh closed breaker)."""
        raw_hash, raw_window = await self._read(
            keys=[self._keys.breaker(target), self._keys.breaker_window(target)]
        )
        return _state_from(raw_hash, raw_window)

    async def view(self, target: str, *, now_ms: int | None = None) -> BreakerView:
        now = self.now_ms() if now_ms is None else now_ms
        return view(target, await self.state(target), now, self.config)

    async def views(
        self, targets: Iterable[str], *, now_ms: int | None = None
    ) -> list[BreakerView]:
        """Views of several targets, read in one round trip, in the given order."""
        names = list(targets)
        now = self.now_ms() if now_ms is None else now_ms
        async with self._redis.pipeline(transaction=False) as pipe:
            for target in names:
                await self._read(
                    keys=[self._keys.breaker(target), self._keys.breaker_window(target)],
                    client=pipe,
                )
            results = await pipe.execute()
        return [
            view(target, _state_from(raw_hash, raw_window), now, self.config)
            for target, (raw_hash, raw_window) in zip(names, results, strict=True)
        ]

    async def known_targets(self) -> list[str]:
        """Every target with stored breaker state, sorted."""
        prefix = self._keys.breaker_prefix
        found = {
            as_text(key)[len(prefix) :]
            async for key in self._redis.scan_iter(match=_glob_escape(prefix) + "*", count=500)
        }
        return sorted(found)

    async def list(self, targets: Iterable[str] = ()) -> list[BreakerView]:
        """Views of ``targets`` plus every stored breaker (the CLI's ``breakers list``)."""
        names = list(dict.fromkeys([*targets, *await self.known_targets()]))
        return await self.views(names)

    async def reset(self, target: str) -> BreakerView:
        """Operator reset: closed, counters cleared, outstanding permits made stale."""
        await self._reset(
            keys=[self._keys.breaker(target), self._keys.breaker_window(target)],
            args=[STATE_TTL_MS],
        )
        return await self.view(target)

    async def failopen_free(self, workflow: str) -> bool:
        """Is ``workflow``'s fail-open permit free right now? (Does not take it.)"""
        return not await self._redis.exists(self._keys.failopen_permit(workflow))


async def list_breakers(
    store: BreakerStore, targets: Iterable[str] = ()
) -> list[dict[str, object]]:
    """``breakers list --json``: the given targets (e.g. every routed one) plus any stored."""
    return [view.as_dict() for view in await store.list(targets)]


async def reset_breaker(store: BreakerStore, target: str) -> dict[str, object]:
    """``breakers reset TARGET``: closed and clean; returns the new state."""
    return (await store.reset(target)).as_dict()
