"""Fault-matrix rows of a worker's health (issue 21 items 3 and 4), real worker processes.

- **Row 2103** (issue 21 item 3): readiness is the data path. A ``memory-worker run --serve``
  process writes its runs' cards to a store of their own; the card server goes away, then a
  master of a card cluster: ``/readyz`` turns 503 within one sampling interval each time
  (``cards_unreachable``, ``cards_node_unreachable``) and 200 again once the store is back. A
  card replica going away is not unreadiness (no run needs it). A run that meets the dead card
  server is released, never charged, and completes once the store is back.
- **Row 2104** (issue 21 item 4): a wedged worker restarts itself — see :func:`row2104`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

from memory_worker.embedded import EmbeddedValkey
from memory_worker.run_store import RunStore
from tests.faults.context import FaultContext, Scenario
from tests.support.cluster import LocalCluster, revive
from tests.support.factories import make_request
from tests.support.harness import Fleet, completed_run, eventually, free_port

#: The sampling interval of these rows (MEMORY_METRICS_CACHE_SECONDS).
INTERVAL = 1.0
#: What "within one interval" allows on top: the probe itself and a loaded 2-core machine.
SLACK = 1.5


async def readyz(port: int) -> tuple[int, dict[str, Any]]:
    """(status, body) of the worker's ``/readyz`` (0 while its server does not answer)."""
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            answer = await client.get(f"http://127.0.0.1:{port}/readyz")
    except httpx.HTTPError:
        return 0, {}
    return answer.status_code, answer.json()


async def ready_with(port: int, status: int, problem: str | None = None) -> dict[str, Any]:
    """Poll ``/readyz`` until it answers ``status`` (with ``problem`` listed); its body."""
    seen: list[dict[str, Any]] = []

    async def answered() -> bool:
        code, body = await readyz(port)
        seen[:] = [body]
        return code == status and (problem is None or problem in body.get("problems", []))

    await eventually(answered, timeout=30, every=0.05)
    return seen[0]


@contextlib.asynccontextmanager
async def serving_worker(ctx: FaultContext, cards_url: str) -> AsyncIterator[tuple[int, Fleet]]:
    """One ``run --serve`` worker with its cards on ``cards_url``; its port once it is ready."""
    port = free_port()
    settings = ctx.settings.model_copy(update={"cards_url": cards_url})
    fleet = Fleet(
        settings,
        ctx.tmp_path,
        {
            "discovery_base_url": ctx.sim.base_url,
            "cards_url": cards_url,
            "metrics_cache_seconds": INTERVAL,
            "serve_port": port,
            "redis_socket_timeout_seconds": 1.0,
            "redis_connect_timeout_seconds": 1.0,
            "store_retry_max_seconds": 0.5,
        },
    )
    fleet.start(1, args=["--serve"])
    try:
        await ready_with(port, 200)
        yield port, fleet
    finally:
        fleet.stop_all()


async def unready_within_one_interval(port: int, problem: str) -> float:
    """Seconds until ``/readyz`` says 503 with ``problem`` (asserted ≤ one interval + slack)."""
    gone = time.monotonic()
    await ready_with(port, 503, problem)
    took = time.monotonic() - gone
    print(f"/readyz 503 ({problem}) {took:.2f} s after the node went away")
    assert took <= INTERVAL + SLACK, (problem, took)
    return took


async def _card_server_goes_away(ctx: FaultContext) -> None:
    cards = EmbeddedValkey(ctx.tmp_path / "cards").ensure()
    runs = RunStore(ctx.redis, ctx.settings)
    try:
        async with serving_worker(ctx, cards.url) as (port, fleet):
            first = (await runs.enqueue(make_request(2103, hour=1))).run_id or ""
            await completed_run(lambda: runs.get(first), timeout=30)  # cards are written there

            cards.stop()
            await unready_within_one_interval(port, "cards_unreachable")
            second = (await runs.enqueue(make_request(2104, hour=2))).run_id or ""

            async def released() -> bool:  # its card write met the dead server
                return (await runs.get(second)).releases >= 1

            await eventually(released, timeout=30)
            cards = EmbeddedValkey(ctx.tmp_path / "cards").ensure()  # same port, same data
            await ready_with(port, 200)
            run = await completed_run(lambda: runs.get(second), timeout=60)
            assert (run.attempts, run.error_log) == (1, []), fleet.logs()
    finally:
        cards.stop()


async def _card_cluster_nodes_go_away(ctx: FaultContext) -> None:
    # a long node timeout: no failover during the row (the master stays the slots' owner)
    cluster = LocalCluster(ctx.tmp_path / "cluster", node_timeout_ms=15_000).start()
    try:
        async with serving_worker(ctx, cluster.url) as (port, _):
            replica = cluster.nodes[cluster.masters]
            cluster.kill(replica)

            async def replica_seen_down() -> bool:
                code, body = await readyz(port)
                nodes = {n["node"]: n["up"] for n in (body.get("stores") or {}).get("nodes", [])}
                return nodes.get(f"127.0.0.1:{replica.port}") is False and code == 200

            await eventually(replica_seen_down, timeout=30, every=0.05)  # down, and still ready

            master = cluster.nodes[1]
            cluster.kill(master)
            await unready_within_one_interval(port, "cards_node_unreachable")
            revive(cluster, master)
            revive(cluster, replica)
            body = await ready_with(port, 200)
            assert body["problems"] == []
    finally:
        await asyncio.to_thread(cluster.stop)


async def row2103(ctx: FaultContext) -> None:
    """Issue 21 item 3: /readyz follows the card store (a server, a cluster node), both ways."""
    await _card_server_goes_away(ctx)
    await _card_cluster_nodes_go_away(ctx)


ROWS: dict[int, Scenario] = {2103: row2103}
