"""A Redis user that cannot work is a clear start-up error and ``/readyz`` 503 (§11).

Real Valkey, real ACL users: one restricted to other keys, one without ``INFO``,
one with a wrong password. Before, each pinged fine (or was taken for "Redis not
up yet") and the worker looped silently; now ``memory-worker run`` exits 2 with
one line saying what to grant, ``MemoryQueue.connect`` raises a typed error, and
``serve``'s ``/readyz`` answers 503 naming the reason. A user granted exactly the
patterns the error names works.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from arq.connections import ArqRedis

from memory_worker.api import MemoryQueue
from memory_worker.errors import CommandPermissionError, KeyPermissionError
from memory_worker.keys import Keys
from memory_worker.ops.health import HealthCheck, readiness
from memory_worker.settings import Settings
from memory_worker.storage.checks import access_problems, check_access, check_redis
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from tests.support.harness import cli_env, free_port, run_memory_worker
from tests.support.replies import command

PREFIX = "acl:"
PASSWORD = "acl-user-pw-81f2"


def url_of(server: EmbeddedValkey, user: str, password: str = PASSWORD) -> str:
    return server.url_as(user, password)


async def user(admin: ArqRedis, name: str, *rules: str) -> None:
    await command(admin, "ACL", "SETUSER", name, "reset", "on", f">{PASSWORD}", "&*", *rules)


@pytest.fixture
def settings_on(tmp_path: Path) -> Any:
    def make(url: str) -> Settings:
        return Settings(redis_url=url, key_prefix=PREFIX, data_dir=tmp_path / "var")

    return make


# --- the checks, in process ----------------------------------------------------------------


async def test_a_user_restricted_to_other_keys_is_refused_and_unready(
    private_valkey: EmbeddedValkey, admin: ArqRedis, settings_on: Any
) -> None:
    await user(admin, "otherkeys", "~other:*", "+@all")
    url = url_of(private_valkey, "otherkeys")
    client = client_from_url(url)
    try:
        assert await client.ping()  # reachable: the old checks said "fine"
        with pytest.raises(KeyPermissionError) as raised:
            await check_redis(client, role="bot", keys=Keys(PREFIX))
        assert raised.value.patterns == ["{acl:*", "acl:*", "arq:*"]
        assert "~{acl:* ~acl:* ~arq:*" in str(raised.value)
        with pytest.raises(KeyPermissionError):
            await MemoryQueue.connect(settings=settings_on(url))
        ready, body = await HealthCheck(client, settings_on(url)).ready()
        assert ready is False
        assert body["problems"] == ["redis_keys_forbidden"]
    finally:
        await client.aclose()


async def test_only_the_missing_patterns_are_named(
    private_valkey: EmbeddedValkey, admin: ArqRedis
) -> None:
    await user(admin, "noarq", "~{acl:*", "~acl:*", "+@all")
    client = client_from_url(url_of(private_valkey, "noarq"))
    try:
        with pytest.raises(KeyPermissionError) as raised:
            await check_access(client, Keys(PREFIX))
        assert raised.value.patterns == ["arq:*"]
    finally:
        await client.aclose()


async def test_a_user_without_info_is_refused_for_a_worker_not_for_the_bot(
    private_valkey: EmbeddedValkey, admin: ArqRedis, settings_on: Any
) -> None:
    await user(admin, "noinfo2", "~*", "+@all", "-info")
    url = url_of(private_valkey, "noinfo2")
    client = client_from_url(url)
    try:
        with pytest.raises(CommandPermissionError) as raised:
            await check_access(client, Keys(PREFIX))
        assert raised.value.command == "INFO"
        assert "+info" in str(raised.value)
        await check_redis(client, role="bot", keys=Keys(PREFIX))  # the bot needs no INFO
        ready, body = await HealthCheck(client, settings_on(url)).ready()
        assert ready is False
        assert body["problems"] == ["redis_info_forbidden"]
    finally:
        await client.aclose()


async def test_the_named_patterns_are_enough(
    private_valkey: EmbeddedValkey, admin: ArqRedis, settings_on: Any
) -> None:
    await user(admin, "granted", "~{acl:*", "~acl:*", "~arq:*", "+@all")
    url = url_of(private_valkey, "granted")
    client = client_from_url(url)
    try:
        await check_access(client, Keys(PREFIX))
        assert await access_problems(client, Keys(PREFIX)) == []
        ready, body = await HealthCheck(client, settings_on(url)).ready()
        assert ready is True, body
        queue = await MemoryQueue.connect(settings=settings_on(url))
        await queue.close()
    finally:
        await client.aclose()


def test_readiness_lists_access_problems_only_when_redis_answers() -> None:
    common: dict[str, Any] = {"runs_worker": False, "loop_heartbeat_ms": None, "now_ms": 0,
                              "stall_seconds": 60.0, "access_problems": ["redis_keys_forbidden"]}  # fmt: skip
    assert readiness(redis_ok=True, **common).problems == ("redis_keys_forbidden",)
    assert readiness(redis_ok=False, **common).problems == ("redis_unreachable",)


# --- real processes: `run` exits 2 at once, `serve` is unready with the reason -----------------


def run_cli(
    url: str, tmp_path: Path, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    settings = Settings(redis_url=url, key_prefix=PREFIX, data_dir=tmp_path / "var")
    env = cli_env(settings, MEMORY_DATA_DIR=str(tmp_path / "var"))
    return run_memory_worker(list(args), env, timeout=timeout)


@pytest.mark.parametrize(
    ("name", "rules", "says"),
    [
        pytest.param("runkeys", ("~other:*", "+@all"), "~{acl:* ~acl:* ~arq:*", id="other-keys"),
        pytest.param("runinfo", ("~*", "+@all", "-info"), "may not run INFO", id="no-info"),
        pytest.param("rundbsize", ("~*", "+@all", "-dbsize"), "may not run DBSIZE", id="no-dbsize"),
    ],
)
async def test_run_with_a_user_that_cannot_work_exits_2_in_one_line(
    name: str,
    rules: tuple[str, ...],
    says: str,
    private_valkey: EmbeddedValkey,
    admin: ArqRedis,
    tmp_path: Path,
) -> None:
    await user(admin, name, *rules)
    started = time.monotonic()
    done = run_cli(url_of(private_valkey, name), tmp_path, "run")
    assert done.returncode == 2, (done.stdout, done.stderr[-2000:])
    assert time.monotonic() - started < 30  # not a retry loop cut by the timeout
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ")
    assert says in line
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert PASSWORD not in done.stderr


async def test_run_with_a_wrong_password_exits_2_instead_of_waiting(
    private_valkey: EmbeddedValkey, admin: ArqRedis, tmp_path: Path
) -> None:
    await user(admin, "wrongpw", "~*", "+@all")
    done = run_cli(url_of(private_valkey, "wrongpw", "not-the-password-5c"), tmp_path, "run")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "refused the credentials" in done.stderr.strip().splitlines()[-1]
    assert "not-the-password-5c" not in done.stderr + done.stdout


async def test_serve_with_a_key_restricted_user_is_unready_with_the_reason(
    private_valkey: EmbeddedValkey, admin: ArqRedis, tmp_path: Path
) -> None:
    await user(admin, "servekeys", "~other:*", "+@all")
    settings = Settings(redis_url=url_of(private_valkey, "servekeys"), key_prefix=PREFIX)
    port = free_port()
    proc = start_serve(settings, port, tmp_path)
    try:
        answer = _readyz(f"http://127.0.0.1:{port}", proc)
        assert answer.status_code == 503
        assert answer.json()["problems"] == ["redis_keys_forbidden"]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert PASSWORD not in err


def start_serve(settings: Settings, port: int, tmp_path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memory_worker", "serve", "--port", str(port)],
        env=cli_env(settings, MEMORY_DATA_DIR=str(tmp_path / "var")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _readyz(url: str, proc: subprocess.Popen[str], timeout: float = 60.0) -> httpx.Response:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        try:
            return httpx.get(url + "/readyz", timeout=5)
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError("serve never answered")
