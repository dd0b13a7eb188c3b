"""A pinned worker (§11): the rule as a table and a property, the monitor on a real Valkey with
an injected clock (exit once, then the restart guard pages instead), and ``/healthz``.
The real processes are ``tests/e2e/test_pinned_e2e.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_worker.keys import Keys
from memory_worker.pipeline.process_metrics import worker_identity
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.pipeline.runner import TickRunner
from memory_worker.runs import ClaimedRun
from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.wiring import run_store, tick_queue
from memory_worker.worker.pinned import (
    Pinned,
    PinnedMonitor,
    Sample,
    judge_pinned,
    trimmed,
)
from memory_worker.worker.watchdog import PINNED, PINNED_HELD, Liveness, Watchdog
from tests.support.clock import ManualClock
from tests.support.factories import make_request
from tests.support.logs import capture_logs

W = 100.0  # the window of the table
RULE: dict[str, Any] = {"window": W, "min_claims": 3, "min_peers": 2}


def looks(*rows: tuple[float, int, int, int]) -> list[Sample]:
    return [Sample(*row) for row in rows]


@pytest.mark.parametrize(
    ("samples", "now", "expected"),
    [
        ([], 500.0, Pinned(False)),
        (looks((450, 0, 0, 0), (500, 9, 0, 9)), 500.0, Pinned(False)),  # up < a window
        (looks((400, 0, 0, 0), (500, 3, 0, 2)), 500.0, Pinned(True, 3, 0, 2, 100.0)),
        (looks((400, 0, 0, 0), (450, 1, 0, 1), (500, 3, 0, 2)), 500.0, Pinned(True, 3, 0, 2, 100.0)),
        (looks((400, 0, 0, 0), (500, 3, 1, 9)), 500.0, Pinned(False, 3, 1, 8, 100.0)),
        (looks((400, 0, 0, 0), (500, 2, 0, 9)), 500.0, Pinned(False, 2, 0, 9, 100.0)),
        (looks((400, 0, 0, 0), (500, 9, 0, 1)), 500.0, Pinned(False, 9, 0, 1, 100.0)),
        (looks((400, 0, 0, 0), (500, 3, 0, 2)), 601.0, Pinned(False)),  # the look is stale
        (looks((400, 5, 0, 50), (500, 9, 0, 10)), 500.0, Pinned(False)),  # a flushed store
        (looks((300, 0, 0, 0), (401, 0, 0, 0), (500, 3, 0, 2)), 500.0, Pinned(True, 3, 0, 2, 200.0)),
        (looks((300, 0, 0, 0), (401, 0, 0, 1), (500, 3, 0, 2)), 500.0, Pinned(True, 3, 0, 2, 200.0)),
        (looks((300, 0, 0, 0), (400, 1, 0, 0), (500, 4, 0, 2)), 500.0, Pinned(True, 3, 0, 2, 100.0)),
    ],
    ids=[
        "no-look",
        "up-less-than-a-window",
        "pinned",
        "pinned-over-three-looks",
        "one-run-of-its-own-completed",
        "too-little-demand",
        "peers-too-few",
        "latest-look-stale",
        "counter-went-back",
        "sparse-looks-judge-over-more-than-a-window",
        "a-look-inside-the-window-is-no-baseline",
        "window-from-the-newest-baseline",
    ],
)  # fmt: skip
def test_the_pinned_rule(samples: list[Sample], now: float, expected: Pinned) -> None:
    assert judge_pinned(samples, now=now, **RULE) == expected


@st.composite
def histories(draw: st.DrawFn) -> list[Sample]:
    """Looks a few seconds to a window apart, counters that mostly grow (sometimes reset)."""
    at, claims, completed, fleet = 0.0, 0, 0, 0
    out = []
    for _ in range(draw(st.integers(0, 25))):
        at += draw(st.floats(1, 80))
        claims += draw(st.integers(0, 3))
        completed += draw(st.integers(0, 1)) * draw(st.booleans())
        fleet = max(fleet + draw(st.integers(0, 3)), completed)
        if draw(st.integers(0, 30)) == 0:
            fleet = 0  # a flushed store
        out.append(Sample(at, claims, completed, fleet))
    return out


def reference(samples: Sequence[Sample], now: float) -> bool:
    """The rule read plainly: any baseline a window or more before the latest works the same
    as the newest one only when nothing happened in between, so take the newest."""
    if not samples or now - samples[-1].at > W:
        return False
    latest = samples[-1]
    older = [s for s in samples if latest.at - s.at >= W]
    if not older:
        return False
    base = older[-1]
    deltas = [latest.claims - base.claims, latest.completed - base.completed]
    fleet = latest.fleet - base.fleet
    if min(*deltas, fleet) < 0:
        return False
    return deltas[0] >= 3 and deltas[1] == 0 and fleet - deltas[1] >= 2


@settings(max_examples=300, deadline=None)
@given(histories(), st.floats(0, 120))
def test_the_rule_against_a_plain_reading_and_trimming_changes_no_verdict(
    samples: list[Sample], late: float
) -> None:
    """300 examples: the verdict is the plain reading's, and the monitor's trim (it keeps only
    the looks a judgement can need) changes no verdict."""
    now = (samples[-1].at if samples else 0.0) + late
    verdict = judge_pinned(samples, now=now, **RULE)
    assert verdict.pinned is reference(samples, now)
    assert judge_pinned(trimmed(samples, W), now=now, **RULE) == verdict
    assert not verdict.pinned or verdict.completed == 0


@pytest.mark.parametrize(
    ("host", "slot", "identity"),
    [("box-1", None, "box-1"), ("box-1", "worker.2", "box-1/worker.2"), ("box-1", "", "box-1")],
)
def test_the_identity_the_restart_guard_remembers(
    host: str, slot: str | None, identity: str
) -> None:
    assert worker_identity(host, slot) == identity


# --- the counts in Redis ------------------------------------------------------------------


async def test_each_completion_is_counted_for_the_run_s_lease_owner(
    settings: Settings, redis: Any
) -> None:
    """The completion script counts the completed run for its lease owner (what a pinned
    worker reads of itself), beside the fleet's counter; a refused completion counts
    nothing; the count leaves with the worker (deregistered, or pruned once dead)."""
    store = run_store(redis, settings)
    keys = Keys(settings.key_prefix)
    for chat in (1, 2, 3):
        await store.enqueue(make_request(chat))
    done: list[ClaimedRun] = []
    for owner in ("host:1:a", "host:2:b", "host:1:a"):
        claim = await store.claim(owner)
        assert claim is not None
        assert await store.complete(claim, {})
        done.append(claim)
    assert not await store.complete(done[0], {})  # already completed: refused, not counted
    counts = await redis.hgetall(keys.worker_completed)
    assert counts == {b"host:1:a": b"2", b"host:2:b": b"1"}
    assert await redis.hget(keys.counters, "completed") == b"3"
    await store.heartbeat("host:1:a", [], concurrency=1)
    await store.deregister("host:1:a")
    assert await redis.hgetall(keys.worker_completed) == {b"host:2:b": b"1"}
    await store.heartbeat("host:2:b", [], concurrency=1, at_ms=1)  # long dead
    await store.prune()
    assert await redis.hgetall(keys.worker_completed) == {}


# --- the monitor, on a real Valkey --------------------------------------------------------


async def _no_processor(run: ClaimedRun, *, deadline: float) -> ProcessResult:
    raise AssertionError("no run is processed here")


def _runner(settings: Settings, redis: Any, pages: list[tuple[str, dict[str, int]]]) -> TickRunner:
    async def on_pinned(identity: str, counts: dict[str, int]) -> None:
        pages.append((identity, counts))

    return TickRunner(
        settings=settings,
        redis=redis,
        processor=_no_processor,
        store=run_store(redis, settings),
        ticks=tick_queue(redis, settings),
        on_pinned=on_pinned,
    )


async def _pinned_window(
    monitor: PinnedMonitor, clock: ManualClock, redis: Any, keys: Keys, *, claims: int
) -> Pinned:
    """A window in which this worker claims ``claims`` runs and its peers complete 5."""
    await monitor.check()
    clock.now += 30.0
    monitor.runner.claims += claims
    await redis.hincrby(keys.counters, "completed", 5)
    return await monitor.check()


async def test_a_pinned_worker_exits_once_then_its_restart_guard_pages_instead(
    settings: Settings, redis: Any
) -> None:
    s = settings.model_copy(
        update={
            "pinned_window_seconds": 30.0,
            "pinned_min_claims": 3,
            "pinned_peer_completions": 2,
            "pinned_guard_seconds": 600.0,
        }
    )
    keys = Keys(s.key_prefix)
    clock = ManualClock()
    pages: list[tuple[str, dict[str, int]]] = []

    first = _runner(s, redis, pages)
    dog = Watchdog(first, window=1000.0, release=None, exit=lambda code: None, clock=clock)
    monitor = PinnedMonitor(first, s, dog, identity="box-1/w1", clock=clock)
    assert not (await _pinned_window(monitor, clock, redis, keys, claims=2)).pinned  # demand low
    with capture_logs() as logs:
        verdict = await _pinned_window(monitor, clock, redis, keys, claims=3)
    assert verdict == Pinned(True, 3, 0, 5, 30.0)
    assert dog.verdict() == Liveness(True, PINNED, 30.0, verdict.detail())  # the watchdog fires
    lines = [e for e in logs if e["event"] == "worker_pinned"]
    assert [(e["reason"], e["claims"], e["completed"], e["peer_completions"]) for e in lines] == [
        (PINNED, 3, 0, 5)
    ]
    assert pages == []
    assert await redis.pttl(keys.pinned_exit("box-1/w1")) > 590_000  # survives the restart

    # the supervisor restarts it (a new process: new runner, new watchdog), still pinned
    again = _runner(s, redis, pages)
    dog = Watchdog(again, window=1000.0, release=None, exit=lambda code: None, clock=clock)
    monitor = PinnedMonitor(again, s, dog, identity="box-1/w1", clock=clock)
    with capture_logs() as logs:
        verdict = await _pinned_window(monitor, clock, redis, keys, claims=4)
        assert dog.verdict() == Liveness(False, PINNED_HELD, 30.0, verdict.detail())
        clock.now += 5.0
        await monitor.check()  # still pinned: no second page within the guard window
    assert verdict.pinned
    assert dog.pinned is None  # never handed the exit
    assert (dog.verdict().wedged, dog.verdict().reason) == (False, PINNED_HELD)
    assert pages == [("box-1/w1", dict(verdict.detail()))]
    assert [e["event"] for e in logs if e["event"].startswith("worker_pinned")] == [
        "worker_pinned",
        "worker_pinned_held",
    ]
    # another slot on the same host has a guard of its own
    other = PinnedMonitor(_runner(s, redis, pages), s, dog, identity="box-1/w2", clock=clock)
    assert await other._may_exit()


async def test_healthz_says_pinned_with_the_counts(settings: Settings) -> None:
    detail = Pinned(True, 7, 0, 12, 300.0).detail()
    verdict = Liveness(True, PINNED, 300.0, detail)
    server = HealthServer(
        settings, reveal(settings.redis_url) or "", port=0, worker_liveness=lambda: verdict
    )
    await server.start()
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            pinned = await client.get(server.base_url + "/healthz")
            verdict = Liveness(False, PINNED_HELD, 300.0, detail)
            held = await client.get(server.base_url + "/healthz")
    finally:
        await server.stop()
    assert pinned.status_code == 503
    body = pinned.json()
    assert (body["status"], body["reason"], body["claims"], body["completed"]) == (
        "pinned",
        "pinned",
        7,
        0,
    )
    assert (body["peer_completions"], body["window_s"]) == (12, 300)
    assert held.status_code == 200
    assert (held.json()["status"], held.json()["reason"]) == ("alive", PINNED_HELD)
