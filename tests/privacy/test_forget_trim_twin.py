"""``cards/lua/forget_trim.lua`` and ``forget_unlink.lua`` against their Python twins
(``forget.trim_set``, ``forget.unlink_chunk``), random sequences, standalone and cluster.

Random card writes and forgets (the real scripts) build the states; between them a trim
read early — stale when a write came after it — or fresh is set through the script and
through the twin, and the stored strings and counters must be the twin's. Then random
chunks of the chat's key names (some already gone) are unlinked through both.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from memory_worker.cards import CardStore
from memory_worker.cards.forget import KEPT_SUFFIXES, CardForget
from memory_worker.cards.writes import RunWrites
from memory_worker.keys import Keys
from memory_worker.privacy.forget import PackedStrings, trim_set, unlink_chunk
from tests.support.forget import JAN
from tests.support.forget_cards import CHAT, new_card


async def stored(redis: Any, keys: Keys) -> PackedStrings:
    k = keys.chat
    return PackedStrings(
        vec=await redis.get(k(CHAT, "vec")) or b"",
        mask=await redis.get(k(CHAT, "vecmask")) or b"",
        rows=int(await redis.llen(k(CHAT, "vecids"))),
        version=int(await redis.get(k(CHAT, "vecver")) or 0),
        rewrites=int(await redis.get(k(CHAT, "vecrw")) or 0),
    )


async def untrimmed_forget(forget: CardForget, user: int) -> None:
    """Forget ``user`` leaving the zeroed tail (the trim is what is under test)."""

    async def keep(chat_id: int) -> bool:
        return True

    forget.trim_vectors = keep  # type: ignore[method-assign]
    try:
        await forget.forget_user(CHAT, user, await forget.plan_user(CHAT, user))
    finally:
        del forget.trim_vectors


@pytest.mark.parametrize("seed", range(4))
async def test_trim_and_unlink_scripts_match_their_twins(
    cards_redis: Any, key_prefix: str, seed: int
) -> None:
    rng = random.Random(seed)
    keys = Keys(key_prefix)
    store = CardStore(cards_redis, keys)
    forget = CardForget(cards_redis, keys, chunk=rng.choice([2, 5, 50]))
    at, n, outcomes = JAN, 0, []
    for _ in range(8):
        batch = [new_card(n + i, rng) for i in range(rng.randint(1, 12))]
        n += len(batch)
        at += timedelta(minutes=1)
        await store.apply_run(CHAT, f"r{n}", RunWrites(observed_at=at, cards=batch), now=at)
        await untrimmed_forget(forget, rng.randint(1, 3))
        early = await forget.read_trim(CHAT)
        if rng.random() < 0.5:  # a write between the read and the set: the cut is stale
            late = [new_card(n, rng)]
            n += 1
            at += timedelta(minutes=1)
            await store.apply_run(CHAT, f"r{n}", RunWrites(observed_at=at, cards=late), now=at)
        if early is None:
            continue
        before = await stored(cards_redis, keys)
        want, ok = trim_set(before, early.version, early.count, early.rows, early.mask)
        assert await forget.set_trim(CHAT, early) is ok
        assert await stored(cards_redis, keys) == want
        assert not [k for k in await forget.chat_keys(CHAT) if ":vecnext:" in k]  # swapped/dropped
        outcomes.append(ok)
    assert True in outcomes

    base = keys.chat(CHAT, "")
    existing = {k for k in await forget.chat_keys(CHAT) if k[len(base) :] not in KEPT_SUFFIXES}
    names = sorted(existing | {keys.chat(CHAT, "nothing-here")})
    while existing:
        doomed = rng.sample(names, rng.randint(1, min(4, len(names))))
        state = await stored(cards_redis, keys)
        want_left, want_counters, want_gone = unlink_chunk(
            existing, (state.version, state.rewrites), doomed
        )
        gone = await forget._unlink(CHAT, doomed)
        after = await stored(cards_redis, keys)
        left = {k for k in await forget.chat_keys(CHAT) if k[len(base) :] not in KEPT_SUFFIXES}
        assert left == want_left
        assert (after.version, after.rewrites) == want_counters
        assert gone == want_gone
        existing = left
