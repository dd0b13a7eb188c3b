"""End-to-end (§5, §6, §7): routed failover and breakers in real worker processes.

User story: "the primary farm target is down; runs still complete on the
fallback without spending attempts, and once every target is down the fleet
defers to one probe per interval and the admins hear about it once".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llm_client import RedisEventLog
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually
from tests.support.routes import FARM_EMBEDDER, farm_target, route, routes_toml

pytestmark = pytest.mark.slow

FALLBACK = farm_target("llm-openai", "fallback-model")
ROUTES = routes_toml(
    memory_extraction=route(farm_target("llm-primary", "primary-model"), FALLBACK, max_hops=4),
    embedding=route(FARM_EMBEDDER),
    memory_merge=route(FALLBACK),
)

DOWN = Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="[Errno -3] dns")


@pytest.fixture
def fleet(settings: Settings, sim: FarmSimulator, tmp_path: Path) -> Any:
    routes = tmp_path / "routes.toml"
    routes.write_text(ROUTES)
    fleet = Fleet(
        settings,
        tmp_path,
        env_overrides={"discovery_base_url": sim.base_url, "routes_file": str(routes)},
    )
    yield fleet
    fleet.stop_all()


async def test_runs_complete_on_the_fallback_without_spending_attempts(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    store = RunStore(redis, settings)
    ids = [(await store.enqueue(make_request(chat, hour=chat))).run_id for chat in range(8)]
    sim.set_fault("llm-primary", DOWN)
    fleet.start(2)
    from memory_worker.api import MemoryQueue
    from memory_worker.storage.connections import RedisHandle

    await MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), settings).wake()

    async def done() -> bool:
        return (await store.counts())["completed"] == 8

    await eventually(done, timeout=60)
    runs = await store.get_many([i for i in ids if i])
    assert all(r.attempts == 1 and r.error_log == [] and r.releases == 0 for r in runs)
    assert sim.stats()["llm-openai"]["succeeded"] >= 8
    # the primary's breaker opened after 5 charged failures (plus calls already in
    # flight on the fleet's 4 slots); later runs skipped it
    assert sim.submits("llm-primary") <= 5 + 4
    events = await RedisEventLog(redis, Keys(settings.key_prefix)).recent(limit=200)
    assert any(
        e.type == "circuit_opened" and e.target == "llm-primary/primary-model" for e in events
    )


async def test_all_targets_down_defers_probes_and_pages_once(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    store = RunStore(redis, settings)
    for chat in range(20):
        await store.enqueue(make_request(chat, hour=chat))
    sim.set_fault("*", DOWN)
    fleet.env_overrides["consolidation_backend_retry_interval"] = 0.5
    fleet.start(3)
    from memory_worker.api import MemoryQueue
    from memory_worker.storage.connections import RedisHandle

    await MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), settings).wake()

    def farm_calls() -> int:
        return sum(service["submits"] for service in sim.stats().values())

    log = RedisEventLog(redis, Keys(settings.key_prefix))

    async def extraction_exhausted() -> bool:  # every extraction target's breaker is open
        events = await log.recent(limit=500)
        return any(
            e.type == "circuit_open_exhaustion" and e.workflow == "memory_extraction"
            for e in events
        )

    await eventually(extraction_exhausted, timeout=60)
    import time

    # at most one fail-open probe per interval, fleet-wide (2 of slack for the breakers still
    # opening): the next 8 farm calls take at least 6 intervals. Observed, not slept for —
    # and a fleet that went silent fails here too.
    before, started = farm_calls(), time.monotonic()
    await eventually(lambda: farm_calls() >= before + 8, timeout=30)
    assert time.monotonic() - started >= (8 - 2) * 0.5
    counts = await store.counts()
    assert counts["failed"] == 0
    assert counts["retired"] == 0
    events = await RedisEventLog(redis, Keys(settings.key_prefix)).recent(limit=500)
    assert any(e.type == "circuit_open_exhaustion" for e in events)
    logs = "\n".join(w.log() for w in fleet.workers)
    pages = [
        json.loads(line)
        for line in logs.splitlines()
        if line.startswith("{") and '"admin.page_not_configured"' in line
    ]
    by_key: dict[str, int] = {}
    for page in pages:
        by_key[page["dedupe_key"]] = by_key.get(page["dedupe_key"], 0) + 1
    assert by_key  # the admins heard about it…
    assert all(n == 1 for n in by_key.values())  # …once per incident, not once per probe
    runs = await store.list_runs(limit=50)
    assert all(r.status in (RunStatus.QUEUED, RunStatus.PROCESSING) for r in runs)


async def test_a_killed_prober_blocks_its_workflow_for_one_lease_at_most(
    settings: Settings, redis: Any, redis_url: str, sim: FarmSimulator, tmp_path: Path
) -> None:
    """Acceptance of §5 with the defaults (30 s lease, 15 s probe interval): kill -9 a
    worker during a half-open probe, bring the farm back, start a fresh worker — the first run
    completes within probe interval + lease (it took ≈905 s when the permit lasted the call's
    whole budget)."""
    from tests.faults.context import FaultContext
    from tests.faults.rows_routing import prober_kill_recovery

    defaults = Settings()
    lease, interval = defaults.breaker_permit_lease_seconds, 15.0
    ctx = FaultContext(
        settings=settings, redis=redis, redis_url=redis_url, sim=sim, tmp_path=tmp_path
    )
    figures = await prober_kill_recovery(ctx, lease=lease, interval=interval)
    print(f"prober kill -9 → first completion after the farm's return: {figures}")
    assert figures["lease_left_s"] <= lease + 0.5
    assert figures["first_completion_s"] <= interval + lease
