"""Start-up checks of the Redis server (§2; fault-matrix rows 10 and 11) and its health gauges.

Real Valkey throughout: a private server per module whose ``maxmemory-policy``
and ACL users the tests change freely.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from arq.connections import ArqRedis

from memory_worker.api import MemoryQueue
from memory_worker.errors import EvictionPolicyError, ScriptPermissionError
from memory_worker.ops.health import HealthCheck
from memory_worker.settings import Settings
from memory_worker.storage.checks import (
    PolicyVerdict,
    check_redis,
    judge_policy,
    parse_health,
    read_health,
    scripts_allowed,
)
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from tests.support.logs import capture_logs
from tests.support.replies import command


@pytest.mark.parametrize(
    ("policy", "verdict"),
    [
        ("noeviction", PolicyVerdict.SAFE),
        ("NoEviction", PolicyVerdict.SAFE),
        ("allkeys-lru", PolicyVerdict.REFUSE),
        ("allkeys-lfu", PolicyVerdict.REFUSE),
        ("allkeys-random", PolicyVerdict.REFUSE),
        ("volatile-lru", PolicyVerdict.WARN),
        ("volatile-ttl", PolicyVerdict.WARN),
        ("something-new", PolicyVerdict.WARN),
    ],
)
def test_judge_policy(policy: str, verdict: PolicyVerdict) -> None:
    assert judge_policy(policy) is verdict


def test_parse_health_reads_the_four_figures_and_tolerates_gaps() -> None:
    info = {"used_memory": 1024, "maxmemory": "6291456", "evicted_keys": 79, "x": 1}
    health = parse_health(info)
    assert (health.used_memory_bytes, health.maxmemory_bytes, health.evicted_keys) == (
        1024,
        6_291_456,
        79,
    )
    assert health.connected_clients == 0


def user_url(server: EmbeddedValkey, user: str, password: str) -> str:
    return server.url_as(user, password)


async def test_allkeys_policy_is_refused_with_the_setting_named(
    private_valkey: EmbeddedValkey, admin: ArqRedis, tmp_path: Path
) -> None:
    await admin.config_set("maxmemory-policy", "allkeys-lru")
    with pytest.raises(EvictionPolicyError) as raised:
        await check_redis(admin, role="worker")
    assert raised.value.policy == "allkeys-lru"
    assert "maxmemory-policy" in str(raised.value)
    # the bot's connect refuses too (and stores nothing)
    settings = Settings(redis_url=private_valkey.url, key_prefix="chk:", data_dir=tmp_path)
    with pytest.raises(EvictionPolicyError):
        await MemoryQueue.connect(settings=settings)


async def test_volatile_policy_warns_and_noeviction_is_quiet(admin: ArqRedis) -> None:
    await admin.config_set("maxmemory-policy", "volatile-lru")
    with capture_logs() as logs:
        assert await check_redis(admin, role="bot") == "volatile-lru"
    assert [e["event"] for e in logs] == ["redis_policy_not_noeviction"]
    assert logs[0]["policy"] == "volatile-lru"
    await admin.config_set("maxmemory-policy", "noeviction")
    with capture_logs() as logs:
        assert await check_redis(admin, role="bot") == "noeviction"
    assert logs == []


async def test_config_refused_is_logged_and_start_goes_on(
    private_valkey: EmbeddedValkey, admin: ArqRedis
) -> None:
    """Managed Redis: CONFIG is not ours to call. Unknown policy → a log line, not a refusal."""
    await command(
        admin,
        "ACL", "SETUSER", "managed", "reset", "on", ">managed-pw", "~*", "&*", "+@all", "-config",
    )  # fmt: skip
    client = client_from_url(user_url(private_valkey, "managed", "managed-pw"))
    try:
        await admin.config_set("maxmemory-policy", "allkeys-lru")  # invisible to this user
        with capture_logs() as logs:
            assert await check_redis(client, role="worker") is None
        assert [e["event"] for e in logs] == ["redis_policy_unknown"]
    finally:
        await client.aclose()


async def test_user_without_scripts_is_refused_and_unready(
    private_valkey: EmbeddedValkey, admin: ArqRedis, tmp_path: Path
) -> None:
    await command(
        admin,
        "ACL", "SETUSER", "noscript", "reset", "on", ">noscript-pw", "~*", "&*", "+@all",
        "-eval", "-evalsha",
    )  # fmt: skip
    url = user_url(private_valkey, "noscript", "noscript-pw")
    client = client_from_url(url)
    settings = Settings(redis_url=url, key_prefix="chk:", data_dir=tmp_path)
    try:
        assert await client.ping()  # reachable: the old readiness said "ready"
        assert await scripts_allowed(client) is False
        with pytest.raises(ScriptPermissionError) as raised:
            await check_redis(client, role="worker")
        assert raised.value.command == "EVALSHA"
        with pytest.raises(ScriptPermissionError):
            await MemoryQueue.connect(settings=settings)

        ready, body = await HealthCheck(client, settings).ready()
        assert ready is False
        assert body["problems"] == ["redis_scripts_forbidden"]
        assert body["redis"] == {"ok": True, "latency_ms": body["redis"]["latency_ms"],
                                 "scripts_allowed": False}  # fmt: skip

        await command(admin, "ACL", "SETUSER", "noscript", "+eval", "+evalsha")
        assert await scripts_allowed(client) is True
        ready, body = await HealthCheck(client, settings).ready()
        assert ready is True, body
    finally:
        await client.aclose()


async def test_read_health_from_info_and_none_when_refused(
    private_valkey: EmbeddedValkey, admin: ArqRedis
) -> None:
    await admin.config_set("maxmemory", "64mb")
    try:
        health = await read_health(admin)
        assert health is not None
        assert health.maxmemory_bytes == 64 * 1024 * 1024
        assert health.used_memory_bytes > 0
        assert health.connected_clients >= 1
        assert health.evicted_keys == 0
    finally:
        await admin.config_set("maxmemory", "0")
    await command(
        admin, "ACL", "SETUSER", "noinfo", "reset", "on", ">noinfo-pw", "~*", "&*", "+@all", "-info"
    )
    client: Any = client_from_url(user_url(private_valkey, "noinfo", "noinfo-pw"))
    try:
        assert await read_health(client) is None
    finally:
        await client.aclose()
