"""The card store through cluster operations (§2: slot moves, failover), on a private cluster.

- **Slot migration under load**: while 50 chats' runs are applied, the slot of the
  busiest chat moves to another master by the real ``CLUSTER SETSLOT … IMPORTING /
  MIGRATING`` + ``MIGRATE`` dance (twice: there and back). Scripts that meet ``ASK`` or
  ``TRYAGAIN`` are redirected / retried (redis-py, then the worker's store-write retry).
  Afterwards every chat's cards, links and episodes equal a reference applied on a
  plain server: nothing lost, nothing duplicated.
- **Failover**: a chat's master is killed right after runs "completed" (their
  ``apply_run`` returned, which with replicas includes ``WAIT`` for one); the replica is
  promoted, writes resume, and every completed run's cards are there.

Writers here are the worker's own write path (``retry_store_write`` around
``CardStore.apply_run``), one task per chat applying its runs in order, so the
reference is exact (card ids included).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis as sync_redis

from memory_worker.cards import (
    CardStore,
    EpisodeWrite,
    LinkWrite,
    ResolutionOp,
    ResolutionWrite,
    RunWrites,
    Scope,
)
from memory_worker.keys import Keys
from memory_worker.storage.connections import client_from_url, cluster_from_url, retry_store_write
from tests.support.cards import T0, new
from tests.support.cluster import PASSWORD, LocalCluster, Node, revive
from tests.support.logs import capture_logs
from tests.support.replies import sync_answer, sync_command

# one module cluster, used in order: a test moves slots, the next kills a master
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("cluster-ops")]

CHATS = 50
BUSY = 7  # the chat whose slot moves
RUNS = 3  # runs of every other chat
BUSY_RUNS = 40


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A cluster of this module's own: its tests move slots and kill masters."""
    local = LocalCluster(tmp_path_factory.mktemp("ops-cluster"), node_timeout_ms=1000)
    try:
        yield local.start()
    finally:
        local.stop()


@pytest.fixture
async def cluster_client(cluster: LocalCluster) -> AsyncIterator[Any]:
    async with cluster_from_url(cluster.url) as client:
        yield client


def run_writes(chat: int, run: int) -> RunWrites:
    """Run ``run`` of ``chat``: new facts in several scopes, a repeat, a supersede, a link."""
    user = 100 + chat % 3
    cards = [
        new(f"c{chat} r{run} chat fact", scope=Scope.CHAT, predicate=f"p{run}", seed=run),
        new(f"c{chat} r{run} user fact", user=user, predicate=f"u{run}", seed=50 + run),
        new(
            f"c{chat} r{run} thread fact",
            scope=Scope.THREAD,
            thread=run % 4,
            predicate=f"t{run}",
            seed=90 + run,
        ),
        new("a fact every run repeats", scope=Scope.CHAT, predicate="always", seed=7),
    ]
    resolutions = []
    if run >= 2:  # the chat fact of two runs ago (ids: run 0 → 1..4, then 3 a run) goes
        old = 1 if run == 2 else 5 + 3 * (run - 3)
        resolutions.append(ResolutionWrite(str(old), ResolutionOp.SUPERSEDE, 0))
    episode = EpisodeWrite(
        summary=f"run {run}",
        topics=["t"],
        participants=["a"],
        range_start=T0,
        range_end=T0,
        thread_id=0,
        message_count=3,
    )
    return RunWrites(
        observed_at=T0,
        cards=cards,
        resolutions=resolutions,
        links=[LinkWrite(0, 1, "about", 0.5)],
        episode=episode,
    )


def plan() -> dict[int, int]:
    return {chat: BUSY_RUNS if chat == BUSY else RUNS for chat in range(CHATS)}


async def apply_all(
    store: CardStore, runs: dict[int, int], *, on_apply: Any = None, pause: float = 0.0
) -> None:
    async def chat_writer(chat: int) -> None:
        for run in range(runs[chat]):
            write = run_writes(chat, run)
            started = time.monotonic()
            await retry_store_write(
                "cards",
                functools.partial(store.apply_run, chat, f"c{chat}-r{run}", write, now=T0),
                cap=0.2,
            )
            if on_apply is not None:
                on_apply(chat, started)
            if pause:
                await asyncio.sleep(pause)

    await asyncio.gather(*(chat_writer(chat) for chat in runs))


async def snapshot(store: CardStore, chats: list[int]) -> dict[int, Any]:
    return {
        chat: (
            [c.model_dump() for c in await store.all_cards(chat)],
            await store.links(chat),
            [e.model_dump() for e in await store.episodes(chat, limit=1000)],
        )
        for chat in chats
    }


async def reference(redis_url: str, key_prefix: str, runs: dict[int, int]) -> dict[int, Any]:
    client = client_from_url(redis_url)
    keys = Keys(key_prefix + "ref:")
    try:
        store = CardStore(client, keys)
        await apply_all(store, runs)
        return await snapshot(store, sorted(runs))
    finally:
        async for key in client.scan_iter(match=f"*{key_prefix}ref:*", count=1000):
            await client.delete(key)
        await client.aclose()


def migrate_slot(cluster: LocalCluster, slot: int, target: Node, moved: threading.Event) -> None:
    """Move ``slot`` to ``target`` with SETSLOT IMPORTING/MIGRATING and MIGRATE, in batches."""
    source = cluster.master_of_slot(slot)
    assert source is not target
    src, dst = source.client(timeout=30), target.client(timeout=30)  # a loaded host stalls
    sync_command(dst, "CLUSTER SETSLOT", slot, "IMPORTING", source.node_id)
    sync_command(src, "CLUSTER SETSLOT", slot, "MIGRATING", target.node_id)
    batches = 0
    while True:
        keys = sync_command(src, "CLUSTER GETKEYSINSLOT", slot, 3)
        if not keys:
            break
        sync_command(
            src, "MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "AUTH", PASSWORD, "KEYS", *keys
        )
        batches += 1
        time.sleep(0.02)  # let writers meet the half-moved slot
    for node in cluster.current_masters():
        sync_command(node.client(), "CLUSTER SETSLOT", slot, "NODE", target.node_id)
    assert batches > 1
    moved.set()


def redirects(cluster: LocalCluster) -> dict[str, int]:
    """ASK / TRYAGAIN / MOVED replies the masters sent so far (INFO errorstats)."""
    seen = {"ASK": 0, "TRYAGAIN": 0, "MOVED": 0}
    for node in cluster.nodes:
        if node.alive:
            stats = sync_answer(node.client().info("errorstats"))
            for name in seen:
                seen[name] += int(stats.get(f"errorstat_{name}", {}).get("count", 0))
    return seen


def slot_of(cluster: LocalCluster, key: str) -> int:
    return int(sync_command(cluster.nodes[0].client(), "CLUSTER KEYSLOT", key))


async def test_a_busy_chats_slot_moves_under_load_and_no_card_is_lost_or_doubled(
    cluster: LocalCluster, cluster_client: Any, redis_url: str, key_prefix: str
) -> None:
    runs = plan()
    expected = await reference(redis_url, key_prefix, runs)
    keys = Keys(key_prefix)
    store = CardStore(cluster_client, keys)
    slot = slot_of(cluster, keys.chat_tag(BUSY))
    home = cluster.master_of_slot(slot)
    away = next(n for n in cluster.current_masters() if n is not home)
    applied: list[tuple[int, float]] = []
    there, back = threading.Event(), threading.Event()
    moving: list[tuple[float, float]] = []

    async def mover() -> None:
        while len([c for c, _ in applied if c == BUSY]) < 5:  # the chat is busy by now
            await asyncio.sleep(0.01)
        for target, done in ((away, there), (home, back)):
            start = time.monotonic()
            await asyncio.to_thread(migrate_slot, cluster, slot, target, done)
            moving.append((start, time.monotonic()))

    def record(chat: int, started: float) -> None:
        applied.append((chat, started))

    before = redirects(cluster)
    await asyncio.gather(apply_all(store, runs, on_apply=record, pause=0.01), mover())
    after = redirects(cluster)
    met = {name: after[name] - before[name] for name in after}
    assert met["ASK"] + met["TRYAGAIN"] > 0, met  # scripts met the half-moved slot
    assert there.is_set()
    assert back.is_set()
    assert cluster.master_of_slot(slot) is home
    busy = [at for chat, at in applied if chat == BUSY]
    # the busy chat wrote before, during (the TRYAGAINs above) and after the moves
    assert busy[0] < moving[0][0]
    assert busy[-1] > moving[-1][1]
    assert await snapshot(store, sorted(runs)) == expected
    print("redirects met during the moves:", met)
    async for key in cluster_client.scan_iter(match=f"*{key_prefix}*", count=1000):
        await cluster_client.delete(key)


async def wait_promoted(cluster: LocalCluster, slot: int, dead: Node) -> Node:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(LookupError, sync_redis.RedisError):
            master = cluster.master_of_slot(slot)
            if master is not dead and master.alive and cluster.state_ok(master):
                return master
        await asyncio.sleep(0.1)
    raise AssertionError("no replica promoted")


async def test_a_master_killed_right_after_completions_keeps_every_completed_runs_cards(
    cluster: LocalCluster, cluster_client: Any, redis_url: str, key_prefix: str
) -> None:
    runs = {chat: 12 if chat == BUSY else RUNS for chat in range(20)}
    expected = await reference(redis_url, key_prefix, runs)
    keys = Keys(key_prefix)
    store = CardStore(cluster_client, keys, wait_replicas=1, wait_timeout_ms=2000)
    slot = slot_of(cluster, keys.chat_tag(BUSY))
    victim = cluster.master_of_slot(slot)
    completed: list[tuple[int, str]] = []

    def complete(chat: int, _: float) -> None:
        # "the run is marked completed" the moment apply_run returned
        done = [c for c, _ in completed if c == BUSY]
        completed.append((chat, f"c{chat}-r{len([c for c, _ in completed if c == chat])}"))
        if chat == BUSY and len(done) + 1 == 4:
            cluster.kill(victim)  # kill -9 right after a completion

    with capture_logs() as logs:
        await apply_all(store, runs, on_apply=complete)
    promoted = await wait_promoted(cluster, slot, victim)
    assert promoted is not victim
    for chat, run_id in completed:
        assert await store.has_applied(chat, run_id), run_id
    assert await snapshot(store, sorted(runs)) == expected
    # the promoted master has no replica: its writes went on without waiting (logged)
    assert any(e["event"] == "cards.write_not_replicated" for e in logs)
    revive(cluster, victim)
    assert cluster.role_of(victim) == "slave"
    async for key in cluster_client.scan_iter(match=f"*{key_prefix}*", count=1000):
        await cluster_client.delete(key)
