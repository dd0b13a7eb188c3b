"""End-to-end (§3, §6): the gateway's promises across real worker processes and the farm.

User story: "two equal farm nodes share the load; a node ten times slower is passed over
until it recovers, without a breaker ever hearing of it; a node that answers 429 with a
Retry-After is left alone by every worker for that long; a requests_per_minute cap holds
across the fleet". Three worker processes, the loopback farm simulator, short windows:
the minute-long figures are ``bench/gateway.py``'s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually
from tests.support.routes import FARM_EMBEDDER, farm_target, route, write_routes

pytestmark = pytest.mark.slow

A, B = "llm-a", "llm-b"
JOB_SECONDS = 0.05


@pytest.fixture
async def farm() -> AsyncIterator[FarmSimulator]:
    async with FarmSimulator(run_seconds=JOB_SECONDS, embedder="hashed") as simulator:
        yield simulator


def extraction(*targets: dict[str, object]) -> Any:
    return route(*targets, slot_poll_seconds=0.05)


def target(service: str, **options: object) -> dict[str, object]:
    return {**farm_target(service, f"model-{service}"), **options}


async def start(
    settings: Settings,
    redis: Any,
    farm: FarmSimulator,
    tmp_path: Path,
    runs: int,
    *targets: dict[str, object],
    **overrides: object,
) -> Fleet:
    routes = write_routes(
        tmp_path, memory_extraction=extraction(*targets), embedding=route(FARM_EMBEDDER)
    )
    fleet = Fleet(
        settings,
        tmp_path,
        {"discovery_base_url": farm.base_url, "routes_file": str(routes), **overrides},
    )
    store = RunStore(redis, settings)
    for n in range(runs):
        await store.enqueue(make_request(n, hour=n % 24, texts=[f"I live in town {n}."]))
    fleet.start(3)
    await MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), settings).wake()
    await eventually(lambda: farm.submits(A) + farm.submits(B) > 0, timeout=60)
    return fleet


def submits(farm: FarmSimulator, service: str) -> int:
    return farm.stats().get(service, {}).get("submits", 0)


async def charged(redis: Any, settings: Settings) -> int:
    attempts = await redis.hgetall(Keys(settings.key_prefix).routing_attempts)
    return sum(int(v) for k, v in attempts.items() if b"|failure|" in k)


@pytest.mark.soak
async def test_equal_targets_share_and_a_slow_one_is_passed_over_until_it_recovers(
    settings: Settings, redis: Any, farm: FarmSimulator, tmp_path: Path
) -> None:
    fleet = await start(
        settings,
        redis,
        farm,
        tmp_path,
        2000,
        target(A, tier=0),
        target(B, tier=0),
        # 2 s: the slow node's 1 s answers stay in the window long enough that its
        # re-admission blips (each lasts until 3 slow samples land) are rare — with 1 s a
        # loaded CI host, at half the throughput, saw it at 16 % of a window's calls
        routing_latency_window_seconds=2.0,
        breaker_success_hold_seconds=0.2,  # a quarter of the window at most (a settings rule)
        routing_outlier_min_samples=3,
        routing_outlier_min_gap_ms=100,
    )
    try:
        await eventually(lambda: submits(farm, A) + submits(farm, B) >= 60, timeout=60)
        a0, b0 = submits(farm, A), submits(farm, B)
        await eventually(lambda: submits(farm, A) + submits(farm, B) >= a0 + b0 + 100, timeout=60)
        a1, b1 = submits(farm, A) - a0, submits(farm, B) - b0
        assert 0.3 <= a1 / (a1 + b1) <= 0.7, (a1, b1)  # equal nodes share

        farm.set_fault(B, Fault(FaultKind.SLOW, seconds=20 * JOB_SECONDS))  # 20x slower
        await asyncio.sleep(4.0)  # its slow successes land in the windows
        a2, b2 = submits(farm, A), submits(farm, B)
        await asyncio.sleep(8.0)  # its re-admission blips are a few calls a window, whatever
        slow_a, slow_b = submits(farm, A) - a2, submits(farm, B) - b2
        assert slow_b / (slow_a + slow_b) <= 0.15, (slow_a, slow_b)

        farm.clear_faults(B)  # recovered: back in rotation once its slow windows age out
        await asyncio.sleep(3.0)
        a3, b3 = submits(farm, A), submits(farm, B)
        await asyncio.sleep(4.0)
        back_a, back_b = submits(farm, A) - a3, submits(farm, B) - b3
        assert back_b / (back_a + back_b) >= 0.25, (back_a, back_b)
        assert await charged(redis, settings) == 0  # slowness never charged a breaker
    finally:
        fleet.stop_all()


async def test_retry_after_keeps_every_worker_off_the_target(
    settings: Settings, redis: Any, farm: FarmSimulator, tmp_path: Path
) -> None:
    fleet = await start(settings, redis, farm, tmp_path, 2000, target(A, tier=0), target(B, tier=0))
    try:
        await eventually(lambda: submits(farm, A) >= 10, timeout=60)
        farm.set_fault(
            A,
            Fault(
                FaultKind.SUBMIT_STATUS,
                status_code=429,
                message="too many requests",
                seconds=3,
                times=1,
            ),
        )
        seen: list[tuple[float, int, int]] = []  # (time, A's submits, A's rejections)

        async def watch() -> None:
            while True:
                stats = farm.stats().get(A, {})
                seen.append((time.monotonic(), stats.get("submits", 0), stats.get("rejected", 0)))
                await asyncio.sleep(0.01)

        watcher = asyncio.create_task(watch())
        await eventually(lambda: bool(seen) and seen[-1][2] >= 1, timeout=30)
        answered = next(t for t, _, rejected in seen if rejected >= 1)
        await asyncio.sleep(3.2)
        watcher.cancel()
        at = {round(t - answered, 2): n for t, n, _ in seen}

        def submits_at(offset: float) -> int:
            return max(n for t, n in at.items() if t <= offset)

        # calls admitted before the cooling landed may still arrive in its first moments
        assert submits_at(2.9) == submits_at(0.3), seen
        # then it serves again; on a loaded host the workers' next claim may take a while,
        # so the promise is "serves again", not "within 1.3 s of the cooling's end"
        cooled = submits_at(3.1)
        await eventually(lambda: submits(farm, A) > cooled, timeout=30)
        assert await charged(redis, settings) == 0
    finally:
        fleet.stop_all()


async def test_a_requests_per_minute_cap_holds_across_three_workers(
    settings: Settings, redis: Any, farm: FarmSimulator, tmp_path: Path
) -> None:
    fleet = await start(
        settings,
        redis,
        farm,
        tmp_path,
        2000,
        target(A, tier=0, requests_per_minute=120),
        target(B, tier=1),
    )
    try:
        await eventually(lambda: submits(farm, B) >= 20, timeout=60)  # demand exceeds the cap
        first, started = submits(farm, A), time.monotonic()
        await asyncio.sleep(6.0)
        served, elapsed = submits(farm, A) - first, time.monotonic() - started
        assert served <= 2 + 2 * elapsed + 1, served  # 2 a second, a burst of 2
        assert served >= 0.75 * 2 * elapsed, served  # a ceiling, not a throttle
    finally:
        fleet.stop_all()
