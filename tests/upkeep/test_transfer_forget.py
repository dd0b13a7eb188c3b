"""A forget racing an export (§13, §14): an export is never read during a forget, so it never
holds a half-forgotten chat — on the queue's server and on the cluster.

A forget held between its mark and its end makes an export refuse (``ForgetPending``); a
forget that begins while an export reads makes it refuse too; a forget whose process died
keeps exports refused until the same scope is forgotten again; and under real concurrency
every export either refused, holds no forgotten text, or was read whole before the forget
began.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.cards import RunWrites
from memory_worker.cards import transfer as transfer_module
from memory_worker.cards.forget import CardForget
from memory_worker.errors import ForgetPending
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, close_cards_client
from tests.support.cards import ALICE, BOB, CHAT, T0, new

CANARY = "Qorvadine"


@pytest.fixture
async def queue(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str
) -> AsyncIterator[MemoryQueue]:
    on_cluster = cards_redis is not redis
    s = settings.model_copy(
        update={"cards_url": cards_url if on_cluster else None, "forget_rewrite_aof": False}
    )
    q = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    try:
        yield q
    finally:
        await close_cards_client(q.cards.redis, redis)


async def remember(q: MemoryQueue, run: str = "r1", at: Any = T0) -> None:
    cards = [
        new(f"Alice loves {CANARY} tea", seed=None, sources=(1,), at=at),
        new("Bob skis", subject="Bob", user=BOB, seed=None, sources=(2,), at=at),
    ]
    writes = RunWrites(observed_at=at, cards=cards, authors=[(1, ALICE), (2, BOB)])
    await q.cards.apply_run(CHAT, run, writes, now=at)


def text(export: Any) -> bytes:
    return b"".join(export.lines())


async def test_an_export_refuses_while_a_forget_is_under_way(
    queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    await remember(queue)
    reached, go = asyncio.Event(), asyncio.Event()
    plain = CardForget.forget_user

    async def held(self: CardForget, *args: Any, **kw: Any) -> Any:
        reached.set()
        await go.wait()
        return await plain(self, *args, **kw)

    monkeypatch.setattr(CardForget, "forget_user", held)
    forgetting = asyncio.create_task(queue.forget(CHAT, ALICE))
    await asyncio.wait_for(reached.wait(), 10)
    with pytest.raises(ForgetPending, match=f"chat {CHAT}"):
        await queue.export(CHAT)
    go.set()
    await asyncio.wait_for(forgetting, 10)
    after = await queue.export(CHAT)
    assert CANARY.encode() not in text(after)
    assert [c.fact_text for c in after.snapshot.cards] == ["Bob skis"]


async def test_a_forget_beginning_during_the_read_refuses_the_export(
    queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    await remember(queue)
    plain = transfer_module._read
    forget_done: list[asyncio.Task[Any]] = []

    async def read_then_forget(store: Any, chat_id: int) -> Any:
        snap = await plain(store, chat_id)
        if not forget_done:  # the forget marks itself between the read and the last check
            forgetter = CardForget(store.redis, queue.keys, chunk=100)
            await forgetter.begin(chat_id, f"user:{ALICE}", 1)
            forget_done.append(asyncio.create_task(queue.forget(CHAT, ALICE)))
        return snap

    monkeypatch.setattr(transfer_module, "_read", read_then_forget)
    with pytest.raises(ForgetPending):
        await queue.export(CHAT)
    await forget_done[0]
    assert CANARY.encode() not in text(await queue.export(CHAT))


async def test_a_forget_that_died_keeps_exports_refused_until_forgotten_again(
    queue: MemoryQueue,
) -> None:
    await remember(queue)
    forgetter = CardForget(queue.cards.redis, queue.keys, chunk=100)
    await forgetter.begin(CHAT, f"user:{ALICE}", int(time.time() * 1000) - 5000)  # then died
    with pytest.raises(ForgetPending):
        await queue.export(CHAT)
    await queue.forget(CHAT, BOB)  # another scope's forget does not stand for it
    with pytest.raises(ForgetPending):
        await queue.export(CHAT)
    await queue.forget(CHAT, ALICE)
    assert CANARY.encode() not in text(await queue.export(CHAT))


async def test_concurrent_exports_and_forgets_never_export_half_forgotten_memory(
    queue: MemoryQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every export either refused, or holds no forgotten text, or made its last check before
    the forget's mark landed (its reads all came before: the memory before the forget)."""
    began: list[float] = []
    plain_begin = CardForget.begin

    async def begin(self: CardForget, *args: Any) -> str:
        token = await plain_begin(self, *args)
        began.append(time.monotonic())  # the mark has landed
        return token

    read_at: list[float] = []
    plain_markers = transfer_module._markers

    async def markers(store: Any, chat_id: int) -> Any:
        read_at.append(time.monotonic())  # sent after this: a mark landed before, it sees
        return await plain_markers(store, chat_id)

    monkeypatch.setattr(CardForget, "begin", begin)
    monkeypatch.setattr(transfer_module, "_markers", markers)
    outcomes: list[str] = []
    for i in range(12):
        await remember(queue, f"r{i}", T0 + timedelta(hours=i))
        began.clear()
        read_at.clear()
        delay = (i % 4) * 0.002
        export: Any
        export, _ = await asyncio.gather(
            _export_after(queue, delay), queue.forget(CHAT, ALICE), return_exceptions=True
        )
        if isinstance(export, ForgetPending):
            outcomes.append("refused")
        elif isinstance(export, BaseException):
            raise export
        elif CANARY.encode() in text(export):
            assert read_at[-1] < began[0], "an export holding forgotten text read during it"
            outcomes.append("before")
        else:
            outcomes.append("after")
    assert set(outcomes) - {"refused", "before", "after"} == set()


async def _export_after(queue: MemoryQueue, delay: float) -> Any:
    await asyncio.sleep(delay)
    return await queue.export(CHAT)
