"""The run store's bounds (docs/runbook.md, "Bounded growth"): old runs, natural keys, retired runs'
messages, dead workers, runs parked for a version older than the fleet's.

Each script declares every key it touches (§2), so the ones that act on runs
picked from a zset take two steps: the runs are read first (``prune.lua``: the finished
runs' status zsets — completed, skipped, cancelled — then each run's chat; ``prune_retired_messages.lua``: the script itself answers the
batch it would take), then the script gets their keys, picks the batch again under its
atomicity and acts only when every run of it is one it was given — else it changes
nothing and the caller reads again.
"""

from __future__ import annotations

from redis.asyncio import Redis

from llm_client import as_text, lua_text
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs.model import PruneResult, now_ms
from memory_worker.runs.versions import ClaimAction, claim_action
from memory_worker.settings import Settings
from memory_worker.storage.connections import awaited

#: The statuses whose runs are finished: deleted ``MEMORY_COMPLETED_RUN_RETENTION_DAYS`` after
#: their last update (``prune.lua`` takes their zsets in this order).
FINISHED = (RunStatus.COMPLETED, RunStatus.SKIPPED, RunStatus.CANCELLED)
#: Reads a pruning step makes again when its batch changed under it; then the pass ends
#: (the next maintenance pass carries on).
PRUNE_REREADS = 5


_PRUNE = lua_text(__package__, "prune")
_PRUNE_NATURAL_KEYS = lua_text(__package__, "prune_natural_keys")
_PRUNE_RETIRED_MESSAGES = lua_text(__package__, "retired_summary", "prune_retired_messages")
_PRUNE_WORKERS = lua_text(__package__, "prune_workers")
_UNPARK = lua_text(__package__, "unpark")


class RunPrune:
    """Removes what the run store no longer needs, in bounded batches."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self._prune = redis.register_script(_PRUNE)
        self._prune_nk = redis.register_script(_PRUNE_NATURAL_KEYS)
        self._prune_retired = redis.register_script(_PRUNE_RETIRED_MESSAGES)
        self._prune_workers = redis.register_script(_PRUNE_WORKERS)
        self._unpark = redis.register_script(_UNPARK)

    async def finished(self, *, at_ms: int | None = None, batch: int = 1000) -> int:
        """Delete completed/skipped/cancelled runs older than the retention (in batches); returns how many."""
        now = at_ms if at_ms is not None else now_ms()
        before = now - int(self.settings.completed_run_retention_days * 86_400_000)
        total, rereads = 0, 0
        while True:
            lanes = await self._old_finished(before, batch)
            if not any(lanes):
                return total
            n, again = await self._prune_runs(before, batch, [i for lane in lanes for i in lane])
            total += n
            if again:
                rereads += 1
                if rereads > PRUNE_REREADS:
                    return total
            elif all(len(lane) < batch for lane in lanes):
                return total

    async def _old_finished(self, before: int, batch: int) -> list[list[str]]:
        """The first ``batch`` finished runs of each status last updated before ``before``."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for status in FINISHED:
                pipe.zrangebyscore(self.keys.by_status(status.value), "-inf", before, 0, batch)
            lanes = await pipe.execute()
        return [[as_text(i) for i in lane] for lane in lanes]

    async def _prune_runs(self, before: int, batch: int, ids: list[str]) -> tuple[int, bool]:
        """One prune script call over ``ids`` (their chats read first): (pruned, read again)."""
        k = self.keys
        async with self.redis.pipeline(transaction=False) as pipe:
            for run_id in ids:
                pipe.hget(k.run(run_id), "chat_id")
            chats = [as_text(c) if c is not None else "" for c in await pipe.execute()]
        keys = [
            *(k.by_status(status.value) for status in FINISHED),
            k.all_runs,
            k.natural_key_expiry,
        ]
        args: list[str | int] = [
            before,
            batch,
            int(self.settings.natural_key_retention_days * 86_400_000),
        ]
        for run_id, chat in zip(ids, chats, strict=True):
            keys += [k.run(run_id), k.run_errors(run_id), k.chat_runs(chat)]
            args += [run_id, chat]
        n, again = await self._prune(keys=keys, args=args)
        return int(n), bool(int(again))

    async def all(self, *, at_ms: int | None = None, batch: int = 1000) -> PruneResult:
        """Every bound of the queue store at once (docs/runbook.md, "Bounded growth")."""
        now = at_ms if at_ms is not None else now_ms()
        s, k = self.settings, self.keys
        result = PruneResult(runs=await self.finished(at_ms=now, batch=batch))
        while True:
            n = int(
                await self._prune_nk(keys=[k.natural_keys, k.natural_key_expiry], args=[now, batch])
            )
            result.natural_keys += n
            if n < batch:
                break
        before = now - int(s.retired_run_message_retention_days * 86_400_000)
        result.retired_messages = await self.retired_messages(before, now=now, batch=batch)
        result.workers = int(
            await self._prune_workers(
                keys=[
                    k.workers,
                    k.worker_concurrency,
                    k.worker_runs,
                    k.worker_info,
                    k.worker_completed,
                ],
                args=[now - int(s.worker_registry_grace_seconds * 1000)],
            )
        )
        result.unparked = await self.unpark_older_versions(batch=batch)
        return result

    async def retired_messages(self, before: int, *, now: int, batch: int) -> int:
        """Drop the messages of runs retired before ``before``; returns how many runs lost them."""
        k = self.keys
        fixed = [k.retired, k.prune_marks, *k.retired_summary]
        total, rereads = 0, 0
        ids: list[str] = []  # the first call answers the batch to pass
        while True:
            seen, dropped, wanted = await self._prune_retired(
                keys=[*fixed, *(k.run(i) for i in ids)], args=[before, batch, now, *ids]
            )
            total += int(dropped)
            if wanted:
                ids = list(dict.fromkeys(as_text(i) for i in wanted))
                rereads += 1
                if rereads > PRUNE_REREADS + 1:  # the first one is no race
                    return total
            elif int(seen) < batch:
                return total
            else:
                ids, rereads = [], 0

    async def unpark_older_versions(self, *, batch: int = 1000) -> int:
        """Runs parked for a version older than ours go back to the queue (to be skipped)."""
        k = self.keys
        total = 0
        for raw in await awaited(self.redis.hkeys(k.parked_counts)):
            version = as_text(raw)
            if claim_action(version, self.settings.prompt_version) is not ClaimAction.SKIP:
                continue
            while True:
                n = int(
                    await self._unpark(
                        keys=[k.parked(version), k.queued, k.parked_counts], args=[version, batch]
                    )
                )
                total += n
                if n < batch:
                    break
        return total
