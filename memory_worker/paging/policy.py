"""Admin paging decisions (§9), pure: which events page, dedup, backoff, the page text.

Functional core:

- :func:`page_decision` — actionable events only: ``circuit_open_exhaustion``,
  ``all_attempts_exhausted`` with more than one failed attempt,
  ``route_unavailable``, ``no_candidates``, ``capacity_wait_timeout`` and the
  pipeline's ``runs_retired``; an event's ``admin_actionable`` overrides.
- :func:`dedup_step` — per dedupe key, the first event of a cooldown window
  pages and opens the window; repeats inside it are counted; the next page
  after the window reports "suppressed repeats: N". The record remembers
  when the incident began ("since") and lives one more cooldown after its
  window, so an incident that goes quiet for that long starts afresh.
- :func:`render_page` — the aggregated plain-text page: workflow, target,
  reason, the route's breaker states, **every workflow whose route is open**
  (§6: whichever route's event pages first, the admins learn that
  extraction is down too), since when, runs waiting, suppressed repeats. Built only from identifiers, codes and counts: never message text,
  card text, tokens or URLs.

The imperative shell (outbox, delivery, the fleet-wide dedup script) is
:mod:`memory_worker.paging.reports`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from llm_client import BreakerView, Circuit, EventType, RoutingEvent, safe_token
from memory_worker.settings import Settings, env_name

#: Event types that page the admins (subject to the rules of :func:`page_decision`).
ACTIONABLE: frozenset[str] = frozenset(
    {
        EventType.CIRCUIT_OPEN_EXHAUSTION,
        EventType.ALL_ATTEMPTS_EXHAUSTED,
        EventType.ROUTE_UNAVAILABLE,
        EventType.NO_CANDIDATES,
        EventType.CAPACITY_WAIT_TIMEOUT,
        EventType.RUNS_RETIRED,
    }
)

PAGE_MAX_CHARS = 3500


@dataclass(frozen=True, slots=True)
class ReportConfig:
    """Paging knobs (seconds)."""

    cooldown_seconds: float = 600.0
    max_attempts: int = 8
    backoff_base_seconds: float = 5.0
    backoff_max_seconds: float = 600.0
    #: A claimed page is invisible to other workers this long (crash → redelivered).
    claim_lease_seconds: float = 60.0
    deliver_interval_seconds: float = 1.0
    batch: int = 20
    #: Context lookups (breaker states, waiting runs) get this long, then say "unknown".
    context_timeout_seconds: float = 1.0
    page_ttl_seconds: float = 7 * 24 * 3600.0
    #: How often the delivery loop looks whether the incident ended (the probe interval).
    resolve_check_seconds: float = 15.0

    @classmethod
    def from_settings(cls, settings: Settings) -> ReportConfig:
        return cls(
            cooldown_seconds=settings.admin_report_cooldown,
            max_attempts=settings.admin_delivery_max_attempts,
            resolve_check_seconds=settings.consolidation_backend_retry_interval,
        )


# --- functional core -----------------------------------------------------------------------


def page_decision(event: RoutingEvent) -> bool:
    """Does ``event`` page the admins (before dedup)?"""
    if event.admin_actionable is not None:
        return event.admin_actionable
    if event.type not in ACTIONABLE:
        return False
    if event.type == EventType.ALL_ATTEMPTS_EXHAUSTED:
        # One failed attempt is a single target's hiccup (its breaker handles it).
        return event.counters.get("failed_attempts", 0) > 1
    return True


@dataclass(frozen=True, slots=True)
class DedupState:
    """The fleet's memory of one dedupe key."""

    window_until_ms: int
    suppressed: int
    first_seen_ms: int


@dataclass(frozen=True, slots=True)
class DedupDecision:
    page: bool
    #: Repeats suppressed in the previous window, reported on this page.
    suppressed_repeats: int
    #: When this incident's first event happened.
    first_seen_ms: int


def dedup_step(
    state: DedupState | None, now_ms: int, cooldown_ms: int
) -> tuple[DedupState, DedupDecision]:
    """One event of a dedupe key: page (and open a window) or count a repeat."""
    if state is None or now_ms >= state.window_until_ms:
        first = now_ms if state is None else state.first_seen_ms
        reported = 0 if state is None else state.suppressed
        return DedupState(now_ms + cooldown_ms, 0, first), DedupDecision(True, reported, first)
    counted = replace(state, suppressed=state.suppressed + 1)
    return counted, DedupDecision(False, 0, state.first_seen_ms)


#: What an operator must set for pages to reach someone (either is enough).
CHANNEL_SETTINGS = (
    f"{env_name('admin_telegram_bot_token')} + {env_name('admin_telegram_chat_ids')}",
    env_name("admin_webhook_url"),
)


def unconfigured_warning(channels: Sequence[str], pages: Mapping[str, int]) -> str | None:
    """The loud line ``report`` and the console show when pages reach nobody (None: fine).

    ``channels``: the external channels this process's settings configure; ``pages``: the
    fleet's page counters, whose ``not_configured`` counts pages a worker could only log
    (a worker without a channel, whatever this process's settings say).
    """
    logged = int(pages.get("not_configured", 0))
    if channels and not logged:
        return None
    how = " or ".join(CHANNEL_SETTINGS)
    if not channels:
        head = "no paging channel is configured: pages go to the workers' logs only"
    else:
        head = "a worker has no paging channel: pages went to its log only"
    told = f"{logged} page(s) so far reached nobody" if logged else "nobody is told of an outage"
    return f"{head}; {told}. Set {how}."


def delivery_backoff(attempts: int, config: ReportConfig) -> float:
    """Seconds before delivery attempt ``attempts + 1``: base × 2^(attempts−1), capped."""
    exponent = min(max(attempts - 1, 0), 30)
    return float(min(config.backoff_base_seconds * (1 << exponent), config.backoff_max_seconds))


def open_workflows(routes: Mapping[str, Sequence[BreakerView]]) -> list[str]:
    """Workflows whose every target is breaker-open or half-open (in the given order).

    A route with no target is not "open" (that is a configuration page of its own).
    """
    return [
        workflow
        for workflow, views in routes.items()
        if views and all(view.circuit is not Circuit.CLOSED for view in views)
    ]


def clock_text(ms: float) -> str:
    """Milliseconds since the epoch as the UTC clock text pages and the console show."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def age_text(seconds: float, *, detailed: bool = False) -> str:
    """An age as pages show it (45s, 12m, 2h05m); ``detailed``, as the console (12m 05s, 2h 05m)."""
    s = max(int(seconds), 0)
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m {s % 60:02d}s" if detailed else f"{s // 60}m"
    gap = " " if detailed else ""
    return f"{s // 3600}h{gap}{(s % 3600) // 60:02d}m"


def _describe_breaker(view: BreakerView) -> str:
    state = view.circuit.value
    parts = [f"{view.target}: {state}"]
    if view.circuit is not Circuit.CLOSED:
        parts.append(f"trips {view.trips}")
        if view.opened_at_ms:
            parts.append(f"open since {clock_text(view.opened_at_ms)}")
        if view.circuit is Circuit.OPEN:
            parts.append(f"cooldown {view.cooldown_remaining_s:.0f}s left")
        if view.probe_in_flight:
            parts.append("probe in flight")
    parts.append(f"{view.consecutive_failures} consecutive failures")
    if view.window_calls:
        parts.append(f"{view.window_failures}/{view.window_calls} failed recently")
    return ", ".join(parts)


def render_page(
    event: RoutingEvent,
    *,
    now_ms: int,
    first_seen_ms: int,
    suppressed_repeats: int,
    breakers: Sequence[BreakerView] | None,
    waiting_runs: int | None,
    open_routes: Sequence[str] | str | None = None,
) -> str:
    """The aggregated plain-text page (identifiers, codes and counts only).

    ``open_routes``: every workflow whose route is open (a string such as
    ``"unknown"`` is printed as is; None leaves the line out).
    """
    lines = [
        f"memory-worker routing report: {event.type}",
        f"severity: {event.severity}",
        f"workflow: {safe_token(event.workflow) or '?'}",
    ]
    if event.target:
        lines.append(f"target: {event.target}")
    cause = [p for p in (event.reason and safe_token(event.reason), event.error_kind) if p]
    if event.error_code:
        cause.append(event.error_code)
    if cause:
        lines.append("failure: " + ", ".join(cause))
    if event.counters:
        counts = ", ".join(f"{safe_token(k) or '?'}={int(v)}" for k, v in event.counters.items())
        lines.append(f"counts: {counts}")
    if breakers is None:
        lines.append("breakers: unknown")
    elif breakers:
        lines.append("breakers:")
        lines.extend(f"  - {_describe_breaker(view)}" for view in breakers)
    if isinstance(open_routes, str):
        lines.append(f"open routes: {open_routes}")
    elif open_routes is not None:
        named = ", ".join(safe_token(w) or "?" for w in open_routes)
        lines.append(f"open routes: {named or 'none'}")
    since = (now_ms - first_seen_ms) / 1000
    lines.append(
        f"since: {clock_text(first_seen_ms)} ({age_text(since)} ago, first event of this incident)"
    )
    lines.append(f"runs waiting: {'unknown' if waiting_runs is None else waiting_runs}")
    if suppressed_repeats:
        lines.append(f"suppressed repeats: {suppressed_repeats}")
    if event.context:
        lines.append("context: " + " ".join(f"{k}={v}" for k, v in event.context.items()))
    lines.append("inspect: memory-worker breakers list; memory-worker report")
    text = "\n".join(lines)
    return text if len(text) <= PAGE_MAX_CHARS else text[: PAGE_MAX_CHARS - 1] + "…"
