"""Runs indexed by chat (§14: a forget finds its chat's runs without walking every run).

``enqueue.lua`` adds each new run to ``Keys.chat_runs(chat)`` and ``prune.lua`` takes
a pruned run out. Runs enqueued before the index existed are added by a one-time backfill
that maintenance paces (:meth:`ChatIndex.backfill`, a bounded number of runs per pass, in
creation order from a cursor); when it reaches the end of the run index it sets the
"built" marker. Until then :meth:`ChatIndex.runs` answers None and forget walks every run.
"""

from __future__ import annotations

from redis.asyncio import Redis

from llm_client import as_text, lua_text
from memory_worker.keys import Keys

#: Runs one backfill script call adds (one read pipeline, one script call a page).
_PAGE = 1000


_ADD = lua_text(__package__, "chat_index_add")


class ChatIndex:
    """The per-chat run index: its reads and its backfill."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._add = redis.register_script(_ADD)

    async def built(self) -> bool:
        return bool(await self.redis.exists(self.keys.chat_runs_built))

    async def runs(self, chat_id: int) -> list[str] | None:
        """The chat's runs (oldest first) whose hash still exists; None until built."""
        if not await self.built():
            return None
        ids = [as_text(r) for r in await self.redis.zrange(self.keys.chat_runs(chat_id), 0, -1)]
        found: list[str] = []
        for start in range(0, len(ids), _PAGE):
            part = ids[start : start + _PAGE]
            async with self.redis.pipeline(transaction=False) as pipe:
                for run_id in part:
                    pipe.exists(self.keys.run(run_id))
                alive = await pipe.execute()
            found += [run_id for run_id, n in zip(part, alive, strict=True) if n]
        return found

    async def backfill(self, *, max_runs: int) -> int:
        """Index about ``max_runs`` runs past the cursor (whole pages) in their chats' indexes;
        sets the marker at the end of the run index. The runs added.

        It keeps going after the marker: each pass also covers the runs created since the
        last one (already indexed by ``enqueue.lua``: the add is idempotent), so a run an
        older enqueuer wrote during a rolling deploy is indexed within one maintenance pass."""
        added = seen = 0
        while seen < max_runs:
            cursor = await self.redis.get(self.keys.chat_runs_cursor)
            low = f"({as_text(cursor)}" if cursor is not None else "-inf"
            page = await self.redis.zrangebyscore(
                self.keys.all_runs, low, "+inf", start=0, num=_PAGE, withscores=True
            )
            if not page:
                if not await self.built():
                    await self.redis.set(self.keys.chat_runs_built, "1")
                return added
            last = int(page[-1][1])
            # every run created in the page's last millisecond, so the cursor may move past it
            ties = await self.redis.zrangebyscore(self.keys.all_runs, last, last)
            ids = {as_text(m): int(s) for m, s in page} | {as_text(m): last for m in ties}
            added += await self._add_page(ids)
            seen += len(ids)
            await self.redis.set(self.keys.chat_runs_cursor, str(last))
        return added

    async def _add_page(self, ids: dict[str, int]) -> int:
        """Add ``ids`` (run id → creation ms) to their chats' indexes."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for run_id in ids:
                pipe.hget(self.keys.run(run_id), "chat_id")
            chats = await pipe.execute()
        keys: list[str] = []
        args: list[str | int] = []
        for (run_id, created), chat in zip(ids.items(), chats, strict=True):
            if chat is None:
                continue  # pruned since the page was read
            keys += [self.keys.run(run_id), self.keys.chat_runs(as_text(chat))]
            args += [run_id, created]
        return int(await self._add(keys=keys, args=args)) if keys else 0
