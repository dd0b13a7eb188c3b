"""§2 embedded Valkey: starts, persists with AOF across a restart, is reused."""

from __future__ import annotations

from pathlib import Path

import redis as sync_redis

from memory_worker.storage.embedded import EmbeddedValkey


def test_embedded_valkey_persists_and_is_reused(tmp_path: Path) -> None:
    first = EmbeddedValkey(tmp_path / "valkey").ensure()
    try:
        assert first.owned
        client = sync_redis.Redis.from_url(first.url)
        client.set("k", "v")
        client.close()
        again = EmbeddedValkey(tmp_path / "valkey").ensure()
        assert not again.owned  # reused, not a second server
        assert again.port == first.port
    finally:
        first.stop()
    restarted = EmbeddedValkey(tmp_path / "valkey").ensure()
    try:
        assert restarted.owned
        client = sync_redis.Redis.from_url(restarted.url)
        assert client.get("k") == b"v"  # survived the restart through the AOF
        client.close()
    finally:
        restarted.stop()


def test_server_outlives_its_starter_and_stops_only_explicitly(tmp_path: Path) -> None:
    """Fault-matrix row 15: the server belongs to the data dir, not to the process that started it."""
    started = EmbeddedValkey(tmp_path / "valkey").ensure().detach()
    try:
        started.stop()  # what `run`/`serve`/`enqueue` do on exit: nothing
        client = sync_redis.Redis.from_url(started.url)
        assert client.ping()
        client.close()
        assert EmbeddedValkey(tmp_path / "valkey").shutdown()  # the explicit stop
        assert not (tmp_path / "valkey" / "server.json").exists()
        assert not EmbeddedValkey(tmp_path / "valkey").shutdown()  # nothing left to stop
    finally:
        EmbeddedValkey(tmp_path / "valkey").shutdown()


def test_a_dead_server_restarts_on_its_remembered_port(tmp_path: Path) -> None:
    import os
    import signal

    first = EmbeddedValkey(tmp_path / "valkey").ensure()
    port, pid = first.port, first.pid
    client = sync_redis.Redis.from_url(first.url)  # an old client keeps its address
    client.set("k", "v")
    try:
        os.kill(pid or 0, signal.SIGKILL)
        again = EmbeddedValkey(tmp_path / "valkey").ensure()
        assert again.port == port
        assert again.pid != pid
        assert client.ping()  # reconnects to the same address
    finally:
        client.close()
        EmbeddedValkey(tmp_path / "valkey").shutdown()


def test_a_watching_process_restarts_a_killed_server_but_not_a_stopped_one(
    tmp_path: Path,
) -> None:
    import os
    import signal
    import time

    watched = EmbeddedValkey(tmp_path / "valkey").ensure().detach().watch(every=0.1)
    port, pid = watched.port, watched.pid
    try:
        os.kill(pid or 0, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while watched.pid == pid and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watched.pid != pid
        assert watched.port == port
        client = sync_redis.Redis.from_url(watched.url)
        assert client.ping()
        client.close()
        assert EmbeddedValkey(tmp_path / "valkey").shutdown()  # explicit: stays down
        assert watched.watcher is not None
        watched.watcher.join(timeout=20)  # it saw the stop mark and gave up watching
        assert not watched.watcher.is_alive()
        assert not (tmp_path / "valkey" / "server.json").exists()
    finally:
        EmbeddedValkey(tmp_path / "valkey").shutdown()
