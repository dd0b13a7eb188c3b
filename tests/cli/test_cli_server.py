"""The suite's CLI server (``tests.support.cli_fork.CliServer``) answers as a real process does.

Most CLI tests run ``python -m memory_worker …`` through :func:`tests.support.harness.cli`,
which forks the command from a pre-imported interpreter instead of starting one. These
checks run the same commands both ways and compare what a test sees: exit status, stdout
and stderr (the program name click prints included), standard input, the working directory,
and the fallback to a real process when the server is busy.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_worker.settings import Settings
from tests.support.cli_fork import CliServer
from tests.support.harness import cli_env


def real(argv: list[str], env: dict[str, str], stdin: str | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "memory_worker", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def server() -> Iterator[CliServer]:
    served = CliServer()
    yield served
    served.close()


def served_by(
    server: CliServer, argv: list[str], env: dict[str, str], stdin: str | None = None
) -> tuple[int, str, str]:
    done = server.run(argv, env, stdin, timeout=60)
    assert done is not None, "the server did not answer"
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("argv", "extra", "stdin"),
    [
        pytest.param(["runs", "--help"], {}, None, id="help-names-the-module"),
        pytest.param(["runs", "list"], {"MEMORY_MAX_ATTEMPTS": "abc"}, None, id="bad-setting"),
        pytest.param(["enqueue", "-"], {}, '{"chat_id": "x"}\n', id="stdin"),
    ],
)
def test_a_served_command_answers_as_a_fresh_interpreter_does(
    server: CliServer,
    settings: Settings,
    tmp_path: Path,
    argv: list[str],
    extra: dict[str, str],
    stdin: str | None,
) -> None:
    env = cli_env(settings, MEMORY_DATA_DIR=str(tmp_path / "var"), **extra)
    expected = real(argv, env, stdin)
    assert served_by(server, argv, env, stdin) == expected
    assert expected[0] != 0 or "python -m memory_worker" in expected[1]


def test_the_command_runs_in_the_callers_directory(
    server: CliServer, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``init-config`` writes into the working directory: the test's, not the server's."""
    monkeypatch.chdir(tmp_path)
    env = cli_env(settings, MEMORY_DATA_DIR=str(tmp_path / "var"))
    code, _, err = served_by(server, ["init-config", "."], env)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert Path(os.getcwd()) == tmp_path


def test_a_call_while_the_server_is_busy_is_left_to_a_real_process(server: CliServer) -> None:
    assert server._lock.acquire()
    try:
        assert server.run(["--help"], dict(os.environ), None, timeout=60) is None
    finally:
        server._lock.release()
    assert server.run(["--help"], dict(os.environ), None, timeout=60) is not None


def test_a_server_killed_during_a_call_leaves_it_to_a_real_process_and_is_replaced(
    settings: Settings, tmp_path: Path
) -> None:
    """The server dies while a command is in flight (here: one waiting on a Redis that
    accepted the connection and never answers): the call answers ``None`` (the caller runs
    a real process) instead of hanging or raising, and the next call starts a new server."""
    served = CliServer()
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(8)  # the kernel completes the handshake; nothing ever answers
    port = mute.getsockname()[1]
    env = cli_env(settings, MEMORY_DATA_DIR=str(tmp_path / "var"))
    try:
        assert served.run(["--help"], env, None, timeout=60) is not None  # the server is up
        first = served._proc
        assert first is not None
        killer = threading.Timer(1.0, first.kill)
        killer.start()
        t0 = time.monotonic()
        hung = served.run(
            ["runs", "list"], env | {"REDIS_URL": f"redis://127.0.0.1:{port}/0"}, None, timeout=60
        )
        killer.join()
        assert hung is None
        assert time.monotonic() - t0 < 30  # answered when the server died, not at a timeout
        assert first.wait(5) == -signal.SIGKILL
        again = served.run(["--help"], env, None, timeout=60)
        assert again is not None
        assert again.returncode == 0
        assert served._proc is not None
        assert served._proc is not first
    finally:
        mute.close()
        served.close()
