"""The lease renewer: a claimed run's lease kept while its tick works on it and settles it (§7).

A Redis error is never read as a loss: the owner keeps working and renews when Redis
answers again (a claim leaves the lease alone while the owner's heartbeat lists the run).
Only a renewal answered "not yours" — another worker reclaimed the run — or "cancelled" — an
operator cancelled it (§13) — ends the work.
"""

from __future__ import annotations

import asyncio

from redis.exceptions import RedisError

from memory_worker.logs import get_logger
from memory_worker.runs import ClaimedRun, LeaseAnswer, RunStore
from memory_worker.storage.connections import backoff_delay

log = get_logger(__name__)


async def keep_lease(
    store: RunStore,
    claim: ClaimedRun,
    lost: asyncio.Event,
    period: float,
    cancelled: asyncio.Event | None = None,
) -> None:
    """Renew ``claim``'s lease every ``period`` seconds until cancelled; set ``lost`` and
    return when a renewal answers that the lease is someone else's (and ``cancelled`` too
    when it answers that an operator cancelled the run: a checkpoint). After a failed renewal
    it tries again soon (back-off up to 1 s), so the lease is renewed right after Redis is
    back."""
    failing = 0
    while True:
        await asyncio.sleep(
            min(period, backoff_delay(failing, base=0.1, cap=1.0)) if failing else period
        )
        try:
            answer = await store.renew_answer(claim)
        except RedisError as exc:
            failing += 1
            if failing == 1:
                log.warning("lease_renew_store_error", error=type(exc).__name__)
            continue
        if failing:
            log.info("lease_renewed_after_store_error", failures=failing)
            failing = 0
        if answer is not LeaseAnswer.HELD:
            if answer is LeaseAnswer.CANCELLED and cancelled is not None:
                cancelled.set()
            lost.set()
            return
