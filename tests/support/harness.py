"""End-to-end helpers: real worker processes (see ``memory_worker.worker.fleet``), polling, a free port."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from memory_worker.models import Run, RunStatus
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.worker.fleet import FAST, WorkerProcess
from memory_worker.worker.fleet import Fleet as _Fleet
from tests.support.cli_fork import CliServer

__all__ = [
    "FAST",
    "Fleet",
    "cli",
    "cli_env",
    "completed_run",
    "eventually",
    "free_port",
    "run_memory_worker",
    "workers_up",
]


def cli_env(settings: Settings, **env: str) -> dict[str, str]:
    """This process's environment pointed at ``settings``' Redis and key prefix, JSON logs, ``env``."""
    return os.environ | {
        "REDIS_URL": reveal(settings.redis_url) or "",
        "MEMORY_KEY_PREFIX": settings.key_prefix,
        "MEMORY_LOG_FORMAT": "json",
        **env,
    }


def cli(
    settings: Settings, *args: str, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m memory_worker ARGS`` against ``settings``' Redis and key prefix.

    The process is forked from this test process's CLI server (see
    :class:`tests.support.cli_fork.CliServer`: the same entry point, environment, standard
    streams and exit status, without paying the imports again); a real interpreter when
    the server is busy with another call or gone.
    """
    return run_memory_worker(list(args), cli_env(settings, **env), stdin=stdin)


def run_memory_worker(
    argv: list[str], env: dict[str, str], *, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([python, -m, memory_worker, *argv], env=env, …)``, served by the CLI
    server when it is free (see :func:`cli`)."""
    served = None if REAL_CLI else _CLI_SERVER.run(argv, env, stdin, timeout=timeout)
    if served is not None:
        return served
    return subprocess.run(
        [sys.executable, "-m", "memory_worker", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


_CLI_SERVER = CliServer()
#: ``TEST_REAL_CLI=1``: every :func:`cli` call starts a fresh interpreter (to rule the server out).
REAL_CLI = os.environ.get("TEST_REAL_CLI") == "1"


class Fleet(_Fleet):
    """A fleet with the time-compressed FAST settings under any per-test overrides."""

    def __init__(self, settings: Settings, tmp: Path, env_overrides: dict[str, Any] | None = None):
        super().__init__(settings, tmp, {**FAST, **(env_overrides or {})})


async def eventually(
    predicate: Callable[[], Awaitable[bool] | bool], *, timeout: float = 20.0, every: float = 0.05
) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        value = predicate()
        if not isinstance(value, bool):
            value = await value
        if value:
            return
        if loop.time() > end:
            raise AssertionError(f"condition not met within {timeout:.1f}s")
        await asyncio.sleep(every)


async def workers_up(workers: Sequence[WorkerProcess], *, timeout: float = 120.0) -> float:
    """Once every worker has logged ``worker_started`` (its imports and start-up done): the
    ``time.monotonic()`` of that moment. A bound on what a worker does is timed from here,
    not from its spawn: a loaded 2-core host took 13-20 s to start one."""
    await eventually(
        lambda: all(b"worker_started" in w.log_path.read_bytes() for w in workers),
        timeout=timeout,
        every=0.1,
    )
    return time.monotonic()


async def completed_run(read: Callable[[], Awaitable[Run]], *, timeout: float) -> Run:
    """The run ``read`` returns, polled with :func:`eventually` until it is completed."""
    seen: list[Run] = []

    async def completed() -> bool:
        seen[:] = [await read()]
        return seen[0].status is RunStatus.COMPLETED

    await eventually(completed, timeout=timeout)
    return seen[0]


def free_port() -> int:
    """A loopback TCP port nothing listens on (for a server to start on, or a refused call)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def exits_within(proc: subprocess.Popen[bytes], seconds: float, log: Path) -> float:
    """How long ``proc`` took to exit (it must, within ``seconds``)."""
    start = time.monotonic()
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        text = log.read_text(errors="replace")[-6000:]
        raise AssertionError(f"still running {seconds}s after the signal:\n{text}") from None
    return time.monotonic() - start
