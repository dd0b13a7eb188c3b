"""Memory runs (§7): the durable unit of work, its life as decisions, and its store in Redis.

- :mod:`~memory_worker.runs.policy`: a run's life as pure decisions (backoff, failure
  plans, release vs fail).
- :mod:`~memory_worker.runs.model`: what the run store answers and the pure twins of its
  scripts' decisions; :mod:`~memory_worker.runs.store`: :class:`RunStore`, the Redis
  shell (``lua/*.lua``); :mod:`~memory_worker.runs.codec`: its stored values read back as
  models, and the release-history and route-error entries its scripts write.
- :mod:`~memory_worker.runs.workers`: the worker registry as operators see it (the
  console's workers page).
- :mod:`~memory_worker.runs.versions`: prompt versions — which runs a worker claims,
  skips or leaves alone.
- :mod:`~memory_worker.runs.chat_index`: runs by chat; :mod:`~memory_worker.runs.prune`:
  the store's bounds; :mod:`~memory_worker.runs.forget`: the run store's side of forgetting.
- :mod:`~memory_worker.runs.replay`: replaying retired or failed runs;
  :mod:`~memory_worker.runs.replay_summary`: the retired-run summary its preview reads.

The run store: one Lua script per state change.

Layout (all under the queue hash tag, see ``keys.py``):

- ``run:<id>`` HASH — the run (request fields, status, attempts, lease, result, the
  attempt budget of its last claim, and ``release_log``: its newest releases, one JSON
  object a line);
- ``run:<id>:errors`` LIST — the bounded error log (JSON entries);
- ``run:<id>:extraction`` STRING — the run's validated extraction kept between its
  attempts (§7, ``lua/keep_extraction.lua`` under the lease and the forget epoch; a time to
  live, gone with the run's completion and with a forget of its chat);
- ``runs:nk`` HASH natural key → run id (idempotent enqueue);
- ``runs:queued`` ZSET — queued runs, score ``-range_end_ms`` so ZPOPMIN-order
  is newest window first (ties: older run id first, i.e. continuations in order);
- ``runs:retry`` ZSET — failed runs with attempts left, score = next attempt;
- ``runs:leases`` ZSET — processing runs, score = lease expiry;
- ``runs:retired`` ZSET — retired runs, score = retirement time;
- ``runs:retired:facts`` / ``:counts`` / ``:aged`` — the retired-run summary the
  replay preview reads instead of every run (``lua/retired_summary.lua``: the
  fail, replay and message-retention scripts keep it in step);
- ``runs:status:<s>`` and ``runs:all`` ZSETs for listing (``cancelled``: taken out for good by
  an operator, ``lua/cancel.lua``, §13);
- ``runs:chat:<chat id>`` ZSET — the chat's runs (score = creation), what forget reads
  (``chat_index.py``: enqueue adds, prune removes, a one-time backfill adds older runs);
- ``runs:daily:<day>`` counters and the ``counters`` HASH for metrics;
- ``routes:last_error`` HASH workflow → the last error its farm gave (masked), which the
  release and fail scripts keep (the console's outage banner).

Claim is O(log n): it reads each lane's first ``peek + 1`` ids once (``ZRANGEBYSCORE …
LIMIT`` / ``ZRANGE``) and walks and answers from that view, 14 commands for a queued run.
Every script declares every key it touches (§2), so the claim script
may only act on runs it is given: each answer names the lanes' first few ids
(``CLAIM_PEEK`` each) and the next claim passes their keys; a head it was not
given (taken by another worker, enqueued since) ends the call with the heads as
they are now, and the claim calls again (one round trip in the steady state).
Every change after a claim is fenced by the lease token, so a worker whose
lease was reclaimed can no longer complete, fail or release the run.

**Leases and store faults (§7).** An expired lease alone is not
evidence that its owner is gone: during a Redis outage (or a Sentinel
failover, or an OOM that refuses writes) no owner can renew, and a claim
that took every expired lease would reclaim every run in flight the moment
Redis answered again, spending an attempt each time. So an expired lease is reclaimed only when
its owner is **dead** or **no longer holds the run**:

- every worker's heartbeat (:meth:`RunStore.heartbeat`, one script) writes
  its expiry into ``workers`` (ZSET) and the ids of the runs it holds into
  ``workers:runs`` (HASH owner → ``id,id``); a claim appends the claimed id
  to its owner's entry, so a run is listed from the moment it is claimed;
- the store's **pulse** (fields of ``workers:runs``, which claims and heartbeats
  write anyway: ``pulse:at`` = the last time any worker touched the store,
  ``pulse:since`` = when the store last came back after a gap longer than
  one heartbeat TTL) measures time *the store was
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

from memory_worker.runs.model import (
    ClaimedRun,
    ClaimResult,
    EnqueueResult,
    EnqueueStatus,
    LeaseAnswer,
    PruneResult,
    Pulse,
    lease_kept_for_owner,
    now_ms,
    touch_pulse,
)
from memory_worker.runs.store import CancelAnswer, ExtractionSlot, RunStore

__all__ = [
    "CancelAnswer",
    "ClaimResult",
    "ClaimedRun",
    "EnqueueResult",
    "EnqueueStatus",
    "ExtractionSlot",
    "LeaseAnswer",
    "PruneResult",
    "Pulse",
    "RunStore",
    "lease_kept_for_owner",
    "now_ms",
    "touch_pulse",
]
