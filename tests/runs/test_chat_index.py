"""Runs indexed by chat (§14): enqueue adds a run to its chat's index, prune takes
it out, and the one-time backfill over runs written without the index finds what the walk
over every run finds."""

from __future__ import annotations

from typing import Any

import pytest

from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.runs import chat_index as chat_index_module
from memory_worker.runs.chat_index import ChatIndex
from memory_worker.runs.forget import RunForget
from memory_worker.settings import Settings
from tests.support.factories import make_request
from tests.support.runs import done_beside_waiting

T0 = 1_767_225_600_000
CHATS = (-100777, 7001, 7002)


async def _fill(store: RunStore, n: int, *, same_ms: bool = False) -> dict[int, list[str]]:
    """``n`` runs over CHATS (oldest first per chat); ``same_ms`` enqueues them all at T0."""
    runs: dict[int, list[str]] = {c: [] for c in CHATS}
    for i in range(n):
        chat = CHATS[i % len(CHATS)]
        added = await store.enqueue(make_request(chat, hour=i), at_ms=T0 + (0 if same_ms else i))
        assert added.run_id
        runs[chat].append(added.run_id)
    return runs


async def _drop_index(redis: Any, keys: Keys) -> None:
    """As if every run had been written before the index existed."""
    await redis.delete(*[keys.chat_runs(c) for c in CHATS], keys.chat_runs_built)
    await redis.delete(keys.chat_runs_cursor)


async def test_enqueue_adds_the_run_to_its_chats_index(redis: Any, settings: Settings) -> None:
    store = RunStore(redis, settings)
    runs = await _fill(store, 7)
    for chat in CHATS:
        members = await redis.zrange(store.keys.chat_runs(chat), 0, -1, withscores=True)
        assert [(m.decode(), int(s)) for m, s in members] == [
            (rid, int(await redis.hget(store.keys.run(rid), "created_at"))) for rid in runs[chat]
        ]


async def test_until_built_chat_runs_walks_and_after_it_reads_the_index(
    redis: Any, settings: Settings
) -> None:
    store = RunStore(redis, settings)
    runs = await _fill(store, 6)
    forget = RunForget(redis, store.keys, chunk=10)
    assert await forget.index.runs(-100777) is None  # not built: the walk answers
    assert sorted(await forget.chat_runs(-100777)) == sorted(runs[-100777])
    await redis.delete(store.keys.chat_runs(-100777))  # the index alone would now miss them
    assert sorted(await forget.chat_runs(-100777)) == sorted(runs[-100777])
    await redis.set(store.keys.chat_runs_built, "1")
    assert await forget.chat_runs(-100777) == []  # built: only the index is read
    assert await forget.chat_runs(7001) == runs[7001]


async def test_prune_takes_the_run_out_of_its_chats_index(redis: Any, settings: Settings) -> None:
    store, _, waiting = await done_beside_waiting(
        redis, settings, done_chat=7001, waiting_chat=7001, at_ms=T0
    )
    assert await store.prune_finished(at_ms=T0 + 86_400_000 + 10) == 1
    assert [m.decode() for m in await redis.zrange(store.keys.chat_runs(7001), 0, -1)] == [waiting]
    await redis.set(store.keys.chat_runs_built, "1")
    assert await RunForget(redis, store.keys, chunk=10).chat_runs(7001) == [waiting]


async def test_a_run_whose_hash_is_gone_is_not_answered(redis: Any, settings: Settings) -> None:
    store = RunStore(redis, settings)
    runs = await _fill(store, 6)
    await redis.set(store.keys.chat_runs_built, "1")
    await redis.delete(store.keys.run(runs[7001][0]))
    assert await ChatIndex(redis, store.keys).runs(7001) == runs[7001][1:]


@pytest.mark.parametrize(
    ("page", "per_pass", "same_ms"), [(1000, 20_000, False), (2, 3, False), (2, 1, True)]
)
async def test_the_backfill_finds_what_the_walk_finds(
    redis: Any,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    page: int,
    per_pass: int,
    same_ms: bool,
) -> None:
    store = RunStore(redis, settings)
    runs = await _fill(store, 14, same_ms=same_ms)
    forget = RunForget(redis, store.keys, chunk=10)
    walked = {c: sorted(await forget.walk(c)) for c in CHATS}
    await _drop_index(redis, store.keys)
    monkeypatch.setattr(chat_index_module, "_PAGE", page)
    index = ChatIndex(redis, store.keys)
    passes = 0
    while not await index.built():
        await index.backfill(max_runs=per_pass)
        passes += 1
        assert passes <= 20
    if per_pass < 14:
        assert passes > 1  # paced: one pass did not walk every run
    for chat in CHATS:
        assert sorted(await forget.chat_runs(chat)) == walked[chat] == sorted(runs[chat])
    assert await index.backfill(max_runs=per_pass) == 0  # once built, a pass does nothing


async def test_runs_enqueued_or_pruned_during_the_backfill(
    redis: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RunStore(redis, settings)
    runs = await _fill(store, 6)
    await _drop_index(redis, store.keys)
    monkeypatch.setattr(chat_index_module, "_PAGE", 2)
    index = ChatIndex(redis, store.keys)
    await index.backfill(max_runs=2)  # the two oldest runs
    later = (await store.enqueue(make_request(7001, hour=50), at_ms=T0 + 100)).run_id
    gone = runs[7002][1]  # not reached yet; its hash goes (as prune would)
    await redis.delete(store.keys.run(gone))
    await redis.zrem(store.keys.all_runs, gone)
    while not await index.built():
        await index.backfill(max_runs=2)
    assert await index.runs(7001) == [*runs[7001], later]
    assert await index.runs(7002) == [r for r in runs[7002] if r != gone]
    assert not await redis.zscore(store.keys.chat_runs(7002), gone)


async def test_a_fresh_deployment_is_built_at_the_first_pass(
    redis: Any, settings: Settings
) -> None:
    index = ChatIndex(redis, Keys(settings.key_prefix))
    assert await index.backfill(max_runs=10) == 0
    assert await index.built()


async def test_a_run_an_older_enqueuer_wrote_after_the_build_is_indexed_by_the_next_pass(
    redis: Any, settings: Settings
) -> None:
    """A rolling deploy: the index is built, then an enqueuer without the index writes a run."""
    store = RunStore(redis, settings)
    await _fill(store, 4)
    index = ChatIndex(redis, store.keys)
    await index.backfill(max_runs=100)
    assert await index.built()
    late = await store.enqueue(make_request(7001, hour=20), at_ms=T0 + 1000)
    assert late.run_id
    await redis.zrem(store.keys.chat_runs(7001), late.run_id)  # as an old enqueue.lua left it
    assert late.run_id not in (await index.runs(7001) or [])
    assert await index.backfill(max_runs=100) == 1  # the next maintenance pass catches it up
    assert late.run_id in (await index.runs(7001) or [])
