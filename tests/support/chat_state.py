"""A chat's card keys read from Redis as a :class:`~memory_worker.cards.chat_state.ChatState`
(the twins' input and output), for the script-equivalence suites."""

from __future__ import annotations

from typing import Any

import orjson

from llm_client import as_text
from memory_worker.cards.chat_state import ChatState
from memory_worker.keys import Keys


async def read_state(redis: Any, keys: Keys, chat_id: int) -> ChatState:
    """Every key the operator scripts touch, as values (scopes' zsets by the ``scopes`` set)."""
    k = keys.chat

    def text_hash(raw: dict[Any, Any]) -> dict[str, str]:
        return {as_text(f): as_text(v) for f, v in raw.items()}

    cards = await redis.hgetall(k(chat_id, "cards"))
    scopes = {as_text(s) for s in await redis.smembers(k(chat_id, "scopes"))}
    active: dict[str, dict[str, float]] = {}
    for sk in sorted(scopes):
        members = await redis.zrange(k(chat_id, f"active:{sk}"), 0, -1, withscores=True)
        if members:
            active[sk] = {as_text(m): float(s) for m, s in members}
    expiry = await redis.zrange(k(chat_id, "expiry"), 0, -1, withscores=True)
    runs = await redis.zrange(k(chat_id, "episodes"), 0, -1, withscores=True)
    episodes = {}
    for run, _ in runs:
        raw = await redis.hgetall(k(chat_id, f"episode:{as_text(run)}"))
        episodes[as_text(run)] = {as_text(f): bytes(v) for f, v in raw.items()}
    return ChatState(
        cards={as_text(i): orjson.loads(v) for i, v in cards.items()},
        seq=int(await redis.get(k(chat_id, "seq")) or 0),
        dedup=text_hash(await redis.hgetall(k(chat_id, "dedup"))),
        scopes=scopes,
        active=active,
        expiry={as_text(m): float(s) for m, s in expiry},
        retracted=text_hash(await redis.hgetall(k(chat_id, "retracted"))),
        vecids=[as_text(v) for v in await redis.lrange(k(chat_id, "vecids"), 0, -1)],
        vec=await redis.get(k(chat_id, "vec")) or b"",
        vecmask=await redis.get(k(chat_id, "vecmask")) or b"",
        vecver=int(await redis.get(k(chat_id, "vecver")) or 0),
        vecrw=int(await redis.get(k(chat_id, "vecrw")) or 0),
        meta=text_hash(await redis.hgetall(k(chat_id, "meta"))),
        links=text_hash(await redis.hgetall(k(chat_id, "links"))),
        authors=text_hash(await redis.hgetall(k(chat_id, "authors"))),
        episodes=episodes,
        episode_index={as_text(m): float(s) for m, s in runs},
        forget=int(await redis.get(k(chat_id, "forget")) or 0),
        forgetting=text_hash(await redis.hgetall(k(chat_id, "forgetting"))),
        history={
            as_text(i): [orjson.loads(line) for line in bytes(v).splitlines()]
            for i, v in (await redis.hgetall(k(chat_id, "history"))).items()
        },
        vecwait={
            as_text(m): float(s)
            for m, s in await redis.zrange(k(chat_id, "vecwait"), 0, -1, withscores=True)
        },
    )
