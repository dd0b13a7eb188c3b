"""A run's card write waits for a replica before the run can complete (docs/scaling.md, "WAIT").

Replication is asynchronous: a master that dies right after a card write can take the
write with it, and the promoted replica never saw it — yet the run would be marked
completed. So after the card write the store sends ``WAIT <replicas> <timeout>`` **on
the same connection** (one pipeline: ``EVALSHA`` then ``WAIT``, both on the chat's
master), and the run completes only after that. ``WAIT`` counts the replicas that
acknowledged everything this connection wrote, so a failover after it keeps the cards.

When fewer replicas acknowledge within the timeout (the replica is gone or behind) the
write is still kept and the run goes on — logged ``cards.write_not_replicated`` — and
that master is not waited on again for ``quiet_seconds`` (a shard left without a
replica after a failover must not cost every run the timeout). A ``WAIT`` that fails
(the connection died) raises: the caller repeats the idempotent write. A write whose
slot moved or whose master died before it ran (MOVED / ASK / TRYAGAIN / connection
refused) goes through the cluster client, which follows the redirect and learns the new
map; that one write is not waited on (logged ``cards.write_wait_skipped``).

``MEMORY_CARDS_WAIT_REPLICAS`` unset: 1 when the card server (any cluster shard) has a
replica when the worker starts, else 0 (no ``WAIT``: nothing changes for one server).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from redis.asyncio.cluster import PipelineCommand, RedisCluster
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ConnectionError,
    MovedError,
    NoScriptError,
    RedisError,
    TimeoutError,
    TryAgainError,
)

from memory_worker.logs import get_logger

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript

    from memory_worker.storage.connections import CardsRedis

log = get_logger(__name__)

#: Replies of a node that no longer (or not yet) serves the chat's slot alone.
REDIRECTS = (MovedError, AskError, TryAgainError, ClusterDownError, ConnectionError, TimeoutError)


async def replicas_present(redis: CardsRedis) -> bool:
    """Does the card server (any shard's master, on a cluster) have a replica now?"""
    try:
        if isinstance(redis, RedisCluster):
            await redis.initialize()
            return bool(redis.get_replicas())
        info = await redis.info("replication")
        return int(info.get("connected_slaves", 0)) > 0
    except RedisError as exc:
        log.warning("cards.replicas_unknown", error=type(exc).__name__)
        return False


class ReplicaWait:
    """Runs a card script and then ``WAIT``s on its connection (see the module doc)."""

    def __init__(
        self,
        redis: CardsRedis,
        replicas: int,
        timeout_ms: int,
        *,
        quiet_seconds: float = 60.0,
    ) -> None:
        self.redis = redis
        self.replicas = replicas
        self.timeout_ms = timeout_ms
        self.quiet_seconds = quiet_seconds
        self._quiet_until: dict[str, float] = {}

    async def run(self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]) -> Any:
        name = await self._node_name(keys[0])
        if self.replicas <= 0 or self._quiet_until.get(name, 0.0) > time.monotonic():
            return await script(keys=keys, args=args)
        for _ in range(3):
            try:
                raw, acked = await self._write_and_wait(script, keys, args)
            except (ConnectionError, TimeoutError) as exc:
                raw, acked = exc, None
            if isinstance(raw, NoScriptError):  # a new master (failover) or a flushed cache
                await self.redis.script_load(script.script)
                continue
            if isinstance(raw, REDIRECTS):
                # the slot moved or its master is gone: the cluster client follows (and
                # learns the new map); this one write is not waited on (logged)
                log.warning("cards.write_wait_skipped", reason=type(raw).__name__)
                return await script(keys=keys, args=args)
            if isinstance(raw, BaseException):
                raise raw
            if isinstance(acked, BaseException):
                raise acked
            if int(acked) < self.replicas:
                self._quiet_until[name] = time.monotonic() + self.quiet_seconds
                log.warning(
                    "cards.write_not_replicated",
                    wanted=self.replicas,
                    acked=int(acked),
                    timeout_ms=self.timeout_ms,
                )
            return raw
        raise NoScriptError("card script not loadable on the chat's master")

    async def _node_name(self, key: str) -> str:
        if not isinstance(self.redis, RedisCluster):
            return ""
        await self.redis.initialize()  # no-op once the slot map is known
        return str(self.redis.get_node_from_key(key).name)

    async def _write_and_wait(
        self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]
    ) -> tuple[Any, Any]:
        """EVALSHA then WAIT on one connection to the chat's master; replies (or errors)."""
        evalsha = ("EVALSHA", script.sha, len(keys), *keys, *args)
        wait = ("WAIT", self.replicas, self.timeout_ms)
        if isinstance(self.redis, RedisCluster):
            # the node's own pipeline: no redirect-following between the two commands (a
            # cluster pipeline would re-route a redirected EVALSHA away from its WAIT)
            node = self.redis.get_node_from_key(keys[0])
            commands = [PipelineCommand(0, *evalsha), PipelineCommand(1, *wait)]
            await node.execute_pipeline(commands)
            return commands[0].result, commands[1].result
        pipe = self.redis.pipeline(transaction=False)
        pipe.execute_command(*evalsha)
        pipe.execute_command(*wait)
        raw, acked = await pipe.execute(raise_on_error=False)
        return raw, acked
