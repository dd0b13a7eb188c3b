"""Forget (§14) with the card store on a Valkey Cluster (§2, §14).

The queue stays on the session's standalone server, the cards live on the 3-master,
3-replica cluster (``MEMORY_CARDS_URL``). "Every key of the deployment" is every key of
the test's prefix on the queue's server and on every node of the cluster — replicas
included (read once each has caught up with its master), values read by type.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore
from memory_worker.cards.forget import KEPT_SUFFIXES, CardForget
from memory_worker.cards.writes import RunWrites
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, close_cards_client
from tests.support.cluster import PASSWORD, LocalCluster, Node
from tests.support.farm import Farm
from tests.support.forget import (
    ALICE,
    BOB,
    CANARY,
    CHAT,
    JAN,
    deployment_bytes,
    process_one,
    two_users,
)
from tests.support.forget_cards import DIM, new_card
from tests.support.replies import command

# --- every node of the cluster ----------------------------------------------------------------


async def _offset(client: Redis, field: str) -> int:
    return int((await client.info("replication")).get(field, 0))


async def _caught_up(node: Node, replica: Redis) -> None:
    """Wait until ``replica`` applied everything its master had written when asked."""
    info = await replica.info("replication")
    master = Redis(host=str(info["master_host"]), port=int(info["master_port"]), password=PASSWORD)
    try:
        target = await _offset(master, "master_repl_offset")
        for _ in range(400):
            if await _offset(replica, "slave_repl_offset") >= target:
                return
            await asyncio.sleep(0.025)
        raise AssertionError(f"replica {node.port} did not catch up with its master")
    finally:
        await master.aclose()


async def every_node_bytes(cluster: LocalCluster, prefix: str) -> list[bytes]:
    """Key names and values of ``prefix`` on each live node, replicas included."""
    out: list[bytes] = []
    for node in cluster.nodes:
        if not node.alive:
            continue
        client = Redis(
            host="127.0.0.1", port=node.port, password=PASSWORD, single_connection_client=True
        )
        try:
            if (await client.info("replication")).get("role") == "slave":
                await _caught_up(node, client)
                await command(client, "READONLY")  # values readable on a replica
            out.append(await deployment_bytes(client, prefix))
        finally:
            await client.aclose()
    return out


@pytest.fixture
async def cluster_queue(
    settings: Settings, redis: Any, valkey_cluster: LocalCluster, key_prefix: str
) -> AsyncIterator[MemoryQueue]:
    """A queue on the standalone server whose card store is the cluster."""
    s = settings.model_copy(update={"cards_url": valkey_cluster.url, "forget_rewrite_aof": False})
    q = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    try:
        yield q
    finally:
        cards = q.cards.redis
        for key in [k async for k in cards.scan_iter(match=f"*{key_prefix}*", count=1000)]:
            await cards.delete(key)
        await close_cards_client(cards, redis)


async def test_forget_a_user_then_the_chat_leaves_no_byte_on_any_node(
    cluster_queue: MemoryQueue,
    redis: Any,
    valkey_cluster: LocalCluster,
    farm: Farm,
    key_prefix: str,
) -> None:
    q = cluster_queue
    assert isinstance(q.cards.redis, RedisCluster)
    store = RunStore(redis, q.settings)
    for day, first in ((10, 1), (11, 10)):
        await store.enqueue(two_users(JAN.replace(day=day), first))
        assert await process_one(store, q.cards, farm, q.settings) is not None
    await store.enqueue(two_users(JAN.replace(day=12), 20))  # left queued

    async def everywhere() -> bytes:
        nodes = await every_node_bytes(valkey_cluster, key_prefix)
        return b"\n".join([await deployment_bytes(redis, key_prefix), *nodes])

    before = await everywhere()
    assert CANARY[ALICE].encode() in before
    assert CANARY[BOB].encode() in before
    holders = [
        n for n in await every_node_bytes(valkey_cluster, key_prefix) if CANARY[BOB].encode() in n
    ]
    assert len(holders) == 2  # the chat's master and its replica: both are read
    cards_key = Keys(key_prefix).chat(CHAT, "cards").encode()
    assert not await redis.exists(cards_key)  # the cards are on the cluster, not the queue's
    assert await q.cards.redis.exists(cards_key)

    user = await q.forget(CHAT, ALICE)
    after = await everywhere()
    assert CANARY[ALICE].encode() not in after
    assert CANARY[BOB].encode() in after
    assert user.cards >= 2
    assert user.vectors == user.cards
    assert (user.runs, user.messages) == (1, 2)
    left = await q.cards.all_cards(CHAT)
    assert left
    assert all(c.user_id != ALICE for c in left)
    # the matrix was compacted: Bob's card still found by meaning, no zeroed tail left
    bob = next(c for c in left if CANARY[BOB] in c.fact_text)
    query = (await farm.embedder([bob.fact_text], idempotency_key="q", timeout=5))[0]
    assert (await q.cards.similar_cards(CHAT, query, 1, now=JAN.replace(day=13)))[0][0].id == bob.id
    k = Keys(key_prefix)
    dim = int(await q.cards.redis.hget(k.chat(CHAT, "meta"), "dim"))
    rows = int(await q.cards.redis.llen(k.chat(CHAT, "vecids")))
    assert int(await q.cards.redis.strlen(k.chat(CHAT, "vec"))) == rows * dim

    chat = await q.forget(CHAT)
    after = await everywhere()
    assert CANARY[ALICE].encode() not in after
    assert CANARY[BOB].encode() not in after
    assert chat.cards >= 1
    assert await q.cards.all_cards(CHAT) == []
    assert await q.cards.similar_cards(CHAT, query, 1) == []
    base = k.chat(CHAT, "")
    kept = {key.decode()[len(base) :] async for key in q.cards.redis.scan_iter(match=f"*{CHAT}*")}
    assert kept <= KEPT_SUFFIXES


async def test_a_trim_refuses_rows_that_changed_after_it_read_them(
    cards_redis: Any, key_prefix: str
) -> None:
    """The compare-and-set of ``forget_trim.lua``: a card write between the read and the
    set keeps its row; the next trim cuts what is left (standalone and cluster)."""
    keys = Keys(key_prefix)
    rng = random.Random(3)
    store = CardStore(cards_redis, keys)
    written = [new_card(i, rng) for i in range(25)]  # user 1: cards 0, 12, 24
    await store.apply_run(CHAT, "r1", RunWrites(observed_at=JAN, cards=written), now=JAN)
    forget = CardForget(cards_redis, keys, chunk=4)
    trims: list[int] = []

    async def counted(chat_id: int) -> bool:
        trims.append(chat_id)
        return True

    forget.trim_vectors = counted  # type: ignore[method-assign]  # leave the zeroed tail
    counts = await forget.forget_user(CHAT, 1, await forget.plan_user(CHAT, 1))
    assert counts.vectors >= 2
    assert trims == [CHAT]
    del forget.trim_vectors
    vec, vecids = keys.chat(CHAT, "vec"), keys.chat(CHAT, "vecids")
    cut = await forget.read_trim(CHAT)
    assert cut is not None
    assert len(cut.rows) == int(await cards_redis.llen(vecids)) * DIM

    late = JAN + timedelta(hours=1)
    extra = new_card(40, rng)  # a card with a vector, written between the read and the set
    await store.apply_run(CHAT, "r2", RunWrites(observed_at=late, cards=[extra]), now=late)
    size = int(await cards_redis.strlen(vec))
    assert not await forget.set_trim(CHAT, cut)
    assert int(await cards_redis.strlen(vec)) == size  # refused: nothing written

    assert await forget.trim_vectors(CHAT)
    assert int(await cards_redis.strlen(vec)) == int(await cards_redis.llen(vecids)) * DIM
    assert extra.embedding is not None
    near = await store.similar_cards(CHAT, extra.embedding, 1, now=late)
    assert near[0][0].fact_text == extra.fact_text
    assert await forget.read_trim(CHAT) is None  # nothing left to cut


def _chats_on_every_master(cluster: LocalCluster, keys: Keys) -> list[int]:
    """One chat id whose hash tag lands on each master of the cluster."""
    found: dict[int, int] = {}
    for chat_id in range(1, 10_000):
        tag = keys.chat_tag(chat_id)[1:-1]
        port = cluster.master_of_slot(key_slot(tag.encode())).port
        found.setdefault(port, chat_id)
        if len(found) == cluster.masters:
            return list(found.values())
    raise AssertionError("no chat id for some master")


async def test_a_chat_forget_finds_and_unlinks_its_keys_on_whichever_master_holds_them(
    valkey_cluster: LocalCluster, cards_redis: Any, key_prefix: str
) -> None:
    if not isinstance(cards_redis, RedisCluster):
        pytest.skip("the cluster's masters")
    keys = Keys(key_prefix)
    chats = _chats_on_every_master(valkey_cluster, keys)
    store = CardStore(cards_redis, keys)
    rng = random.Random(5)
    for chat_id in chats:
        cards = [new_card(i, rng) for i in range(3)]
        await store.apply_run(chat_id, "r1", RunWrites(observed_at=JAN, cards=cards), now=JAN)
    forget = CardForget(cards_redis, keys, chunk=2)  # several UNLINK chunks a chat
    for chat_id in chats:
        found = await forget.chat_keys(chat_id)
        assert keys.chat(chat_id, "cards") in found
        assert keys.chat(chat_id, "vec") in found
        await forget.forget_chat(chat_id)
        base = keys.chat(chat_id, "")
        assert {k[len(base) :] for k in await forget.chat_keys(chat_id)} <= KEPT_SUFFIXES
        assert await store.all_cards(chat_id) == []


async def _aof_rewrites(cluster: LocalCluster) -> list[int]:
    counts = []
    for node in cluster.nodes:
        client = Redis(host="127.0.0.1", port=node.port, password=PASSWORD)
        try:
            counts.append(int((await client.info("persistence")).get("aof_rewrites", 0)))
        finally:
            await client.aclose()
    return counts


async def test_the_cli_forgets_on_the_cluster_and_rewrites_every_nodes_file(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str, key_prefix: str,
    valkey_cluster: LocalCluster,
) -> None:  # fmt: skip
    """``memory-worker forget`` with ``MEMORY_CARDS_URL`` set takes the cards from there."""
    if not isinstance(cards_redis, RedisCluster):
        pytest.skip("MEMORY_CARDS_URL is the cluster")
    from tests.support.cards import new
    from tests.support.harness import cli

    store = CardStore(cards_redis, Keys(key_prefix))
    alice = new(f"Alice lives in {CANARY[ALICE]}", user=ALICE, obj=CANARY[ALICE])
    bob = new(f"Bob lives in {CANARY[BOB]}", user=BOB, subject="Bob", obj=CANARY[BOB], seed=2)
    await store.apply_run(CHAT, "r1", RunWrites(observed_at=JAN, cards=[alice, bob]), now=JAN)
    await RunStore(redis, settings).enqueue(two_users(JAN, 1))
    rewrites = await _aof_rewrites(valkey_cluster)

    done = cli(
        settings, "forget", "--chat", str(CHAT), "--user", str(ALICE), "--yes", "--json",
        MEMORY_CARDS_URL=cards_url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["cards"], result["vectors"], result["messages"]) == (1, 1, 2)
    assert [c.fact_text for c in await store.all_cards(CHAT)] == [bob.fact_text]
    nodes = b"\n".join(await every_node_bytes(valkey_cluster, key_prefix))
    assert CANARY[ALICE].encode() not in nodes
    assert CANARY[ALICE].encode() not in await deployment_bytes(redis, key_prefix)
    # the forget asks each node for a background rewrite; a loaded host may take a while to
    # finish one, and the count moves when it does
    deadline = asyncio.get_running_loop().time() + 30.0
    while True:
        after = await _aof_rewrites(valkey_cluster)
        done_everywhere = all(a > b for a, b in zip(after, rewrites, strict=True))
        if done_everywhere or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.2)
    assert done_everywhere, (rewrites, after)
