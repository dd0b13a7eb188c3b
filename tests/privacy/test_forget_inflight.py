"""No resurrection (§14): a run paused inside its farm call while ``forget`` runs writes nothing back.

The run is claimed (recording the chat's forget epoch), its extraction answered by
the farm simulator and then held; ``forget`` runs; the held answer — which holds
the forgotten canary — is let go. The card write is refused (older epoch), the
tick releases the run as ``forgotten`` (attempt refunded), and the next tick
extracts it again from what remains. Forgetting the chat instead skips the run
and its owner drops it. The first story runs with the cards on the queue's server and
on the cluster.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore
from memory_worker.keys import Keys
from memory_worker.models import Cursor, RunStatus
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.pipeline.runner import TickRunner
from memory_worker.pipeline.ticks import TickOutcome
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.runs.forget import RunForget
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, close_cards_client
from tests.support.farm import Farm
from tests.support.forget import (
    ALICE,
    BOB,
    CANARY,
    CHAT,
    JAN,
    consolidate_claim,
    deployment_bytes,
    two_users,
)
from tests.support.runner import tick_runner


class Held:
    """The farm call's pause: ``reached`` once the answer is in hand, waits for ``go``."""

    def __init__(self) -> None:
        self.reached = asyncio.Event()
        self.go = asyncio.Event()
        self.active = True

    async def __call__(self) -> None:
        if self.active:
            self.reached.set()
            await self.go.wait()


def runner_for(
    settings: Settings, redis: Any, farm: Farm, cards_redis: Any | None = None
) -> TickRunner:
    cards = CardStore(cards_redis or redis, Keys(settings.key_prefix))
    runs = RunStore(redis, settings)

    async def processor(run: ClaimedRun, *, deadline: float) -> ProcessResult:
        # the run keeps its extraction (§7) as the worker's does: the keep, after the held
        # answer, is refused under the older epoch — or the forget's erase takes it
        kept = runs.extraction_slot(run)
        result = await consolidate_claim(
            run, cards, farm, settings, attempt=run.attempts, kept=kept
        )
        return ProcessResult(summary=result.summary())

    return tick_runner(settings=settings, redis=redis, processor=processor)


@pytest.mark.parametrize("scope", ["user", "chat"])
async def test_a_run_held_in_its_farm_call_during_forget_writes_nothing_back(
    settings: Settings,
    redis: Any,
    cards_redis: Any,
    cards_url: str,
    farm: Farm,
    key_prefix: str,
    scope: str,
) -> None:
    """With the cards on the queue's server, then on the cluster (``MEMORY_CARDS_URL``)."""
    on_cluster = cards_redis is not redis
    s = settings.model_copy(
        update={"forget_rewrite_aof": False, "cards_url": cards_url if on_cluster else None}
    )
    queue = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    store = RunStore(redis, s)

    async def everywhere() -> bytes:
        found = await deployment_bytes(redis, key_prefix)
        return found + (await deployment_bytes(cards_redis, key_prefix) if on_cluster else b"")

    await store.enqueue(two_users(JAN, 1))
    held = Held()
    farm.extractor.hold = held
    runner = runner_for(s, redis, farm, cards_redis)
    tick = asyncio.create_task(runner.tick("t1"))
    await asyncio.wait_for(held.reached.wait(), 10)

    try:
        await queue.forget(CHAT, ALICE if scope == "user" else None)
    finally:
        await close_cards_client(queue.cards.redis, redis)
    held.active = False
    held.go.set()
    outcome = await asyncio.wait_for(tick, 10)

    assert outcome == TickOutcome.ABANDONED.value
    # nothing the held answer made stays: neither cards nor the extraction it would keep
    assert CANARY[ALICE].encode() not in await everywhere()
    cards = CardStore(cards_redis, Keys(s.key_prefix))
    assert await cards.all_cards(CHAT) == []  # the held answer wrote nothing
    (run,) = await store.list_runs(None)
    if scope == "chat":
        assert run.status is RunStatus.SKIPPED
        assert run.message_count == 0
        assert CANARY[BOB].encode() not in await everywhere()
    else:
        assert (run.status, run.attempts, run.releases) == (RunStatus.QUEUED, 0, 1)
        assert run.message_count == 1
        assert await runner.tick("t2") == TickOutcome.COMPLETED.value
        facts = [c.fact_text for c in await cards.all_cards(CHAT)]
        assert any(CANARY[BOB] in f for f in facts)
        counters = await redis.hgetall(Keys(s.key_prefix).counters)
        assert counters[b"released:forgotten"] == b"1"
    assert CANARY[ALICE].encode() not in await everywhere()


@pytest.mark.parametrize("scope", ["user", "chat"])
async def test_a_continuation_of_a_run_finishing_after_forget_carries_no_forgotten_message(
    settings: Settings, redis: Any, key_prefix: str, scope: str
) -> None:
    """A run whose write landed before the forget completes after it: the rest of its
    slice (the continuation) is enqueued without the forgotten messages."""
    s = settings.model_copy(update={"forget_rewrite_aof": False})
    queue = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    store = RunStore(redis, s)
    await store.enqueue(two_users(JAN, 1))
    held = Held()

    async def processor(run: ClaimedRun, *, deadline: float) -> ProcessResult:
        await held()
        cursor = Cursor(after_sent_at=run.request.range_start, after_message_id=0)
        rest = run.request.model_copy(update={"cursor": cursor})
        return ProcessResult(summary={}, continuations=[rest])

    runner = tick_runner(settings=s, redis=redis, processor=processor)
    tick = asyncio.create_task(runner.tick("t1"))
    await asyncio.wait_for(held.reached.wait(), 10)
    await queue.forget(CHAT, ALICE if scope == "user" else None)
    held.go.set()
    await asyncio.wait_for(tick, 10)

    runs = await store.list_runs(RunStatus.QUEUED)
    if scope == "chat":
        assert runs == []
    else:
        assert [r.message_count for r in runs] == [1]
        assert CANARY[BOB].encode() in await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() not in await deployment_bytes(redis, key_prefix)


async def test_a_continuation_enqueued_while_forget_ran_is_cut_back_to_its_parent(
    settings: Settings, redis: Any, key_prefix: str
) -> None:
    """The race behind the pre-check: the continuation landed with the forgotten message;
    ``restrict`` leaves it only what the (stripped) parent still holds."""
    s = settings.model_copy(update={"forget_rewrite_aof": False})
    store = RunStore(redis, s)
    parent = two_users(JAN, 1)
    await store.enqueue(parent)
    claim = (await store.claim_detailed("w1")).run
    assert claim is not None
    await MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s).forget(CHAT, ALICE)
    rest = parent.model_copy(
        update={"cursor": Cursor(after_sent_at=parent.range_start, after_message_id=0)}
    )
    added = await store.enqueue(rest, bypass_caps=True)
    assert added.run_id is not None
    assert CANARY[ALICE].encode() in await deployment_bytes(redis, key_prefix)
    await RunForget(redis, Keys(s.key_prefix), chunk=1).restrict(added.run_id, claim.id)
    assert (await store.get(added.run_id)).message_count == 1
    assert CANARY[ALICE].encode() not in await deployment_bytes(redis, key_prefix)
