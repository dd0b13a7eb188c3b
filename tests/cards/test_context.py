"""``MemoryQueue.context`` (§13): memory ready for a bot's prompt, on real Valkey (standalone
and the cluster) with the real e5 embedder answering recall.

It shows the user's own cards and the chat's (never another user's, never a retracted or
superseded card), ranked by relevance to the query, one per fact, within the token budget,
each fact in its own language, and the same store gives the same context — also to another
process's queue.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from llm_client import ClientConfig, LocalEmbedClient
from memory_worker.api import MemoryQueue
from memory_worker.cards import RunWrites, Scope
from memory_worker.cards.prompt_context import HEADER, estimate_tokens
from memory_worker.errors import InvalidId, InvalidQuery, QueryTooLarge
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, close_cards_client
from tests.support.cards import T0, new
from tests.support.routes import local_target, route, write_routes

E5 = "multilingual-e5-small"
CHAT = 4242
ALICE, BOB = 11, 12

FACTS: list[tuple[str, Scope, int | None, float]] = [
    ("Alice likes green tea", Scope.CHAT, None, 0.3),
    ("Alice lives in Lisbon", Scope.CHAT, None, 0.9),
    ("Bob works as a nurse", Scope.CHAT, None, 0.6),
    ("Мария любит кататься на велосипеде", Scope.CHAT, None, 0.5),
    ("Alice is allergic to peanuts", Scope.USER, ALICE, 0.8),
    ("Bob's PIN hint is his cat", Scope.USER, BOB, 1.0),
]


@pytest.fixture
async def queue(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str, tmp_path: Path
) -> AsyncIterator[MemoryQueue]:
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
    q.clock = lambda: (T0 + timedelta(days=30)).timestamp()
    try:
        yield q
    finally:
        await q._close_recall()
        await close_cards_client(q.cards.redis, redis)


async def remember(q: MemoryQueue) -> None:
    """The facts with real e5 passage vectors, a day apart (the first is the oldest)."""
    client = LocalEmbedClient(E5, ClientConfig(base_url=""))
    vectors = (await client.embed([f for f, *_ in FACTS], dimension=384)).embeddings
    for i, ((fact, scope, user, salience), vector) in enumerate(zip(FACTS, vectors, strict=True)):
        card = dataclasses.replace(
            new(fact, scope=scope, user=user, salience=salience, subject=str(i),
                at=T0 + timedelta(days=i), sources=(i + 1,)),
            embedding=vector,
        )  # fmt: skip
        writes = RunWrites(observed_at=card.observed_at, cards=[card], embedding_model=E5)
        await q.cards.apply_run(CHAT, f"run-{i}", writes, now=card.observed_at)
    await client.aclose()


async def test_the_users_and_the_chats_cards_ranked_within_the_budget(queue: MemoryQueue) -> None:
    await remember(queue)
    memory = await queue.context(CHAT, user_id=ALICE)

    facts = [c.fact_text for c in memory.cards]
    assert "Bob's PIN hint is his cat" not in facts  # another user's card
    assert facts[0] == "Alice lives in Lisbon"  # the most salient
    assert facts[-1] == "Alice likes green tea"  # the least salient, the oldest
    assert set(facts) == {f for f, _, user, _ in FACTS if user in (None, ALICE)}
    assert memory.text.splitlines()[0] == HEADER
    assert "- [2026-03-04] Мария любит кататься на велосипеде" in memory.text  # as stored
    assert memory.tokens == estimate_tokens(memory.text) <= 800
    small = await queue.context(CHAT, user_id=ALICE, max_tokens=40)
    assert small.tokens <= 40
    assert [c.id for c in small.cards] == [c.id for c in memory.cards][: len(small.cards)]
    assert 0 < len(small.cards) < len(memory.cards)


async def test_a_tiny_budget_still_holds_the_best_fact_and_drops_the_header(
    queue: MemoryQueue,
) -> None:
    """At every budget from 1 to 100 tokens: never over it; the best card first whenever its
    line fits alone (the header, 27 tokens, gives way before it does). The sweep asks
    without a query (nothing embedded); one query at the smallest budget that holds it."""
    await remember(queue)
    full = await queue.context(CHAT, user_id=ALICE)
    best = full.cards[0]
    assert best.fact_text == "Alice lives in Lisbon"  # the most salient
    best_line = next(t for t in full.text.splitlines() if t.endswith(best.fact_text))
    alone = estimate_tokens(best_line + "\n")
    for budget in range(1, 101):
        small = await queue.context(CHAT, user_id=ALICE, max_tokens=budget)
        assert small.tokens == estimate_tokens(small.text) <= budget
        if budget >= alone:
            assert small.cards[0].id == best.id, budget
            assert best_line in small.text.splitlines()[:2]
            assert small.text.startswith(HEADER) is (budget >= alone + 27)
    tiny = await queue.context(CHAT, user_id=ALICE, max_tokens=alone)
    assert tiny.text == best_line + "\n"
    asked = await queue.context(CHAT, user_id=ALICE, query="What does Alice drink?", max_tokens=14)
    assert [c.fact_text for c in asked.cards] == ["Alice likes green tea"]
    assert asked.text.startswith("- [")
    assert asked.tokens <= 14


async def test_a_query_puts_the_relevant_card_first(queue: MemoryQueue) -> None:
    await remember(queue)
    memory = await queue.context(CHAT, user_id=ALICE, query="What does Alice drink?")
    assert memory.cards[0].fact_text == "Alice likes green tea"
    memory = await queue.context(CHAT, user_id=BOB, query="Кем работает Боб?")
    assert memory.cards[0].fact_text == "Bob works as a nurse"
    assert "Alice is allergic to peanuts" not in memory.text


async def test_the_same_store_gives_the_same_context(queue: MemoryQueue, redis: Any) -> None:
    await remember(queue)
    first = await queue.context(CHAT, user_id=ALICE, query="tea?")
    other = MemoryQueue(RedisHandle(redis, ""), queue.settings)  # a cold process's queue
    other.clock = lambda: (T0 + timedelta(days=400)).timestamp()  # a later clock
    try:
        assert await other.context(CHAT, user_id=ALICE, query="tea?") == first
        assert await other.context(CHAT, user_id=ALICE) == await queue.context(CHAT, user_id=ALICE)
    finally:
        await other._close_recall()
        await close_cards_client(other.cards.redis, redis)


async def test_retracted_and_superseded_cards_never_show(queue: MemoryQueue) -> None:
    await remember(queue)
    by_fact = {c.fact_text: c for c in await queue.visible_cards(CHAT, user_id=ALICE)}
    await queue.retract(by_fact["Alice lives in Lisbon"].ref, actor="ops", reason="moved")
    fixed = await queue.correct(
        by_fact["Alice likes green tea"].ref, "Alice likes mate", actor="ops"
    )
    memory = await queue.context(CHAT, user_id=ALICE, query="Where does Alice live? tea?")
    facts = [c.fact_text for c in memory.cards]
    assert "Alice lives in Lisbon" not in facts
    assert "Alice likes green tea" not in facts
    assert fixed.id in [c.id for c in memory.cards]


async def test_one_card_per_fact(queue: MemoryQueue) -> None:
    same = [
        new("Alice skis.", scope=Scope.CHAT, user=None, seed=None),
        new("alice skis", scope=Scope.USER, user=ALICE, seed=None, at=T0 + timedelta(hours=1)),
    ]
    await queue.cards.apply_run(CHAT, "r", RunWrites(observed_at=T0, cards=same), now=T0)
    assert len(await queue.visible_cards(CHAT, user_id=ALICE)) == 2
    memory = await queue.context(CHAT, user_id=ALICE)
    assert [c.fact_text for c in memory.cards] == ["alice skis"]


async def test_an_empty_chat_or_budget_gives_an_empty_context(queue: MemoryQueue) -> None:
    empty = await queue.context(CHAT, user_id=ALICE, query="anything?")
    assert (empty.text, empty.cards, empty.tokens) == ("", [], 0)
    await remember(queue)
    none = await queue.context(CHAT, user_id=ALICE, query="tea?", max_tokens=0)
    assert (none.text, none.cards, none.tokens) == ("", [], 0)


async def test_bad_arguments_are_typed_errors(queue: MemoryQueue) -> None:
    with pytest.raises(InvalidId):
        await queue.context("42")  # type: ignore[arg-type]
    with pytest.raises(InvalidId):
        await queue.context(CHAT, max_tokens="800")  # type: ignore[arg-type]
    with pytest.raises(QueryTooLarge):
        await queue.context(CHAT, max_tokens=queue.settings.context_max_tokens + 1)
    with pytest.raises(InvalidQuery):
        await queue.context(CHAT, max_tokens=-1)
    with pytest.raises(InvalidQuery):
        await queue.context(CHAT, query="  ")
