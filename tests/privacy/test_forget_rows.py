"""``cards/lua/forget.lua`` against its Python twin (``forget.PackedRows``), random sequences.

A chat's cards are written through the real card write (8-byte vectors); random
cards are forgotten in random chunks through the script and through the twin.
After every call the stored matrix — rows, ``id|scope`` entries, the live mask,
each card's ``row`` — is the twin's (the strings cut to the rows left), and every
remaining card still finds its own vector.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from memory_worker.cards import CardStore
from memory_worker.cards.forget import CardForget, UserPlan
from memory_worker.cards.writes import RunWrites
from memory_worker.keys import Keys
from memory_worker.privacy.forget import PackedRows, StoredCard
from tests.support.forget_cards import AT, CHAT, DIM, new_card


async def stored_rows(redis: Any, keys: Keys) -> PackedRows:
    k = keys.chat
    cards = {
        n.decode(): orjson.loads(v) for n, v in (await redis.hgetall(k(CHAT, "cards"))).items()
    }
    return PackedRows(
        dim=DIM,
        vec=await redis.get(k(CHAT, "vec")) or b"",
        entries=[e.decode() for e in await redis.lrange(k(CHAT, "vecids"), 0, -1)],
        mask=await redis.get(k(CHAT, "vecmask")) or b"",
        rows={cid: int(c["row"]) for cid, c in cards.items() if c.get("row")},
    )


@pytest.mark.parametrize("seed", range(6))
async def test_forget_script_matches_its_python_twin(
    redis: Any, key_prefix: str, seed: int
) -> None:
    rng = random.Random(seed)
    keys = Keys(key_prefix)
    store = CardStore(redis, keys)
    n = rng.randint(5, 40)
    writes = RunWrites(
        observed_at=AT, cards=[new_card(i, rng) for i in range(n)], embedding_model="m"
    )
    await store.apply_run(CHAT, "r1", writes, now=AT)
    twin = await stored_rows(redis, keys)
    originals = {cid: twin.vec[r * DIM : (r + 1) * DIM] for cid, r in twin.rows.items()}
    forget = CardForget(redis, keys, chunk=rng.randint(1, 6))
    alive = sorted(c.id for c in await store.all_cards(CHAT))
    while alive:
        picked = rng.sample(alive, rng.randint(1, min(len(alive), 5)))
        raws = await redis.hmget(keys.chat(CHAT, "cards"), picked)
        plan = UserPlan(cards=[StoredCard.from_json(r) for r in raws])
        await forget.forget_user(CHAT, 0, plan)
        for cid in picked:
            twin.remove(cid)
            alive.remove(cid)
        got = await stored_rows(redis, keys)
        assert got.entries == twin.entries
        assert got.rows == twin.rows
        assert got.vec == twin.vec  # compacted: no byte of a removed row is left
        assert got.mask == twin.mask
        for cid, row in got.rows.items():
            assert got.vec[row * DIM : (row + 1) * DIM] == originals[cid]
            assert got.entries[row].partition("|")[0] == cid
    assert await store.all_cards(CHAT) == []
    assert await redis.llen(keys.chat(CHAT, "vecids")) == 0
