"""``breakers list|reset`` and ``report``: the fleet's state, rendered.

The data comes from :mod:`memory_worker.ops.metrics` (:func:`report_data`,
:func:`~memory_worker.wiring.breaker_store`); this module only renders it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from memory_worker.cli.common import (
    JsonFlag,
    app,
    breakers_app,
    fail,
    ms_text,
    out,
    print_json,
    run_sync,
    with_redis,
)
from memory_worker.ops.audit import AUDIT_TYPES, audit, cli_actor
from memory_worker.settings import get_settings
from memory_worker.storage.connections import RedisHandle

if TYPE_CHECKING:
    from llm_client import BreakerView, Tally, TargetStatus


@breakers_app.command("list")
def breakers_list(as_json: JsonFlag = False) -> None:
    """Every configured or stored breaker: state, failures, trips, cooldown; and for routed
    targets what holds them back beyond it (cooling, caps, slowness) and their latency."""
    from llm_client import load_routes, target_statuses
    from memory_worker.wiring import breaker_store, outlier_store

    settings = get_settings()
    # a broken routes file is an error (an empty table would read as "no breakers")
    routes = load_routes(settings.routes_file, settings.route_defaults(), require_secrets=False)

    async def action(
        handle: RedisHandle,
    ) -> tuple[list[BreakerView], list[TargetStatus], list[Tally]]:
        store = breaker_store(handle.client, settings)
        views = await store.list(routes.target_ids())
        tallies = await outlier_store(handle.client, settings).sync([v.target for v in views])
        return views, await target_statuses(store, routes), tallies

    views, statuses, tallies = run_sync(with_redis(settings, action))
    gates = {s.target: s for s in statuses}
    ejection = {t.target: t for t in tallies}
    if as_json:
        print_json(
            [
                {
                    **v.as_dict(),
                    "gateway": g.as_dict() if (g := gates.get(v.target)) else None,
                    "ejection": _ejection_dict(ejection.get(v.target)),
                }
                for v in views
            ]
        )
        return
    out.print(_breaker_table(views, gates, ejection))


def _ejection_dict(tally: Tally | None) -> dict[str, object] | None:
    if tally is None:
        return None
    return {
        "standing": tally.standing.value,
        "ejected_until_ms": tally.ejected_until_ms or None,
        "times": tally.times,
        "window_calls": tally.calls,
        "window_failures": tally.failures,
        "error_ratio": round(tally.error_ratio, 4),
    }


def _breaker_table(
    views: list[BreakerView], gates: dict[str, TargetStatus], ejection: dict[str, Tally]
) -> Table:
    colour = {"closed": "green", "half_open": "yellow", "open": "red"}
    table = Table(
        "target",
        "state",
        "consecutive",
        "trips",
        "opened at",
        "cooldown left",
        "probe",
        "window fail/calls",
        "gateway",
        "latency",
        "ejection",
    )
    now_ms = int(time.time() * 1000)
    for v in views:
        state = v.circuit.value
        gate = gates.get(v.target)
        latency = "-"
        if gate is not None and gate.latency_mean_ms is not None:
            latency = f"{gate.latency_mean_ms} ms ({gate.latency_samples})"
        table.add_row(
            v.target,
            f"[{colour.get(state, 'white')}]{state}[/]",
            str(v.consecutive_failures),
            str(v.trips),
            ms_text(v.opened_at_ms),
            f"{v.cooldown_remaining_s:.0f}s",
            "yes" if v.probe_in_flight else "-",
            f"{v.window_failures}/{v.window_calls}",
            "\n".join(gate.notes) if gate is not None and gate.notes else "-",
            latency,
            tally.note(now_ms) if (tally := ejection.get(v.target)) is not None else "-",
        )
    return table


@breakers_app.command("reset")
def breakers_reset(
    target: Annotated[str, typer.Argument(help="Target id provider/model (see breakers list).")],
    force: Annotated[
        bool, typer.Option("--force", help="Reset even a target no route or state knows.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Close a breaker now: counters cleared, outstanding probe permits made stale, and the
    target's ejection and error counts forgotten (it is back in rotation at once)."""
    from memory_worker.ops.metrics import route_target_ids
    from memory_worker.wiring import breaker_store, reset_target

    settings = get_settings()
    targets = route_target_ids(settings, strict=True)

    async def action(handle: RedisHandle) -> BreakerView:
        store = breaker_store(handle.client, settings)
        known = set(targets) | set(await store.known_targets())
        if target not in known and not force:
            names = ", ".join(sorted(known)) or "none"
            raise fail(f"unknown target {target!r} (known: {names}); --force resets it anyway")
        before = await store.view(target)
        view = await reset_target(handle.client, settings, target)  # and its ejection
        await audit(  # like the console's reset (§15)
            handle.client,
            settings,
            "cli_breaker_reset",
            counters={"trips_before": before.trips},
            context={"target": target, "state_before": before.circuit.value, **cli_actor()},
        )
        return view

    view = run_sync(with_redis(settings, action))
    if as_json:
        print_json(view.as_dict())
        return
    out.print(f"breaker [bold]{view.target}[/bold] reset: {view.circuit.value}", highlight=False)


# --- report -------------------------------------------------------------------------------------

#: The audit events on the same stream (:mod:`memory_worker.ops.audit`).
AUDIT_EVENT_TYPES = AUDIT_TYPES


def report_types() -> list[str]:
    """Every event type ``report --type`` can select: the walker's, the pipeline's, the audit's."""
    from llm_client import EventType

    return sorted({*(t.value for t in EventType), *AUDIT_EVENT_TYPES})


@app.command()
def report(
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="Events to show.")] = 50,
    event_type: Annotated[
        list[str] | None, typer.Option("--type", help="Only these event types (repeatable).")
    ] = None,
    workflow: Annotated[str | None, typer.Option(help="Only this workflow.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Recent routing events, admin pages sent/suppressed, breakers and the backlog."""
    from memory_worker.ops.metrics import report_data

    known = report_types()
    unknown = [t for t in event_type or [] if t not in known]
    if unknown:
        raise fail(f"unknown --type {', '.join(unknown)} (known: {', '.join(known)})")
    settings = get_settings()

    async def action(handle: RedisHandle) -> dict[str, Any]:
        return await report_data(
            handle.client, settings, limit=limit, types=event_type, workflow=workflow
        )

    data = run_sync(with_redis(settings, action))
    if as_json:
        print_json(data)
        return
    print_report(data, out)


def print_report(data: dict[str, Any], console: Console) -> None:
    """The ``report`` document as tables (also used by the demo)."""
    _print_paging_warning(data, console)
    severity = {"error": "red", "warn": "yellow", "info": "dim"}
    table = Table(
        "time (UTC)",
        "severity",
        "type",
        "workflow",
        "target",
        "reason",
        "code",
        "counters",
        title="Routing events (newest first)",
    )
    if not data["events"]:
        console.print("No routing events recorded.")
    for e in data["events"]:
        table.add_row(
            ms_text(e["at_ms"]),
            f"[{severity.get(e['severity'], 'white')}]{e['severity']}[/]",
            e["type"],
            e["workflow"],
            e["target"] or "-",
            str(e["reason"] or "-"),
            e["error_code"] or "-",
            " ".join(f"{k}={v}" for k, v in e["counters"].items()),
        )
    if data["events"]:
        console.print(table)
    pages = data["pages"]
    console.print(
        f"Admin pages: sent {pages.get('sent', 0)}, suppressed {pages.get('suppressed', 0)}, "
        f"failed {pages.get('failed', 0)}, pending {data['pages_pending']}",
        highlight=False,
    )
    runs = data["runs"]
    console.print(
        f"Runs: queued {runs.get('queued', 0)}, processing {runs.get('processing', 0)}, "
        f"failed {runs.get('failed', 0)} (retired {runs.get('retired', 0)}). Ticks pending "
        f"{data['ticks']['pending']} (delayed {data['ticks']['delayed']}). Deferred since "
        f"{data['pipeline_deferred_since'] or '-'}.",
        highlight=False,
    )
    opened = [b["target"] for b in data["breakers"] if b["state"] != "closed"]
    console.print(f"Breakers not closed: {', '.join(opened) if opened else 'none'}")
    _print_audit(data.get("audit") or [], console)
    _print_paging_warning(data, console)  # first and last: whichever end is on the screen


def _print_paging_warning(data: dict[str, Any], console: Console) -> None:
    """§9: say it loudly when pages reach nobody ("sent 0" alone reads as "all quiet")."""
    warning = (data.get("paging") or {}).get("warning")
    if warning:
        console.print(f"[bold white on red] WARNING [/] [bold red]{warning}[/]", highlight=False)


def _print_audit(events: list[dict[str, str]], console: Console) -> None:
    """Forget requests carried out (§14): who, from where, when, scope, counts — no content."""
    if not events:
        return
    table = Table(
        "time (UTC)",
        "type",
        "actor",
        "host",
        "chat",
        "user",
        "cards",
        "episodes",
        "messages",
        title="Audit (newest first)",
    )
    for e in events:
        table.add_row(
            ms_text(int(e.get("at_ms") or 0)),
            e.get("type", ""),
            e.get("actor", ""),
            e.get("host", ""),
            e.get("chat_id", ""),
            e.get("user_id") or "-",
            e.get("cards", ""),
            e.get("episodes", ""),
            e.get("messages", ""),
        )
    console.print(table)
