"""An outage's life on paper (§9), pure: it opens with a page, it ends with one "resolved" page.

An **incident** is what the admins were told is broken: the routes (workflows) that were
open — every target breaker-open or half-open — when a routing page went out, since when,
and the fleet's counters at that moment. Later pages while it lasts add their open routes.
When none of its routes is open any more, it is **resolved**: one page says so — how long
it lasted, runs released (attempts refunded) and completed meanwhile, runs still waiting,
attempts spent (§7: an outage spends none) — and the incident is gone. A page for a route
that was not open (a retirement, a single target's failures) opens nothing: there is no
outage to end.

- :func:`open_step` — a page went out naming these open routes: open the incident (or
  add them to the one open);
- :func:`resolve_step` — is the incident over, given the routes open now?
- :func:`fleet_counts` / :func:`render_resolved` — what the resolved page says.

Both steps run fleet-wide as Lua scripts (:mod:`memory_worker.paging.incident_store`); these
are their twins, and an equivalence test drives both with the same random sequences. Only
the process whose script ends the incident sends the page, so it goes out once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from llm_client import safe_token
from memory_worker.paging.policy import PAGE_MAX_CHARS, age_text, clock_text

#: The event type and dedupe key prefix of a resolved page.
RESOLVED = "incident_resolved"


@dataclass(frozen=True, slots=True)
class Counts:
    """The fleet's counters an incident compares: releases (attempt refunded), completions,
    attempts spent (failures, and leases reclaimed from a lost worker)."""

    released: int = 0
    completed: int = 0
    spent: int = 0

    def since(self, start: Counts) -> Counts:
        return Counts(
            max(self.released - start.released, 0),
            max(self.completed - start.completed, 0),
            max(self.spent - start.spent, 0),
        )


@dataclass(frozen=True, slots=True)
class Incident:
    """The open incident: since when, its routes, the counters when it opened."""

    started_ms: int
    routes: frozenset[str]
    at_start: Counts = Counts()


def fleet_counts(counters: Mapping[str, int]) -> Counts:
    """The queue's counters hash (``released:<reason>``, ``completed``, ``failed:<reason>``,
    ``claimed:lease_expired``, …) as :class:`Counts`."""
    released = sum(v for k, v in counters.items() if k.startswith("released:"))
    failed = sum(v for k, v in counters.items() if k.startswith("failed:"))
    lost = counters.get("claimed:lease_expired", 0)
    return Counts(released, counters.get("completed", 0), failed + lost)


def open_step(
    state: Incident | None, now_ms: int, routes: Collection[str], counts: Counts
) -> Incident | None:
    """A page went out while ``routes`` were open: the incident, opened or grown (None: no
    incident and no open route — nothing to open)."""
    if state is None:
        return Incident(now_ms, frozenset(routes), counts) if routes else None
    return replace(state, routes=state.routes | frozenset(routes))


def resolve_step(state: Incident | None, open_routes: Collection[str]) -> bool:
    """Is the incident over: none of its routes open now?"""
    return state is not None and not (state.routes & frozenset(open_routes))


def render_resolved(
    incident: Incident, *, now_ms: int, counts: Counts, waiting_runs: int | None
) -> str:
    """The resolved page (identifiers and counts only)."""
    during = counts.since(incident.at_start)
    routes = ", ".join(sorted(safe_token(r) or "?" for r in incident.routes))
    lasted = age_text((now_ms - incident.started_ms) / 1000)
    waiting = "unknown" if waiting_runs is None else str(waiting_runs)
    lines = [
        f"memory-worker routing report: {RESOLVED}",
        "severity: info",
        f"resolved: every route that paged is closed again ({routes or 'none'})",
        f"lasted: {lasted} (since {clock_text(incident.started_ms)}, "
        f"resolved {clock_text(now_ms)})",
        f"runs released during it: {during.released} (attempts refunded)",
        f"attempts spent during it: {during.spent}",
        f"runs completed during it: {during.completed}; waiting now: {waiting} (draining)",
        "inspect: memory-worker report",
    ]
    text = "\n".join(lines)
    return text if len(text) <= PAGE_MAX_CHARS else text[: PAGE_MAX_CHARS - 1] + "…"
