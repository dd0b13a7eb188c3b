"""Every CLI failure is one clear line on stderr and exit status 2 (§11; fault-matrix row 20).

Each case runs the real ``python -m memory_worker`` in a subprocess: no
traceback, one ``error: …`` line, no secret in it, and nothing stored.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from arq.connections import ArqRedis

from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.embedded import EmbeddedValkey
from tests.support.factories import request_dict
from tests.support.harness import cli, free_port
from tests.support.replies import command

PASSWORD_CANARY = "wrong-pw-canary-5e1d"


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed command (asserts exit 2 and no traceback)."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


def on(server: EmbeddedValkey, settings: Settings, user: str = "", password: str = "") -> Settings:
    if not user:  # the server's own (default user) URL, password included
        return settings.model_copy(update={"redis_url": server.url})
    url = server.url_as(user, password)
    return settings.model_copy(update={"redis_url": url})


def write_requests(path: Path, *requests: dict[str, Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in requests) + "\n")
    return path


async def test_invalid_utf8_file(settings: Settings, redis: Any, tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(json.dumps(request_dict(1)).encode() + b'\n{"chat_id": \xff}\n')
    line = one_error_line(cli(settings, "enqueue", str(path)))
    assert "not valid UTF-8" in line
    assert "line 2" in line
    assert sum((await RunStore(redis, settings).counts()).values()) == 0


async def test_missing_file(settings: Settings, tmp_path: Path) -> None:
    line = one_error_line(cli(settings, "enqueue", str(tmp_path / "nope.jsonl")))
    assert "cannot read" in line


@pytest.mark.parametrize(
    ("requests", "env", "problems"),
    [
        pytest.param(
            [
                request_dict(1),
                request_dict(2) | {"chat_id": True},
                request_dict(3) | {"range_end": "9999-12-31T23:59:59-05:00"},
            ],
            {},
            ["line 2: chat_id", "line 3: range_end"],
            id="every-problem-listed",
        ),
        pytest.param(
            [request_dict(1), request_dict(2, hour=1), request_dict(3, texts=["x" * 101])],
            {"MEMORY_MAX_MESSAGE_CHARS": "100"},
            ["line 3: messages.0.text"],
            id="oversize-request",
        ),
    ],
)
async def test_invalid_requests_are_one_line_and_store_nothing(
    settings: Settings,
    redis: Any,
    tmp_path: Path,
    requests: list[dict[str, Any]],
    env: dict[str, str],
    problems: list[str],
) -> None:
    path = write_requests(tmp_path / "runs.jsonl", *requests)
    line = one_error_line(cli(settings, "enqueue", str(path), **env))
    for problem in problems:
        assert problem in line
    assert sum((await RunStore(redis, settings).counts()).values()) == 0


async def test_redis_unreachable(settings: Settings) -> None:
    port = free_port()
    gone = settings.model_copy(
        update={"redis_url": f"redis://:{PASSWORD_CANARY}@127.0.0.1:{port}/0"}
    )
    line = one_error_line(cli(gone, "runs", "list"))
    assert f"cannot reach Redis at 127.0.0.1:{port}" in line
    assert PASSWORD_CANARY not in line


async def test_wrong_password(
    private_valkey: EmbeddedValkey, admin: ArqRedis, settings: Settings
) -> None:
    await command(admin, "ACL", "SETUSER", "op", "on", ">right-pw", "~*", "&*", "+@all")
    line = one_error_line(cli(on(private_valkey, settings, "op", PASSWORD_CANARY), "runs", "list"))
    assert "refused the credentials" in line
    assert PASSWORD_CANARY not in line


async def test_noperm(
    private_valkey: EmbeddedValkey, admin: ArqRedis, settings: Settings, tmp_path: Path
) -> None:
    await command(
        admin, "ACL", "SETUSER", "noscript", "on", ">noscript-pw", "~*", "&*", "+@all", "-evalsha"
    )
    path = write_requests(tmp_path / "runs.jsonl", request_dict(1))
    done = cli(on(private_valkey, settings, "noscript", "noscript-pw"), "enqueue", str(path))
    line = one_error_line(done)
    assert "NOPERM" in line
    assert "noscript-pw" not in line


async def test_oom(
    private_valkey: EmbeddedValkey, admin: ArqRedis, settings: Settings, tmp_path: Path
) -> None:
    await admin.config_set("maxmemory", "1")  # noeviction + used > max: every write is refused
    path = write_requests(tmp_path / "runs.jsonl", request_dict(1))
    line = one_error_line(cli(on(private_valkey, settings), "enqueue", str(path)))
    assert "out of memory" in line


async def test_broken_routes_file_fails_breakers_list(settings: Settings, tmp_path: Path) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text("[routes.memory_extraction\ntargets = 1\n")
    for args in (("breakers", "list"), ("breakers", "list", "--json")):
        line = one_error_line(cli(settings, *args, MEMORY_ROUTES_FILE=str(routes)))
        assert "invalid routes" in line
        assert "not valid TOML" in line
    line = one_error_line(cli(settings, "breakers", "reset", "x/y", MEMORY_ROUTES_FILE=str(routes)))
    assert "invalid routes" in line


async def test_replay_since_out_of_range(settings: Settings) -> None:
    line = one_error_line(cli(settings, "replay", "--since", "99999999999d", "--dry-run"))
    assert "too far in the past" in line


async def test_unknown_run_and_target(settings: Settings, redis: Any) -> None:
    assert "run not found" in one_error_line(cli(settings, "runs", "show", "r-nope"))
    assert "unknown target" in one_error_line(cli(settings, "breakers", "reset", "no/such"))


# --- the mapping itself (pure) ---------------------------------------------------------------


def _failure_cases() -> list[tuple[BaseException, str]]:
    from redis import exceptions as r

    from llm_client import RoutesError
    from memory_worker.errors import EvictionPolicyError, InvalidRunRequest, RunNotFound

    return [
        (InvalidRunRequest(["line 1: chat_id: bad", "line 2: x"]), "2 problems"),
        (RunNotFound("r-1"), "run not found: r-1"),
        (EvictionPolicyError("allkeys-lru"), "maxmemory-policy"),
        (RoutesError("/etc/routes.toml", ["not valid TOML"]), "invalid routes in /etc/routes.toml"),
        (r.AuthenticationError("invalid username-password pair"), "refused the credentials"),
        (r.NoPermissionError("User x has no permissions to run 'evalsha'"), "NOPERM"),
        (r.OutOfMemoryError("command not allowed when used memory > 'maxmemory'"), "OOM"),
        (r.ReadOnlyError("You can't write against a read only replica."), "read-only"),
        (r.TimeoutError("Timeout reading from socket"), "did not answer in time"),
        (r.ConnectionError("Error 111 connecting"), "cannot reach Redis at db.internal:6380"),
        (r.ResponseError("WRONGTYPE"), "answered an error: ResponseError"),
        (FileNotFoundError(2, "No such file or directory", "/x"), "No such file or directory"),
        (RuntimeError(f"boom redis://:{PASSWORD_CANARY}@h"), "unexpected RuntimeError"),
    ]


@pytest.mark.parametrize(
    ("exc", "expected"),
    _failure_cases(),
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else "",
)
def test_failure_message(exc: BaseException, expected: str, settings: Settings) -> None:
    from memory_worker.cli.failures import failure_message

    where = settings.model_copy(
        update={"redis_url": f"redis://user:{PASSWORD_CANARY}@db.internal:6380/0"}
    )
    message = failure_message(exc, where)
    assert expected in message
    assert PASSWORD_CANARY not in message
    assert "\n" not in message


def enqueue_bytes(settings: Settings, data: bytes) -> subprocess.CompletedProcess[str]:
    """``memory-worker enqueue -`` fed raw bytes (the harness's ``cli`` speaks text)."""
    done = subprocess.run(
        [sys.executable, "-m", "memory_worker", "enqueue", "-"],
        input=data,
        capture_output=True,
        env=os.environ
        | {"REDIS_URL": reveal(settings.redis_url) or "", "MEMORY_KEY_PREFIX": settings.key_prefix},
        timeout=60,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


async def test_invalid_utf8_on_stdin(settings: Settings, redis: Any) -> None:
    line = one_error_line(enqueue_bytes(settings, b'{"chat_id": "\xc3\x28"}\n'))
    assert "cannot read stdin: not valid UTF-8 (byte 0xc3 at offset 13, line 1)" in line
    assert sum((await RunStore(redis, settings).counts()).values()) == 0
