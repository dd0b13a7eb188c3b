"""Fleet-shared circuit breakers in Redis (§5): one Lua script per transition.

The policy lives in ``llm_client.breaker`` (pure, tested without Redis); each
script below is a line-by-line translation of one of its functions, so every
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

from llm_client.breaker import (
    BreakerConfig,
    BreakerState,
    BreakerView,
    Outcome,
    Permit,
    Transition,
    view,
)
from llm_client.redis_text import as_text

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

# breaker.acquire — KEYS: hash, failopen permit; ARGV: now, lease_ms, mode, failopen_px, ttl.
# mode "normal": closed → shared permit; open → probe only after the cooldown, one at a time.
# mode "failopen": like normal, but during the cooldown the probe is granted when the
# workflow's fleet-wide fail-open permit (SET NX PX) is free, which it then takes.
# Any probe granted with failopen_px > 0 also holds the workflow's fail-open permit for
# that long: a route's half-open probe is that interval's probe, no fail-open on top.
# Returns {granted, generation, probe, failopen_taken}.
_ACQUIRE = (
    _LIB
    + """
local h = KEYS[1]
local now = tonumber(ARGV[1])
local v = redis.call('HMGET', h, 'opened', 'gen', 'open_until', 'probe_until')
local gen = num(v[2])
if num(v[1]) == 0 then return {1, gen, 0, 0} end
if num(v[4]) > now then return {0, gen, 0, 0} end
local taken = 0
if now < num(v[3]) then
  if ARGV[3] ~= 'failopen' then return {0, gen, 0, 0} end
  if not redis.call('SET', KEYS[2], s(now), 'NX', 'PX', ARGV[4]) then return {0, gen, 0, 0} end
  taken = 1
end
gen = gen + 1
redis.call('HSET', h, 'gen', s(gen), 'probe_until', s(now + tonumber(ARGV[2])))
redis.call('PEXPIRE', h, ARGV[5])
if taken == 0 and tonumber(ARGV[4]) > 0 then
  redis.call('SET', KEYS[2], s(now), 'PX', ARGV[4])
end
return {1, gen, 1, taken}
"""
)

# breaker.record — KEYS: hash, window[, success counter]; ARGV: generation, outcome, now,
# failure_threshold, rate_min_calls, rate_window_ms, rate_threshold, cooldown_ms,
# cooldown_max_ms, hash ttl, window ttl[, counter field]. With the counter, a success also
# counts itself there (the attempt metrics, in the same round trip), whatever the generation.
# Returns the transition ("opened", "reopened", "closed") or "".
# A closed breaker's success (most calls) costs HMGET, HINCRBY seq and ZADD: it sets the
# TTLs only when ``ttl_at`` says they may be missing or a window old (module docstring).
_RECORD = (
    _LIB
    + """
local h, w = KEYS[1], KEYS[2]
if KEYS[3] and ARGV[2] == 'success' then redis.call('HINCRBY', KEYS[3], ARGV[12], 1) end
local now = tonumber(ARGV[3])
local window_ms = tonumber(ARGV[6])
local v = redis.call('HMGET', h, 'opened', 'gen', 'consec', 'trips', 'ttl_at')
local gen, consec, trips = num(v[2]), num(v[3]), num(v[4])
if tonumber(ARGV[1]) ~= gen then return '' end
local outcome = ARGV[2]

local function cooldown(t)
  local e = t - 1
  if e < 0 then e = 0 end
  if e >= 32 then return tonumber(ARGV[9]) end
  local c = tonumber(ARGV[8]) * (2 ^ e)
  if c > tonumber(ARGV[9]) then return tonumber(ARGV[9]) end
  return c
end

-- A failure prunes the window before counting it; a success (most calls) prunes every
-- 16th call only: the stale entries it leaves are older than the window, which every
-- reader prunes by time (the rate rule right below, breaker.view). Returns whether
-- this is a 16th call.
local function add_call(failed)
  local seq = redis.call('HINCRBY', h, 'seq', 1)
  local lazy = seq % 16 == 0
  if failed == '1' or lazy then
    redis.call('ZREMRANGEBYSCORE', w, '-inf', s(now - window_ms))
  end
  redis.call('ZADD', w, s(now), s(seq) .. ':' .. failed)
  return lazy
end

local transition = ''
if num(v[1]) == 0 then
  if outcome == 'success' then
    local lazy = add_call('0')
    local ttl_at = num(v[5])
    if ttl_at == 0 or math.abs(now - ttl_at) >= window_ms then
      -- Both TTLs may be missing (new hash, window deleted by a close) or a window old
      -- (or the mark is a window ahead: a worker whose clock is off keeps the TTLs right,
      -- at the old cost).
      redis.call('PEXPIRE', w, ARGV[11])
      redis.call('PEXPIRE', h, ARGV[10])
      redis.call('HSET', h, 'consec', '0', 'ttl_at', s(now))
      return ''
    end
    -- Set at ttl_at: the hash outlives it by a week plus a window, the window by two
    -- windows (plus margin), so both outlive this call by their own spans.
    if lazy then redis.call('PEXPIRE', w, ARGV[11]) end
    if consec ~= 0 then redis.call('HSET', h, 'consec', '0') end
    return ''
  elseif outcome == 'failure' then
    add_call('1')
    redis.call('PEXPIRE', w, ARGV[11])
    consec = consec + 1
    local trip = consec >= tonumber(ARGV[4])
    if not trip then
      local calls = redis.call('ZRANGE', w, 0, -1)
      if #calls >= tonumber(ARGV[5]) then
        local failures = 0
        for _, m in ipairs(calls) do
          if string.sub(m, -2) == ':1' then failures = failures + 1 end
        end
        trip = failures / #calls > tonumber(ARGV[7])
      end
    end
    if trip then
      trips = trips + 1
      redis.call('HSET', h, 'opened', '1', 'gen', s(gen + 1), 'consec', s(consec),
        'trips', s(trips), 'opened_at', s(now), 'open_until', s(now + cooldown(trips)),
        'probe_until', '0', 'ttl_at', s(now))
      transition = 'opened'
    else
      redis.call('HSET', h, 'consec', s(consec), 'gen', s(gen), 'ttl_at', s(now))
    end
  else
    return ''
  end
else
  gen = gen + 1
  if outcome == 'success' then
    -- ttl_at 0: the next success gives the window this DEL removes its TTL again.
    redis.call('HSET', h, 'opened', '0', 'gen', s(gen), 'consec', '0', 'trips', '0',
      'opened_at', '0', 'open_until', '0', 'probe_until', '0', 'ttl_at', '0')
    redis.call('DEL', w)
    transition = 'closed'
  elseif outcome == 'failure' then
    trips = trips + 1
    redis.call('HSET', h, 'gen', s(gen), 'consec', s(consec + 1), 'trips', s(trips),
      'open_until', s(now + cooldown(trips)), 'probe_until', '0')
    transition = 'reopened'
  else
    redis.call('HSET', h, 'gen', s(gen), 'probe_until', '0')
  end
end
redis.call('PEXPIRE', h, ARGV[10])
return transition
"""
)

# breaker.renew — KEYS: hash; ARGV: generation, now, lease_ms, ttl.
# Extends the current probe's lease; returns 1, or 0 when the permit is no longer current.
_RENEW = (
    _LIB
    + """
local h = KEYS[1]
local v = redis.call('HMGET', h, 'opened', 'gen', 'probe_until')
if num(v[1]) == 0 or num(v[2]) ~= tonumber(ARGV[1]) or num(v[3]) <= 0 then return 0 end
redis.call('HSET', h, 'probe_until', s(tonumber(ARGV[2]) + tonumber(ARGV[3])))
redis.call('PEXPIRE', h, ARGV[4])
return 1
"""
)

# breaker.reset — KEYS: hash, window; ARGV: ttl. Closed and clean, next generation.
_RESET = (
    _LIB
    + """
local gen = num(redis.call('HGET', KEYS[1], 'gen')) + 1
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[1], 'opened', '0', 'gen', s(gen), 'consec', '0', 'trips', '0',
  'opened_at', '0', 'open_until', '0', 'probe_until', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return gen
"""
)

# walk.begin — the walk's first round trip: snapshot + the first permit.
# KEYS: the route's target hashes in route order, then the workflow's fail-open permit;
# ARGV: now, lease_ms, failopen_px, ttl, probes (1/0).
# Orders the targets as the walker does (closed first, then the open ones when probes
# are allowed) and takes the first permit ``breaker.acquire`` (mode normal) would grant,
# in that order. Returns {granted index or 0, generation, probe, {closed flags}}.
_BEGIN = (
    _LIB
    + """
local n = #KEYS - 1
local now = tonumber(ARGV[1])
local states, order, flags = {}, {}, {}
for i = 1, n do
  states[i] = redis.call('HMGET', KEYS[i], 'opened', 'gen', 'open_until', 'probe_until')
  if num(states[i][1]) == 0 then flags[i] = 1; order[#order + 1] = i else flags[i] = 0 end
end
if ARGV[5] == '1' then
  for i = 1, n do if flags[i] == 0 then order[#order + 1] = i end end
end
for _, i in ipairs(order) do
  local v = states[i]
  local gen = num(v[2])
  if num(v[1]) == 0 then return {i, gen, 0, flags} end
  if num(v[4]) <= now and now >= num(v[3]) then
    gen = gen + 1
    redis.call('HSET', KEYS[i], 'gen', s(gen), 'probe_until', s(now + tonumber(ARGV[2])))
    redis.call('PEXPIRE', KEYS[i], ARGV[4])
    if tonumber(ARGV[3]) > 0 then
      redis.call('SET', KEYS[n + 1], s(now), 'PX', ARGV[3])
    end
    return {i, gen, 1, flags}
  end
end
return {0, 0, 0, flags}
"""
)

# routes.open — the pre-claim gate of several workflows in one round trip (takes nothing).
# KEYS: every workflow's target hashes (route order, workflow after workflow), then each
# workflow's fail-open permit; ARGV: now, then each workflow's number of targets.
# A workflow is open when no target is admissible (closed, or half-open without a probe in
# flight) and its first target's probe is in flight or its fail-open permit is taken.
_ROUTES_OPEN = (
    _LIB
    + """
local now = tonumber(ARGV[1])
local flows = #ARGV - 1
local first_permit = #KEYS - flows
local at, out = 0, {}
for f = 1, flows do
  local count = tonumber(ARGV[f + 1])
  local open = count > 0
  local first_probe = false
  for i = 1, count do
    local v = redis.call('HMGET', KEYS[at + i], 'opened', 'open_until', 'probe_until')
    local in_flight = num(v[1]) == 1 and num(v[3]) > now
    if num(v[1]) == 0 or (now >= num(v[2]) and not in_flight) then open = false end
    if i == 1 then first_probe = in_flight end
  end
  at = at + count
  if open and not first_probe then
    open = redis.call('EXISTS', KEYS[first_permit + f]) == 1
  end
  out[f] = open and 1 or 0
end
return out
"""
)

# Read one breaker consistently — KEYS: hash, window. Returns {hash fields..., window...}.
_READ = """
return {redis.call('HGETALL', KEYS[1]), redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')}
"""


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
