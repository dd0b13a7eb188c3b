"""Is this Redis safe to hold the queue? Start-up checks and health gauges (§2, §11).

Two lessons, each checked once when a worker starts and when the bot connects
(:func:`check_redis`):

- **No eviction.** With ``maxmemory-policy allkeys-lru`` a full Redis silently
  dropped 79 of 150 enqueued runs. An ``allkeys-*`` policy may evict any key,
  runs included, so it is refused with :class:`EvictionPolicyError` naming
  the setting. ``volatile-*`` policies only evict keys with a TTL (our runs
  have none, but tick results and caches do), so they are a warning; only
  ``noeviction`` is quiet. Managed Redis often refuses ``CONFIG`` (ACL, or the
  command renamed away): then the policy is unknown, logged, and we go on.
- **Scripts allowed.** Every enqueue, claim and completion is a Lua script
  (``EVALSHA``, falling back to ``SCRIPT LOAD``). A user without them reads as
  healthy while all work fails, so a trivial script is loaded and run;
  ``NOPERM`` raises :class:`ScriptPermissionError`. ``/readyz`` runs the same
  probe (:func:`scripts_allowed`) and reports ``redis_scripts_forbidden``.
- **Keys and commands allowed** (§11). An ACL user restricted to other
  keys (``~other:*``) pinged fine and then failed every command; one without
  ``INFO`` failed arq's start, which the worker took for "Redis not up yet" and
  retried forever. :func:`check_access` reads and deletes one never-written key
  of each shape the deployment uses (:meth:`Keys.access_probes`: ours and arq's)
  and runs what arq's start runs (``INFO``, ``DBSIZE``); ``NOPERM`` raises
  :class:`KeyPermissionError` naming the key patterns to grant, or
  :class:`CommandPermissionError` naming the command. ``/readyz`` asks the same
  (:func:`access_problems`): ``redis_keys_forbidden``, ``redis_info_forbidden``.

:func:`read_health` samples ``INFO`` for the metrics (best effort: ``None`` when INFO is
refused): memory, evictions and clients (§11), and persistence, replication, rejected
connections and blocked clients (:mod:`memory_worker.storage.health` reads it from every
node of every store a run writes).

The decisions (:func:`judge_policy`, :func:`parse_health`) are pure; the rest is a
thin shell over a handful of commands.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoPermissionError, ResponseError

from llm_client import as_text
from memory_worker.errors import (
    CommandPermissionError,
    EvictionPolicyError,
    KeyPermissionError,
    ScriptPermissionError,
)
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.storage.connections import awaited

if TYPE_CHECKING:
    from memory_worker.storage.connections import CardsRedis

log = get_logger(__name__)

#: The smallest script there is: loading and running it proves the user may run ours.
PROBE_SCRIPT = "return 1"


class PolicyVerdict(StrEnum):
    SAFE = "safe"  # noeviction: a full Redis refuses writes, nothing stored is lost
    WARN = "warn"  # volatile-* (keys with a TTL may go) or a policy we do not know
    REFUSE = "refuse"  # allkeys-*: any key, runs included, may be evicted


def judge_policy(policy: str) -> PolicyVerdict:
    """What a ``maxmemory-policy`` value means for the queue."""
    value = policy.strip().lower()
    if value == "noeviction":
        return PolicyVerdict.SAFE
    if value.startswith("allkeys-"):
        return PolicyVerdict.REFUSE
    return PolicyVerdict.WARN


@dataclass(frozen=True, slots=True)
class RedisHealth:
    """One server's health figures (``INFO``), for the metrics (§11)."""

    used_memory_bytes: int
    maxmemory_bytes: int  # 0 = no limit
    evicted_keys: int
    connected_clients: int
    blocked_clients: int = 0
    rejected_connections: int = 0
    # persistence: a failed write means Redis may refuse writes (MISCONF) or lose them on restart
    aof_enabled: bool = False
    aof_last_write_ok: bool = True
    aof_last_rewrite_ok: bool = True
    rdb_last_save_ok: bool = True
    rdb_last_save_at: float | None = None  # unix seconds; None: never saved
    rdb_changes_since_save: int = 0
    # replication
    master: bool = True
    connected_replicas: int = 0
    #: Masters: the largest lag (s) and offset gap (bytes) of a connected replica (None: none).
    replica_lag_seconds: float | None = None
    replica_lag_bytes: int | None = None
    #: Replicas: whether the link to their master is up (None on a master).
    master_link_up: bool | None = None


def _number(info: Mapping[str, Any], name: str) -> int:
    try:
        return int(info.get(name, 0))
    except (TypeError, ValueError):
        return 0


def _status_ok(info: Mapping[str, Any], name: str) -> bool:
    """An ``ok``/``err`` status field (missing: ok — nothing has failed that we know of)."""
    return as_text(info.get(name, "ok")).strip().lower() == "ok"


def _replica_gaps(info: Mapping[str, Any]) -> tuple[float | None, int | None]:
    """(largest lag in s, largest offset gap in bytes) of a master's ``slaveN`` entries."""
    lags: list[float] = []
    gaps: list[int] = []
    offset = _number(info, "master_repl_offset")
    for name, value in info.items():
        if not (name.startswith("slave") and name[5:].isdigit() and isinstance(value, Mapping)):
            continue
        with contextlib.suppress(TypeError, ValueError):
            lags.append(float(value.get("lag", 0)))
            gaps.append(max(0, offset - int(value.get("offset", 0))))
    return (max(lags) if lags else None), (max(gaps) if gaps else None)


def parse_health(info: Mapping[str, Any]) -> RedisHealth:
    """Health figures from a parsed ``INFO`` reply (missing numbers read as 0, statuses as ok)."""
    master = as_text(info.get("role", "master")) == "master"
    lag, gap = _replica_gaps(info) if master else (None, None)
    saved = _number(info, "rdb_last_save_time")
    return RedisHealth(
        used_memory_bytes=_number(info, "used_memory"),
        maxmemory_bytes=_number(info, "maxmemory"),
        evicted_keys=_number(info, "evicted_keys"),
        connected_clients=_number(info, "connected_clients"),
        blocked_clients=_number(info, "blocked_clients"),
        rejected_connections=_number(info, "rejected_connections"),
        aof_enabled=_number(info, "aof_enabled") == 1,
        aof_last_write_ok=_status_ok(info, "aof_last_write_status"),
        aof_last_rewrite_ok=_status_ok(info, "aof_last_bgrewrite_status"),
        rdb_last_save_ok=_status_ok(info, "rdb_last_bgsave_status"),
        rdb_last_save_at=float(saved) if saved > 0 else None,
        rdb_changes_since_save=_number(info, "rdb_changes_since_last_save"),
        master=master,
        connected_replicas=_number(info, "connected_slaves"),
        replica_lag_seconds=lag,
        replica_lag_bytes=gap,
        master_link_up=None if master else as_text(info.get("master_link_status", "down")) == "up",
    )


# --- the shell -------------------------------------------------------------------------------


async def read_policy(redis: Redis) -> str | None:
    """``maxmemory-policy``, or None when the server will not say (CONFIG refused)."""
    try:
        reply = await awaited(redis.config_get("maxmemory-policy"))
    except ResponseError as exc:  # NOPERM, or CONFIG renamed away on managed Redis
        log.warning("redis_policy_unknown", error=type(exc).__name__)
        return None
    value = reply.get("maxmemory-policy") if isinstance(reply, Mapping) else None
    if value is None:
        return None
    return as_text(value)


async def scripts_allowed(redis: Redis) -> bool:
    """Whether this user may load and run Lua scripts (other Redis errors propagate)."""
    try:
        await _probe_scripts(redis)
    except ScriptPermissionError:
        return False
    return True


async def _probe_scripts(redis: Redis) -> None:
    command = "SCRIPT LOAD"
    try:
        sha = await awaited(redis.script_load(PROBE_SCRIPT))
        command = "EVALSHA"
        await awaited(redis.evalsha(sha, 0))
    except NoPermissionError:
        raise ScriptPermissionError(command) from None


async def refused_key_patterns(redis: Redis, keys: Keys) -> list[str]:
    """The ACL key patterns this user may not read or write (empty: every one allowed)."""
    probes = keys.access_probes()
    async with redis.pipeline(transaction=False) as pipe:
        for key in probes:
            pipe.exists(key)
            pipe.delete(key)  # a write that changes nothing: the key is never written
        replies = await pipe.execute(raise_on_error=False)
    refused: list[str] = []
    for index, pattern in enumerate(probes.values()):
        pair = replies[2 * index : 2 * index + 2]
        if any(isinstance(r, NoPermissionError) for r in pair) and pattern not in refused:
            refused.append(pattern)
    for reply in replies:  # any other error is the caller's (Redis down, read-only, …)
        if isinstance(reply, Exception) and not isinstance(reply, NoPermissionError):
            raise reply
    return refused


async def refused_start_command(redis: Redis) -> str | None:
    """The first command of arq's start (``INFO``, ``DBSIZE``) this user may not run.

    Any error reply counts (``NOPERM``, or a managed Redis that renamed the command
    away): neither goes away by waiting, and arq's start would fail on it every time.
    """
    try:
        await awaited(redis.info("server"))
    except ResponseError:
        return "INFO"
    try:
        await awaited(redis.dbsize())
    except ResponseError:
        return "DBSIZE"
    return None


async def check_access(redis: Redis, keys: Keys, *, start_commands: bool = True) -> None:
    """Raise when the user may not use the deployment's keys (or run arq's start commands)."""
    refused = await refused_key_patterns(redis, keys)
    if refused:
        raise KeyPermissionError(refused)
    command = await refused_start_command(redis) if start_commands else None
    if command is not None:
        raise CommandPermissionError(command)


async def access_problems(redis: Redis, keys: Keys) -> list[str]:
    """``/readyz`` problems of this user's permissions (``redis_keys_forbidden``, …)."""
    problems = []
    if await refused_key_patterns(redis, keys):
        problems.append("redis_keys_forbidden")
    if await refused_start_command(redis) is not None:
        problems.append("redis_info_forbidden")
    return problems


async def check_redis(redis: Redis, *, role: str, keys: Keys | None = None) -> str | None:
    """Refuse an evicting Redis or a user without scripts (or without ``keys``, when
    given); warn on a risky policy.

    Returns the policy (None when unknown). ``role`` (``worker``, ``bot``) only
    labels the log line; a worker also needs arq's start commands.
    """
    if keys is not None:
        await check_access(redis, keys, start_commands=role == "worker")
    policy = await read_policy(redis)
    if policy is not None:
        verdict = judge_policy(policy)
        if verdict is PolicyVerdict.REFUSE:
            raise EvictionPolicyError(policy)  # the caller reports it (the CLI: one line)
        if verdict is PolicyVerdict.WARN:
            log.warning(
                "redis_policy_not_noeviction",
                policy=policy,
                role=role,
                hint="set maxmemory-policy noeviction",
            )
    await _probe_scripts(redis)
    return policy


async def check_cards_redis(client: CardsRedis, queue: CardsRedis) -> None:
    """:func:`check_redis` for the card store when it is not the queue's server.

    On a cluster every master is asked (a card on any of them may be evicted) and the
    scripts probe runs there too (``SCRIPT LOAD`` goes to every master).
    """
    if client is queue:
        return
    if not isinstance(client, RedisCluster):
        await check_redis(cast(Redis, client), role="cards")
        return
    await client.initialize()
    for node in client.get_primaries():
        try:
            reply = await client.config_get("maxmemory-policy", target_nodes=node)
        except ResponseError as exc:
            log.warning("redis_policy_unknown", error=type(exc).__name__, node=node.name)
            continue
        value = reply.get("maxmemory-policy") if isinstance(reply, Mapping) else None
        policy = as_text(value) if value is not None else None
        if policy is None:
            continue
        verdict = judge_policy(policy)
        if verdict is PolicyVerdict.REFUSE:
            raise EvictionPolicyError(policy)
        if verdict is PolicyVerdict.WARN:
            log.warning("redis_policy_not_noeviction", policy=policy, role="cards", node=node.name)
    await _probe_scripts(cast(Redis, client))


async def read_health(redis: Redis) -> RedisHealth | None:
    """The health figures, or None when ``INFO`` is refused (ACL) or answers garbage."""
    try:
        info = await awaited(redis.info())
    except ResponseError as exc:
        log.warning("redis_info_refused", error=type(exc).__name__)
        return None
    if not isinstance(info, Mapping):
        return None
    return parse_health(info)
