"""Export and import (§13) on real Valkey, the cards on the queue's server and on the cluster.

Round trip: a chat with every kind of card (active, competing, superseded, merged, expired,
retracted, corrected), vectors, episodes, links and authorship is exported, imported into
an empty deployment (another key prefix), and gives the same ``visible_cards``, the same
``similar_cards`` answers and the same export; importing again changes nothing. A user's
export is what forgetting them would remove. Bad files — cut short at a line end or
mid-line, damaged, of another chat — are one clear error and nothing written; a chat
holding other memory under the file's ids is a conflict, nothing written.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import orjson
import pytest

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStatus, ResolutionOp, ResolutionWrite, RunWrites, Scope
from memory_worker.cards.writes import EpisodeWrite, LinkWrite
from memory_worker.errors import ImportConflict, InvalidExport
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, close_cards_client
from tests.support.cards import ALICE, BOB, CHAT, T0, new, vec
from tests.support.chat_state import read_state

MODEL = "m16"


@pytest.fixture
async def deployments(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str
) -> AsyncIterator[tuple[MemoryQueue, MemoryQueue]]:
    """Two deployments on the same servers (key prefixes apart): the source and an empty one."""
    on_cluster = cards_redis is not redis
    queues = []
    for suffix in ("", "b:"):
        s = settings.model_copy(
            update={
                "cards_url": cards_url if on_cluster else None,
                "key_prefix": settings.key_prefix + suffix,
            }
        )
        q = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
        q.clock = lambda: (T0 + timedelta(days=10)).timestamp()
        queues.append(q)
    try:
        yield queues[0], queues[1]
    finally:
        for q in queues:
            await close_cards_client(q.cards.redis, redis)


async def rich_chat(q: MemoryQueue) -> None:
    """Every kind of card, vectors, episodes (one with a vector), links and authors."""
    cards = [
        new("Alice likes green tea", seed=1, sources=(1,)),
        new("Alice lives in Lisbon", predicate="lives", seed=2, sources=(2,)),
        new("Bob skis", subject="Bob", user=BOB, seed=3, sources=(3,)),
        new("The chat meets on Fridays", scope=Scope.CHAT, user=None, seed=4, sources=(1, 3)),
        new("Alice is in Paris this week", seed=5, sources=(2,), expires=T0 + timedelta(days=1)),
        new("Мария любит кататься на велосипеде", scope=Scope.CHAT, user=None, seed=None),
    ]
    episode = EpisodeWrite(
        "A talk", ["tea"], ["Alice", "Bob"], T0, T0 + timedelta(hours=1), 0, 3, vec(9)
    )
    await q.cards.apply_run(
        CHAT,
        "run-1",
        RunWrites(
            observed_at=T0,
            cards=cards,
            links=[LinkWrite(0, 1, "related", 0.7)],
            episode=episode,
            embedding_model=MODEL,
            authors=[(1, ALICE), (2, ALICE), (3, BOB)],
        ),
        now=T0,
    )
    later = T0 + timedelta(days=2)
    moved = new("Alice lives in Porto", predicate="lives", seed=6, sources=(4,), at=later)
    await q.cards.apply_run(
        CHAT,
        "run-2",
        RunWrites(
            observed_at=later,
            cards=[moved, new("Alice likes mate", seed=7, sources=(4,), at=later)],
            resolutions=[
                ResolutionWrite("2", ResolutionOp.SUPERSEDE, new_index=0),
                ResolutionWrite("1", ResolutionOp.COMPETING, new_index=1),
            ],
            embedding_model=MODEL,
            authors=[(4, ALICE)],
        ),
        now=later,
    )
    await q.cards.expire(CHAT, now=T0 + timedelta(days=3))
    await q.retract(f"{CHAT}:3", actor="ops", reason="Bob asked")

    async def embed_fact(chat_id: int, fact: str, space: Any) -> tuple[list[float], str]:
        return vec(11), MODEL

    q._embed_fact = embed_fact  # type: ignore[method-assign]
    await q.correct(f"{CHAT}:4", "The chat meets on Thursdays", actor="ops")


def body(lines: list[bytes]) -> list[bytes]:
    """The lines but the header's time of export."""
    header = orjson.loads(lines[0])
    del header["exported_at"]
    return [orjson.dumps(header), *lines[1:]]


async def test_export_import_round_trip_and_idempotence(
    deployments: tuple[MemoryQueue, MemoryQueue], cards_redis: Any
) -> None:
    source, target = deployments
    await rich_chat(source)
    exported = list((await source.export(CHAT)).lines())
    statuses = {orjson.loads(x)["status"] for x in exported[1:] if b'"kind":"card"' in x}
    assert statuses == {s.value for s in CardStatus} - {"merged"}

    done = await target.import_export(exported)
    assert done["cards"] == orjson.loads(exported[0])["counts"]["cards"]
    for user in (None, ALICE, BOB):
        assert await target.visible_cards(CHAT, user_id=user) == await source.visible_cards(
            CHAT, user_id=user
        )
    for seed in range(5):
        assert await target.similar_cards(CHAT, vec(seed), k=4, model=MODEL) == (
            await source.similar_cards(CHAT, vec(seed), k=4, model=MODEL)
        )
    assert await target.cards.episodes(CHAT) == await source.cards.episodes(CHAT)
    assert body(list((await target.export(CHAT)).lines())) == body(exported)

    state = await read_state(cards_redis, target.keys, CHAT)
    again = await target.import_export(exported)
    assert (again["cards"], again["present"]) == (0, done["cards"])
    assert await read_state(cards_redis, target.keys, CHAT) == state


async def test_a_retracted_fact_stays_retracted_after_an_import(
    deployments: tuple[MemoryQueue, MemoryQueue],
) -> None:
    source, target = deployments
    await rich_chat(source)
    await target.import_export(list((await source.export(CHAT)).lines()))
    for q in deployments:
        relearn = new(
            "Bob skis", subject="Bob", user=BOB, seed=3, sources=(9,), at=T0 + timedelta(days=4)
        )
        done = await q.cards.apply_run(
            CHAT, "replay", RunWrites(observed_at=T0, cards=[relearn]), now=T0
        )
        assert done.retracted == 1


async def test_a_users_export_is_what_forgetting_them_would_remove(
    deployments: tuple[MemoryQueue, MemoryQueue],
) -> None:
    source, _ = deployments
    await rich_chat(source)
    mine = await source.export(CHAT, user_id=BOB)
    assert {c.fact_text for c in mine.snapshot.cards} == {"Bob skis"}
    assert mine.snapshot.authors == {3: BOB}
    assert [e.run_id for e in mine.snapshot.episodes] == ["run-1"]
    header = orjson.loads(next(mine.lines()))
    assert (header["user_id"], header["counts"]["cards"]) == (BOB, 1)


async def test_an_unknown_chat_exports_empty(deployments: tuple[MemoryQueue, MemoryQueue]) -> None:
    source, _ = deployments
    lines = list((await source.export(CHAT + 5)).lines())
    assert len(lines) == 1
    assert orjson.loads(lines[0])["counts"] == dict.fromkeys(
        ("cards", "episodes", "links", "authors", "runs"), 0
    )


def _damaged(lines: list[bytes]) -> dict[str, tuple[list[bytes], str]]:
    card = next(i for i, x in enumerate(lines) if b'"kind":"card"' in x)
    link = next(i for i, x in enumerate(lines) if b'"kind":"link"' in x)

    def edit(i: int, **change: Any) -> list[bytes]:
        data = orjson.loads(lines[i]) | change
        return [*lines[:i], orjson.dumps(data) + b"\n", *lines[i + 1 :]]

    return {
        "cut-at-a-line-end": (lines[:-2], "the file is cut short"),
        "cut-mid-line": ([*lines[:-1], lines[-1][:20]], "no line end"),
        "no-last-newline": ([*lines[:-1], lines[-1][:-1]], "no line end"),
        "empty": ([], "the file is empty"),
        "not-json": ([lines[0], b"{nope\n", *lines[2:]], ":2: not a JSON object"),
        "not-an-export": ([b'{"format": "csv"}\n', *lines[1:]], ":1: not an export header"),
        "another-chat": (edit(card, chat_id=CHAT + 1), "chat_id: a card of another chat"),
        "unknown-field": (edit(card, colour="red"), "colour"),
        "bad-vector": (edit(card, vector="AAAA"), "vector: 3 bytes"),
        "dangling-link": (edit(link, to_card_id="999"), "link: to a card the file does not hold"),
        "unknown-kind": (edit(card, kind="photo"), "kind: not one of"),
        "naive-time": (edit(card, observed_at="2026-03-01T12:00:00"), "observed_at: .*timezone"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "cut-at-a-line-end",
        "cut-mid-line",
        "no-last-newline",
        "empty",
        "not-json",
        "not-an-export",
        "another-chat",
        "unknown-field",
        "bad-vector",
        "dangling-link",
        "unknown-kind",
        "naive-time",
    ],
)
async def test_a_bad_file_is_one_clear_error_and_nothing_is_written(
    deployments: tuple[MemoryQueue, MemoryQueue], case: str
) -> None:
    source, target = deployments
    await rich_chat(source)
    lines, message = _damaged(list((await source.export(CHAT)).lines()))[case]
    with pytest.raises(InvalidExport, match=message) as caught:
        await target.import_export(io.BytesIO(b"".join(lines)), source="chat.jsonl")
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("chat.jsonl")
    assert await target.cards.chat_keys(CHAT) == []


async def test_a_chat_with_other_memory_under_the_ids_is_a_conflict(
    deployments: tuple[MemoryQueue, MemoryQueue],
) -> None:
    source, target = deployments
    await rich_chat(source)
    lines = list((await source.export(CHAT)).lines())
    await target.cards.apply_run(
        CHAT, "other", RunWrites(observed_at=T0, cards=[new("Someone else", seed=None)]), now=T0
    )
    before = await target.cards.all_cards(CHAT)
    with pytest.raises(ImportConflict, match="another card 1"):
        await target.import_export(lines)
    assert await target.cards.all_cards(CHAT) == before


async def test_a_standalone_export_restores_onto_the_cluster(
    settings: Settings, redis: Any, valkey_cluster: Any
) -> None:
    """The file knows no topology: exported from one server, imported onto the cluster."""
    source = MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), settings)
    on_cluster = settings.model_copy(
        update={"cards_url": valkey_cluster.url, "key_prefix": settings.key_prefix + "c:"}
    )
    target = MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), on_cluster)
    source.clock = target.clock = lambda: (T0 + timedelta(days=10)).timestamp()
    try:
        await rich_chat(source)
        lines = list((await source.export(CHAT)).lines())
        await target.import_export(lines)
        assert body(list((await target.export(CHAT)).lines())) == body(lines)
        assert await target.similar_cards(CHAT, vec(2), k=3, model=MODEL) == (
            await source.similar_cards(CHAT, vec(2), k=3, model=MODEL)
        )
    finally:
        client: Any = target.cards.redis
        async for key in client.scan_iter(match=f"*{on_cluster.key_prefix}*"):
            await client.delete(key)
        await close_cards_client(target.cards.redis, redis)
