"""``cards/lua/remember.lua`` and ``fill_vectors.lua`` against their Python twins
(``remember.remember_twin``, ``remember.fill_twin``): random sequences, standalone and cluster.

Random runs (the real apply script) build the chat, and random retractions (the real
retract script) withdraw some of its cards; between them a fact is remembered — new, one
remembered before (in other case and spacing), the words of a run's live card (named as
``known``, or a stale ``known``), a retracted card's, with or without a vector of the chat's
model or another, sometimes inside a forget in progress or after a forget epoch the plan
did not see — or the waiting cards are filled (their vectors, none, a changed text, an id
that is gone). The state read before goes through the twin, the script runs, and the state
read after (every key the scripts touch) and the answer must be the twin's.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import orjson
import pytest

from memory_worker.cards import CardStore, RunWrites
from memory_worker.cards.codec import lua_json, to_ms
from memory_worker.cards.edits import REMEMBER_KEYS
from memory_worker.cards.remember import (
    Filled,
    FillItem,
    Remembered,
    RememberPlan,
    fill_plan,
    fill_twin,
    remember_twin,
    remembered_card,
)
from memory_worker.cards.vectors import quantize
from memory_worker.keys import Keys
from tests.support.chat_state import read_state
from tests.support.forget_cards import AT, CHAT, DIM, new_card

MODEL = "m1"


def _vector(rng: random.Random) -> bytes:
    return quantize([rng.uniform(-1, 1) for _ in range(DIM)])


@pytest.mark.parametrize("seed", range(4))
async def test_remember_and_fill_scripts_match_their_twins(
    cards_redis: Any, key_prefix: str, seed: int
) -> None:
    rng = random.Random(seed)
    keys = Keys(key_prefix)
    store = CardStore(cards_redis, keys)
    at, n, seen = AT, 0, set()
    said: list[str] = []
    for step in range(40):
        if step % 4 == 0:
            batch = [new_card(n + i, rng) for i in range(rng.randint(1, 4))]
            n += len(batch)
            at += timedelta(minutes=1)
            writes = RunWrites(observed_at=at, cards=batch, embedding_model=MODEL)
            await store.apply_run(CHAT, f"r{step}", writes, now=at)
        at += timedelta(seconds=1)
        now = to_ms(at)
        before = await read_state(cards_redis, keys, CHAT)
        sks = sorted(before.scopes)
        live = [c for c in before.cards.values() if c["status"] in ("active", "competing")]
        if rng.random() < 0.15 and live:  # a withdrawal, through the real script
            card = rng.choice(live)
            args = [now, card["id"], "ops", "wrong"]
            await store.run_script("retract", CHAT, args, scopes=sks)
            continue
        if rng.random() < 0.1:  # a forget in progress of some scope
            scope = rng.choice(["chat", "user:1", "user:2"])
            await cards_redis.hset(keys.chat(CHAT, "forgetting"), f"{scope}|1|ab", "1")
            before = await read_state(cards_redis, keys, CHAT)
        elif before.forgetting and rng.random() < 0.5:
            await cards_redis.delete(keys.chat(CHAT, "forgetting"))
            before = await read_state(cards_redis, keys, CHAT)
        if rng.random() < 0.05:
            await cards_redis.incr(keys.chat(CHAT, "forget"))
            before = await read_state(cards_redis, keys, CHAT)
        if rng.random() < 0.65:
            got_r, want_r, want = await _remember(store, before, rng, said, live, at, now, sks)
            assert got_r == want_r
            seen.add(("remember", got_r.created, got_r.pending, got_r.forgetting))
        else:
            items = _fill_items(before, rng)
            model = MODEL if rng.random() < 0.85 else "other"
            want, want_f = fill_twin(before, items, model, now=now)
            plan, blobs = fill_plan(items, model)
            raw = await store.run_script(
                "fill_vectors", CHAT, [now, lua_json(plan), *blobs], scopes=sks, extra=("vecwait",)
            )
            got_f = Filled.from_reply(orjson.loads(raw))
            assert got_f == want_f
            seen.add(("fill", got_f.filled > 0, got_f.dropped > 0, False))
        assert await read_state(cards_redis, keys, CHAT) == want
    assert {("remember", True, False, False), ("remember", False, False, False)} <= seen
    assert ("remember", True, True, False) in seen
    assert ("fill", True, False, False) in seen or ("fill", True, True, False) in seen


async def _remember(
    store: CardStore,
    before: Any,
    rng: random.Random,
    said: list[str],
    live: list[dict[str, str]],
    at: Any,
    now: str,
    sks: list[str],
) -> tuple[Remembered, Remembered, Any]:
    pick = rng.random()
    known: tuple[str, str] | None = None
    user = rng.choice([None, 1, 2])
    retracted = [c for c in before.cards.values() if c["status"] == "retracted"]
    if pick < 0.25 and said:
        fact = rng.choice(said).upper() + "  "  # the same words, normalised
        fact = fact.strip()
    elif pick < 0.45 and live:
        other = rng.choice(live)
        fact = other["fact"]
        user = int(other["user"]) if other.get("user") and other["sk"] != "chat" else None
        known = (other["id"], other["h"] if rng.random() < 0.8 else "stale")
    elif pick < 0.55 and retracted:
        fact = rng.choice(retracted)["fact"]
    else:
        fact = f"remembered {len(said)} ünïcode"
    said.append(fact)
    card = remembered_card(
        fact, user_id=user, thread_id=0, valid_from=at, now=at, salience=rng.choice([0.5, 0.8])
    )
    blob = _vector(rng) if rng.random() < 0.6 else None
    model = MODEL if rng.random() < 0.85 else "other"
    epoch = before.forget - (1 if rng.random() < 0.1 else 0)
    plan = RememberPlan(card, "bot", epoch, dim=DIM, model=model if blob else "", known=known)
    want, want_r = remember_twin(before, plan, blob, now=now)
    args: list[Any] = [now, lua_json(plan.as_json(vector=blob is not None))]
    if blob is not None:
        args.append(blob)
    raw = await store.run_script(
        "remember", CHAT, args, scopes=[*sks, card.scope_key], extra=REMEMBER_KEYS
    )
    return Remembered.from_reply(orjson.loads(raw)), want_r, want


def _fill_items(before: Any, rng: random.Random) -> list[FillItem]:
    ids = list(before.vecwait) + rng.sample(sorted(before.cards), min(2, len(before.cards)))
    ids.append("999999")
    items = []
    for card_id in ids:
        card = before.cards.get(card_id, {})
        h = card.get("h", "") if rng.random() < 0.85 else "changed"
        items.append(FillItem(card_id, h, _vector(rng) if rng.random() < 0.8 else None))
    return items
