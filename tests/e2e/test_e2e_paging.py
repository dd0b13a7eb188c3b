"""End to end (§9): a 30 s farm outage under three real workers pages the admins exactly
twice — once when it opens, once when it ends.

User story: "the farm went down for half a minute at 3 a.m.: my phone buzzed once for the
outage and once for its end, and the second message says it cost no attempt."
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.paging.incident import RESOLVED
from memory_worker.paging.reports import page_counters, pending_pages
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from tests.support.admin_fakes import FakeTelegram
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually

pytestmark = pytest.mark.slow

UPSTREAM_ERROR = Fault(
    kind=FaultKind.JOB_FAILED,
    code="UPSTREAM_ERROR",
    message="[Errno -3] Temporary failure in name resolution",
)
OUTAGE_SECONDS = 30.0


@pytest.mark.soak
async def test_a_30s_outage_with_three_workers_pages_once_when_it_opens_and_once_when_it_ends(
    settings: Settings, redis: Any, sim: FarmSimulator, telegram: FakeTelegram, tmp_path: Path
) -> None:
    keys = Keys(settings.key_prefix)
    fleet = Fleet(
        settings,
        tmp_path,
        env_overrides={
            "discovery_base_url": sim.base_url,
            "admin_telegram_bot_token": "424242:telegram-token-e2e",
            "admin_telegram_chat_ids": "77",
            "telegram_api_base": telegram.base_url,
        },
    )
    store = RunStore(redis, settings)

    async def completed(n: int) -> bool:
        return (await store.counts())["completed"] >= n

    try:
        fleet.start(3)
        for i in range(6):
            await store.enqueue(make_request(100 + i, hour=i))
        await eventually(lambda: completed(6), timeout=90)
        loop = asyncio.get_running_loop()
        sim.set_fault("*", UPSTREAM_ERROR)
        down_at = loop.time()
        for i in range(10):
            await store.enqueue(make_request(200 + i, hour=i))
        await eventually(lambda: len(telegram.messages()) >= 1, timeout=OUTAGE_SECONDS)
        await asyncio.sleep(down_at + OUTAGE_SECONDS - loop.time())  # the outage lasts 30 s
        assert len(telegram.messages()) == 1  # however long it lasts: one opening page
        sim.clear_faults()
        await eventually(lambda: completed(16), timeout=120)

        async def quiet() -> bool:  # every page the outage will ever cause is queued and sent
            incident = await redis.exists(keys.admin_incident)
            return not incident and await pending_pages(redis, keys) == 0

        await eventually(quiet, timeout=60)
    finally:
        fleet.stop_all()

    texts = [m.json["text"] for m in telegram.messages()]
    assert [t.splitlines()[0].rsplit(" ", 1)[1] for t in texts] == [
        "circuit_open_exhaustion",
        RESOLVED,
    ], texts
    resolved = texts[1].splitlines()
    assert "attempts spent during it: 0" in resolved
    released = next(line for line in resolved if line.startswith("runs released during it: "))
    assert int(released.split(": ")[1].split()[0]) >= 1
    assert any(line.startswith("lasted: ") for line in resolved)
    counters = await page_counters(redis, keys)
    assert (counters["queued"], counters["sent"], counters["resolved"]) == (2, 2, 1)
    runs = await store.get_many(await _all_run_ids(redis, keys))
    assert all(r.attempts == 1 for r in runs)  # each completed on its first real attempt


async def _all_run_ids(redis: Any, keys: Keys) -> list[str]:
    from memory_worker.models import RunStatus

    members = await redis.zrange(keys.by_status(RunStatus.COMPLETED.value), 0, -1)
    return [m.decode() for m in members]
