"""User story (§11): a worker whose own state is broken restarts itself — once.

Two real worker processes on the farm simulator: one whose in-process embedder is broken
(``tests.support.pinned_worker``, ``PINNED_FAULT=embedder``: every run it claims is released
at its embedding, attempt refunded) and one healthy peer. The broken one claims, completes
nothing while its peer completes runs, and within its pinned window says so on ``/healthz``
(503 ``pinned``, with the counts), logs why, releases what it holds and exits 70; the peer
completes every run, none charged an attempt. Started again on the same host and slot, it
is pinned again — and this time its restart guard keeps it up: it pages (the log channel,
no other configured) and ``/healthz`` says ``pinned_held`` with 200.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.worker.fleet import FAST, worker_env
from memory_worker.worker.watchdog import PINNED, PINNED_HELD, WEDGED_EXIT
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually, free_port

pytestmark = pytest.mark.slow

WINDOW = 4.0
PINNED_SETTINGS = {
    "pinned_window_seconds": WINDOW,
    "pinned_min_claims": 2,
    "pinned_peer_completions": 2,
    "pinned_guard_seconds": 300.0,
    # a released run's delayed probe tick comes sooner: the broken worker's demand shows fast
    "consolidation_backend_retry_interval": 0.3,
}
#: The acceptance: the broken worker is gone within this long of the runs' arrival.
EXIT_WITHIN = WINDOW + 10.0


def _start_broken(
    settings: Settings, sim: FarmSimulator, tmp: Path, slot: str, port: int, name: str
) -> tuple[subprocess.Popen[bytes], Path]:
    overrides = {
        **FAST,
        **PINNED_SETTINGS,
        "discovery_base_url": sim.base_url,
        "worker_slot": slot,
        "serve_port": port,
    }
    log_path = tmp / f"{name}.log"
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.pinned_worker", "run", "--serve"],
            env=worker_env(settings, overrides) | {"PINNED_FAULT": "embedder"},
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[2],
        )
    return proc, log_path


async def _healthz(port: int) -> tuple[int, dict[str, Any]]:
    try:
        async with httpx.AsyncClient(timeout=0.5) as client:
            answer = await client.get(f"http://127.0.0.1:{port}/healthz")
    except httpx.HTTPError:
        return 0, {}
    return answer.status_code, answer.json()


async def up_for_a_window(port: int) -> bool:
    """The worker answers and has been up for a pinned window (its looks cover one)."""
    code, body = await _healthz(port)
    return code == 200 and body.get("uptime_s", 0) > WINDOW + 1


def _events(log_path: Path, name: str) -> list[dict[str, Any]]:
    lines = log_path.read_text(errors="replace").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{") and f'"{name}"' in line]


async def _enqueue(redis: Any, settings: Settings, first_chat: int, n: int) -> list[str]:
    store = RunStore(redis, settings)
    ids = []
    for i in range(n):
        added = await store.enqueue(make_request(first_chat + i, hour=i % 24))
        ids.append(added.run_id or "")
    return ids


@pytest.fixture
async def sim() -> AsyncIterator[FarmSimulator]:
    """The simulator with its bag-of-words embedder (the e5 model's CPU is not the point)."""
    async with FarmSimulator(embedder="hashed") as simulator:
        yield simulator


async def test_a_pinned_worker_exits_once_then_its_restart_guard_pages_instead(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    store = RunStore(redis, settings)
    slot = f"slot-{uuid.uuid4().hex[:6]}"
    # extraction jobs take a moment, so the runs last beyond one pinned window on a fast host
    sim.set_fault(settings.extraction_service, Fault(kind=FaultKind.SLOW, seconds=0.25))
    peer = Fleet(settings, tmp_path, {"discovery_base_url": sim.base_url, **PINNED_SETTINGS})
    port = free_port()
    # both start at once (a process start is what costs here); the runs come once the broken
    # one has looked at the counts for a window, so its first judgement can see them
    broken, log_path = _start_broken(settings, sim, tmp_path, slot, port, "broken-1")
    peer.start(1)
    try:
        await eventually(lambda: '"worker_started"' in peer.workers[0].log(), timeout=90)
        await eventually(lambda: up_for_a_window(port), timeout=90)
        ids = await _enqueue(redis, settings, 6100, 20)
        since = time.monotonic()
        pinned_bodies: list[dict[str, Any]] = []
        while broken.poll() is None:  # poll /healthz until the process is gone
            assert time.monotonic() - since <= EXIT_WITHIN + 5, log_path.read_text()[-4000:]
            code, body = await _healthz(port)
            if code == 503:
                pinned_bodies.append(body)
            await asyncio.sleep(0.05)
        gone = time.monotonic() - since
        text = log_path.read_text(errors="replace")
        assert broken.returncode == WEDGED_EXIT, text[-4000:]
        assert gone <= EXIT_WITHIN, (gone, text[-4000:])
        assert pinned_bodies, "no /healthz 503 before the exit"
        last = pinned_bodies[-1]
        assert (last["status"], last["reason"], last["completed"]) == ("pinned", PINNED, 0)
        assert last["claims"] >= 2
        assert last["peer_completions"] >= 2
        (why,) = _events(log_path, "worker_pinned")
        assert (why["reason"], why["completed"], why["identity"].endswith(f"/{slot}")) == (
            PINNED,
            0,
            True,
        )
        assert why["claims"] >= 2
        assert why["peer_completions"] >= 2
        assert _events(log_path, "worker_pinned_exit")
        assert not _events(log_path, "worker_wedged")

        # the peer completes every run; the broken worker spent no attempt on any
        async def all_completed() -> bool:
            runs = await store.get_many(ids)
            return all(r.status is RunStatus.COMPLETED for r in runs)

        await eventually(all_completed, timeout=90)
        runs = await store.get_many(ids)
        assert {(r.attempts, len(r.error_log)) for r in runs} == {(1, 0)}, peer.logs()
        assert sum(r.releases for r in runs) >= 2

        # started again within the guard window, beside its peer, with runs to do: pinned
        # again, it pages and stays up
        port = free_port()
        broken, log_path = _start_broken(settings, sim, tmp_path, slot, port, "broken-2")
        await eventually(lambda: up_for_a_window(port), timeout=90)
        await _enqueue(redis, settings, 6200, 20)

        async def held() -> bool:
            code, body = await _healthz(port)
            return code == 200 and body.get("reason") == PINNED_HELD

        await eventually(held, timeout=60)
        assert broken.poll() is None  # it answered: still up, by its guard's choice
        text = log_path.read_text(errors="replace")
        assert _events(log_path, "worker_pinned"), text[-4000:]
        assert _events(log_path, "worker_pinned_held")
        assert not _events(log_path, "worker_pinned_exit")

        async def paged() -> bool:
            return any(
                "worker_pinned" in json.dumps(e)
                for e in _events(log_path, "admin.page_not_configured")
            )

        await eventually(paged, timeout=30)
    finally:
        if broken.poll() is None:
            broken.terminate()
            try:
                broken.wait(timeout=15)
            except subprocess.TimeoutExpired:
                broken.kill()
        peer.stop_all()
