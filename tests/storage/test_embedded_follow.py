"""The embedded server's private socket against real processes: a worker on the embedded Valkey survives the
takeover attempt and follows the server to its new address.

The server dies (kill -9) and a ``/tmp`` cleaner removes its short socket directory; before
anyone restarts it, another local user (``nobody``) re-creates that directory and listens
where the socket was. The running worker process must refuse to dial it — the impostor
never sees a connection, let alone ``AUTH <password>`` — and once the server is back (the
worker's own watch thread restarts it, in a new private directory) the worker follows it
and completes a run.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_worker.farmsim import FarmSimulator
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.storage.private_socket import SUN_PATH_MAX, dial_path
from memory_worker.worker.fleet import FAST, Fleet
from tests.support.factories import make_request
from tests.support.harness import completed_run, eventually
from tests.support.impostor import Impostor


@contextlib.contextmanager
def holding_the_lock(valkey_dir: Path) -> Iterator[None]:
    """The data dir's start/stop lock: no process restarts the server while it is held."""
    with open(valkey_dir / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def server_pid(valkey_dir: Path) -> int | None:
    try:
        return int(json.loads((valkey_dir / "server.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


async def test_a_worker_refuses_an_impostor_and_follows_the_restarted_server(
    settings: Settings, sim: FarmSimulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)  # the worker resolves the embedded server
    data_dir = tmp_path / ("d" * 60) / ("e" * 30)
    valkey_dir = data_dir / "valkey"
    assert len(os.fsencode(valkey_dir / "valkey.sock")) > SUN_PATH_MAX  # the /tmp layout
    server = EmbeddedValkey(valkey_dir).ensure()
    local = settings.model_copy(update={"redis_url": server.url, "data_dir": data_dir})
    fleet = Fleet(
        local.model_copy(update={"redis_url": None}),
        tmp_path,
        env_overrides={"discovery_base_url": sim.base_url, "data_dir": data_dir, **FAST},
    )
    redis = client_from_url(server.url, socket_timeout=2.0, socket_connect_timeout=2.0)
    store = RunStore(redis, local)
    impostor: Impostor | None = None
    try:
        (worker,) = fleet.start(1)
        first = (await store.enqueue(make_request(2001))).run_id
        assert first
        await completed_run(lambda: store.get(first), timeout=60)

        old = dial_path(server.socket_name)
        with holding_the_lock(valkey_dir):
            os.kill(server.pid or 0, signal.SIGKILL)
            shutil.rmtree(old.parent)  # the /tmp cleaner …
            impostor = Impostor(old)  # … and another user where the socket was
            await eventually(lambda: "embedded_socket_refused" in worker.log(), timeout=30)
        # the lock released: the worker's watch thread restarts the server elsewhere
        await eventually(lambda: server_pid(valkey_dir) not in (None, server.pid), timeout=30)
        assert dial_path(server.socket_name).parent != old.parent

        second = (await store.enqueue(make_request(2002))).run_id  # our client followed too
        assert second
        run = await completed_run(lambda: store.get(second), timeout=60)
        assert run.status is RunStatus.COMPLETED
        assert worker.proc.poll() is None, worker.log()  # the same process rode it out
    finally:
        connections = impostor.stop() if impostor is not None else []
        fleet.stop_all()
        with contextlib.suppress(Exception):
            await redis.aclose()
        EmbeddedValkey(valkey_dir).shutdown()
    assert connections == []  # never dialled: the password went nowhere
