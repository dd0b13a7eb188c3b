"""A degraded recall says why without the query's text (§11, §13): its ``degraded_reason``, its
``degraded_error`` with the whole chain a bot's logger would print (causes and their
messages), the library's log lines (rendered as the CLI's processes write them) and the
``memory_worker_reads_degraded_total`` series — while the embedder farm answers with an error
that quotes the query back (message text, a password, a card number in it).
"""

from __future__ import annotations

import dataclasses
import traceback
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest

from memory_worker.api import MemoryQueue
from memory_worker.cards import RunWrites, Scope
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.ops.metrics import MemoryCollector, read_sample
from memory_worker.settings import Settings
from memory_worker.storage.sampling import Sampler
from tests.support.canaries import MESSAGE_TEXTS, leaking_lines, leaks, log_lines
from tests.support.cards import T0, new
from tests.support.routes import farm_target, route, write_routes

CHAT = 8181
QUERY = " ".join(["Where does Alice live?", *MESSAGE_TEXTS])


def chain_text(error: BaseException) -> str:
    """What ``logging`` prints for ``exc_info=error``: the traceback of the whole chain."""
    return "".join(traceback.format_exception(error))


async def test_a_degraded_recall_names_no_query_text(
    settings: Settings, tmp_path: Path, sim: FarmSimulator, redis: Any
) -> None:
    echo = f"cannot embed input 'query: {QUERY}': upstream unavailable"
    sim.set_fault("*", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message=echo))
    routes = write_routes(
        tmp_path, embedding=route(farm_target("embedder", "e5", endpoint="encode"))
    )
    farm = settings.model_copy(
        update={
            "routes_file": routes,
            "discovery_base_url": sim.base_url,
            "embedding_dimension": 4,
            "breaker_failure_threshold": 100,  # every call reaches the farm
        }
    )
    card = dataclasses.replace(
        new("Alice lives in Lisbon", scope=Scope.CHAT, user=None, seed=None, at=T0),
        embedding=[0.5, 0.5, 0.5, 0.5],
    )
    async with await MemoryQueue.connect(settings=farm) as q:
        writes = RunWrites(observed_at=T0, cards=[card], embedding_model="e5")
        await q.cards.apply_run(CHAT, "run-1", writes, now=T0)
        with log_lines() as logged:
            hits = await q.recall(CHAT, QUERY, k=2)
            memory = await q.context(CHAT, query=QUERY)
    assert hits.degraded_error is not None
    assert memory.degraded_error is not None
    assert hits[0].card.fact_text == "Alice lives in Lisbon"  # found by its words
    for result in (hits, memory):
        error = result.degraded_error
        assert error is not None
        assert leaks(result.degraded_reason or "") == []
        assert leaks(repr(error.args)) == []
        assert error.__cause__ is not None  # the farm's error rides along for the bot
        assert leaking_lines(chain_text(error)) == [], chain_text(error)
    text = logged.getvalue()
    assert '"recall.degraded"' in text
    assert leaking_lines(text) == []

    sampler: Any = Sampler(lambda: read_sample(redis, farm), min_interval=0)
    await sampler.refresh()
    registry = CollectorRegistry()
    registry.register(MemoryCollector(sampler))
    exposed = generate_latest(registry).decode()
    assert "memory_worker_reads_degraded_total" in exposed
    assert leaking_lines(exposed) == []
