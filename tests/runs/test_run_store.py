"""Run store against a real Redis/Valkey (§7): enqueue, claim order, lease, outcomes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from llm_client import as_text
from memory_worker.errors import InvalidRunRequest, RunNotFound
from memory_worker.keys import Keys
from memory_worker.models import RunStatus, parse_run_request
from memory_worker.runs import EnqueueStatus, RunStore
from memory_worker.runs.model import HOUR_MS, HOURLY_KEEP_HOURS, count_hour
from memory_worker.runs.policy import plan_failure
from memory_worker.settings import Settings
from tests.support.factories import make_request, request_dict
from tests.support.runs import done_beside_waiting

T0 = 1_800_000_000_000  # a fixed "now" in ms


@pytest.fixture
def store(redis: Any, settings: Settings) -> RunStore:
    return RunStore(redis, settings)


async def test_enqueue_is_idempotent_by_natural_key(store: RunStore) -> None:
    first = await store.enqueue(make_request(1), at_ms=T0)
    again = await store.enqueue(make_request(1), at_ms=T0 + 5)
    assert first.status is EnqueueStatus.ENQUEUED
    assert again.status is EnqueueStatus.DUPLICATE
    assert again.run_id == first.run_id
    assert (await store.counts())["queued"] == 1
    other_thread = await store.enqueue(make_request(1, thread_id=7), at_ms=T0)
    other_version = await store.enqueue(make_request(1, prompt_version="v0"), at_ms=T0)
    assert other_thread.status is EnqueueStatus.ENQUEUED
    assert other_version.status is EnqueueStatus.ENQUEUED


async def test_queue_cap_counts_queued_and_processing(redis: Any, settings: Settings) -> None:
    store = RunStore(redis, settings.model_copy(update={"max_queued_runs": 2}))
    assert (await store.enqueue(make_request(1), at_ms=T0)).status is EnqueueStatus.ENQUEUED
    assert (await store.enqueue(make_request(2), at_ms=T0)).status is EnqueueStatus.ENQUEUED
    full = await store.enqueue(make_request(3), at_ms=T0)
    assert full.status is EnqueueStatus.QUEUE_FULL
    assert full.run_id is None
    await store.claim("w", at_ms=T0)  # processing still counts
    assert (await store.enqueue(make_request(3), at_ms=T0)).status is EnqueueStatus.QUEUE_FULL
    # continuations of admitted work bypass the caps
    assert (
        await store.enqueue(make_request(4), bypass_caps=True, at_ms=T0)
    ).status is EnqueueStatus.ENQUEUED


async def test_daily_cap_per_utc_day(redis: Any, settings: Settings) -> None:
    store = RunStore(redis, settings.model_copy(update={"max_daily_enqueued_runs": 2}))
    for chat in (1, 2):
        assert (await store.enqueue(make_request(chat), at_ms=T0)).status is EnqueueStatus.ENQUEUED
    assert (await store.enqueue(make_request(3), at_ms=T0)).status is EnqueueStatus.DAILY_CAP
    next_day = T0 + 86_400_000
    assert (await store.enqueue(make_request(3), at_ms=next_day)).status is EnqueueStatus.ENQUEUED


async def test_oversized_request_is_rejected_and_nothing_stored(
    redis: Any, settings: Settings
) -> None:
    store = RunStore(redis, settings.model_copy(update={"max_message_chars": 10}))
    with pytest.raises(InvalidRunRequest) as info:
        await store.enqueue(make_request(1, texts=["x" * 11]), at_ms=T0)
    assert "longer than 10" in str(info.value)
    assert await store.counts() == {s.value: 0 for s in RunStatus} | {"retired": 0}
    assert [k async for k in redis.scan_iter(match=f"*{settings.key_prefix}*")] == []


def test_invalid_json_is_a_typed_error() -> None:
    with pytest.raises(InvalidRunRequest) as info:
        parse_run_request(b'{"chat_id": "x", "messages": []}')
    text = str(info.value)
    assert "chat_id" in text
    assert "range_start" in text


async def test_claim_order_expired_leases_then_due_retries_then_newest_queued(
    store: RunStore,
) -> None:
    old = (await store.enqueue(make_request(1, hour=0), at_ms=T0)).run_id
    new = (await store.enqueue(make_request(1, hour=5), at_ms=T0)).run_id
    mid = (await store.enqueue(make_request(1, hour=3), at_ms=T0)).run_id
    a = await store.claim("w", at_ms=T0)
    b = await store.claim("w", at_ms=T0)
    assert a is not None
    assert b is not None
    assert [a.id, b.id] == [new, mid]  # newest windows first
    plan = plan_failure(b.attempts, max_attempts=5, unit=60, max_units=60, now_ms=T0)
    await store.fail(b, plan, code="X", reason=None, message="boom", at_ms=T0)
    # a's lease (30 s) expires; b's backoff (60 s) passes: lease first, then retry, then queued
    later = T0 + 61_000
    first = await store.claim("w2", at_ms=later)
    second = await store.claim("w2", at_ms=later)
    third = await store.claim("w2", at_ms=later)
    assert first is not None
    assert second is not None
    assert third is not None
    assert [first.id, second.id, third.id] == [new, mid, old]
    assert first.attempts == 2  # a reclaim after a crash spends an attempt
    assert await store.claim("w2", at_ms=later) is None


async def test_release_refunds_the_attempt_and_keeps_the_error_log(store: RunStore) -> None:
    rid = (await store.enqueue(make_request(1), at_ms=T0)).run_id
    assert rid
    claim = await store.claim("w", at_ms=T0)
    assert claim is not None
    assert claim.attempts == 1
    assert (await store.get(rid)).status is RunStatus.PROCESSING
    assert await store.release(claim, reason="provider_unavailable", at_ms=T0 + 10)
    run = await store.get(rid)
    assert run.status is RunStatus.QUEUED
    assert run.attempts == 0
    assert run.releases == 1
    assert run.error_log == []
    assert run.lease_owner is None
    assert run.leased_until is None
    # the run is claimable again at once, attempts start from 0 again
    again = await store.claim("w", at_ms=T0 + 20)
    assert again is not None
    assert again.id == rid
    assert again.attempts == 1
    assert again.releases == 1


async def hourly_counts(redis: Any, settings: Settings) -> dict[str, int]:
    raw = await redis.hgetall(Keys(settings.key_prefix).runs_hourly)
    return {as_text(k): int(v) for k, v in raw.items()}


async def test_releases_count_in_their_utc_hour(
    redis: Any, settings: Settings, store: RunStore
) -> None:
    hour = T0 // HOUR_MS  # T0 is the start of a UTC hour
    for i in range(2):
        await store.enqueue(make_request(i + 1), at_ms=T0)
    # two releases in T0's hour (both branches: a fresh run back to queued, and again)
    for at in (T0 + 1, T0 + HOUR_MS - 1):
        claim = await store.claim("w", at_ms=at)
        assert claim is not None
        assert await store.release(claim, reason="provider_unavailable", at_ms=at)
    # one two hours later; a fenced-off (stale) release counts nothing
    later = T0 + 2 * HOUR_MS + 5
    claim = await store.claim("w", at_ms=later)
    assert claim is not None
    assert await store.release(claim, reason="capacity_unavailable", at_ms=later)
    assert not await store.release(claim, reason="capacity_unavailable", at_ms=later + 1)
    assert await hourly_counts(redis, settings) == {
        f"released:{hour}": 2,
        f"released:{hour + 2}": 1,
    }


async def test_replay_lane_releases_count_too(
    redis: Any, settings: Settings, store: RunStore
) -> None:
    rid = (await store.enqueue(make_request(1), at_ms=T0)).run_id
    assert rid
    await redis.hset(Keys(settings.key_prefix).run(rid), "uncapped", "1")
    claim = await store.claim("w", at_ms=T0)
    assert claim is not None
    assert await store.release(claim, reason="provider_unavailable", at_ms=T0 + 7)
    assert (await store.get(rid)).status is RunStatus.FAILED  # the replay lane
    assert await hourly_counts(redis, settings) == {f"released:{T0 // HOUR_MS}": 1}


@pytest.mark.parametrize(
    ("before", "at_hour", "keep", "after"),
    [
        ({}, 10, 3, {"released:10": 1}),
        ({"released:10": 4}, 10, 3, {"released:10": 5}),
        # at most `keep` fields: nothing pruned, however old
        (
            {"released:1": 1, "released:2": 1},
            10,
            3,
            {"released:1": 1, "released:2": 1, "released:10": 1},
        ),
        # past `keep`: only (hour - keep, hour + keep] stays
        (
            {"released:7": 1, "released:8": 2, "released:13": 1, "released:14": 1},
            10,
            3,
            {"released:8": 2, "released:10": 1, "released:13": 1},
        ),
        # a field that names no hour goes once pruning runs
        ({"released:x": 1, "released:9": 1, "9": 1}, 10, 2, {"released:9": 1, "released:10": 1}),
    ],
    ids=["first", "same-hour", "under-keep", "prunes-old-and-far-future", "drops-unparsable"],
)
def test_count_hour_table(
    before: dict[str, int], at_hour: int, keep: int, after: dict[str, int]
) -> None:
    assert count_hour(before, "released", at_hour * HOUR_MS + 123, keep) == after


async def test_hourly_counts_keep_the_last_hours_only(
    redis: Any, settings: Settings, store: RunStore
) -> None:
    """A release every hour for a week: the hash holds the newest ``keep`` hours, no more."""
    await store.enqueue(make_request(1), at_ms=T0)
    hours = 7 * 24
    for i in range(hours):
        at = T0 + i * HOUR_MS + 60_000
        claim = await store.claim("w", at_ms=at)
        assert claim is not None
        assert await store.release(claim, reason="provider_unavailable", at_ms=at)
    last = T0 // HOUR_MS + hours - 1
    assert await hourly_counts(redis, settings) == {
        f"released:{h}": 1 for h in range(last - HOURLY_KEEP_HOURS + 1, last + 1)
    }


async def test_hourly_counts_agree_with_the_twin_and_stay_bounded(
    redis: Any, settings: Settings, store: RunStore
) -> None:
    """Random release times (forward, backward, far ahead) through the script and the twin."""
    rng = random.Random(14)
    await store.enqueue(make_request(1), at_ms=T0)
    twin: dict[str, int] = {}
    at, prunes = T0, 0
    for _ in range(200):
        at += rng.choice([0, 1, 1, 2, 5, -3, 60, -70]) * HOUR_MS + rng.randrange(HOUR_MS)
        claim = await store.claim("w", at_ms=at)
        assert claim is not None
        assert await store.release(claim, reason="provider_unavailable", at_ms=at)
        before, twin = twin, count_hour(twin, "released", at)
        prunes += bool(set(before) - set(twin))
        stored = await hourly_counts(redis, settings)
        assert stored == twin
        assert len(stored) <= 2 * HOURLY_KEEP_HOURS
    assert prunes >= 3  # the sequence did outgrow the bound, more than once


async def test_retirement_after_max_attempts_with_backoffs(store: RunStore) -> None:
    rid = (await store.enqueue(make_request(1), at_ms=T0)).run_id
    assert rid
    now = T0
    delays = []
    for _ in range(5):
        claim = await store.claim("w", at_ms=now)
        assert claim is not None
        assert claim.id == rid
        plan = plan_failure(claim.attempts, max_attempts=5, unit=60, max_units=60, now_ms=now)
        await store.fail(
            claim,
            plan,
            code="DecodeError",
            reason="provider_protocol_error",
            message="bad json",
            at_ms=now,
        )
        run = await store.get(rid)
        if run.next_attempt_at is not None:
            delays.append(int(run.next_attempt_at.timestamp() * 1000) - now)
            assert await store.claim("w", at_ms=now) is None  # not before the backoff
            now = int(run.next_attempt_at.timestamp() * 1000)
    assert delays == [60_000, 240_000, 540_000, 960_000]
    run = await store.get(rid)
    assert run.status is RunStatus.FAILED
    assert run.retired
    assert run.attempts == 5
    assert [e.attempt for e in run.error_log] == [1, 2, 3, 4, 5]
    assert run.error_log[-1].kind == "retired"
    assert (await store.counts())["retired"] == 1
    assert await store.claim("w", at_ms=now + 10_000_000) is None  # retired runs are never claimed


async def test_lease_fencing_after_reclaim(store: RunStore) -> None:
    rid = (await store.enqueue(make_request(1), at_ms=T0)).run_id
    stale = await store.claim("dead-worker", at_ms=T0)
    assert stale is not None
    assert await store.renew(stale, at_ms=T0 + 10_000)
    fresh = await store.claim("other", at_ms=T0 + 41_000)  # lease (renewed to +40 s) expired
    assert fresh is not None
    assert fresh.id == rid
    assert not await store.renew(stale, at_ms=T0 + 42_000)
    assert not await store.complete(stale, {"cards": 1}, at_ms=T0 + 42_000)
    assert not await store.release(stale, reason="shutdown", at_ms=T0 + 42_000)
    assert await store.complete(fresh, {"cards": 2}, at_ms=T0 + 43_000)
    run = await store.get(rid)
    assert run.status is RunStatus.COMPLETED
    assert run.result == {"cards": 2}


async def test_expired_lease_on_last_attempt_retires(redis: Any, settings: Settings) -> None:
    store = RunStore(redis, settings.model_copy(update={"max_attempts": 1}))
    rid = (await store.enqueue(make_request(1), at_ms=T0)).run_id
    assert await store.claim("crashy", at_ms=T0) is not None
    assert await store.claim("w", at_ms=T0 + 31_000) is None
    run = await store.get(rid or "")
    assert run.retired
    assert run.error_log[-1].code == "lease_expired"


async def test_older_prompt_version_is_skipped(store: RunStore) -> None:
    old = (await store.enqueue(make_request(1, prompt_version="memory_v0"), at_ms=T0)).run_id
    cur = (await store.enqueue(make_request(1, hour=-1), at_ms=T0)).run_id
    claim = await store.claim("w", at_ms=T0)
    assert claim is not None
    assert claim.id == cur
    assert (await store.get(old or "")).status is RunStatus.SKIPPED


async def test_claimed_request_round_trips(store: RunStore) -> None:
    data = request_dict(9, texts=["héllo 👋", "second"])
    await store.enqueue(parse_run_request(data), at_ms=T0)
    claim = await store.claim("w", at_ms=T0)
    assert claim is not None
    assert claim.request == parse_run_request(data | {"prompt_version": "memory_v1"})


async def test_unknown_run_is_a_typed_error(store: RunStore) -> None:
    with pytest.raises(RunNotFound):
        await store.get("nope")


async def test_finished_runs_are_pruned_after_retention_and_stay_duplicates(
    redis: Any, settings: Settings
) -> None:
    store, done_id, waiting = await done_beside_waiting(
        redis, settings, done_chat=1, waiting_chat=2, at_ms=T0
    )
    assert await store.prune_finished(at_ms=T0 + 86_400_000 - 10) == 0  # not old enough
    assert await store.prune_finished(at_ms=T0 + 86_400_000 + 10) == 1
    with pytest.raises(RunNotFound):
        await store.get(done_id)
    assert [k async for k in redis.scan_iter(match=f"*run:{done_id}*")] == []
    assert (await store.get(waiting)).status is RunStatus.QUEUED  # untouched
    again = await store.enqueue(make_request(1), at_ms=T0 + 86_400_000 + 20)
    assert again.status is EnqueueStatus.DUPLICATE  # never consolidated twice


# --- prompt versions (§7, fault-matrix row 14) -----------------------------------------------


def _worker(redis: Any, settings: Settings, version: str, **update: Any) -> RunStore:
    return RunStore(redis, settings.model_copy(update={"prompt_version": version, **update}))


async def test_newer_version_is_parked_untouched_and_claimed_by_its_workers(
    redis: Any, settings: Settings
) -> None:
    v1, v2 = _worker(redis, settings, "memory_v1"), _worker(redis, settings, "memory_v2")
    newer = [
        (await v1.enqueue(make_request(c, prompt_version="memory_v2"), at_ms=T0)).run_id
        for c in range(3)
    ]
    mine = (await v1.enqueue(make_request(9, hour=-5, prompt_version="memory_v1"), at_ms=T0)).run_id
    claim = await v1.claim("old", at_ms=T0)  # the newer runs sort first (newest window first)
    assert claim is not None
    assert claim.id == mine
    assert await v1.claim("old", at_ms=T0) is None  # nothing else for v1, no spin
    assert await v1.has_claimable(at_ms=T0) == 0  # the parked runs do not wake v1 workers
    assert await v2.has_claimable(at_ms=T0) == 1  # but they do wake v2 workers
    for rid in newer:
        run = await v1.get(rid or "")
        assert run.status is RunStatus.QUEUED  # untouched: not skipped, no attempt spent
        assert (run.attempts, run.prompt_version) == (0, "memory_v2")
    assert (await v1.counts())["queued"] == 3
    got = [await v2.claim("new", at_ms=T0 + 1) for _ in range(3)]  # restored on claim
    assert sorted(c.id for c in got if c is not None) == sorted(r or "" for r in newer)
    assert all(c is not None and c.request.prompt_version == "memory_v2" for c in got)
    assert await redis.hgetall(v2.keys.parked_counts) == {}


async def test_run_without_version_takes_the_claiming_workers(
    redis: Any, settings: Settings
) -> None:
    bot = _worker(redis, settings, "memory_v0")  # the bot's env lacks the workers' version
    rid = (await bot.enqueue(make_request(1), at_ms=T0)).run_id
    assert (await bot.get(rid or "")).prompt_version is None
    worker = _worker(redis, settings, "memory_v7")
    claim = await worker.claim("w", at_ms=T0)
    assert claim is not None
    assert claim.id == rid
    assert claim.request.prompt_version == "memory_v7"
    assert (await worker.get(rid or "")).prompt_version == "memory_v7"


async def test_parked_runs_count_against_the_queued_cap(redis: Any, settings: Settings) -> None:
    v1 = _worker(redis, settings, "memory_v1", max_queued_runs=2)
    for chat in (1, 2):
        await v1.enqueue(make_request(chat, prompt_version="memory_v2"), at_ms=T0)
    assert await v1.claim("old", at_ms=T0) is None  # parks both
    assert await redis.zcard(v1.keys.queued) == 0
    full = await v1.enqueue(make_request(3), at_ms=T0)
    assert full.status is EnqueueStatus.QUEUE_FULL


async def test_newer_version_from_retry_and_dead_lease_is_parked_as_queued(
    redis: Any, settings: Settings
) -> None:
    v1, v2 = _worker(redis, settings, "memory_v1"), _worker(redis, settings, "memory_v2")
    a = (await v2.enqueue(make_request(1, prompt_version="memory_v2"), at_ms=T0)).run_id
    b = (await v2.enqueue(make_request(2, prompt_version="memory_v2"), at_ms=T0)).run_id
    first = await v2.claim("new", at_ms=T0)
    second = await v2.claim("new", at_ms=T0)
    assert first is not None
    assert second is not None
    plan = plan_failure(1, max_attempts=5, unit=60, max_units=60, now_ms=T0)
    await v2.fail(first, plan, code="X", reason=None, message="x", at_ms=T0)  # → retry
    later = T0 + 10**7  # retry due, second's lease long expired
    assert await v1.claim("old", at_ms=later) is None
    for rid in (a, b):
        run = await v1.get(rid or "")
        assert run.status is RunStatus.QUEUED
        assert run.attempts == 1  # kept: the dead worker's crash still spent it
        assert run.lease_owner is None
    assert await redis.zcard(v1.keys.parked("memory_v2")) == 2


# --- replayed runs and the queued cap (§7, fault-matrix row 16) ---------------------------------


async def _replayed(store: RunStore, redis: Any, n: int) -> list[str]:
    """``n`` runs retired and then replayed by an operator (attempts 0, status failed)."""
    from memory_worker.runs.replay import ReplayFilter, ReplayStore

    s = store.settings
    ids = []
    for i in range(n):
        rid = (await store.enqueue(make_request(500 + i), at_ms=T0)).run_id
        assert rid
        ids.append(rid)
        while True:
            claim = await store.claim("w", at_ms=T0 + 10**9)
            assert claim is not None
            plan = plan_failure(
                claim.attempts, max_attempts=s.max_attempts, unit=0.001, max_units=1, now_ms=T0
            )
            await store.fail(claim, plan, code="UPSTREAM_ERROR", reason=None, message="x")
            if plan.retire:
                break
    replay = ReplayStore(redis, s, store)
    outcome = await replay.apply(await replay.plan(ReplayFilter(), now_ms=T0 + 10**9))
    assert sorted(outcome.replayed) == sorted(ids)
    return ids


async def test_replayed_runs_stay_outside_the_cap_through_any_number_of_releases(
    redis: Any, settings: Settings
) -> None:
    store = RunStore(redis, settings.model_copy(update={"max_queued_runs": 3, "max_attempts": 2}))
    ids = await _replayed(store, redis, 3)
    now = T0 + 2 * 10**9
    for round_ in range(3):
        claims = [await store.claim("w", at_ms=now) for _ in range(3)]
        assert sorted(c.id for c in claims if c is not None) == sorted(ids)
        # while processing, too
        fresh = await store.enqueue(make_request(10 + round_), at_ms=now)
        assert fresh.status is EnqueueStatus.ENQUEUED, round_
        for claim in claims:
            assert claim is not None
            assert await store.release(claim, reason="provider_unavailable", at_ms=now)
        fresh = await store.enqueue(make_request(20 + round_), at_ms=now)
        assert fresh.status is EnqueueStatus.ENQUEUED, round_
        for rid in ids:
            run = await store.get(rid)
            assert (run.status, run.attempts, run.releases) == (RunStatus.FAILED, 0, 2 * round_ + 1)
        # take the fresh ones out of the way again (they do count): claim all five,
        # complete the fresh two, release the replayed three once more
        others = [await store.claim("w", at_ms=now + 10**9) for _ in range(5)]
        for other in others:
            assert other is not None
            if other.id in ids:
                assert await store.release(other, reason="provider_unavailable", at_ms=now)
            else:
                assert await store.complete(other, {}, at_ms=now)
        now += 1000
    counts = await store.counts()
    assert counts["queued"] == 0


async def test_a_replayed_run_that_fails_again_counts_again(redis: Any, settings: Settings) -> None:
    store = RunStore(redis, settings.model_copy(update={"max_queued_runs": 1, "max_attempts": 3}))
    (rid,) = await _replayed(store, redis, 1)
    now = T0 + 2 * 10**9
    claim = await store.claim("w", at_ms=now)
    assert claim is not None
    plan = plan_failure(1, max_attempts=3, unit=0.001, max_units=1, now_ms=now)
    await store.fail(claim, plan, code="X", reason=None, message="x", at_ms=now)
    claim = await store.claim("w", at_ms=now + 10**6)
    assert claim is not None
    assert claim.id == rid
    assert (await store.enqueue(make_request(1), at_ms=now)).status is EnqueueStatus.QUEUE_FULL
    assert await store.release(claim, reason="provider_unavailable", at_ms=now)
    run = await store.get(rid)
    assert run.status is RunStatus.QUEUED  # back in the queue, counted
    assert (await store.enqueue(make_request(1), at_ms=now)).status is EnqueueStatus.QUEUE_FULL


async def test_runs_parked_for_a_version_now_older_than_the_fleet_are_skipped(
    redis: Any, settings: Settings
) -> None:
    v1 = _worker(redis, settings, "memory_v1")
    rid = (await v1.enqueue(make_request(1, prompt_version="memory_v2"), at_ms=T0)).run_id
    assert await v1.claim("old", at_ms=T0) is None  # parked for memory_v2 workers
    v3 = _worker(redis, settings, "memory_v3")  # the fleet moved on past memory_v2
    assert (await v3.prune(at_ms=T0)).unparked == 1
    assert await v3.claim("new", at_ms=T0) is None
    assert (await v3.get(rid or "")).status is RunStatus.SKIPPED  # replayable, not lost
    assert await redis.hgetall(v3.keys.parked_counts) == {}


async def test_a_claim_parks_a_long_run_of_newer_versions_once_and_reaches_its_own(
    redis: Any, settings: Settings
) -> None:
    v1 = _worker(redis, settings, "memory_v1")
    for chat in range(40):  # newer windows than ours: all ahead of it in the queue
        await v1.enqueue(make_request(chat, hour=5, prompt_version="memory_v2"), at_ms=T0)
    mine = (await v1.enqueue(make_request(99, hour=0), at_ms=T0)).run_id
    claim = await v1.claim("old", at_ms=T0)
    assert claim is not None
    assert claim.id == mine
    assert await redis.zcard(v1.keys.parked("memory_v2")) == 40
    assert await redis.hget(v1.keys.parked_counts, "memory_v2") == b"40"
    assert int(await redis.hget(v1.keys.counters, "parked:prompt_version")) == 40
