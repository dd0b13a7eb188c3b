"""Operators see why a target takes no call (§6, §11, §15): cooling, caps, slowness, latency.

One fleet state — a target cooling after a Retry-After, one at its ``max_in_flight``, one
slow in its tier, one that spent its day's tokens — read by the console's breakers page and
by ``memory-worker breakers list``, which must both name the target and the reason.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from llm_client import Outcome, TargetLimits
from llm_client._gateway.target import Report
from memory_worker.settings import Settings
from memory_worker.wiring import breaker_store
from tests.support.console import MakeClient
from tests.support.console import make_client as make_client  # the fixture
from tests.support.harness import cli
from tests.support.routes import farm_target, route, write_routes

COOL, CAPPED, FAST, SLOW, SPENT = (
    "cool/m",
    "capped/m",
    "fast/m",
    "slow/m",
    "spent/m",
)


def target(name: str, **options: object) -> dict[str, object]:
    provider = name.split("/")[0]
    return {**farm_target(f"svc-{provider}", "m"), "provider": provider, **options}


async def gateway_state(redis: Any, settings: Settings, tmp_path: Path) -> Settings:
    routes = write_routes(
        tmp_path,
        memory_extraction=route(
            target(COOL, tier=0),
            target(CAPPED, tier=0, max_in_flight=1),
            target(FAST, tier=1),
            target(SLOW, tier=1),
            target(SPENT, tier=2, tokens_per_day=100),
        ),
    )
    settings = settings.model_copy(update={"routes_file": routes})
    store = breaker_store(redis, settings)
    # the tokens are "today's" until 00:00 UTC: a test started in the day's last minute
    # would read them back as yesterday's (a CI run that crossed midnight did), so it
    # records them after the day turns
    left = 86_400 - time.time() % 86_400
    if left < 60:
        await asyncio.sleep(left + 0.5)
    now = int(time.time() * 1000)
    permit = await store.acquire(COOL, lease_seconds=5)
    assert permit is not None
    await store.record(COOL, permit, Outcome.NEUTRAL, report=Report(cool_ms=60_000))
    held = await store.admit(CAPPED, lease_seconds=60, limits=TargetLimits(max_in_flight=1))
    assert held.permit is not None
    for name, ms in ((FAST, 200), (SLOW, 2_400)):
        for _ in range(6):
            p = await store.acquire(name, lease_seconds=5)
            assert p is not None
            await store.record(name, p, Outcome.SUCCESS, report=Report(elapsed_ms=ms))
    p = await store.acquire(SPENT, lease_seconds=5)
    assert p is not None
    await store.record(
        SPENT, p, Outcome.SUCCESS, now_ms=now, report=Report(elapsed_ms=90, tokens=150)
    )
    return settings


async def test_the_breakers_page_says_why_each_target_is_passed_over(
    redis: Any, settings: Settings, tmp_path: Path, make_client: MakeClient
) -> None:
    settings = await gateway_state(redis, settings, tmp_path)
    client = await make_client(settings)
    page = await (await client.get("/breakers")).text()

    def row(name: str) -> str:
        start = page.index(f'<tr data-target="{name}">')
        return page[start : page.index("</tr>", start)]

    assert "cooling 60s (Retry-After)" in row(COOL) or "cooling 59s (Retry-After)" in row(COOL)
    assert "capped: max_in_flight 1/1" in row(CAPPED)
    assert "slow in memory_extraction: 2400 ms vs tier median 200 ms over 6 calls" in row(SLOW)
    assert "tokens_per_day 150/100 until 00:00 UTC" in row(SPENT)
    assert "takes calls" in row(FAST)
    assert "200 ms" in row(FAST)
    histogram = page[page.index('<table id="latency">') :]
    fast = histogram[histogram.index(f'<tr data-target="{FAST}">') :]
    assert "6</td>" in fast[: fast.index("</tr>")]  # six calls in the ≤0.25s bucket
    assert "tier 1" in row(SLOW)


async def test_breakers_list_says_it_too(redis: Any, settings: Settings, tmp_path: Path) -> None:
    settings = await gateway_state(redis, settings, tmp_path)
    routes = str(settings.routes_file)
    listed = cli(settings, "breakers", "list", "--json", MEMORY_ROUTES_FILE=routes)
    assert listed.returncode == 0, listed.stderr
    gateway = {b["target"]: b["gateway"] for b in json.loads(listed.stdout)}
    assert gateway[COOL]["cooling_s"] > 50
    assert gateway[CAPPED]["capped"] == ["max_in_flight 1/1"]
    assert gateway[SLOW]["slow"] == "memory_extraction"
    assert gateway[FAST]["notes"] == []
    assert gateway[FAST]["latency_mean_ms"] == 200
    assert gateway[SPENT]["tokens_today"] == 150
    table = cli(settings, "breakers", "list", MEMORY_ROUTES_FILE=routes, COLUMNS="250")
    assert table.returncode == 0, table.stderr
    assert "Retry-After" in table.stdout
    assert "slow in" in table.stdout
