"""Operators see why a target takes no call (§6, §11, §15): cooling, caps, slowness, latency.

One fleet state — a target cooling after a Retry-After, one at its ``max_in_flight``, one
slow in its tier, one that spent its day's tokens — read by the console's breakers page and
by ``memory-worker breakers list``, which must both name the target and the reason.
"""

from __future__ import annotations

import asyncio
import json
import re
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


#: One latency window, long enough that the recorded samples are still read back on a
#: loaded host: at the default 15 s they age out between 15 and 30 s after recording, and a
#: CI run took 14 s from recording them to the CLI's answer.
WINDOW_S = "600"
#: The Retry-After the cooling target was given; what is left of it is read back as ``60 s
#: less the time between recording and reading`` (bounded by the test's own clock).
COOL_S = 60


def cooling_left_bounds(started: float) -> tuple[float, float]:
    """What a reader can have left of the ``COOL_S`` cooling recorded after ``started``."""
    return COOL_S - (time.time() - started), COOL_S


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
    settings = settings.model_copy(
        update={"routes_file": routes, "routing_latency_window_seconds": float(WINDOW_S)}
    )
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
    await store.record(COOL, permit, Outcome.NEUTRAL, report=Report(cool_ms=COOL_S * 1000))
    held = await store.admit(CAPPED, lease_seconds=600, limits=TargetLimits(max_in_flight=1))
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
    started = time.time()
    settings = await gateway_state(redis, settings, tmp_path)
    client = await make_client(settings)
    page = await (await client.get("/breakers")).text()
    low, high = cooling_left_bounds(started)

    def row(name: str) -> str:
        start = page.index(f'<tr data-target="{name}">')
        return page[start : page.index("</tr>", start)]

    # the page rounds what is left to whole seconds; a loaded host may take seconds to
    # build the client and answer, so the bound is the time this test took, not 1 s
    cooling = re.search(r"cooling (\d+)s \(Retry-After\)", row(COOL))
    assert cooling is not None
    assert round(low) <= int(cooling[1]) <= high
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
    started = time.time()
    settings = await gateway_state(redis, settings, tmp_path)
    env = {
        "MEMORY_ROUTES_FILE": str(settings.routes_file),
        "MEMORY_ROUTING_LATENCY_WINDOW_SECONDS": WINDOW_S,
    }
    listed = cli(settings, "breakers", "list", "--json", **env)
    assert listed.returncode == 0, listed.stderr
    low, high = cooling_left_bounds(started)
    gateway = {b["target"]: b["gateway"] for b in json.loads(listed.stdout)}
    # what is left of the cooling, whatever the CLI's start took (a CI run: 14 s, 46 s left)
    assert low - 0.001 <= gateway[COOL]["cooling_s"] <= high
    assert gateway[CAPPED]["capped"] == ["max_in_flight 1/1"]
    assert gateway[SLOW]["slow"] == "memory_extraction"
    assert gateway[FAST]["notes"] == []
    assert gateway[FAST]["latency_mean_ms"] == 200
    assert gateway[SPENT]["tokens_today"] == 150
    table = cli(settings, "breakers", "list", COLUMNS="250", **env)
    assert table.returncode == 0, table.stderr
    assert "Retry-After" in table.stdout
    assert "slow in" in table.stdout
