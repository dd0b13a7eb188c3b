"""Forgetting (§14), the shell: one forget of a user in a chat, or of a whole chat.

The order of the steps is what makes an in-flight run unable to write forgotten
facts back (no resurrection):

1. **plan** — the chat's runs (a read-only walk) and its memory (cursor scans);
   a dry run stops here, having written nothing;
2. **runs** — the messages leave the runs not yet completed, a chunk a script
   call (``runs/lua/forget_messages.lua``); for a chat, or a run left
   without messages, the run is skipped as ``forgotten`` (a run in flight loses
   its lease: its owner's completion and release are refused by the lease token);
3. **epoch** — the forget is marked in progress in the card store (an export of the chat
   refuses until it completes: it never reads a half-forgotten chat), then the chat's
   forget epoch is bumped on the queue (every later claim
   records the new one, and reads runs already stripped), then raised in the
   card store. A card write of a run claimed under an older epoch is refused
   (:class:`~memory_worker.errors.ForgottenWrite`): the run is released as
   ``forgotten`` and extracted again from what remains — or, when the chat was
   forgotten, its owner finds the run skipped and drops it. Then every run of the chat
   (listed again) loses the extraction it kept between attempts (§7): one kept before
   the epoch moved is erased, one an attempt of the older epoch tries to keep after is
   refused by the keep script;
4. **memory** — planned again *after* the epoch moved (a write that landed before
   it is seen), then removed a chunk a call (``cards/lua/forget.lua``), or, for a
   chat, every memory key unlinked; the in-progress mark goes (a forget that died
   before leaves it: an export refuses until the same scope is forgotten again);
5. **audit** — an event on the audit stream (actor, host, when, scope, counts; no
   content), a counter for the metrics, and an append-only-file rewrite so the
   text leaves the server's disk too (``MEMORY_FORGET_REWRITE_AOF``).
"""

from __future__ import annotations

import socket
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisClusterException, RedisError

from llm_client import as_text
from memory_worker.cards.forget import KEPT_SUFFIXES, CardForget
from memory_worker.errors import ForgetInputError
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.privacy.forget import ForgetCounts, ForgetResult, ForgetScope
from memory_worker.runs.forget import RunForget

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from memory_worker.settings import Settings
    from memory_worker.storage.connections import CardsRedis

log = get_logger(__name__)


class Forgetter:
    """Runs one forget end to end (see the module doc for the order of its steps)."""

    def __init__(
        self, redis: Redis, settings: Settings, *, cards_redis: CardsRedis | None = None
    ) -> None:
        self.redis = redis
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        chunk = settings.forget_chunk_items
        self.runs = RunForget(redis, self.keys, chunk=chunk)
        self.cards = CardForget(cards_redis or redis, self.keys, chunk=chunk)

    async def forget(
        self,
        scope: ForgetScope,
        *,
        dry_run: bool = False,
        actor: str = "api",
        host: str | None = None,
    ) -> ForgetResult:
        chat, user = scope.chat_id, scope.user_id
        run_ids = await self.runs.chat_runs(chat)
        if not run_ids and not await self._has_memory(chat):
            raise ForgetInputError(f"chat {chat} is unknown: no run and no memory of it is stored")
        changes = await self.runs.plan(run_ids, user)
        result = ForgetResult(
            chat_id=chat,
            user_id=user,
            dry_run=dry_run,
            counts=ForgetCounts(),
            actor=actor,
            host=host if host is not None else socket.gethostname(),
            at_ms=int(time.time() * 1000),
        )
        run_counts = ForgetCounts(runs=len(changes), messages=sum(c.removed for c in changes))
        if dry_run:
            memory = (
                await self.cards.chat_counts(chat)
                if user is None
                else (await self.cards.plan_user(chat, user)).counts
            )
            return replace(result, counts=memory + run_counts)
        landed = await self.runs.apply(changes, user)
        run_counts = ForgetCounts(runs=len(landed), messages=sum(c.removed for c in landed))
        token = await self.cards.begin(
            chat, scope.kind if user is None else f"user:{user}", result.at_ms
        )
        epoch = await self.runs.bump_epoch(chat)
        await self.cards.raise_epoch(chat, epoch)
        # the runs' kept extractions (§7) may hold what is forgotten, or what the model made
        # of the forgotten cards it was shown: every run of the chat, listed again now that
        # the epoch moved (a run claimed later keeps none from before it)
        await self.runs.erase_extractions(await self.runs.chat_runs(chat))
        if user is None:
            memory = await self.cards.chat_counts(chat)
            await self.cards.forget_chat(chat)
        else:
            plan = await self.cards.plan_user(chat, user)
            memory = await self.cards.forget_user(chat, user, plan)
        await self.cards.end(chat, token)
        done = replace(result, counts=memory + run_counts, epoch=epoch)
        await self._audit(done)
        await self._rewrite_aof()
        log.info("forget.done", **{k: v for k, v in done.as_dict().items() if k != "host"})
        return done

    async def _has_memory(self, chat_id: int) -> bool:
        base = self.keys.chat(chat_id, "")
        keys = await self.cards.chat_keys(chat_id)
        return any(k[len(base) :] not in KEPT_SUFFIXES for k in keys)

    async def _audit(self, result: ForgetResult) -> None:
        """The audit event and the metrics counter (best effort: the forget itself is done)."""
        fields: dict[Any, Any] = {
            k: ("" if v is None else str(v)) for k, v in result.as_dict().items()
        }
        fields["type"] = "forget"
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.xadd(
                    self.keys.audit, fields, maxlen=self.settings.audit_maxlen, approximate=True
                )
                pipe.hincrby(self.keys.counters, f"forgets:{result.scope}", 1)
                await pipe.execute()
        except RedisError as exc:
            log.warning("forget.audit_failed", error=type(exc).__name__)

    async def _rewrite_aof(self) -> None:
        """Ask the server to rewrite its append-only file (refusals are logged, not raised)."""
        if not self.settings.forget_rewrite_aof:
            return
        clients: list[CardsRedis] = [self.redis]
        if self.cards.redis is not self.redis:
            clients.append(self.cards.redis)
        for client in clients:
            try:
                if isinstance(client, RedisCluster):  # every node keeps its own file
                    await client.execute_command("BGREWRITEAOF", target_nodes=client.ALL_NODES)
                else:
                    await client.execute_command("BGREWRITEAOF")
            except (RedisError, RedisClusterException) as exc:
                log.warning("forget.aof_rewrite_refused", error=type(exc).__name__)


async def recent_audit(redis: Redis, keys: Keys, *, limit: int = 20) -> list[dict[str, str]]:
    """The newest audit events first (for ``memory-worker report``)."""
    rows = await redis.xrevrange(keys.audit, count=limit)
    return [{as_text(k): as_text(v) for k, v in fields.items()} for _, fields in rows]
