"""Health of every store a run writes (§11): the queue's server and each card node.

A run writes two stores: the queue (its outcome) and the card store (its memory; on
``MEMORY_CARDS_URL``, a Redis/Valkey Cluster spreading chats over masters by slot). With the
card store unreachable every run would fail to write while ``/readyz`` said 200, so readiness is that data path. One probe reads ``INFO`` from the queue's server and
from each card node — for a cluster, every node of its slot map (``CLUSTER SLOTS``, asked of
any node that answers: the seeds of the URL, then every node seen since) — and serves:

- **readiness** (:func:`card_problems`, pure): ``cards_unreachable`` (no card node
  answered), ``cards_slots_uncovered`` (a slot without a master: its chats cannot be
  written), ``cards_node_unreachable`` (a master that owns slots did not answer). A replica
  is not on a run's path (a card write that cannot reach one goes on, logged), so it does
  not count. The queue itself is judged by ``/readyz``'s own PING (:mod:`memory_worker.ops.health`).
- **writes refused** (:func:`write_problems`, pure): the queue's server and each card node a
  run writes (a card server, a cluster's masters) is asked to run a script that may write
  and writes nothing (:data:`WRITE_PROBE`): a server out of memory under ``noeviction``, one
  whose snapshot failed (``MISCONF``), one short of ``min-replicas-to-write`` or a read-only
  replica refuses it as it would refuse a run's write. ``redis_refuses_writes`` (the queue),
  ``cards_refuse_writes`` (a card node); the gauge ``memory_worker_redis_writes_refused``.
  The reply's code is in the node's ``/readyz`` entry. (Redis 6 cannot run a script with
  flags: its answer says nothing, and the probe is silent there.)
- **gauges** (:func:`store_metrics`, pure), labelled ``store`` (``queue``/``cards``) and
  ``node`` (host:port): up, memory, evictions, clients, rejected connections, blocked
  clients, persistence (AOF/RDB last write status, last save time, unsaved changes) and
  replication (role, connected replicas, their lag; a replica's link to its master).

Sampling follows the metrics' rules (:class:`~memory_worker.ops.metrics.Sampler`): at most one
probe per ``MEMORY_METRICS_CACHE_SECONDS`` however often ``/readyz`` or ``/metrics`` ask; a
node that fails keeps its last good figures (``memory_worker_redis_up`` says it is down now);
a node's gauges are absent until its first good sample. Readiness reads the latest probe,
never a last good one, so ``/readyz`` turns 503 within one interval of a node going away.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from llm_client import as_text
from memory_worker.logs import get_logger
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.checks import RedisHealth, parse_health
from memory_worker.storage.connections import (
    awaited,
    client_from_url,
    is_cluster_url,
    parse_cluster_url,
)
from memory_worker.storage.faults import reply_text
from memory_worker.storage.replies import ReplyClass, classify_reply
from memory_worker.storage.sampling import Sampler

log = get_logger(__name__)

QUEUE = "queue"
CARDS = "cards"
SLOTS = 16384

#: How the card store is deployed: with the queue, on a server of its own, or a cluster.
CardsMode = Literal["shared", "server", "cluster"]

#: (store, node): the labels of one node's series.
NodeKey = tuple[str, str]


#: A script that may write and writes nothing: Redis ≥ 7 refuses it whenever it would refuse
#: a write (OOM, MISCONF, NOREPLICAS, a read-only replica), and otherwise answers 1.
WRITE_PROBE = "#!lua\nreturn 1"


@dataclass(frozen=True, slots=True)
class NodeSample:
    """What one node answered in one probe."""

    store: str
    node: str
    up: bool
    health: RedisHealth | None = None  # None: down, or INFO refused (ACL)
    #: Whether it took :data:`WRITE_PROBE` (None: not asked, or its answer said nothing),
    #: and the code of its refusal (``oom``, ``misconf``, ``noreplicas``, ``readonly``).
    writes_ok: bool | None = None
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class Topology:
    """A cluster's slot map: masters that own slots, their replicas, slots with a master."""

    masters: tuple[str, ...]
    replicas: tuple[str, ...]
    covered: int


@dataclass(frozen=True, slots=True)
class StoreSample:
    """One probe of every store, at ``at`` (unix seconds)."""

    at: float
    nodes: tuple[NodeSample, ...]
    cards: CardsMode = "shared"
    #: The card cluster's slot map (None: not a cluster, or no node said).
    topology: Topology | None = None


# --- the decisions ---------------------------------------------------------------------------


def _address(entry: Sequence[Any]) -> str:
    return f"{as_text(entry[0])}:{int(entry[1])}"


def parse_slots(reply: Sequence[Any]) -> Topology:
    """A ``CLUSTER SLOTS`` reply (``[[start, end, [host, port, id], replica…], …]``) as a map."""
    masters: dict[str, None] = {}
    replicas: dict[str, None] = {}
    covered: set[int] = set()
    for start, end, master, *followers in reply:
        masters[_address(master)] = None
        replicas.update((_address(r), None) for r in followers)
        covered.update(range(int(start), int(end) + 1))
    return Topology(tuple(masters), tuple(r for r in replicas if r not in masters), len(covered))


def card_problems(sample: StoreSample) -> tuple[str, ...]:
    """Why a run could not write its cards now (empty: it could)."""
    if sample.cards == "shared":
        return ()
    cards = {n.node: n for n in sample.nodes if n.store == CARDS}
    if sample.cards == "server" or sample.topology is None:
        return () if any(n.up for n in cards.values()) else ("cards_unreachable",)
    problems = []
    if sample.topology.covered < SLOTS:
        problems.append("cards_slots_uncovered")
    down = NodeSample(CARDS, "", up=False)
    if any(not cards.get(m, down).up for m in sample.topology.masters):
        problems.append("cards_node_unreachable")
    return tuple(problems)


def write_refusal(error: BaseException) -> str | None:
    """The code of :data:`WRITE_PROBE`'s answer when it means the node refuses writes (an
    ACL's ``NOPERM`` is the access checks' to report; a Redis 6 compile error says nothing)."""
    if not isinstance(error, ResponseError):
        return None
    reply = classify_reply(reply_text(error))
    refused = reply.kind is ReplyClass.REFUSED and reply.code != "noperm"
    return reply.code if refused or reply.code == "readonly" else None


def write_problems(sample: StoreSample) -> tuple[str, ...]:
    """``redis_refuses_writes`` (the queue's server), ``cards_refuse_writes`` (a card node a
    run writes): each when that node refused :data:`WRITE_PROBE` in ``sample``."""
    problems: list[str] = []
    for store, problem in ((QUEUE, "redis_refuses_writes"), (CARDS, "cards_refuse_writes")):
        if any(n.store == store and n.writes_ok is False for n in sample.nodes):
            problems.append(problem)
    return tuple(problems)


def last_good(
    previous: Mapping[NodeKey, RedisHealth], sample: StoreSample
) -> dict[NodeKey, RedisHealth]:
    """Each probed node's latest good figures: this sample's, else the last ones kept (a node
    no longer probed — gone from the slot map — is dropped)."""
    kept = {(n.store, n.node) for n in sample.nodes}
    merged = {key: health for key, health in previous.items() if key in kept}
    merged.update({(n.store, n.node): n.health for n in sample.nodes if n.health is not None})
    return merged


# --- the gauges ------------------------------------------------------------------------------

_LABELS = ["store", "node"]

#: name (after ``memory_worker_redis_``) → (help, value of a node's figures or None: no series).
_GAUGES: dict[str, tuple[str, Any]] = {
    "used_memory_bytes": ("Redis used_memory.", lambda h: h.used_memory_bytes),
    "maxmemory_bytes": ("Redis maxmemory (0 = no limit).", lambda h: h.maxmemory_bytes),
    "connected_clients": ("Clients connected.", lambda h: h.connected_clients),
    "blocked_clients": (
        "Clients blocked in a blocking command (ours never block: arq polls).",
        lambda h: h.blocked_clients,
    ),
    "aof_enabled": ("1 when the append-only file is on.", lambda h: int(h.aof_enabled)),
    "aof_last_write_ok": (
        "0 when the last AOF write failed (Redis then refuses writes or loses them).",
        lambda h: int(h.aof_last_write_ok) if h.aof_enabled else None,
    ),
    "aof_last_rewrite_ok": (
        "0 when the last AOF rewrite failed.",
        lambda h: int(h.aof_last_rewrite_ok) if h.aof_enabled else None,
    ),
    "rdb_last_save_ok": (
        "0 when the last RDB snapshot failed (stop-writes-on-bgsave-error refuses writes).",
        lambda h: int(h.rdb_last_save_ok),
    ),
    "rdb_last_save_timestamp_seconds": (
        "Unix time of the last RDB snapshot (its age: time() - this).",
        lambda h: h.rdb_last_save_at,
    ),
    "rdb_changes_since_last_save": (
        "Writes since the last RDB snapshot (lost on a crash without AOF).",
        lambda h: h.rdb_changes_since_save,
    ),
    "master": ("1 on a master, 0 on a replica.", lambda h: int(h.master)),
    "connected_replicas": ("Replicas connected to this master.", lambda h: h.connected_replicas),
    "replica_lag_seconds": (
        "A master's most lagging replica: seconds since it acknowledged.",
        lambda h: h.replica_lag_seconds,
    ),
    "replica_lag_bytes": (
        "A master's most lagging replica: replication offset behind, in bytes.",
        lambda h: h.replica_lag_bytes,
    ),
    "master_link_up": (
        "A replica's link to its master: 1 up, 0 down.",
        lambda h: None if h.master_link_up is None else int(h.master_link_up),
    ),
}
_COUNTERS: dict[str, tuple[str, Any]] = {
    "evicted_keys": (
        "Keys Redis evicted since it started (must stay 0: evicted keys are lost runs).",
        lambda h: h.evicted_keys,
    ),
    "rejected_connections": (
        "Connections refused since start (maxclients reached).",
        lambda h: h.rejected_connections,
    ),
}


def store_metrics(
    up: Mapping[NodeKey, bool],
    good: Mapping[NodeKey, RedisHealth],
    writes_ok: Mapping[NodeKey, bool] | None = None,
) -> Iterator[Metric]:
    """``memory_worker_redis_*`` families: ``up`` and ``writes_refused`` from the latest probe
    (``writes_ok``: the nodes it asked to write that answered), the rest last good."""
    family = GaugeMetricFamily(
        "memory_worker_redis_up", "1 when the node answered the latest probe.", labels=_LABELS
    )
    for key, answered in sorted(up.items()):
        family.add_metric(list(key), int(answered))
    yield family
    refused = GaugeMetricFamily(
        "memory_worker_redis_writes_refused",
        "1 when the node refused the latest probe's write (OOM, MISCONF, NOREPLICAS, read-only): "
        "no run's write can land there.",
        labels=_LABELS,
    )
    for key, ok in sorted((writes_ok or {}).items()):
        refused.add_metric(list(key), int(not ok))
    yield refused
    for kind, table in ((GaugeMetricFamily, _GAUGES), (CounterMetricFamily, _COUNTERS)):
        for name, (doc, read) in table.items():
            metric = kind(f"memory_worker_redis_{name}", doc, labels=_LABELS)
            for key, health in sorted(good.items()):
                value = read(health)
                if value is not None:
                    metric.add_metric(list(key), value)
            yield metric


# --- the shell -------------------------------------------------------------------------------


async def command(client: Any, *args: Any) -> Any:
    """A raw command (no reply parsing of redis-py's in between)."""
    return await client.execute_command(*args)


def client_address(client: Any) -> str:
    """A client's server as a label: ``host:port``, a socket path, or the Sentinel service."""
    pool = getattr(client, "connection_pool", None)
    kwargs: Mapping[str, Any] = getattr(pool, "connection_kwargs", {}) or {}
    if kwargs.get("path"):
        return str(kwargs["path"])
    if kwargs.get("host"):
        return f"{kwargs['host']}:{kwargs.get('port', 6379)}"
    return f"sentinel:{getattr(pool, 'service_name', '?')}"


class StoreProbe:
    """Reads ``INFO`` of the queue's server and of every card node (plain clients of its own,
    short timeouts; the queue's is the caller's)."""

    def __init__(self, queue: Redis, settings: Settings, *, timeout: float = 1.5) -> None:
        self.queue = queue
        self.queue_node = client_address(queue)
        self.timeout = timeout
        self.url = reveal(settings.cards_url)
        self.mode: CardsMode = (
            "shared" if not self.url else "cluster" if is_cluster_url(self.url) else "server"
        )
        self._clients: dict[str, Redis] = {}
        self._seeds: list[str] = []
        if self.mode == "cluster":
            self._spec = parse_cluster_url(self.url or "")
            self._seeds = [f"{host}:{port}" for host, port in self._spec.nodes]
        self._known = list(self._seeds)

    async def read(self) -> StoreSample:
        at = time.time()
        queue = asyncio.ensure_future(self._info(QUEUE, self.queue_node, self.queue, writes=True))
        topology = None
        cards: list[tuple[str, Any]] = []
        written: Sequence[str] = ()  # the card nodes a run writes
        if self.mode == "server":
            cards = [(self._node_name(), self._client(self.url or ""))]
            written = [cards[0][0]]
        elif self.mode == "cluster":
            topology = await self._topology()
            nodes = (*topology.masters, *topology.replicas) if topology else self._seeds
            cards = [(node, self._client(node)) for node in nodes]
            written = topology.masters if topology else ()
            await self._forget_others({node for node, _ in cards} | set(self._seeds))
        answers = await asyncio.gather(
            *(self._info(CARDS, n, c, writes=n in written) for n, c in cards)
        )
        return StoreSample(at, (await queue, *answers), self.mode, topology)

    def _node_name(self) -> str:
        return client_address(self._client(self.url or ""))

    def _client(self, node: str) -> Redis:
        """The probe's client of a card node (by address) or of the card server (by URL)."""
        client = self._clients.get(node)
        if client is None:
            options: dict[str, Any] = {
                "socket_connect_timeout": self.timeout,
                "socket_timeout": self.timeout,
            }
            if self.mode == "cluster":
                host, _, port = node.rpartition(":")
                spec = self._spec
                client = Redis(
                    host=host,
                    port=int(port),
                    password=spec.password,
                    username=spec.username,
                    ssl=spec.ssl,
                    **options,
                )
            else:
                client = client_from_url(node, **options)
            self._clients[node] = client
        return client

    async def _topology(self) -> Topology | None:
        """The slot map, as the first node to answer tells it (None: none answered)."""
        for node in list(self._known):
            with contextlib.suppress(Exception):
                async with asyncio.timeout(self.timeout):
                    reply = await command(self._client(node), "CLUSTER", "SLOTS")
                topology = parse_slots(reply)
                found = [*topology.masters, *topology.replicas]
                # the node that answered is asked first next time (a dead seed costs nothing)
                self._known = list(dict.fromkeys([node, *self._seeds, *found, *self._known]))
                return topology
        return None

    async def _info(self, store: str, node: str, client: Any, *, writes: bool) -> NodeSample:
        """``INFO`` of one node and, with ``writes``, whether it takes :data:`WRITE_PROBE`."""
        health = None
        try:
            async with asyncio.timeout(self.timeout):
                info = await awaited(client.info())
            health = parse_health(info) if isinstance(info, Mapping) else None
        except ResponseError as exc:  # INFO refused (ACL): up, no figures
            log.warning("redis_info_refused", store=store, error=type(exc).__name__)
        except Exception:
            return NodeSample(store, node, up=False)
        if not writes:
            return NodeSample(store, node, up=True, health=health)
        refusal: str | None = None
        try:
            async with asyncio.timeout(self.timeout):
                await awaited(client.eval(WRITE_PROBE, 0))
        except ResponseError as exc:
            refusal = write_refusal(exc)
            if refusal is None:  # an answer that says nothing (Redis 6, ACL)
                return NodeSample(store, node, up=True, health=health)
        except Exception:
            return NodeSample(store, node, up=False, health=health)
        return NodeSample(store, node, True, health, writes_ok=refusal is None, refusal=refusal)

    async def _forget_others(self, keep: set[str]) -> None:
        """Close the clients of nodes no longer in the slot map."""
        for node in [n for n in self._clients if n not in keep]:
            client = self._clients.pop(node)
            with contextlib.suppress(Exception):
                await client.aclose()
        self._known = [n for n in self._known if n in keep]

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            with contextlib.suppress(Exception):
                await client.aclose()


class StoreHealth:
    """The probe behind a :class:`Sampler` (one probe per interval), with each node's last good
    figures for the gauges and the latest probe's card problems for readiness."""

    def __init__(self, probe: StoreProbe, *, min_interval: float) -> None:
        self.probe = probe
        self.good: dict[NodeKey, RedisHealth] = {}
        # each node read is bounded by the probe's timeout; the topology read is one more
        self.sampler: Sampler[StoreSample] = Sampler(
            self._read, min_interval=min_interval, timeout=probe.timeout * 3 + 1
        )

    async def _read(self) -> StoreSample:
        sample = await self.probe.read()
        self.good = last_good(self.good, sample)
        return sample

    async def problems(self) -> tuple[str, ...]:
        """The card problems and refused writes of the latest probe (sampling first if the
        interval passed)."""
        sample = await self.sampler.refresh()
        if sample is None or self.sampler.failed:  # the probe itself did not finish
            return () if self.probe.mode == "shared" else ("cards_unreachable",)
        return write_problems(sample) + card_problems(sample)

    def nodes(self) -> list[dict[str, Any]]:
        """The latest probe's nodes, for the ``/readyz`` body."""
        sample = self.sampler.last
        if sample is None:
            return []
        roles = {key: h.master for key, h in self.good.items()}
        return [
            {
                "store": n.store,
                "node": n.node,
                "up": n.up,
                "master": roles.get((n.store, n.node)),
                "writes_refused": n.refusal,
            }
            for n in sample.nodes
        ]

    def metrics(self) -> Iterable[Metric]:
        sample = self.sampler.last
        if sample is None:
            return []
        up = {(n.store, n.node): n.up for n in sample.nodes}
        writes = {(n.store, n.node): n.writes_ok for n in sample.nodes if n.writes_ok is not None}
        return store_metrics(up, self.good, writes)


class StoreCollector(Collector):
    """The stores' gauges on a registry (absent until the first probe)."""

    def __init__(self, stores: StoreHealth) -> None:
        self.stores = stores

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        return self.stores.metrics()
