"""``cards/lua/import.lua`` against its Python twin (``import_plan.import_twin``): random
chats exported and imported, standalone and cluster.

A source chat is built by random runs (the real apply script), retractions and
corrections; its snapshot is planned into a target chat that is empty, already holds part
of it (a resumed import), holds it whole (a repeat), or changes between the plan and the
script (the script's own conflict checks: a card taken, a card changed, a fact held by
another card, vectors of another model, a withdrawal landed). The target's state read before
goes through the twin, the script runs, and the state after and the answer must be the
twin's. The plan counts the withdrawn marks each chunk finds (its own retracted and
corrected-away rows included): a chunk that finds another count writes nothing.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import orjson
import pytest

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore, RunWrites
from memory_worker.cards.codec import lua_json, to_ms
from memory_worker.cards.export_format import Snapshot
from memory_worker.cards.import_plan import ChatView, import_twin, plan_import
from memory_worker.cards.transfer import read_snapshot, write_snapshot
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle
from tests.support.chat_state import read_state
from tests.support.forget_cards import AT, CHAT, DIM, new_card

MODEL = "m1"


async def build_source(queue: MemoryQueue, rng: random.Random) -> None:
    store, at, n = queue.cards, AT, 0
    for step in range(6):
        batch = [new_card(n + i, rng) for i in range(rng.randint(2, 8))]
        n += len(batch)
        at += timedelta(minutes=5)
        await store.apply_run(
            CHAT, f"r{step}", RunWrites(observed_at=at, cards=batch, embedding_model=MODEL), now=at
        )
    queue.clock = lambda: (at + timedelta(hours=1)).timestamp()

    async def embed_fact(chat_id: int, fact: str, space: Any) -> tuple[list[float], str]:
        return [rng.uniform(-1, 1) for _ in range(DIM)], MODEL

    queue._embed_fact = embed_fact  # type: ignore[method-assign]
    live = await store.live_cards(CHAT)
    for card in rng.sample(live, 3):
        await queue.retract(card.ref, actor="ops", reason="r")
    card = rng.choice(await store.live_cards(CHAT))
    await queue.correct(card.ref, f"corrected {rng.random()}", actor="ops")


async def target_state(target: CardStore, snap: Snapshot, rng: random.Random, kind: str) -> None:
    """Bring the target chat into the ``kind`` of state before the planned import."""
    now = AT + timedelta(days=1)
    if kind == "part":
        part = Snapshot(chat_id=snap.chat_id, model=snap.model, dimension=snap.dimension)
        part.cards = snap.cards[: len(snap.cards) // 2]
        part.card_vectors = {
            c.id: snap.card_vectors[c.id] for c in part.cards if c.id in snap.card_vectors
        }
        await write_snapshot(target, part, now=now, chats_key="x", chunk_items=7, replans=8)
    elif kind == "whole":
        await write_snapshot(target, snap, now=now, chats_key="x", chunk_items=50, replans=8)


async def race(target: CardStore, snap: Snapshot, rng: random.Random, kind: str) -> None:
    """A change between the plan and the script (the script's own checks must refuse)."""
    client: Any = target.redis
    if kind == "taken":
        other = new_card(9000, rng)
        await target.apply_run(CHAT, "late", RunWrites(observed_at=AT, cards=[other]), now=AT)
        await client.hset(target.key(CHAT, "cards"), "1", b'{"id":"1"}')  # the file's id taken
    elif kind == "model":
        await client.hset(target.key(CHAT, "meta"), mapping={"dim": "8", "model": "other"})
    elif kind == "forgotten":
        await client.set(target.key(CHAT, "forget"), "3")
    elif kind == "withdrawn":  # a retraction's mark landed after the plan's meaning check
        await client.setrange(target.key(CHAT, "vecmask"), 4096, b"\x02")
    elif kind == "retracted":  # a live card's fact retracted after its messages: left out
        live = [c for c in snap.cards if c.live]
        for card in rng.sample(live, min(2, len(live))):
            when = to_ms(card.observed_at + timedelta(minutes=1))
            await client.hset(target.key(CHAT, "retracted"), card.dedup_hash, when)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "kind", ["empty", "part", "whole", "taken", "model", "forgotten", "retracted", "withdrawn"]
)
async def test_the_import_script_matches_its_twin(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str, seed: int, kind: str
) -> None:
    """Chunk by chunk (a random chunk size): each call's state and answer are the twin's."""
    rng = random.Random(seed)
    on_cluster = cards_redis is not redis
    s = settings.model_copy(update={"cards_url": cards_url if on_cluster else None})
    source = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    await build_source(source, rng)
    snap = await read_snapshot(source.cards, CHAT, rounds=3)
    keys = Keys(s.key_prefix + "t:")
    target = CardStore(cards_redis, keys)
    await target_state(target, snap, rng, kind)

    existing = {c.id: c for c in await target.get_cards(CHAT, [c.id for c in snap.cards])}
    state = await read_state(cards_redis, keys, CHAT)
    view = ChatView(
        existing=existing,
        holders={h: v for h, v in state.dedup.items()},
        space=await target.vector_space(CHAT),
        retractions=state.retracted,
        marks=state.vecmask.count(b"\x02"),
    )
    plan = plan_import(snap, view, chunk_items=rng.randint(3, 40))
    await race(target, snap, rng, kind)
    now = to_ms(AT + timedelta(days=2))
    answers = []
    for chunk in plan.chunks:
        before = await read_state(cards_redis, keys, CHAT)
        want, answer = import_twin(before, chunk.plan, chunk.blobs, now=now)
        raw = await target.run_script(
            "import",
            CHAT,
            [now, lua_json(chunk.plan), *chunk.blobs],
            scopes=chunk.scopes,
            extra=chunk.episode_keys,
        )
        assert orjson.loads(raw) == answer
        assert await read_state(cards_redis, keys, CHAT) == want
        answers.append(answer)
    refused = {
        "taken": "conflict",
        "model": "conflict",
        "forgotten": "forgotten",
        "withdrawn": "withdrawn",
    }.get(kind)
    assert (
        any(refused in a for a in answers)
        if refused
        else not any("conflict" in a or "forgotten" in a or "withdrawn" in a for a in answers)
    )
    if kind == "retracted":
        assert sum(a["retracted"] for a in answers) >= 1
