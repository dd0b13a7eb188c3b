"""``MemoryQueue.remember`` (§13): a fact the bot knows stored now, with no farm call, on real
Valkey (standalone and the cluster) with the real e5 embedder — and through an embedder
outage on the loopback farm simulator, to the maintenance pass that gives the card its vector.

The fact passes the card rules (nothing written otherwise, no text in the error), is
deduplicated (the same words observe the card again), is remembered again after a
retraction, is audited without its text, and goes with a forget of its scope.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from llm_client import ClientConfig, LocalEmbedClient, as_text
from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStatus, RunWrites, Scope
from memory_worker.cards.forget import CardForget
from memory_worker.errors import ForgetPending, InvalidCorrection, InvalidId
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, close_cards_client
from tests.support.cards import T0, new
from tests.support.clock import ManualClock
from tests.support.dumps import dump_chat
from tests.support.logs import capture_logs
from tests.support.routes import farm_target, local_target, route, write_routes

E5 = "multilingual-e5-small"
CHAT = 5151
ALICE, BOB = 11, 12
NOW = T0 + timedelta(days=3)
CANARY = "canary-5151-remembered"


@pytest.fixture
async def queue(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str, tmp_path: Path
) -> AsyncIterator[MemoryQueue]:
    """A queue embedding with the local e5 route, its cards on ``cards_redis`` (standalone,
    then the cluster)."""
    routes = write_routes(tmp_path, embedding=route(local_target()))
    on_cluster = cards_redis is not redis
    s = settings.model_copy(
        update={
            "routes_file": routes,
            "embedding_dimension": 384,
            "cards_url": cards_url if on_cluster else None,
        }
    )
    q = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    q.clock = ManualClock(NOW.timestamp())
    try:
        yield q
    finally:
        await q._close_recall()
        await close_cards_client(q.cards.redis, redis)


async def audit_events(q: MemoryQueue) -> list[dict[str, str]]:
    rows = await q.redis.xrange(q.keys.audit)
    return [{as_text(k): as_text(v) for k, v in fields.items()} for _, fields in rows]


async def waiting(q: MemoryQueue) -> list[str]:
    return [as_text(i) for i in await q.cards.redis.zrange(q.cards.key(CHAT, "vecwait"), 0, -1)]


async def learned(q: MemoryQueue, fact: str, *, subject: str = "Alice") -> None:
    """A run's card of ``fact`` (a subject and a predicate, as a model writes them), with its
    real e5 passage vector."""
    client = LocalEmbedClient(E5, ClientConfig(base_url=""))
    (vector,) = (await client.embed([fact], dimension=384)).embeddings
    await client.aclose()
    card = dataclasses.replace(
        new(fact, subject=subject, scope=Scope.USER, user=ALICE, seed=None), embedding=vector
    )
    writes = RunWrites(observed_at=T0, cards=[card], embedding_model=E5)
    await q.cards.apply_run(CHAT, f"run-{abs(hash(fact))}", writes, now=T0)


# --- the embedder down: stored now, found by words, embedded by maintenance ----------------


async def test_a_fact_remembered_through_an_embedder_outage_is_found_by_words_then_embedded(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    from memory_worker.wiring import build_tick_runner

    routes = write_routes(
        tmp_path,
        embedding=route(farm_target("embedder", E5, endpoint="encode")),
        memory_extraction=route(farm_target("llm", "m", endpoint="chat")),
    )
    s = settings.model_copy(
        update={
            "routes_file": routes,
            "discovery_base_url": sim.base_url,
            "embedding_dimension": 384,
            "breaker_failure_threshold": 100,  # every call reaches the farm
            "recall_timeout_seconds": 120.0,  # the simulator loads e5 on its first call
        }
    )
    sim.set_fault("*", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="dns"))
    async with await MemoryQueue.connect(settings=s) as q:
        with capture_logs() as events:
            card = await q.remember(
                CHAT, f"Alice is vegetarian {CANARY}", user_id=ALICE, actor="bot:42"
            )
        # stored now, marked as waiting for its vector
        assert card.live
        assert (card.fact_text, card.asserted_by) == (f"Alice is vegetarian {CANARY}", "bot:42")
        assert (card.scope_key, card.confidence) == (f"user:{ALICE}", 1.0)
        assert not card.has_embedding
        assert await waiting(q) == [card.id]
        assert any(e["event"] == "cards.remember_unembedded" for e in events)
        assert not any(CANARY in str(e) for e in events)
        (event,) = await audit_events(q)
        assert (event["type"], event["outcome"], event["vector"]) == (
            "remember",
            "created",
            "waiting",
        )
        memory = await q.context(CHAT, user_id=ALICE)  # no query: nothing to embed
        assert [c.id for c in memory.cards] == [card.id]

        # the farm is back: recall finds it by its words alone (no vector to compare)
        sim.clear_faults()
        hits = await q.recall(CHAT, "Is Alice vegetarian?", user_id=ALICE)
        assert [h.card.id for h in hits] == [card.id]
        assert hits[0].dense is None
        assert hits[0].lexical > 0
        assert await q.recall(CHAT, "Is Alice vegetarian?") == []  # her card, not Bob's

        # the maintenance pass gives it its vector
        pipeline = await build_tick_runner(s, redis)
        try:
            assert pipeline.maintenance is not None
            assert "waiting_filled=1" in await pipeline.maintenance()
        finally:
            for close in pipeline.closers:
                await close()
        embedded = await q.cards.get_card(CHAT, card.id)
        assert embedded is not None
        assert embedded.has_embedding
        assert await waiting(q) == []
        hits = await q.recall(CHAT, "What food does Alice avoid?", user_id=ALICE)
        assert hits[0].card.id == card.id
        assert hits[0].dense is not None  # found by meaning now
        assert hits[0].dense > 0.7


async def test_a_fact_remembered_while_the_embedder_answers_has_its_vector_at_once(
    queue: MemoryQueue,
) -> None:
    await learned(queue, "Alice lives in Lisbon")
    card = await queue.remember(CHAT, "Bob works as a nurse", actor="bot", valid_from=T0)
    assert card.has_embedding
    assert (card.scope_key, card.valid_from, card.observed_at) == ("chat", T0, NOW)
    assert card.source_message_ids == []
    assert await waiting(queue) == []
    hits = await queue.recall(CHAT, "Кем работает Боб?", k=1)  # by meaning, across languages
    assert hits[0].card.id == card.id
    assert hits[0].dense is not None


# --- the card rules -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fact", "why"),
    [
        (f"Alice's password: hunter2hunter2 {CANARY}", "secret"),
        (f"{CANARY} my card is 4111 1111 1111 1111", "secret"),
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 701, "over 700 bytes"),
    ],
    ids=["password", "card-number", "empty", "blank", "too-long"],
)
async def test_a_fact_the_card_rules_refuse_writes_nothing(
    queue: MemoryQueue, fact: str, why: str
) -> None:
    await learned(queue, "Alice lives in Lisbon")
    before = await dump_chat(queue.cards, CHAT)
    with capture_logs() as events, pytest.raises(InvalidCorrection) as info:
        await queue.remember(CHAT, fact, user_id=ALICE, actor="bot")
    assert why.split()[0] in str(info.value) or why in str(info.value)
    assert CANARY not in str(info.value)
    assert not any(CANARY in str(e) for e in events)
    assert await dump_chat(queue.cards, CHAT) == before
    assert await audit_events(queue) == []


async def test_bad_arguments_are_typed_errors_and_write_nothing(queue: MemoryQueue) -> None:
    before = await dump_chat(queue.cards, CHAT)
    with pytest.raises(InvalidId):
        await queue.remember("5151", "Alice skis", actor="bot")  # type: ignore[arg-type]
    with pytest.raises(InvalidId):
        await queue.remember(CHAT, "Alice skis", user_id=True, actor="bot")
    for actor in ["", "  ", None]:
        with pytest.raises(InvalidCorrection):
            await queue.remember(CHAT, "Alice skis", actor=actor)  # type: ignore[arg-type]
    for when in [datetime(2026, 1, 1), NOW + timedelta(days=1), "2026-01-01"]:
        with pytest.raises(InvalidCorrection, match="valid_from"):
            await queue.remember(CHAT, "Alice skis", actor="bot", valid_from=when)  # type: ignore[arg-type]
    assert await dump_chat(queue.cards, CHAT) == before
    assert await audit_events(queue) == []


# --- deduplicated -------------------------------------------------------------------------


async def test_remembering_a_known_fact_observes_it_again(queue: MemoryQueue) -> None:
    first = await queue.remember(CHAT, "Alice is vegetarian.", user_id=ALICE, actor="bot")
    again = await queue.remember(CHAT, "alice  is VEGETARIAN", user_id=ALICE, actor="bot:2")
    assert again.id == first.id
    assert again.observation_count == 2
    assert again.fact_text == "Alice is vegetarian."  # as first written
    # the same words a run learned under a subject and predicate: that card, observed again
    await learned(queue, "Alice lives in Lisbon")
    (run_card,) = [c for c in await queue.visible_cards(CHAT, user_id=ALICE) if c.first_run_id]
    known = await queue.remember(CHAT, "Alice lives in Lisbon!", user_id=ALICE, actor="bot")
    assert known.id == run_card.id
    assert known.observation_count == 2
    assert known.confidence == 1.0  # the bot's word is certain
    # another scope is another fact
    chat_card = await queue.remember(CHAT, "Alice is vegetarian", actor="bot")
    assert chat_card.id not in (first.id, run_card.id)
    assert len(await queue.visible_cards(CHAT, user_id=ALICE)) == 3
    outcomes = [(e["card_id"], e["outcome"]) for e in await audit_events(queue)]
    assert outcomes == [
        (first.id, "created"),
        (first.id, "observed"),
        (run_card.id, "observed"),
        (chat_card.id, "created"),
    ]


# --- newer than a retraction ----------------------------------------------------------------


async def test_a_retracted_fact_can_be_remembered_again(queue: MemoryQueue) -> None:
    """The bot's explicit word is newer than the retraction: neither the retraction record
    nor the withdrawn fact's vector (the same meaning, cosine 1) refuses it."""
    await learned(queue, "Alice lives in Lisbon")
    (card,) = await queue.visible_cards(CHAT, user_id=ALICE)
    await queue.retract(card.ref, actor="ops", reason="not so")
    back = await queue.remember(CHAT, "Alice lives in Lisbon", user_id=ALICE, actor="bot")
    assert back.live
    assert back.id != card.id
    assert back.has_embedding
    old = await queue.cards.get_card(CHAT, card.id)
    assert old is not None
    assert old.status is CardStatus.RETRACTED  # kept as it was
    assert [c.id for c in await queue.visible_cards(CHAT, user_id=ALICE)] == [back.id]

    # a remembered card retracted, then remembered again: its retraction record goes
    await queue.retract(back.ref, actor="ops", reason="again")
    retracted = queue.cards.key(CHAT, "retracted")
    assert await queue.cards.redis.hget(retracted, back.dedup_hash)  # type: ignore[misc]
    third = await queue.remember(CHAT, "Alice lives in Lisbon", user_id=ALICE, actor="bot")
    assert third.live
    assert third.id not in (card.id, back.id)
    assert not await queue.cards.redis.hget(retracted, third.dedup_hash)  # type: ignore[misc]
    hits = await queue.recall(CHAT, "Where does Alice live?", user_id=ALICE)
    assert [h.card.id for h in hits] == [third.id]


# --- audited like correct --------------------------------------------------------------------


async def test_remember_is_audited_with_ids_and_never_the_text(queue: MemoryQueue) -> None:
    card = await queue.remember(CHAT, f"Bob likes {CANARY}", user_id=BOB, actor="bot:7")
    (event,) = await audit_events(queue)
    assert event | {"host": "", "at_ms": ""} == {
        "type": "remember",
        "chat_id": str(CHAT),
        "card_id": card.id,
        "actor": "bot:7",
        "outcome": "created",
        "vector": "stored",
        "host": "",
        "at_ms": "",
    }
    assert event["at_ms"] == str(int(NOW.timestamp() * 1000))
    counters = await queue.redis.hgetall(queue.keys.counters)  # type: ignore[misc]
    assert int(counters[b"cards:remember"]) == 1


# --- forgetting -------------------------------------------------------------------------------


async def test_forget_erases_a_remembered_fact_and_its_wait_for_a_vector(
    queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = await queue.remember(CHAT, "The chat meets on Fridays", actor="bot")
    hers = await queue.remember(CHAT, f"Alice is vegetarian {CANARY}", user_id=ALICE, actor="bot")

    async def down(*args: object, **kwargs: object) -> tuple[None, str]:
        return None, ""  # what the call answers when the embedder is down

    monkeypatch.setattr(queue, "_remembered_vector", down)
    waits = await queue.remember(CHAT, f"Alice is allergic {CANARY}", user_id=ALICE, actor="bot")
    assert not waits.has_embedding
    assert await waiting(queue) == [waits.id]

    done = await queue.forget(CHAT, user_id=ALICE)
    assert done.counts.cards == 2
    assert await queue.cards.get_card(CHAT, hers.id) is None
    assert await queue.cards.get_card(CHAT, waits.id) is None
    assert await waiting(queue) == []
    dumped = await dump_chat(queue.cards, CHAT)
    assert not any(CANARY.encode() in (v or b"") for v in dumped.values())
    assert [c.id for c in await queue.visible_cards(CHAT, user_id=ALICE)] == [kept.id]

    await queue.forget(CHAT)
    assert await queue.visible_cards(CHAT) == []


async def test_remember_is_refused_inside_a_forget_of_its_scope(queue: MemoryQueue) -> None:
    forget = CardForget(queue.cards.redis, queue.keys, chunk=100)
    token = await forget.begin(CHAT, f"user:{ALICE}", int(NOW.timestamp() * 1000))
    before = await dump_chat(queue.cards, CHAT)
    with pytest.raises(ForgetPending, match="not completed"):
        await queue.remember(CHAT, "Alice is vegetarian", user_id=ALICE, actor="bot")
    assert await dump_chat(queue.cards, CHAT) == before
    bob = await queue.remember(CHAT, "Bob is vegetarian", user_id=BOB, actor="bot")  # not his
    assert bob.live
    await forget.end(CHAT, token)
    assert (await queue.remember(CHAT, "Alice is vegetarian", user_id=ALICE, actor="bot")).live


async def test_a_forget_landing_during_a_remember_lands_before_it(
    queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat's forget epoch moves between the read and the write: the script refuses, the
    call reads the epoch again and writes once (the two calls overlapped)."""
    real = queue._remembered_vector

    async def forgotten_meanwhile(chat_id: int, fact: str) -> tuple[Any, str]:
        await queue.cards.redis.incr(queue.cards.key(CHAT, "forget"))
        return await real(chat_id, fact)

    monkeypatch.setattr(queue, "_remembered_vector", forgotten_meanwhile)
    card = await queue.remember(CHAT, "Alice is vegetarian", user_id=ALICE, actor="bot")
    assert card.live
    assert [c.id for c in await queue.visible_cards(CHAT, user_id=ALICE)] == [card.id]


async def test_valid_from_is_when_the_fact_became_true(queue: MemoryQueue) -> None:
    then = datetime(2026, 1, 5, tzinfo=UTC)
    card = await queue.remember(
        CHAT, "Alice moved to Porto", user_id=ALICE, actor="bot", valid_from=then
    )
    assert card.valid_from == then
    since = await queue.recall(CHAT, "Where does Alice live?", user_id=ALICE, since=then)
    assert [h.card.id for h in since] == [card.id]
    before = await queue.recall(
        CHAT, "Where does Alice live?", user_id=ALICE, until=then - timedelta(days=1)
    )
    assert before == []


class FillEmbedder:
    """The maintenance pass's embedder, scripted: fails, answers another model, or answers;
    ``during`` runs inside the call (a write racing the pass)."""

    def __init__(self, model: str, *, fail: bool = False, during: Any = None) -> None:
        self.model, self.fail, self.during = model, fail, during
        self.texts: list[str] = []

    async def __call__(
        self, texts: Any, *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        from llm_client import BackendUnavailable
        from memory_worker.consolidation.model_calls import Vectors

        self.texts.extend(texts)
        if self.during is not None:
            await self.during()
        if self.fail:
            raise BackendUnavailable("farm down", code="UPSTREAM_ERROR")
        return Vectors([[1.0] + [0.0] * 383 for _ in texts], model=self.model)


async def test_the_fill_pass_waits_out_a_failing_or_foreign_embedder_and_a_racing_write(
    queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_worker.upkeep.reembed import Target, fill_waiting

    await learned(queue, "Alice lives in Lisbon")  # the chat's space: e5, 384

    async def down(*args: object, **kwargs: object) -> tuple[None, str]:
        return None, ""

    monkeypatch.setattr(queue, "_remembered_vector", down)
    first = await queue.remember(CHAT, f"Alice is vegetarian {CANARY}", user_id=ALICE, actor="b")
    second = await queue.remember(CHAT, "Alice cycles to work", user_id=ALICE, actor="b")
    assert await waiting(queue) == [first.id, second.id]
    target, s = Target(E5, 384), queue.settings

    for embedder in (FillEmbedder(E5, fail=True), FillEmbedder("another-model")):
        result = await fill_waiting(queue.cards, embedder, target, s, now=NOW)
        assert (result.filled, result.stopped) == (0, True)
        assert await waiting(queue) == [first.id, second.id]
        assert embedder.texts == [f"Alice is vegetarian {CANARY}", "Alice cycles to work"]

    async def retract_first() -> None:
        await queue.retract(first.ref, actor="ops", reason="no")

    racing = FillEmbedder(E5, during=retract_first)
    result = await fill_waiting(queue.cards, racing, target, s, now=NOW)
    assert (result.filled, result.dropped, result.stopped) == (1, 1, False)
    assert await waiting(queue) == []
    filled = await queue.cards.get_card(CHAT, second.id)
    assert filled is not None
    assert filled.has_embedding
    near = await queue.similar_cards(CHAT, [1.0] + [0.0] * 383, k=1)
    assert near[0][0].id == second.id  # its vector is the embedder's
    again = await fill_waiting(queue.cards, FillEmbedder(E5), target, s, now=NOW)
    assert (again.filled, again.dropped, again.chats) == (0, 0, 0)  # nothing waits
