"""DUMP witnesses ("nothing changed, to the byte"): every key of a test's deployment, or
one chat's card-store keys."""

from __future__ import annotations

from typing import Any

from memory_worker.cards import CardStore


async def dump_all(redis: Any, prefix: str) -> dict[bytes, bytes | None]:
    """Every key of this test's deployment (its key prefix) with its DUMP."""
    keys = sorted([k async for k in redis.scan_iter(match=f"*{prefix}*", count=1000)])
    return {k: await redis.dump(k) for k in keys}


async def dump_chat(store: CardStore, chat_id: int) -> dict[str, bytes]:
    """Every card-store key of one chat with its DUMP."""
    return {k: await store.redis.dump(k) for k in await store.chat_keys(chat_id)}
