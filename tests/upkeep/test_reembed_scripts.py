"""The re-embedding pass's decisions (§16): pure parts, and each Lua script against its twin."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from llm_client import as_text
from memory_worker.cards import CardStore
from memory_worker.settings import Settings
from memory_worker.upkeep.reembed import (
    SWITCH_KEYS,
    parse_progress,
    progress_value,
    step_action,
    step_ids,
    switch_answer,
    switch_check,
    to_embed,
)
from tests.support.replies import answer, answer_bytes
from tests.upkeep.test_reembed import CHAT, DIM, NEW, OLD, ModelEmbedder, reembedder
from tests.upkeep.test_reembed import settings as settings  # the fixture
from tests.upkeep.test_reembed import store as store  # the fixture

# --- the pure parts ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cursor", "seq", "batch", "ids"),
    [
        (0, 0, 50, []),
        (0, 3, 50, [1, 2, 3]),
        (0, 120, 50, list(range(1, 51))),
        (100, 120, 50, list(range(101, 121))),
        (120, 120, 50, []),
        (5, 9, 0, [6]),  # a batch of 0 still moves
    ],
    ids=["empty", "short", "full", "tail", "done", "zero-batch"],
)
def test_step_ids(cursor: int, seq: int, batch: int, ids: list[int]) -> None:
    assert step_ids(cursor, seq, batch) == ids


def test_to_embed_takes_live_and_withdrawn_cards() -> None:
    cards = [
        SimpleNamespace(live=True, id="1"),
        SimpleNamespace(live=False, id="2"),
        SimpleNamespace(live=True, id="3"),
        SimpleNamespace(live=False, id="4"),
    ]
    assert [c.id for c in to_embed(cards)] == ["1", "3"]  # type: ignore[arg-type]
    assert [c.id for c in to_embed(cards, {"4"})] == ["1", "3", "4"]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ([b"switched"], ("switched", [])),
        ([b"behind", b"12"], ("behind", [])),
        ([b"stale", b"3", b"9"], ("stale", ["3", "9"])),
        ([], ("gone", [])),
    ],
    ids=["switched", "behind", "stale", "empty"],
)
def test_switch_answer(reply: list[bytes], answer: tuple[str, list[str]]) -> None:
    assert switch_answer(reply) == answer


@pytest.mark.parametrize(
    ("raw", "parsed"), [(progress_value(3, 10), (3, 10)), (b"7/9", (7, 9)), ("junk", (0, 0))]
)
def test_progress_values(raw: Any, parsed: tuple[int, int]) -> None:
    assert parse_progress(raw) == parsed


# --- the switch script and its pure twin ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
async def test_the_switch_script_decides_like_its_twin(
    store: CardStore, settings: Settings, seed: int
) -> None:
    rng = random.Random(seed)
    ids = [str(i) for i in range(1, rng.randint(1, 12))]
    dedup = {f"h{i}": i for i in ids if rng.random() < 0.8}
    embedded = {i: rng.choice([f"h{i}", f"h{i}", "old"]) for i in ids if rng.random() < 0.85}
    pass_model = rng.choice([NEW, NEW, NEW, "other", None])
    seq, cursor = len(ids), rng.choice([len(ids), len(ids), max(0, len(ids) - 2)])

    def k(suffix: str) -> str:
        return store.key(CHAT, suffix)

    if pass_model is not None:
        await answer(
            store.redis.hset(
                k("rebuild"), mapping={"model": pass_model, "dim": DIM, "cursor": cursor}
            )
        )
    await store.redis.set(k("seq"), seq)
    await answer(store.redis.hset(k("meta"), mapping={"model": OLD, "dim": DIM}))
    if dedup:
        await answer(store.redis.hset(k("dedup"), mapping=dedup))
    if embedded:
        await answer(store.redis.hset(k("nvech"), mapping=embedded))
    if ids:
        await answer(store.redis.rpush(k("vecids"), *[f"{i}|chat" for i in ids]))
        await store.redis.set(k("vec"), bytes(DIM * len(ids)))
    worker = reembedder(store, settings, ModelEmbedder(NEW))
    reply = await worker._switch(
        keys=worker._k(CHAT, *SWITCH_KEYS),
        args=[NEW, 1000],
    )
    state, stale = switch_answer(reply)
    twin = switch_check(
        pass_model=pass_model, model=NEW, cursor=cursor, seq=seq, dedup=dedup, embedded=embedded
    )
    assert (state, set(stale)) == twin
    space = await answer(store.redis.hmget(k("meta"), ["model"]))
    assert space == [(NEW if state == "switched" else OLD).encode()]
    assert await store.redis.exists(k("rebuild")) == (
        pass_model is not None and state != "switched"
    )


@pytest.mark.parametrize("seed", range(30))
async def test_the_step_script_decides_like_its_twin(
    store: CardStore, settings: Settings, seed: int
) -> None:
    rng = random.Random(seed)

    def k(suffix: str) -> str:
        return store.key(CHAT, suffix)

    old_dim = rng.choice([DIM, DIM, 0])
    cards: dict[str, dict[str, str] | None] = {}
    masks: dict[str, bytes] = {}
    rows = 0
    for i in range(1, rng.randint(2, 9)):
        if rng.random() < 0.15:
            cards[str(i)] = None  # unknown id
            continue
        card = {"id": str(i), "sk": "chat", "h": f"h{i}"}
        card["status"] = rng.choice(
            ["active", "active", "competing", "superseded", "merged", "retracted"]
        )
        if rng.random() < 0.7:
            card["row"] = str(rows)
            rows += 1
            # a retired card's row may be withdrawn (2) or not (0); a live one's is 1
            flag = b"\1" if card["status"] in ("active", "competing") else b"\0"
            masks[card["id"]] = flag if rng.random() < 0.5 else b"\2"
        cards[str(i)] = card
        # redis-py types a field's value as str; it sends bytes as they are
        await answer(store.redis.hset(k("cards"), str(i), orjson.dumps(card)))  # type: ignore[arg-type]
    if rows:
        await answer(store.redis.rpush(k("vecids"), *[f"x{r}|chat" for r in range(rows)]))
        await store.redis.set(k("vec"), bytes(max(old_dim, 1) * rows))
        mask = bytearray(rows)
        for card_id, flag in masks.items():
            mask[int((cards[card_id] or {})["row"])] = flag[0]
        await store.redis.set(k("vecmask"), bytes(mask))
    if old_dim:
        await answer(store.redis.hset(k("meta"), mapping={"model": OLD, "dim": old_dim}))
    await answer(store.redis.hset(k("rebuild"), mapping={"model": NEW, "dim": DIM, "cursor": 0}))
    items, blobs = [], []
    for card_id in cards:
        h = f"h{card_id}" if rng.random() < 0.8 else "changed"
        size = DIM if rng.random() < 0.9 else DIM - 1
        items.append((card_id, h, size))
        blobs.append(bytes([card_id.__hash__() % 100 + 1]) * size)
    worker = reembedder(store, settings, ModelEmbedder(NEW))
    before = {i: c and dict(c) for i, c in cards.items()}
    reply = await worker._step(
        keys=worker._k(
            CHAT, "rebuild", "cards", "vec", "vecids", "vecmask", "vecver", "meta", "nvec", "nvech"
        ),
        args=[NEW, "0", str(len(cards)), orjson.dumps([[i, h] for i, h, _ in items]), *blobs],
    )
    actions = {
        i: step_action(before[i], h, size, DIM, old_dim, masks.get(i, b"")) for i, h, size in items
    }
    assert int(reply[1]) == sum(a != "skip" for a in actions.values())
    written = {as_text(x) for x in await answer(store.redis.hkeys(k("nvech")))}
    assert written == {i for i, a in actions.items() if a != "skip"}
    grown = {i for i, a in actions.items() if a == "grow"}
    assert await answer(store.redis.llen(k("vecids"))) == rows + len(grown)
    for card_id in grown:
        raw = await answer_bytes(store.redis.hget(k("cards"), card_id))
        assert raw is not None
        after = orjson.loads(raw)
        assert int(after["row"]) >= rows
