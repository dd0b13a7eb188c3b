"""Pipeline ticks (§8): stateless arq jobs that each claim and process one run at a time.

The decisions are pure (:func:`plan_followups`); :class:`TickQueue` applies
them with one Lua script that counts *pending* ticks (queued in arq's ZSET
and not yet started) and adds arq jobs in the same atomic step, so however
many workers defer at once, exactly one delayed probe remains.

- productive tick (run completed) → one follow-up, plus one more while
  pending ticks are below the pipeline target: in-flight ticks ramp 1 → target.
  The follow-up is usually the tick itself: for up to ``MEMORY_TICK_LOOP_SECONDS``
  after its job started, a tick whose run completed claims the next run in the same
  arq job (mode ``continue``: only the ramp's extra tick is queued, and a process asks
  for it once a second once the fleet is at target), which saves arq's per-job round
  trips — the start, the prelude, the follow-up's schedule and the finish. Every other
  outcome, a shutdown and the end of that window leave through the table below;
- failed run → one follow-up;
- nothing claimable → none: the pipeline drains to zero;
- outage (run released for lack of a backend, or the route is entirely
  breaker-open before claiming) → a follow-up **only if no other tick is
  pending**, available after the backend retry interval (the single probe);
- shutdown release → one immediate follow-up if none is pending, so the rest
  of the fleet carries on;
- store fault (claim refused, or the run released because Redis failed) →
  the same single delayed probe as an outage.

A tick queues its follow-ups *before* it leaves the running set (§8),
so a wake-up or a safety-net pass (mode ``if_idle``: only when nothing is
pending and nothing running) cannot slip a second, immediate tick into the
window between the two.

A running tick registers itself in a ``ticks:running`` ZSET with an expiry
that its worker's heartbeat renews, so the cron safety net can tell a live
pipeline from a dead worker's leftovers.

Pending ticks are counted without scanning arq's queue (a scan would cost one
``EXISTS`` per queued tick, so a run's Redis cost would grow with the fleet's pipeline
target): ``ticks:queued`` holds every tick this module queued (until its job would
expire), ``ticks:started`` every started one until arq's in-progress lease would end
(arq's start writes it in :class:`memory_worker.worker.main.MemoryWorker`; under plain arq
the tick writes it first thing). Pending = |queue ∩ queued| − |queue ∩ queued ∩
started|: two ``ZINTERCARD`` (Redis ≥ 7.0 / Valkey; on Redis 6 the script walks
``ticks:queued`` instead, bounded by the pipeline target). A tick leaves the running and
queued sets in the script that queues its follow-ups (out of ``ticks:queued``, it is in
neither count); it stays in ``ticks:started`` until its lease would end, so no poll offers
it before arq's finish takes it off the queue (a finish that leaves it there for arq to run
again takes it out). The set then also holds the ticks finished within the last lease
(``tick_timeout_seconds`` + 10 s): ≈ 124 bytes each, 3.6 MB at 8 runs/s with the default
hour — the run store keeps completed runs for days.

Per scheduling call the script prunes ``ticks:started`` by time (a
crashed tick counts as pending again the moment its lease ends), but ``ticks:queued`` only
every :attr:`TickQueue.PRUNE_QUEUED_MS` per process: a queued tick goes stale with its job
key, a day after it was due, and only a tick no worker started in that day is still in
arq's queue to be counted (it then counts up to that many ms longer; a worker that polls
runs it — arq drops an expired job — and the count is exact again). Running ticks are
counted only where the decision reads them (mode ``if_idle``).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from enum import StrEnum

from redis.asyncio import Redis

from llm_client import as_text, with_preflight
from memory_worker.keys import ARQ_IN_PROGRESS_KEY_PREFIX, ARQ_JOB_KEY_PREFIX, Keys
from memory_worker.pipeline.jobcodec import tick_job  # row 21: JSON job payloads, never pickle

TICK_FUNCTION = "memory_tick"


class TickOutcome(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    IDLE = "idle"
    DEFERRED = "deferred"  # released for an outage, or the route gate was closed
    SHUTDOWN = "shutdown"  # released because the worker is stopping
    ABANDONED = "abandoned"  # the lease was lost to another worker
    STORE_ERROR = "store_error"


class Mode(StrEnum):
    AMPLIFY = "amplify"
    PROBE = "probe"  # only if none pending, delayed
    #: Wake-up / safety net: a tick only if none is pending and none running.
    IF_IDLE = "if_idle"
    #: Safety net for expired leases: a tick only if none is pending (running ones may be dead).
    IF_NONE_PENDING = "if_none_pending"
    #: A productive tick that goes on to the next run itself (it is its own follow-up):
    #: only the ramp's extra tick, while the fleet's pending ticks + 1 are below target.
    CONTINUE = "continue"


@dataclass(frozen=True, slots=True)
class TickPlan:
    mode: Mode
    base: int = 0
    extra_below_target: int = 0
    delay_s: float = 0.0


NO_FOLLOWUP = TickPlan(Mode.AMPLIFY)

#: What a productive tick that goes on itself queues (the ramp's extra only).
GOING_ON = TickPlan(Mode.CONTINUE, extra_below_target=1)


def plan_followups(outcome: TickOutcome, *, retry_interval: float) -> TickPlan:
    """The follow-up ticks a finished tick queues (§8 amplification and deferral)."""
    if outcome is TickOutcome.COMPLETED:
        return TickPlan(Mode.AMPLIFY, base=1, extra_below_target=1)
    if outcome is TickOutcome.FAILED:
        return TickPlan(Mode.AMPLIFY, base=1)
    if outcome is TickOutcome.DEFERRED:
        return TickPlan(Mode.PROBE, base=1, delay_s=retry_interval)
    if outcome in (TickOutcome.SHUTDOWN, TickOutcome.ABANDONED):
        return TickPlan(Mode.PROBE, base=1)
    if outcome is TickOutcome.STORE_ERROR:
        # the store refused (or a run went back for a store fault): one delayed probe,
        # like a farm outage; the poll loop and the safety net also restart the pipeline
        return TickPlan(Mode.PROBE, base=1, delay_s=retry_interval)
    return NO_FOLLOWUP  # IDLE: the pipeline drains


#: A process whose going-on tick found the fleet at target asks again this often (s).
RAMP_CHECK_SECONDS = 1.0


def tick_budgets(tick_timeout: float) -> tuple[float, float]:
    """(processor deadline, hard stop) in seconds from the tick's start.

    Both end before arq's job timeout so the tick, not arq, decides what a
    timeout does to the run (§7: fail it as task_timeout).
    """
    hard = tick_timeout - min(2.0, tick_timeout * 0.05)
    soft = tick_timeout - min(5.0, tick_timeout * 0.1)
    return soft, hard


def goes_on(outcome: TickOutcome, stopping: bool, elapsed_s: float, loop_s: float) -> bool:
    """Whether a tick claims the next run itself: its run completed, the worker is not
    stopping, and its job is still inside ``MEMORY_TICK_LOOP_SECONDS``."""
    return outcome is TickOutcome.COMPLETED and not stopping and elapsed_s < loop_s


def ramp_check_due(*, first: bool, checked_at: float | None, now: float) -> bool:
    """Whether a going-on tick asks for the ramp's extra (mode ``continue``): on its job's
    first completion, while the last check queued one (``checked_at`` None), else once
    every :data:`RAMP_CHECK_SECONDS`."""
    return first or checked_at is None or now - checked_at >= RAMP_CHECK_SECONDS


def ticks_to_add(plan: TickPlan, *, pending: int, running: int, target: int) -> int:
    """How many ticks ``plan`` adds given the fleet's current pending/running ticks.

    The Lua script in :class:`TickQueue` is a line-by-line translation of this.
    """
    if plan.mode is Mode.CONTINUE:  # the tick itself is the base: it is not queued
        return plan.extra_below_target if pending + 1 < target else 0
    if plan.base <= 0:
        return 0
    if plan.mode is Mode.PROBE or plan.mode is Mode.IF_NONE_PENDING:
        return plan.base if pending == 0 else 0
    if plan.mode is Mode.IF_IDLE:
        return plan.base if pending == 0 and running == 0 else 0
    extra = plan.extra_below_target if pending + plan.base < target else 0
    return plan.base + extra


_SCHEDULE = with_preflight(
    """
-- KEYS: arq queue, running ticks, queued ticks, started ticks, pipeline state,
--       the arq job key of each candidate id (ARGV[12..])
-- ARGV: now, mode, base, extra, target, delay_ms, expires_ms, job_blob,
--       done (the finishing tick's job id, or ''), clear_deferred (1/0),
--       prune_queued (1/0), ids...
-- Pending ticks = ticks in arq's queue that have not started: counted from the queued
-- and started sets (O(1) commands, whatever the fleet's size), not by scanning the queue.
local now = tonumber(ARGV[1])
local mode, base, extra, target = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
preflight({ZREM = {KEYS[2], KEYS[3]}, HDEL = {KEYS[5]}, ZREMRANGEBYSCORE = {KEYS[3], KEYS[4]}, SET = {KEYS},
  ZADD = {KEYS[1], KEYS[3]}})
if ARGV[9] ~= '' then  -- the finishing tick leaves the sets as its follow-ups go in
  redis.call('ZREM', KEYS[2], ARGV[9])
  -- out of "queued", it is out of both counts; it stays "started" until its lease would
  -- end, which keeps the poll from offering it until arq's finish takes it off the queue
  redis.call('ZREM', KEYS[3], ARGV[9])
end
if ARGV[10] == '1' then redis.call('HDEL', KEYS[5], 'deferred_since') end
-- a queued tick goes stale with its job key, a day after it was due: only one that no
-- worker started in that day is still in arq's queue, so the caller asks for this prune
-- every few seconds only (TickQueue.PRUNE_QUEUED_MS)
if ARGV[11] == '1' then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now) end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)  -- a crashed tick's lease ended
local queued, started
local has_zintercard = redis.REDIS_VERSION_NUM ~= nil and redis.REDIS_VERSION_NUM >= 0x070000
if has_zintercard then
  queued = redis.call('ZINTERCARD', 2, KEYS[1], KEYS[3])
  started = redis.call('ZINTERCARD', 3, KEYS[1], KEYS[3], KEYS[4])
else  -- Redis 6 (no ZINTERCARD): walk the queued ticks (bounded by the pipeline target)
  queued, started = 0, 0
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    if redis.call('ZSCORE', KEYS[1], id) then
      queued = queued + 1
      if redis.call('ZSCORE', KEYS[4], id) then started = started + 1 end
    end
  end
end
local pending = queued - started
local running = -1  -- only if_idle reads the running ticks
if mode == 'if_idle' then running = redis.call('ZCOUNT', KEYS[2], now, '+inf') end
local add = 0
if mode == 'continue' then  -- the tick goes on itself: only the ramp's extra is queued
  if pending + 1 < target then add = extra end
elseif base > 0 then
  if mode == 'probe' or mode == 'if_none_pending' then
    if pending == 0 then add = base end
  elseif mode == 'if_idle' then
    if pending == 0 and running == 0 then add = base end
  else
    add = base
    if pending + base < target then add = add + extra end
  end
end
local score = now + tonumber(ARGV[6])
for i = 1, add do
  local id = ARGV[11 + i]
  redis.call('SET', KEYS[5 + i], ARGV[8], 'PX', ARGV[7])
  redis.call('ZADD', KEYS[1], score, id)
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[7]), id)
end
return {add, pending, running}
"""
)

# A tick started (arq's start, or the tick itself under plain arq): it counts as started
# until arq's in-progress lease ends, and as running while its worker's heartbeat lives.
# KEYS: running ticks, started ticks; ARGV: job id, running expiry ms, started expiry ms.
_MARK = with_preflight(
    """
preflight({ZADD = {KEYS[1], KEYS[2]}})
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], 'NX', ARGV[3], ARGV[1])
return 1
"""
)

_PENDING = """
-- KEYS: arq queue, running ticks, then the arq in-progress key of each tick id (ARGV[2..])
-- ARGV: now, the tick ids the caller read from the queue
-- A tick queued after the caller's read is counted by the next sample.
local pending, delayed = 0, 0
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and redis.call('EXISTS', KEYS[1 + i]) == 0 then
    pending = pending + 1
    if tonumber(score) > tonumber(ARGV[1]) then delayed = delayed + 1 end
  end
end
return {pending, delayed, redis.call('ZCOUNT', KEYS[2], ARGV[1], '+inf')}
"""


@dataclass(frozen=True, slots=True)
class TickCounts:
    pending: int
    delayed: int
    running: int


@dataclass(frozen=True, slots=True)
class Scheduled:
    added: int
    pending_before: int
    #: Running ticks, counted only where the decision reads them (mode ``if_idle``).
    running: int | None


class TickQueue:
    """Adds tick jobs to arq's queue atomically with the pending-tick check."""

    #: How often (ms) a process prunes ``ticks:queued`` of ticks whose job key expired.
    PRUNE_QUEUED_MS = 5_000

    def __init__(self, redis: Redis, keys: Keys, *, expires_extra_ms: int = 86_400_000) -> None:
        self.redis = redis
        self.keys = keys
        self.expires_extra_ms = expires_extra_ms
        #: When this process last pruned ``ticks:queued`` (its ``now``, ms).
        self._queued_pruned_at: int | None = None
        self._schedule = redis.register_script(_SCHEDULE)
        self._pending = redis.register_script(_PENDING)
        self._mark = redis.register_script(_MARK)

    @property
    def running_key(self) -> str:
        return self.keys.ticks_running

    async def schedule(
        self,
        plan: TickPlan,
        *,
        target: int,
        at_ms: int | None = None,
        done: str | None = None,
        clear_deferred: bool = False,
    ) -> Scheduled:
        """Queue ``plan``'s ticks atomically with the pending count.

        ``done``: the finishing tick's job id, which leaves the running set in the same
        step (§8: follow-ups first); ``clear_deferred``: the pipeline produced again.
        """
        going_on = plan.mode is Mode.CONTINUE
        if plan.base <= 0 and not going_on and done is None and not clear_deferred:
            return Scheduled(0, 0, 0)
        now = at_ms if at_ms is not None else int(time.time() * 1000)
        delay_ms = int(plan.delay_s * 1000)
        blob = tick_job(TICK_FUNCTION, now)
        if going_on:
            count = plan.extra_below_target
        else:
            count = plan.base + plan.extra_below_target if plan.base > 0 else 0
        ids = [self.keys.tick_job_id(uuid.uuid4().hex) for _ in range(count)]
        last = self._queued_pruned_at
        prune = last is None or not last <= now < last + self.PRUNE_QUEUED_MS
        added, pending, running = await self._schedule(
            keys=[
                self.keys.arq_queue,
                self.running_key,
                self.keys.ticks_queued,
                self.keys.ticks_started,
                self.keys.pipeline_state,
                *(ARQ_JOB_KEY_PREFIX + job_id for job_id in ids),
            ],
            args=[
                now,
                plan.mode.value,
                plan.base,
                plan.extra_below_target,
                max(target, 1),
                delay_ms,
                delay_ms + self.expires_extra_ms,
                blob,
                done or "",
                int(clear_deferred),
                int(prune),
                *ids,
            ],
        )
        if prune:
            self._queued_pruned_at = now
        return Scheduled(int(added), int(pending), None if int(running) < 0 else int(running))

    async def counts(self, *, at_ms: int | None = None) -> TickCounts:
        """Ticks pending (queued, not started; of them delayed) and running: the queue's tick
        ids are read first, the script checks each again (its in-progress key in KEYS)."""
        now = at_ms if at_ms is not None else int(time.time() * 1000)
        prefix = self.keys.tick_job_id("")
        queued = (as_text(i) for i in await self.redis.zrange(self.keys.arq_queue, 0, -1))
        ids = [i for i in queued if i.startswith(prefix)]
        pending, delayed, running = await self._pending(
            keys=[
                self.keys.arq_queue,
                self.running_key,
                *(ARQ_IN_PROGRESS_KEY_PREFIX + i for i in ids),
            ],
            args=[now, *ids],
        )
        return TickCounts(int(pending), int(delayed), int(running))

    async def mark_running(self, job_id: str, ttl_s: float, *, started_s: float) -> None:
        """The tick runs (expiry ``ttl_s``, renewed by heartbeats) and has started (until
        arq's in-progress lease, ``started_s``, would end; kept if arq's start set it)."""
        now = time.time()
        await self._mark(
            keys=[self.running_key, self.keys.ticks_started],
            args=[job_id, int((now + ttl_s) * 1000), int((now + started_s) * 1000)],
        )

    async def refresh_running(self, job_ids: list[str], ttl_s: float) -> None:
        if job_ids:
            expiry = int((time.time() + ttl_s) * 1000)
            await self.redis.zadd(self.running_key, dict.fromkeys(job_ids, expiry), xx=True)
        # forget dead workers' entries long after they stopped counting
        await self.redis.zremrangebyscore(
            self.running_key, "-inf", int(time.time() * 1000) - 3_600_000
        )

    async def unmark_running(self, job_id: str) -> None:
        """The tick left without its follow-up step (an error): it is neither running nor
        started (arq may queue it again)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrem(self.running_key, job_id)
            pipe.zrem(self.keys.ticks_started, job_id)
            await pipe.execute()
