"""Store health (§11): every store a run writes, per node.

The decisions are tables (INFO → figures, a slot map → readiness problems, last good
figures per node); the gauges are scraped over HTTP from the real server with a real
Valkey (queue) and the session's real 3-master / 3-replica cluster (cards), checked by
``promtool check metrics`` when the Debian ``prometheus`` package is installed (CI's
``make promtool`` installs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from redis.exceptions import ConnectionError as RedisConnectionError

from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.checks import RedisHealth, parse_health
from memory_worker.storage.connections import awaited, client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.storage.health import (
    CARDS,
    QUEUE,
    NodeSample,
    StoreSample,
    Topology,
    card_problems,
    client_address,
    last_good,
    parse_slots,
    write_problems,
    write_refusal,
)
from tests.support.cluster import LocalCluster
from tests.support.harness import eventually, free_port
from tests.support.replies import command, parsed_error

# --- INFO → figures ----------------------------------------------------------------------------

MASTER_INFO: dict[str, Any] = {
    "role": "master",
    "used_memory": 2048,
    "blocked_clients": 3,
    "rejected_connections": 7,
    "aof_enabled": 1,
    "aof_last_write_status": "err",
    "aof_last_bgrewrite_status": "ok",
    "rdb_last_bgsave_status": "ok",
    "rdb_last_save_time": 1_700_000_000,
    "rdb_changes_since_last_save": 12,
    "connected_slaves": 2,
    "master_repl_offset": 1000,
    "slave0": {"ip": "10.0.0.2", "port": 7001, "state": "online", "offset": 990, "lag": 0},
    "slave1": {"ip": "10.0.0.3", "port": 7002, "state": "online", "offset": 400, "lag": 4},
}


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        (
            MASTER_INFO,
            {
                "blocked_clients": 3,
                "rejected_connections": 7,
                "aof_enabled": True,
                "aof_last_write_ok": False,
                "aof_last_rewrite_ok": True,
                "rdb_last_save_ok": True,
                "rdb_last_save_at": 1_700_000_000.0,
                "rdb_changes_since_save": 12,
                "master": True,
                "connected_replicas": 2,
                "replica_lag_seconds": 4.0,
                "replica_lag_bytes": 600,
                "master_link_up": None,
            },
        ),
        (
            {"role": "slave", "master_link_status": "down", "rdb_last_bgsave_status": "err"},
            {
                "master": False,
                "master_link_up": False,
                "rdb_last_save_ok": False,
                "replica_lag_seconds": None,
                "aof_enabled": False,
            },
        ),
        (
            {"role": "slave", "master_link_status": "up", "slave0": "garbage"},
            {"master": False, "master_link_up": True, "connected_replicas": 0},
        ),
        (
            {"role": "master", "connected_slaves": 0, "rdb_last_save_time": 0},
            {"replica_lag_seconds": None, "replica_lag_bytes": None, "rdb_last_save_at": None},
        ),
        (
            {"used_memory": "n/a", "aof_last_write_status": "OK"},
            {"used_memory_bytes": 0, "aof_last_write_ok": True, "master": True},
        ),
    ],
    ids=["master-two-replicas", "replica-link-down", "replica-up", "lonely-master", "gaps"],
)
def test_parse_health_reads_persistence_and_replication(
    info: dict[str, Any], expected: dict[str, Any]
) -> None:
    health = parse_health(info)
    assert {name: getattr(health, name) for name in expected} == expected


# --- slot map → readiness problems --------------------------------------------------------------


def test_parse_slots_reads_masters_replicas_and_coverage() -> None:
    reply = [
        [0, 5460, [b"127.0.0.1", 7000, b"id0"], [b"127.0.0.1", 7003, b"id3"]],
        [5461, 10922, [b"127.0.0.1", 7001, b"id1"]],
        [10923, 16000, [b"127.0.0.1", 7002, b"id2"], [b"127.0.0.1", 7005, b"id5"]],
    ]
    topology = parse_slots(reply)
    assert topology.masters == ("127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002")
    assert topology.replicas == ("127.0.0.1:7003", "127.0.0.1:7005")
    assert topology.covered == 16001


FULL = Topology(masters=("m1", "m2"), replicas=("r1",), covered=16384)


def _cards(*up: tuple[str, bool]) -> tuple[NodeSample, ...]:
    return (NodeSample(QUEUE, "q", True), *(NodeSample(CARDS, n, ok) for n, ok in up))


@pytest.mark.parametrize(
    ("sample", "problems"),
    [
        (StoreSample(0, _cards(), "shared"), ()),
        (StoreSample(0, _cards(("s", True)), "server"), ()),
        (StoreSample(0, _cards(("s", False)), "server"), ("cards_unreachable",)),
        (StoreSample(0, _cards(("m1", True), ("m2", True), ("r1", True)), "cluster", FULL), ()),
        (
            StoreSample(0, _cards(("m1", True), ("m2", True), ("r1", False)), "cluster", FULL),
            (),
        ),
        (
            StoreSample(0, _cards(("m1", True), ("m2", False), ("r1", True)), "cluster", FULL),
            ("cards_node_unreachable",),
        ),
        (
            StoreSample(0, _cards(("m1", True)), "cluster", Topology(("m1",), (), 16000)),
            ("cards_slots_uncovered",),
        ),
        (StoreSample(0, _cards(("seed", False)), "cluster", None), ("cards_unreachable",)),
    ],
    ids=[
        "shared",
        "server-up",
        "server-down",
        "cluster-whole",
        "replica-down-is-fine",
        "master-down",
        "slots-uncovered",
        "no-node-answers",
    ],
)
def test_card_problems(sample: StoreSample, problems: tuple[str, ...]) -> None:
    assert card_problems(sample) == problems


def test_last_good_keeps_a_failed_nodes_figures_and_drops_a_node_gone_from_the_map() -> None:
    old, new = parse_health({"used_memory": 1}), parse_health({"used_memory": 2})
    previous: dict[tuple[str, str], RedisHealth] = {
        (CARDS, "a"): old,
        (CARDS, "b"): old,
        (CARDS, "gone"): old,
    }
    sample = StoreSample(
        0, (NodeSample(CARDS, "a", True, new), NodeSample(CARDS, "b", False)), "cluster"
    )
    assert last_good(previous, sample) == {(CARDS, "a"): new, (CARDS, "b"): old}


# --- the gauges over HTTP -------------------------------------------------------------------------

Families = dict[str, dict[tuple[tuple[str, str], ...], float]]


async def scrape(url: str) -> tuple[str, Families]:
    async with httpx.AsyncClient(timeout=10) as client:
        text = (await client.get(url + "/metrics")).text
    out: Families = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return text, out


def by_node(families: Families, name: str, store: str) -> dict[str, float]:
    return {
        dict(labels)["node"]: v
        for labels, v in families.get(name, {}).items()
        if dict(labels)["store"] == store
    }


def store_families(text: str) -> str:
    """The exposition's ``memory_worker_redis_*`` families (HELP, TYPE and samples)."""
    return "".join(
        line + "\n"
        for line in text.splitlines()
        if line.removeprefix("# HELP ").removeprefix("# TYPE ").startswith("memory_worker_redis_")
    )


def promtool_check(text: str) -> None:
    """``promtool check metrics`` on the store families (the rest of the exposition is
    another series' business; this checks what this module exports)."""
    text = store_families(text)
    assert text
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool absent (Debian package prometheus; `make promtool` installs it)")
    done = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


async def test_queue_gauges_show_memory_persistence_clients_and_evictions(
    own_valkey: EmbeddedValkey, tmp_path: Path
) -> None:
    """The queue's server: memory, AOF (the embedded Valkey's), blocked clients, rejected
    connections and evictions, each as it happens on the real server."""
    settings = Settings(
        redis_url=own_valkey.url,
        key_prefix="sh:",
        data_dir=tmp_path / "var",
        metrics_cache_seconds=0,
    )
    server = HealthServer(settings, own_valkey.url, port=0)
    admin = client_from_url(own_valkey.url)
    blocker = client_from_url(own_valkey.url, socket_timeout=30)
    node = client_address(client_from_url(own_valkey.url))
    try:
        await server.start()
        text, families = await scrape(server.base_url)
        assert by_node(families, "memory_worker_redis_up", QUEUE) == {node: 1}
        assert by_node(families, "memory_worker_redis_maxmemory_bytes", QUEUE) == {node: 0}
        assert by_node(families, "memory_worker_redis_used_memory_bytes", QUEUE)[node] > 0
        assert by_node(families, "memory_worker_redis_aof_enabled", QUEUE) == {node: 1}
        assert by_node(families, "memory_worker_redis_aof_last_write_ok", QUEUE) == {node: 1}
        assert by_node(families, "memory_worker_redis_rdb_last_save_ok", QUEUE) == {node: 1}
        assert by_node(families, "memory_worker_redis_master", QUEUE) == {node: 1}
        assert by_node(families, "memory_worker_redis_evicted_keys_total", QUEUE) == {node: 0}
        assert by_node(families, "memory_worker_redis_blocked_clients", QUEUE) == {node: 0}
        assert "memory_worker_redis_master_link_up" not in families  # a master has no link
        promtool_check(text)

        blocked = asyncio.ensure_future(awaited(blocker.blpop(["sh:never"], timeout=20)))

        async def blocking() -> bool:
            return int((await admin.info("clients"))["blocked_clients"]) == 1

        await eventually(blocking, timeout=10)
        clients = int((await admin.info("clients"))["connected_clients"])
        await admin.config_set("maxclients", clients)  # full: the next connection is refused
        for _ in range(3):
            extra = client_from_url(own_valkey.url, socket_timeout=2)
            with pytest.raises(Exception):  # noqa: B017  ("max number of clients")
                await extra.ping()
            await extra.aclose()
        await admin.config_set("maxclients", 10000)
        await admin.config_set("maxmemory-policy", "allkeys-lru")
        await admin.config_set("maxmemory", "3mb")
        for i in range(200):
            await admin.set(f"sh:filler:{i}", b"x" * 50_000)
        _, families = await scrape(server.base_url)
        assert by_node(families, "memory_worker_redis_blocked_clients", QUEUE) == {node: 1}
        assert by_node(families, "memory_worker_redis_rejected_connections_total", QUEUE)[node] > 0
        assert by_node(families, "memory_worker_redis_evicted_keys_total", QUEUE)[node] > 0
        assert by_node(families, "memory_worker_redis_maxmemory_bytes", QUEUE) == {
            node: 3 * 1024 * 1024
        }
        blocked.cancel()
        with contextlib.suppress(BaseException):
            await blocked
    finally:
        await admin.config_set("maxmemory", "0")
        await admin.config_set("maxmemory-policy", "noeviction")
        await blocker.aclose()
        await admin.aclose()
        await server.stop()


async def test_every_node_of_the_card_cluster_has_its_gauges_and_promtool_passes(
    settings: Settings, valkey_cluster: LocalCluster
) -> None:
    """Per node of the card cluster: role, replicas, replica lag and link, persistence."""
    on_cluster = settings.model_copy(
        update={"cards_url": valkey_cluster.url, "metrics_cache_seconds": 0}
    )
    server = HealthServer(on_cluster, reveal(settings.redis_url) or "", port=0)
    await server.start()
    nodes = {f"127.0.0.1:{n.port}" for n in valkey_cluster.nodes}
    scraped: list[tuple[str, Families]] = []

    async def every_node_seen() -> bool:  # a fresh cluster's slot map names its replicas soon
        scraped[:] = [await scrape(server.base_url)]
        return set(by_node(scraped[0][1], "memory_worker_redis_up", CARDS)) == nodes

    try:
        await eventually(every_node_seen, timeout=20, every=0.2)
        text, families = scraped[0]
        async with httpx.AsyncClient(timeout=10) as client:
            ready = (await client.get(server.base_url + "/readyz")).json()
    finally:
        await server.stop()
    assert by_node(families, "memory_worker_redis_up", CARDS) == dict.fromkeys(nodes, 1)
    role = by_node(families, "memory_worker_redis_master", CARDS)
    masters = {n for n, v in role.items() if v == 1}
    assert len(masters) == 3
    assert set(role) == nodes
    replicas = by_node(families, "memory_worker_redis_connected_replicas", CARDS)
    assert {replicas[m] for m in masters} == {1}
    assert set(by_node(families, "memory_worker_redis_replica_lag_seconds", CARDS)) == masters
    assert by_node(families, "memory_worker_redis_master_link_up", CARDS) == dict.fromkeys(
        nodes - masters, 1
    )
    assert set(by_node(families, "memory_worker_redis_rdb_last_save_ok", CARDS)) == nodes
    assert set(by_node(families, "memory_worker_redis_up", QUEUE)) != set()
    # every master a run writes is asked to take a write, no replica is
    refused = by_node(families, "memory_worker_redis_writes_refused", CARDS)
    assert refused == dict.fromkeys(masters, 0)
    assert ready["stores"]["cards"] == "cluster"
    assert ready["problems"] == []
    promtool_check(text)


async def test_gauges_are_absent_before_the_first_probe_and_keep_last_good_values(
    own_valkey: EmbeddedValkey, tmp_path: Path
) -> None:
    """The card server goes away: up turns 0, its other gauges keep their last good values."""
    interval = 0.3
    queue = EmbeddedValkey(tmp_path / "queue").ensure()
    settings = Settings(
        redis_url=queue.url,
        cards_url=own_valkey.url,
        key_prefix="sh:",
        data_dir=tmp_path / "var",
        metrics_cache_seconds=interval,
    )
    server = HealthServer(settings, queue.url, port=0)
    node = client_address(client_from_url(own_valkey.url))
    try:
        await server.start()
        assert server._stores is not None
        assert list(server._stores.metrics()) == []  # absent: nothing probed yet
        _, good = await scrape(server.base_url)
        memory = by_node(good, "memory_worker_redis_used_memory_bytes", CARDS)[node]
        own_valkey.stop()

        async def down() -> bool:
            _, families = await scrape(server.base_url)
            return by_node(families, "memory_worker_redis_up", CARDS) == {node: 0}

        await eventually(down, timeout=10, every=interval / 3)
        _, kept = await scrape(server.base_url)
        assert by_node(kept, "memory_worker_redis_used_memory_bytes", CARDS) == {node: memory}
        assert by_node(kept, "memory_worker_redis_up", QUEUE) == {
            client_address(client_from_url(queue.url)): 1
        }
    finally:
        await server.stop()
        queue.stop()


# --- writes refused (§7, §11) -----------------------------------------------------------------


def _sample(*nodes: NodeSample, cards: Any = "shared") -> StoreSample:
    return StoreSample(0.0, nodes, cards)


@pytest.mark.parametrize(
    ("sample", "problems"),
    [
        pytest.param(_sample(NodeSample(QUEUE, "q", True, writes_ok=True)), (), id="takes-writes"),
        pytest.param(_sample(NodeSample(QUEUE, "q", True)), (), id="not-asked-or-silent"),
        pytest.param(
            _sample(NodeSample(QUEUE, "q", True, writes_ok=False, refusal="oom")),
            ("redis_refuses_writes",),
            id="queue-refuses",
        ),
        pytest.param(
            _sample(
                NodeSample(QUEUE, "q", True, writes_ok=True),
                NodeSample(CARDS, "a", True, writes_ok=True),
                NodeSample(CARDS, "b", True, writes_ok=False, refusal="misconf"),
                cards="cluster",
            ),
            ("cards_refuse_writes",),
            id="one-card-master-refuses",
        ),
        pytest.param(
            _sample(
                NodeSample(QUEUE, "q", True, writes_ok=False, refusal="oom"),
                NodeSample(CARDS, "a", True, writes_ok=False, refusal="oom"),
                cards="server",
            ),
            ("redis_refuses_writes", "cards_refuse_writes"),
            id="both",
        ),
    ],
)
def test_write_problems(sample: StoreSample, problems: tuple[str, ...]) -> None:
    assert write_problems(sample) == problems


@pytest.mark.parametrize(
    ("reply", "refusal"),
    [
        ("OOM command not allowed when used memory > 'maxmemory'.", "oom"),
        (
            "MISCONF Valkey is configured to save RDB snapshots, but it's currently unable",
            "misconf",
        ),
        ("NOREPLICAS Not enough good replicas to write.", "noreplicas"),
        ("READONLY You can't write against a read only replica.", "readonly"),
        ("NOPERM User u has no permissions to run the 'eval' command", None),  # the ACL checks'
        ("ERR Error compiling script (new function): user_script:1: unexpected symbol", None),
        ("BUSY Redis is busy running a script.", None),
    ],
)
def test_write_refusal_reads_the_probes_answer(reply: str, refusal: str | None) -> None:
    assert write_refusal(parsed_error(reply)) == refusal


def test_a_lost_connection_is_no_refusal() -> None:
    assert write_refusal(RedisConnectionError("Connection closed by server.")) is None


async def test_readyz_and_the_gauge_say_when_the_store_refuses_writes(
    own_valkey: EmbeddedValkey, tmp_path: Path
) -> None:
    """A real server out of memory, then a read-only replica: ``/readyz`` 503
    ``redis_refuses_writes`` with the refusal's code on the node, the gauge 1; both clear when
    it takes writes again."""
    settings = Settings(
        redis_url=own_valkey.url,
        key_prefix="wr:",
        data_dir=tmp_path / "var",
        metrics_cache_seconds=0,
    )
    server = HealthServer(settings, own_valkey.url, port=0)
    admin = client_from_url(own_valkey.url)
    node = client_address(admin)

    async def state() -> tuple[int, list[str], Any, float | None]:
        async with httpx.AsyncClient(timeout=10) as client:
            answer = await client.get(server.base_url + "/readyz")
        body = answer.json()
        code = {n["node"]: n["writes_refused"] for n in body["stores"]["nodes"]}.get(node)
        _, families = await scrape(server.base_url)
        gauge = by_node(families, "memory_worker_redis_writes_refused", QUEUE).get(node)
        return answer.status_code, body["problems"], code, gauge

    try:
        await server.start()
        assert await state() == (200, [], None, 0)
        await admin.config_set("maxmemory", "1")  # noeviction: the server refuses writes
        assert await state() == (503, ["redis_refuses_writes"], "oom", 1)
        await admin.config_set("maxmemory", "0")
        await command(admin, "REPLICAOF", "127.0.0.1", str(free_port()))
        assert await state() == (503, ["redis_refuses_writes"], "readonly", 1)
        await command(admin, "REPLICAOF", "NO", "ONE")
        assert await state() == (200, [], None, 0)
    finally:
        await admin.config_set("maxmemory", "0")
        await command(admin, "REPLICAOF", "NO", "ONE")
        await admin.aclose()
        await server.stop()
