"""Worker processes on demand: `python -m memory_worker run` with settings in the environment.

Used by the end-to-end tests, the benchmarks and anyone who wants a local
fleet: ``Fleet(settings, tmp).start(3)`` starts three real worker processes
sharing ``settings.redis_url`` and key prefix, each logging to a file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from memory_worker.settings import Settings, env_name

#: Settings that compress time for tests and demos (seconds).
FAST: dict[str, Any] = {
    "consolidation_backend_retry_interval": 1.0,
    "poll_delay_seconds": 0.01,
    "lease_seconds": 2.0,
    "lease_renew_seconds": 0.5,
    "backoff_unit_seconds": 0.2,
    "worker_concurrency": 2,
    "safety_net_seconds": 1,
    "worker_heartbeat_seconds": 0.5,
    "shutdown_grace_seconds": 1.0,
    "request_timeout_seconds": 5.0,
    "task_timeout_seconds": 5.0,
    "capacity_wait_seconds": 1.0,
    "capacity_poll_seconds": 0.05,
    "job_poll_seconds": 0.02,
    "redis_reconnect_max_seconds": 1.0,
}


def worker_env(settings: Settings, overrides: dict[str, Any] | None = None) -> dict[str, str]:
    """The environment of a worker process: ``settings``' Redis and prefix plus ``overrides``."""
    env = dict(os.environ)
    env["MEMORY_KEY_PREFIX"] = settings.key_prefix
    env.setdefault("MEMORY_LOG_FORMAT", "json")
    if settings.redis_url is not None:
        env["REDIS_URL"] = settings.redis_url.get_secret_value()
    for name, value in (overrides or {}).items():
        env[env_name(name)] = (
            value.get_secret_value() if isinstance(value, SecretStr) else str(value)
        )
    return env


@dataclass
class WorkerProcess:
    proc: subprocess.Popen[bytes]
    log_path: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def terminate(self) -> None:
        self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = 15.0) -> int:
        return self.proc.wait(timeout=timeout)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@dataclass
class Fleet:
    settings: Settings
    tmp: Path
    env_overrides: dict[str, Any] = field(default_factory=dict)
    workers: list[WorkerProcess] = field(default_factory=list)

    def start(
        self, n: int = 1, *, args: Sequence[str] = (), **overrides: Any
    ) -> list[WorkerProcess]:
        """Start ``n`` workers (``run`` plus ``args``, e.g. ``--serve``) with ``overrides``."""
        started = []
        for _ in range(n):
            index = len(self.workers)
            log_path = self.tmp / f"worker{index}.log"
            with open(log_path, "wb") as log_file:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "memory_worker", "run", *args],
                    env=worker_env(self.settings, {**self.env_overrides, **overrides}),
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                )
            worker = WorkerProcess(proc, log_path)
            self.workers.append(worker)
            started.append(worker)
        return started

    def stop_all(self) -> None:
        for w in self.workers:
            if w.proc.poll() is None:
                w.terminate()
        for w in self.workers:
            try:
                w.wait(timeout=15)
            except subprocess.TimeoutExpired:
                w.kill()

    def logs(self, tail: int | None = 4000) -> str:
        """Every worker's log, the last ``tail`` characters of each (None: all of it — for
        a search: a line can scroll out of any tail, e.g. behind a traceback)."""
        return "\n".join(
            f"--- worker {i} ---\n{w.log()[-tail if tail else 0 :]}"
            for i, w in enumerate(self.workers)
        )
