"""RunStore: the Redis adapter for runs; every state change is one Lua script (``lua/``).

See the package docstring for the key layout and the lease rules.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson
from redis.asyncio import Redis
from redis.exceptions import RedisError

from llm_client import Rider, as_text, lua_text
from memory_worker.errors import (
    InvalidRunRequest,
    RunCancelled,
    RunNotFound,
    StoredRunUnreadable,
)
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.models import ErrorLogEntry, RouteError, Run, RunRequest, RunStatus
from memory_worker.privacy.masking import mask_error
from memory_worker.runs.codec import (
    claimed,
    pairs,
    release_entry,
    route_error_json,
    route_errors,
    run_from_hash,
)
from memory_worker.runs.model import (
    CLAIM_AGAIN,
    CLAIM_LOOPS,
    CLAIM_PEEK,
    CLAIM_PEEK_MAX,
    CODE_MAX_CHARS,
    ENQUEUE_CHECKS,
    HOURLY_KEEP_HOURS,
    PARK_PER_CLAIM,
    RESTORE_PER_CLAIM,
    ClaimedRun,
    ClaimResult,
    EnqueueResult,
    EnqueueStatus,
    LeaseAnswer,
    PruneResult,
    UnreadableClaim,
    new_run_id,
    now_ms,
    queued_run_fields,
)
from memory_worker.runs.policy import FailurePlan, ReleaseOrigin
from memory_worker.runs.prune import RunPrune
from memory_worker.runs.versions import VERSION_ACTION_LUA
from memory_worker.settings import Settings
from memory_worker.storage.connections import awaited
from memory_worker.storage.round_trip import call_with_riders

log = get_logger(__name__)

#: The store's pulse fields in ``workers:runs`` start with this (``lua/pulse.lua``).
PULSE_FIELD_PREFIX = "pulse:"


_SET_STATUS = lua_text(__package__, "set_status")
_PULSE = lua_text(__package__, "pulse")
_ENQUEUE = lua_text(__package__, "enqueue")
_CLAIM = VERSION_ACTION_LUA + _PULSE + lua_text(__package__, "claim")
_PARK = lua_text(__package__, "park")
_HEARTBEAT = _PULSE + lua_text(__package__, "heartbeat")
_DEREGISTER = lua_text(__package__, "deregister")
_RENEW = lua_text(__package__, "renew")
_COMPLETE = lua_text(__package__, "complete")
_SUMMARY = lua_text(__package__, "retired_summary")
_FAIL = _SET_STATUS + _SUMMARY + lua_text(__package__, "fail")
_RELEASE = _SET_STATUS + lua_text(__package__, "hourly", "release")
_HAS_CLAIMABLE = lua_text(__package__, "has_claimable")
_KEEP_EXTRACTION = lua_text(__package__, "keep_extraction")
_REPLAY = _SUMMARY + lua_text(__package__, "replay")
_CANCEL = _SUMMARY + lua_text(__package__, "cancel")
#: The statuses the claim script takes the indexes of, in its order (``lua/claim.lua``): a
#: claim never meets a cancelled run (the cancel takes it off every lane).
CLAIM_STATUSES = (
    RunStatus.QUEUED,
    RunStatus.PROCESSING,
    RunStatus.COMPLETED,
    RunStatus.FAILED,
    RunStatus.SKIPPED,
)
#: Times a cancel reads the run again when its status moved between the read and the script.
CANCEL_READS = 5


class RunStore:
    """Redis adapter for runs; every state change is one atomic script."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
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
        self._cancel = redis.register_script(_CANCEL)
        self._pruner = RunPrune(redis, settings)
        #: The lanes' heads as this store's last claim left them: the next claim's runs.
        self._claim_heads = LaneHeads([], [])
        self._park = redis.register_script(_PARK)
        self._keep_extraction = redis.register_script(_KEEP_EXTRACTION)

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
        # no version: the run takes the version of the worker that claims it (§7)
        pv = request.prompt_version or ""
        natural_key = request.natural_key(pv)
        run_id = new_run_id(now)
        range_end_ms = int(request.range_end.timestamp() * 1000)
        flat = queued_run_fields(request, run_id, natural_key, messages, now)
        day = datetime.fromtimestamp(now / 1000, tz=UTC).strftime("%Y%m%d")
        k = self.keys
        fixed_keys = [
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
        ]
        cap = [self.settings.max_queued_runs, self.settings.max_daily_enqueued_runs, 2 * 86_400]
        head = [natural_key, run_id, now, *cap, "1" if bypass_caps else "0", -range_end_ms]
        processing: list[str] = []  # read only when the script finds the queue full
        for _ in range(ENQUEUE_CHECKS):
            status, rid = await self._enqueue(
                keys=[*fixed_keys, *(k.run(i) for i in processing)],
                args=[*head, len(processing), *processing, *flat],
            )
            if as_text(status) != "check":
                break
            processing = [as_text(i) for i in await self.redis.zrange(k.leases, 0, -1)]
        else:  # claims kept changing the processing runs: the queue is full without them
            return EnqueueResult(EnqueueStatus.QUEUE_FULL, None)
        result_status = EnqueueStatus(as_text(status))
        return EnqueueResult(result_status, as_text(rid) or None)

    # --- claim and lease ------------------------------------------------------------------------
    async def claim(self, owner: str, *, at_ms: int | None = None) -> ClaimedRun | None:
        """Claim the next run: expired leases, then due retries, then queued (newest first)."""
        return (await self.claim_detailed(owner, at_ms=at_ms)).run

    async def claim_detailed(self, owner: str, *, at_ms: int | None = None) -> ClaimResult:
        """:meth:`claim`, plus the runs the claim retired (lease lost on the last attempt)
        or skipped (another prompt version) on its way, so the caller can report them.

        The script declares every key it touches (§2), so it may act only on the
        runs it is given: the lanes' heads as the previous claim's script left them. When
        it meets another head (other workers took those, a newer window was enqueued) it
        answers the heads as they are now and is called again with them."""
        _check_owner(owner)
        now = at_ms if at_ms is not None else now_ms()
        token = secrets.token_hex(8)
        retired: list[Any] = []
        skipped: list[Any] = []
        peek, parks, again, loops = CLAIM_PEEK, 0, 0, CLAIM_LOOPS
        candidates = self._claim_heads
        while True:
            fields, more_retired, more_skipped, park, moved, heads = await self._claim_once(
                owner, token, now, peek, candidates, loops
            )
            retired += more_retired
            skipped += more_skipped
            candidates = LaneHeads([as_text(i) for i in heads[0]], [as_text(i) for i in heads[1]])
            if park:
                # Each run of a newer version met at the head is parked once (O(log n)) and
                # never seen again by this version's workers; bounded so one claim stays short.
                await self._park_run(as_text(park[0]), as_text(park[1]), int(park[2]), now)
                parks += 1
                loops = CLAIM_LOOPS
                if parks > PARK_PER_CLAIM:
                    break
            elif int(moved) and again < CLAIM_AGAIN and loops > int(moved) - 1:
                again += 1
                loops -= int(moved) - 1  # one claim walks at most CLAIM_LOOPS heads
                peek = min(2 * peek, CLAIM_PEEK_MAX)  # they moved on: look further next time
            else:
                break
        self._claim_heads = candidates
        run, unreadable = None, None
        try:
            run = claimed(fields, token, owner)
        except StoredRunUnreadable as exc:  # claimed, but it can never be processed (§7)
            attempts = int(pairs(fields).get("attempts") or 0)
            unreadable = UnreadableClaim(exc.run_id, token, attempts, tuple(exc.problems))
        return ClaimResult(
            run,
            [as_text(i) for i in retired],
            [as_text(i) for i in skipped],
            unreadable,
        )

    async def _claim_once(
        self,
        owner: str,
        token: str,
        now: int,
        peek: int,
        candidates: LaneHeads,
        loops: int = CLAIM_LOOPS,
    ) -> list[Any]:
        """One claim script call among ``candidates`` (``lua/claim.lua`` says its answer)."""
        k, version = self.keys, self.settings.prompt_version
        leases = list(dict.fromkeys(candidates.leases))
        others = [i for i in dict.fromkeys(candidates.others) if i not in candidates.leases]
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
                k.forget_epochs,
                *(k.by_status(s.value) for s in CLAIM_STATUSES),
                *(key for run_id in leases for key in (k.run(run_id), k.run_errors(run_id))),
                *(k.run(run_id) for run_id in others),
            ],
            args=[
                now,
                int(self.settings.lease_seconds * 1000),
                owner,
                token,
                version,
                self.settings.max_attempts,
                loops,
                self.settings.error_log_max_entries,
                RESTORE_PER_CLAIM,
                self.heartbeat_ttl_ms,
                self.pulse_gap_ms,
                peek,
                len(leases),
                *leases,
                *others,
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
        self,
        owner: str,
        held: Sequence[str],
        *,
        concurrency: int,
        at_ms: int | None = None,
        keep_listed: bool = False,
        info: str = "",
    ) -> list[str]:
        """Register ``owner`` as alive, holding ``held``; returns the live workers' ids.

        ``keep_listed``: add ``held`` to the runs listed for ``owner`` instead of replacing
        them — while a claim is in flight, whose run the claim lists but ``held`` lacks.
        ``info``: what the console's workers page shows of it (JSON), kept in the same step."""
        _check_owner(owner)
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        live = await self._heartbeat(
            keys=[k.workers, k.worker_runs, k.worker_concurrency, k.worker_info],
            args=[
                now,
                self.heartbeat_ttl_ms,
                owner,
                concurrency,
                self.pulse_gap_ms,
                ",".join(sorted(held)),
                int(keep_listed),
                info,
            ],
        )
        return [as_text(w) for w in live]

    async def deregister(self, owner: str) -> None:
        k = self.keys
        await self._deregister(
            keys=[
                k.workers,
                k.worker_runs,
                k.worker_concurrency,
                k.worker_info,
                k.worker_completed,
            ],
            args=[owner],
        )

    async def renew(self, claim: ClaimedRun, *, at_ms: int | None = None) -> bool:
        """Extend the lease, even an expired one nobody took; False = another owner has it
        (or an operator cancelled the run: :meth:`renew_answer` tells the two apart).

        The one definite proof that the run is lost: any Redis error is raised, never
        read as a loss (§7)."""
        return await self.renew_answer(claim, at_ms=at_ms) is LeaseAnswer.HELD

    async def renew_answer(self, claim: ClaimedRun, *, at_ms: int | None = None) -> LeaseAnswer:
        """:meth:`renew`, answering why the lease is gone: lost, or the run cancelled (§13)."""
        now = at_ms if at_ms is not None else now_ms()
        until = now + int(self.settings.lease_seconds * 1000)
        answer = await self._renew(
            keys=[self.keys.run(claim.id), self.keys.leases], args=[claim.token, until, claim.id]
        )
        return LeaseAnswer(int(answer))

    async def checkpoint(self, claim: ClaimedRun) -> None:
        """Raise :class:`RunCancelled` when an operator cancelled ``claim``'s run (§13): the
        worker's checks before the embedding and the card write. A Redis error skips the
        check (the card write refuses a cancelled run's output by itself)."""
        try:
            status = await awaited(self.redis.hget(self.keys.run(claim.id), "status"))
        except RedisError:
            return
        if status is not None and as_text(status) == RunStatus.CANCELLED.value:
            raise RunCancelled(claim.id)

    async def cancel(self, run_id: str, entry: str, *, at_ms: int | None = None) -> CancelAnswer:
        """Take a run out for good (``lua/cancel.lua``): off its lane (queued, parked, due
        for a retry, retired or processing: its lease goes), status ``cancelled``, ``entry``
        (the error-log entry of the cancel, JSON) appended. The card side (its write
        refused) is the caller's step before this one (:mod:`memory_worker.upkeep.run_actions`)."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        for _ in range(CANCEL_READS):
            status, version = await awaited(
                self.redis.hmget(k.run(run_id), ["status", "prompt_version"])
            )
            if status is None:
                raise RunNotFound(run_id)
            status_text, pv = as_text(status), as_text(version or b"")
            outcome, before = await self._cancel(
                keys=[
                    k.queued,
                    k.retry,
                    k.leases,
                    k.retired,
                    k.counters,
                    k.parked_counts,
                    *k.retired_summary,
                    k.by_status(RunStatus.CANCELLED.value),
                    k.run(run_id),
                    k.run_errors(run_id),
                    k.by_status(status_text),
                    k.parked(pv),
                    k.run_extraction(run_id),
                ],
                args=[now, run_id, status_text, pv, entry, self.settings.error_log_max_entries],
            )
            answer = CancelAnswer(as_text(outcome), as_text(before))
            if answer.outcome == "missing":
                raise RunNotFound(run_id)
            if answer.outcome != "raced":
                if answer.outcome == "cancelled":
                    log.info("run_cancel_recorded", run_id=run_id, status_before=answer.before)
                return answer
        return CancelAnswer("raced", as_text(status))

    # --- outcomes -----------------------------------------------------------------------------
    async def complete(
        self,
        claim: ClaimedRun,
        result: dict[str, Any],
        *,
        at_ms: int | None = None,
        riders: Sequence[Rider] = (),
    ) -> bool:
        """Settle the run as completed (False: the lease is no longer ``claim``'s); ``riders``
        (its breakers' carried records) go first in the same round trip."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        ok = await call_with_riders(
            self.redis,
            riders,
            self._complete,
            keys=[
                k.run(claim.id),
                k.leases,
                k.counters,
                k.by_status(RunStatus.PROCESSING.value),
                k.by_status(RunStatus.COMPLETED.value),
                k.worker_completed,
                k.run_extraction(claim.id),
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
        origin: ReleaseOrigin | None = None,
    ) -> bool:
        """Record a failure (retire at the plan's word); a farm answer in ``origin`` is kept as
        its route's last error too, in the same script."""
        now = at_ms if at_ms is not None else now_ms()
        code = mask_error(code, limit=CODE_MAX_CHARS)
        origin = origin or ReleaseOrigin()
        entry = ErrorLogEntry(
            attempt=claim.attempts,
            failed_at=datetime.fromtimestamp(now / 1000, tz=UTC),
            code=code,
            reason=reason,
            message=mask_error(
                message,
                echoes=[m.text for m in claim.request.messages],
                limit=self.settings.error_message_max_chars,
            ),
            kind="retired" if plan.retire else "failure",
        )
        return await self._fail_entry(
            claim.id,
            claim.token,
            now,
            entry,
            plan,
            code=code,
            reason=reason,
            workflow=origin.workflow or "",
            route_error=self._route_error(claim, now, origin, code, reason),
        )

    async def fail_unreadable(self, run: UnreadableClaim, *, at_ms: int | None = None) -> bool:
        """Fail for good a claimed run whose stored request no longer validates (§7): it can
        never heal, so it retires at once (code ``StoredRunUnreadable``), its error-log entry
        naming the run and its fields, never their values (False: the lease is not ours)."""
        now = at_ms if at_ms is not None else now_ms()
        code = StoredRunUnreadable.__name__
        message = str(StoredRunUnreadable(run.id, list(run.problems)))
        entry = ErrorLogEntry(
            attempt=run.attempts,
            failed_at=datetime.fromtimestamp(now / 1000, tz=UTC),
            code=code,
            reason=None,
            message=mask_error(message, limit=self.settings.error_message_max_chars),
            kind="retired",
        )
        retire = FailurePlan(retire=True, next_attempt_at_ms=None)
        return await self._fail_entry(run.id, run.token, now, entry, retire, code=code, reason=None)

    async def _fail_entry(
        self,
        run_id: str,
        token: str,
        now: int,
        entry: ErrorLogEntry,
        plan: FailurePlan,
        *,
        code: str,
        reason: str | None,
        workflow: str = "",
        route_error: str = "",
    ) -> bool:
        """``lua/fail.lua``: ``entry`` appended, retried after the plan's backoff or retired."""
        k = self.keys
        ok = await self._fail(
            keys=[
                k.run(run_id),
                k.run_errors(run_id),
                k.leases,
                k.retry,
                k.retired,
                k.counters,
                k.by_status(RunStatus.PROCESSING.value),
                k.by_status(RunStatus.FAILED.value),
                *k.retired_summary,
                k.route_errors,
            ],
            args=[
                token,
                now,
                entry.model_dump_json(),
                "" if plan.next_attempt_at_ms is None else plan.next_attempt_at_ms,
                self.settings.error_log_max_entries,
                self._status_prefix,
                reason or "not_retryable",
                run_id,
                code,
                reason or "",
                workflow,
                route_error,
            ],
        )
        return bool(int(ok))

    def extraction_slot(self, claim: ClaimedRun) -> ExtractionSlot:
        """Where ``claim``'s run keeps its extraction between attempts (§7)."""
        return ExtractionSlot(self, claim)

    def _route_error(
        self, claim: ClaimedRun, now: int, origin: ReleaseOrigin, code: str, reason: str | None
    ) -> str:
        """The route's last error as the scripts store it ('' without a farm answer): the
        farm's message masked, minus what it echoed of the run's messages (§14)."""
        if not (origin.workflow and origin.answer is not None):
            return ""
        message = mask_error(
            origin.answer,
            echoes=[m.text for m in claim.request.messages],
            limit=self.settings.error_message_max_chars,
        )
        return route_error_json(now, origin, code=code, reason=reason, message=message)

    async def route_errors(self) -> dict[str, RouteError]:
        """Each route's last farm error (masked), by workflow (§15's outage banner)."""
        raw = await awaited(self.redis.hgetall(self.keys.route_errors))
        return route_errors(raw.items())

    async def release(
        self,
        claim: ClaimedRun,
        *,
        reason: str,
        at_ms: int | None = None,
        origin: ReleaseOrigin | None = None,
    ) -> bool:
        """Back to queued, attempt refunded, lease cleared, ``releases`` + 1, counted in its hour.

        The same script appends the release to the run's history (when, why, route, target,
        code) and, when ``origin`` carries the farm's answer, keeps it (masked) as its route's
        last error (§15)."""
        now = at_ms if at_ms is not None else now_ms()
        k = self.keys
        origin = origin or ReleaseOrigin()
        code = mask_error(origin.code, limit=CODE_MAX_CHARS) if origin.code else None
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
                k.route_errors,
            ],
            args=[
                claim.token,
                now,
                reason,
                self._status_prefix,
                claim.id,
                HOURLY_KEEP_HOURS,
                release_entry(now, reason, origin, code),
                self.settings.release_log_max_entries,
                origin.workflow or "",
                self._route_error(claim, now, origin, code or "", reason),
            ],
        )
        return bool(int(ok))

    # --- the kept extraction (§7) -------------------------------------------------------------
    async def keep_extraction(self, claim: ClaimedRun, record: bytes) -> bool:
        """Keep ``record`` (the run's validated extraction) for its next attempts, for
        ``MEMORY_EXTRACTION_KEEP_SECONDS``; False when refused: the lease is no longer
        ``claim``'s, or a forget of the chat came after the claim (``lua/keep_extraction.lua``)."""
        k = self.keys
        kept = await self._keep_extraction(
            keys=[k.run(claim.id), k.forget_epochs, k.run_extraction(claim.id)],
            args=[
                claim.token,
                str(claim.request.chat_id),
                claim.forget_epoch,
                record,
                int(self.settings.extraction_keep_seconds * 1000),
            ],
        )
        return bool(int(kept))

    async def kept_extraction(self, run_id: str) -> bytes | None:
        """The run's kept extraction as stored (None: none kept, or it expired)."""
        raw = await self.redis.get(self.keys.run_extraction(run_id))
        return None if raw is None else bytes(raw)

    async def prune_finished(self, *, at_ms: int | None = None, batch: int = 1000) -> int:
        """Delete completed/skipped runs older than the retention (in batches); returns how many."""
        return await self._pruner.finished(at_ms=at_ms, batch=batch)

    async def prune(self, *, at_ms: int | None = None, batch: int = 1000) -> PruneResult:
        """Every bound of the queue store at once (docs/runbook.md, "Bounded growth")."""
        return await self._pruner.all(at_ms=at_ms, batch=batch)

    async def unpark_older_versions(self, *, batch: int = 1000) -> int:
        """Runs parked for a version older than ours go back to the queue (to be skipped)."""
        return await self._pruner.unpark_older_versions(batch=batch)

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
        run is re-checked against ``scope`` (retired, failed, skipped, or ``run``: one run by
        id — failed, skipped or cancelled) inside the script. Answers the ids replayed (the others changed since the selection).
        """
        k = self.keys
        keys = [
            k.retired,
            k.retry,
            k.by_status(RunStatus.FAILED.value),
            k.counters,
            k.by_status(RunStatus.SKIPPED.value),
            *k.retired_summary,
            k.by_status(RunStatus.CANCELLED.value),
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

    async def get_many(self, run_ids: Sequence[str], *, skip_unreadable: bool = False) -> list[Run]:
        """The runs that exist, in order. A stored run that does not read as one raises
        :class:`StoredRunUnreadable` — or, for a listing (``skip_unreadable``), is left out
        with a ``run_unreadable`` warning naming its fields, so one corrupted hash cannot
        hide every other run from ``runs list`` and the console."""
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
            if not h:
                continue
            try:
                runs.append(run_from_hash(h, raw[i + 1]))
            except StoredRunUnreadable as exc:
                if not skip_unreadable:
                    raise
                log.warning("run_unreadable", run_id=run_ids[i // 2], problems=exc.problems)
        return runs

    async def list_runs(self, status: RunStatus | None = None, limit: int = 100) -> list[Run]:
        """Most recently updated first (or created, without a status filter)."""
        key = self.keys.by_status(status.value) if status else self.keys.all_runs
        ids = await self.redis.zrevrange(key, 0, max(limit, 1) - 1)
        return await self.get_many([as_text(i) for i in ids], skip_unreadable=True)

    async def list_retired(self, limit: int = 100) -> list[Run]:
        """Retired runs, most recently retired first."""
        ids = await self.redis.zrevrange(self.keys.retired, 0, max(limit, 1) - 1)
        return await self.get_many([as_text(i) for i in ids], skip_unreadable=True)

    async def waiting(self) -> int:
        """Runs still owed work: queued, processing, and failed with attempts left."""
        counts = await self.counts()
        return counts["queued"] + counts["processing"] + counts["failed"] - counts["retired"]

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


def _check_owner(owner: str) -> None:
    """Worker ids share ``workers:runs`` with the store's pulse (``lua/pulse.lua``)."""
    if owner.startswith(PULSE_FIELD_PREFIX):
        raise ValueError(f"a worker id cannot start with {PULSE_FIELD_PREFIX!r}: {owner!r}")


class CancelAnswer(NamedTuple):
    """What a cancel did: ``outcome`` (``cancelled``, ``already``, ``finished``, ``raced``)
    and the run's status before it."""

    outcome: str
    before: str


class LaneHeads(NamedTuple):
    """Ids at the head of the claim lanes: expired leases (the claim may retire one, so its
    error log is declared too), and due retries, queued runs and the last claimed run."""

    leases: list[str]
    others: list[str]


@dataclass(frozen=True, slots=True)
class ExtractionSlot:
    """One claimed run's kept extraction (§7): read it, keep one (under the claim's fences)."""

    store: RunStore
    claim: ClaimedRun

    async def load(self) -> bytes | None:
        return await self.store.kept_extraction(self.claim.id)

    async def save(self, record: bytes) -> bool:
        return await self.store.keep_extraction(self.claim, record)
