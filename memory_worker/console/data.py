"""What the console shows, gathered from Redis as plain data (§15); rendering lives in templates.

Each ``*_data`` function answers one page with a bounded number of round trips,
whatever the number of runs stored: counts come from the store's ZSET indexes
(``ZCARD``/``ZCOUNT``), lists page through an index with offsets and read only
the fields they show, and the outage facts come from the same keys the metrics
and ``/readyz`` read. The runs pages live in :mod:`~memory_worker.console.runs_data`;
the memory page, the only one that reads card text (and only when
``MEMORY_CONSOLE_SHOW_MEMORY`` is on), in :mod:`~memory_worker.console.memory_data`.

The decisions (:func:`outage_banner`, :func:`mask_setting`, :func:`hourly_buckets`)
are pure functions on plain data.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import SecretStr
from redis.asyncio import Redis

from llm_client import (
    LATENCY_BUCKETS_MS,
    BreakerStore,
    BreakerView,
    Circuit,
    EventType,
    RoutesConfig,
    RoutesError,
    RoutingEvent,
    Tally,
    TargetStatus,
    as_text,
    load_routes,
    target_statuses,
)
from memory_worker.keys import Keys
from memory_worker.models import RouteError, RunStatus
from memory_worker.ops.audit import AUDIT_TYPES
from memory_worker.ops.metrics import Sample, read_sample
from memory_worker.paging.policy import clock_text, page_decision
from memory_worker.privacy.masking import redact_url
from memory_worker.runs.codec import route_errors
from memory_worker.runs.model import hour_of, hourly_field
from memory_worker.settings import Settings, env_name
from memory_worker.settings.types import SecretUrl, field_defaults
from memory_worker.wiring import breaker_store, event_log, outlier_store

HOURS = 24


def iso(ms: float | None) -> str | None:
    """Milliseconds since the epoch as a UTC clock text (None stays None)."""
    return None if ms is None else clock_text(ms)


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
    #: The last error the route's farm gave (masked), as the run store keeps it.
    last_error: RouteError | None = None
    #: Not open yet, but the last call on every target failed (an outage's first minute).
    failing: bool = False
    #: The most consecutive charged failures of its targets (breakers count them).
    failures: int = 0


#: A failing route's last farm error must be this recent to raise the banner (an idle store's
#: last failure, hours old, is no outage).
FAILING_FRESH_MS = 15 * 60 * 1000


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
    #: No route open and the pipeline not deferred: calls fail, breakers not tripped yet.
    failing_only: bool = False


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
    last_errors: Mapping[str, RouteError] | None = None,
) -> Banner | None:
    """The outage facts, or None when the pipeline is not deferred and no route is all-open.

    A route is open when every one of its targets' breakers is not closed; it is open
    since the latest of its targets' openings (the moment the last way out closed).
    The next probe is the earliest delayed tick, else the earliest end of a cooldown.

    From an outage's first release on, before any breaker opens, a route is *failing* when
    the last call on every one of its targets failed (each breaker counts consecutive
    failures; a success resets it) and the farm's last error for it is recent
    (:data:`FAILING_FRESH_MS`): the banner shows it with that error and what to do.
    """
    by_target = {v.target: v for v in breakers}
    open_routes: list[OpenRoute] = []
    for workflow, targets in routes.items():
        views = [by_target.get(t) for t in targets]
        if not targets or any(v is None for v in views):
            continue
        present = [v for v in views if v is not None]
        last = _last_error(workflow, targets, last_errors or {})
        failures = max(v.consecutive_failures for v in present)
        if all(v.circuit is not Circuit.CLOSED for v in present):
            opened = [v.opened_at_ms for v in present if v.opened_at_ms]
            since = max(opened) if opened else None
            open_routes.append(OpenRoute(workflow, since, tuple(targets), last, False, failures))
        elif (
            all(v.circuit is not Circuit.CLOSED or v.consecutive_failures > 0 for v in present)
            and last is not None
            and last.at.timestamp() * 1000 >= now_ms - FAILING_FRESH_MS
        ):
            open_routes.append(OpenRoute(workflow, None, tuple(targets), last, True, failures))
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
        failing_only=deferred_since_ms is None and all(r.failing for r in open_routes),
        open_routes=tuple(open_routes),
        next_probe_in_s=next_probe,
        runs_waiting=runs_waiting,
        pages_sent=int(pages.get("sent", 0)),
        pages_suppressed=int(pages.get("suppressed", 0)),
        attempts_spent=failed_since,
        deferred=deferred_since_ms is not None,
    )


def _last_error(
    workflow: str, targets: Sequence[str], errors: Mapping[str, RouteError]
) -> RouteError | None:
    """The route's own last farm error, else the newest one another route got from one of
    its targets (routes share targets, and so their breakers)."""
    if workflow in errors:
        return errors[workflow]
    shared = [e for e in errors.values() if e.target in targets]
    return max(shared, key=lambda e: e.at, default=None)


async def banner_data(
    redis: Redis,
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
        breakers = await breaker_store(redis, settings).views(targets, now_ms=now)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hget(keys.pipeline_state, "deferred_since")
        pipe.zrangebyscore(keys.arq_queue, now, "+inf", start=0, num=20, withscores=True)
        pipe.zcard(keys.queued)
        pipe.zcard(keys.retry)
        pipe.hgetall(keys.admin_counters)
        pipe.hgetall(keys.route_errors)
        deferred, delayed, queued, retry, pages, last_errors = await pipe.execute()
    tick_prefix = keys.tick_job_id("")
    ticks = [int(score) for member, score in delayed if as_text(member).startswith(tick_prefix)]
    deferred_ms = int(deferred) if deferred else None
    failed_since = 0
    errors = route_errors(last_errors.items())
    failing = [v for v in breakers if v.circuit is not Circuit.CLOSED or v.consecutive_failures]
    if deferred_ms is not None or failing:
        opened = [v.opened_at_ms for v in breakers if v.opened_at_ms]
        first_errors = [int(e.at.timestamp() * 1000) for e in errors.values()]
        recent = [at for at in first_errors if at >= now - FAILING_FRESH_MS]
        start = min([*opened, *([deferred_ms] if deferred_ms else []), *recent], default=now)
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
        last_errors=errors,
    )


# --- overview ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HourBar:
    start_ms: int
    completed: int
    failed: int
    released: int


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
    redis: Redis, settings: Settings, targets: Sequence[str], *, now_ms: int | None = None
) -> Overview:
    """The metrics sample (the same read ``/metrics`` does) plus runs per hour.

    Completed and failed come from the status indexes (a run counts in the hour of its
    last update); released from the store's ``runs:hourly`` counts (every release, in the
    hour it happened).
    """
    now = int(time.time() * 1000) if now_ms is None else now_ms
    sample = await read_sample(
        redis, settings, breakers=breaker_store(redis, settings), targets=targets, now=now / 1000
    )
    keys = Keys(settings.key_prefix)
    buckets = hourly_buckets(now)
    async with redis.pipeline(transaction=False) as pipe:
        for low, high in buckets:
            pipe.zcount(keys.by_status(RunStatus.COMPLETED.value), low, f"({high}")
            pipe.zcount(keys.by_status(RunStatus.FAILED.value), low, f"({high}")
        pipe.hmget(keys.runs_hourly, [hourly_field("released", hour_of(low)) for low, _ in buckets])
        *counts, released = await pipe.execute()
    hours = [
        HourBar(low, int(counts[2 * i]), int(counts[2 * i + 1]), int(released[i] or 0))
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


# --- breakers ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BreakerRow:
    view: BreakerView
    workflows: tuple[str, ...]
    last_probe: RoutingEvent | None
    #: Cooling, caps, latency and slowness (None: not a routed target, or no routes).
    gate: TargetStatus | None = None
    #: Its error window and ejection (§5), and the newest ``target_ejected`` event.
    ejection: Tally | None = None
    last_ejected: RoutingEvent | None = None
    #: Now (ms), for the ejection's time left.
    now_ms: int = 0

    @property
    def ejection_note(self) -> str:
        return self.ejection.note(self.now_ms) if self.ejection is not None else "-"


#: The fleet-wide latency histogram's columns (``LATENCY_BUCKETS_MS``, then the rest).
LATENCY_BUCKET_LABELS: tuple[str, ...] = (
    *(f"≤{ms / 1000:g}s" for ms in LATENCY_BUCKETS_MS),
    f">{LATENCY_BUCKETS_MS[-1] / 1000:g}s",
)


_PROBE_TYPES = frozenset(
    {EventType.CIRCUIT_CLOSED, EventType.CIRCUIT_OPENED, EventType.FAILOPEN_PROBE}
)
_EJECTED = EventType.TARGET_EJECTED


async def breakers_data(
    redis: Redis,
    settings: Settings,
    routes: Mapping[str, Sequence[str]],
    *,
    config: RoutesConfig | None = None,
) -> list[BreakerRow]:
    """Every routed target's breaker, plus the newest probe-related event of each, and
    (with the routes' ``config``) its gate: cooling, caps, latency, slowness."""
    store: BreakerStore = breaker_store(redis, settings)
    gates = {} if config is None else {s.target: s for s in await target_statuses(store, config)}
    targets = list(dict.fromkeys(t for ts in routes.values() for t in ts))
    # without usable routes, every stored breaker (a keyspace SCAN, like `breakers list`)
    views = await (store.views(targets) if targets else store.list())
    events = await event_log(redis, settings).recent(
        limit=100, types=sorted({*_PROBE_TYPES, _EJECTED})
    )
    last: dict[str, RoutingEvent] = {}
    ejected: dict[str, RoutingEvent] = {}
    for event in events:  # newest first
        newest = ejected if event.type == _EJECTED else last
        if event.target and event.target not in newest:
            newest[event.target] = event
    now_ms = store.now_ms()
    tallies = await outlier_store(redis, settings).sync([v.target for v in views], now_ms=now_ms)
    return [
        BreakerRow(
            view=v,
            workflows=tuple(wf for wf, ts in routes.items() if v.target in ts),
            last_probe=last.get(v.target),
            gate=gates.get(v.target),
            ejection=tally,
            last_ejected=ejected.get(v.target),
            now_ms=now_ms,
        )
        for v, tally in zip(views, tallies, strict=True)
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
class EventLine:
    """Events alike — type, route, target, reason, code — within one incident, as one row:
    an outage's probe after probe is one line with its count, not one line each."""

    latest: RoutingEvent
    count: int
    first_ms: int
    pages: bool
    #: The worst severity among them (a repeat held back by the page cooldown is a warn).
    severity: str


@dataclass(frozen=True, slots=True)
class Incident:
    """Events no more than :data:`INCIDENT_GAP_MS` apart: one outage, one operator's
    action, one burst of failures. Lines newest first (by their latest event)."""

    start_ms: int
    end_ms: int
    lines: list[EventLine]
    events: int
    workflows: tuple[str, ...]
    pages: bool
    #: The last event closed a breaker (the farm answered again).
    recovered: bool


#: Two events further apart than this start a new incident (an outage probes every 15 s, so
#: its events stay together; the next outage, an hour later, is another incident).
INCIDENT_GAP_MS = 5 * 60 * 1000
_SEVERITY_RANK = {"info": 0, "warn": 1, "error": 2}


def _line_key(e: RoutingEvent) -> tuple[str, str, str, str, str]:
    return (e.type, e.workflow, e.target or "", e.reason or "", e.error_code or "")


def incidents(items: Sequence[TimelineItem], gap_ms: int = INCIDENT_GAP_MS) -> list[Incident]:
    """Group a timeline (newest first) into incidents, newest first, collapsing alike events
    of one incident into a counted line (pure)."""
    groups: list[list[TimelineItem]] = []
    for item in items:
        if groups and groups[-1][-1].event.at_ms - item.event.at_ms <= gap_ms:
            groups[-1].append(item)
        else:
            groups.append([item])
    return [_incident(group) for group in groups]


def _incident(group: Sequence[TimelineItem]) -> Incident:
    lines: dict[tuple[str, str, str, str, str], EventLine] = {}
    for item in group:  # newest first: the first seen of a key is its latest
        e = item.event
        key = _line_key(e)
        seen = lines.get(key)
        severity = e.severity or "error"
        if seen is None:
            lines[key] = EventLine(e, 1, e.at_ms, item.pages, severity)
            continue
        worse = max(seen.severity, severity, key=lambda s: _SEVERITY_RANK.get(s, 2))
        lines[key] = EventLine(
            seen.latest, seen.count + 1, e.at_ms, seen.pages or item.pages, worse
        )
    newest = group[0].event
    return Incident(
        start_ms=group[-1].event.at_ms,
        end_ms=newest.at_ms,
        lines=list(lines.values()),
        events=len(group),
        workflows=tuple(sorted({i.event.workflow for i in group})),
        pages=any(i.pages for i in group),
        recovered=newest.type == EventType.CIRCUIT_CLOSED,
    )


@dataclass(frozen=True, slots=True)
class Timeline:
    items: list[TimelineItem]
    pages: Mapping[str, int]
    pending: list[PendingPage]
    types: list[str]
    #: ``items`` grouped: what the page shows.
    incidents: list[Incident]


async def timeline_data(
    redis: Redis,
    settings: Settings,
    *,
    workflow: str | None = None,
    event_type: str | None = None,
    limit: int = 500,
) -> Timeline:
    """Routing events newest first (each marked when it pages the admins), grouped into
    incidents, and the outbox."""
    keys = Keys(settings.key_prefix)
    events = await event_log(redis, settings).recent(
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
    items = [TimelineItem(e, page_decision(e)) for e in events]
    return Timeline(
        items=items,
        pages={as_text(k): int(v) for k, v in counters.items()},
        pending=pending,
        types=sorted({*(t.value for t in EventType), *AUDIT_TYPES}),
        incidents=incidents(items),
    )


# --- audit: memory_worker.ops.audit (the console's and the command line's) ----------------------


# --- settings ----------------------------------------------------------------------------------

MASK = "•••••• (set, hidden)"


def mask_setting(name: str, value: Any) -> str:
    """A setting's effective value as the console shows it: secrets never, URLs redacted."""
    if isinstance(value, SecretUrl):  # host and scheme shown, password masked
        return str(value) if value.get_secret_value() else "unset"
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
    defaults = field_defaults(Settings, dict(settings))  # a derived one from the values in force
    for name, info in Settings.model_fields.items():
        default = defaults[name]
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
