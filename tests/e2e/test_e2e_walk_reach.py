"""End-to-end (§6): the walk reaches every healthy candidate of its route.

User story: "five farm targets fail, a sixth is healthy; the run completes on it at its
first attempt" — the walk's ceiling (``max_hops``, 64 by default) is a safety limit, not a
budget of four hops that stops short of the healthy target until the failing ones' breakers
open. A real worker process against the farm simulator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually
from tests.support.routes import FARM_EMBEDDER, farm_target, route, routes_toml

pytestmark = pytest.mark.slow

FAILING = [f"llm-down-{i}" for i in range(1, 6)]
HEALTHY = "llm-up"
#: Six targets, one a tier, so every walk tries them in this order (no routes option:
#: the defaults' ceiling applies).
ROUTES = routes_toml(
    memory_extraction=route(
        *({**farm_target(s, "m"), "tier": i} for i, s in enumerate([*FAILING, HEALTHY]))
    ),
    embedding=route(FARM_EMBEDDER),
    memory_merge=route(farm_target(HEALTHY, "m")),
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


async def test_a_healthy_sixth_target_behind_five_failing_ones_serves_the_run_at_once(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    store = RunStore(redis, settings)
    run_id = (await store.enqueue(make_request(1, hour=1))).run_id
    assert run_id is not None
    for service in FAILING:
        sim.set_fault(service, DOWN)
    fleet.start(1)
    from memory_worker.api import MemoryQueue
    from memory_worker.storage.connections import RedisHandle

    await MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), settings).wake()

    async def done() -> bool:
        return (await store.counts())["completed"] == 1

    await eventually(done, timeout=90)
    (run,) = await store.get_many([run_id])
    assert (run.attempts, run.releases, run.error_log) == (1, 0, [])
    # one walk: each failing target once, then the healthy sixth
    assert [sim.submits(s) for s in FAILING] == [1] * 5
    assert sim.stats()[HEALTHY]["succeeded"] >= 1
