"""The run store's side of forgetting (§14): a chat's runs lose messages, its epoch moves.

The decisions (which messages go, which runs are skipped) are
:func:`memory_worker.privacy.forget.plan_run`; the change is ``lua/forget_messages.lua``,
chunked (``MEMORY_FORGET_CHUNK_ITEMS`` runs a call) and fenced run by run by the
status and a digest of the messages it was planned from — a run that moved on
meanwhile is planned again.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from redis.asyncio import Redis

from llm_client import as_text, lua_text
from memory_worker.keys import Keys
from memory_worker.models import RunRequest
from memory_worker.privacy.forget import RunChange, chunks, plan_restrict, plan_run
from memory_worker.runs.chat_index import ChatIndex
from memory_worker.runs.model import ClaimedRun, now_ms

_PAGE = 1000
#: Runs the chat filter reads a call (4,000 measured slower: 861 vs 535 ms for 100,000 runs).
_WALK_PAGE = 1000
#: Times a run that changed under the plan is planned again before it is left to the next forget.
_REPLANS = 5


#: The run side of a forget (every key in KEYS; checked by tests/storage/test_lua_keys.py).
_FORGET_MESSAGES = lua_text(__package__, "retired_summary", "forget_messages")
#: The chat's runs among one page of the run index (read-only).
_CHAT_RUNS = lua_text(__package__, "forget_chat_runs")


class RunForget:
    """Plans and applies the run side of one forget."""

    def __init__(self, redis: Redis, keys: Keys, *, chunk: int) -> None:
        self.redis = redis
        self.keys = keys
        self.chunk = chunk
        self._script = redis.register_script(_FORGET_MESSAGES)
        self._chat_runs = redis.register_script(_CHAT_RUNS)
        self.index = ChatIndex(redis, keys)

    async def chat_runs(self, chat_id: int) -> list[str]:
        """Every run of the chat: from the per-chat index once built, else :meth:`walk`."""
        indexed = await self.index.runs(chat_id)
        return indexed if indexed is not None else await self.walk(chat_id)

    async def walk(self, chat_id: int) -> list[str]:
        """Every run of the chat (a read-only walk over all runs, a page a script call: with
        100,000 runs, one command per run cost seconds of client time)."""
        found: list[str] = []
        start = 0
        while True:
            ids = [
                as_text(r)
                for r in await self.redis.zrange(self.keys.all_runs, start, start + _WALK_PAGE - 1)
            ]
            if not ids:
                return found
            keys = [self.keys.run(run_id) for run_id in ids]
            hits = await self._chat_runs(keys=keys, args=[str(chat_id)])
            found += [ids[int(i) - 1] for i in hits]
            start += _WALK_PAGE

    async def plan(self, run_ids: Sequence[str], user_id: int | None) -> list[RunChange]:
        changes: list[RunChange] = []
        for part in chunks(run_ids, _PAGE):
            async with self.redis.pipeline(transaction=False) as pipe:
                for run_id in part:
                    pipe.hmget(self.keys.run(run_id), ["status", "messages", "prompt_version"])
                rows = await pipe.execute()
            for run_id, (status, messages, pv) in zip(part, rows, strict=True):
                fields = {"status": status or b"", "prompt_version": pv or b""}
                if messages is not None:
                    fields["messages"] = messages
                change = plan_run(run_id, fields, user_id)
                if change is not None:
                    changes.append(change)
        return changes

    async def apply(self, changes: Sequence[RunChange], user_id: int | None) -> list[RunChange]:
        """Apply ``changes`` chunk by chunk; the changes that landed (re-planned ones included)."""
        landed: list[RunChange] = []
        pending = list(changes)
        for _ in range(_REPLANS):
            raced: list[str] = []
            for part in chunks(pending, self.chunk):
                again = await self._apply_chunk(part)
                landed += [c for c in part if c.run_id not in again]
                raced += sorted(again)
            if not raced:
                break
            pending = await self.plan(raced, user_id)
        return landed

    async def _apply_chunk(self, part: Sequence[RunChange]) -> set[str]:
        """One script call; the ids of the runs that changed since their plan."""
        k = self.keys
        keys = [
            k.queued,
            k.retry,
            k.leases,
            k.retired,
            k.by_status("skipped"),
            k.counters,
            k.parked_counts,
            *k.retired_summary,  # a retired run skipped as forgotten leaves the summary too
        ]
        args: list[str | int | bytes] = [now_ms()]
        for c in part:
            keys += [k.run(c.run_id), k.run_errors(c.run_id), k.by_status(c.status)]
            keys.append(k.parked(c.prompt_version))
            args += [c.run_id, c.status, c.action.value, c.messages, c.message_count]
            args += [c.expected, c.prompt_version]
        _, raced = await self._script(keys=keys, args=args)
        return {as_text(r) for r in raced}

    async def erase_extractions(self, run_ids: Sequence[str]) -> int:
        """The kept extractions of ``run_ids`` go (§7): called once the chat's epoch moved,
        so none kept before it outlives the forget and none can be kept after it (the keep
        script refuses an older epoch). Answers how many there were."""
        erased = 0
        for part in chunks(run_ids, _PAGE):
            erased += int(await self.redis.delete(*(self.keys.run_extraction(r) for r in part)))
        return erased

    async def epoch(self, chat_id: int) -> int:
        value = await self.redis.hget(self.keys.forget_epochs, str(chat_id))  # type: ignore[misc]
        return int(value or 0)

    async def bump_epoch(self, chat_id: int) -> int:
        """The chat's next forget epoch: claims from now on record it."""
        return int(await self.redis.hincrby(self.keys.forget_epochs, str(chat_id), 1))  # type: ignore[misc]

    # --- continuations (a run that completes while a forget of its chat ran) -----------------

    async def _left_in(self, run_id: str) -> set[int]:
        raw = await self.redis.hget(self.keys.run(run_id), "messages")  # type: ignore[misc]
        return {int(m["message_id"]) for m in orjson.loads(raw)} if raw else set()

    async def remembered(self, claim: ClaimedRun, request: RunRequest) -> RunRequest | None:
        """``request`` (a continuation of ``claim``) without what a forget since the claim
        removed from the parent run: None when nothing is left."""
        if await self.epoch(claim.request.chat_id) == claim.forget_epoch:
            return request
        left = await self._left_in(claim.id)
        kept = [m for m in request.messages if m.message_id in left]
        return request.model_copy(update={"messages": kept}) if kept else None

    async def restrict(self, run_id: str, parent_id: str) -> None:
        """A continuation enqueued while a forget ran keeps only what its parent holds."""
        left = await self._left_in(parent_id)
        status, messages, pv = await self.redis.hmget(  # type: ignore[misc]
            self.keys.run(run_id), ["status", "messages", "prompt_version"]
        )
        fields = {"status": status or b"", "prompt_version": pv or b""}
        if messages is not None:
            fields["messages"] = messages
        change = plan_restrict(run_id, fields, left)
        if change is not None:
            await self._apply_chunk([change])
