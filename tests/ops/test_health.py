"""Health and readiness (§11): /healthz alive, /readyz follows Redis and the worker loop,
and a farm outage shows in the body, not as unreadiness."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from llm_client import BackendUnavailable
from memory_worker.ops.health import Verdict, readiness
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.embedded import EmbeddedValkey
from tests.support.factories import make_request
from tests.support.routing_fakes import trip_first_target
from tests.support.runner import tick_runner

NOW = 1_000_000


def _readiness(**changes: Any) -> Verdict:
    """The verdict for a healthy worker at ``NOW`` (60 s stall limit) with ``changes`` applied."""
    return readiness(
        **{
            "redis_ok": True,
            "runs_worker": True,
            "loop_heartbeat_ms": NOW,
            "now_ms": NOW,
            "stall_seconds": 60.0,
            **changes,
        }
    )


@pytest.mark.parametrize(
    ("redis_ok", "runs_worker", "heartbeat", "ready", "problems"),
    [
        (True, False, None, True, ()),
        (False, False, None, False, ("redis_unreachable",)),
        (True, True, NOW - 1_000, True, ()),
        (True, True, NOW - 60_000, True, ()),
        (True, True, NOW - 60_001, False, ("worker_loop_stalled",)),
        (True, True, None, False, ("worker_starting",)),
        (False, True, NOW - 61_000, False, ("redis_unreachable", "worker_loop_stalled")),
    ],
    ids=[
        "serve-only",
        "redis-down",
        "fresh-loop",
        "at-threshold",
        "stalled",
        "starting",
        "both",
    ],
)
def test_readiness_decision(
    redis_ok: bool,
    runs_worker: bool,
    heartbeat: int | None,
    ready: bool,
    problems: tuple[str, ...],
) -> None:
    verdict = _readiness(redis_ok=redis_ok, runs_worker=runs_worker, loop_heartbeat_ms=heartbeat)
    assert verdict.ready is ready
    assert verdict.problems == problems


async def get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=5) as client:
        return await client.get(url)


async def test_readyz_follows_redis_within_two_seconds(
    own_valkey: EmbeddedValkey, tmp_path: Path
) -> None:
    settings = Settings(redis_url=own_valkey.url, key_prefix="h:", data_dir=tmp_path / "var")
    server = HealthServer(settings, own_valkey.url, port=0)
    await server.start()
    try:
        assert (await get(server.base_url + "/healthz")).status_code == 200
        ready = await get(server.base_url + "/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["redis"]["ok"] is True

        own_valkey.stop()
        gone = time.monotonic()
        while True:
            answer = await get(server.base_url + "/readyz")
            if answer.status_code == 503:
                break
            assert time.monotonic() - gone < 2.0, "readyz still 200 two seconds after Redis left"
            await asyncio.sleep(0.05)
        assert time.monotonic() - gone < 2.0
        assert answer.json()["problems"] == ["redis_unreachable"]
        assert (await get(server.base_url + "/healthz")).status_code == 200  # still alive

        back = EmbeddedValkey(tmp_path / "valkey").ensure()  # the same socket
        try:
            deadline = time.monotonic() + 10
            while (await get(server.base_url + "/readyz")).status_code != 200:
                assert time.monotonic() < deadline, "readyz did not recover"
                await asyncio.sleep(0.05)
        finally:
            back.stop()
    finally:
        await server.stop()


class Unreachable:
    """A processor whose farm is down (what the Discovery client raises on UPSTREAM_ERROR)."""

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        raise BackendUnavailable("UPSTREAM_ERROR: name resolution failed", code="UPSTREAM_ERROR")


async def test_farm_outage_is_ready_with_the_outage_in_the_body(
    settings: Settings, redis: Any
) -> None:
    store = RunStore(redis, settings)
    await store.enqueue(make_request(5))
    pipeline = tick_runner(settings=settings, redis=redis, processor=Unreachable())
    await pipeline.heartbeat()
    assert pipeline.last_loop_ms == 0  # the side heartbeat no longer feeds readiness
    pipeline.last_loop_ms = int(time.time() * 1000)  # what a good poll iteration records
    assert await pipeline.tick("job-1") == "deferred"  # released, deferral recorded
    target = await trip_first_target(redis, settings)

    server = HealthServer(
        settings,
        reveal(settings.redis_url) or "",
        port=0,
        worker_heartbeat=lambda: pipeline.last_loop_ms,
    )
    await server.start()
    try:
        answer = await get(server.base_url + "/readyz")
    finally:
        await server.stop()
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "ready"
    assert body["farm_outage"] is True
    assert body["pipeline_deferred_since"] is not None
    assert body["open_breakers"] == [target]
    assert body["ticks"]["delayed"] == 1
    assert body["worker"]["loop_heartbeat_age_s"] < 5
    run = (await store.list_runs())[0]
    assert run.attempts == 0
    assert run.releases == 1


async def test_stalled_worker_loop_is_unready(settings: Settings, redis: Any) -> None:
    stale = int(time.time() * 1000) - int(settings.readiness_stall_seconds * 1000) - 5_000
    server = HealthServer(
        settings, reveal(settings.redis_url) or "", port=0, worker_heartbeat=lambda: stale
    )
    await server.start()
    try:
        answer = await get(server.base_url + "/readyz")
        starting = HealthServer(
            settings, reveal(settings.redis_url) or "", port=0, worker_heartbeat=lambda: None
        )
        await starting.start()
        try:
            before_start = await get(starting.base_url + "/readyz")
        finally:
            await starting.stop()
    finally:
        await server.stop()
    assert answer.status_code == 503
    assert answer.json()["problems"] == ["worker_loop_stalled"]
    assert before_start.status_code == 503
    assert before_start.json()["problems"] == ["worker_starting"]


@pytest.mark.parametrize(
    ("tick_age", "problems"),
    [
        (None, ()),  # no tick running
        (10.0, ()),  # within its budget
        (60.0, ()),  # exactly at the budget
        (60.5, ("tick_past_budget",)),  # wedged tick (§11)
    ],
    ids=["idle", "working", "at-budget", "past-budget"],
)
def test_readiness_follows_the_ticks(tick_age: float | None, problems: tuple[str, ...]) -> None:
    verdict = _readiness(oldest_tick_age_s=tick_age, tick_budget_s=60.0)
    assert verdict.problems == problems
    assert verdict.ready is (not problems)


@pytest.mark.parametrize(
    ("refused", "store_problems", "problems"),
    [
        ((), (), ()),
        (("noperm",), (), ("redis_refuses_writes",)),  # an ACL the probe cannot see (§7)
        (("misconf",), ("redis_refuses_writes",), ("redis_refuses_writes",)),  # named once
    ],
    ids=["none-owed", "owed-noperm", "owed-and-probed"],
)
def test_a_worker_owing_a_refused_settlement_is_unready(
    refused: tuple[str, ...], store_problems: tuple[str, ...], problems: tuple[str, ...]
) -> None:
    verdict = _readiness(settlements_refused=refused, store_problems=store_problems)
    assert verdict.problems == problems
    assert verdict.ready is (not problems)


async def test_a_tick_past_its_budget_is_unready(settings: Settings, redis: Any) -> None:
    fresh = int(time.time() * 1000)
    wedged = settings.tick_timeout_seconds + 1
    server = HealthServer(
        settings,
        reveal(settings.redis_url) or "",
        port=0,
        worker_heartbeat=lambda: fresh,
        worker_tick_age=lambda: wedged,
    )
    await server.start()
    try:
        answer = await get(server.base_url + "/readyz")
    finally:
        await server.stop()
    assert answer.status_code == 503
    assert answer.json()["problems"] == ["tick_past_budget"]
    assert answer.json()["worker"]["oldest_tick_age_s"] == wedged
