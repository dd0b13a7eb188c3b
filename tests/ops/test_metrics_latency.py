"""Latency histograms (§11): what a worker process measured, on its own ``/metrics``.

The walker reports each attempt's duration and each capacity wait, the tick its claim's
round trip and each run from claim to settlement; ``run --serve`` serves them (the fleet's
series come from ``serve`` alone), and the whole exposition passes ``promtool check metrics``.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import httpx
import pytest
from arq.connections import ArqRedis
from prometheus_client import CollectorRegistry, generate_latest
from redis.asyncio import Redis

from llm_client import CapacityUnavailable
from memory_worker.pipeline.process_metrics import WorkerMetrics
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.runs import RunStore
from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from tests.ops.test_metrics import parse
from tests.support.factories import make_request
from tests.support.routing_fakes import FakeFarm, RecordingSink, make_walker, ok, routes_of

WF = "memory_extraction"
A = "farm/a"
ME = "test-worker"


def exposition(metrics: WorkerMetrics) -> str:
    registry = CollectorRegistry()
    registry.register(metrics)
    return generate_latest(registry).decode()


def count(text: str, name: str, **labels: str) -> float:
    """The ``_count`` sample of histogram ``name`` with exactly ``labels`` (and the worker's)."""
    return parse(text)[f"{name}_count"][tuple(sorted({"worker": ME, **labels}.items()))]


async def test_a_walk_reports_its_attempts_and_its_capacity_wait(
    redis: Redis, key_prefix: str
) -> None:
    metrics = WorkerMetrics(ME)
    walker = make_walker(redis, key_prefix, routes_of(A, slot_poll_seconds=0.01), RecordingSink())
    walker.observer = metrics
    answers = iter([CapacityUnavailable("no slots")])

    async def busy_once(timeout: float) -> str:
        answer = next(answers, None)
        if answer is not None:
            raise answer
        return "ok"

    farm = FakeFarm()
    farm.set(A, busy_once)
    await walker.call(WF, farm.attempt)
    farm.set(A, ok("ok"))
    await walker.call(WF, farm.attempt)
    text = exposition(metrics)
    name = "memory_worker_farm_call_seconds"
    assert count(text, name, workflow=WF, target=A, outcome="neutral") == 1
    assert count(text, name, workflow=WF, target=A, outcome="success") == 2
    assert count(text, "memory_worker_capacity_wait_seconds", workflow=WF) == 1  # the first call
    assert 'le="0.05"' in text
    assert 'le="900.0"' in text


async def test_a_failing_observer_never_fails_a_call(redis: Redis, key_prefix: str) -> None:
    class Broken:
        def attempt_finished(self, *args: Any) -> None:
            raise RuntimeError("observer down")

        def capacity_waited(self, *args: Any) -> None:
            raise RuntimeError("observer down")

    walker = make_walker(redis, key_prefix, routes_of(A), RecordingSink())
    walker.observer = Broken()
    farm = FakeFarm()
    farm.set(A, ok("served"))
    assert (await walker.call(WF, farm.attempt)).value == "served"
    assert walker.bookkeeping_failures["observer"] == 1


class Scripted:
    def __init__(self, *results: BaseException | None) -> None:
        self.results = list(results)

    async def __call__(self, run: Any, *, deadline: float) -> ProcessResult:
        result = self.results.pop(0)
        if result is not None:
            raise result
        return ProcessResult(summary={"cards": 0})


async def test_ticks_time_their_claims_and_runs(
    redis: ArqRedis, settings: Settings, key_prefix: str
) -> None:
    from tests.support.runner import tick_runner

    metrics = WorkerMetrics(ME)
    store = RunStore(redis, settings)
    for chat in (1, 2):
        await store.enqueue(make_request(chat, hour=chat))
    runner = tick_runner(
        settings=settings,
        redis=redis,
        processor=Scripted(None, CapacityUnavailable("no slots"), None),
        metrics=metrics,
    )
    outcomes = [await runner.tick(f"t{i}") for i in range(4)]
    assert outcomes == ["completed", "deferred", "completed", "idle"]
    text = exposition(metrics)
    assert count(text, "memory_worker_claim_seconds") == 4  # an empty claim is timed too
    assert count(text, "memory_worker_run_duration_seconds", outcome="completed") == 2
    assert count(text, "memory_worker_run_duration_seconds", outcome="deferred") == 1


def promtool_check(text: str) -> subprocess.CompletedProcess[str]:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (make promtool)")
    return subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30
    )


async def test_the_worker_endpoint_serves_them_and_promtool_accepts_it(
    redis: Redis, settings: Settings, key_prefix: str
) -> None:
    metrics = WorkerMetrics(ME)
    metrics.attempt_finished(WF, A, "success", 0.3)
    metrics.capacity_waited(WF, 1.2)
    metrics.run_settled("completed", 2.5)
    metrics.claim_answered(0.002)
    server = HealthServer(
        settings, reveal(settings.redis_url) or "", port=0, console=False, process_metrics=metrics
    )
    await server.start()
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            worker_text = (await client.get(server.base_url + "/metrics")).text
    finally:
        await server.stop()
    fleet = HealthServer(settings, reveal(settings.redis_url) or "", port=0, console=False)
    await fleet.start()
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            fleet_text = (await client.get(fleet.base_url + "/metrics")).text
    finally:
        await fleet.stop()
    assert (
        count(
            worker_text, "memory_worker_farm_call_seconds", workflow=WF, target=A, outcome="success"
        )
        == 1
    )
    assert "memory_worker_runs{" not in worker_text  # the fleet's series come from serve alone
    assert "memory_worker_runs{" in fleet_text
    assert "memory_worker_farm_call_seconds" not in fleet_text  # per process, not the fleet's
    for text in (worker_text, fleet_text):
        checked = promtool_check(text)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert checked.stdout.strip() == ""
