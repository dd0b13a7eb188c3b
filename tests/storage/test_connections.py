"""§2 connections: REDIS_URL forms, including Sentinel (a real sentinel process) and TLS."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio.connection import SSLConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memory_worker.errors import RedisUrlError
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url, parse_sentinel_url, timeout_options
from memory_worker.storage.embedded import EmbeddedValkey, valkey_binary
from memory_worker.storage.lean_send import LeanHiredisParser, LeanSend
from tests.support.harness import free_port


def test_sentinel_url_forms() -> None:
    spec = parse_sentinel_url("redis+sentinel://user:p%40ss@s1:26379,s2:26380/mymaster/3")
    assert spec.sentinels == [("s1", 26379), ("s2", 26380)]
    assert (spec.master, spec.db, spec.username, spec.password, spec.ssl) == (
        "mymaster", 3, "user", "p@ss", False,
    )  # fmt: skip
    assert parse_sentinel_url("rediss+sentinel://h/m").ssl
    assert parse_sentinel_url("redis+sentinel://h/m?db=2").db == 2
    assert parse_sentinel_url("redis+sentinel://h/m").sentinels == [("h", 26379)]
    with pytest.raises(RedisUrlError):
        parse_sentinel_url("redis+sentinel://h1:26379")  # no master name
    with pytest.raises(RedisUrlError):
        client_from_url("http://localhost:6379")


def test_tls_url_uses_an_ssl_connection() -> None:
    client = client_from_url("rediss://:secret@cache.example:6380/1")
    kwargs = client.connection_pool.connection_kwargs
    assert client.connection_pool.connection_class is SSLConnection
    assert (kwargs["host"], kwargs["port"], kwargs["db"], kwargs["password"]) == (
        "cache.example", 6380, 1, "secret",
    )  # fmt: skip


async def test_sentinel_url_reaches_the_elected_master(tmp_path: Path) -> None:
    master = EmbeddedValkey(tmp_path / "master", tcp=True).ensure()  # Sentinel speaks TCP
    # this test is about the sentinel URL: take the embedded server's password off
    setup = client_from_url(master.url)
    await setup.config_set("requirepass", "")
    await setup.aclose()
    master.password = None
    port = free_port()
    conf = tmp_path / "sentinel.conf"
    conf.write_text(
        f"port {port}\nbind 127.0.0.1\ndir {tmp_path}\n"
        f"sentinel monitor mymaster 127.0.0.1 {master.port} 1\n"
    )
    sentinel = subprocess.Popen(  # noqa: ASYNC220 - a daemon the test owns
        [str(valkey_binary()), str(conf), "--sentinel"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        client = client_from_url(f"redis+sentinel://127.0.0.1:{port}/mymaster/0")
        while True:
            try:
                await client.set("via-sentinel", "yes")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
        direct = client_from_url(master.url)
        assert await direct.get("via-sentinel") == b"yes"
        await direct.aclose()
        await client.aclose()
    finally:
        sentinel.terminate()
        sentinel.wait(timeout=10)
        master.stop()


def test_every_client_has_connect_and_socket_timeouts() -> None:
    plain = client_from_url("redis://127.0.0.1:6379/0").connection_pool.connection_kwargs
    assert plain["socket_connect_timeout"] > 0
    assert plain["socket_timeout"] > 0
    options = timeout_options(
        Settings(redis_connect_timeout_seconds=1.5, redis_socket_timeout_seconds=2.5)
    )
    tuned = client_from_url("redis://127.0.0.1:6379/0", **options)
    kwargs = tuned.connection_pool.connection_kwargs
    assert (kwargs["socket_connect_timeout"], kwargs["socket_timeout"]) == (1.5, 2.5)


async def test_a_black_holed_redis_cannot_hang_a_client(tmp_path: Path) -> None:
    """SIGSTOP: the TCP connection stays open but nothing answers (a partitioned primary)."""
    server = EmbeddedValkey(tmp_path / "valkey").ensure()
    client = client_from_url(server.url, socket_timeout=0.5)
    assert server.pid is not None
    try:
        assert await client.ping()
        os.kill(server.pid, signal.SIGSTOP)
        start = time.monotonic()
        with pytest.raises(RedisTimeoutError):
            await client.get("x")
        assert time.monotonic() - start < 3.0
    finally:
        os.kill(server.pid, signal.SIGCONT)
        await client.aclose()
        server.stop()


@pytest.mark.parametrize("tcp", [False, True], ids=["unix", "tcp"])
async def test_commands_and_pipelines_go_out_without_a_task_each(tmp_path: Path, tcp: bool) -> None:
    """redis-py 5 wraps every send in ``wait_for`` (a task on 3.11); ours writes at once."""
    server = EmbeddedValkey(tmp_path / "valkey", tcp=tcp).ensure()
    url = server.tcp_url if tcp else server.url
    client = client_from_url(url)
    assert issubclass(client.connection_pool.connection_class, LeanSend)
    loop = asyncio.get_running_loop()
    created: list[object] = []

    def counting(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        created.append(coro)
        return asyncio.Task(coro, loop=loop, **kwargs)

    try:
        await client.ping()  # connected outside the count
        loop.set_task_factory(counting)
        for i in range(20):
            await client.set(f"k{i}", i)
        async with client.pipeline(transaction=True) as pipe:
            pipe.incr("n")
            pipe.incr("n")
            assert await pipe.execute() == [1, 2]
        assert await client.get("k19") == b"19"
        assert created == []
    finally:
        loop.set_task_factory(None)
        await client.aclose()
        server.stop()


@pytest.mark.parametrize("tcp", [False, True], ids=["unix", "tcp"])
async def test_a_pooled_connection_holding_a_reply_nobody_read_is_never_handed_out(
    tmp_path: Path, tcp: bool
) -> None:
    """The pool's checkout check without its timer still sees stale bytes: a connection
    released with an unread reply (in the stream's buffer, or whole in the parser) is
    replaced, so no command ever reads another's answer."""
    server = EmbeddedValkey(tmp_path / "valkey", tcp=tcp).ensure()
    client = client_from_url(server.tcp_url if tcp else server.url)
    pool = client.connection_pool
    try:
        await client.set("mine", "right")
        await client.set("stale", "wrong")
        conn = await pool.get_connection()
        assert isinstance(conn._parser, LeanHiredisParser)
        await conn.send_command("GET", "stale")  # its reply is never read
        await asyncio.sleep(0.1)  # the reply lands in the stream's buffer
        await pool.release(conn)
        assert await client.get("mine") == b"right"
        # a whole unread reply already fed to the parser
        conn = await pool.get_connection()
        await conn.send_command("GET", "stale")
        await asyncio.sleep(0.1)
        await conn._parser.read_from_socket()
        await pool.release(conn)
        assert await client.get("mine") == b"right"
        # and a healthy pooled connection is handed out again, not replaced
        conn = await pool.get_connection()
        await pool.release(conn)
        assert await pool.get_connection() is conn
        await pool.release(conn)
    finally:
        await client.aclose()
        server.stop()


async def _answers(url: str, within: float = 15.0) -> None:
    """Until a fresh client's PING is answered at ``url`` (a restarted server may be ready on
    its socket file before its TCP port listens)."""
    deadline = time.monotonic() + within
    while True:
        probe = client_from_url(url)
        try:
            if await probe.ping():
                return
        except RedisError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)
        finally:
            await probe.aclose()


@pytest.mark.parametrize("tcp", [False, True], ids=["unix", "tcp"])
async def test_a_server_restarted_under_an_idle_pooled_connection_is_found_at_checkout(
    tmp_path: Path, tcp: bool
) -> None:
    """kill -9 and a restart while the pool holds an idle connection: the checkout check
    sees the closed socket and the pool dials again, so the next command just answers
    (no error reaches the caller, nothing is read from the dead socket)."""
    server = EmbeddedValkey(tmp_path / "valkey", tcp=tcp).ensure()
    client = client_from_url(server.tcp_url if tcp else server.url, socket_timeout=1.0)
    pool = client.connection_pool
    assert server.pid is not None
    try:
        assert await client.set("k", "v")
        (idle,) = pool._available_connections
        os.kill(server.pid, signal.SIGKILL)
        again = EmbeddedValkey(tmp_path / "valkey", tcp=tcp, port=server.port).ensure()
        assert again.pid != server.pid
        server = again
        await _answers(again.tcp_url if tcp else again.url)  # a loaded host binds it late
        await asyncio.sleep(0.2)  # the old socket's end of stream reaches the client
        assert await client.set("after", "yes")
        assert await client.get("after") == b"yes"
        assert idle.is_connected  # the same pooled connection, dialled again
    finally:
        await client.aclose()
        server.stop()
        EmbeddedValkey(tmp_path / "valkey").shutdown()


@pytest.mark.parametrize("tcp", [False, True], ids=["unix", "tcp"])
async def test_a_send_a_paused_redis_cannot_take_times_out_and_the_client_recovers(
    tmp_path: Path, tcp: bool
) -> None:
    """SIGSTOP with a value larger than every socket buffer: the write cannot finish, so
    the send fails within the socket timeout and closes its connection; once the server
    runs again the same client works, and the cut command left nothing behind."""
    server = EmbeddedValkey(tmp_path / "valkey", tcp=tcp).ensure()
    client = client_from_url(server.tcp_url if tcp else server.url, socket_timeout=0.5)
    assert server.pid is not None
    try:
        assert await client.ping()
        os.kill(server.pid, signal.SIGSTOP)
        start = time.monotonic()
        with pytest.raises(RedisTimeoutError, match="writing to socket"):
            await client.set("big", b"x" * (64 << 20))
        assert time.monotonic() - start < 3.0
        os.kill(server.pid, signal.SIGCONT)
        assert await client.set("after", "yes")
        assert await client.get("after") == b"yes"
        assert await client.exists("big") == 0
    finally:
        os.kill(server.pid, signal.SIGCONT)
        await client.aclose()
        server.stop()


@pytest.mark.parametrize("tcp", [False, True], ids=["unix", "tcp"])
async def test_a_killed_server_is_a_typed_error_and_its_restart_is_found(
    tmp_path: Path, tcp: bool
) -> None:
    """kill -9 under an idle pooled connection: the next command fails as redis-py's
    ConnectionError (never a raw OSError), and once the server is back the same client
    answers on a fresh connection."""
    server = EmbeddedValkey(tmp_path / "valkey", tcp=tcp).ensure()
    client = client_from_url(server.tcp_url if tcp else server.url, socket_timeout=1.0)
    assert server.pid is not None
    try:
        assert await client.set("k", "v")
        os.kill(server.pid, signal.SIGKILL)
        await asyncio.sleep(0.2)
        with pytest.raises(RedisConnectionError):
            await client.get("k")
        again = EmbeddedValkey(tmp_path / "valkey", tcp=tcp, port=server.port).ensure()
        assert again.pid != server.pid
        assert await client.set("after", "yes")
        assert await client.get("after") == b"yes"
        server = again
    finally:
        await client.aclose()
        server.stop()
        EmbeddedValkey(tmp_path / "valkey").shutdown()
