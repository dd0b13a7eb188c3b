"""Every phase of a worker process obeys SIGTERM/SIGINT within its grace.

Real processes throughout: ``memory-worker run`` waiting for a Redis that is
down (a closed port) or paused (SIGSTOP: connects, never answers);
``memory-worker serve`` with Redis down; and a worker in its shutdown release
while its Valkey is paused, which must exit within
``MEMORY_SHUTDOWN_RELEASE_SECONDS`` (+ the close margin) by itself and at once
on a second signal — without losing the run.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.models import RunStatus
from memory_worker.settings import Settings
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.worker.fleet import WorkerProcess
from memory_worker.worker.process import CLOSE_MARGIN_SECONDS
from tests.faults.rows_store import private_store
from tests.support.factories import make_request
from tests.support.harness import completed_run, eventually, exits_within

#: How long a signalled process may take to exit once its phase is cut (interpreter exit incl.).
PROMPT = 5.0


def closed_port() -> int:
    """A loopback port nothing listens on (bound then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def cli(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m memory_worker ARGS`` logging JSON lines to ``log``; killed if still running."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memory_worker", *args],
            env={**os.environ, "MEMORY_LOG_FORMAT": "json", **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def wait_for_line(log: Path, text: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        assert proc.poll() is None, log.read_text(errors="replace")
        assert time.monotonic() < deadline, f"no {text!r} within {timeout}s:\n" + log.read_text()
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_run_waiting_for_a_down_redis_stops_on_a_signal(
    sig: signal.Signals, tmp_path: Path
) -> None:
    log = tmp_path / "run.log"
    env = {"REDIS_URL": f"redis://127.0.0.1:{closed_port()}/0", "MEMORY_KEY_PREFIX": "sig:"}
    with cli(["run"], env, log) as proc:
        wait_for_line(log, "redis_unavailable_at_startup", proc, timeout=60)
        proc.send_signal(sig)
        exits_within(proc, PROMPT, log)
        assert proc.returncode == 0, log.read_text()
    text = log.read_text()
    assert '"worker_stopped_while_starting"' in text
    assert f'"signal": "{sig.name}"' in text


def test_run_waiting_for_a_paused_redis_stops_on_sigterm(
    own_valkey: EmbeddedValkey, tmp_path: Path
) -> None:
    """A paused server accepts the connection and never answers: the wait is a hung PING."""
    assert own_valkey.pid is not None
    log = tmp_path / "run.log"
    env = {
        "REDIS_URL": own_valkey.url,
        "MEMORY_KEY_PREFIX": "sig:",
        "MEMORY_REDIS_SOCKET_TIMEOUT_SECONDS": "60",
    }
    os.kill(own_valkey.pid, signal.SIGSTOP)
    try:
        with cli(["run"], env, log) as proc:
            wait_for_line(log, "worker_waiting_for_redis", proc, timeout=60)
            proc.send_signal(signal.SIGTERM)
            exits_within(proc, PROMPT, log)
        assert '"worker_stopped_while_starting"' in log.read_text()
    finally:
        os.kill(own_valkey.pid, signal.SIGCONT)


def test_serve_with_redis_down_stops_on_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    env = {"REDIS_URL": f"redis://127.0.0.1:{closed_port()}/0", "MEMORY_KEY_PREFIX": "sig:"}
    with cli(["serve", "--port", "0"], env, log) as proc:
        wait_for_line(log, "health_server_started", proc, timeout=60)
        proc.send_signal(signal.SIGTERM)
        exits_within(proc, PROMPT, log)
        assert proc.returncode == 0, log.read_text()
    assert "health_server_stopped" in log.read_text()


async def _in_shutdown_with_redis_paused(p: Any, sim: FarmSimulator) -> tuple[str, WorkerProcess]:
    """A worker mid-run, its Valkey paused, SIGTERMed: it is closing once this returns."""
    rid = (await p.store.enqueue(make_request(4545))).run_id
    assert rid
    service = p.settings.extraction_service
    sim.set_fault(service, Fault(kind=FaultKind.SLOW, seconds=3.0, times=1))
    (worker,) = p.fleet.start(1)
    await eventually(lambda: sim.submits(service) > 0, timeout=30)
    p.pause()
    worker.terminate()  # grace 1 s, then arq cancels the tick and the close begins

    def closing() -> bool:
        assert worker.proc.poll() is None, worker.log()
        return '"worker_closing"' in worker.log()

    await eventually(closing, timeout=30)
    return rid, worker


SHUTDOWN: dict[str, Any] = {
    "shutdown_grace_seconds": 1.0,
    "shutdown_release_seconds": 4.0,
    # a single call to the paused server could hang this long: only the cut bounds the close
    "redis_socket_timeout_seconds": 60.0,
}


async def test_a_second_signal_cuts_the_shutdown_release_and_loses_nothing(
    settings: Settings, sim: FarmSimulator, tmp_path: Path
) -> None:
    async with private_store(settings, sim, tmp_path, **SHUTDOWN) as p:
        rid, worker = await _in_shutdown_with_redis_paused(p, sim)
        worker.proc.send_signal(signal.SIGINT)  # the operator insists
        await asyncio.to_thread(exits_within, worker.proc, PROMPT, worker.log_path)
        assert '"shutdown_release_cut"' in worker.log()
        assert '"reason": "signal"' in worker.log()

        p.resume()  # the run the cut left held comes back when its lease expires
        p.fleet.start(1)
        run = await completed_run(lambda: p.get(rid), timeout=60)
        assert run.status is RunStatus.COMPLETED


async def test_the_shutdown_release_ends_within_its_grace_while_redis_stays_away(
    settings: Settings, sim: FarmSimulator, tmp_path: Path
) -> None:
    async with private_store(settings, sim, tmp_path, **SHUTDOWN) as p:
        _, worker = await _in_shutdown_with_redis_paused(p, sim)
        budget = float(SHUTDOWN["shutdown_release_seconds"]) + CLOSE_MARGIN_SECONDS
        await asyncio.to_thread(exits_within, worker.proc, budget + PROMPT, worker.log_path)
        p.resume()
