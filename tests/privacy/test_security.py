"""Row 21: arq jobs are JSON (a pickled payload is refused, never run); the embedded
Valkey requires its generated password (0600 file), and every embedded client has it."""

from __future__ import annotations

import asyncio
import os
import pickle
import stat
from pathlib import Path
from typing import Any

import pytest
import redis as sync_redis

from memory_worker.errors import NotAJsonJob
from memory_worker.keys import Keys
from memory_worker.pipeline.jobcodec import dump_job, load_job
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.pipeline.runner import TickRunner
from memory_worker.runs import ClaimedRun
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url, resolve_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.worker.main import create_worker
from tests.support.pickled import inject_pickled_tick
from tests.support.runner import tick_runner


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(pickle.dumps({"f": "memory_tick", "a": (), "k": {}}), id="pickle"),
        pytest.param(b"[1, 2]", id="json-array"),
        pytest.param(b"\xff", id="garbage"),
    ],
)
def test_load_job_refuses_anything_but_a_json_object(raw: bytes) -> None:
    with pytest.raises(NotAJsonJob):
        load_job(raw)


def test_job_codec_round_trip() -> None:
    data: dict[str, Any] = {"t": None, "f": "memory_tick", "a": (), "k": {}, "et": 1}
    assert load_job(dump_job(data)) == {**data, "a": []}
    # a failed job's result: the exception's type, never its message
    assert load_job(dump_job({"r": TimeoutError("secret text")})) == {"r": "TimeoutError"}
    with pytest.raises(TypeError):
        dump_job({"a": (object(),)})


async def test_pickled_job_injected_into_the_queue_is_refused_not_run(
    settings: Settings, redis: Any, redis_url: str, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    keys = Keys(settings.key_prefix)
    job_id = await inject_pickled_tick(redis, keys, "evil", marker)
    calls: list[str] = []

    class Processor:
        async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
            calls.append(run.id)
            return ProcessResult(summary={})

    async def factory(s: Settings, r: Any) -> TickRunner:
        return tick_runner(settings=s, redis=r, processor=Processor())

    fast = settings.model_copy(update={"poll_delay_seconds": 0.02})
    worker = create_worker(
        fast, client_from_url(redis_url), runner_factory=factory, handle_signals=False
    )
    task = asyncio.create_task(worker.async_run())
    try:
        for _ in range(300):
            if not await redis.zscore(keys.arq_queue, job_id):
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the injected job was never picked up")
        for _ in range(300):  # the worker finished handling it: arq counted the failure
            if worker.jobs_failed:
                break
            await asyncio.sleep(0.02)
    finally:
        task.cancel()
        await worker.close()
    assert not marker.exists()  # never unpickled
    assert worker.jobs_failed >= 1  # arq refused it as undeserialisable
    assert calls == []


def test_embedded_valkey_requires_its_generated_password(tmp_path: Path) -> None:
    server = EmbeddedValkey(tmp_path / "valkey").ensure()
    try:
        secret = server.data_dir / "password"
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
        assert stat.S_IMODE(server.data_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE((server.data_dir / "valkey.conf").stat().st_mode) == 0o600
        password = secret.read_text().strip()
        assert len(password) >= 32
        assert server.pid is not None  # ensure() started it
        anonymous = sync_redis.Redis(unix_socket_path=str(server.socket_name))
        with pytest.raises(sync_redis.AuthenticationError):
            anonymous.ping()
        anonymous.close()
        with pytest.raises(sync_redis.AuthenticationError):
            sync_redis.Redis(unix_socket_path=str(server.socket_name), password="guess").ping()
        client = sync_redis.Redis.from_url(server.url)  # the URL every embedded client uses
        assert client.ping()
        client.close()
        # the password never shows on the server's command line
        cmdline = Path(f"/proc/{server.pid}/cmdline").read_bytes()
        assert password.encode() not in cmdline
        # a second process of the deployment finds the same server and password
        settings = Settings(redis_url=None, data_dir=tmp_path)
        url, handle = resolve_url(settings)
        assert handle is not None
        assert handle.pid == server.pid
        assert url == server.url
        assert not handle.owned  # detached: this process will not stop it (row 15)
    finally:
        server.stop()


def test_password_survives_restart_and_is_not_regenerated(tmp_path: Path) -> None:
    first = EmbeddedValkey(tmp_path / "valkey").ensure()
    url = first.url
    first.stop()
    again = EmbeddedValkey(tmp_path / "valkey").ensure()
    try:
        assert again.url == url  # same password, same socket
        assert os.path.exists(again.data_dir / "password")
    finally:
        again.stop()
