"""A run's card write waits for a replica before the run can complete (issue 11, item 5).

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
(the connection died) raises: the caller repeats the idempotent write.

``MEMORY_CARDS_WAIT_REPLICAS`` unset: 1 when the card server (any cluster shard) has a
replica when the worker starts, else 0 (no ``WAIT``: nothing changes for one server).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import structlog
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError, RedisError

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript

    from memory_worker.connections import CardsRedis

log = structlog.get_logger(__name__)


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
        node: Any = None
        if isinstance(self.redis, RedisCluster):
            await self.redis.initialize()  # no-op once the slot map is known
            node = self.redis.get_node_from_key(keys[0])
        name = node.name if node is not None else ""
        if self.replicas <= 0 or self._quiet_until.get(name, 0.0) > time.monotonic():
            return await script(keys=keys, args=args)
        for _ in range(3):
            pipe = self.redis.pipeline(transaction=False)
            pipe.evalsha(script.sha, len(keys), *keys, *args)
            if node is not None:
                pipe.execute_command("WAIT", self.replicas, self.timeout_ms, target_nodes=node)
            else:
                pipe.wait(self.replicas, self.timeout_ms)
            raw, acked = await pipe.execute(raise_on_error=False)
            if isinstance(raw, NoScriptError):  # a new master (failover) or a flushed cache
                await self.redis.script_load(script.script)
                continue
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
