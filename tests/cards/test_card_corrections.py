"""Single-card corrections (§10, §13): ``MemoryQueue.retract`` and ``correct`` on real Valkey,
the cards on the queue's server and on the 3-master cluster.

A retracted card leaves every read, keeps its text and who/why, and is not learned again
from messages sent before the retraction — also by a run held in its farm call while the
retraction happens — while a newer message restating it is learned. A correction
supersedes the card with an operator-asserted one. Every change is an audit event without
card text.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from llm_client import as_text
from memory_worker.api import MemoryQueue
from memory_worker.cards import Card, CardStatus
from memory_worker.errors import CardNotFound, CardNotLive, InvalidCardRef, InvalidCorrection
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, close_cards_client
from tests.support.cards import ALICE, CHAT, T0, apply, new
from tests.support.clock import ManualClock
from tests.support.farm import Farm
from tests.support.forget import ALICE as SPEAKER
from tests.support.forget import CANARY, JAN, consolidate_claim, process_one, slice_of
from tests.support.forget import CHAT as ROOM


@pytest.fixture
async def queue(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str
) -> AsyncIterator[MemoryQueue]:
    """A queue whose cards are on ``cards_redis`` (standalone, then the cluster)."""
    on_cluster = cards_redis is not redis
    s = settings.model_copy(update={"cards_url": cards_url if on_cluster else None})
    q = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    q.clock = ManualClock((T0 + timedelta(days=1)).timestamp())
    try:
        yield q
    finally:
        await close_cards_client(q.cards.redis, redis)


async def audit_events(q: MemoryQueue) -> list[dict[str, str]]:
    rows = await q.redis.xrange(q.keys.audit)
    return [{as_text(k): as_text(v) for k, v in fields.items()} for _, fields in rows]


async def test_a_retracted_card_leaves_every_read_and_keeps_who_and_why(
    queue: MemoryQueue,
) -> None:
    await apply(queue.cards, "r1", new("Alice likes Qorvadine tea", seed=1), new("Alice skis"))
    card, other = await queue.visible_cards(CHAT, user_id=ALICE)
    gone = await queue.retract(card.ref, actor="ops:ann", reason="she never said so")

    assert (gone.status, gone.retracted_by, gone.retract_reason) == (
        CardStatus.RETRACTED,
        "ops:ann",
        "she never said so",
    )
    assert gone.retracted_at == queue._now()
    assert gone.fact_text == card.fact_text  # kept, never deleted
    assert await queue.visible_cards(CHAT, user_id=ALICE) == [other]
    near = await queue.similar_cards(CHAT, [1.0] * 16, k=10)
    assert card.id not in {c.id for c, _ in near}
    (event,) = await audit_events(queue)
    assert event | {"host": "", "at_ms": ""} == {
        "type": "retract",
        "chat_id": str(CHAT),
        "card_id": card.id,
        "status": "active",
        "actor": "ops:ann",
        "host": "",
        "at_ms": "",
    }
    again = await queue.retract(card, actor="ops:bob", reason="again")  # a Card works too
    assert again == gone  # nothing changed, no second event
    assert len(await audit_events(queue)) == 1


async def test_bad_references_and_arguments_are_typed_errors(queue: MemoryQueue) -> None:
    await apply(queue.cards, "r1", new("Alice skis"))
    (card,) = await queue.visible_cards(CHAT, user_id=ALICE)
    for ref in ["7", "x:7", f"{CHAT}:", f"{CHAT}:abc", 7, None]:
        with pytest.raises(InvalidCardRef):
            await queue.retract(ref, actor="ops", reason="r")  # type: ignore[arg-type]
    with pytest.raises(CardNotFound, match=f"no card {CHAT}:999"):
        await queue.retract(f"{CHAT}:999", actor="ops", reason="r")
    with pytest.raises(CardNotFound):
        await queue.correct(f"{CHAT + 1}:{card.id}", "Alice snowboards", actor="ops")
    for actor in ["", "   ", None, "x" * 201]:
        with pytest.raises(InvalidCorrection):
            await queue.retract(card.ref, actor=actor, reason="r")  # type: ignore[arg-type]
    for fact in ["", "  ", "password: hunter2hunter2", "x" * 701]:
        with pytest.raises(InvalidCorrection):
            await queue.correct(card.ref, fact, actor="ops")
    assert await queue.visible_cards(CHAT, user_id=ALICE) == [card]  # nothing written
    assert await audit_events(queue) == []


async def test_a_correction_supersedes_the_card_with_an_asserted_one(queue: MemoryQueue) -> None:
    await apply(queue.cards, "r1", new("Alice lives in Lisbon", predicate="lives in", seed=None))
    (old,) = await queue.visible_cards(CHAT, user_id=ALICE)
    fixed = await queue.correct(old.ref, "Alice wohnt in Porto", actor="ops:ann")
    now = queue._now()

    assert fixed.fact_text == "Alice wohnt in Porto"  # as written, never translated
    assert (fixed.asserted_by, fixed.corrects, fixed.confidence) == ("ops:ann", old.id, 1.0)
    assert (fixed.scope_key, fixed.subject, fixed.predicate) == (old.scope_key, "Alice", "lives in")
    assert (fixed.valid_from, fixed.source_message_ids) == (now, old.source_message_ids)
    assert not fixed.has_embedding  # the chat has no vectors: none made
    history = await queue.cards.get_card(CHAT, old.id)
    assert history is not None
    assert (history.status, history.superseded_by, history.valid_until) == (
        CardStatus.SUPERSEDED,
        fixed.id,
        now,
    )
    assert await queue.visible_cards(CHAT, user_id=ALICE) == [fixed]
    with pytest.raises(CardNotLive, match="superseded"):
        await queue.correct(old.ref, "Alice lives in Faro", actor="ops")
    same = await queue.correct(fixed.ref, "Alice wohnt in Porto", actor="ops")
    assert same == fixed  # its own text: nothing to do
    events = await audit_events(queue)
    assert [(e["type"], e["card_id"], e["new_card_id"]) for e in events] == [
        ("correct", old.id, fixed.id)
    ]
    assert not any("Porto" in v or "Lisbon" in v for e in events for v in e.values())


async def test_correcting_to_a_fact_a_live_card_holds_supersedes_by_that_card(
    queue: MemoryQueue,
) -> None:
    await apply(queue.cards, "r1", new("Alice skis", seed=None), new("Alice snowboards", seed=None))
    skis, boards = sorted(await queue.visible_cards(CHAT, user_id=ALICE), key=lambda c: c.id)
    holder = await queue.correct(skis.ref, "Alice snowboards", actor="ops")
    assert holder == boards
    assert await queue.visible_cards(CHAT, user_id=ALICE) == [boards]


async def test_a_correction_embeds_the_new_fact_in_the_chats_space(
    queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    await apply(queue.cards, "r1", new("Alice skis", seed=1), embedding_model="m16")
    (old,) = await queue.visible_cards(CHAT, user_id=ALICE)
    asked: list[tuple[str, int, str | None]] = []

    async def embed_fact(chat_id: int, fact: str, space: Any) -> tuple[list[float], str]:
        asked.append((fact, space.dimension, space.model))
        return [0.5] * 16, "m16"

    monkeypatch.setattr(queue, "_embed_fact", embed_fact)
    fixed = await queue.correct(old.ref, "Alice snowboards", actor="ops")
    assert asked == [("Alice snowboards", 16, "m16")]
    assert fixed.has_embedding
    ((best, _),) = await queue.similar_cards(CHAT, [0.5] * 16, k=1)
    assert best.id == fixed.id


async def test_a_failed_embedding_writes_nothing(
    queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    await apply(queue.cards, "r1", new("Alice skis", seed=1), embedding_model="m16")
    (old,) = await queue.visible_cards(CHAT, user_id=ALICE)
    before = await queue.cards.all_cards(CHAT)

    async def down(chat_id: int, fact: str, space: Any) -> tuple[list[float], str]:
        raise ConnectionError("farm down")

    monkeypatch.setattr(queue, "_embed_fact", down)
    with pytest.raises(ConnectionError):
        await queue.correct(old.ref, "Alice snowboards", actor="ops")
    assert await queue.cards.all_cards(CHAT) == before


# --- not learned again -------------------------------------------------------------------


def _said(fact_holder: list[Card]) -> set[str]:
    return {c.fact_text for c in fact_holder}


async def test_a_retracted_fact_is_relearned_only_from_newer_messages(
    settings: Settings, redis: Any, cards_redis: Any, queue: MemoryQueue, farm: Farm
) -> None:
    """Older messages restating it (a replay, another slice) do not bring it back; a
    message sent after the retraction does: the person changed their mind."""
    s = queue.settings
    store = RunStore(redis, s)
    statement = (1, SPEAKER, "Alice", f"I live in {CANARY[SPEAKER]}")
    await store.enqueue(slice_of(JAN, statement))
    await process_one(store, queue.cards, farm, s)
    (card,) = [c for c in await queue.cards.all_cards(ROOM) if CANARY[SPEAKER] in c.fact_text]
    queue.clock = ManualClock((JAN + timedelta(days=1)).timestamp())
    await queue.retract(card.ref, actor="ops", reason="wrong")

    await store.enqueue(slice_of(JAN + timedelta(hours=5), (2, *statement[1:])))
    await process_one(store, queue.cards, farm, s)
    assert not any(
        CANARY[SPEAKER] in f for f in _said(await queue.visible_cards(ROOM, user_id=SPEAKER))
    )

    await store.enqueue(slice_of(JAN + timedelta(days=2), (3, *statement[1:])))
    await process_one(store, queue.cards, farm, s)
    live = [
        c
        for c in await queue.visible_cards(ROOM, user_id=SPEAKER)
        if CANARY[SPEAKER] in c.fact_text
    ]
    assert [c.fact_text for c in live] == [card.fact_text]
    assert live[0].id != card.id  # a new card; the retracted one keeps its status
    assert (await queue._card(ROOM, card.id)).status is CardStatus.RETRACTED


async def test_a_run_held_in_its_farm_call_during_a_retraction_does_not_resurrect_it(
    queue: MemoryQueue, redis: Any, farm: Farm
) -> None:
    s = queue.settings
    store = RunStore(redis, s)
    statement = (1, SPEAKER, "Alice", f"I live in {CANARY[SPEAKER]}")
    await store.enqueue(slice_of(JAN, statement))
    await process_one(store, queue.cards, farm, s)
    (card,) = [c for c in await queue.cards.all_cards(ROOM) if CANARY[SPEAKER] in c.fact_text]

    await store.enqueue(slice_of(JAN + timedelta(hours=3), (2, *statement[1:])))
    reached, go = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        reached.set()
        await go.wait()

    farm.extractor.hold = hold
    claim = (await store.claim_detailed("w1")).run
    assert claim is not None
    running = asyncio.create_task(consolidate_claim(claim, queue.cards, farm, s))
    await asyncio.wait_for(reached.wait(), 10)
    queue.clock = ManualClock((JAN + timedelta(days=1)).timestamp())
    await queue.retract(card.ref, actor="ops", reason="wrong")
    go.set()
    result = await asyncio.wait_for(running, 10)

    # its answer re-states the fact (a new card) or reinforces the card it was shown: both
    # are refused at the write, which reads the retraction atomically
    assert result.cards_retracted + result.resolutions_skipped == 1
    assert result.cards_inserted + result.cards_reinforced + result.cards_observed == 0
    assert not any(
        CANARY[SPEAKER] in c.fact_text for c in await queue.visible_cards(ROOM, user_id=SPEAKER)
    )
    assert (await queue._card(ROOM, card.id)).status is CardStatus.RETRACTED


async def test_a_retraction_record_leaves_with_a_forgotten_user(
    queue: MemoryQueue, redis: Any, farm: Farm
) -> None:
    s = queue.settings.model_copy(update={"forget_rewrite_aof": False})
    store = RunStore(redis, s)
    await store.enqueue(slice_of(JAN, (1, SPEAKER, "Alice", f"I live in {CANARY[SPEAKER]}")))
    await process_one(store, queue.cards, farm, s)
    (card,) = [c for c in await queue.cards.all_cards(ROOM) if CANARY[SPEAKER] in c.fact_text]
    await queue.retract(card.ref, actor="ops", reason="wrong")
    record = Keys(s.key_prefix).chat(ROOM, "retracted")
    client: Any = queue.cards.redis
    assert await client.hgetall(record)
    queue.settings = s
    await queue.forget(ROOM, SPEAKER)
    assert await client.hgetall(record) == {}


async def test_a_write_planned_before_a_retraction_is_fenced_by_message_age(
    queue: MemoryQueue,
) -> None:
    """The run's write carries when its messages were sent: planned before the retraction
    and applied after it, a card of the fact from older messages is refused (with its links
    and resolutions), one from a newer message is stored."""
    fact = new("Alice likes Qorvadine tea", at=T0, seed=None)
    await apply(queue.cards, "r1", fact)
    (card,) = await queue.visible_cards(CHAT, user_id=ALICE)
    planned_old = new("Alice likes Qorvadine tea", at=T0 + timedelta(hours=1), seed=None)
    await queue.retract(card.ref, actor="ops", reason="wrong")  # at T0 + 1 day

    refused = await apply(queue.cards, "r2", planned_old)
    assert (refused.retracted, refused.inserted, refused.card_ids) == (1, 0, ())
    assert await queue.visible_cards(CHAT, user_id=ALICE) == []
    newer = new("Alice likes Qorvadine tea", at=T0 + timedelta(days=2), seed=None)
    learned = await apply(queue.cards, "r3", newer)
    assert (learned.retracted, learned.inserted) == (0, 1)
    again = await apply(queue.cards, "r4", planned_old)  # the fact is live again: observed
    assert (again.retracted, again.observed) == (0, 1)


async def test_no_card_text_or_reason_reaches_a_log(
    queue: MemoryQueue, caplog: pytest.LogCaptureFixture
) -> None:
    canary = "Zelqumbrine"
    await apply(
        queue.cards, "r1", new(f"Alice likes {canary} tea", seed=None), new("Bob", seed=None)
    )
    first, second = sorted(await queue.visible_cards(CHAT, user_id=ALICE), key=lambda c: c.id)
    with caplog.at_level("DEBUG"):
        await queue.retract(first.ref, actor="ops", reason=f"{canary} is wrong")
        await queue.correct(second.ref, f"Bob likes {canary}", actor="ops")
        lines = list((await queue.export(CHAT)).lines())
        assert any(canary.encode() in line for line in lines)  # the export holds it: data
        await queue.context(CHAT, user_id=ALICE)
    assert caplog.records
    assert not any(canary in record.getMessage() for record in caplog.records)
    assert not any(canary in str(record.__dict__) for record in caplog.records)
