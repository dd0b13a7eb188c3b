"""User story (§14): forget a user in a chat, then the chat — no byte of their text remains.

Real Valkey, the farm simulator over loopback HTTP, the worker's claim →
consolidate → complete path. "Every key of the deployment" is every key of the
test's prefix, read value by value.
"""

from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import RedisError, ResponseError

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore
from memory_worker.cards.forget import CardForget
from memory_worker.errors import StoreWriteRefused
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle
from tests.support.dumps import dump_all
from tests.support.farm import Farm
from tests.support.forget import (
    ALICE,
    BOB,
    CANARY,
    CHAT,
    JAN,
    deployment_bytes,
    process_one,
    slice_of,
    two_users,
)


@pytest.fixture
async def queue(settings: Settings, redis: Any) -> MemoryQueue:
    q = MemoryQueue(
        RedisHandle(redis, reveal(settings.redis_url) or ""),
        settings.model_copy(update={"forget_rewrite_aof": False}),
    )
    return q


async def seeded(settings: Settings, redis: Any, farm: Farm) -> tuple[RunStore, CardStore]:
    """Two consolidated runs with both canaries, one queued and one retired run holding them."""
    store = RunStore(redis, settings)
    cards = CardStore(redis, Keys(settings.key_prefix))
    await store.enqueue(two_users(JAN, 1))
    assert await process_one(store, cards, farm, settings) is not None
    await store.enqueue(two_users(JAN.replace(day=11), 10))
    assert await process_one(store, cards, farm, settings) is not None
    await store.enqueue(two_users(JAN.replace(day=12), 20))  # left queued
    return store, cards


async def test_forget_a_user_then_the_chat_leaves_no_byte_of_their_text(
    settings: Settings, redis: Any, farm: Farm, queue: MemoryQueue, key_prefix: str
) -> None:
    store, cards = await seeded(settings, redis, farm)
    before = await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() in before
    assert CANARY[BOB].encode() in before
    facts = [c.fact_text for c in await cards.all_cards(CHAT)]
    assert any(CANARY[ALICE] in f for f in facts)
    assert any(CANARY[BOB] in f for f in facts)

    result = await queue.forget(CHAT, ALICE)

    after = await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() not in after
    assert CANARY[BOB].encode() in after
    assert result.cards >= 2
    assert result.vectors == result.cards
    assert (result.runs, result.messages) == (1, 2)  # the queued run: Alice's two messages
    assert result.episodes == 2
    left = await cards.all_cards(CHAT)
    assert left
    assert all(c.user_id != ALICE for c in left)
    # the queued run keeps Bob's message and is still processed
    queued = await store.list_runs(RunStatus.QUEUED)
    assert [r.message_count for r in queued] == [1]
    assert await process_one(store, cards, farm, settings) is not None
    # the compacted matrix still finds Bob's card by meaning
    bob_home = next(c for c in await cards.all_cards(CHAT) if CANARY[BOB] in c.fact_text)
    query = (await farm.embedder([bob_home.fact_text], idempotency_key="q", timeout=5))[0]
    near = await cards.similar_cards(CHAT, query, 1, now=JAN.replace(day=13))
    assert near[0][0].id == bob_home.id

    chat = await queue.forget(CHAT)
    after = await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() not in after
    assert CANARY[BOB].encode() not in after
    assert chat.cards >= 1
    assert chat.episodes == 1
    assert await cards.all_cards(CHAT) == []
    assert await cards.similar_cards(CHAT, query, 1) == []


async def test_dry_run_writes_nothing(
    settings: Settings, redis: Any, farm: Farm, queue: MemoryQueue, key_prefix: str
) -> None:
    await seeded(settings, redis, farm)
    before = await dump_all(redis, key_prefix)
    user = await queue.forget(CHAT, ALICE, dry_run=True)
    chat = await queue.forget(CHAT, dry_run=True)
    assert await dump_all(redis, key_prefix) == before
    assert user.dry_run
    assert user.cards >= 2
    assert (user.runs, user.messages) == (1, 2)
    assert chat.cards > user.cards
    assert (chat.runs, chat.messages) == (1, 3)
    real = await queue.forget(CHAT, ALICE)
    assert (real.cards, real.vectors, real.episodes, real.links, real.runs, real.messages) == (
        user.cards,
        user.vectors,
        user.episodes,
        user.links,
        user.runs,
        user.messages,
    )


async def test_forget_a_chat_skips_its_runs_and_other_chats_keep_theirs(
    settings: Settings, redis: Any, farm: Farm, queue: MemoryQueue
) -> None:
    store, _cards = await seeded(settings, redis, farm)
    other = slice_of(JAN, (1, BOB, "Bob", f"I live in {CANARY[BOB]}"), chat_id=CHAT + 1)
    await store.enqueue(other)
    await queue.forget(CHAT)
    runs = await store.list_runs(None, limit=100)
    mine = [r for r in runs if r.chat_id == CHAT]
    assert {r.status for r in mine} <= {RunStatus.COMPLETED, RunStatus.SKIPPED}
    assert all(r.message_count == 0 for r in mine if r.status is RunStatus.SKIPPED)
    assert [r.status for r in runs if r.chat_id == CHAT + 1] == [RunStatus.QUEUED]
    assert (await redis.hget(Keys(settings.key_prefix).counters, "skipped:forgotten")) == b"1"


async def test_through_the_production_pipeline_no_copy_is_left_in_any_key(
    settings: Settings, redis: Any, key_prefix: str
) -> None:
    """The production pipeline (routed walker, breakers, routing events, attempt metrics,
    admin reports, error logs) runs both users' runs through a farm that first answers
    garbage; then Alice is forgotten and no key of the deployment holds her canary."""
    from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
    from memory_worker.wiring import build_tick_runner

    s = settings.model_copy(update={"backoff_unit_seconds": 0.001, "forget_rewrite_aof": False})
    store = RunStore(redis, s)
    await store.enqueue(two_users(JAN, 1))
    await store.enqueue(two_users(JAN.replace(day=11), 10))
    async with FarmSimulator() as sim:
        farm = s.model_copy(update={"discovery_base_url": sim.base_url})
        pipeline = await build_tick_runner(farm, redis)
        try:
            sim.set_fault(s.extraction_service, Fault(kind=FaultKind.GARBAGE))
            assert await pipeline.tick("job0") == "failed"
            sim.clear_faults()
            outcomes = [await pipeline.tick(f"job{i}") for i in range(1, 4)]
        finally:
            for close in pipeline.closers:
                await close()
    assert outcomes.count("completed") == 2, outcomes
    keys = Keys(s.key_prefix)
    assert await redis.hlen(keys.routing_attempts) > 0  # routing metrics were written
    assert any(r.error_log for r in await store.list_runs(None))  # a failure was logged
    before = await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() in before

    q = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    await q.forget(CHAT, ALICE)
    after = await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() not in after
    assert CANARY[BOB].encode() in after
    await q.forget(CHAT)
    after = await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() not in after
    assert CANARY[BOB].encode() not in after


async def test_a_retired_run_keeps_the_other_peoples_messages_and_its_error_log(
    settings: Settings, redis: Any, queue: MemoryQueue, key_prefix: str
) -> None:
    from memory_worker.runs.policy import plan_failure

    s = settings.model_copy(update={"max_attempts": 1})
    store = RunStore(redis, s)
    added = await store.enqueue(two_users(JAN, 1))
    claim = (await store.claim_detailed("w1")).run
    assert claim is not None
    plan = plan_failure(1, max_attempts=1, unit=1.0, max_units=1, now_ms=0)
    await store.fail(claim, plan, code="DECODE_ERROR", reason=None, message="bad json")
    assert added.run_id is not None

    result = await queue.forget(CHAT, ALICE)

    run = await store.get(added.run_id)
    assert (run.status, run.retired, run.message_count) == (RunStatus.FAILED, True, 1)
    assert [e.code for e in run.error_log] == ["DECODE_ERROR"]
    assert (result.runs, result.messages) == (1, 2)
    text = await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() not in text
    assert CANARY[BOB].encode() in text


async def test_redis_refusing_the_card_script_mid_forget_leaves_a_forget_that_a_retry_finishes(
    settings: Settings,
    redis: Any,
    farm: Farm,
    queue: MemoryQueue,
    key_prefix: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fault: Redis refuses a command (OOM) in the middle of a forget. The error is typed (a
        RedisError, nothing swallowed), Bob's memory is untouched, and running the same forget
        again removes every byte of Alice's text: no step leaves a half-written chunk behind. The bot
    sees it as memory_worker's StoreWriteRefused, the redis-py error its cause."""
    await seeded(settings, redis, farm)
    refused: list[int] = []
    original = CardForget.__init__

    def init(self: CardForget, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        script = self._forget

        async def refuse_once(**call: Any) -> Any:
            if not refused:
                refused.append(1)
                raise ResponseError("OOM command not allowed when used memory > 'maxmemory'.")
            return await script(**call)

        self._forget = refuse_once  # type: ignore[assignment]

    monkeypatch.setattr(CardForget, "__init__", init)
    with pytest.raises(StoreWriteRefused) as info:
        await queue.forget(CHAT, ALICE)
    assert isinstance(info.value.__cause__, RedisError)
    assert refused == [1]
    assert CANARY[BOB].encode() in await deployment_bytes(redis, key_prefix)

    await queue.forget(CHAT, ALICE)  # the operator runs it again
    after = await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() not in after
    assert CANARY[BOB].encode() in after
