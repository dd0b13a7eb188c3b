"""The production pipeline's assembly: gate, maintenance pacing, retention."""

from __future__ import annotations

from typing import Any

import pytest

from memory_worker.pipeline.gate import WalkerGate
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.wiring import build_tick_runner
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


#: Every breaker and walker setting, each moved off its default (§5, §6).
ROUTING_SETTINGS: dict[str, float | int] = {
    "breaker_failure_threshold": 7,
    "breaker_rate_min_calls": 11,
    "breaker_rate_window_seconds": 45.0,
    "breaker_rate_threshold": 0.6,
    "breaker_cooldown_seconds": 12.0,
    "breaker_cooldown_max_seconds": 90.0,
    "breaker_timeout_min_slice_seconds": 8.0,
    "breaker_permit_lease_seconds": 9.0,
    "breaker_success_hold_seconds": 0.4,
    "consolidation_backend_retry_interval": 6.0,
}


def test_every_routing_setting_is_a_field_the_test_moves() -> None:
    """A new ``breaker_*`` setting must join :data:`ROUTING_SETTINGS` (and the check below)."""
    fields = {name for name in Settings.model_fields if name.startswith("breaker_")}
    assert fields <= set(ROUTING_SETTINGS)


async def test_the_bot_and_the_worker_get_the_same_walker(settings: Settings, redis: Any) -> None:
    """One factory: the bot's recall walker and the worker's honour every breaker and permit
    setting alike (the bot's once ignored the permit lease)."""
    from memory_worker.api import MemoryQueue
    from memory_worker.storage.connections import RedisHandle

    custom = settings.model_copy(update=ROUTING_SETTINGS)
    pipeline = await build_tick_runner(custom, redis)
    queue = MemoryQueue(RedisHandle(redis, reveal(custom.redis_url) or ""), custom)
    try:
        assert isinstance(pipeline.gate, WalkerGate)
        worker, bot = pipeline.gate.walker, queue._recall_walker()
        for walker in (worker, bot):
            config, breakers = walker.config, walker.breakers.config
            assert config.permit_lease_seconds == 9.0
            assert config.probe_interval_seconds == 6.0
            assert (breakers.failure_threshold, breakers.rate_min_calls) == (7, 11)
            assert (breakers.rate_window_seconds, breakers.rate_threshold) == (45.0, 0.6)
            assert (breakers.cooldown_seconds, breakers.cooldown_max_seconds) == (12.0, 90.0)
            assert breakers.timeout_min_slice_seconds == 8.0
        assert worker.config == bot.config
        assert worker.breakers.config == bot.breakers.config
        assert pipeline.carry.hold_seconds == 0.4  # the worker's held successes (the bot's
        # recall records at once: it has no carry)
        assert worker.routes == bot.routes
    finally:
        await queue.close()
        for close in pipeline.closers:
            await close()


def test_the_documented_arq_path_names_the_worker_settings(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arq memory_worker.worker.WorkerSettings`` (docs/cli.md) resolves, lazily."""
    from arq.connections import RedisSettings
    from arq.utils import import_string

    from memory_worker.settings import get_settings

    monkeypatch.setenv("REDIS_URL", redis_url)
    get_settings.cache_clear()
    try:
        worker_settings = import_string("memory_worker.worker.WorkerSettings")
        names = {getattr(f, "name", None) or f.__name__ for f in worker_settings.functions}
        assert "memory_tick" in names
        assert worker_settings.redis_settings == RedisSettings.from_dsn(redis_url)
    finally:
        get_settings.cache_clear()
