"""``cards/lua/retract.lua`` and ``correct.lua`` against their Python twins
(``corrections.retract_twin``, ``corrections.correct_twin``): random sequences, standalone
and cluster.

Random runs (the real apply script) build the chat; between them a random card — live,
superseded, retracted or unknown — is retracted or corrected (to a new text, to the text a
live card already holds, to its own text, with or without a vector, of the chat's model or
another). The state read before goes through the twin, the script runs, and the state read
after (every key the scripts touch) and the answer must be the twin's.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import orjson
import pytest

from memory_worker.cards import CardStore, RunWrites
from memory_worker.cards.codec import lua_json, to_ms
from memory_worker.cards.corrections import (
    Outcome,
    correct_twin,
    correction_plan,
    retract_twin,
)
from memory_worker.cards.vectors import quantize
from memory_worker.keys import Keys
from tests.support.chat_state import read_state
from tests.support.forget_cards import AT, CHAT, DIM, new_card

MODEL = "m1"


async def _retract(store: CardStore, card_id: str, now: str, sks: list[str]) -> Outcome:
    raw = await store.run_script("retract", CHAT, [now, card_id, "ops", "wrong"], scopes=sks)
    return Outcome.from_reply(orjson.loads(raw))


@pytest.mark.parametrize("seed", range(4))
async def test_retract_and_correct_scripts_match_their_twins(
    cards_redis: Any, key_prefix: str, seed: int
) -> None:
    rng = random.Random(seed)
    keys = Keys(key_prefix)
    store = CardStore(cards_redis, keys)
    at, n, seen = AT, 0, set()
    for step in range(30):
        if step % 3 == 0:
            batch = [new_card(n + i, rng) for i in range(rng.randint(1, 6))]
            if rng.random() < 0.3:  # a fact retracted before: refused or relearned by age
                batch.append(new_card(rng.randrange(max(n, 1)), rng))
            n += len(batch)
            at += timedelta(minutes=1)
            writes = RunWrites(observed_at=at, cards=batch, embedding_model=MODEL)
            await store.apply_run(CHAT, f"r{step}", writes, now=at)
        at += timedelta(seconds=1)
        now = to_ms(at)
        before = await read_state(cards_redis, keys, CHAT)
        ids = [*sorted(before.cards, key=int), "999999"]
        card_id = rng.choice(ids)
        sks = sorted(before.scopes)
        if rng.random() < 0.5:
            want, reply = retract_twin(before, card_id, actor="ops", reason="wrong", now=now)
            got = await _retract(store, card_id, now, sks)
        else:
            old = before.cards.get(card_id, {"sk": "chat", "subject": "s", "predicate": "p"})
            live = [c for c in before.cards.values() if c["status"] in ("active", "competing")]
            pick = rng.random()
            if pick < 0.2 and live:  # the text a live card holds (it takes over)
                other = rng.choice(live)
                fact, sk = other["fact"], other["sk"]
                old = {**old, "subject": other["subject"], "predicate": other["predicate"]}
            elif pick < 0.3:
                fact, sk = old.get("fact", "x"), old["sk"]
            else:
                fact, sk = f"corrected {step} ünïcode", old["sk"]
            model = MODEL if rng.random() < 0.8 else "other"
            plan = correction_plan(
                sk, old["subject"], old["predicate"], fact, actor="ops", model=model
            )
            vector = [rng.uniform(-1, 1) for _ in range(DIM)] if rng.random() < 0.7 else None
            blob = None if vector is None else quantize(vector)
            want, reply = correct_twin(before, card_id, plan, blob, now=now)
            args: list[Any] = [now, card_id, lua_json(plan.as_json(vector=blob is not None))]
            if blob is not None:
                args.append(blob)
            raw = await store.run_script("correct", CHAT, args, scopes=sks)
            got = Outcome.from_reply(orjson.loads(raw))
        assert got == reply
        assert await read_state(cards_redis, keys, CHAT) == want
        seen.add((got.found, got.done, got.created))
    assert {(True, True, False), (True, True, True), (True, False, False)} <= seen
