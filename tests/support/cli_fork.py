"""Many ``memory-worker`` invocations, each a real process, for the price of one interpreter.

A hundred settings × a fresh ``python -m memory_worker`` would cost minutes on a
shared two-core box (most of each is importing). :func:`run_cli_cases` starts
**one** interpreter (``python -m tests.support.cli_fork``) that imports the CLI
once and then, per case, forks a child: the child gets the case's whole
environment and argv, its own stdout and stderr files (real file descriptors
1 and 2, so whatever a library or a renderer writes is caught), calls the real
entry point :func:`memory_worker.cli.main`, and exits with its status. Nothing
was configured before the fork (no settings read, no logging set up), so each
child starts where the console script starts.

A case may ask for a fault: ``unexpected`` makes the command's Redis opening raise
an unexpected error whose message and locals hold every secret setting, the way
a bug would (see :func:`_inject`).
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Seconds a child may run before it is killed (and reported with status -9).
CHILD_TIMEOUT = 30.0


@dataclass(frozen=True)
class CliCase:
    argv: list[str]
    env: dict[str, str]
    fault: str | None = None
    label: str = ""


@dataclass
class CliResult:
    case: CliCase
    returncode: int
    stdout: str
    stderr: str


def run_cli_cases(cases: list[CliCase], *, timeout: float = 600.0) -> list[CliResult]:
    """Run every case in its own forked process (see the module doc)."""
    payload = json.dumps([{"argv": c.argv, "env": c.env, "fault": c.fault} for c in cases]).encode()
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.cli_fork"],
        input=payload,
        capture_output=True,
        timeout=timeout,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    answers = json.loads(done.stdout)
    return [
        CliResult(case, a["returncode"], a["stdout"], a["stderr"])
        for case, a in zip(cases, answers, strict=True)
    ]


# --- the driver (runs in the one interpreter) --------------------------------------------------


def _inject(fault: str | None) -> None:
    """Make every command fail the way a bug would, holding the secrets in its frame.

    Every command but ``config`` runs its body through ``asyncio.run`` (``run_sync``), and
    ``config`` builds its rows with ``settings_in_use`` (``--markdown``: ``config_rows``): each
    raises an unexpected error whose message quotes every secret setting, which also sit in
    the raising frame's locals.
    """
    if fault is None:
        return
    assert fault == "unexpected", fault
    import asyncio

    from memory_worker.cli import config

    def bug(*args: Any, **_: Any) -> Any:
        from memory_worker.settings import get_settings
        from memory_worker.settings.types import secret_values

        for arg in args:  # a coroutine never awaited would warn on stderr
            getattr(arg, "close", lambda: None)()
        settings = get_settings()
        every_secret = secret_values(settings)
        raise RuntimeError("a bug while working with " + " ".join(every_secret))

    setattr(asyncio, "run", bug)  # noqa: B010
    setattr(config, "settings_in_use", bug)  # noqa: B010
    setattr(config, "config_rows", bug)  # noqa: B010


def _child(case: dict[str, Any], out: str, err: str) -> None:
    """In the forked child: become the case's process and run the console script's main."""
    os.environ.clear()
    os.environ.update(case["env"])
    for fd, path in ((1, out), (2, err)):
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(handle, fd)
        os.close(handle)
    sys.argv = ["memory-worker", *case["argv"]]
    code = 0
    try:
        _inject(case.get("fault"))
        from memory_worker.cli import main

        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # main() lets nothing else out; if it did, say so
        code = 99
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def _wait(pid: int, timeout: float = CHILD_TIMEOUT) -> int:
    end = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -9
        time.sleep(0.005)


def _drive() -> None:
    import memory_worker.cli.commands  # noqa: F401 - imported once, before every fork

    cases = json.loads(sys.stdin.buffer.read())
    answers = []
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        for case in cases:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(case, out, err)
            code = _wait(pid)
            answers.append(
                {
                    "returncode": code,
                    "stdout": Path(out).read_text(errors="replace"),
                    "stderr": Path(err).read_text(errors="replace"),
                }
            )
    sys.stdout.write(json.dumps(answers))


# --- the server: one interpreter per test process for `harness.cli` ---------------------------


def _as_module_run(argv: list[str]) -> None:
    """Look like ``python -m memory_worker ARGV`` to click (its program name comes from
    ``__main__``'s package and ``sys.argv[0]``)."""
    import memory_worker

    sys.modules["__main__"].__package__ = "memory_worker"
    sys.argv = [str(Path(memory_worker.__file__).with_name("__main__.py")), *argv]


def _serve_child(request: dict[str, Any], tmp: str, private: tuple[int, int]) -> None:
    for fd in private:
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    stdin = os.path.join(tmp, "in")
    Path(stdin).write_text(request["stdin"] or "")
    for fd, path, flags in (
        (0, stdin if request["stdin"] is not None else os.devnull, os.O_RDONLY),
        (1, os.path.join(tmp, "out"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, os.path.join(tmp, "err"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        handle = os.open(path, flags, 0o600)
        os.dup2(handle, fd)
        os.close(handle)
    _as_module_run(request["argv"])
    code = 0
    try:
        from memory_worker.cli import main

        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        code = 99
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def _serve() -> None:
    """Requests on fd 0, answers on fd 1, one JSON line each; a forked child per request.

    The server reads and writes through private copies of the two descriptors and never
    touches ``sys.stdin``/``sys.stdout``, so a child's standard streams start empty on the
    files it is given.
    """
    import memory_worker.cli.commands  # noqa: F401 - imported once, before every fork

    requests, answers = os.dup(0), os.dup(1)
    pending = b""
    with tempfile.TemporaryDirectory() as tmp:
        while True:
            while b"\n" not in pending:
                chunk = os.read(requests, 1 << 16)
                if not chunk:
                    return
                pending += chunk
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                _serve_child(request, tmp, (requests, answers))
            code = _wait(pid, request["timeout"])
            answer = {
                "returncode": code,
                "timed_out": code == -9,
                "stdout": Path(tmp, "out").read_text(errors="replace"),
                "stderr": Path(tmp, "err").read_text(errors="replace"),
            }
            os.write(answers, json.dumps(answer).encode() + b"\n")


class CliServer:
    """The client: ``run`` answers like ``subprocess.run([python, -m, memory_worker, …])``.

    One request at a time; a call made while another is in flight (a test running two
    commands at once) gets ``None`` and runs a real process instead, as does any call after
    the server died.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def _server(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "tests.support.cli_fork", "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=Path(__file__).resolve().parents[2],
            )
            atexit.register(self.close)
        return self._proc

    def run(
        self, argv: list[str], env: dict[str, str], stdin: str | None, timeout: float
    ) -> subprocess.CompletedProcess[str] | None:
        if not self._lock.acquire(blocking=False):
            return None
        try:
            proc = self._server()
            assert proc.stdin is not None
            assert proc.stdout is not None
            request = {"argv": argv, "env": env, "stdin": stdin, "timeout": timeout}
            try:
                proc.stdin.write(json.dumps(request | {"cwd": os.getcwd()}).encode() + b"\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
            except OSError:
                line = b""
            if not line:
                return None
            answer = json.loads(line)
        finally:
            self._lock.release()
        args = [sys.executable, "-m", "memory_worker", *argv]
        if answer["timed_out"]:
            raise subprocess.TimeoutExpired(args, timeout, answer["stdout"], answer["stderr"])
        return subprocess.CompletedProcess(
            args, answer["returncode"], answer["stdout"], answer["stderr"]
        )

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()


if __name__ == "__main__":
    _serve() if sys.argv[1:] == ["--serve"] else _drive()
