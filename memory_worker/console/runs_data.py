"""The console's runs pages as plain data: the filtered, paged list and one run (§15).

Counts come from the store's ZSET indexes, lists page through an index with
offsets and read only the fields they show; filters no index serves examine
at most :data:`SCAN_BUDGET` index entries per request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from redis.asyncio import Redis

from llm_client import as_text
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.models import ErrorLogEntry, Run, RunStatus
from memory_worker.privacy.masking import scrub
from memory_worker.settings import Settings
from memory_worker.wiring import run_store

log = get_logger(__name__)

#: Index entries one runs-list request may examine (filters that no index serves).
SCAN_BUDGET = 2000
SCAN_CHUNK = 250
PAGE_SIZE = 50
#: Statuses the runs list filters on; ``retired`` is the retired index.
RUN_FILTERS = (*(s.value for s in RunStatus), "retired")


@dataclass(frozen=True, slots=True)
class RunFilter:
    status: str | None = None
    chat_id: int | None = None
    error_code: str | None = None
    reason: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None

    @property
    def needs_scan(self) -> bool:
        """Filters that no index serves (checked run by run)."""
        return self.chat_id is not None or bool(self.error_code) or bool(self.reason)

    def admits(self, chat_id: int, code: str | None, reason: str | None) -> bool:
        """Do a run's chat and last error pass the filters that no index serves?"""
        if self.chat_id is not None and chat_id != self.chat_id:
            return False
        if self.error_code and (code or "").casefold() != self.error_code.casefold():
            return False
        return not (self.reason and (reason or "").casefold() != self.reason.casefold())


@dataclass(frozen=True, slots=True)
class RunRow:
    id: str
    status: str
    retired: bool
    chat_id: int
    thread_id: int
    attempts: int
    releases: int
    created_at_ms: int
    updated_at_ms: int
    lease_owner: str
    code: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class RunPage:
    rows: list[RunRow]
    #: Index offset to continue from (None: the index is exhausted).
    next_offset: int | None
    offset: int
    scanned: int
    #: Entries of the index inside the time window (every run the filters start from).
    in_window: int
    index: str


_ROW_FIELDS = (
    "id",
    "status",
    "retired",
    "chat_id",
    "thread_id",
    "attempts",
    "releases",
    "created_at",
    "updated_at",
    "lease_owner",
)


def _row(values: Sequence[Any], last_error: Any) -> RunRow | None:
    """A listed run's row; None for none, or for a hash that no longer reads (a hand edit,
    a corruption: the run page names its fields) — one such run must not hide the others."""
    try:
        return _read_row(values, last_error)
    except (ValueError, TypeError, OverflowError):  # int()'s and pydantic's
        h = dict(zip(_ROW_FIELDS, (as_text(v) for v in values), strict=True))
        log.warning("run_unreadable", run_id=h["id"], where="console_list")
        return None


def _read_row(values: Sequence[Any], last_error: Any) -> RunRow | None:
    h = dict(zip(_ROW_FIELDS, (as_text(v) for v in values), strict=True))
    if not h["status"]:
        return None
    entry = ErrorLogEntry.model_validate_json(last_error) if last_error else None
    return RunRow(
        id=h["id"],
        status=h["status"],
        retired=h["retired"] == "1",
        chat_id=int(h["chat_id"] or 0),
        thread_id=int(h["thread_id"] or 0),
        attempts=int(h["attempts"] or 0),
        releases=int(h["releases"] or 0),
        created_at_ms=int(h["created_at"] or 0),
        updated_at_ms=int(h["updated_at"] or 0),
        lease_owner=h["lease_owner"],
        code=scrub(entry.code) if entry else None,  # a farm's code is its own text
        reason=entry.reason if entry else None,
    )


def run_index(keys: Keys, status: str | None) -> str:
    if status == "retired":
        return keys.retired
    if status:
        return keys.by_status(RunStatus(status).value)
    return keys.all_runs


async def runs_page(
    redis: Redis,
    settings: Settings,
    wanted: RunFilter,
    *,
    offset: int = 0,
    page_size: int = PAGE_SIZE,
    budget: int = SCAN_BUDGET,
) -> RunPage:
    """One page of runs, newest first, read from the index in chunks: never every run.

    The index is the status's ZSET (score = last update; ``retired``: retirement time)
    or ``runs:all`` (score = creation). The time window is a score range; chat, code and
    reason are checked on the rows read, at most ``budget`` index entries per page.
    """
    keys = Keys(settings.key_prefix)
    index = run_index(keys, wanted.status)
    high = "+inf" if wanted.until_ms is None else str(wanted.until_ms)
    low = "-inf" if wanted.since_ms is None else str(wanted.since_ms)
    rows: list[RunRow] = []
    scanned = 0
    position = offset
    exhausted = False
    while len(rows) < page_size and scanned < budget:
        chunk = min(SCAN_CHUNK if wanted.needs_scan else page_size - len(rows), budget - scanned)
        ids = [
            as_text(i)
            for i in await redis.zrevrangebyscore(index, high, low, start=position, num=chunk)
        ]
        if not ids:
            exhausted = True
            break
        # a cheap first pass reads only what the scan filters need; full rows for hits only
        hits = await _prefilter(redis, keys, ids, wanted) if wanted.needs_scan else ids
        wanted_hits = hits[: page_size - len(rows)]
        rows.extend(await _rows(redis, keys, wanted_hits, wanted))
        if len(hits) > len(wanted_hits):  # the page filled inside this chunk
            consumed = ids.index(wanted_hits[-1]) + 1 if wanted_hits else 0
            scanned += consumed
            position += consumed
            break
        scanned += len(ids)
        position += len(ids)
        if len(ids) < chunk:
            exhausted = True
            break
    in_window = int(await redis.zcount(index, low, high))
    if position >= in_window:
        exhausted = True
    return RunPage(
        rows=rows,
        next_offset=None if exhausted else position,
        offset=offset,
        scanned=scanned,
        in_window=in_window,
        index=wanted.status or "all",
    )


async def _prefilter(redis: Redis, keys: Keys, ids: Sequence[str], wanted: RunFilter) -> list[str]:
    """The ids whose chat and last error match ``wanted`` (one pipelined read, no parsing
    of anything else)."""
    by_error = bool(wanted.error_code or wanted.reason)
    async with redis.pipeline(transaction=False) as pipe:
        for rid in ids:
            pipe.hget(keys.run(rid), "chat_id")
            if by_error:
                pipe.lindex(keys.run_errors(rid), -1)
        raw = await pipe.execute()
    step = 2 if by_error else 1
    hits = []
    for i, rid in enumerate(ids):
        chat = raw[i * step]
        if chat is None:
            continue
        last = orjson.loads(raw[i * step + 1]) if by_error and raw[i * step + 1] else {}
        code, reason = str(last.get("code") or ""), str(last.get("reason") or "")
        if wanted.admits(int(chat), code, reason):
            hits.append(rid)
    return hits


async def _rows(redis: Redis, keys: Keys, ids: Sequence[str], wanted: RunFilter) -> list[RunRow]:
    if not ids:
        return []
    async with redis.pipeline(transaction=False) as pipe:
        for rid in ids:
            pipe.hmget(keys.run(rid), list(_ROW_FIELDS))
            pipe.lindex(keys.run_errors(rid), -1)
        raw = await pipe.execute()
    rows = (_row(raw[2 * i], raw[2 * i + 1]) for i in range(len(ids)))
    return [
        row for row in rows if row is not None and wanted.admits(row.chat_id, row.code, row.reason)
    ]


async def run_detail(redis: Redis, settings: Settings, run_id: str) -> Run | None:
    """One run (its error log, releases, attempts, lease) or None."""
    runs = await run_store(redis, settings).get_many([run_id])
    return runs[0] if runs else None
