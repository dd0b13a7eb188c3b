"""Fault-matrix row of the card cluster: a master killed -9 under load.

Row 29: real worker processes write their runs' cards to a private
3-master / 3-replica Valkey Cluster while the farm simulator serves them; in each of five
trials the master of a busy chat is killed -9 in the middle of the writes, a replica is
promoted, and the node is brought back (it rejoins as a replica) for the next trial.

Promised (§7 "Store faults"): whatever redis-py's cluster client raises during the
failover — ``ConnectionError``, ``ClusterDownError``, ``SlotNotCoveredError``, a
``RedisClusterException`` or the ``AttributeError`` of a slot whose node it just dropped —
is a store fault: the run is released with its attempt refunded, never failed. So after
every trial each run is completed with one attempt spent and an empty error log, every
completed run's cards are on the cluster, and no worker ever logged an unclosed cluster
connection (``Unclosed ClusterNode``: the client's connections are closed on every path).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import warnings
from collections import Counter
from collections.abc import Iterator
from functools import partial
from typing import Any

from memory_worker.cards import CardStore
from memory_worker.farmsim.faults import Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.storage.connections import cluster_from_url, retry_store_write
from tests.faults.context import FaultContext, Scenario
from tests.support.cluster import LocalCluster, revive
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually
from tests.support.replies import sync_command

#: Two workers of four slots each: many card writes in flight when the master dies.
LOAD = {"worker_concurrency": 4}
TRIALS = 5
RUNS_PER_TRIAL = 16
#: Kill the master once this many of a trial's runs completed (the rest are still writing).
KILL_AFTER = 4


@contextlib.contextmanager
def resource_warnings_shown() -> Iterator[None]:
    """Worker processes started inside print every ResourceWarning (unclosed sockets, nodes)."""
    before = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = "always::ResourceWarning"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONWARNINGS", None)
        else:
            os.environ["PYTHONWARNINGS"] = before


@contextlib.contextmanager
def unclosed_in_this_process() -> Iterator[list[str]]:
    """Every unclosed-connection report of this process's own cluster client (ResourceWarning
    or the event loop's exception handler), collected after a final garbage collection."""
    found: list[str] = []
    loop = asyncio.get_running_loop()
    handler = loop.get_exception_handler()
    # what earlier tests of this worker process left for the collector is not this row's:
    # collect it before recording (a full run failed this row twice, the row alone passes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()

    def record(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message"))
        if "nclosed" in message:  # an unclosed connection or transport, as for the warnings
            found.append(message)
        elif handler is not None:
            handler(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(record)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            yield found
            gc.collect()
        found.extend(str(w.message) for w in caught if "nclosed" in str(w.message))
    finally:
        loop.set_exception_handler(handler)


async def _completed(runs: RunStore, ids: list[str]) -> int:
    return sum(r.status is RunStatus.COMPLETED for r in await runs.get_many(ids))


async def _trial(
    trial: int, cluster: LocalCluster, runs: RunStore, cards: CardStore, fleet: Fleet
) -> None:
    first_chat = 9000 + trial * 100
    ids = []
    for i in range(RUNS_PER_TRIAL):
        result = await runs.enqueue(make_request(first_chat + i, hour=i % 24))
        assert result.run_id
        ids.append(result.run_id)
    if not fleet.workers:
        fleet.start(2)
    await eventually(lambda: _at_least(runs, ids, KILL_AFTER), timeout=60, every=0.01)
    tag = Keys(runs.settings.key_prefix).chat_tag(first_chat + RUNS_PER_TRIAL // 2)
    victim = cluster.master_of_slot(
        int(sync_command(cluster.nodes[0].client(), "CLUSTER KEYSLOT", tag))
    )
    cluster.kill(victim)
    await eventually(lambda: _at_least(runs, ids, RUNS_PER_TRIAL), timeout=90, every=0.05)
    for run in await runs.get_many(ids):
        assert run.status is RunStatus.COMPLETED
        assert (run.attempts, run.error_log) == (1, []), (trial, run.attempts, run.error_log)
        applied = partial(cards.has_applied, run.chat_id, run.id)  # our client meets it too
        assert await retry_store_write("check", applied, cap=0.2), (trial, run.id)
    revive(cluster, victim)


async def _at_least(runs: RunStore, ids: list[str], n: int) -> bool:
    return await _completed(runs, ids) >= n


async def row29(ctx: FaultContext) -> None:
    """A card-cluster master killed -9 during writes, 5 trials, nothing charged."""
    cluster = LocalCluster(ctx.tmp_path / "cluster", node_timeout_ms=1000).start()
    settings = ctx.settings.model_copy(update={"cards_url": cluster.url})
    runs = RunStore(ctx.redis, settings)
    client: Any = cluster_from_url(cluster.url)
    cards = CardStore(client, Keys(settings.key_prefix))
    ctx.sim.set_fault(settings.extraction_service, Fault(kind=FaultKind.SLOW, seconds=0.2))
    fleet = Fleet(
        settings,
        ctx.tmp_path,
        {"discovery_base_url": ctx.sim.base_url, "cards_url": cluster.url, **LOAD},
    )
    try:
        with resource_warnings_shown(), unclosed_in_this_process() as unclosed:
            for trial in range(TRIALS):
                await _trial(trial, cluster, runs, cards, fleet)
            fleet.stop_all()
            await client.aclose()
        logs = fleet.logs(tail=None)
        assert "Unclosed" not in logs, logs[-4000:]
        assert unclosed == [], unclosed  # what the loop or a ResourceWarning reported
        faults = Counter(
            event["error"]
            for event in (json.loads(line) for line in logs.splitlines() if line.startswith("{"))
            if event.get("event") == "run_store_fault"
        )
        print("store faults released across the trials:", dict(faults))
        assert sum(faults.values()) > 0  # the kills really met writes
        counters = await ctx.redis.hgetall(runs.keys.counters)
        assert not any(k.startswith((b"failed:", b"retired:")) for k in counters), counters
    finally:
        fleet.stop_all()
        await client.aclose()
        await asyncio.to_thread(cluster.stop)


ROWS: dict[int, Scenario] = {29: row29}
