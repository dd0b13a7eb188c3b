"""Admin reports (§9): which events page the admins, fleet-wide dedup, the page, delivery.

The functional core — which events page, dedup, backoff, the page text — lives in
:mod:`memory_worker.paging.policy`.

Imperative shell (:class:`AdminReporter`, an event sink):

- the dedup runs as one Lua script shared by the whole fleet;
- a page is written to a Redis outbox (``admin_page(id)`` + ``admin_outbox``
  ZSET id → next attempt); :meth:`AdminReporter.emit` never raises and never
  waits on a channel, so the pipeline is never blocked by paging;
- :meth:`AdminReporter.run` (one per worker) claims due pages with a lease,
  sends them to every channel not yet done, and retries failures with
  exponential backoff up to ``max_attempts``;
- without an external channel (Telegram / webhook) pages are only logged and
  the cooldown is not consumed;
- counters ``queued / sent / suppressed / failed / not_configured /
  delivery_errors / resolved`` live in ``admin_counters`` for metrics;
- :class:`PagedLog` puts the event stream behind the reporter, so an outage's repeated
  probes, held back by the cooldown, log at WARNING: only a page is an ERROR;
- an outage's end (:mod:`memory_worker.paging.incident`): a routing page opens the fleet's
  incident with the routes open then; when none of them is open any more (a breaker closed,
  or the delivery loop's check every probe interval) one "resolved" page goes out, queued
  by the script that ends the incident (:mod:`memory_worker.paging.incident_store`), so
  once fleet-wide.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast

from redis.asyncio import Redis

from llm_client import (
    MEMORY_EXTRACTION,
    BreakerStore,
    BreakerView,
    EventSink,
    EventType,
    Fanout,
    RoutesConfig,
    RoutingEvent,
    as_text,
    with_preflight,
)
from memory_worker.errors import DeliveryFailed
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.paging.incident import RESOLVED, fleet_counts, render_resolved, resolve_step
from memory_worker.paging.incident_store import IncidentStore
from memory_worker.paging.notifiers import LogNotifier, Notifier, Page, external
from memory_worker.paging.policy import (
    ReportConfig,
    delivery_backoff,
    open_workflows,
    page_decision,
    render_page,
)
from memory_worker.settings import Settings

log = get_logger(__name__)

T = TypeVar("T")

BreakersOf = Callable[[str], Awaitable[Sequence[BreakerView]]]
WaitingRuns = Callable[[], Awaitable[int]]
#: Every workflow whose route is open right now (see :func:`open_workflows`).
OpenRoutes = Callable[[], Awaitable[Sequence[str]]]


async def _best_effort(lookup: Callable[[], Awaitable[T]], timeout: float) -> T | None:
    """A page's context lookup: its answer, or None when it fails or takes over ``timeout``."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(timeout):
            return await lookup()
    return None


# --- Redis scripts -------------------------------------------------------------------------

# dedup_step — KEYS: dedup hash, counters; ARGV: now, cooldown_ms.
# Returns {page, suppressed_repeats, first_seen}.
_DEDUP = with_preflight(
    """
local now, cooldown = tonumber(ARGV[1]), tonumber(ARGV[2])
local v = redis.call('HMGET', KEYS[1], 'until', 'suppressed', 'first')
local function s(x) return string.format('%d', x) end
preflight({HINCRBY = {KEYS[1], KEYS[2]}, HSET = {KEYS[1]}, PEXPIRE = {KEYS[1]}})
if v[1] and now < tonumber(v[1]) then
  redis.call('HINCRBY', KEYS[1], 'suppressed', 1)
  redis.call('HINCRBY', KEYS[2], 'suppressed', 1)
  return {0, 0, tonumber(v[3])}
end
local first, reported = now, 0
if v[1] then first, reported = tonumber(v[3]), tonumber(v[2]) end
local window_until = now + cooldown
redis.call('HSET', KEYS[1], 'until', s(window_until), 'suppressed', '0', 'first', s(first))
redis.call('PEXPIRE', KEYS[1], s(window_until + cooldown - now))
return {1, reported, first}
"""
)

# Enqueue a page — KEYS: page hash, outbox, counters; ARGV: id, now, ttl_ms, field/value pairs.
_ENQUEUE = with_preflight(
    """
preflight({HSET = {KEYS[1]}, PEXPIRE = {KEYS[1]}, ZADD = {KEYS[2]}, HINCRBY = {KEYS[3]}})
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[1], 'attempts', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'queued', 1)
return 1
"""
)

# Claim due pages — KEYS: outbox; ARGV: now, lease_ms, limit. Hides them for the lease.
_CLAIM = with_preflight(
    """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
preflight({ZADD = {KEYS[1]}})
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), id)
end
return ids
"""
)

# Delivered — KEYS: page hash, outbox, counters; ARGV: id.
_ACK = with_preflight(
    """
preflight({DEL = {KEYS[1]}, ZREM = {KEYS[2]}, HINCRBY = {KEYS[3]}})
redis.call('DEL', KEYS[1])
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then redis.call('HINCRBY', KEYS[3], 'sent', 1) end
return 1
"""
)

# A delivery attempt failed — KEYS: page hash, outbox, counters; ARGV: id, next_at, max.
# Returns 1 when retried later, 0 when dropped after max attempts.
_RETRY = with_preflight(
    """
preflight({HINCRBY = {KEYS[1], KEYS[3]}, DEL = {KEYS[1]}, ZREM = {KEYS[2]}, ZADD = {KEYS[2]}})
redis.call('HINCRBY', KEYS[3], 'delivery_errors', 1)
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if attempts >= tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('HINCRBY', KEYS[3], 'failed', 1)
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
"""
)


def route_open_workflows(routes: RoutesConfig, store: BreakerStore) -> OpenRoutes:
    """The ``open_routes`` lookup a reporter needs: every configured route, one round trip."""

    async def lookup() -> Sequence[str]:
        eligible = {workflow: route.eligible for workflow, route in routes.routes.items()}
        ids = list(dict.fromkeys(t.id for targets in eligible.values() for t in targets))
        views = {view.target: view for view in await store.views(ids)}
        return open_workflows(
            {wf: [views[t.id] for t in targets] for wf, targets in eligible.items()}
        )

    return lookup


def route_breakers(routes: RoutesConfig, store: BreakerStore) -> BreakersOf:
    """The ``breakers`` lookup a reporter needs: the views of a workflow's targets."""

    async def lookup(workflow: str) -> Sequence[BreakerView]:
        route = routes.get(workflow)
        if route is None:
            return []
        return await store.views(t.id for t in route.targets)

    return lookup


@dataclass(frozen=True, slots=True)
class DeliveryStats:
    sent: int = 0
    retried: int = 0
    dropped: int = 0


class AdminReporter:
    """The event sink that pages admins, and the outbox delivery loop."""

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        notifiers: Sequence[Notifier],
        config: ReportConfig = ReportConfig(),
        *,
        breakers: BreakersOf | None = None,
        waiting_runs: WaitingRuns | None = None,
        open_routes: OpenRoutes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis = redis
        self._keys = keys
        self.notifiers = list(notifiers) or [LogNotifier()]
        self.config = config
        #: Injected by the pipeline: a workflow's breaker views / how many runs wait.
        self.breakers = breakers
        self.waiting_runs = waiting_runs
        self.open_routes = open_routes
        #: Events that could not be paged because the store failed (process-local count).
        self.enqueue_failures = 0
        self._clock = clock
        self._dedup = redis.register_script(_DEDUP)
        self._enqueue = redis.register_script(_ENQUEUE)
        self._claim = redis.register_script(_CLAIM)
        self._ack = redis.register_script(_ACK)
        self._retry = redis.register_script(_RETRY)
        self.incidents = IncidentStore(redis, keys, ttl_ms=round(config.page_ttl_seconds * 1000))

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        redis: Redis,
        keys: Keys,
        notifiers: Sequence[Notifier],
        **kwargs: Any,
    ) -> AdminReporter:
        return cls(redis, keys, notifiers, ReportConfig.from_settings(settings), **kwargs)

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    @property
    def configured(self) -> bool:
        return bool(external(self.notifiers))

    # --- the sink ---------------------------------------------------------------------------

    async def emit(self, event: RoutingEvent) -> None:
        """Page for ``event`` if the rules say so. Never raises, never waits on a channel."""
        await self.verdict(event)

    async def verdict(self, event: RoutingEvent) -> str:
        """:meth:`observe`'s answer, ``failed`` when the store failed (never raises)."""
        try:
            return await self.observe(event)
        except Exception as exc:  # paging is bookkeeping: never the pipeline's problem
            self.enqueue_failures += 1
            log.warning(
                "admin.page_enqueue_failed", event_type=event.type, error=type(exc).__name__
            )
            return "failed"

    async def observe(self, event: RoutingEvent) -> str:
        """Returns what happened: ``none``, ``not_configured``, ``suppressed`` or ``queued``
        (a closed breaker may end the incident: :meth:`resolve_if_closed`)."""
        if event.type == EventType.CIRCUIT_CLOSED:
            await self.resolve_if_closed()
            return "none"
        if not page_decision(event):
            return "none"
        now = self.now_ms()
        if not self.configured:
            return await self._log_page(event, now)
        page, reported, first = await self._window(event.dedupe_key, now)
        if not int(page):
            return "suppressed"
        routes = await self._open_routes()
        text = await self._render(
            event, now, first_seen_ms=int(first), suppressed=int(reported), routes=routes
        )
        page_id = f"{now}-{secrets.token_hex(4)}"
        fields = {
            "text": text,
            "event_type": event.type,
            "workflow": event.workflow,
            "severity": event.severity or "error",
            "dedupe_key": event.dedupe_key,
            "created_at": str(now),
        }
        await self._enqueue(
            keys=[
                self._keys.admin_page(page_id),
                self._keys.admin_outbox,
                self._keys.admin_counters,
            ],
            args=[
                page_id,
                now,
                round(self.config.page_ttl_seconds * 1000),
                *[item for pair in fields.items() for item in pair],
            ],
        )
        log.info(
            "admin.page_queued", page_id=page_id, event_type=event.type, dedupe_key=event.dedupe_key
        )
        await self._open_incident(event, routes, now)
        return "queued"

    async def _window(self, dedupe_key: str, now: int) -> tuple[Any, Any, Any]:
        """One step of the fleet-wide dedup window: (page?, repeats reported, first seen)."""
        page, reported, first = await self._dedup(
            keys=[self._keys.admin_dedup(dedupe_key), self._keys.admin_counters],
            args=[now, round(self.config.cooldown_seconds * 1000)],
        )
        return page, reported, first

    async def _log_page(self, event: RoutingEvent, now: int) -> str:
        """No external channel: the log is the channel, deduplicated like any other, in a
        window of its own so that configuring Telegram later still pages at once."""
        logged, reported, first = await self._window("log:" + event.dedupe_key, now)
        if not int(logged):
            return "suppressed"
        routes = await self._open_routes()
        text = await self._render(
            event, now, first_seen_ms=int(first), suppressed=int(reported), routes=routes
        )
        log.warning(
            "admin.page_not_configured",
            event_type=event.type,
            workflow=event.workflow,
            dedupe_key=event.dedupe_key,
            text=text,
        )
        await cast(
            Awaitable[int], self._redis.hincrby(self._keys.admin_counters, "not_configured", 1)
        )
        await self._open_incident(event, routes, now)
        return "not_configured"

    async def _open_routes(self) -> Sequence[str] | str | None:
        """Every workflow whose route is open now ("unknown" when the lookup failed; None
        when this reporter has no lookup)."""
        if self.open_routes is None:
            return None
        answer = await _best_effort(self.open_routes, self.config.context_timeout_seconds)
        return "unknown" if answer is None else list(answer)

    async def _render(
        self,
        event: RoutingEvent,
        now: int,
        *,
        first_seen_ms: int,
        suppressed: int,
        routes: Sequence[str] | str | None,
    ) -> str:
        timeout = self.config.context_timeout_seconds
        breakers, waiting_runs = self.breakers, self.waiting_runs
        views = (
            None
            if breakers is None
            else await _best_effort(lambda: breakers(event.workflow), timeout)
        )
        waiting = None if waiting_runs is None else await _best_effort(waiting_runs, timeout)
        return render_page(
            event,
            now_ms=now,
            first_seen_ms=first_seen_ms,
            suppressed_repeats=suppressed,
            breakers=views,
            waiting_runs=waiting,
            open_routes=routes,
        )

    # --- the incident: opened by a routing page, ended by one resolved page ----------------

    async def _open_incident(
        self, event: RoutingEvent, routes: Sequence[str] | str | None, now: int
    ) -> None:
        """The page that went out names open routes: they join the fleet's incident."""
        if event.type == EventType.RUNS_RETIRED:
            return  # not an outage: nothing to end later
        named = set(routes) if isinstance(routes, list) else set()
        if event.type == EventType.CIRCUIT_OPEN_EXHAUSTION:
            named.add(event.workflow)  # open by definition, whatever the lookup said
        if not named:
            return
        try:
            counts = fleet_counts(await self._counters())
            await self.incidents.open(now, named, counts)
        except Exception as exc:  # the page is queued; the incident is bookkeeping
            log.warning("admin.incident_open_failed", error=type(exc).__name__)

    async def _counters(self) -> dict[str, int]:
        raw = await cast(Awaitable[Mapping[Any, Any]], self._redis.hgetall(self._keys.counters))
        return {as_text(k): int(as_text(v)) for k, v in raw.items()}

    async def resolve_if_closed(self) -> bool:
        """End the fleet's incident once none of its routes is open, with one resolved page
        (True: this call ended it). An unknown route state keeps it open."""
        incident = await self.incidents.read()
        if incident is None or self.open_routes is None:
            return False
        timeout = self.config.context_timeout_seconds
        answer = await _best_effort(self.open_routes, timeout)
        if answer is None or not resolve_step(incident, answer):
            return False
        now = self.now_ms()
        counts = fleet_counts(await self._counters())
        waiting = (
            None if self.waiting_runs is None else await _best_effort(self.waiting_runs, timeout)
        )
        text = render_resolved(incident, now_ms=now, counts=counts, waiting_runs=waiting)
        page_id = f"{now}-{secrets.token_hex(4)}" if self.configured else None
        dedupe_key = f"{RESOLVED}:{incident.started_ms}"
        fields = {
            "text": text,
            "event_type": RESOLVED,
            "workflow": ",".join(sorted(incident.routes)),
            "severity": "info",
            "dedupe_key": dedupe_key,
            "created_at": str(now),
        }
        if not await self.incidents.resolve(
            incident, answer, now_ms=now, page_id=page_id, fields=fields if page_id else {}
        ):
            return False  # another worker ended it first (or it changed meanwhile)
        lasted_s = round((now - incident.started_ms) / 1000, 1)
        if page_id is None:
            log.warning(
                "admin.page_not_configured", dedupe_key=dedupe_key, event_type=RESOLVED, text=text
            )
        else:
            log.info("admin.incident_resolved", page_id=page_id, lasted_s=lasted_s)
        return True

    # --- delivery ---------------------------------------------------------------------------

    async def deliver_due(self, *, now_ms: int | None = None) -> DeliveryStats:
        """Send every due page once (claimed with a lease, so workers never double-send)."""
        now = self.now_ms() if now_ms is None else now_ms
        ids = await self._claim(
            keys=[self._keys.admin_outbox],
            args=[now, round(self.config.claim_lease_seconds * 1000), self.config.batch],
        )
        stats = DeliveryStats()
        for raw_id in ids:
            result = await self._deliver(as_text(raw_id), now)
            stats = DeliveryStats(
                sent=stats.sent + (result == "sent"),
                retried=stats.retried + (result == "retried"),
                dropped=stats.dropped + (result == "dropped"),
            )
        return stats

    async def _deliver(self, page_id: str, now: int) -> str:
        key = self._keys.admin_page(page_id)
        raw = {
            as_text(k): as_text(v)
            for k, v in (await cast(Awaitable[dict[Any, Any]], self._redis.hgetall(key))).items()
        }
        outbox_keys = [key, self._keys.admin_outbox, self._keys.admin_counters]
        if "text" not in raw:  # expired or already acknowledged elsewhere
            await self._redis.zrem(self._keys.admin_outbox, page_id)
            return "gone"
        page = Page(
            id=page_id,
            text=raw["text"],
            event_type=raw.get("event_type", "?"),
            workflow=raw.get("workflow", "?"),
            severity=raw.get("severity", "error"),
            dedupe_key=raw.get("dedupe_key", "?"),
            created_at_ms=int(raw.get("created_at", "0")),
        )
        failures: list[DeliveryFailed] = []
        for notifier in self.notifiers:
            if raw.get(f"done:{notifier.name}"):
                continue
            try:
                await notifier.send(page)
            except DeliveryFailed as exc:
                failures.append(exc)
                continue
            except Exception as exc:  # a channel bug must not kill the loop
                failures.append(DeliveryFailed(notifier.name, kind=type(exc).__name__))
                continue
            await cast(Awaitable[int], self._redis.hset(key, f"done:{notifier.name}", "1"))
        if not failures:
            await self._ack(keys=outbox_keys, args=[page_id])
            log.info("admin.page_sent", page_id=page_id, event_type=page.event_type)
            return "sent"
        attempts = int(raw.get("attempts", "0")) + 1
        delay = delivery_backoff(attempts, self.config)
        delay = max([delay, *(f.retry_after or 0.0 for f in failures)])
        retried = await self._retry(
            keys=outbox_keys, args=[page_id, now + round(delay * 1000), self.config.max_attempts]
        )
        for failure in failures:
            log.warning(
                "admin.page_delivery_failed",
                page_id=page_id,
                channel=failure.channel,
                status=failure.status,
                error=failure.kind,
                attempt=attempts,
                will_retry=bool(int(retried)),
            )
        return "retried" if int(retried) else "dropped"

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver due pages until ``stop`` is set, and look every ``resolve_check_seconds``
        whether the incident ended (a breaker closed without an event here: a reset, a
        cooldown); errors are logged, never raised."""
        checked = float("-inf")
        while not stop.is_set():
            try:
                await self.deliver_due()
                if time.monotonic() - checked >= self.config.resolve_check_seconds:
                    checked = time.monotonic()
                    await self.resolve_if_closed()
            except Exception as exc:
                log.warning("admin.delivery_loop_error", error=type(exc).__name__)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.config.deliver_interval_seconds):
                    await stop.wait()

    async def counters(self) -> dict[str, int]:
        return await page_counters(self._redis, self._keys)


#: Outage events whose repeats, once paged, are no longer a person's business: the same
#: outage's next probe finding every target open again (not a retirement: each is new work).
QUIET_REPEATS: frozenset[str] = frozenset(
    {
        EventType.CIRCUIT_OPEN_EXHAUSTION,
        EventType.ROUTE_UNAVAILABLE,
        EventType.NO_CANDIDATES,
        EventType.CAPACITY_WAIT_TIMEOUT,
    }
)


class PagedLog:
    """The routing-event stream (and its log lines) behind the admin reporter: an event the
    reporter holds back as a repeat of a page already sent (the fleet-wide cooldown) is logged
    and stored at WARNING with ``page=repeat``. ERROR is for what needs a person: the first
    page of an outage, and the reminder when the cooldown ends (§9, §11)."""

    def __init__(self, events: EventSink, reporter: AdminReporter) -> None:
        self.events = events
        self.reporter = reporter

    async def emit(self, event: RoutingEvent) -> None:
        outcome = await self.reporter.verdict(event)
        if outcome == "suppressed" and event.type in QUIET_REPEATS and event.severity == "error":
            event = replace(event, severity="warn", context={**event.context, "page": "repeat"})
        await self.events.emit(event)


async def page_counters(redis: Redis, keys: Keys) -> dict[str, int]:
    """Admin page counters (``queued``, ``sent``, ``suppressed``, ``failed``, …) for metrics/CLI."""
    raw = await cast(Awaitable[Mapping[Any, Any]], redis.hgetall(keys.admin_counters))
    counters = {name: 0 for name in ("queued", "sent", "suppressed", "failed", "not_configured")}
    counters.update({as_text(k): int(as_text(v)) for k, v in raw.items()})
    return counters


async def pending_pages(redis: Redis, keys: Keys) -> int:
    """Pages waiting in the outbox."""
    return int(await redis.zcard(keys.admin_outbox))


def retired_reporter(events: Fanout) -> Callable[[list[str], str, str | None], Awaitable[None]]:
    """The pipeline's hook: runs retired → a ``runs_retired`` event (stream + admin page)."""

    async def on_retired(run_ids: list[str], code: str, reason: str | None) -> None:
        await events.emit(
            RoutingEvent(
                EventType.RUNS_RETIRED,
                MEMORY_EXTRACTION,
                reason=reason,
                error_code=code,
                counters={"runs": len(run_ids)},
                context={"run_id": run_ids[0]} if run_ids else {},
            )
        )

    return on_retired


#: The type of a pinned worker's event (§11): a worker the restart guard keeps from
#: exiting again. A pipeline event of this package, never a walker's.
WORKER_PINNED = "worker_pinned"


def pinned_reporter(events: Fanout) -> Callable[[str, dict[str, int]], Awaitable[None]]:
    """The worker's hook: pinned again within its restart guard → a ``worker_pinned`` event
    that pages (once per worker and cooldown: its dedupe key is the worker's identity)."""

    async def on_pinned(identity: str, counts: dict[str, int]) -> None:
        await events.emit(
            RoutingEvent(
                WORKER_PINNED,
                MEMORY_EXTRACTION,
                severity="error",
                reason="pinned",
                counters=counts,
                context={"worker": identity},
                admin_actionable=True,
                dedupe=f"{WORKER_PINNED}:{identity}",
            )
        )

    return on_pinned
