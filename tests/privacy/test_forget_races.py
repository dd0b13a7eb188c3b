"""Forget's fences (§14): a run or a card that changed after the plan is planned again.

The scripts compare each run's status and the digest of its messages, each card's
``updated`` stamp, with what the plan saw; a mismatch leaves the thing alone and the
shell plans it again from the current state.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from memory_worker.cards import CardStore
from memory_worker.cards.forget import CardForget
from memory_worker.cards.writes import RunWrites
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.runs.forget import RunForget
from memory_worker.settings import Settings
from tests.support.forget import ALICE, BOB, CHAT, JAN, two_users
from tests.support.forget_cards import new_card


async def one_queued_run(settings: Settings, redis: Any) -> tuple[RunStore, str, RunForget]:
    """Two users' messages queued as one run: its store, its id, and a run forget."""
    store = RunStore(redis, settings)
    added = await store.enqueue(two_users(JAN, 1))
    assert added.run_id is not None
    return store, added.run_id, RunForget(redis, Keys(settings.key_prefix), chunk=10)


async def test_a_run_completed_after_the_plan_is_left_completed(
    settings: Settings, redis: Any
) -> None:
    store, run_id, forget = await one_queued_run(settings, redis)
    (change,) = await forget.plan([run_id], None)  # plan: skip the queued run
    claim = (await store.claim_detailed("w1")).run
    assert claim is not None
    assert await store.complete(claim, {"cards": 0})

    assert await forget.apply([change], None) == []  # raced, planned again: nothing to do
    run = await store.get(run_id)
    assert run.status is RunStatus.COMPLETED


async def test_a_run_whose_messages_changed_is_stripped_from_what_it_holds_now(
    settings: Settings, redis: Any
) -> None:
    store, run_id, forget = await one_queued_run(settings, redis)
    stale = await forget.plan([run_id], BOB)
    assert await forget.apply(await forget.plan([run_id], ALICE), ALICE)
    landed = await forget.apply(stale, BOB)  # planned before Alice's messages left
    assert [c.removed for c in landed] == [1]
    run = await store.get(run_id)
    assert (run.status, run.message_count) == (RunStatus.SKIPPED, 0)


async def test_a_card_observed_after_the_plan_is_planned_again(
    settings: Settings, redis: Any
) -> None:
    import random

    keys = Keys(settings.key_prefix)
    cards = CardStore(redis, keys)
    rng = random.Random(1)
    card = new_card(0, rng)  # user 1's card
    await cards.apply_run(CHAT, "r1", RunWrites(observed_at=JAN, cards=[card]), now=JAN)
    forget = CardForget(redis, keys, chunk=10)
    plan = await forget.plan_user(CHAT, 1)
    later = JAN + timedelta(hours=1)
    await cards.apply_run(CHAT, "r2", RunWrites(observed_at=later, cards=[card]), now=later)

    counts = await forget.forget_user(CHAT, 1, plan)
    assert counts.cards == 1
    assert await cards.all_cards(CHAT) == []


async def test_a_merge_read_before_a_forget_writes_nothing(settings: Settings, redis: Any) -> None:
    """The merge pass reads the epoch before the cards; a forget during its model call
    refuses the fold (its merged text may hold the forgotten facts)."""
    import random

    from memory_worker.cards.writes import FoldGroup

    keys = Keys(settings.key_prefix)
    cards = CardStore(redis, keys)
    rng = random.Random(2)
    written = [new_card(i, rng) for i in (1, 2)]
    await cards.apply_run(CHAT, "r1", RunWrites(observed_at=JAN, cards=written), now=JAN)
    survivor, absorbed = sorted(c.id for c in await cards.all_cards(CHAT))
    epoch = await cards.forget_epoch(CHAT)
    await CardForget(redis, keys, chunk=10).raise_epoch(CHAT, epoch + 1)  # a forget ran
    before = {k: await redis.dump(k) for k in await cards.chat_keys(CHAT)}
    group = FoldGroup(survivor_id=survivor, absorbed_ids=[absorbed], new_fact_text="merged text")

    refused = await cards.fold_groups(CHAT, [group], now=JAN, forget_epoch=epoch)
    assert refused.forgotten
    assert {k: await redis.dump(k) for k in await cards.chat_keys(CHAT)} == before
    done = await cards.fold_groups(CHAT, [group], now=JAN, forget_epoch=epoch + 1)
    assert (done.forgotten, done.folded) == (False, 1)
