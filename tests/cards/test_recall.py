"""MemoryQueue.recall (§16): recall by text through the embedding route, real e5 and Valkey."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from llm_client import (
    AllCircuitsOpen,
    BackendUnavailable,
    ClientConfig,
    LLMError,
    LocalEmbedClient,
    RoutesError,
    RouteTarget,
    RouteUnavailable,
)
from llm_client._transport.base import EmbedTransport
from memory_worker.api import MemoryQueue
from memory_worker.cards import RunWrites, Scope
from memory_worker.cards.recall import RecallHit
from memory_worker.errors import EmbeddingUnavailable, RoutesInvalid, VectorSpaceMismatch
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from tests.support.cards import T0, new
from tests.support.routes import farm_target, local_target, route, write_routes

E5 = "multilingual-e5-small"
CHAT = 777
ALICE, BOB = 11, 12


@pytest.fixture
async def queue(settings: Settings, tmp_path: Path) -> AsyncIterator[MemoryQueue]:
    routes = write_routes(tmp_path, embedding=route(local_target()))
    local = settings.model_copy(update={"routes_file": routes, "embedding_dimension": 384})
    q = await MemoryQueue.connect(settings=local)
    try:
        yield q
    finally:
        await q.close()


async def remember(
    q: MemoryQueue,
    facts: list[tuple[str, Scope, int | None]],
    *,
    model: str = E5,
    at: datetime = T0,
    run: str = "",
) -> None:
    """Store cards with real e5 passage vectors, as a run through the local route would."""
    client = LocalEmbedClient(E5, ClientConfig(base_url=""))
    vectors = (await client.embed([f for f, _, _ in facts], dimension=384)).embeddings
    cards = [
        dataclasses.replace(
            new(fact, scope=scope, user=user, seed=None, subject=str(i), at=at),
            embedding=vector,
        )
        for i, ((fact, scope, user), vector) in enumerate(zip(facts, vectors, strict=True))
    ]
    writes = RunWrites(observed_at=at, cards=cards, embedding_model=model)
    await q.cards.apply_run(CHAT, f"run-{model}{run}", writes, now=at)
    await client.aclose()


FACTS: list[tuple[str, Scope, int | None]] = [
    ("Alice likes green tea", Scope.CHAT, None),
    ("Alice lives in Lisbon", Scope.CHAT, None),
    ("Bob works as a nurse", Scope.CHAT, None),
    ("Мария любит кататься на велосипеде", Scope.CHAT, None),
    ("Bob is allergic to peanuts", Scope.USER, BOB),
]


async def test_recall_finds_cards_by_meaning(queue: MemoryQueue) -> None:
    await remember(queue, FACTS)
    hits = await queue.recall(CHAT, "What does Alice drink?", k=2)
    assert hits[0][0].fact_text == "Alice likes green tea"
    hits = await queue.recall(CHAT, "Where is Alice's home?", k=1)
    assert hits[0][0].fact_text == "Alice lives in Lisbon"
    hits = await queue.recall(CHAT, "Кем работает Боб?", k=1)  # cross-language
    assert hits[0][0].fact_text == "Bob works as a nurse"
    ranked = [score for _, score in await queue.recall(CHAT, "Кем работает Боб?", k=4)]
    assert len(ranked) == 4
    assert ranked == sorted(ranked, reverse=True)


async def test_recall_shows_user_cards_only_to_their_user(queue: MemoryQueue) -> None:
    await remember(queue, FACTS)
    question = "Which food must Bob avoid?"
    anyone = [c.fact_text for c, _ in await queue.recall(CHAT, question, k=5)]
    assert "Bob is allergic to peanuts" not in anyone
    assert len(anyone) == 4
    bob = await queue.recall(CHAT, question, k=1, user_id=BOB)
    assert bob[0][0].fact_text == "Bob is allergic to peanuts"
    alice = [c.fact_text for c, _ in await queue.recall(CHAT, question, k=5, user_id=ALICE)]
    assert "Bob is allergic to peanuts" not in alice


async def test_recall_of_a_chat_without_vectors_needs_no_embedding(
    queue: MemoryQueue, settings: Settings
) -> None:
    assert await queue.recall(CHAT, "anything") == []
    assert queue.recall_walker is None  # no route was even loaded


async def test_recall_refuses_a_chat_of_another_model(queue: MemoryQueue) -> None:
    await remember(queue, FACTS, model="embedder")
    with pytest.raises(VectorSpaceMismatch) as info:
        await queue.recall(CHAT, "What does Alice drink?")
    assert info.value.chat_model == "embedder"
    assert info.value.query_model == E5


async def test_recall_without_an_embedding_route_answers_by_words_marked_degraded(
    settings: Settings, tmp_path: Path
) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text(
        '[routes.memory_extraction]\n[[routes.memory_extraction.targets]]\nmodel = "m"\n'
    )
    q = await MemoryQueue.connect(
        settings=settings.model_copy(update={"routes_file": routes, "embedding_dimension": 384})
    )
    try:
        await remember(q, FACTS[:1])
        hits = await q.recall(CHAT, "tea?")
        assert [h.card.fact_text for h in hits] == ["Alice likes green tea"]
        assert hits.degraded
        assert isinstance(hits.degraded_error, EmbeddingUnavailable)
        assert isinstance(hits.degraded_error.__cause__, RouteUnavailable)
    finally:
        await q.close()


async def test_recall_rejects_an_empty_text(queue: MemoryQueue) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        await queue.recall(CHAT, "  ")
    assert await queue.recall(CHAT, "tea", k=0) == []


async def test_recall_refuses_a_naive_or_reversed_window_before_embedding(
    queue: MemoryQueue,
) -> None:
    await remember(queue, FACTS)
    with pytest.raises(ValueError, match="timezone"):
        await queue.recall(CHAT, "tea", since=datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="after"):
        await queue.recall(CHAT, "tea", since=T0, until=T0 - timedelta(days=1))
    assert queue.recall_walker is None  # refused before any embedding call


async def test_recall_hits_carry_their_dates_and_since_until_filter_them(
    queue: MemoryQueue,
) -> None:
    await remember(queue, FACTS)  # observed at T0
    later: list[tuple[str, Scope, int | None]] = [("Alice moved to Porto", Scope.CHAT, None)]
    await remember(queue, later, at=T0 + timedelta(days=40), run="later")
    hits = await queue.recall(CHAT, "Where does Alice live?", k=2, now=T0 + timedelta(days=41))
    assert isinstance(hits[0], RecallHit)
    assert {h.card.fact_text for h in hits} == {"Alice lives in Lisbon", "Alice moved to Porto"}
    assert {h.observed_at for h in hits} == {T0, T0 + timedelta(days=40)}
    assert all(h.valid_from == h.observed_at and h.dense is not None for h in hits)
    recent = await queue.recall(CHAT, "Where does Alice live?", k=5, since=T0 + timedelta(days=30))
    assert [h.card.fact_text for h in recent] == ["Alice moved to Porto"]
    old = await queue.recall(CHAT, "Where does Alice live?", k=1, until=T0 + timedelta(days=1))
    assert [c.fact_text for c, _ in old] == ["Alice lives in Lisbon"]


async def test_recall_finds_a_name_written_in_the_other_script(queue: MemoryQueue) -> None:
    await remember(queue, FACTS)
    hits = await queue.recall(CHAT, "What does Mariya enjoy?", k=1)
    assert hits[0].card.fact_text == "Мария любит кататься на велосипеде"
    assert hits[0].lexical > 0


async def test_similar_cards_of_another_model_answers_nothing(queue: MemoryQueue) -> None:
    await remember(queue, FACTS)
    client = LocalEmbedClient(E5, ClientConfig(base_url=""))
    vector = (await client.embed(["Alice likes green tea"], dimension=384)).embeddings[0]
    assert (await queue.similar_cards(CHAT, vector, 1, model=E5))[0][0].fact_text == (
        "Alice likes green tea"
    )
    assert await queue.similar_cards(CHAT, vector, 1, model="embedder") == []
    assert len(await queue.similar_cards(CHAT, vector, 1)) == 1  # no model named: not checked


async def test_recall_embeds_with_the_target_of_the_chats_model(
    settings: Settings, tmp_path: Path
) -> None:
    """During a model switch: the route's primary is the new model, the chat still has the old
    one's vectors — recall embeds with the old model's target, not the primary."""
    routes = write_routes(
        tmp_path, embedding=route(farm_target("e", "new-farm-model", endpoint="e"), local_target())
    )
    local = settings.model_copy(update={"routes_file": routes, "embedding_dimension": 384})
    async with await MemoryQueue.connect(settings=local) as q:
        await remember(q, FACTS)
        walker = q._recall_walker()
        factory, asked = walker.transports, []
        assert factory is not None
        real = factory.embed

        def embed(target: RouteTarget) -> EmbedTransport:
            asked.append(target.model)
            return real(target)

        factory.embed = embed  # type: ignore[method-assign]
        hits = await q.recall(CHAT, "What does Alice drink?", k=1)
        assert hits[0][0].fact_text == "Alice likes green tea"
        assert asked == [E5]  # the primary (another model) was never tried


async def test_recall_without_a_target_of_the_chats_model_spends_no_call(
    queue: MemoryQueue,
) -> None:
    await remember(queue, FACTS, model="embedder")
    queue._recall_walker()
    assert queue.recall_walker is not None
    queue.recall_walker.transports = None  # any embedding attempt would fail loudly
    with pytest.raises(VectorSpaceMismatch):
        await queue.recall(CHAT, "What does Alice drink?")


async def test_recall_reports_its_farm_calls_like_a_worker(
    settings: Settings, tmp_path: Path, sim: FarmSimulator, redis: Redis
) -> None:
    """The bot's walker is the worker's: a recall that meets a farm outage counts its attempt
    in the fleet's attempt metrics, charges the shared breaker, and queues the admin page in
    the fleet-wide outbox (the bot never delivers it: the workers' reporters do)."""
    from memory_worker.keys import Keys
    from memory_worker.paging.reports import pending_pages
    from memory_worker.storage.connections import awaited

    sim.set_fault("*", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="dns"))
    routes = write_routes(tmp_path, embedding=route(farm_target("embedder", E5, endpoint="encode")))
    farm = settings.model_copy(
        update={
            "routes_file": routes,
            "discovery_base_url": sim.base_url,
            "embedding_dimension": 384,
            "breaker_failure_threshold": 1,
            "admin_webhook_url": SecretStr("http://127.0.0.1:9/hook"),  # pages are queued
        }
    )
    keys = Keys(farm.key_prefix)
    async with await MemoryQueue.connect(settings=farm) as q:
        await remember(q, FACTS)
        first = (await q.recall(CHAT, "What does Alice drink?")).degraded_error
        probe = (await q.recall(CHAT, "What does Alice drink?")).degraded_error  # the probe
        refused = (await q.recall(CHAT, "What does Alice drink?")).degraded_error  # no second
        assert isinstance(first, EmbeddingUnavailable)
        assert isinstance(probe, EmbeddingUnavailable)
        assert isinstance(refused, EmbeddingUnavailable)
        assert isinstance(first.__cause__, BackendUnavailable)
        assert isinstance(probe.__cause__, BackendUnavailable)
        assert isinstance(refused.__cause__, AllCircuitsOpen)
    fields = await awaited(redis.hgetall(keys.routing_attempts))
    attempts = {k.decode(): int(v) for k, v in fields.items()}
    assert sum(n for field, n in attempts.items() if "failure" in field) == 2
    assert await pending_pages(redis, keys) >= 1  # circuit_open_exhaustion, queued not sent


CANARY = "canary-4417-recall-text"


async def test_a_farm_outage_degrades_recall_and_context_and_fails_correct(
    settings: Settings, tmp_path: Path, sim: FarmSimulator, redis: Redis
) -> None:
    """During a farm outage recall and context(query=…) answer from the words alone, marked
    degraded (the EmbeddingUnavailable, a MemoryWorkerError the bot imports from
    memory_worker, as their degraded_error, the llm_client error its cause); correct raises
    it and writes nothing. Ids and types only: the query's text is in no error or log."""
    import memory_worker
    from tests.support.dumps import dump_chat
    from tests.support.logs import capture_logs

    sim.set_fault("*", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="dns"))
    routes = write_routes(tmp_path, embedding=route(farm_target("embedder", E5, endpoint="encode")))
    farm = settings.model_copy(
        update={
            "routes_file": routes,
            "discovery_base_url": sim.base_url,
            "embedding_dimension": 384,
            "breaker_failure_threshold": 100,  # every call reaches the farm
        }
    )
    async with await MemoryQueue.connect(settings=farm) as q:
        await remember(q, FACTS)
        card = (await q.visible_cards(CHAT))[0]
        before = await dump_chat(q.cards, CHAT)
        with capture_logs() as events:
            hits = await q.recall(CHAT, f"Where does Alice live? {CANARY}", k=2)
            memory = await q.context(CHAT, query=f"Alice tea {CANARY}")
            with pytest.raises(memory_worker.EmbeddingUnavailable) as info:
                await q.correct(card, f"Alice drinks coffee {CANARY}", actor="ops")
        assert isinstance(hits, memory_worker.RecallResult)
        assert isinstance(hits, list)
        assert hits[0].card.fact_text == "Alice lives in Lisbon"  # by its words
        assert all(h.dense is None and h.lexical > 0 for h in hits)
        assert memory.degraded
        assert "Alice likes green tea" in memory.text.splitlines()[1]  # relevance by words
        errors = [hits.degraded_error, memory.degraded_error, info.value]
        for error, call in zip(errors, ["recall", "recall", "correct"], strict=True):
            assert isinstance(error, memory_worker.EmbeddingUnavailable)
            assert isinstance(error, memory_worker.Unavailable)
            assert isinstance(error.__cause__, LLMError)
            assert error.call == call
            assert error.chat_id == CHAT
            assert error.kind == type(error.__cause__).__name__
            assert CANARY not in str(error)
            assert CANARY not in repr(error.args)
        assert hits.degraded_reason == str(hits.degraded_error)
        assert await dump_chat(q.cards, CHAT) == before  # nothing written
        degraded = [e for e in events if e["event"] == "recall.degraded"]
        assert [e["call"] for e in degraded] == ["recall", "context"]
        assert not any(CANARY in str(e) for e in events)
    counted = await redis.hgetall(Keys(farm.key_prefix).counters)  # type: ignore[misc]
    assert counted[b"degraded:recall"] == b"1"
    assert counted[b"degraded:context"] == b"1"


async def test_a_routes_file_that_cannot_load_is_a_configuration_error(
    settings: Settings, tmp_path: Path
) -> None:
    broken = tmp_path / "routes.toml"
    broken.write_text("[routes.embedding\n")
    q = await MemoryQueue.connect(
        settings=settings.model_copy(update={"routes_file": broken, "embedding_dimension": 384})
    )
    try:
        await remember(q, FACTS[:1])
        with pytest.raises(RoutesInvalid) as info:
            await q.recall(CHAT, "tea?")
        assert isinstance(info.value.__cause__, RoutesError)
    finally:
        await q.close()
