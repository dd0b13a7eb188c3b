"""The watchdog (§11): the liveness policy as a table, the shell with
an injected clock, release and exit, ``/healthz`` 503 once wedged, and the progress a real
tick records. The real-process end to end is fault row 28 (``tests/faults/rows_health.py``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from memory_worker.pipeline.processing import ProcessResult
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.worker.watchdog import WEDGED_EXIT, Liveness, Watchdog, judge
from tests.support.clock import ManualClock
from tests.support.factories import make_request
from tests.support.logs import capture_logs
from tests.support.runner import tick_runner

W = 100.0  # the window of the table


@pytest.mark.parametrize(
    ("poll", "slots", "stopping", "expected"),
    [
        (990.0, {}, False, Liveness(False)),
        (900.0, {}, False, Liveness(False)),  # exactly the window: not yet
        (899.0, {}, False, Liveness(True, "poll_loop_stalled", 101.0)),
        (990.0, {"t1": 950.0}, False, Liveness(False)),
        (990.0, {"t1": 850.0}, False, Liveness(True, "slots_stalled", 150.0)),
        (990.0, {"t1": 850.0, "t2": 980.0}, False, Liveness(False)),  # one slot still moves
        (990.0, {"t1": 850.0, "t2": 880.0}, False, Liveness(True, "slots_stalled", 120.0)),
        (500.0, {}, True, Liveness(False)),  # a stopping worker's loop is idle by design
        (500.0, {"t1": 700.0}, True, Liveness(True, "slots_stalled", 300.0)),
        (899.0, {"t1": 850.0}, False, Liveness(True, "poll_loop_stalled", 101.0)),
    ],
    ids=[
        "all-fresh",
        "poll-at-window",
        "poll-stalled",
        "slot-within-window",
        "only-slot-stalled",
        "one-slot-of-two-stalled",
        "every-slot-stalled",
        "stopping-idle-loop",
        "stopping-stuck-slot",
        "both-stalled-loop-first",
    ],
)
def test_the_liveness_policy(
    poll: float, slots: dict[str, float], stopping: bool, expected: Liveness
) -> None:
    verdict = judge(now=1000.0, window=W, poll_progress=poll, slots=slots, stopping=stopping)
    assert verdict == expected


@dataclass
class Pipeline:
    """What the watchdog reads of a :class:`TickRunner`."""

    poll_progress: float = 0.0
    progress: dict[str, float] = field(default_factory=dict)
    unsettled: dict[str, Any] = field(default_factory=dict)
    stopping: bool = False
    closers: list[Any] = field(default_factory=list)


def test_a_wedge_logs_why_stops_claiming_releases_and_exits_70() -> None:
    clock = ManualClock()
    pipeline = Pipeline(progress={"tick-1": 0.0}, unsettled={"r1": "claim-1", "r2": "claim-2"})
    released: list[list[Any]] = []
    exits: list[int] = []

    def release(claims: list[Any], reason: str) -> int:
        assert reason == "watchdog"
        released.append(claims)
        return len(claims)

    dog = Watchdog(
        pipeline,  # type: ignore[arg-type]
        window=30.0,
        release=release,
        exit=exits.append,
        clock=clock,
        linger=0.0,
    )
    clock.now = 30.0
    assert not dog.check()  # at the window: alive
    assert exits == []
    pipeline.poll_progress = 25.0  # the loop moves; the slot does not
    clock.now = 31.0
    with capture_logs() as logs:
        assert dog.check()
    assert exits == [WEDGED_EXIT]
    assert released == [["claim-1", "claim-2"]]
    assert pipeline.stopping  # nothing more is claimed meanwhile
    wedged = [e for e in logs if e["event"] == "worker_wedged"]
    assert len(wedged) == 1
    assert (wedged[0]["reason"], wedged[0]["holding"]) == ("slots_stalled", 2)
    assert [e["released"] for e in logs if e["event"] == "worker_wedged_exit"] == [2]
    pipeline.progress["tick-1"] = 31.0  # whatever happens after, the verdict stays
    assert dog.verdict().wedged


def test_a_failed_release_still_exits() -> None:
    exits: list[int] = []

    def release(claims: list[Any], reason: str) -> int:
        raise ConnectionError("redis gone")

    pipeline = Pipeline(poll_progress=-100.0, unsettled={"r1": "claim"})
    dog = Watchdog(
        pipeline,  # type: ignore[arg-type]
        window=10.0,
        release=release,
        exit=exits.append,
        clock=ManualClock(),
        linger=0.0,
    )
    with capture_logs() as logs:
        assert dog.check()
    assert exits == [WEDGED_EXIT]
    assert "worker_wedged_release_failed" in [e["event"] for e in logs]


async def test_healthz_answers_503_once_wedged(settings: Settings) -> None:
    verdict = Liveness(False)
    server = HealthServer(
        settings, reveal(settings.redis_url) or "", port=0, worker_liveness=lambda: verdict
    )
    await server.start()
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            alive = await client.get(server.base_url + "/healthz")
            verdict = Liveness(True, "poll_loop_stalled", 3700.0)
            wedged = await client.get(server.base_url + "/healthz")
    finally:
        await server.stop()
    assert alive.status_code == 200
    assert alive.json()["status"] == "alive"
    assert wedged.status_code == 503
    body = wedged.json()
    assert (body["status"], body["reason"], body["stalled_s"]) == (
        "wedged",
        "poll_loop_stalled",
        3700.0,
    )


def test_the_default_window_outlasts_the_tick_budget_and_the_grace() -> None:
    s = Settings(
        tick_timeout_seconds=600,
        shutdown_grace_seconds=20,
        route_wall_seconds=300,
        task_timeout_seconds=240,
        capacity_wait_seconds=60,
        embedding_task_timeout_seconds=15,
    )
    assert s.watchdog_window == 680.0
    assert Settings(watchdog_seconds=3700).watchdog_window == 3700.0


class Slow:
    """A processor that takes a while (its tick's progress is recorded around it)."""

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        await asyncio.sleep(0.2)
        return ProcessResult(summary={})


async def test_a_real_tick_records_its_progress_and_leaves_no_slot_behind(
    settings: Settings, redis: Any
) -> None:
    store = RunStore(redis, settings)
    await store.enqueue(make_request(31))
    pipeline = tick_runner(settings=settings, redis=redis, processor=Slow())
    stamps: list[float] = []
    touch = pipeline.touch

    def recording_touch() -> None:
        touch()
        stamps.extend(pipeline.progress.values())

    pipeline.touch = recording_touch  # type: ignore[method-assign]
    started = time.monotonic()
    assert await pipeline.tick("job-1") == "completed"
    assert pipeline.progress == {}  # the slot is free again
    # claimed, processed, and the completion write: three steps, each a fresh stamp
    assert len(stamps) >= 3
    assert stamps == sorted(stamps)
    assert stamps[0] >= started
    assert stamps[-1] - stamps[0] >= 0.2  # the processing lay between them
