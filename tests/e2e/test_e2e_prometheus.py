"""End to end (§11): a real Prometheus, configured from deploy/prometheus/, scrapes a real
fleet — `serve` and three `run --serve` workers — and sees the farm-outage alert fire during
an outage and resolve after it.

User story: "I deploy the shipped scrape config and rules; when the farm goes down my
alert fires once for the route, and when it comes back the alert clears." The rules are
the shipped ones with a shorter ``for`` (3 s instead of minutes); their expressions are
untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from tests.support.factories import make_request
from tests.support.harness import eventually
from tests.support.prometheus import Prometheus
from tests.support.promtool import binary
from tests.support.scrape import ServingFleet

pytestmark = pytest.mark.slow

UPSTREAM_ERROR = Fault(
    kind=FaultKind.JOB_FAILED,
    code="UPSTREAM_ERROR",
    message="[Errno -3] Temporary failure in name resolution",
)
ALERT = "MemoryWorkerFarmOutage"


def _value(result: list[dict[str, Any]]) -> float:
    (sample,) = result
    return float(sample["value"][1])


async def _fresh(prometheus: Prometheus, query: str) -> float:
    """``query``'s one value once it has one: a scrape a loaded host slowed past its timeout
    leaves the series stale (no sample) until the next scrape answers."""
    found: list[dict[str, Any]] = []

    async def sampled() -> bool:
        found[:] = await prometheus.query(query)
        return bool(found)

    await eventually(sampled, timeout=30, every=0.5)
    return _value(found)


async def test_a_real_prometheus_sees_the_farm_outage_alert_fire_and_resolve(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    binary("prometheus")  # skips, saying why, on a machine without the package
    quick = {"breaker_cooldown_seconds": 5.0}
    fleet = ServingFleet(
        settings.model_copy(update={"metrics_cache_seconds": 0.5, **quick}),
        tmp_path,
        {"discovery_base_url": sim.base_url, **quick},
    )
    prometheus = Prometheus(tmp_path)
    store = RunStore(redis, settings)
    try:
        await fleet.start_serve()
        fleet.start_workers(3)
        await fleet.wait_serving()
        hosts = [url.removeprefix("http://") for url in fleet.urls]
        await prometheus.start(fleet=hosts[0], workers=hosts[1:], shorter_for={ALERT: "3s"})

        async def scraped() -> bool:
            return await prometheus.targets_up() == 4 and bool(
                await prometheus.query("memory_worker_workers")
            )

        await eventually(scraped, timeout=60, every=0.5)
        # a counter no event has touched yet exists at 0; the fleet is counted once
        released = 'memory_worker_runs_released_total{reason="provider_unavailable"}'
        assert await _fresh(prometheus, f"sum({released})") == 0
        assert await _fresh(prometheus, "sum(memory_worker_workers)") == 3
        assert await prometheus.alerts(ALERT) == []

        sim.set_fault("*", UPSTREAM_ERROR)
        for i in range(6):
            await store.enqueue(make_request(700 + i, hour=i))

        async def firing() -> bool:
            alerts = await prometheus.alerts(ALERT)
            return any(a["state"] == "firing" for a in alerts)

        await eventually(firing, timeout=90, every=0.5)
        alerts = await prometheus.alerts(ALERT)
        workflows = [a["labels"]["workflow"] for a in alerts]
        assert len(workflows) == len(set(workflows))  # once per route, not once per endpoint
        assert "memory_extraction" in workflows  # (merge shares its target: open too)
        assert {a["labels"]["severity"] for a in alerts} == {"warning"}
        # the first releases show in increase(): the series was there at 0 before them
        assert await _fresh(prometheus, f"sum(increase({released}[1m]))") > 0

        sim.clear_faults()

        async def resolved() -> bool:
            return await prometheus.alerts(ALERT) == []

        await eventually(resolved, timeout=120, every=0.5)

        async def drained() -> bool:
            return (await store.counts())["completed"] == 6

        await eventually(drained, timeout=120)

        async def closed() -> bool:  # the newest sample may predate the close on a slow host
            return await _fresh(prometheus, "max(memory_worker_route_open)") == 0

        await eventually(closed, timeout=60, every=0.5)
    finally:
        prometheus.stop()
        await fleet.stop()
