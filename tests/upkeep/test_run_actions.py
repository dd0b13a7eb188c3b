"""One run by id (§13): cancel takes it out for good, replay by id puts it back.

Against a real Valkey: a queued, released, retrying, retired or parked run leaves its lane
and no claim ever takes it; a processing run loses its lease (the renewal answers
"cancelled", completion, failure and release are refused) and its card write refuses
atomically — also when the cancel races the write: the chat holds all of the run's
memory (and the cancel says so) or none of it, never part.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from memory_worker.cards import CardStore
from memory_worker.errors import RunCancelled, RunNotFound
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import ClaimedRun, LeaseAnswer, RunStore
from memory_worker.runs.policy import plan_failure
from memory_worker.settings import Settings
from memory_worker.upkeep.run_actions import CancelOutcome, RunActions
from memory_worker.wiring import replay_store
from tests.support.cards import new, writes
from tests.support.dumps import dump_all, dump_chat
from tests.support.factories import make_request

CHAT = 4242
FAR = 10**13  # a claim "now" far ahead: every backoff is due


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture
def few(settings: Settings) -> Settings:
    return settings.model_copy(update={"max_attempts": 2, "backoff_unit_seconds": 60.0})


@pytest.fixture
def runs(redis: Any, few: Settings) -> RunStore:
    return RunStore(redis, few)


@pytest.fixture
def cards(redis: Any, few: Settings) -> CardStore:
    return CardStore(redis, Keys(few.key_prefix))


@pytest.fixture
def actions(redis: Any, few: Settings, runs: RunStore, cards: CardStore) -> RunActions:
    return RunActions(runs, cards, replay_store(redis, few, runs))


async def enqueued(runs: RunStore, hour: int = 0, chat: int = CHAT) -> str:
    result = await runs.enqueue(make_request(chat, hour=hour))
    assert result.run_id is not None
    return result.run_id


async def claimed(runs: RunStore, run_id: str) -> ClaimedRun:
    claim = await runs.claim("w1", at_ms=now_ms())
    assert claim is not None
    assert claim.id == run_id
    return claim


async def fail_once(runs: RunStore, claim: ClaimedRun) -> bool:
    s = runs.settings
    plan = plan_failure(
        claim.attempts,
        max_attempts=s.max_attempts,
        unit=s.backoff_unit_seconds,
        max_units=s.backoff_max_units,
        now_ms=now_ms(),
    )
    await runs.fail(claim, plan, code="UPSTREAM_ERROR", reason="provider_error", message="x")
    return plan.retire


async def lanes(redis: Any, keys: Keys, run_id: str) -> dict[str, bool]:
    """Which of the run store's lanes and indexes hold ``run_id``."""
    found = {}
    for name, key in {
        "queued": keys.queued,
        "retry": keys.retry,
        "leases": keys.leases,
        "retired": keys.retired,
        **{s.value: keys.by_status(s.value) for s in RunStatus},
    }.items():
        found[name] = await redis.zscore(key, run_id) is not None
    found["summary"] = bool(await redis.hexists(keys.retired_facts, run_id))
    return found


async def assert_out_for_good(
    redis: Any, runs: RunStore, run_id: str, *, alone: bool = True
) -> None:
    held = await lanes(redis, runs.keys, run_id)
    assert {k for k, v in held.items() if v} == {"cancelled"}
    run = await runs.get(run_id)
    assert run.status is RunStatus.CANCELLED
    assert run.lease_owner is None
    assert run.next_attempt_at is None
    assert run.error_log[-1].kind == "cancel"
    if alone:  # nothing else in the store: no claim finds anything
        assert await runs.has_claimable(at_ms=FAR) == 0
        assert await runs.claim("w9", at_ms=FAR) is None


async def test_cancel_takes_a_queued_run_out_for_good_and_again_changes_nothing(
    redis: Any, runs: RunStore, actions: RunActions, key_prefix: str
) -> None:
    run_id = await enqueued(runs)
    preview = await actions.preview_cancel(run_id)
    assert preview.allowed
    assert "leaves the queue" in preview.what
    done = await actions.cancel(run_id, actor="cli", now_ms=now_ms())
    assert (done.outcome, done.before) == (CancelOutcome.CANCELLED, "queued")
    await assert_out_for_good(redis, runs, run_id)
    assert int(await redis.hget(runs.keys.counters, "cancelled:queued")) == 1
    assert (await runs.counts())["cancelled"] == 1

    before = await dump_all(redis, key_prefix)
    again = await actions.cancel(run_id, actor="cli", now_ms=now_ms())
    assert again.outcome is CancelOutcome.ALREADY
    assert await dump_all(redis, key_prefix) == before
    with pytest.raises(RunNotFound):
        await actions.cancel("r-nope", actor="cli", now_ms=now_ms())


async def test_cancel_takes_released_retrying_retired_and_parked_runs_out(
    redis: Any, runs: RunStore, actions: RunActions, few: Settings
) -> None:
    # each claimed while it is the only claimable run (the queue takes the newest window first)
    retired = await enqueued(runs, hour=1)
    assert not await fail_once(runs, await claimed(runs, retired))
    last = await runs.claim("w1", at_ms=FAR)
    assert last is not None
    assert last.id == retired
    assert await fail_once(runs, last)
    assert (await runs.get(retired)).retired
    assert await redis.hexists(runs.keys.retired_facts, retired)

    retrying = await enqueued(runs, hour=2)
    assert not await fail_once(runs, await claimed(runs, retrying))  # waits for its backoff

    newer = RunStore(redis, few.model_copy(update={"prompt_version": "zz-newer"}))
    request = make_request(CHAT, hour=4).model_copy(update={"prompt_version": "zz-newer"})
    parked_id = (await newer.enqueue(request)).run_id
    assert parked_id is not None
    assert await runs.claim("w1", at_ms=now_ms()) is None  # parks the newer version's run
    assert await redis.zscore(runs.keys.parked("zz-newer"), parked_id) is not None

    released = await enqueued(runs, hour=3)
    claim = await claimed(runs, released)
    assert await runs.release(claim, reason="provider_unavailable")
    assert (await runs.get(released)).status is RunStatus.QUEUED

    for run_id, status in (
        (released, "queued"),
        (retrying, "failed"),
        (retired, "failed"),
        (parked_id, "queued"),
    ):
        done = await actions.cancel(run_id, actor="console", now_ms=now_ms())
        assert (done.outcome, done.before) == (CancelOutcome.CANCELLED, status), run_id
        await assert_out_for_good(redis, runs, run_id, alone=False)
    assert await runs.has_claimable(at_ms=FAR) == 0
    assert await runs.claim("w9", at_ms=FAR) is None
    assert await redis.zscore(runs.keys.parked("zz-newer"), parked_id) is None
    assert not await redis.hget(runs.keys.parked_counts, "zz-newer")
    assert await newer.claim("w2", at_ms=FAR) is None


async def test_a_processing_run_loses_its_lease_and_its_card_write_refuses(
    redis: Any, runs: RunStore, cards: CardStore, actions: RunActions
) -> None:
    run_id = await enqueued(runs)
    claim = await claimed(runs, run_id)
    await runs.checkpoint(claim)  # not cancelled: passes
    done = await actions.cancel(run_id, actor="cli", now_ms=now_ms())
    assert (done.outcome, done.before) == (CancelOutcome.CANCELLED, "processing")
    await assert_out_for_good(redis, runs, run_id)

    assert await runs.renew_answer(claim) is LeaseAnswer.CANCELLED
    assert not await runs.renew(claim)
    with pytest.raises(RunCancelled):
        await runs.checkpoint(claim)
    before = await dump_chat(cards, CHAT)
    with pytest.raises(RunCancelled):
        await cards.apply_run(CHAT, run_id, writes(new("Alice likes tea")), now=claim_time())
    assert await dump_chat(cards, CHAT) == before  # nothing of the run was written
    assert not await cards.has_applied(CHAT, run_id)
    assert not await runs.complete(claim, {"cards": 1})
    assert not await runs.release(claim, reason="provider_unavailable")
    assert not await fail_once_refused(runs, claim)
    assert (await runs.get(run_id)).status is RunStatus.CANCELLED


def claim_time() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


async def fail_once_refused(runs: RunStore, claim: ClaimedRun) -> bool:
    plan = plan_failure(1, max_attempts=2, unit=1, max_units=1, now_ms=now_ms())
    return await runs.fail(claim, plan, code="X", reason=None, message="x")


async def test_a_run_whose_card_write_landed_is_not_cancelled_it_completes(
    redis: Any, runs: RunStore, cards: CardStore, actions: RunActions
) -> None:
    run_id = await enqueued(runs)
    claim = await claimed(runs, run_id)
    applied = await cards.apply_run(CHAT, run_id, writes(new("Alice likes tea")), now=claim_time())
    assert applied.applied
    done = await actions.cancel(run_id, actor="cli", now_ms=now_ms())
    assert done.outcome is CancelOutcome.WRITTEN
    assert (await runs.get(run_id)).status is RunStatus.PROCESSING
    assert await runs.complete(claim, {"cards": 1})
    assert (await runs.get(run_id)).status is RunStatus.COMPLETED
    finished = await actions.cancel(run_id, actor="cli", now_ms=now_ms())
    assert finished.outcome is CancelOutcome.FINISHED


async def test_a_cancel_racing_the_card_write_never_leaves_it_half_written(
    redis: Any, runs: RunStore, cards: CardStore, actions: RunActions
) -> None:
    """Cancel and card write sent together, 40 times with jitter on either side: either the
    write refused and the chat is exactly as before, or the whole write landed and the cancel
    was refused — and both outcomes happen."""
    rng = random.Random(35)
    seen: set[str] = set()
    for i in range(40):
        chat = 9000 + i
        run_id = await enqueued(runs, hour=i % 24, chat=chat)
        await claimed(runs, run_id)
        before = await dump_chat(cards, chat)
        facts = [
            new(f"Alice likes tea number {i}", seed=i),
            new(f"Alice owns {i} cats", seed=100 + i),
        ]
        lead = rng.uniform(0, 0.004)
        write_wait, cancel_wait = (lead, 0.0) if i % 2 else (0.0, lead)
        wrote, done = await asyncio.gather(
            write_after(cards, chat, run_id, facts, write_wait),
            cancel_after(actions, run_id, cancel_wait),
        )
        after = await dump_chat(cards, chat)
        if isinstance(wrote, RunCancelled):
            assert done.outcome is CancelOutcome.CANCELLED
            mark = Keys(runs.settings.key_prefix).chat(chat, Keys.cancel_mark_suffix(run_id))
            assert {k: v for k, v in after.items() if k != mark} == before
            assert not await cards.has_applied(chat, run_id)
            assert (await runs.get(run_id)).status is RunStatus.CANCELLED
            seen.add("cancelled")
        else:
            assert wrote.applied
            assert wrote.inserted == 2
            assert done.outcome is CancelOutcome.WRITTEN
            assert len(await cards.live_cards(chat)) == 2
            assert (await runs.get(run_id)).status is RunStatus.PROCESSING
            seen.add("written")
    assert seen == {"cancelled", "written"}


async def write_after(
    cards: CardStore, chat: int, run_id: str, facts: list[Any], wait: float
) -> Any:
    await asyncio.sleep(wait)
    try:
        return await cards.apply_run(chat, run_id, writes(*facts), now=claim_time())
    except RunCancelled as exc:
        return exc


async def cancel_after(actions: RunActions, run_id: str, wait: float) -> Any:
    await asyncio.sleep(wait)
    return await actions.cancel(run_id, actor="cli", now_ms=now_ms())


async def test_replay_by_id_puts_a_cancelled_or_retired_run_back_and_refuses_others(
    redis: Any, runs: RunStore, cards: CardStore, actions: RunActions
) -> None:
    run_id = await enqueued(runs)
    claim = await claimed(runs, run_id)
    await actions.cancel(run_id, actor="cli", now_ms=now_ms())
    plan, outcome = await actions.replay(run_id, now_ms=now_ms())
    assert [i.run_id for i in plan.items] == outcome.replayed == [run_id]
    run = await runs.get(run_id)
    assert (run.status, run.attempts) == (RunStatus.FAILED, 0)
    assert [e.kind for e in run.error_log] == ["cancel", "replay"]
    again = await runs.claim("w2", at_ms=now_ms() + 10)
    assert again is not None
    assert again.id == run_id
    # the cancel's card mark went with the replay: the run writes now (the old claim cannot)
    assert not await runs.renew(claim)
    applied = await cards.apply_run(CHAT, run_id, writes(new("Alice likes tea")), now=claim_time())
    assert applied.applied
    assert await runs.complete(again, {"cards": 1})

    retired = await enqueued(runs, hour=5)
    assert not await fail_once(runs, await claimed(runs, retired))
    last = await runs.claim("w1", at_ms=FAR)
    assert last is not None
    assert await fail_once(runs, last)
    plan, outcome = await actions.replay(retired, now_ms=now_ms())
    assert outcome.replayed == [retired]
    assert not await redis.hexists(runs.keys.retired_facts, retired)
    assert await redis.zscore(runs.keys.retired, retired) is None

    queued = await enqueued(runs, hour=6)
    plan, outcome = await actions.replay(queued, now_ms=now_ms())
    assert not plan.items
    assert not outcome.replayed
    completed_plan, _ = await actions.replay(run_id, now_ms=now_ms())
    assert not completed_plan.items
    with pytest.raises(RunNotFound):
        await actions.replay("r-nope", now_ms=now_ms())


async def test_cancelled_runs_are_pruned_with_the_finished_ones(
    redis: Any, runs: RunStore, actions: RunActions
) -> None:
    run_id = await enqueued(runs)
    await actions.cancel(run_id, actor="cli", now_ms=now_ms())
    days = runs.settings.completed_run_retention_days
    assert await runs.prune_finished(at_ms=now_ms() + int((days + 1) * 86_400_000)) == 1
    assert not await redis.exists(runs.keys.run(run_id))
    assert await redis.zscore(runs.keys.by_status("cancelled"), run_id) is None


async def test_a_forget_strips_a_cancelled_run_so_no_replay_brings_the_text_back(
    redis: Any, runs: RunStore, actions: RunActions, few: Settings
) -> None:
    """§14 over §13: a cancelled run keeps its messages for a replay by id, so a forget
    strips them as it strips any run not completed (a user's; a chat's skips the run)."""
    from memory_worker.privacy.forget import ForgetScope
    from memory_worker.wiring import forgetter

    settings = few.model_copy(update={"forget_rewrite_aof": False})
    user_run = await enqueued(runs, hour=1)  # messages of users 100 and 101 (factories)
    await actions.cancel(user_run, actor="cli", now_ms=now_ms())
    steps = forgetter(redis, settings, redis)
    await steps.forget(ForgetScope(CHAT, 100), actor="test")
    raw = await redis.hget(runs.keys.run(user_run), "messages")
    assert raw is not None
    assert b'"user_id":100' not in raw.replace(b" ", b"")
    assert b'"user_id":101' in raw.replace(b" ", b"")
    assert (await runs.get(user_run)).status is RunStatus.CANCELLED

    await steps.forget(ForgetScope(CHAT), actor="test")
    run = await runs.get(user_run)
    assert run.status is RunStatus.SKIPPED
    assert not await redis.hexists(runs.keys.run(user_run), "messages")
    plan, outcome = await actions.replay(user_run, now_ms=now_ms())
    assert not plan.items
    assert not outcome.replayed
