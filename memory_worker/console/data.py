"""What the console shows, gathered from Redis as plain data (§15); rendering lives in templates.

Each ``*_data`` function answers one page with a bounded number of round trips,
whatever the number of runs stored: counts come from the store's ZSET indexes
(``ZCARD``/``ZCOUNT``), lists page through an index with offsets and read only
the fields they show, and the outage facts come from the same keys the metrics
and ``/readyz`` read. Nothing here reads message text except :func:`memory_data`,
which the console calls only when ``MEMORY_CONSOLE_SHOW_MEMORY`` is on.

The decisions (:func:`outage_banner`, :func:`mask_setting`, :func:`hourly_buckets`,
:func:`superseded_chains`, :func:`card_matches`) are pure functions on plain data.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from arq.connections import ArqRedis
from pydantic import SecretStr

from llm_client.breaker import BreakerView, Circuit
from llm_client.breaker_store import BreakerStore
from llm_client.events import EventType, RedisEventLog, RoutingEvent
from llm_client.redis_text import as_text
from llm_client.routes import RoutesConfig, RoutesError, load_routes
from memory_worker.cards import Card, CardStore, Episode
from memory_worker.keys import Keys
from memory_worker.metrics import Sample, fleet_breakers, read_sample
from memory_worker.models import ErrorLogEntry, Run, RunStatus
from memory_worker.paging import page_decision
from memory_worker.run_store import RunStore
from memory_worker.sentry import redact_url
from memory_worker.settings import Settings, env_name

#: Index entries one runs-list request may examine (filters that no index serves).
SCAN_BUDGET = 2000
SCAN_CHUNK = 250
PAGE_SIZE = 50
#: Statuses the runs list filters on; ``retired`` is the retired index.
RUN_FILTERS = (*(s.value for s in RunStatus), "retired")
HOURS = 24


def iso(ms: float | None) -> str | None:
    """Milliseconds since the epoch as a UTC clock text (None stays None)."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# --- routes ------------------------------------------------------------------------------------


def load_console_routes(settings: Settings) -> RoutesConfig | None:
    """The configured routes (None when the routes file is unusable: the console still serves)."""
    try:
        return load_routes(settings.routes_file, settings.route_defaults(), require_secrets=False)
    except (RoutesError, ValueError):
        return None


def route_targets(routes: RoutesConfig | None) -> dict[str, list[str]]:
    """Workflow → its target ids, in route order."""
    if routes is None:
        return {}
    return {wf: [t.id for t in route.targets] for wf, route in routes.routes.items()}


# --- the outage banner (pure) ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpenRoute:
    workflow: str
    since_ms: int | None
    targets: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Banner:
    """What every page shows during an outage (None = no outage)."""

    since_ms: int | None
    open_routes: tuple[OpenRoute, ...]
    next_probe_in_s: float | None
    runs_waiting: int
    pages_sent: int
    pages_suppressed: int
    attempts_spent: int
    deferred: bool


def outage_banner(
    *,
    now_ms: int,
    routes: Mapping[str, Sequence[str]],
    breakers: Sequence[BreakerView],
    deferred_since_ms: int | None,
    next_tick_ms: int | None,
    runs_waiting: int,
    pages: Mapping[str, int],
    failed_since: int,
) -> Banner | None:
    """The outage facts, or None when the pipeline is not deferred and no route is all-open.

    A route is open when every one of its targets' breakers is not closed; it is open
    since the latest of its targets' openings (the moment the last way out closed).
    The next probe is the earliest delayed tick, else the earliest end of a cooldown.
    """
    by_target = {v.target: v for v in breakers}
    open_routes: list[OpenRoute] = []
    for workflow, targets in routes.items():
        views = [by_target.get(t) for t in targets]
        if targets and all(v is not None and v.circuit is not Circuit.CLOSED for v in views):
            opened = [v.opened_at_ms for v in views if v is not None and v.opened_at_ms]
            open_routes.append(OpenRoute(workflow, max(opened) if opened else None, tuple(targets)))
    if deferred_since_ms is None and not open_routes:
        return None
    starts = [r.since_ms for r in open_routes if r.since_ms is not None]
    if deferred_since_ms is not None:
        starts.append(deferred_since_ms)
    next_probe: float | None = None
    if next_tick_ms is not None:
        next_probe = max(0.0, (next_tick_ms - now_ms) / 1000)
    else:
        cooldowns = [
            v.cooldown_remaining_s
            for v in breakers
            if v.circuit is Circuit.OPEN and any(v.target in r.targets for r in open_routes)
        ]
        if cooldowns:
            next_probe = max(0.0, min(cooldowns))
    return Banner(
        since_ms=min(starts) if starts else None,
        open_routes=tuple(open_routes),
        next_probe_in_s=next_probe,
        runs_waiting=runs_waiting,
        pages_sent=int(pages.get("sent", 0)),
        pages_suppressed=int(pages.get("suppressed", 0)),
        attempts_spent=failed_since,
        deferred=deferred_since_ms is not None,
    )


async def banner_data(
    redis: ArqRedis,
    settings: Settings,
    routes: Mapping[str, Sequence[str]],
    *,
    breakers: Sequence[BreakerView] | None = None,
    now_ms: int | None = None,
) -> Banner | None:
    """Read the outage facts (two round trips) and decide the banner."""
    keys = Keys(settings.key_prefix)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if breakers is None:
        targets = list(dict.fromkeys(t for ts in routes.values() for t in ts))
        breakers = await fleet_breakers(redis, settings).views(targets, now_ms=now)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hget(keys.pipeline_state, "deferred_since")
        pipe.zrangebyscore(keys.arq_queue, now, "+inf", start=0, num=20, withscores=True)
        pipe.zcard(keys.queued)
        pipe.zcard(keys.retry)
        pipe.hgetall(keys.admin_counters)
        deferred, delayed, queued, retry, pages = await pipe.execute()
    tick_prefix = keys.tick_job_id("")
    ticks = [int(score) for member, score in delayed if as_text(member).startswith(tick_prefix)]
    deferred_ms = int(deferred) if deferred else None
    failed_since = 0
    if deferred_ms is not None or any(v.circuit is not Circuit.CLOSED for v in breakers):
        opened = [v.opened_at_ms for v in breakers if v.opened_at_ms]
        start = min([*opened, *([deferred_ms] if deferred_ms else [])], default=now)
        failed_since = int(
            await redis.zcount(keys.by_status(RunStatus.FAILED.value), start, "+inf")
        )
    return outage_banner(
        now_ms=now,
        routes=routes,
        breakers=breakers,
        deferred_since_ms=deferred_ms,
        next_tick_ms=min(ticks) if ticks else None,
        runs_waiting=int(queued) + int(retry),
        pages={as_text(k): int(v) for k, v in pages.items()},
        failed_since=failed_since,
    )


# --- overview ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HourBar:
    start_ms: int
    completed: int
    failed: int


def hourly_buckets(now_ms: int, hours: int = HOURS) -> list[tuple[int, int]]:
    """``hours`` closed-open hour windows ending with the current (partial) hour, oldest first."""
    top = now_ms - now_ms % 3_600_000 + 3_600_000
    return [
        (top - (hours - i) * 3_600_000, top - (hours - i - 1) * 3_600_000) for i in range(hours)
    ]


@dataclass(frozen=True, slots=True)
class Overview:
    sample: Sample
    hours: list[HourBar]
    released: int
    failed_total: int
    retired_total: int
    completed_total: int


async def overview_data(
    redis: ArqRedis, settings: Settings, targets: Sequence[str], *, now_ms: int | None = None
) -> Overview:
    """The metrics sample (the same read ``/metrics`` does) plus completions/failures per hour."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    sample = await read_sample(
        redis, settings, breakers=fleet_breakers(redis, settings), targets=targets, now=now / 1000
    )
    keys = Keys(settings.key_prefix)
    buckets = hourly_buckets(now)
    async with redis.pipeline(transaction=False) as pipe:
        for low, high in buckets:
            pipe.zcount(keys.by_status(RunStatus.COMPLETED.value), low, f"({high}")
            pipe.zcount(keys.by_status(RunStatus.FAILED.value), low, f"({high}")
        counts = await pipe.execute()
    hours = [
        HourBar(low, int(counts[2 * i]), int(counts[2 * i + 1]))
        for i, (low, _) in enumerate(buckets)
    ]
    c = sample.counters
    return Overview(
        sample=sample,
        hours=hours,
        released=sum(v for k, v in c.items() if k.startswith("released:")),
        failed_total=sum(v for k, v in c.items() if k.startswith("failed:")),
        retired_total=sum(v for k, v in c.items() if k.startswith("retired:")),
        completed_total=int(c.get("completed", 0)),
    )


# --- runs --------------------------------------------------------------------------------------


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
        code=entry.code if entry else None,
        reason=entry.reason if entry else None,
    )


def row_matches(row: RunRow, wanted: RunFilter) -> bool:
    """Does ``row`` pass the filters that no index serves?"""
    if wanted.chat_id is not None and row.chat_id != wanted.chat_id:
        return False
    if wanted.error_code and (row.code or "").casefold() != wanted.error_code.casefold():
        return False
    return not (wanted.reason and (row.reason or "").casefold() != wanted.reason.casefold())


def run_index(keys: Keys, status: str | None) -> str:
    if status == "retired":
        return keys.retired
    if status:
        return keys.by_status(RunStatus(status).value)
    return keys.all_runs


async def runs_page(
    redis: ArqRedis,
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


async def _prefilter(
    redis: ArqRedis, keys: Keys, ids: Sequence[str], wanted: RunFilter
) -> list[str]:
    """The ids whose chat and last error match ``wanted`` (one pipelined read, no parsing
    of anything else)."""
    by_error = bool(wanted.error_code or wanted.reason)
    async with redis.pipeline(transaction=False) as pipe:
        for rid in ids:
            pipe.hget(keys.run(rid), "chat_id")
            if by_error:
                pipe.lindex(keys.run(rid) + ":errors", -1)
        raw = await pipe.execute()
    step = 2 if by_error else 1
    hits = []
    for i, rid in enumerate(ids):
        chat = raw[i * step]
        if chat is None:
            continue
        if wanted.chat_id is not None and int(chat) != wanted.chat_id:
            continue
        if by_error:
            last = orjson.loads(raw[i * step + 1]) if raw[i * step + 1] else {}
            code, reason = str(last.get("code") or ""), str(last.get("reason") or "")
            if wanted.error_code and code.casefold() != wanted.error_code.casefold():
                continue
            if wanted.reason and reason.casefold() != wanted.reason.casefold():
                continue
        hits.append(rid)
    return hits


async def _rows(redis: ArqRedis, keys: Keys, ids: Sequence[str], wanted: RunFilter) -> list[RunRow]:
    if not ids:
        return []
    async with redis.pipeline(transaction=False) as pipe:
        for rid in ids:
            pipe.hmget(keys.run(rid), list(_ROW_FIELDS))
            pipe.lindex(keys.run(rid) + ":errors", -1)
        raw = await pipe.execute()
    rows = (_row(raw[2 * i], raw[2 * i + 1]) for i in range(len(ids)))
    return [row for row in rows if row is not None and row_matches(row, wanted)]


async def run_detail(redis: ArqRedis, settings: Settings, run_id: str) -> Run | None:
    """One run (its error log, releases, attempts, lease) or None."""
    runs = await RunStore(redis, settings).get_many([run_id])
    return runs[0] if runs else None


# --- breakers ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BreakerRow:
    view: BreakerView
    workflows: tuple[str, ...]
    last_probe: RoutingEvent | None


_PROBE_TYPES = frozenset(
    {EventType.CIRCUIT_CLOSED, EventType.CIRCUIT_OPENED, EventType.FAILOPEN_PROBE}
)


async def breakers_data(
    redis: ArqRedis, settings: Settings, routes: Mapping[str, Sequence[str]]
) -> list[BreakerRow]:
    """Every routed target's breaker, plus the newest probe-related event of each."""
    store: BreakerStore = fleet_breakers(redis, settings)
    targets = list(dict.fromkeys(t for ts in routes.values() for t in ts))
    # without usable routes, every stored breaker (a keyspace SCAN, like `breakers list`)
    views = await (store.views(targets) if targets else store.list())
    events = await RedisEventLog(redis, Keys(settings.key_prefix)).recent(
        limit=100, types=sorted(_PROBE_TYPES)
    )
    last: dict[str, RoutingEvent] = {}
    for event in events:  # newest first
        if event.target and event.target not in last:
            last[event.target] = event
    return [
        BreakerRow(
            view=v,
            workflows=tuple(wf for wf, ts in routes.items() if v.target in ts),
            last_probe=last.get(v.target),
        )
        for v in views
    ]


# --- events and pages --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TimelineItem:
    event: RoutingEvent
    pages: bool


@dataclass(frozen=True, slots=True)
class PendingPage:
    id: str
    event_type: str
    workflow: str
    created_at_ms: int
    attempts: int
    text: str


@dataclass(frozen=True, slots=True)
class Timeline:
    items: list[TimelineItem]
    pages: Mapping[str, int]
    pending: list[PendingPage]
    types: list[str]


async def timeline_data(
    redis: ArqRedis,
    settings: Settings,
    *,
    workflow: str | None = None,
    event_type: str | None = None,
    limit: int = 200,
) -> Timeline:
    """Routing events newest first (each marked when it pages the admins) and the outbox."""
    keys = Keys(settings.key_prefix)
    events = await RedisEventLog(redis, keys).recent(
        limit=limit, types=[event_type] if event_type else None, workflow=workflow or None
    )
    page_ids = [as_text(i) for i in await redis.zrange(keys.admin_outbox, 0, 49)]
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hgetall(keys.admin_counters)
        for pid in page_ids:
            pipe.hgetall(keys.admin_page(pid))
        counters, *raw_pages = await pipe.execute()
    pending = []
    for pid, raw in zip(page_ids, raw_pages, strict=True):
        h = {as_text(k): as_text(v) for k, v in raw.items()}
        if h:
            pending.append(
                PendingPage(
                    id=pid,
                    event_type=h.get("event_type", "?"),
                    workflow=h.get("workflow", "?"),
                    created_at_ms=int(h.get("created_at") or 0),
                    attempts=int(h.get("attempts") or 0),
                    text=h.get("text", ""),
                )
            )
    return Timeline(
        items=[TimelineItem(e, page_decision(e)) for e in events],
        pages={as_text(k): int(v) for k, v in counters.items()},
        pending=pending,
        types=sorted({*(t.value for t in EventType), *AUDIT_TYPES}),
    )


# --- audit -------------------------------------------------------------------------------------

AUDIT_WORKFLOW = "console"
AUDIT_TYPES = ("console_breaker_reset", "console_replay")


async def audit(
    redis: ArqRedis,
    settings: Settings,
    action: str,
    *,
    counters: Mapping[str, int] | None = None,
    context: Mapping[str, str] | None = None,
) -> None:
    """An audit event on the routing-event stream: who did what, identifiers and counts only."""
    event = RoutingEvent(
        type=action,
        workflow=AUDIT_WORKFLOW,
        severity="warn",
        counters=dict(counters or {}),
        context=dict(context or {}),
        admin_actionable=False,
    )
    await RedisEventLog(redis, Keys(settings.key_prefix)).emit(event)


# --- memory ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CardEntry:
    card: Card
    #: Older facts this card replaced, newest first (the superseded history).
    history: list[Card] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Memory:
    chat_id: int
    scopes: dict[str, list[CardEntry]]
    inactive: list[Card]
    episodes: list[Episode]
    query: str
    total_cards: int
    runs: list[RunRow]


def card_matches(card: Card, query: str) -> bool:
    """Case-insensitive text search over a card's fact, subject, predicate and object."""
    if not query:
        return True
    needle = query.casefold()
    return any(
        needle in part.casefold()
        for part in (card.fact_text, card.subject, card.predicate, card.object)
    )


def superseded_chains(cards: Iterable[Card]) -> dict[str, list[Card]]:
    """Card id → the cards it superseded, transitively, newest replacement first."""
    by_replacement: dict[str, list[Card]] = {}
    for card in cards:
        if card.superseded_by:
            by_replacement.setdefault(card.superseded_by, []).append(card)
    chains: dict[str, list[Card]] = {}

    def walk(card_id: str, seen: set[str]) -> list[Card]:
        out: list[Card] = []
        for older in sorted(
            by_replacement.get(card_id, []), key=lambda c: c.valid_from, reverse=True
        ):
            if older.id in seen:
                continue
            seen.add(older.id)
            out.append(older)
            out.extend(walk(older.id, seen))
        return out

    for card_id in by_replacement:
        chains[card_id] = walk(card_id, {card_id})
    return chains


def _scope_order(sk: str) -> tuple[int, str]:
    return ({"chat": 0}.get(sk.split(":")[0], 1 if sk.startswith("thread") else 2), sk)


async def memory_data(
    redis: ArqRedis,
    settings: Settings,
    chat_id: int,
    *,
    query: str = "",
    episodes: int = 20,
    now: datetime | None = None,
) -> Memory:
    """A chat's cards by scope with their superseded history, its episodes and recent runs."""
    keys = Keys(settings.key_prefix)
    store = CardStore(redis, keys)
    cards = await store.all_cards(chat_id)
    moment = now or datetime.now(UTC)
    chains = superseded_chains(cards)
    scopes: dict[str, list[CardEntry]] = {}
    inactive: list[Card] = []
    for card in sorted(cards, key=lambda c: (c.observed_at, int(c.id)), reverse=True):
        hit = card_matches(card, query) or any(
            card_matches(old, query) for old in chains.get(card.id, [])
        )
        if not hit:
            continue
        if card.visible_at(moment):
            scopes.setdefault(card.scope_key, []).append(CardEntry(card, chains.get(card.id, [])))
        elif not card.superseded_by:
            inactive.append(card)
    ordered = {sk: scopes[sk] for sk in sorted(scopes, key=_scope_order)}
    found_episodes = await store.episodes(chat_id, limit=episodes)
    if query:
        needle = query.casefold()
        found_episodes = [
            e
            for e in found_episodes
            if needle in e.summary.casefold() or any(needle in t.casefold() for t in e.topics)
        ]
    runs = await runs_page(redis, settings, RunFilter(chat_id=chat_id), page_size=10, budget=500)
    return Memory(
        chat_id=chat_id,
        scopes=ordered,
        inactive=inactive,
        episodes=found_episodes,
        query=query,
        total_cards=len(cards),
        runs=runs.rows,
    )


async def chat_list(redis: ArqRedis, settings: Settings, limit: int = 100) -> list[int]:
    """Up to ``limit`` chats that have memory (one SSCAN page, sorted)."""
    keys = Keys(settings.key_prefix)
    _, members = await redis.sscan(keys.chats, 0, count=limit)
    return sorted(int(as_text(m)) for m in members)[:limit]


# --- settings ----------------------------------------------------------------------------------

MASK = "•••••• (set, hidden)"


def mask_setting(name: str, value: Any) -> str:
    """A setting's effective value as the console shows it: secrets never, URLs redacted."""
    if isinstance(value, SecretStr):
        return MASK if value.get_secret_value() else "unset"
    if value is None:
        return "unset"
    if isinstance(value, str) and ("url" in name or "://" in value):
        return redact_url(value)
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


@dataclass(frozen=True, slots=True)
class SettingRow:
    variable: str
    value: str
    default: str
    meaning: str
    changed: bool


def settings_rows(settings: Settings) -> list[SettingRow]:
    """Every setting (the ``memory-worker config`` table) with its effective, masked value."""
    rows = []
    for name, info in Settings.model_fields.items():
        default = info.get_default(call_default_factory=True)
        value = getattr(settings, name)
        shown = mask_setting(name, value)
        default_shown = mask_setting(name, default)
        rows.append(
            SettingRow(
                variable=env_name(name),
                value=shown,
                default=default_shown,
                meaning=info.description or "",
                changed=_comparable(value) != _comparable(default),
            )
        )
    return rows


def _comparable(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return ("secret", bool(value.get_secret_value()))
    return orjson.dumps(value, default=str)
