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
import structlog
from arq.connections import ArqRedis

from llm_client.redis_text import as_text
from memory_worker.connections import awaited
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
from memory_worker.versions import VERSION_ACTION_LUA, ClaimAction, claim_action

log = structlog.get_logger(__name__)

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
-- KEYS: nk, queued, leases, daily, run, all, status:queued, counters, parked counts
-- ARGV: nk, id, now, max_queued, max_daily, daily_ttl, bypass_caps, qscore, run_prefix, fields...
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then
  redis.call('HINCRBY', KEYS[8], 'enqueue:duplicate', 1)
  return {'duplicate', existing}
end
if ARGV[7] ~= '1' then
  -- queued (parked ones included) + processing ...
  local active = redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3])
  for _, n in ipairs(redis.call('HVALS', KEYS[9])) do active = active + tonumber(n) end
  if active >= tonumber(ARGV[4]) then
    -- ... minus replayed runs being processed: they stay outside the cap until they
    -- complete or fail again (§7 rev 2). Only counted when full: O(processing runs).
    for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
      local v = redis.call('HMGET', ARGV[9] .. id, 'uncapped', 'attempts')
      if v[1] == '1' and tonumber(v[2] or '0') <= 1 then active = active - 1 end
    end
  end
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
for i = 10, #ARGV do fields[#fields + 1] = ARGV[i] end
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
    + VERSION_ACTION_LUA
    + _PULSE
    + """
-- KEYS: queued, retry, leases, retired, counters, parked:<own version>, parked counts,
--       workers, worker_runs, pulse
-- ARGV: now, lease_ms, owner, token, prompt_version, max_attempts, run_prefix,
--       status_prefix, max_loops, error_log_max, restore_batch, heartbeat_ttl_ms, pulse_gap_ms
local now = tonumber(ARGV[1])
local max_attempts = tonumber(ARGV[6])
local ttl = tonumber(ARGV[12])
touch_pulse(KEYS[10], now, tonumber(ARGV[13]))
local since = tonumber(redis.call('HGET', KEYS[10], 'since') or '')
-- lease_kept_for_owner() in run_store.py is this function's Python twin
local function kept_for_owner(rk, id)
  local owner = redis.call('HGET', rk, 'lease_owner')
  if (not owner) or owner == '' then return false end
  local expiry = tonumber(redis.call('ZSCORE', KEYS[8], owner) or '')
  if not expiry then return false end
  local held = redis.call('HGET', KEYS[9], owner) or ''
  if not string.find(',' .. held .. ',', ',' .. id .. ',', 1, true) then return false end
  local alive_until = expiry
  if since and since + ttl > alive_until then alive_until = since + ttl end
  return now <= alive_until
end
local retired, skipped = {}, {}
-- prompt versions (§7 rev 2): runs of our version that older workers parked come back
local back = redis.call('ZRANGE', KEYS[6], 0, tonumber(ARGV[11]) - 1, 'WITHSCORES')
for i = 1, #back, 2 do
  redis.call('ZADD', KEYS[1], back[i + 1], back[i])
  redis.call('ZREM', KEYS[6], back[i])
end
if #back > 0 and redis.call('HINCRBY', KEYS[7], ARGV[5], -#back / 2) <= 0 then
  redis.call('HDEL', KEYS[7], ARGV[5])
end
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
      if #hit == 0 then return {{}, retired, skipped, {}} end
      id, bucket = hit[1], 1
    end
  end
  local rk = ARGV[7] .. id
  local status = redis.call('HGET', rk, 'status')
  local pv, action = '', 'claim'
  if status and bucket == 3 and kept_for_owner(rk, id) then
    -- a live owner still works on it (it could not renew while the store was away)
    local until_ms = now + tonumber(ARGV[2])
    redis.call('ZADD', KEYS[3], until_ms, id)
    redis.call('HSET', rk, 'leased_until', until_ms)
    redis.call('HINCRBY', KEYS[5], 'lease_kept_for_owner', 1)
    status = nil
  else
    pv = redis.call('HGET', rk, 'prompt_version') or ''
    action = version_action(pv, ARGV[5])
    if action == 'park' then  -- a newer version: untouched, the caller parks it for its workers
      return {{}, retired, skipped, {id, pv, bucket}}
    end
    redis.call('ZREM', KEYS[bucket], id)
  end
  if status then
    local attempts = tonumber(redis.call('HGET', rk, 'attempts') or '0')
    if action == 'skip' then  -- an older version
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
      if pv == '' then redis.call('HSET', rk, 'prompt_version', ARGV[5]) end  -- takes ours
      local until_ms = now + tonumber(ARGV[2])
      set_status(rk, id, ARGV[8], status, 'processing', now)
      redis.call('HSET', rk, 'attempts', attempts + 1, 'lease_owner', ARGV[3],
        'lease_token', ARGV[4], 'leased_until', until_ms, 'next_attempt_at', '')
      redis.call('ZADD', KEYS[3], until_ms, id)
      local mine = redis.call('HGET', KEYS[9], ARGV[3])
      redis.call('HSET', KEYS[9], ARGV[3], (mine and mine ~= '') and (mine .. ',' .. id) or id)
      redis.call('HINCRBY', KEYS[5], 'claimed:' .. ({'queued', 'retry', 'lease_expired'})[bucket], 1)
      return {redis.call('HGETALL', rk), retired, skipped, {}}
    end
  end
end
return {{}, retired, skipped, {}}
"""
)

_PARK = """
-- KEYS: queued, retry, leases, parked:<version>, parked counts, run, status:queued,
--       status:failed, status:processing, counters
-- ARGV: id, version, bucket (1 queued, 2 retry, 3 expired lease), now
-- A run of a version this worker does not know leaves the shared queue for its
-- version's set; from a retry or a dead worker's lease it waits there as queued
-- (attempts kept: a crash still spent one).
local b = tonumber(ARGV[3])
if redis.call('HGET', KEYS[6], 'prompt_version') ~= ARGV[2]
   or not redis.call('ZSCORE', KEYS[b], ARGV[1]) then
  return 0
end
redis.call('ZREM', KEYS[b], ARGV[1])
redis.call('ZADD', KEYS[4], redis.call('HGET', KEYS[6], 'qscore'), ARGV[1])
redis.call('HINCRBY', KEYS[5], ARGV[2], 1)
if b ~= 1 then
  redis.call('ZREM', KEYS[6 + b], ARGV[1])
  redis.call('ZADD', KEYS[7], ARGV[4], ARGV[1])
  redis.call('HSET', KEYS[6], 'status', 'queued', 'updated_at', ARGV[4], 'next_attempt_at', '',
    'lease_owner', '', 'lease_token', '', 'leased_until', '')
end
redis.call('HINCRBY', KEYS[10], 'parked:prompt_version', 1)
return 1
"""

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
-- KEYS: run, leases, queued, counters, retry   ARGV: token, now, reason, status_prefix, id
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'status') ~= 'processing' then
  return 0
end
local attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0')
if attempts > 0 then attempts = attempts - 1 end
clear_lease(KEYS[1])
redis.call('HINCRBY', KEYS[1], 'releases', 1)
redis.call('ZREM', KEYS[2], ARGV[5])
redis.call('HINCRBY', KEYS[4], 'released:' .. ARGV[3], 1)
-- cap accounting (§7 rev 2): a replayed run that has not failed since its replay (no
-- attempt kept since the replay reset them to 0) goes back to the replay lane — status
-- failed, due now — and stays outside the queued cap through any number of releases.
if redis.call('HGET', KEYS[1], 'uncapped') == '1' and attempts == 0 then
  set_status(KEYS[1], ARGV[5], ARGV[4], 'processing', 'failed', tonumber(ARGV[2]))
  redis.call('HSET', KEYS[1], 'attempts', 0, 'next_attempt_at', ARGV[2])
  redis.call('ZADD', KEYS[5], ARGV[2], ARGV[5])
  return 1
end
set_status(KEYS[1], ARGV[5], ARGV[4], 'processing', 'queued', tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'attempts', attempts, 'next_attempt_at', '')
redis.call('ZADD', KEYS[3], redis.call('HGET', KEYS[1], 'qscore'), ARGV[5])
return 1
"""
)

_PRUNE = """
-- KEYS: status:completed, status:skipped, all, natural-key expiry
-- ARGV: before_ms, limit, run_prefix, natural_key_retention_ms
-- The natural-key index keeps the entry until natural_key_retention after the run was
-- enqueued (_PRUNE_NATURAL_KEYS drops it then): the same slice stays a duplicate that long.
local n = 0
for i = 1, 2 do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[i], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
  for _, id in ipairs(ids) do
    local rk = ARGV[3] .. id
    local v = redis.call('HMGET', rk, 'nk', 'created_at')
    if v[1] then
      redis.call('ZADD', KEYS[4], tonumber(v[2] or '0') + tonumber(ARGV[4]), v[1] .. ' ' .. id)
    end
    redis.call('DEL', rk, rk .. ':errors')
    redis.call('ZREM', KEYS[i], id)
    redis.call('ZREM', KEYS[3], id)
    n = n + 1
  end
end
return n
"""

_PRUNE_NATURAL_KEYS = """
-- KEYS: natural keys, natural-key expiry   ARGV: now, limit
local items = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, item in ipairs(items) do
  local sp = string.find(item, ' ', 1, true)
  local nk, id = string.sub(item, 1, sp - 1), string.sub(item, sp + 1)
  if redis.call('HGET', KEYS[1], nk) == id then redis.call('HDEL', KEYS[1], nk) end
  redis.call('ZREM', KEYS[2], item)
end
return #items
"""

_PRUNE_RETIRED_MESSAGES = """
-- KEYS: retired, prune marks   ARGV: before_ms, limit, run_prefix
-- Retired runs retired before before_ms lose their messages (record and error log stay);
-- a watermark keeps every pass O(newly old runs).
local mark = redis.call('HGET', KEYS[2], 'retired_messages_until')
local low = mark and ('(' .. mark) or '-inf'
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], low, ARGV[1], 'WITHSCORES',
  'LIMIT', 0, tonumber(ARGV[2]))
local n = 0
for i = 1, #rows, 2 do
  local rk = ARGV[3] .. rows[i]
  if redis.call('HGET', rk, 'retired') == '1' then
    n = n + redis.call('HDEL', rk, 'messages')
  end
end
if #rows > 0 then redis.call('HSET', KEYS[2], 'retired_messages_until', rows[#rows]) end
return {#rows / 2, n}
"""

_PRUNE_WORKERS = """
-- KEYS: workers, worker concurrency   ARGV: before_ms
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
end
return #ids
"""

_UNPARK = """
-- KEYS: parked:<version>, queued, parked counts   ARGV: version, limit
local back = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
for i = 1, #back, 2 do
  redis.call('ZADD', KEYS[2], back[i + 1], back[i])
  redis.call('ZREM', KEYS[1], back[i])
end
if redis.call('HINCRBY', KEYS[3], ARGV[1], -#back / 2) <= 0 then
  redis.call('HDEL', KEYS[3], ARGV[1])
end
return #back / 2
"""

_HAS_CLAIMABLE = """
-- KEYS: queued, retry, leases, parked:<own version>   ARGV: now
if redis.call('ZCARD', KEYS[1]) > 0 or redis.call('ZCARD', KEYS[4]) > 0 then return 1 end
if #redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 1) > 0 then return 1 end
if #redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, 1) > 0 then return 2 end
return 0
"""


#: Runs of newer prompt versions one claim parks at most (one round trip each, once per
#: run; then the claim answers "nothing" and the safety net carries on).
PARK_PER_CLAIM = 500
#: Parked runs of the worker's own version one claim moves back to the queue.
RESTORE_PER_CLAIM = 100


class EnqueueStatus(StrEnum):
    ENQUEUED = "enqueued"
    DUPLICATE = "duplicate"
    QUEUE_FULL = "queue_full"
    DAILY_CAP = "daily_cap"


@dataclass(slots=True)
class PruneResult:
    """What one pruning pass removed (README "Bounded growth")."""

    runs: int = 0
    natural_keys: int = 0
    retired_messages: int = 0
    workers: int = 0
    unparked: int = 0


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
        self._park = redis.register_script(_PARK)
        self._prune_nk = redis.register_script(_PRUNE_NATURAL_KEYS)
        self._prune_retired = redis.register_script(_PRUNE_RETIRED_MESSAGES)
        self._prune_workers = redis.register_script(_PRUNE_WORKERS)
        self._unpark = redis.register_script(_UNPARK)

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
        # no version: the run takes the version of the worker that claims it (§7 rev 2)
        pv = request.prompt_version or ""
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
                k.parked_counts,
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
                k.run_prefix,
                *flat,
            ],
        )
        result_status = EnqueueStatus(as_text(status))
        return EnqueueResult(result_status, as_text(rid) or None)

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
        version = self.settings.prompt_version
        retired: list[Any] = []
        skipped: list[Any] = []
        fields: list[Any] = []
        # Each run of a newer version met at the head is parked once (O(log n)) and never
        # seen again by this version's workers; bounded so one claim stays short.
        for _ in range(PARK_PER_CLAIM + 1):
            raw = await self._claim(
                keys=[
                    k.queued,
                    k.retry,
                    k.leases,
                    k.retired,
                    k.counters,
                    k.parked(version),
                    k.parked_counts,
                    k.workers,
                    k.worker_runs,
                    k.store_pulse,
                ],
                args=[
                    now,
                    int(self.settings.lease_seconds * 1000),
                    owner,
                    token,
                    version,
                    self.settings.max_attempts,
                    k.run_prefix,
                    self._status_prefix,
                    64,
                    self.settings.error_log_max_entries,
                    RESTORE_PER_CLAIM,
                    self.heartbeat_ttl_ms,
                    self.pulse_gap_ms,
                ],
            )
            fields, more_retired, more_skipped, park = raw
            retired += more_retired
            skipped += more_skipped
            if not park:
                break
            await self._park_run(as_text(park[0]), as_text(park[1]), int(park[2]), now)
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
        return ClaimResult(run, [as_text(i) for i in retired], [as_text(i) for i in skipped])

    async def _park_run(self, run_id: str, version: str, bucket: int, now: int) -> None:
        """Move a run of another (newer) prompt version to its version's parked set."""
        k = self.keys
        await self._park(
            keys=[
                k.queued,
                k.retry,
                k.leases,
                k.parked(version),
                k.parked_counts,
                k.run(run_id),
                k.by_status(RunStatus.QUEUED.value),
                k.by_status(RunStatus.FAILED.value),
                k.by_status(RunStatus.PROCESSING.value),
                k.counters,
            ],
            args=[run_id, version, bucket, now],
        )
        log.info("run_parked", run_id=run_id, prompt_version=version)

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
        return [as_text(w) for w in live]

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
            keys=[k.run(claim.id), k.leases, k.queued, k.counters, k.retry],
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
                        k.natural_key_expiry,
                    ],
                    args=[
                        before,
                        batch,
                        k.run_prefix,
                        int(self.settings.natural_key_retention_days * 86_400_000),
                    ],
                )
            )
            total += n
            if n < batch:
                return total

    async def prune(self, *, at_ms: int | None = None, batch: int = 1000) -> PruneResult:
        """Every bound of the queue store at once (README "Bounded growth")."""
        now = at_ms if at_ms is not None else now_ms()
        s, k = self.settings, self.keys
        result = PruneResult(runs=await self.prune_finished(at_ms=now, batch=batch))
        while True:
            n = int(
                await self._prune_nk(keys=[k.natural_keys, k.natural_key_expiry], args=[now, batch])
            )
            result.natural_keys += n
            if n < batch:
                break
        before = now - int(s.retired_run_message_retention_days * 86_400_000)
        while True:
            seen, dropped = await self._prune_retired(
                keys=[k.retired, k.prune_marks], args=[before, batch, k.run_prefix]
            )
            result.retired_messages += int(dropped)
            if int(seen) < batch:
                break
        result.workers = int(
            await self._prune_workers(
                keys=[k.workers, k.worker_concurrency],
                args=[now - int(s.worker_registry_grace_seconds * 1000)],
            )
        )
        result.unparked = await self.unpark_older_versions(batch=batch)
        return result

    async def unpark_older_versions(self, *, batch: int = 1000) -> int:
        """Runs parked for a version older than ours go back to the queue (to be skipped)."""
        k = self.keys
        total = 0
        for raw in await awaited(self.redis.hkeys(k.parked_counts)):
            version = as_text(raw)
            if claim_action(version, self.settings.prompt_version) is not ClaimAction.SKIP:
                continue
            while True:
                n = int(
                    await self._unpark(
                        keys=[k.parked(version), k.queued, k.parked_counts], args=[version, batch]
                    )
                )
                total += n
                if n < batch:
                    break
        return total

    # --- reads --------------------------------------------------------------------------------
    async def has_claimable(self, *, at_ms: int | None = None) -> int:
        """0 = nothing to claim; 1 = queued or due retries; 2 = only expired leases."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        return int(
            await self._has_claimable(
                keys=[k.queued, k.retry, k.leases, k.parked(self.settings.prompt_version)],
                args=[now],
            )
        )

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
            h = {as_text(key): as_text(val) for key, val in raw[i].items()}
            if h:
                runs.append(self._run_from_hash(h, raw[i + 1]))
        return runs

    async def list_runs(self, status: RunStatus | None = None, limit: int = 100) -> list[Run]:
        """Most recently updated first (or created, without a status filter)."""
        key = self.keys.by_status(status.value) if status else self.keys.all_runs
        ids = await self.redis.zrevrange(key, 0, max(limit, 1) - 1)
        return await self.get_many([as_text(i) for i in ids])

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
            prompt_version=h["prompt_version"] or None,
            cursor=Cursor.model_validate(request_cursor) if request_cursor else None,
            message_count=int(h.get("message_count") or 0),
            created_at=_ms_to_dt(h["created_at"]) or datetime.now(UTC),
            updated_at=_ms_to_dt(h["updated_at"]) or datetime.now(UTC),
            next_attempt_at=_ms_to_dt(h.get("next_attempt_at")),
            lease_owner=h.get("lease_owner") or None,
            leased_until=_ms_to_dt(h.get("leased_until")),
            result=orjson.loads(h["result"]) if h.get("result") else None,
        )


def _pairs(raw: list[Any]) -> dict[str, str]:
    return {as_text(raw[i]): as_text(raw[i + 1]) for i in range(0, len(raw), 2)}


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
