"""Forget rewrites the append-only file (§14): the canary leaves the server's disk too.

A private embedded Valkey (its own data directory). The AOF base is written as
plain commands (``aof-use-rdb-preamble no``) so a canary would be visible in it:
the other user's canary found there after the rewrite shows the scan can see one.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from tests.support.farm import farm_for
from tests.support.forget import ALICE, BOB, CANARY, CHAT, JAN, process_one, two_users


def disk_bytes(data_dir: Path) -> bytes:
    """Every persistence file of the server (its log excluded).

    The server renames and deletes its ``temp-rewriteaof-*`` files while a
    rewrite runs, so a file listed here may be gone when it is read: a file
    that vanished holds nothing any more and is skipped (the clean-clone CI
    run hit exactly that race).
    """
    chunks: list[bytes] = []
    for path in data_dir.rglob("*"):
        if path.suffix in (".log", ".sock"):  # the server's log; its socket (no bytes on disk)
            continue
        try:
            chunks.append(path.read_bytes())
        except (FileNotFoundError, IsADirectoryError):
            continue
    return b"".join(chunks)


async def rewrite_settled(client: Any) -> bool:
    info = await client.info("persistence")
    return not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]


@pytest.fixture
async def private(
    private_valkey: EmbeddedValkey, tmp_path: Path
) -> AsyncIterator[tuple[Settings, Any]]:
    client = client_from_url(private_valkey.url)
    await client.config_set("aof-use-rdb-preamble", "no")
    settings = Settings(
        redis_url=private_valkey.url, key_prefix=f"a{uuid.uuid4().hex[:8]}:", data_dir=tmp_path
    )
    try:
        yield settings, client
    finally:
        await client.config_set("aof-use-rdb-preamble", "yes")
        await client.aclose()


async def test_forget_rewrites_the_aof_and_the_canary_leaves_the_disk(
    private_valkey: EmbeddedValkey, private: tuple[Settings, Any]
) -> None:
    settings, client = private
    store = RunStore(client, settings)
    cards = CardStore(client, Keys(settings.key_prefix))
    async with farm_for(settings) as farm:
        await store.enqueue(two_users(JAN, 1))
        assert await process_one(store, cards, farm, settings) is not None
    await store.enqueue(two_users(JAN.replace(day=11), 10))  # left queued
    assert CANARY[ALICE].encode() in disk_bytes(private_valkey.data_dir)

    queue = MemoryQueue(RedisHandle(client, reveal(settings.redis_url) or ""), settings)
    await queue.forget(CHAT, ALICE)

    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    while CANARY[ALICE].encode() in disk_bytes(
        private_valkey.data_dir
    ) or not await rewrite_settled(client):
        assert loop.time() < end, "the forgotten canary is still on disk"
        await asyncio.sleep(0.05)
    assert CANARY[BOB].encode() in disk_bytes(private_valkey.data_dir)
