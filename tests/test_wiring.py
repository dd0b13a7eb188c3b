"""The production pipeline's assembly: gate, maintenance pacing, retention."""

from __future__ import annotations

from typing import Any

from memory_worker.run_store import RunStore
from memory_worker.settings import Settings
from memory_worker.wiring import WalkerGate, build_tick_runner
from tests.support.factories import make_request


async def test_maintenance_prunes_old_runs_once_per_period(settings: Settings, redis: Any) -> None:
    s = settings.model_copy(update={"completed_run_retention_days": 0.0})
    store = RunStore(redis, s)
    await store.enqueue(make_request(1))
    claim = await store.claim("w")
    assert claim is not None
    await store.complete(claim, {"cards": 0})
    pipeline = await build_tick_runner(s, redis)
    try:
        assert pipeline.maintenance is not None
        first = await pipeline.maintenance()
        assert "pruned=1" in first
        assert (await store.counts())["completed"] == 0
        second = await pipeline.maintenance()  # paced fleet-wide: not due again yet
        assert "pruned" not in second
        assert isinstance(pipeline.gate, WalkerGate)
        assert set(pipeline.gate.workflows) == {"memory_extraction", "embedding"}
        assert not await pipeline.gate.blocked()  # fresh breakers are closed
    finally:
        for close in pipeline.closers:
            await close()


async def test_the_route_gate_fails_open_on_a_store_fault(settings: Settings, redis: Any) -> None:
    """§7: an unreadable breaker never blocks the pipeline (the claim meets Redis next)."""
    from memory_worker.keys import Keys

    pipeline = await build_tick_runner(settings, redis)
    try:
        gate = pipeline.gate
        assert isinstance(gate, WalkerGate)
        target = gate.walker.routes.get("memory_extraction")
        assert target is not None
        breaker = Keys(settings.key_prefix).breaker(target.eligible[0].id)
        await redis.set(breaker, "not-a-hash")  # every read of it answers WRONGTYPE
        assert not await gate.blocked()
        assert gate.walker.bookkeeping_failures["route_gate"] == 1
    finally:
        for close in pipeline.closers:
            await close()
