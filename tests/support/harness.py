"""End-to-end helpers: real worker processes (see ``memory_worker.worker.fleet``), polling, a free port."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from memory_worker.models import Run, RunStatus
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.worker.fleet import FAST
from memory_worker.worker.fleet import Fleet as _Fleet

__all__ = ["FAST", "Fleet", "cli", "cli_env", "completed_run", "eventually", "free_port"]


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
    """Run ``python -m memory_worker ARGS`` against ``settings``' Redis and key prefix."""
    return subprocess.run(
        [sys.executable, "-m", "memory_worker", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=cli_env(settings, **env),
        timeout=60,
        check=False,
    )


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
