"""The story the card-history suites share (§13): a chat whose cards were created by runs,
observed again, superseded, corrected, retracted and remembered, at known times, with real
e5 vectors; the queue fixture over it; and the shape of a history to compare."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from llm_client import ClientConfig, LocalEmbedClient
from memory_worker.api import MemoryQueue
from memory_worker.cards import CardEvent, NewCard, ResolutionOp, ResolutionWrite, RunWrites, Scope
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, close_cards_client
from tests.support.cards import T0, new
from tests.support.clock import ManualClock
from tests.support.routes import local_target, route, write_routes

E5 = "multilingual-e5-small"
CHAT = 3636
ALICE = 11
T1, T2, T3 = T0, T0 + timedelta(hours=1), T0 + timedelta(hours=2)
T4, T5, T6, T7 = (T0 + timedelta(hours=h) for h in (3, 4, 5, 6))
SECOND = timedelta(seconds=1)


def e5_settings(settings: Settings, tmp_path: Path, **more: Any) -> Settings:
    routes = write_routes(tmp_path, embedding=route(local_target()))
    update = {"routes_file": routes, "embedding_dimension": 384, **more}
    return settings.model_copy(update=update)


@pytest.fixture
async def queue(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str, tmp_path: Path
) -> AsyncIterator[MemoryQueue]:
    """A queue embedding with the local e5 route, its cards on ``cards_redis`` (standalone,
    then the cluster)."""
    on_cluster = cards_redis is not redis
    s = e5_settings(settings, tmp_path, cards_url=cards_url if on_cluster else None)
    q = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    q.clock = ManualClock(T0.timestamp())
    try:
        yield q
    finally:
        await q._close_recall()
        await close_cards_client(q.cards.redis, redis)


async def embedded(*cards: NewCard) -> list[NewCard]:
    client = LocalEmbedClient(E5, ClientConfig(base_url=""))
    vectors = (await client.embed([c.fact_text for c in cards], dimension=384)).embeddings
    await client.aclose()
    return [dataclasses.replace(c, embedding=v) for c, v in zip(cards, vectors, strict=True)]


def lives(city: str, at: datetime) -> NewCard:
    return new(f"Alice lives in {city}", predicate="lives in", at=at, seed=None)


async def run(q: MemoryQueue, run_id: str, at: datetime, *cards: NewCard, **kw: Any) -> None:
    writes = RunWrites(observed_at=at, cards=list(await embedded(*cards)), embedding_model=E5, **kw)
    await q.cards.apply_run(CHAT, run_id, writes, now=at)


def at(q: MemoryQueue, moment: datetime) -> None:
    q.clock = ManualClock(moment.timestamp())


async def story(q: MemoryQueue) -> None:
    """Card 1 Lisbon (run r1), observed again (r2), superseded by card 2 Porto (r3); card 2
    corrected to card 3 Braga (req-7), card 3 retracted (req-8); card 4 remembered (req-9)
    and remembered again (req-10). Card 2: a chat card beside them, from r1 (cards 1-5 are
    Lisbon, Bob, Porto, Braga, vegetarian)."""
    bob = new("Bob works as a nurse", subject="Bob", scope=Scope.CHAT, user=None, seed=None)
    await run(q, "r1", T1, lives("Lisbon", T1), bob)
    await run(q, "r2", T2, lives("Lisbon", T2))
    supersede = ResolutionWrite("1", ResolutionOp.SUPERSEDE, new_index=0)
    await run(q, "r3", T3, lives("Porto", T3), resolutions=[supersede])
    at(q, T4)
    braga = await q.correct(
        f"{CHAT}:3", "Alice lives in Braga", actor="ops:ann", request_id="req-7"
    )
    at(q, T5)
    await q.retract(braga, actor="ops:bob", reason="not sure", request_id="req-8")
    at(q, T6)
    await q.remember(CHAT, "Alice is vegetarian", user_id=ALICE, actor="bot:1", request_id="req-9")
    at(q, T7)
    await q.remember(
        CHAT, "alice is vegetarian.", user_id=ALICE, actor="bot:1", request_id="req-10"
    )


def shape(events: list[CardEvent]) -> list[tuple[Any, ...]]:
    return [
        (e.kind.value, e.at, e.via, e.actor, e.run_id or e.request_id, e.card_id, e.derived)
        for e in events
    ]
