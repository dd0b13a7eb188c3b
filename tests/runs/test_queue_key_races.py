"""The races of two-step queue scripts (every key in KEYS, §2).

A queue script may only touch the runs its caller read beforehand; another worker can
take, complete or add a run between the read and the script. Each test changes the
store in that window (by hand, or from a hook on the read) on a real Valkey and checks
that the script acts on no run it was not given, and that the caller still gets the
answer a single atomic step would have given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from arq.constants import in_progress_key_prefix

from llm_client import as_text
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.pipeline.ticks import TickQueue
from memory_worker.runs import EnqueueStatus, RunStore
from memory_worker.runs.model import CLAIM_LOOPS, CLAIM_PEEK, ENQUEUE_CHECKS
from memory_worker.runs.policy import plan_failure
from memory_worker.runs.store import LaneHeads
from memory_worker.settings import Settings
from tests.support.factories import make_request

T0 = 1_800_000_000_000
DAY = 86_400_000


async def _enqueue(store: RunStore, n: int, *, first: int = 1) -> list[str]:
    ids = []
    for i in range(n):
        rid = (await store.enqueue(make_request(first + i, hour=-i), at_ms=T0)).run_id
        assert rid
        ids.append(rid)
    return ids


async def _finished(store: RunStore, n: int, *, retire: bool) -> list[str]:
    """``n`` runs enqueued and claimed at T0, then completed (or failed for good at once)."""
    ids = await _enqueue(store, n)
    for _ in ids:
        claim = await store.claim("w", at_ms=T0)
        assert claim is not None
        if retire:
            plan = plan_failure(1, max_attempts=1, unit=60, max_units=60, now_ms=T0)
            assert await store.fail(claim, plan, code="X", reason=None, message="x", at_ms=T0)
        else:
            assert await store.complete(claim, {}, at_ms=T0 + 1)
    return ids


async def _hash(redis: Any, settings: Settings, rid: str) -> dict[str, str]:
    raw = await redis.hgetall(Keys(settings.key_prefix).run(rid))
    return {as_text(k): as_text(v) for k, v in raw.items()}


def _after_read(
    monkeypatch: pytest.MonkeyPatch, redis: Any, name: str, race: Callable[[], Awaitable[Any]]
) -> list[int]:
    """Run ``race`` once, right after the first ``redis.<name>`` read; counts the reads."""
    original = getattr(redis, name)
    calls: list[int] = []

    async def read(*args: Any, **kwargs: Any) -> Any:
        result = await original(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            await race()
        return result

    monkeypatch.setattr(redis, name, read)
    return calls


# --- claim ---------------------------------------------------------------------------------


async def test_a_head_taken_after_the_read_is_left_to_its_owner(
    redis: Any, settings: Settings
) -> None:
    """The claim script given a run another worker took since: it does not touch it and
    answers the heads as they are now, and the next call claims the next run."""
    mine, other = RunStore(redis, settings), RunStore(redis, settings)
    first, second = await _enqueue(mine, 2)
    taken = await other.claim("other", at_ms=T0)
    assert taken is not None
    assert taken.id == first
    before = await _hash(redis, settings, first)

    given = LaneHeads([], [first])
    fields, _, _, park, again, heads = await mine._claim_once("me", "tok", T0, 4, given)
    assert (fields, park, int(again)) == ([], [], 1)
    assert [[as_text(h) for h in lane] for lane in heads] == [[], [second]]
    assert await _hash(redis, settings, first) == before  # still the other worker's, as it was

    given = LaneHeads([], [second])
    fields, _, _, _, again, _ = await mine._claim_once("me", "tok", T0, 4, given)
    got = {as_text(fields[i]): as_text(fields[i + 1]) for i in range(0, len(fields), 2)}
    assert (got["id"], got["lease_owner"], got["attempts"], int(again)) == (second, "me", "1", 0)


async def test_a_claim_whose_every_head_was_taken_claims_the_next_run_once(
    redis: Any, settings: Settings
) -> None:
    """Another worker takes every run this store's last claim named: the next claim still
    gets a run, and no run is claimed twice or spends a second attempt."""
    mine, other = RunStore(redis, settings), RunStore(redis, settings)
    ids = await _enqueue(mine, CLAIM_PEEK + 4)
    claims = [await mine.claim("me", at_ms=T0)]
    claims += [await other.claim("other", at_ms=T0) for _ in range(CLAIM_PEEK)]
    claims.append(await mine.claim("me", at_ms=T0))
    got = [c.id for c in claims if c is not None]
    assert len(got) == len(set(got)) == CLAIM_PEEK + 2
    assert got == ids[: CLAIM_PEEK + 2]  # newest window first, as one atomic claim would
    for c in claims:
        assert c is not None
        h = await _hash(redis, settings, c.id)
        assert (h["lease_owner"], h["attempts"], h["status"]) == (c.owner, "1", "processing")


async def test_a_head_completed_after_the_read_is_not_claimed_again(
    redis: Any, settings: Settings
) -> None:
    """The run a store's hint names is claimed and completed by another worker before the
    script: the script reaches the next head, never the finished run."""
    mine, other = RunStore(redis, settings), RunStore(redis, settings)
    first, second, _ = await _enqueue(mine, 3)
    mine._claim_heads = LaneHeads([], [first, second])
    taken = await other.claim("other", at_ms=T0)
    assert taken is not None
    assert taken.id == first
    assert await other.complete(taken, {"ok": 1}, at_ms=T0 + 1)
    claim = await mine.claim("me", at_ms=T0 + 2)
    assert claim is not None
    assert claim.id == second
    assert (await mine.get(first)).status is RunStatus.COMPLETED
    assert (await _hash(redis, settings, first))["attempts"] == "1"


async def test_one_claim_walks_at_most_claim_loops_heads_across_its_calls(
    redis: Any, settings: Settings
) -> None:
    """Runs of an older version fill the head: one claim skips CLAIM_LOOPS of them however
    many calls the moving heads cost it (as the one-call claim did), the next the rest."""
    store = RunStore(redis, settings)  # memory_v1; the old runs are memory_v0
    old = [
        (await store.enqueue(make_request(i, hour=-i, prompt_version="memory_v0"), at_ms=T0))
        for i in range(CLAIM_LOOPS + 6)
    ]
    mine = await store.enqueue(make_request(500, hour=-1000), at_ms=T0)  # the oldest window
    first = await store.claim_detailed("w", at_ms=T0)
    assert first.run is None
    assert first.skipped == [r.run_id for r in old[:CLAIM_LOOPS]]
    second = await store.claim_detailed("w", at_ms=T0)
    assert second.skipped == [r.run_id for r in old[CLAIM_LOOPS:]]
    assert second.run is not None
    assert second.run.id == mine.run_id


# --- enqueue's cap check -------------------------------------------------------------------


async def test_a_run_claimed_after_the_leases_were_read_is_counted_by_its_hash(
    redis: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queue is full but for replayed (uncapped) runs in processing; one more is claimed
    between the caller's read of the leases and the script: the script asks again instead
    of counting that run by its zset alone, and the enqueue is let in."""
    store = RunStore(redis, settings.model_copy(update={"max_queued_runs": 2}))
    other = RunStore(redis, settings)
    ids = await _enqueue(other, 3)
    for rid in ids:  # all three replayed: outside the cap while they are processed
        await redis.hset(Keys(settings.key_prefix).run(rid), "uncapped", "1")
    assert await other.claim("other", at_ms=T0) is not None
    # 2 queued + 1 processing - 1 uncapped = 2: full
    assert (await store.enqueue(make_request(50), at_ms=T0)).status is EnqueueStatus.QUEUE_FULL

    async def claim_one() -> None:
        assert await other.claim("other", at_ms=T0) is not None

    reads = _after_read(monkeypatch, redis, "zrange", claim_one)
    # 1 queued + 2 processing - 2 uncapped = 1: room for one
    result = await store.enqueue(make_request(51), at_ms=T0)
    assert result.status is EnqueueStatus.ENQUEUED
    assert len(reads) == 2  # the script saw the new lease and had the leases read again


async def test_leases_that_change_on_every_read_end_as_queue_full_with_nothing_written(
    redis: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queue is full and every read of the leases is already stale when the script runs
    (claims churning faster than the caller reads): after ENQUEUE_CHECKS tries the enqueue
    answers QUEUE_FULL — the cap is never skipped — and writes nothing."""
    store = RunStore(redis, settings.model_copy(update={"max_queued_runs": 2}))
    await _enqueue(store, 2)
    assert await store.claim("other", at_ms=T0) is not None  # 1 queued + 1 processing: full
    keys = Keys(settings.key_prefix)
    runs_before = await redis.zcard(keys.all_runs)
    real_zrange = redis.zrange
    reads: list[str] = []

    async def stale(name: Any, *args: Any, **kwargs: Any) -> Any:
        if as_text(name) == keys.leases:
            reads.append(as_text(name))
            return []  # the lease the script sees was never in the caller's read
        return await real_zrange(name, *args, **kwargs)

    monkeypatch.setattr(redis, "zrange", stale)
    result = await store.enqueue(make_request(60), at_ms=T0)
    assert (result.status, result.run_id) == (EnqueueStatus.QUEUE_FULL, None)
    assert len(reads) == ENQUEUE_CHECKS
    assert await redis.zcard(keys.all_runs) == runs_before


# --- pruning -------------------------------------------------------------------------------


async def test_prune_given_part_of_the_batch_prunes_nothing_then_all(
    redis: Any, settings: Settings
) -> None:
    """A run grew old enough between the read and the prune script: the script prunes
    nothing (it may not touch that run's keys) and the next read takes both."""
    s = settings.model_copy(update={"completed_run_retention_days": 1.0})
    store = RunStore(redis, s)
    ids = await _finished(store, 2, retire=False)
    n, again = await store._pruner._prune_runs(T0 + 10, 1000, [ids[0]])
    assert (n, again) == (0, True)
    assert {r.id for r in await store.get_many(ids)} == set(ids)  # nothing pruned
    assert await store.prune_finished(at_ms=T0 + DAY + 10) == 2
    assert await store.get_many(ids) == []
    keys = Keys(s.key_prefix)
    for chat in (1, 2):
        assert await redis.zcard(keys.chat_runs(chat)) == 0


async def test_retired_messages_need_every_run_of_the_batch(redis: Any, settings: Settings) -> None:
    """The retired-message script called with part of its batch drops nothing and names
    the batch; called with all of it, it drops each run's messages once."""
    s = settings.model_copy(update={"max_attempts": 1})
    store = RunStore(redis, s)
    ids = await _finished(store, 2, retire=True)
    k = Keys(s.key_prefix)
    fixed = [k.retired, k.prune_marks, *k.retired_summary]
    pruner = store._pruner
    seen, dropped, wanted = await pruner._prune_retired(
        keys=[*fixed, k.run(ids[0])], args=[T0 + 1, 1000, T0 + 1, ids[0]]
    )
    assert (int(seen), int(dropped), sorted(as_text(w) for w in wanted)) == (2, 0, sorted(ids))
    for rid in ids:
        assert await redis.hexists(k.run(rid), "messages")
    assert await redis.hget(k.prune_marks, "retired_messages_until") is None
    assert await pruner.retired_messages(T0 + 1, now=T0 + 1, batch=1000) == 2
    for rid in ids:
        assert not await redis.hexists(k.run(rid), "messages")


# --- tick counts ---------------------------------------------------------------------------


async def test_a_tick_that_starts_after_the_read_is_not_counted_pending(
    redis: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = Keys(settings.key_prefix)
    queue = TickQueue(redis, keys)
    ticks = [keys.tick_job_id(f"t{i}") for i in range(3)]
    await redis.zadd(keys.arq_queue, {ticks[0]: T0, ticks[1]: T0 + 5_000, ticks[2]: T0})
    assert (await queue.counts(at_ms=T0)).pending == 3

    async def start_one_finish_one() -> None:
        await redis.set(in_progress_key_prefix + ticks[0], b"1", px=60_000)
        await redis.zrem(keys.arq_queue, ticks[2])

    _after_read(monkeypatch, redis, "zrange", start_one_finish_one)
    counts = await queue.counts(at_ms=T0)
    assert (counts.pending, counts.delayed) == (1, 1)  # only the delayed one is left pending
    await redis.delete(in_progress_key_prefix + ticks[0])
