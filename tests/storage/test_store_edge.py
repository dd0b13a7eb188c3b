"""The store edge: what the cluster client raises outside ``RedisError``.

During a failover of the card cluster redis-py's cluster client raised
``AttributeError: 'NoneType' object has no attribute 'name'`` (a pipeline whose default
node the client had just dropped), and its own tree — ``RedisClusterException``,
``SlotNotCoveredError`` — is not a ``RedisError`` either: a run failed with an attempt
spent. The client the worker uses (:class:`StoreCluster`) maps each of them at the call,
where its traceback still shows it came from inside redis-py, onto
:class:`StoreClientError` (a ``StoreError``): released, retried, never charged.

Each case below makes the real client raise the real error against a real cluster.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from redis.exceptions import ResponseError

from memory_worker.errors import StoreClientError
from memory_worker.runs.policy import Verdict, decide
from memory_worker.storage.connections import StoreCluster, cluster_from_url, retry_store_write
from memory_worker.storage.faults import is_store_fault, store_edge
from tests.support.cluster import LocalCluster
from tests.support.harness import free_port


@pytest.fixture
async def cluster(valkey_cluster: LocalCluster) -> AsyncIterator[Any]:
    client = cluster_from_url(valkey_cluster.url)
    try:
        await client.initialize()
        yield client
    finally:
        await client.aclose()


async def dropped_default_node(client: Any) -> Any:
    """A keyless pipeline while the client has no default node (as mid-failover)."""
    client.nodes_manager.default_node = None
    pipe = client.pipeline()
    pipe.execute_command("PING")
    return await pipe.execute()


async def uncovered_slot(client: Any) -> Any:
    """A command whose slot the client's map has no node for."""
    for slot in range(16384):
        client.nodes_manager.slots_cache[slot] = []
    return await client.get("some-key")


async def emptied_slot_map(client: Any) -> Any:
    """A command while the client's slot map is being rebuilt (empty): a raw KeyError."""
    client.nodes_manager.slots_cache.clear()
    return await client.get("some-key")


async def unreachable_cluster(_: Any) -> Any:
    """A client whose every seed node refuses: ``RedisClusterException``."""
    async with cluster_from_url(f"redis+cluster://127.0.0.1:{free_port()}") as lost:
        return await lost.get("k")


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (dropped_default_node, "AttributeError"),
        (uncovered_slot, "SlotNotCoveredError"),
        (emptied_slot_map, "KeyError"),
        (unreachable_cluster, "RedisClusterException"),
    ],
    ids=["failover-none-node", "slot-not-covered", "slot-map-empty", "cluster-unreachable"],
)
async def test_the_cluster_clients_foreign_errors_are_store_faults(
    cluster: Any, fault: Callable[[Any], Awaitable[Any]], kind: str
) -> None:
    assert isinstance(cluster, StoreCluster)
    with pytest.raises(StoreClientError) as caught:
        await fault(cluster)
    error = caught.value
    assert error.kind == kind
    assert type(error.__cause__).__name__ == kind  # chained to the client's own error
    assert is_store_fault(error)
    decision = decide(error)
    assert (decision.verdict, decision.reason) == (Verdict.RELEASE, "store_unavailable")


async def test_a_store_write_retries_through_them(cluster: Any) -> None:
    calls = 0

    async def write() -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            return await dropped_default_node(cluster)
        await cluster.initialize()
        return await cluster.set("edge-key", "v")

    assert await retry_store_write("card write", write, cap=0.01)
    assert calls == 2
    await cluster.delete("edge-key")


async def test_redis_errors_and_our_own_pass_the_edge_unchanged(cluster: Any) -> None:
    await cluster.set("edge-k", "not a number")
    with pytest.raises(ResponseError):
        await cluster.incr("edge-k")
    with pytest.raises(AttributeError), store_edge():
        None.missing  # type: ignore[attr-defined]  # noqa: B018  (a bug of ours, not the store)
    pipe = cluster.pipeline()
    pipe.execute_command("SET", "edge-k", "still not a number")
    pipe.execute_command("INCR", "edge-k")
    ok, refused = await pipe.execute(raise_on_error=False)
    assert ok is True
    assert isinstance(refused, ResponseError)  # a Redis answer stays what it is
    await cluster.delete("edge-k")


async def test_close_closes_every_node_even_after_a_failure(valkey_cluster: LocalCluster) -> None:
    """After a connection error redis-py marks the client for re-initialisation and its own
    ``aclose`` then does nothing, though commands in flight may have reconnected its nodes."""
    client = cluster_from_url(valkey_cluster.url)
    await client.set("edge-close", "v")
    await client.delete("edge-close")
    client._initialize = True  # what a ConnectionError mid-command leaves behind
    nodes = [*client.nodes_manager.nodes_cache.values()]
    assert any(c.is_connected for node in nodes for c in node._connections)
    await client.aclose()
    assert not any(c.is_connected for node in nodes for c in node._connections)
