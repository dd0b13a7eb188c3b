"""RunStore: the Redis adapter for runs; every state change is one Lua script (``lua/``).

See the package docstring for the key layout and the lease rules.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import orjson
import structlog
from arq.connections import ArqRedis

from llm_client.redis_text import as_text
from memory_worker.connections import awaited
from memory_worker.errors import InvalidRunRequest, RunNotFound
from memory_worker.keys import Keys
from memory_worker.models import (
    Cursor,
    ErrorLogEntry,
    Message,
    Run,
    RunRequest,
    RunStatus,
)
from memory_worker.run_store.model import (
    CLAIM_PEEK,
    CLAIM_PEEK_MAX,
    CLAIM_REPEEKS,
    HOURLY_KEEP_HOURS,
    PARK_PER_CLAIM,
    RESTORE_PER_CLAIM,
    ClaimedRun,
    ClaimResult,
    EnqueueResult,
    EnqueueStatus,
    PruneResult,
    ms_to_dt,
    new_run_id,
    now_ms,
    queued_run_fields,
)
from memory_worker.runs import FailurePlan
from memory_worker.settings import Settings
from memory_worker.versions import VERSION_ACTION_LUA, ClaimAction, claim_action

log = structlog.get_logger(__name__)


def _lua(name: str) -> str:
    """The text of ``lua/<name>.lua``."""
    return resources.files(__package__).joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")


_SET_STATUS = _lua("set_status")
_PULSE = _lua("pulse")
_ENQUEUE = _lua("enqueue")
_CLAIM = _SET_STATUS + VERSION_ACTION_LUA + _PULSE + _lua("claim")
_PARK = _lua("park")
_HEARTBEAT = _PULSE + _lua("heartbeat")
_DEREGISTER = _lua("deregister")
_RENEW = _lua("renew")
_COMPLETE = _lua("complete")
_SUMMARY = _lua("retired_summary")
_FAIL = _SET_STATUS + _SUMMARY + _lua("fail")
_RELEASE = _SET_STATUS + _lua("hourly") + _lua("release")
_PRUNE = _lua("prune")
_PRUNE_NATURAL_KEYS = _lua("prune_natural_keys")
_PRUNE_RETIRED_MESSAGES = _SUMMARY + _lua("prune_retired_messages")
_PRUNE_WORKERS = _lua("prune_workers")
_UNPARK = _lua("unpark")
_HAS_CLAIMABLE = _lua("has_claimable")
_REPLAY = _SUMMARY + _lua("replay")


class RunStore:
    """Redis adapter for runs; every state change is one atomic script."""

    def __init__(self, redis: ArqRedis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self._enqueue = redis.register_script(_ENQUEUE)
        self._claim = redis.register_script(_CLAIM)
        self._renew = redis.register_script(_RENEW)
        self._heartbeat = redis.register_script(_HEARTBEAT)
        self._deregister = redis.register_script(_DEREGISTER)
        self._complete = redis.register_script(_COMPLETE)
        self._fail = redis.register_script(_FAIL)
        self._release = redis.register_script(_RELEASE)
        self._has_claimable = redis.register_script(_HAS_CLAIMABLE)
        self._replay = redis.register_script(_REPLAY)
        self._prune = redis.register_script(_PRUNE)
        self._park = redis.register_script(_PARK)
        self._prune_nk = redis.register_script(_PRUNE_NATURAL_KEYS)
        self._prune_retired = redis.register_script(_PRUNE_RETIRED_MESSAGES)
        self._prune_workers = redis.register_script(_PRUNE_WORKERS)
        self._unpark = redis.register_script(_UNPARK)

    @property
    def _status_prefix(self) -> str:
        return self.keys.by_status("")

    @property
    def heartbeat_ttl_ms(self) -> int:
        """A worker whose heartbeat is older than this is dead (3 heartbeat periods)."""
        return int(self.settings.worker_heartbeat_seconds * 3000)

    @property
    def pulse_gap_ms(self) -> int:
        """A store silence longer than this (one heartbeat TTL) counts as an outage.

        Shorter silences cannot strand a run: a lease renewed on schedule outlives
        them, and the owner renews within about a second of Redis answering."""
        return self.heartbeat_ttl_ms

    # --- enqueue ------------------------------------------------------------------------------
    def check_limits(self, request: RunRequest, encoded: bytes) -> None:
        """Size limits of the settings; raises InvalidRunRequest listing every problem."""
        s = self.settings
        problems: list[str] = []
        if len(request.messages) > s.max_run_messages:
            problems.append(f"messages: at most {s.max_run_messages} messages per run")
        for i, msg in enumerate(request.messages):
            if len(msg.text) > s.max_message_chars:
                problems.append(f"messages.{i}.text: longer than {s.max_message_chars} characters")
        if len(encoded) > s.max_run_bytes:
            problems.append(f"payload: {len(encoded)} bytes exceeds {s.max_run_bytes}")
        if problems:
            raise InvalidRunRequest(problems)

    async def enqueue(
        self, request: RunRequest, *, bypass_caps: bool = False, at_ms: int | None = None
    ) -> EnqueueResult:
        """Store a validated run unless it exists or a cap says no (atomic)."""
        now = at_ms if at_ms is not None else now_ms()
        messages = request.messages_json()
        self.check_limits(request, messages)
        # no version: the run takes the version of the worker that claims it (§7 rev 2)
        pv = request.prompt_version or ""
        natural_key = request.natural_key(pv)
        run_id = new_run_id(now)
        range_end_ms = int(request.range_end.timestamp() * 1000)
        flat = queued_run_fields(request, run_id, natural_key, messages, now)
        day = datetime.fromtimestamp(now / 1000, tz=UTC).strftime("%Y%m%d")
        k = self.keys
        status, rid = await self._enqueue(
            keys=[
                k.natural_keys,
                k.queued,
                k.leases,
                k.daily(day),
                k.run(run_id),
                k.all_runs,
                self._status_prefix + "queued",
                k.counters,
                k.parked_counts,
                k.chat_runs(request.chat_id),
            ],
            args=[
                natural_key,
                run_id,
                now,
                self.settings.max_queued_runs,
                self.settings.max_daily_enqueued_runs,
                2 * 86_400,
                "1" if bypass_caps else "0",
                -range_end_ms,
                k.run_prefix,
                *flat,
            ],
        )
        result_status = EnqueueStatus(as_text(status))
        return EnqueueResult(result_status, as_text(rid) or None)

    # --- claim and lease ------------------------------------------------------------------------
    async def claim(self, owner: str, *, at_ms: int | None = None) -> ClaimedRun | None:
        """Claim the next run: expired leases, then due retries, then queued (newest first)."""
        return (await self.claim_detailed(owner, at_ms=at_ms)).run

    async def claim_detailed(self, owner: str, *, at_ms: int | None = None) -> ClaimResult:
        """:meth:`claim`, plus the runs the claim retired (lease lost on the last attempt)
        or skipped (another prompt version) on its way, so the caller can report them.

        Two steps, so the script declares every key it touches (SPEC §2 rev 2): a peek reads
        the heads of the three lanes, the script claims among them and answers "peek again"
        when it reaches a head it was not given (another worker took the peeked ones)."""
        now = at_ms if at_ms is not None else now_ms()
        token = secrets.token_hex(8)
        retired: list[Any] = []
        skipped: list[Any] = []
        fields: list[Any] = []
        peek, parks, repeeks = CLAIM_PEEK, 0, 0
        candidates = await self.peek_claimable(now, peek)
        while True:
            fields, more_retired, more_skipped, park, again = await self._claim_once(
                owner, token, now, candidates
            )
            retired += more_retired
            skipped += more_skipped
            if park:
                # Each run of a newer version met at the head is parked once (O(log n)) and
                # never seen again by this version's workers; bounded so one claim stays short.
                await self._park_run(as_text(park[0]), as_text(park[1]), int(park[2]), now)
                parks += 1
                if parks > PARK_PER_CLAIM:
                    break
            elif int(again) and repeeks < CLAIM_REPEEKS:
                repeeks += 1
                peek = min(2 * peek, CLAIM_PEEK_MAX)  # the heads moved on: look further
                candidates = await self.peek_claimable(now, peek)
            else:
                break
        run = None
        if fields:
            h = _pairs(fields)
            run = ClaimedRun(
                id=h["id"],
                token=token,
                owner=owner,
                attempts=int(h["attempts"]),
                releases=int(h.get("releases") or 0),
                request=_request_from_hash(h),
                forget_epoch=int(h.get("forget_epoch") or 0),
            )
        return ClaimResult(run, [as_text(i) for i in retired], [as_text(i) for i in skipped])

    async def peek_claimable(self, now: int, n: int) -> list[str]:
        """The first ``n`` ids of each claim lane (expired leases, due retries, queued): the
        runs the claim script may take (one round trip, read only)."""
        k = self.keys
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrangebyscore(k.leases, "-inf", now, start=0, num=n)
            pipe.zrangebyscore(k.retry, "-inf", now, start=0, num=n)
            pipe.zrange(k.queued, 0, n - 1)
            lanes = await pipe.execute()
        return list(dict.fromkeys(as_text(i) for lane in lanes for i in lane))

    async def _claim_once(
        self, owner: str, token: str, now: int, candidates: Sequence[str]
    ) -> list[Any]:
        """One claim script call among ``candidates``: [run fields, retired ids, skipped ids,
        run to park, 1 when it met a head that is not a candidate]."""
        k, version = self.keys, self.settings.prompt_version
        reply: list[Any] = await self._claim(
            keys=[
                k.queued,
                k.retry,
                k.leases,
                k.retired,
                k.counters,
                k.parked(version),
                k.parked_counts,
                k.workers,
                k.worker_runs,
                k.store_pulse,
                k.forget_epochs,
                *(k.by_status(s.value) for s in RunStatus),
                *(key for run_id in candidates for key in (k.run(run_id), k.run_errors(run_id))),
            ],
            args=[
                now,
                int(self.settings.lease_seconds * 1000),
                owner,
                token,
                version,
                self.settings.max_attempts,
                64,
                self.settings.error_log_max_entries,
                RESTORE_PER_CLAIM,
                self.heartbeat_ttl_ms,
                self.pulse_gap_ms,
                *candidates,
            ],
        )
        return reply

    async def _park_run(self, run_id: str, version: str, bucket: int, now: int) -> None:
        """Move a run of another (newer) prompt version to its version's parked set."""
        k = self.keys
        await self._park(
            keys=[
                k.queued,
                k.retry,
                k.leases,
                k.parked(version),
                k.parked_counts,
                k.run(run_id),
                k.by_status(RunStatus.QUEUED.value),
                k.by_status(RunStatus.FAILED.value),
                k.by_status(RunStatus.PROCESSING.value),
                k.counters,
            ],
            args=[run_id, version, bucket, now],
        )
        log.info("run_parked", run_id=run_id, prompt_version=version)

    async def heartbeat(
        self, owner: str, held: Sequence[str], *, concurrency: int, at_ms: int | None = None
    ) -> list[str]:
        """Register ``owner`` as alive, holding ``held``; returns the live workers' ids."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        live = await self._heartbeat(
            keys=[k.workers, k.worker_runs, k.store_pulse, k.worker_concurrency],
            args=[
                now,
                self.heartbeat_ttl_ms,
                owner,
                concurrency,
                self.pulse_gap_ms,
                ",".join(sorted(held)),
            ],
        )
        return [as_text(w) for w in live]

    async def deregister(self, owner: str) -> None:
        k = self.keys
        await self._deregister(keys=[k.workers, k.worker_runs, k.worker_concurrency], args=[owner])

    async def renew(self, claim: ClaimedRun, *, at_ms: int | None = None) -> bool:
        """Extend the lease, even an expired one nobody took; False = another owner has it.

        The one definite proof that the run is lost: any Redis error is raised, never
        read as a loss (§7 rev 2)."""
        now = at_ms if at_ms is not None else now_ms()
        until = now + int(self.settings.lease_seconds * 1000)
        ok = await self._renew(
            keys=[self.keys.run(claim.id), self.keys.leases], args=[claim.token, until, claim.id]
        )
        return bool(int(ok))

    # --- outcomes -----------------------------------------------------------------------------
    async def complete(
        self, claim: ClaimedRun, result: dict[str, Any], *, at_ms: int | None = None
    ) -> bool:
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        ok = await self._complete(
            keys=[
                k.run(claim.id),
                k.leases,
                k.counters,
                k.by_status(RunStatus.PROCESSING.value),
                k.by_status(RunStatus.COMPLETED.value),
            ],
            args=[claim.token, now, orjson.dumps(result), self._status_prefix, claim.id],
        )
        return bool(int(ok))

    async def fail(
        self,
        claim: ClaimedRun,
        plan: FailurePlan,
        *,
        code: str,
        reason: str | None,
        message: str,
        at_ms: int | None = None,
    ) -> bool:
        now = at_ms if at_ms is not None else now_ms()
        entry = ErrorLogEntry(
            attempt=claim.attempts,
            failed_at=datetime.fromtimestamp(now / 1000, tz=UTC),
            code=code,
            reason=reason,
            message=message[: self.settings.error_message_max_chars],
            kind="retired" if plan.retire else "failure",
        )
        k = self.keys
        ok = await self._fail(
            keys=[
                k.run(claim.id),
                k.run_errors(claim.id),
                k.leases,
                k.retry,
                k.retired,
                k.counters,
                k.by_status(RunStatus.PROCESSING.value),
                k.by_status(RunStatus.FAILED.value),
                *k.retired_summary,
            ],
            args=[
                claim.token,
                now,
                entry.model_dump_json(),
                "" if plan.next_attempt_at_ms is None else plan.next_attempt_at_ms,
                self.settings.error_log_max_entries,
                self._status_prefix,
                reason or "not_retryable",
                claim.id,
                code,
                reason or "",
            ],
        )
        return bool(int(ok))

    async def release(self, claim: ClaimedRun, *, reason: str, at_ms: int | None = None) -> bool:
        """Back to queued, attempt refunded, lease cleared, ``releases`` + 1, counted in its hour."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        ok = await self._release(
            keys=[
                k.run(claim.id),
                k.leases,
                k.queued,
                k.counters,
                k.retry,
                k.runs_hourly,
                *(k.by_status(s.value) for s in (RunStatus.PROCESSING, RunStatus.FAILED)),
                k.by_status(RunStatus.QUEUED.value),
            ],
            args=[claim.token, now, reason, self._status_prefix, claim.id, HOURLY_KEEP_HOURS],
        )
        return bool(int(ok))

    async def prune_finished(self, *, at_ms: int | None = None, batch: int = 1000) -> int:
        """Delete completed/skipped runs older than the retention (in batches); returns how many."""
        now = at_ms if at_ms is not None else now_ms()
        before = now - int(self.settings.completed_run_retention_days * 86_400_000)
        k = self.keys
        total = 0
        while True:
            n = int(
                await self._prune(
                    keys=[
                        self._status_prefix + RunStatus.COMPLETED.value,
                        self._status_prefix + RunStatus.SKIPPED.value,
                        k.all_runs,
                        k.natural_key_expiry,
                    ],
                    args=[
                        before,
                        batch,
                        k.run_prefix,
                        int(self.settings.natural_key_retention_days * 86_400_000),
                        k.chat_runs_prefix,
                    ],
                )
            )
            total += n
            if n < batch:
                return total

    async def prune(self, *, at_ms: int | None = None, batch: int = 1000) -> PruneResult:
        """Every bound of the queue store at once (README "Bounded growth")."""
        now = at_ms if at_ms is not None else now_ms()
        s, k = self.settings, self.keys
        result = PruneResult(runs=await self.prune_finished(at_ms=now, batch=batch))
        while True:
            n = int(
                await self._prune_nk(keys=[k.natural_keys, k.natural_key_expiry], args=[now, batch])
            )
            result.natural_keys += n
            if n < batch:
                break
        before = now - int(s.retired_run_message_retention_days * 86_400_000)
        while True:
            seen, dropped = await self._prune_retired(
                keys=[k.retired, k.prune_marks, *k.retired_summary],
                args=[before, batch, k.run_prefix, now],
            )
            result.retired_messages += int(dropped)
            if int(seen) < batch:
                break
        result.workers = int(
            await self._prune_workers(
                keys=[k.workers, k.worker_concurrency],
                args=[now - int(s.worker_registry_grace_seconds * 1000)],
            )
        )
        result.unparked = await self.unpark_older_versions(batch=batch)
        return result

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

    # --- reads --------------------------------------------------------------------------------
    async def has_claimable(self, *, at_ms: int | None = None) -> int:
        """0 = nothing to claim; 1 = queued or due retries; 2 = only expired leases."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        return int(
            await self._has_claimable(
                keys=[k.queued, k.retry, k.leases, k.parked(self.settings.prompt_version)],
                args=[now],
            )
        )

    async def replay_batch(
        self, scope: str, items: Sequence[tuple[str, int, str]], *, now_ms: int
    ) -> set[str]:
        """Give runs a fresh set of attempts (``memory-worker replay``), one script call.

        ``items`` are (run id, claimable at ms, replay error-log entry JSON); each
        run is re-checked against ``scope`` (retired, failed or skipped) inside the
        script. Answers the ids replayed (the others changed since the selection).
        """
        k = self.keys
        keys = [
            k.retired,
            k.retry,
            k.by_status(RunStatus.FAILED.value),
            k.counters,
            k.by_status(RunStatus.SKIPPED.value),
            *k.retired_summary,
        ]
        args: list[str | int] = [now_ms, scope, self.settings.error_log_max_entries]
        for run_id, available_at_ms, entry in items:
            keys += [k.run(run_id), k.run_errors(run_id)]
            args += [run_id, available_at_ms, entry]
        return {as_text(x) for x in await self._replay(keys=keys, args=args)}

    async def get(self, run_id: str) -> Run:
        runs = await self.get_many([run_id])
        if not runs:
            raise RunNotFound(run_id)
        return runs[0]

    async def get_many(self, run_ids: Sequence[str]) -> list[Run]:
        if not run_ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for rid in run_ids:
                pipe.hgetall(self.keys.run(rid))
                pipe.lrange(self.keys.run_errors(rid), 0, -1)
            raw = await pipe.execute()
        runs: list[Run] = []
        for i in range(0, len(raw), 2):
            h = {as_text(key): as_text(val) for key, val in raw[i].items()}
            if h:
                runs.append(self._run_from_hash(h, raw[i + 1]))
        return runs

    async def list_runs(self, status: RunStatus | None = None, limit: int = 100) -> list[Run]:
        """Most recently updated first (or created, without a status filter)."""
        key = self.keys.by_status(status.value) if status else self.keys.all_runs
        ids = await self.redis.zrevrange(key, 0, max(limit, 1) - 1)
        return await self.get_many([as_text(i) for i in ids])

    async def counts(self) -> dict[str, int]:
        """Runs per status (plus ``retired``), from the indexes."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for status in RunStatus:
                pipe.zcard(self.keys.by_status(status.value))
            pipe.zcard(self.keys.retired)
            values = await pipe.execute()
        out = {status.value: int(v) for status, v in zip(RunStatus, values, strict=False)}
        out["retired"] = int(values[-1])
        return out

    def _run_from_hash(self, h: dict[str, str], errors: list[bytes]) -> Run:
        request_cursor = orjson.loads(h["cursor"]) if h.get("cursor") else None
        return Run(
            id=h["id"],
            status=RunStatus(h["status"]),
            retired=h.get("retired") == "1",
            attempts=int(h.get("attempts") or 0),
            max_attempts=self.settings.max_attempts,
            releases=int(h.get("releases") or 0),
            error_log=[ErrorLogEntry.model_validate_json(e) for e in errors],
            chat_id=int(h["chat_id"]),
            thread_id=int(h["thread_id"]),
            range_start=datetime.fromisoformat(h["range_start"]),
            range_end=datetime.fromisoformat(h["range_end"]),
            prompt_version=h["prompt_version"] or None,
            cursor=Cursor.model_validate(request_cursor) if request_cursor else None,
            message_count=int(h.get("message_count") or 0),
            created_at=ms_to_dt(h["created_at"]) or datetime.now(UTC),
            updated_at=ms_to_dt(h["updated_at"]) or datetime.now(UTC),
            next_attempt_at=ms_to_dt(h.get("next_attempt_at")),
            lease_owner=h.get("lease_owner") or None,
            leased_until=ms_to_dt(h.get("leased_until")),
            result=orjson.loads(h["result"]) if h.get("result") else None,
        )


def _pairs(raw: list[Any]) -> dict[str, str]:
    return {as_text(raw[i]): as_text(raw[i + 1]) for i in range(0, len(raw), 2)}


def _request_from_hash(h: dict[str, str]) -> RunRequest:
    cursor = Cursor.model_validate_json(h["cursor"]) if h.get("cursor") else None
    return RunRequest(
        chat_id=int(h["chat_id"]),
        thread_id=int(h["thread_id"]),
        range_start=datetime.fromisoformat(h["range_start"]),
        range_end=datetime.fromisoformat(h["range_end"]),
        prompt_version=h["prompt_version"],
        cursor=cursor,
        messages=[Message.model_validate(m) for m in orjson.loads(h["messages"])],
    )
