"""The run store in Redis (§7): one Lua script per state change.

Layout (all under the queue hash tag, see ``keys.py``):

- ``run:<id>`` HASH — the run (request fields, status, attempts, lease, result);
- ``run:<id>:errors`` LIST — the bounded error log (JSON entries);
- ``runs:nk`` HASH natural key → run id (idempotent enqueue);
- ``runs:queued`` ZSET — queued runs, score ``-range_end_ms`` so ZPOPMIN-order
  is newest window first (ties: older run id first, i.e. continuations in order);
- ``runs:retry`` ZSET — failed runs with attempts left, score = next attempt;
- ``runs:leases`` ZSET — processing runs, score = lease expiry;
- ``runs:retired`` ZSET — retired runs, score = retirement time;
- ``runs:status:<s>`` and ``runs:all`` ZSETs for listing;
- ``runs:daily:<day>`` counters and the ``counters`` HASH for metrics.

Claim is O(log n): three ``ZRANGEBYSCORE … LIMIT 0 1`` / ``ZRANGE 0 0`` probes.
Every change after a claim is fenced by the lease token, so a worker whose
lease was reclaimed can no longer complete, fail or release the run.

**Leases and store faults (§7 rev 2).** An expired lease alone is not
evidence that its owner is gone: during a Redis outage (or a Sentinel
failover, or an OOM that refuses writes) no owner can renew, and a rev 1
claim would reclaim every run in flight the moment Redis answered again,
spending an attempt each time. So an expired lease is reclaimed only when
its owner is **dead** or **no longer holds the run**:

- every worker's heartbeat (:meth:`RunStore.heartbeat`, one script) writes
  its expiry into ``workers`` (ZSET) and the ids of the runs it holds into
  ``workers:runs`` (HASH owner → ``id,id``); a claim appends the claimed id
  to its owner's entry, so a run is listed from the moment it is claimed;
- the store's **pulse** (``workers:pulse``: ``at`` = the last time any worker
  touched the store, ``since`` = when the store last came back after a gap
  longer than one heartbeat TTL) measures time *the store was
  answering*: an owner's heartbeat deadline is never earlier than
  ``since + heartbeat TTL``. After an outage of any length every owner gets
  one heartbeat TTL to show up again before its runs can be taken;
- the claim's expired-lease branch asks :func:`lease_kept_for_owner` (its
  pure twin): owner alive (by heartbeat or the post-outage grace) *and*
  listing the run → the lease is left alone (its index entry moves one
  lease period on); otherwise it is reclaimed (or retired at the last
  attempt) as before — a worker killed with -9 still spends one attempt.

A returning owner renews with its token (the renew script checks only the
token and the status, not the expiry), so it keeps the run exactly when
nobody took it; a renewal answered 0 is the one definite proof of loss.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import orjson
from arq.connections import ArqRedis

from memory_worker.errors import InvalidRunRequest, RunNotFound
from memory_worker.keys import Keys
from memory_worker.models import (
    Cursor,
    ErrorLogEntry,
    Message,
    Run,
    RunRequest,
    RunStatus,
)
from memory_worker.runs import FailurePlan
from memory_worker.settings import Settings

_SET_STATUS = """
local function set_status(rk, id, status_prefix, from, to, now)
  if from then redis.call('ZREM', status_prefix .. from, id) end
  redis.call('ZADD', status_prefix .. to, now, id)
  redis.call('HSET', rk, 'status', to, 'updated_at', now)
end
local function clear_lease(rk)
  redis.call('HSET', rk, 'lease_owner', '', 'lease_token', '', 'leased_until', '')
end
"""

_PULSE = """
local function touch_pulse(pk, now, gap)
  local at = tonumber(redis.call('HGET', pk, 'at') or '')
  if (not at) or now - at > gap then redis.call('HSET', pk, 'since', now) end
  if (not at) or now > at then redis.call('HSET', pk, 'at', now) end
end
"""

_ENQUEUE = """
-- KEYS: nk, queued, leases, daily, run, all, status:queued, counters
-- ARGV: nk, id, now, max_queued, max_daily, daily_ttl, bypass_caps, qscore, fields...
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then
  redis.call('HINCRBY', KEYS[8], 'enqueue:duplicate', 1)
  return {'duplicate', existing}
end
if ARGV[7] ~= '1' then
  local active = redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3])
  if active >= tonumber(ARGV[4]) then
    redis.call('HINCRBY', KEYS[8], 'enqueue:queue_full', 1)
    return {'queue_full', ''}
  end
  if tonumber(redis.call('GET', KEYS[4]) or '0') >= tonumber(ARGV[5]) then
    redis.call('HINCRBY', KEYS[8], 'enqueue:daily_cap', 1)
    return {'daily_cap', ''}
  end
end
local fields = {}
for i = 9, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[5], unpack(fields))
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[8], ARGV[2])
redis.call('ZADD', KEYS[6], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[7], ARGV[3], ARGV[2])
if ARGV[7] ~= '1' then
  redis.call('INCR', KEYS[4])
  redis.call('EXPIRE', KEYS[4], ARGV[6])
end
redis.call('HINCRBY', KEYS[8], 'enqueue:enqueued', 1)
return {'enqueued', ARGV[2]}
"""

_CLAIM = (
    _SET_STATUS
    + _PULSE
    + """
-- KEYS: queued, retry, leases, retired, counters, workers, worker_runs, pulse
-- ARGV: now, lease_ms, owner, token, prompt_version, max_attempts, run_prefix,
--       status_prefix, max_loops, error_log_max, heartbeat_ttl_ms, pulse_gap_ms
local now = tonumber(ARGV[1])
local max_attempts = tonumber(ARGV[6])
local ttl = tonumber(ARGV[11])
touch_pulse(KEYS[8], now, tonumber(ARGV[12]))
local since = tonumber(redis.call('HGET', KEYS[8], 'since') or '')
-- lease_kept_for_owner() in run_store.py is this function's Python twin
local function kept_for_owner(rk, id)
  local owner = redis.call('HGET', rk, 'lease_owner')
  if (not owner) or owner == '' then return false end
  local expiry = tonumber(redis.call('ZSCORE', KEYS[6], owner) or '')
  if not expiry then return false end
  local held = redis.call('HGET', KEYS[7], owner) or ''
  if not string.find(',' .. held .. ',', ',' .. id .. ',', 1, true) then return false end
  local alive_until = expiry
  if since and since + ttl > alive_until then alive_until = since + ttl end
  return now <= alive_until
end
local retired, skipped = {}, {}
for _ = 1, tonumber(ARGV[9]) do
  local id, bucket
  local hit = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1)
  if #hit > 0 then
    id, bucket = hit[1], 3
  else
    hit = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1)
    if #hit > 0 then
      id, bucket = hit[1], 2
    else
      hit = redis.call('ZRANGE', KEYS[1], 0, 0)
      if #hit == 0 then return {{}, retired, skipped} end
      id, bucket = hit[1], 1
    end
  end
  redis.call('ZREM', KEYS[bucket], id)
  local rk = ARGV[7] .. id
  local status = redis.call('HGET', rk, 'status')
  if status and bucket == 3 and kept_for_owner(rk, id) then
    -- a live owner still works on it (it could not renew while the store was away)
    local until_ms = now + tonumber(ARGV[2])
    redis.call('ZADD', KEYS[3], until_ms, id)
    redis.call('HSET', rk, 'leased_until', until_ms)
    redis.call('HINCRBY', KEYS[5], 'lease_kept_for_owner', 1)
    status = nil
  end
  if status then
    local attempts = tonumber(redis.call('HGET', rk, 'attempts') or '0')
    if redis.call('HGET', rk, 'prompt_version') ~= ARGV[5] then
      set_status(rk, id, ARGV[8], status, 'skipped', now)
      skipped[#skipped + 1] = id
      clear_lease(rk)
      redis.call('HSET', rk, 'next_attempt_at', '')
      redis.call('HINCRBY', KEYS[5], 'skipped:prompt_version', 1)
    elseif bucket == 3 and attempts >= max_attempts then
      local entry = cjson.encode({attempt = attempts, failed_at = now, code = 'lease_expired',
        reason = 'worker_lost', message = 'lease expired after the final attempt', kind = 'retired'})
      redis.call('RPUSH', rk .. ':errors', entry)
      redis.call('LTRIM', rk .. ':errors', -tonumber(ARGV[10]), -1)
      set_status(rk, id, ARGV[8], status, 'failed', now)
      clear_lease(rk)
      redis.call('HSET', rk, 'retired', '1', 'next_attempt_at', '')
      redis.call('ZADD', KEYS[4], now, id)
      redis.call('HINCRBY', KEYS[5], 'retired:worker_lost', 1)
      retired[#retired + 1] = id
    else
      local until_ms = now + tonumber(ARGV[2])
      set_status(rk, id, ARGV[8], status, 'processing', now)
      redis.call('HSET', rk, 'attempts', attempts + 1, 'lease_owner', ARGV[3],
        'lease_token', ARGV[4], 'leased_until', until_ms, 'next_attempt_at', '')
      redis.call('ZADD', KEYS[3], until_ms, id)
      local mine = redis.call('HGET', KEYS[7], ARGV[3])
      redis.call('HSET', KEYS[7], ARGV[3], (mine and mine ~= '') and (mine .. ',' .. id) or id)
      redis.call('HINCRBY', KEYS[5], 'claimed:' .. ({'queued', 'retry', 'lease_expired'})[bucket], 1)
      return {redis.call('HGETALL', rk), retired, skipped}
    end
  end
end
return {{}, retired, skipped}
"""
)

_HEARTBEAT = (
    _PULSE
    + """
-- KEYS: workers, worker_runs, pulse, worker_concurrency
-- ARGV: now, ttl_ms, owner, concurrency, pulse_gap_ms, held run ids (comma-separated)
local now = tonumber(ARGV[1])
touch_pulse(KEYS[3], now, tonumber(ARGV[5]))
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[4])
if ARGV[6] == '' then
  redis.call('HDEL', KEYS[2], ARGV[3])
else
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[6])
end
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')
"""
)

_DEREGISTER = """
-- KEYS: workers, worker_runs, worker_concurrency   ARGV: owner
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
"""

_RENEW = """
-- KEYS: run, leases   ARGV: token, until_ms, id
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'status') ~= 'processing' then
  return 0
end
redis.call('HSET', KEYS[1], 'leased_until', ARGV[2])
redis.call('ZADD', KEYS[2], 'XX', ARGV[2], ARGV[3])
return 1
"""

_COMPLETE = (
    _SET_STATUS
    + """
-- KEYS: run, leases, counters   ARGV: token, now, result, status_prefix, id
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'status') ~= 'processing' then
  return 0
end
set_status(KEYS[1], ARGV[5], ARGV[4], 'processing', 'completed', tonumber(ARGV[2]))
clear_lease(KEYS[1])
redis.call('HSET', KEYS[1], 'result', ARGV[3], 'retired', '0')
redis.call('HDEL', KEYS[1], 'messages')
redis.call('ZREM', KEYS[2], ARGV[5])
redis.call('HINCRBY', KEYS[3], 'completed', 1)
return 1
"""
)

_FAIL = (
    _SET_STATUS
    + """
-- KEYS: run, errors, leases, retry, retired, counters
-- ARGV: token, now, entry, next_attempt_ms ('' = retire), log_max, status_prefix, reason, id
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'status') ~= 'processing' then
  return 0
end
local now = tonumber(ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[5]), -1)
set_status(KEYS[1], ARGV[8], ARGV[6], 'processing', 'failed', now)
clear_lease(KEYS[1])
redis.call('ZREM', KEYS[3], ARGV[8])
redis.call('HINCRBY', KEYS[6], 'failed:' .. ARGV[7], 1)
if ARGV[4] == '' then
  redis.call('HSET', KEYS[1], 'retired', '1', 'next_attempt_at', '')
  redis.call('ZADD', KEYS[5], now, ARGV[8])
  redis.call('HINCRBY', KEYS[6], 'retired:' .. ARGV[7], 1)
  return 2
end
redis.call('HSET', KEYS[1], 'next_attempt_at', ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[8])
return 1
"""
)

_RELEASE = (
    _SET_STATUS
    + """
-- KEYS: run, leases, queued, counters   ARGV: token, now, reason, status_prefix, id
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'status') ~= 'processing' then
  return 0
end
local attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0')
if attempts > 0 then attempts = attempts - 1 end
set_status(KEYS[1], ARGV[5], ARGV[4], 'processing', 'queued', tonumber(ARGV[2]))
clear_lease(KEYS[1])
redis.call('HSET', KEYS[1], 'attempts', attempts, 'next_attempt_at', '')
redis.call('HINCRBY', KEYS[1], 'releases', 1)
redis.call('ZREM', KEYS[2], ARGV[5])
redis.call('ZADD', KEYS[3], redis.call('HGET', KEYS[1], 'qscore'), ARGV[5])
redis.call('HINCRBY', KEYS[4], 'released:' .. ARGV[3], 1)
return 1
"""
)

_PRUNE = """
-- KEYS: status:completed, status:skipped, all   ARGV: before_ms, limit, run_prefix
-- The natural-key index keeps its entry: the same slice stays a duplicate for good.
local n = 0
for i = 1, 2 do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[i], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
  for _, id in ipairs(ids) do
    local rk = ARGV[3] .. id
    redis.call('DEL', rk, rk .. ':errors')
    redis.call('ZREM', KEYS[i], id)
    redis.call('ZREM', KEYS[3], id)
    n = n + 1
  end
end
return n
"""

_HAS_CLAIMABLE = """
-- KEYS: queued, retry, leases   ARGV: now
if redis.call('ZCARD', KEYS[1]) > 0 then return 1 end
if #redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 1) > 0 then return 1 end
if #redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, 1) > 0 then return 2 end
return 0
"""


class EnqueueStatus(StrEnum):
    ENQUEUED = "enqueued"
    DUPLICATE = "duplicate"
    QUEUE_FULL = "queue_full"
    DAILY_CAP = "daily_cap"


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    """The typed answer to an enqueue (§7): ``run_id`` is None when capped."""

    status: EnqueueStatus
    run_id: str | None


@dataclass(frozen=True, slots=True)
class ClaimedRun:
    """A run this worker holds the lease of."""

    id: str
    token: str
    owner: str
    attempts: int
    request: RunRequest
    releases: int


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """A claim's run (None: nothing claimable) and the runs it retired or skipped on the way."""

    run: ClaimedRun | None
    retired: list[str]
    skipped: list[str]


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class Pulse:
    """The store's pulse: last worker touch and when the store last came back (unix ms)."""

    at: int | None
    since: int | None


def touch_pulse(pulse: Pulse, *, now: int, gap_ms: int) -> Pulse:
    """A worker touched the store at ``now``; a silence longer than ``gap_ms`` restarts ``since``.

    The Lua ``touch_pulse`` in the claim and heartbeat scripts is a line-by-line translation.
    """
    since = now if pulse.at is None or now - pulse.at > gap_ms else pulse.since
    at = now if pulse.at is None or now > pulse.at else pulse.at
    return Pulse(at, since)


def lease_kept_for_owner(
    *,
    owner_expiry_ms: int | None,
    owner_lists_run: bool,
    since_ms: int | None,
    now: int,
    heartbeat_ttl_ms: int,
) -> bool:
    """Whether a claim must leave an *expired* lease to its owner (§7 rev 2).

    The owner keeps it while it is alive — its heartbeat has not expired, or the
    store came back less than one heartbeat TTL ago (nobody could heartbeat while
    it was away) — and its heartbeat still lists the run. A dead owner, or a live
    one that dropped the run, loses it. The claim script's ``kept_for_owner`` is
    the Lua twin.
    """
    if owner_expiry_ms is None or not owner_lists_run:
        return False
    alive_until = owner_expiry_ms
    if since_ms is not None:
        alive_until = max(alive_until, since_ms + heartbeat_ttl_ms)
    return now <= alive_until


def new_run_id(at_ms: int) -> str:
    """Time-sortable id: 12 hex digits of ms, then 8 random hex digits."""
    return f"r{at_ms:012x}{secrets.token_hex(4)}"


def _ms_to_dt(value: str | bytes | None) -> datetime | None:
    if value in (None, "", b""):
        return None
    assert value is not None
    return datetime.fromtimestamp(int(value) / 1000, tz=UTC)


class RunStore:
    """Redis adapter for runs; every state change is one atomic script."""

    def __init__(self, redis: ArqRedis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self._enqueue = redis.register_script(_ENQUEUE)
        self._claim = redis.register_script(_CLAIM)
        self._renew = redis.register_script(_RENEW)
        self._heartbeat = redis.register_script(_HEARTBEAT)
        self._deregister = redis.register_script(_DEREGISTER)
        self._complete = redis.register_script(_COMPLETE)
        self._fail = redis.register_script(_FAIL)
        self._release = redis.register_script(_RELEASE)
        self._has_claimable = redis.register_script(_HAS_CLAIMABLE)
        self._prune = redis.register_script(_PRUNE)

    @property
    def _status_prefix(self) -> str:
        return self.keys.by_status("")

    @property
    def heartbeat_ttl_ms(self) -> int:
        """A worker whose heartbeat is older than this is dead (3 heartbeat periods)."""
        return int(self.settings.worker_heartbeat_seconds * 3000)

    @property
    def pulse_gap_ms(self) -> int:
        """A store silence longer than this (one heartbeat TTL) counts as an outage.

        Shorter silences cannot strand a run: a lease renewed on schedule outlives
        them, and the owner renews within about a second of Redis answering."""
        return self.heartbeat_ttl_ms

    # --- enqueue ------------------------------------------------------------------------------
    def check_limits(self, request: RunRequest, encoded: bytes) -> None:
        """Size limits of the settings; raises InvalidRunRequest listing every problem."""
        s = self.settings
        problems: list[str] = []
        if len(request.messages) > s.max_run_messages:
            problems.append(f"messages: at most {s.max_run_messages} messages per run")
        for i, msg in enumerate(request.messages):
            if len(msg.text) > s.max_message_chars:
                problems.append(f"messages.{i}.text: longer than {s.max_message_chars} characters")
        if len(encoded) > s.max_run_bytes:
            problems.append(f"payload: {len(encoded)} bytes exceeds {s.max_run_bytes}")
        if problems:
            raise InvalidRunRequest(problems)

    async def enqueue(
        self, request: RunRequest, *, bypass_caps: bool = False, at_ms: int | None = None
    ) -> EnqueueResult:
        """Store a validated run unless it exists or a cap says no (atomic)."""
        now = at_ms if at_ms is not None else now_ms()
        messages = request.messages_json()
        self.check_limits(request, messages)
        pv = request.prompt_version or self.settings.prompt_version
        natural_key = request.natural_key(pv)
        run_id = new_run_id(now)
        range_end_ms = int(request.range_end.timestamp() * 1000)
        fields: dict[str, str | int | bytes] = {
            "id": run_id,
            "chat_id": request.chat_id,
            "thread_id": request.thread_id,
            "range_start": request.range_start.isoformat(),
            "range_end": request.range_end.isoformat(),
            "prompt_version": pv,
            "cursor": request.cursor.model_dump_json() if request.cursor else "",
            "nk": natural_key,
            "qscore": -range_end_ms,
            "messages": messages,
            "message_count": len(request.messages),
            "status": RunStatus.QUEUED.value,
            "attempts": 0,
            "releases": 0,
            "retired": "0",
            "created_at": now,
            "updated_at": now,
            "next_attempt_at": "",
            "lease_owner": "",
            "lease_token": "",
            "leased_until": "",
            "result": "",
        }
        flat: list[str | int | bytes] = []
        for name, value in fields.items():
            flat.extend((name, value))
        day = datetime.fromtimestamp(now / 1000, tz=UTC).strftime("%Y%m%d")
        k = self.keys
        status, rid = await self._enqueue(
            keys=[
                k.natural_keys,
                k.queued,
                k.leases,
                k.daily(day),
                k.run(run_id),
                k.all_runs,
                self._status_prefix + "queued",
                k.counters,
            ],
            args=[
                natural_key,
                run_id,
                now,
                self.settings.max_queued_runs,
                self.settings.max_daily_enqueued_runs,
                2 * 86_400,
                "1" if bypass_caps else "0",
                -range_end_ms,
                *flat,
            ],
        )
        result_status = EnqueueStatus(_s(status))
        return EnqueueResult(result_status, _s(rid) or None)

    # --- claim and lease ------------------------------------------------------------------------
    async def claim(self, owner: str, *, at_ms: int | None = None) -> ClaimedRun | None:
        """Claim the next run: expired leases, then due retries, then queued (newest first)."""
        return (await self.claim_detailed(owner, at_ms=at_ms)).run

    async def claim_detailed(self, owner: str, *, at_ms: int | None = None) -> ClaimResult:
        """:meth:`claim`, plus the runs the claim retired (lease lost on the last attempt)
        or skipped (another prompt version) on its way, so the caller can report them."""
        now = at_ms if at_ms is not None else now_ms()
        token = secrets.token_hex(8)
        k = self.keys
        raw = await self._claim(
            keys=[
                k.queued,
                k.retry,
                k.leases,
                k.retired,
                k.counters,
                k.workers,
                k.worker_runs,
                k.store_pulse,
            ],
            args=[
                now,
                int(self.settings.lease_seconds * 1000),
                owner,
                token,
                self.settings.prompt_version,
                self.settings.max_attempts,
                k.run_prefix,
                self._status_prefix,
                64,
                self.settings.error_log_max_entries,
                self.heartbeat_ttl_ms,
                self.pulse_gap_ms,
            ],
        )
        fields, retired, skipped = raw
        run = None
        if fields:
            h = _pairs(fields)
            run = ClaimedRun(
                id=h["id"],
                token=token,
                owner=owner,
                attempts=int(h["attempts"]),
                releases=int(h.get("releases") or 0),
                request=_request_from_hash(h),
            )
        return ClaimResult(run, [_s(i) for i in retired], [_s(i) for i in skipped])

    async def heartbeat(
        self, owner: str, held: Sequence[str], *, concurrency: int, at_ms: int | None = None
    ) -> list[str]:
        """Register ``owner`` as alive, holding ``held``; returns the live workers' ids."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        live = await self._heartbeat(
            keys=[k.workers, k.worker_runs, k.store_pulse, k.worker_concurrency],
            args=[
                now,
                self.heartbeat_ttl_ms,
                owner,
                concurrency,
                self.pulse_gap_ms,
                ",".join(sorted(held)),
            ],
        )
        return [_s(w) for w in live]

    async def deregister(self, owner: str) -> None:
        k = self.keys
        await self._deregister(keys=[k.workers, k.worker_runs, k.worker_concurrency], args=[owner])

    async def renew(self, claim: ClaimedRun, *, at_ms: int | None = None) -> bool:
        """Extend the lease, even an expired one nobody took; False = another owner has it.

        The one definite proof that the run is lost: any Redis error is raised, never
        read as a loss (§7 rev 2)."""
        now = at_ms if at_ms is not None else now_ms()
        until = now + int(self.settings.lease_seconds * 1000)
        ok = await self._renew(
            keys=[self.keys.run(claim.id), self.keys.leases], args=[claim.token, until, claim.id]
        )
        return bool(int(ok))

    # --- outcomes -----------------------------------------------------------------------------
    async def complete(
        self, claim: ClaimedRun, result: dict[str, Any], *, at_ms: int | None = None
    ) -> bool:
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        ok = await self._complete(
            keys=[k.run(claim.id), k.leases, k.counters],
            args=[claim.token, now, orjson.dumps(result), self._status_prefix, claim.id],
        )
        return bool(int(ok))

    async def fail(
        self,
        claim: ClaimedRun,
        plan: FailurePlan,
        *,
        code: str,
        reason: str | None,
        message: str,
        at_ms: int | None = None,
    ) -> bool:
        now = at_ms if at_ms is not None else now_ms()
        entry = ErrorLogEntry(
            attempt=claim.attempts,
            failed_at=datetime.fromtimestamp(now / 1000, tz=UTC),
            code=code,
            reason=reason,
            message=message[: self.settings.error_message_max_chars],
            kind="retired" if plan.retire else "failure",
        )
        k = self.keys
        ok = await self._fail(
            keys=[
                k.run(claim.id),
                k.run(claim.id) + ":errors",
                k.leases,
                k.retry,
                k.retired,
                k.counters,
            ],
            args=[
                claim.token,
                now,
                entry.model_dump_json(),
                "" if plan.next_attempt_at_ms is None else plan.next_attempt_at_ms,
                self.settings.error_log_max_entries,
                self._status_prefix,
                reason or "not_retryable",
                claim.id,
            ],
        )
        return bool(int(ok))

    async def release(self, claim: ClaimedRun, *, reason: str, at_ms: int | None = None) -> bool:
        """Back to queued, attempt refunded, lease cleared, ``releases`` + 1."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        ok = await self._release(
            keys=[k.run(claim.id), k.leases, k.queued, k.counters],
            args=[claim.token, now, reason, self._status_prefix, claim.id],
        )
        return bool(int(ok))

    async def prune_finished(self, *, at_ms: int | None = None, batch: int = 1000) -> int:
        """Delete completed/skipped runs older than the retention (in batches); returns how many."""
        now = at_ms if at_ms is not None else now_ms()
        before = now - int(self.settings.completed_run_retention_days * 86_400_000)
        k = self.keys
        total = 0
        while True:
            n = int(
                await self._prune(
                    keys=[
                        self._status_prefix + RunStatus.COMPLETED.value,
                        self._status_prefix + RunStatus.SKIPPED.value,
                        k.all_runs,
                    ],
                    args=[before, batch, k.run_prefix],
                )
            )
            total += n
            if n < batch:
                return total

    # --- reads --------------------------------------------------------------------------------
    async def has_claimable(self, *, at_ms: int | None = None) -> int:
        """0 = nothing to claim; 1 = queued or due retries; 2 = only expired leases."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        return int(await self._has_claimable(keys=[k.queued, k.retry, k.leases], args=[now]))

    async def get(self, run_id: str) -> Run:
        runs = await self.get_many([run_id])
        if not runs:
            raise RunNotFound(run_id)
        return runs[0]

    async def get_many(self, run_ids: Sequence[str]) -> list[Run]:
        if not run_ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for rid in run_ids:
                pipe.hgetall(self.keys.run(rid))
                pipe.lrange(self.keys.run(rid) + ":errors", 0, -1)
            raw = await pipe.execute()
        runs: list[Run] = []
        for i in range(0, len(raw), 2):
            h = {_s(key): _s(val) for key, val in raw[i].items()}
            if h:
                runs.append(self._run_from_hash(h, raw[i + 1]))
        return runs

    async def list_runs(self, status: RunStatus | None = None, limit: int = 100) -> list[Run]:
        """Most recently updated first (or created, without a status filter)."""
        key = self.keys.by_status(status.value) if status else self.keys.all_runs
        ids = await self.redis.zrevrange(key, 0, max(limit, 1) - 1)
        return await self.get_many([_s(i) for i in ids])

    async def counts(self) -> dict[str, int]:
        """Runs per status (plus ``retired``), from the indexes."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for status in RunStatus:
                pipe.zcard(self.keys.by_status(status.value))
            pipe.zcard(self.keys.retired)
            values = await pipe.execute()
        out = {status.value: int(v) for status, v in zip(RunStatus, values, strict=False)}
        out["retired"] = int(values[-1])
        return out

    def _run_from_hash(self, h: dict[str, str], errors: list[bytes]) -> Run:
        request_cursor = orjson.loads(h["cursor"]) if h.get("cursor") else None
        return Run(
            id=h["id"],
            status=RunStatus(h["status"]),
            retired=h.get("retired") == "1",
            attempts=int(h.get("attempts") or 0),
            max_attempts=self.settings.max_attempts,
            releases=int(h.get("releases") or 0),
            error_log=[ErrorLogEntry.model_validate_json(e) for e in errors],
            chat_id=int(h["chat_id"]),
            thread_id=int(h["thread_id"]),
            range_start=datetime.fromisoformat(h["range_start"]),
            range_end=datetime.fromisoformat(h["range_end"]),
            prompt_version=h["prompt_version"],
            cursor=Cursor.model_validate(request_cursor) if request_cursor else None,
            message_count=int(h.get("message_count") or 0),
            created_at=_ms_to_dt(h["created_at"]) or datetime.now(UTC),
            updated_at=_ms_to_dt(h["updated_at"]) or datetime.now(UTC),
            next_attempt_at=_ms_to_dt(h.get("next_attempt_at")),
            lease_owner=h.get("lease_owner") or None,
            leased_until=_ms_to_dt(h.get("leased_until")),
            result=orjson.loads(h["result"]) if h.get("result") else None,
        )


def _s(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode()
    return "" if value is None else str(value)


def _pairs(raw: list[Any]) -> dict[str, str]:
    return {_s(raw[i]): _s(raw[i + 1]) for i in range(0, len(raw), 2)}


def _request_from_hash(h: dict[str, str]) -> RunRequest:
    cursor = Cursor.model_validate_json(h["cursor"]) if h.get("cursor") else None
    return RunRequest(
        chat_id=int(h["chat_id"]),
        thread_id=int(h["thread_id"]),
        range_start=datetime.fromisoformat(h["range_start"]),
        range_end=datetime.fromisoformat(h["range_end"]),
        prompt_version=h["prompt_version"],
        cursor=cursor,
        messages=[Message.model_validate(m) for m in orjson.loads(h["messages"])],
    )
