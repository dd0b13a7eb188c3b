"""§2 embedded Valkey: starts, persists with AOF across a restart, is reused:
it is reached through a unix socket in a private directory only, which no other local user
can dial or take over, and clients follow it to a new directory after a restart."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import time
from pathlib import Path
from typing import Any

import pytest
import redis as sync_redis
from redis.exceptions import ConnectionError as RedisConnectionError

from memory_worker.errors import SocketNotPrivate
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.storage.private_socket import SUN_PATH_MAX, dial_path
from tests.support.impostor import Impostor, nobody_tries


async def first_answer(command: Any, *args: Any) -> Any:
    """``command(*args)``, tried again after a connection error: a pooled connection to the
    dead server fails once, as after any restart (callers retry; the workers do)."""
    for _ in range(3):
        try:
            return await command(*args)
        except RedisConnectionError:
            continue
    return await command(*args)


def deep(tmp_path: Path) -> Path:
    """A data directory whose socket path cannot be bound (longer than ``sun_path``)."""
    path = tmp_path / ("d" * 60) / ("e" * 60) / "valkey"
    assert len(os.fsencode(path / "valkey.sock")) > SUN_PATH_MAX
    return path


def test_embedded_valkey_persists_and_is_reused(tmp_path: Path) -> None:
    first = EmbeddedValkey(tmp_path / "valkey").ensure()
    try:
        assert first.owned
        client = sync_redis.Redis.from_url(first.url)
        client.set("k", "v")
        client.close()
        again = EmbeddedValkey(tmp_path / "valkey").ensure()
        assert not again.owned  # reused, not a second server
        assert again.pid == first.pid
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


def test_the_server_listens_on_a_private_socket_and_no_tcp_port(tmp_path: Path) -> None:
    server = EmbeddedValkey(tmp_path / "valkey").ensure()
    try:
        assert server.url.startswith("unix://")
        client = sync_redis.Redis.from_url(server.url)
        assert client.config_get("port") == {"port": "0"}  # no TCP listener at all
        assert client.config_get("unixsocketperm") == {"unixsocketperm": "700"}
        client.close()
        assert stat.S_IMODE(server.data_dir.stat().st_mode) == 0o700
        assert stat.S_ISSOCK(server.socket_name.stat().st_mode)
        assert stat.S_IMODE(server.socket_name.stat().st_mode) & 0o077 == 0
        # another local user can neither dial it nor bind its path (even once it is gone)
        assert nobody_tries("connect", server.socket_name) == "PermissionError"
        os.kill(server.pid or 0, signal.SIGKILL)
        assert nobody_tries("bind", server.socket_name) == "PermissionError"
    finally:
        EmbeddedValkey(tmp_path / "valkey").shutdown()


def test_a_dead_server_restarts_on_the_same_socket(tmp_path: Path) -> None:
    first = EmbeddedValkey(tmp_path / "valkey").ensure()
    pid = first.pid
    client = sync_redis.Redis.from_url(first.url)  # an old client keeps its address
    client.set("k", "v")
    try:
        os.kill(pid or 0, signal.SIGKILL)
        again = EmbeddedValkey(tmp_path / "valkey").ensure()
        assert again.url == first.url
        assert again.pid != pid
        assert client.ping()  # reconnects to the same address
    finally:
        client.close()
        EmbeddedValkey(tmp_path / "valkey").shutdown()


def test_a_watching_process_restarts_a_killed_server_but_not_a_stopped_one(
    tmp_path: Path,
) -> None:
    watched = EmbeddedValkey(tmp_path / "valkey").ensure().detach().watch(every=0.1)
    pid = watched.pid
    try:
        os.kill(pid or 0, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while watched.pid == pid and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watched.pid != pid
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


async def test_a_deep_data_dir_gets_a_short_private_socket_directory(tmp_path: Path) -> None:
    server = EmbeddedValkey(deep(tmp_path)).ensure()
    try:
        assert server.socket_name.is_symlink()
        real = dial_path(server.socket_name)
        assert len(os.fsencode(real)) <= SUN_PATH_MAX
        info = real.parent.stat()
        assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (os.geteuid(), 0o700)
        client = client_from_url(server.url)  # the long name, resolved on connect
        assert await client.ping()
        await client.aclose()
    finally:
        server.stop()
    assert not real.parent.exists()  # nothing left in /tmp


async def test_a_client_never_sends_the_password_to_a_taken_over_directory(
    tmp_path: Path,
) -> None:
    """The socket take-over attack, on the one address another user could reach: the
    server dies, a /tmp cleaner removes its short directory, ``nobody`` re-creates it and
    listens there. Clients refuse to dial it; the restarted server gets a new directory
    and the same client follows it there."""
    data_dir = deep(tmp_path)
    server = EmbeddedValkey(data_dir).ensure()
    client = client_from_url(server.url, socket_connect_timeout=2, socket_timeout=2)
    impostor: Impostor | None = None
    try:
        await client.set("k", "v")
        old = dial_path(server.socket_name)
        os.kill(server.pid or 0, signal.SIGKILL)
        shutil.rmtree(old.parent)
        impostor = Impostor(old)
        await client.connection_pool.disconnect()  # its connections died with the server
        with pytest.raises(RedisConnectionError) as refused:
            await client.ping()
        assert isinstance(refused.value.__cause__, SocketNotPrivate)  # not dialled
        again = EmbeddedValkey(data_dir).ensure()  # what a watching process does
        assert dial_path(again.socket_name).parent != old.parent
        assert await first_answer(client.get, "k") == b"v"  # followed it; the AOF kept "k"
    finally:
        await client.aclose()
        EmbeddedValkey(data_dir).shutdown()
        connections = impostor.stop() if impostor is not None else []
    assert connections == []  # never even dialled, let alone sent AUTH


async def test_arqs_own_settings_reach_the_embedded_server(own_valkey: EmbeddedValkey) -> None:
    """``arq memory_worker.worker.WorkerSettings`` builds arq's RedisSettings from this URL."""
    from arq.connections import RedisSettings, create_pool

    dsn = RedisSettings.from_dsn(own_valkey.url)
    assert dsn.unix_socket_path == str(own_valkey.socket_name)
    assert dsn.password == own_valkey.password
    pool = await create_pool(dsn)
    try:
        assert await pool.ping()
    finally:
        await pool.aclose()


def test_only_links_into_short_socket_directories_must_be_private(tmp_path: Path) -> None:
    """An operator's own link (to a system Redis's socket, owned by its user) is followed;
    a link into a ``mw-valkey-*`` directory must lead to one of this user's, mode 0700."""
    foreign = tmp_path / "run-redis"
    foreign.mkdir(mode=0o755)
    os.chown(foreign, 65534, 65534)
    link = tmp_path / "redis.sock"
    link.symlink_to(foreign / "redis.sock")
    assert dial_path(link) == foreign / "redis.sock"
    taken = tmp_path / "mw-valkey-x1y2z3"
    taken.mkdir(mode=0o755)
    os.chown(taken, 65534, 65534)
    ours = tmp_path / "valkey.sock"
    ours.symlink_to(taken / "valkey.sock")
    with pytest.raises(SocketNotPrivate, match="belongs to uid 65534"):
        dial_path(ours)
    os.chown(taken, os.geteuid(), os.getegid())
    with pytest.raises(SocketNotPrivate, match="has mode 755"):
        dial_path(ours)
    taken.chmod(0o700)
    assert dial_path(ours) == taken / "valkey.sock"


@pytest.mark.parametrize("how", ["tcp-only-state", "socket-removed"])
def test_an_unreachable_server_of_the_data_dir_is_stopped_not_doubled(
    tmp_path: Path, how: str
) -> None:
    """A server no client can reach — one of an older version (state without a socket, TCP
    only) or one whose socket a cleaner removed — is stopped (its AOF flushed) before a new
    one starts on the same files: never two servers writing one AOF."""
    old = EmbeddedValkey(tmp_path / "valkey", tcp=True).ensure()
    client = sync_redis.Redis.from_url(old.url)
    client.set("k", "v")
    client.close()
    if how == "tcp-only-state":
        (old.data_dir / "server.json").write_text(f'{{"port": {old.port}, "pid": {old.pid}}}')
    else:
        old.socket_name.unlink()
    try:
        new = EmbeddedValkey(tmp_path / "valkey").ensure()
        assert new.pid != old.pid
        assert not os.path.exists(f"/proc/{old.pid}")  # the old one was stopped
        again = sync_redis.Redis.from_url(new.url)
        assert again.get("k") == b"v"  # its AOF was flushed and read back
        again.close()
    finally:
        EmbeddedValkey(tmp_path / "valkey").shutdown()
