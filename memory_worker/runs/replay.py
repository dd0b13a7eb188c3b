"""Replay retired (or failed) runs (§11): pure selection and planning, one Lua script per batch.

After an incident that retired runs (the seed incident retired 7,897 of them),
an operator selects them by failure window, error code, reason, chat and
prompt version, and gives them a fresh set of attempts (scope ``skipped``
selects runs skipped for an older prompt version instead: they lose their
version and take the claiming worker's):

- attempts go back to 0 and ``retired`` is cleared, but the status stays
  ``failed``: replayed runs wait in the ``runs:retry`` bucket (score = when
  they become claimable), so they never count against the queued cap and
  fresh runs keep being accepted — nor do they after a release, until they
  complete or fail again (the ``uncapped`` mark, see ``runs/store.py``);
- the error log is kept and gains a ``{"kind": "replay"}`` entry;
- availability can be staggered to a drain rate (``14/min``): the i-th run
  becomes claimable ``i / rate`` after the replay, so a big replay drains
  behind the fresh runs instead of starving them (claim takes due retries
  before queued runs);
- repeating a replay is a no-op: the apply script re-checks every run
  (still ``failed``, attempts left to reset, still retired when replaying
  retired runs) inside the same atomic step that changes it;
- a run whose messages retention dropped cannot be replayed: a plan lists
  the ones the selection matches in ``aged_out`` (with when), so the CLI and
  the console say so run by run instead of leaving them out silently.

Retired runs are read from the summary the run-store scripts keep
(:mod:`memory_worker.runs.replay_summary`); the console's dry run
(:meth:`ReplayStore.preview`) answers a code/reason selection from its counts
and one page of aged-out runs, never reading every run.

The decisions (:func:`matches`, :func:`plan`, :func:`parse_rate`,
:func:`parse_when`) are pure; :class:`ReplayStore` reads candidates and
applies a plan with :data:`_APPLY`, one script call per batch.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from redis.asyncio import Redis

from llm_client import as_text
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.models import ErrorLogEntry, RunStatus
from memory_worker.runs import RunStore
from memory_worker.runs.replay_summary import AgedRun, RetiredSummary, count_matches, facts_value
from memory_worker.settings import Settings
from memory_worker.storage.connections import awaited

log = get_logger(__name__)

#: Runs changed by one script call (one round trip, bounded script run time).
BATCH_SIZE = 500


class ReplayScope(StrEnum):
    """Which runs a replay considers."""

    RETIRED = "retired"  # failed with attempts exhausted (the default)
    FAILED = "failed"  # every failed run, retired or still waiting for its backoff
    SKIPPED = "skipped"  # skipped for an older prompt version; replayed under the claimer's
    RUN = "run"  # one run by id (§13): failed, skipped or cancelled (:meth:`ReplayStore.plan_run`)


#: The scopes a filter may select (one run by id is not a filter).
FILTER_SCOPES = tuple(s for s in ReplayScope if s is not ReplayScope.RUN)


@dataclass(frozen=True, slots=True)
class ReplayFilter:
    """What the operator asked for; ``None`` fields match everything."""

    scope: ReplayScope = ReplayScope.RETIRED
    since_ms: int | None = None
    until_ms: int | None = None
    error_code: str | None = None
    reason: str | None = None
    chat_id: int | None = None
    prompt_version: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope.value,
            "since": _iso(self.since_ms),
            "until": _iso(self.until_ms),
            "error_code": self.error_code,
            "reason": self.reason,
            "chat_id": self.chat_id,
            "prompt_version": self.prompt_version,
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """The facts of one run that selection looks at (plain data, no message text)."""

    id: str
    chat_id: int
    prompt_version: str
    status: str
    retired: bool
    attempts: int
    #: When the run last failed (its score in the retired / failed index), ms.
    failed_at_ms: int
    #: Code and reason of the last failure entry of the error log (replay entries skipped).
    code: str | None
    reason: str | None
    #: False once retention dropped the run's messages: nothing left to replay.
    has_messages: bool = True
    #: When they were dropped (None: not known).
    aged_at_ms: int | None = None


@dataclass(frozen=True, slots=True)
class ReplayItem:
    """One run to replay and when it becomes claimable again."""

    run_id: str
    chat_id: int
    attempts: int
    code: str | None
    reason: str | None
    failed_at_ms: int
    available_at_ms: int


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    """Everything a replay will do, computed before anything is written."""

    filter: ReplayFilter
    now_ms: int
    rate_per_second: float | None
    items: tuple[ReplayItem, ...]
    #: Runs the selection matches whose messages aged out: they can no longer be replayed.
    aged_out: tuple[AgedRun, ...] = ()

    @property
    def by_code(self) -> dict[str, int]:
        return dict(Counter(item.code or "-" for item in self.items).most_common())

    @property
    def by_reason(self) -> dict[str, int]:
        return dict(Counter(item.reason or "-" for item in self.items).most_common())

    @property
    def last_available_ms(self) -> int | None:
        return self.items[-1].available_at_ms if self.items else None


@dataclass(slots=True)
class ReplayOutcome:
    """What the apply step did: replayed ids, and ids that changed since the selection."""

    replayed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ReplayPreview:
    """What a dry run shows: counts, availability and the runs that aged out (a page)."""

    filter: ReplayFilter
    now_ms: int
    rate_per_second: float | None
    matched: int
    by_code: dict[str, int]
    by_reason: dict[str, int]
    aged_out_count: int
    #: The first of them (all of them when built from a plan).
    aged_out: tuple[AgedRun, ...]

    @property
    def first_available_ms(self) -> int | None:
        return self.now_ms if self.matched else None

    @property
    def last_available_ms(self) -> int | None:
        if not self.matched:
            return None
        if self.rate_per_second is None:
            return self.now_ms
        return self.now_ms + math.floor((self.matched - 1) * 1000 / self.rate_per_second)

    @classmethod
    def of_plan(cls, replay: ReplayPlan) -> ReplayPreview:
        return cls(
            filter=replay.filter,
            now_ms=replay.now_ms,
            rate_per_second=replay.rate_per_second,
            matched=len(replay.items),
            by_code=replay.by_code,
            by_reason=replay.by_reason,
            aged_out_count=len(replay.aged_out),
            aged_out=replay.aged_out,
        )


def counts_answer(wanted: ReplayFilter) -> bool:
    """Can the summary's counts answer this selection (retired runs by code/reason only)?"""
    return wanted.scope is ReplayScope.RETIRED and (
        wanted.since_ms,
        wanted.until_ms,
        wanted.chat_id,
        wanted.prompt_version,
    ) == (None, None, None, None)


# --- pure decisions --------------------------------------------------------------------------


#: Error-log entries that record an operator's action, not a failure.
OPERATOR_KINDS = frozenset({"replay", "cancel"})


def last_failure(entries: Sequence[ErrorLogEntry]) -> ErrorLogEntry | None:
    """The newest entry of an error log that is a failure (replay and cancel entries are
    skipped)."""
    for entry in reversed(entries):
        if entry.kind not in OPERATOR_KINDS:
            return entry
    return None


def last_failure_of_raw(raw_entries: Sequence[bytes | str]) -> ErrorLogEntry | None:
    """:func:`last_failure` over the stored JSON, parsing from the newest entry back only as
    far as needed (a long retired run's log is not decoded entry by entry: the console's and
    the CLI's replay preview read thousands of logs)."""
    for raw in reversed(raw_entries):
        entry = ErrorLogEntry.model_validate_json(raw)
        if entry.kind not in OPERATOR_KINDS:
            return entry
    return None


def eligible(candidate: Candidate, scope: ReplayScope) -> bool:
    """Can this run be replayed at all? (The apply script checks the same, atomically.)"""
    if not candidate.has_messages:
        return False
    if scope is ReplayScope.SKIPPED:
        return candidate.status == RunStatus.SKIPPED.value
    if scope is ReplayScope.RUN and candidate.status in (
        RunStatus.SKIPPED.value,
        RunStatus.CANCELLED.value,
    ):
        return True
    if candidate.status != RunStatus.FAILED.value or candidate.attempts <= 0:
        return False
    return candidate.retired or scope in (ReplayScope.FAILED, ReplayScope.RUN)


def aged_out(candidate: Candidate, wanted: ReplayFilter) -> bool:
    """Would ``candidate`` be selected, were its messages not gone (retention dropped them)?"""
    return not candidate.has_messages and matches(
        dataclasses.replace(candidate, has_messages=True), wanted
    )


def matches(candidate: Candidate, wanted: ReplayFilter) -> bool:
    """Does ``candidate`` fall in the operator's selection?"""
    if not eligible(candidate, wanted.scope):
        return False
    if wanted.since_ms is not None and candidate.failed_at_ms < wanted.since_ms:
        return False
    if wanted.until_ms is not None and candidate.failed_at_ms > wanted.until_ms:
        return False
    if wanted.error_code is not None and (candidate.code or "").casefold() != (
        wanted.error_code.casefold()
    ):
        return False
    if wanted.reason is not None and (candidate.reason or "").casefold() != (
        wanted.reason.casefold()
    ):
        return False
    if wanted.chat_id is not None and candidate.chat_id != wanted.chat_id:
        return False
    return wanted.prompt_version is None or candidate.prompt_version == wanted.prompt_version


def plan(
    candidates: Iterable[Candidate],
    wanted: ReplayFilter,
    *,
    now_ms: int,
    rate_per_second: float | None = None,
) -> ReplayPlan:
    """Select the runs and space their availability at ``rate_per_second`` (None = all now).

    Runs that failed first are replayed first; the i-th becomes claimable at
    ``now + i / rate``.
    """
    if rate_per_second is not None and rate_per_second <= 0:
        raise ValueError("rate must be positive")
    pool = sorted(candidates, key=lambda c: (c.failed_at_ms, c.id))
    selected = [c for c in pool if matches(c, wanted)]
    gone = tuple(
        AgedRun(c.id, c.chat_id, c.code, c.reason, c.failed_at_ms, c.aged_at_ms)
        for c in pool
        if aged_out(c, wanted)
    )
    items = tuple(
        ReplayItem(
            run_id=c.id,
            chat_id=c.chat_id,
            attempts=c.attempts,
            code=c.code,
            reason=c.reason,
            failed_at_ms=c.failed_at_ms,
            available_at_ms=now_ms
            + (0 if rate_per_second is None else math.floor(i * 1000 / rate_per_second)),
        )
        for i, c in enumerate(selected)
    )
    return ReplayPlan(wanted, now_ms, rate_per_second, items, gone)


_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:/\s*(s|sec|second|m|min|minute|h|hour))?\s*$", re.I)
_PER = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0}
_PER |= {"h": 3600.0, "hour": 3600.0}


def parse_rate(text: str) -> float:
    """``"14/min"`` → runs per second (``/s``, ``/min``, ``/h``; a bare number is per minute)."""
    found = _RATE.match(text)
    if not found or float(found.group(1)) <= 0:
        raise ValueError(f"rate {text!r}: expected e.g. 14/min, 2/s or 500/h")
    unit = (found.group(2) or "min").lower()
    return float(found.group(1)) / _PER[unit]


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$", re.I)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_when(text: str, *, now: datetime) -> datetime:
    """An RFC 3339 / ISO time (naive = UTC), or a duration ago: ``90m``, ``6h``, ``2d``."""
    found = _DURATION.match(text)
    if found:
        seconds = float(found.group(1)) * _UNIT_SECONDS[found.group(2).lower()]
        try:
            return now - timedelta(seconds=seconds)
        except OverflowError:  # 99999999999d: before year 1, not a time a run failed at
            raise ValueError(f"time {text!r}: too far in the past") from None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"time {text!r}: expected ISO 8601 (2026-11-01T10:00Z) or 6h / 2d ago"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def replay_entry(item: ReplayItem, *, now_ms: int) -> ErrorLogEntry:
    """The error-log entry that records a replay (codes and counts only)."""
    return ErrorLogEntry(
        attempt=item.attempts,
        failed_at=datetime.fromtimestamp(now_ms / 1000, tz=UTC),
        code="replay",
        reason=item.reason,
        message=f"replayed by an operator: attempts {item.attempts} -> 0"
        + (f" (last failure {item.code})" if item.code else ""),
        kind="replay",
    )


def _iso(ms: int | None) -> str | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()


# --- the Redis shell --------------------------------------------------------------------------

_FIELDS = ("chat_id", "prompt_version", "status", "retired", "attempts")


class ReplayStore:
    """Reads replay candidates from the indexes and applies a plan atomically per batch."""

    def __init__(
        self, redis: Redis, settings: Settings, runs: RunStore, *, batch_size: int = BATCH_SIZE
    ):
        self.redis = redis
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self.batch_size = batch_size
        self.runs = runs
        self.summary = RetiredSummary(redis, self.keys)

    def _index(self, scope: ReplayScope) -> str:
        if scope is ReplayScope.RETIRED:
            return self.keys.retired
        if scope is ReplayScope.SKIPPED:
            return self.keys.by_status(RunStatus.SKIPPED.value)
        return self.keys.by_status(RunStatus.FAILED.value)

    async def candidates(self, wanted: ReplayFilter, *, page: int = 2000) -> list[Candidate]:
        """Runs of the scope's index inside the failure window (read only).

        Retired runs come from the summary when it is in step (two reads, see
        :mod:`memory_worker.runs.replay_summary`), else every run is read (paged).
        """
        low = "-inf" if wanted.since_ms is None else str(wanted.since_ms)
        high = "+inf" if wanted.until_ms is None else str(wanted.until_ms)
        if wanted.scope is ReplayScope.RETIRED and await self.summary.ready():
            return [
                Candidate(
                    id=run_id,
                    chat_id=facts.chat_id,
                    prompt_version=facts.prompt_version,
                    status=RunStatus.FAILED.value,
                    retired=True,
                    attempts=facts.attempts,
                    failed_at_ms=failed_at,
                    code=facts.code,
                    reason=facts.reason,
                    has_messages=aged_at is None,
                    aged_at_ms=aged_at,
                )
                for run_id, failed_at, facts, aged_at in await self.summary.facts(low, high)
                if facts is not None
            ]
        return await self.read_every_run(wanted, low, high, page)

    async def read_every_run(
        self, wanted: ReplayFilter, low: str, high: str, page: int = 2000
    ) -> list[Candidate]:
        """Every run of the scope's index in the window, read record by record (the path
        before the summary; still the one of the failed and skipped scopes)."""
        index = self._index(wanted.scope)
        found: list[Candidate] = []
        offset = 0
        while True:
            rows = await self.redis.zrangebyscore(
                index, low, high, start=offset, num=page, withscores=True
            )
            if not rows:
                return found
            found.extend(await self._facts([(as_text(m), int(s)) for m, s in rows]))
            if len(rows) < page:
                return found
            offset += page

    async def _facts(self, rows: Sequence[tuple[str, int]]) -> list[Candidate]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for run_id, _ in rows:
                pipe.hmget(self.keys.run(run_id), list(_FIELDS))
                pipe.lrange(self.keys.run_errors(run_id), 0, -1)
                pipe.hexists(self.keys.run(run_id), "messages")
            raw = await pipe.execute()
        out: list[Candidate] = []
        for (run_id, score), values, errors, has_messages in zip(
            rows, raw[0::3], raw[1::3], raw[2::3], strict=True
        ):
            chat_id, prompt_version, status, retired, attempts = (as_text(v) for v in values)
            if not status:
                continue  # the run expired or was deleted since the index was read
            entry = last_failure_of_raw(errors)
            out.append(
                Candidate(
                    id=run_id,
                    chat_id=int(chat_id),
                    prompt_version=prompt_version,
                    status=status,
                    retired=retired == "1",
                    attempts=int(attempts or 0),
                    failed_at_ms=score,
                    code=entry.code if entry else None,
                    reason=entry.reason if entry else None,
                    has_messages=bool(has_messages),
                )
            )
        return out

    async def plan(
        self, wanted: ReplayFilter, *, now_ms: int, rate_per_second: float | None = None
    ) -> ReplayPlan:
        """Read the candidates and plan the replay (writes nothing)."""
        return plan(
            await self.candidates(wanted), wanted, now_ms=now_ms, rate_per_second=rate_per_second
        )

    async def plan_run(self, run_id: str, *, now_ms: int) -> ReplayPlan:
        """The plan of replaying one run by id (§13): one item when it is failed (attempts to
        reset), skipped or cancelled and still holds its messages; none otherwise (its
        ``aged_out`` names it when only the messages are missing). Raises
        :class:`~memory_worker.errors.RunNotFound`."""
        run = await self.runs.get(run_id)
        has_messages = await awaited(self.redis.hexists(self.keys.run(run_id), "messages"))
        entry = last_failure(run.error_log)
        candidate = Candidate(
            id=run.id,
            chat_id=run.chat_id,
            prompt_version=run.prompt_version or "",
            status=run.status.value,
            retired=run.retired,
            attempts=run.attempts,
            failed_at_ms=int(run.updated_at.timestamp() * 1000),
            code=entry.code if entry else None,
            reason=entry.reason if entry else None,
            has_messages=bool(has_messages),
        )
        return plan([candidate], ReplayFilter(scope=ReplayScope.RUN), now_ms=now_ms)

    async def preview(
        self, wanted: ReplayFilter, *, now_ms: int, rate_per_second: float | None = None
    ) -> ReplayPreview:
        """The dry run of the console: from the summary's counts and one page of aged-out runs
        when they can answer (:func:`counts_answer`), else from a full plan. Writes nothing."""
        if rate_per_second is not None and rate_per_second <= 0:
            raise ValueError("rate must be positive")
        if not (counts_answer(wanted) and await self.summary.ready()):
            return ReplayPreview.of_plan(
                await self.plan(wanted, now_ms=now_ms, rate_per_second=rate_per_second)
            )
        counts = await self.summary.counts()
        by_code, by_reason, aged = count_matches(
            counts, code=wanted.error_code, reason=wanted.reason
        )
        page = await self.summary.aged_page(code=wanted.error_code, reason=wanted.reason)
        return ReplayPreview(
            filter=wanted,
            now_ms=now_ms,
            rate_per_second=rate_per_second,
            matched=sum(by_code.values()),
            by_code=dict(by_code.most_common()),
            by_reason=dict(by_reason.most_common()),
            aged_out_count=aged,
            aged_out=tuple(page) if aged else (),
        )

    async def reconcile_summary(self, *, now_ms: int) -> tuple[int, int]:
        """Bring the retired-run summary in step with the index (maintenance): (added, removed)."""

        async def read(ids: Sequence[str]) -> list[tuple[str, str, int]]:
            scores = await self.redis.zmscore(self.keys.retired, list(ids))
            rows = [(r, int(s)) for r, s in zip(ids, scores, strict=True) if s is not None]
            return [
                (
                    c.id,
                    facts_value(c.code, c.reason, c.chat_id, c.prompt_version, c.attempts),
                    c.failed_at_ms,
                )
                for c in await self._facts(rows)
            ]

        return await self.summary.reconcile(
            read,
            now_ms=now_ms,
            retention_ms=int(self.settings.retired_run_message_retention_days * 86_400_000),
        )

    async def apply(
        self,
        replay: ReplayPlan,
        *,
        on_batch: Callable[[int], None] | None = None,
    ) -> ReplayOutcome:
        """Apply ``replay`` in batches of one script call each; re-checks every run."""
        outcome = ReplayOutcome()
        for start in range(0, len(replay.items), self.batch_size):
            batch = replay.items[start : start + self.batch_size]
            done = await self.runs.replay_batch(
                replay.filter.scope.value,
                [
                    (
                        item.run_id,
                        item.available_at_ms,
                        replay_entry(item, now_ms=replay.now_ms).model_dump_json(),
                    )
                    for item in batch
                ],
                now_ms=replay.now_ms,
            )
            replayed = [item for item in batch if item.run_id in done]
            outcome.replayed.extend(item.run_id for item in replayed)
            outcome.skipped.extend(item.run_id for item in batch if item.run_id not in done)
            if replayed:
                log.info(
                    "runs_replayed",
                    count=len(replayed),
                    run_ids=[item.run_id for item in replayed],
                    chat_ids=sorted({item.chat_id for item in replayed}),
                    attempt=0,
                    reasons=dict(Counter(item.reason or "-" for item in replayed)),
                )
            if on_batch is not None:
                on_batch(len(batch))
        return outcome
