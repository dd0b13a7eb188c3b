"""The card store on a Valkey Cluster (§2): MEMORY_CARDS_URL, end to end.

The queue stays on ``REDIS_URL``; with ``MEMORY_CARDS_URL=redis+cluster://…`` the worker's
card writes, the bot's reads and the console's memory pages go to the cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from redis.asyncio.cluster import RedisCluster

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore, RunWrites
from memory_worker.cards.replication import replicas_present
from memory_worker.errors import EvictionPolicyError, RedisUrlError
from memory_worker.farmsim import FarmSimulator
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.storage.checks import check_cards_redis
from memory_worker.storage.connections import (
    RedisHandle,
    cards_client,
    close_cards_client,
    cluster_from_url,
    is_cluster_url,
    parse_cluster_url,
)
from tests.support.cards import T0, new
from tests.support.cluster import LocalCluster
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually
from tests.support.logs import capture_logs


def test_cluster_urls_name_seed_nodes_credentials_and_tls() -> None:
    spec = parse_cluster_url("redis+cluster://u%40x:p%3Aw@10.0.0.1:7000,10.0.0.2:7001/")
    assert spec.nodes == [("10.0.0.1", 7000), ("10.0.0.2", 7001)]
    assert (spec.username, spec.password, spec.ssl) == ("u@x", "p:w", False)
    only_password = parse_cluster_url("rediss+cluster://:secret@h:6380")
    assert (only_password.username, only_password.password) == (None, "secret")
    assert only_password.ssl
    assert parse_cluster_url("redis+cluster://h").nodes == [("h", 6379)]
    with pytest.raises(RedisUrlError):
        parse_cluster_url("redis+cluster://")
    with pytest.raises(RedisUrlError):
        parse_cluster_url("redis+cluster://h:port")
    assert is_cluster_url("redis+cluster://h:1")
    assert not is_cluster_url("redis://h:1")
    assert not is_cluster_url(None)


async def test_unset_cards_url_is_the_queue_client_and_a_cluster_url_a_cluster_client(
    settings: Settings, redis: Any
) -> None:
    assert cards_client(settings, redis) is redis
    await close_cards_client(redis, redis)  # never closes the queue's own
    assert await redis.ping()
    on_cluster = settings.model_copy(update={"cards_url": "redis+cluster://:pw@127.0.0.1:1"})
    client = cards_client(on_cluster, redis)
    assert isinstance(client, RedisCluster)
    await close_cards_client(client, redis)


@pytest.fixture
def on_cluster(settings: Settings, valkey_cluster: LocalCluster) -> Settings:
    return settings.model_copy(update={"cards_url": valkey_cluster.url})


async def test_a_fleet_writes_cards_to_the_cluster_and_the_bot_reads_them_there(
    on_cluster: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    runs = RunStore(redis, on_cluster)
    chats = list(range(1, 7))
    ids = {chat: (await runs.enqueue(make_request(chat, hour=chat))).run_id for chat in chats}
    fleet = Fleet(
        on_cluster,
        tmp_path,
        {"discovery_base_url": sim.base_url, "cards_url": on_cluster.cards_url},
    )
    fleet.start(2)
    queue = MemoryQueue(RedisHandle(redis, ""), on_cluster)
    try:
        await queue.wake()

        async def done() -> bool:
            return (await runs.counts())["completed"] == len(chats)

        await eventually(done, timeout=60)
        assert isinstance(queue.cards.redis, RedisCluster)
        for chat in chats:
            assert await queue.cards.all_cards(chat), fleet.logs()
            assert await queue.cards.has_applied(chat, ids[chat] or "")
        # nothing of the chats' memory on the queue's server
        tag = Keys(on_cluster.key_prefix).chat_tag(chats[0])
        assert [k async for k in redis.scan_iter(match=f"*{tag[1:-1]}*")] == []
    finally:
        fleet.stop_all()
        await drop_prefix(queue.cards.redis, on_cluster.key_prefix)
        await close_cards_client(queue.cards.redis, redis)


async def drop_prefix(client: Any, prefix: str) -> None:
    for key in [k async for k in client.scan_iter(match=f"*{prefix}*", count=1000)]:
        await client.delete(key)


async def test_a_run_write_waits_for_a_replica_and_goes_on_without_one(
    redis: Any, valkey_cluster: LocalCluster, key_prefix: str
) -> None:
    """With replicas (the cluster) the write is acknowledged; with none (the plain test
    server) it is kept, logged once, and that server is not waited on again for a while."""
    writes = RunWrites(observed_at=T0, cards=[new("tea")])
    cluster = cluster_from_url(valkey_cluster.url)
    try:
        assert await replicas_present(cluster)
        store = CardStore(cluster, Keys(key_prefix), wait_replicas=1, wait_timeout_ms=5000)
        with capture_logs() as logs:
            assert (await store.apply_run(1, "r1", writes, now=T0)).inserted == 1
        assert not [e for e in logs if e["log_level"] == "warning"]
        await drop_prefix(cluster, key_prefix)
    finally:
        await cluster.aclose()
    assert not await replicas_present(redis)
    alone = CardStore(redis, Keys(key_prefix), wait_replicas=1, wait_timeout_ms=50)
    with capture_logs() as logs:
        assert (await alone.apply_run(1, "r1", writes, now=T0)).inserted == 1
        assert (await alone.apply_run(1, "r2", writes, now=T0)).observed == 1
    warned = [e["event"] for e in logs if e["log_level"] == "warning"]
    assert warned == ["cards.write_not_replicated"]  # then quiet: r2 did not wait


async def test_a_cluster_master_that_may_evict_is_refused_at_start(
    redis: Any, valkey_cluster: LocalCluster
) -> None:
    """§2 holds for the card store: every master is asked, not one."""
    cluster = cluster_from_url(valkey_cluster.url)
    last = valkey_cluster.master_of_slot(16383).client()
    try:
        await check_cards_redis(cluster, redis)  # noeviction everywhere: quiet
        last.config_set("maxmemory-policy", "allkeys-lru")
        with pytest.raises(EvictionPolicyError):
            await check_cards_redis(cluster, redis)
    finally:
        last.config_set("maxmemory-policy", "noeviction")
        await cluster.aclose()
    await check_cards_redis(redis, redis)  # the queue's own server was checked already
