"""``memory-worker valkey status|stop``: the embedded server of MEMORY_DATA_DIR, seen and
stopped without a Python one-liner (real CLI processes, a real server)."""

from __future__ import annotations

import json
from pathlib import Path

from memory_worker.settings import Settings
from memory_worker.storage.embedded import EmbeddedValkey, pid_alive
from tests.support.harness import cli


def _status(settings: Settings, data: Path, **env: str) -> dict[str, object]:
    done = cli(settings, "valkey", "status", "--json", MEMORY_DATA_DIR=str(data), **env)
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_status_and_stop_of_the_embedded_server(settings: Settings, tmp_path: Path) -> None:
    data = tmp_path / "data"
    before = _status(settings, data, REDIS_URL="")
    assert before["state"] == "not running"
    assert before["in_use"] is True
    assert not data.exists()  # status reads only: no data dir made, no server started
    server = EmbeddedValkey(data / "valkey").ensure().detach()  # as `run` leaves it
    try:
        running = _status(settings, data, REDIS_URL="")
        assert running["state"] == "running"
        assert running["pid"] == server.pid
        assert running["socket"] == str((data / "valkey" / "valkey.sock").resolve())
        stopped = cli(settings, "valkey", "stop", MEMORY_DATA_DIR=str(data), REDIS_URL="")
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout.strip() == f"stopped the embedded Valkey (pid {server.pid})"
        assert server.pid is not None
        assert not pid_alive(server.pid)
        assert _status(settings, data, REDIS_URL="")["state"] == "stopped"
        again = cli(settings, "valkey", "stop", "--json", MEMORY_DATA_DIR=str(data))
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout) == {"stopped": False, "pid": None}
    finally:
        EmbeddedValkey(data / "valkey").shutdown()


def test_status_says_a_redis_url_leaves_the_server_unused(
    settings: Settings, tmp_path: Path
) -> None:
    done = cli(settings, "valkey", "status", MEMORY_DATA_DIR=str(tmp_path / "d"))
    assert done.returncode == 0, done.stderr
    assert "in use    no: REDIS_URL is set" in done.stdout
    assert _status(settings, tmp_path / "d")["in_use"] is False
