"""Fault-matrix rows of a worker's health, real worker processes.

- **Row 27**: readiness is the data path. A ``memory-worker run --serve``
  process writes its runs' cards to a store of their own; the card server goes away, then a
  master of a card cluster: ``/readyz`` turns 503 within one sampling interval each time
  (``cards_unreachable``, ``cards_node_unreachable``) and 200 again once the store is back. A
  card replica going away is not unreadiness (no run needs it). A run that meets the dead card
  server is released, never charged, and completes once the store is back.
- **Row 28**: a wedged worker restarts itself. A real worker process
  (``tests.support.wedged_worker``: the real CLI with one wedge patched in) claims a run and
  its tick hangs — a completion write that never returns and swallows every cancellation
  (the event loop alive), then a synchronous call blocking the event loop. Each time the
  worker says why in one log line (``worker_wedged``: ``slots_stalled``,
  ``poll_loop_stalled``), releases the run (attempt refunded), and exits 70 within the
  watchdog window + 5 s of the claim; ``/healthz`` answers 503 ``wedged`` before it goes
  (when its loop can still answer); a restarted worker completes the run, uncharged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.worker.fleet import FAST, worker_env
from memory_worker.worker.watchdog import WEDGED_EXIT
from tests.faults.context import FaultContext, Scenario
from tests.support.cluster import LocalCluster, revive
from tests.support.factories import make_request
from tests.support.harness import Fleet, completed_run, eventually, free_port

#: The sampling interval of these rows (MEMORY_METRICS_CACHE_SECONDS).
INTERVAL = 2.0
#: What "within one interval" allows on top: the probe itself and a 2-core machine shared
#: with other test runs (measured alone: 0.05–1.2 s in all).
SLACK = 2.0


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
    # a long node timeout: no failover during the row (the master stays the slots' owner),
    # and the dead replica is never marked failed (CLUSTER SLOTS leaves failed replicas out)
    cluster = LocalCluster(ctx.tmp_path / "cluster", node_timeout_ms=120_000).start()
    try:
        async with serving_worker(ctx, cluster.url) as (port, _):
            replica = cluster.nodes[cluster.masters]
            name = f"127.0.0.1:{replica.port}"

            async def replica_listed(up: bool) -> bool:
                code, body = await readyz(port)
                nodes = {n["node"]: n["up"] for n in (body.get("stores") or {}).get("nodes", [])}
                return nodes.get(name) is up and code == 200

            # A replica shows in CLUSTER SLOTS only once it has joined its master (seconds
            # after the cluster starts): kill one the worker lists, or it never lists it down
            # (two CI runs lost the row to that).
            await eventually(partial(replica_listed, True), timeout=60, every=0.1)
            cluster.kill(replica)

            # down at the next probe, and still ready
            await eventually(partial(replica_listed, False), timeout=60, every=0.05)

            master = cluster.nodes[1]
            cluster.kill(master)
            await unready_within_one_interval(port, "cards_node_unreachable")
            revive(cluster, master)
            revive(cluster, replica)
            body = await ready_with(port, 200)
            assert body["problems"] == []
    finally:
        await asyncio.to_thread(cluster.stop)


async def row27(ctx: FaultContext) -> None:
    """/readyz follows the card store (a server, a cluster node), both ways."""
    await _card_server_goes_away(ctx)
    await _card_cluster_nodes_go_away(ctx)


#: The watchdog window of row 28 (MEMORY_WATCHDOG_SECONDS).
WINDOW = 8.0
#: The acceptance: the wedged worker is gone within the window + 5 s.
EXIT_WITHIN = WINDOW + 5.0
#: Budgets a window that short must outlast (refused otherwise, §11): the tick's plus the
#: shutdown grace (FAST's 1 s) below the window, every farm call's within the tick's.
BUDGETS = {
    "tick_timeout_seconds": 6.5,
    "route_wall_seconds": 6.0,
    "embedding_task_timeout_seconds": 6.0,
    "embedding_capacity_wait_seconds": 6.0,
}


async def _healthz(port: int) -> tuple[int, dict[str, Any]]:
    try:
        async with httpx.AsyncClient(timeout=0.5) as client:
            answer = await client.get(f"http://127.0.0.1:{port}/healthz")
    except httpx.HTTPError:
        return 0, {}
    return answer.status_code, answer.json()


def _start_wedged(ctx: FaultContext, mode: str, port: int) -> subprocess.Popen[bytes]:
    overrides = {
        **FAST,
        **BUDGETS,
        "discovery_base_url": ctx.sim.base_url,
        "watchdog_seconds": WINDOW,
        "serve_port": port,
    }
    env = worker_env(ctx.settings, overrides) | {"WEDGE_MODE": mode}
    with open(ctx.tmp_path / f"wedged-{mode}.log", "wb") as log_file:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.support.wedged_worker", "run", "--serve"],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[2],
        )


async def _wedge_trial(ctx: FaultContext, mode: str, chat: int, reason: str) -> None:
    runs = RunStore(ctx.redis, ctx.settings)
    rid = (await runs.enqueue(make_request(chat, hour=4))).run_id or ""
    port = free_port()
    proc = _start_wedged(ctx, mode, port)
    log = ctx.tmp_path / f"wedged-{mode}.log"
    try:

        async def claimed() -> bool:
            return (await runs.get(rid)).status is RunStatus.PROCESSING

        await eventually(claimed, timeout=60, every=0.02)
        since_claim = time.monotonic()
        wedged_bodies: list[dict[str, Any]] = []
        while proc.poll() is None:  # poll /healthz until the process is gone
            assert time.monotonic() - since_claim <= EXIT_WITHIN + 1, log.read_text()[-3000:]
            code, body = await _healthz(port)
            if code == 503:
                wedged_bodies.append(body)
            await asyncio.sleep(0.05)
        gone = time.monotonic() - since_claim
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
    text = log.read_text()
    print(f"{mode}: exit {proc.returncode} {gone:.2f} s after the claim (window {WINDOW} s)")
    assert proc.returncode == WEDGED_EXIT, text[-3000:]
    assert gone <= EXIT_WITHIN, (gone, text[-3000:])
    lines = [json.loads(line) for line in text.splitlines() if '"worker_wedged"' in line]
    assert [(e["event"], e["reason"], e["holding"]) for e in lines] == [
        ("worker_wedged", reason, 1)
    ], lines
    if mode == "hang_write":  # the loop still answers: the probe saw why first
        assert wedged_bodies, "no /healthz 503 before the exit"
        assert wedged_bodies[-1]["status"] == "wedged"
        assert wedged_bodies[-1]["reason"] == reason
    run = await runs.get(rid)
    assert (run.status, run.attempts, run.releases) == (RunStatus.QUEUED, 0, 1), run
    counters = await ctx.redis.hgetall(runs.keys.counters)
    assert int(counters[b"released:watchdog"]) >= 1

    fleet = Fleet(ctx.settings, ctx.tmp_path, {"discovery_base_url": ctx.sim.base_url})
    fleet.start(1)  # the restarted worker
    try:
        done = await completed_run(lambda: runs.get(rid), timeout=60)
    finally:
        fleet.stop_all()
    assert (done.attempts, done.error_log) == (1, []), fleet.logs()


async def row28(ctx: FaultContext) -> None:
    """A worker whose tick hangs releases its run and exits 70; restarted,
    the fleet completes the run uncharged."""
    await _wedge_trial(ctx, "hang_write", 2141, "slots_stalled")
    await _wedge_trial(ctx, "block_loop", 2142, "poll_loop_stalled")


ROWS: dict[int, Scenario] = {27: row27, 28: row28}
