"""``replay``: give retired (or failed) runs a fresh set of attempts (plan, confirm, apply)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import orjson
import typer
from rich.console import Console
from rich.table import Table

from memory_worker.cli.common import (
    DryRunFlag,
    JsonFlag,
    YesFlag,
    an_id,
    app,
    confirm,
    err,
    fail,
    ms_text,
    out,
    run_sync,
    with_redis,
)
from memory_worker.ops.audit import audit, cli_actor
from memory_worker.settings import get_settings
from memory_worker.storage.connections import RedisHandle

if TYPE_CHECKING:
    from memory_worker.runs.replay import ReplayFilter, ReplayOutcome, ReplayPlan, ReplayStore


def iso_ms(ms: int | None) -> str | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()


SinceOption = Annotated[
    str | None,
    typer.Option(help="Only runs that failed at or after this time (ISO 8601, or 6h / 2d ago)."),
]
StatusOption = Annotated[
    str,
    typer.Option(
        help="retired (attempts exhausted; the default) or failed (every failed run, "
        "retired or still waiting for its backoff)."
    ),
]
RateOption = Annotated[
    str | None,
    typer.Option(
        help="Stagger availability to a drain rate (14/min, 2/s, 500/h) so fresh runs "
        "are not starved. Default: all claimable at once."
    ),
]


@app.command()
def replay(
    since: SinceOption = None,
    until: Annotated[
        str | None, typer.Option(help="Only runs that failed at or before this time.")
    ] = None,
    error_code: Annotated[
        str | None,
        typer.Option("--error-code", help="Code of the last failure, e.g. UPSTREAM_ERROR."),
    ] = None,
    reason: Annotated[
        str | None, typer.Option(help="Reason of the last failure, e.g. provider_timeout.")
    ] = None,
    chat: Annotated[int | None, typer.Option(callback=an_id, help="Only this chat id.")] = None,
    prompt_version: Annotated[
        str | None, typer.Option("--prompt-version", help="Only this prompt version.")
    ] = None,
    status: StatusOption = "retired",
    rate: RateOption = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Give retired (or failed) runs a fresh set of attempts, keeping their error log.

    Replayed runs stay failed with attempts 0 and wait in the retry bucket.
    They never count against MEMORY_MAX_QUEUED_RUNS.
    Repeating a replay is a no-op.
    """
    now = datetime.now(UTC)
    wanted, per_second = _replay_filter(
        now, since, until, error_code, reason, chat, prompt_version, status, rate
    )
    settings = get_settings()

    async def action(handle: RedisHandle) -> int:
        return await _replay(
            handle, wanted, per_second, now, dry_run=dry_run, yes=yes, as_json=as_json
        )

    code = run_sync(with_redis(settings, action))
    if code:
        raise typer.Exit(code)


def _replay_filter(
    now: datetime,
    since: str | None,
    until: str | None,
    error_code: str | None,
    reason: str | None,
    chat: int | None,
    prompt_version: str | None,
    status: str,
    rate: str | None,
) -> tuple[ReplayFilter, float | None]:
    """The options as a selection and a drain rate (a bad option: one line, exit 2)."""
    from memory_worker.runs.replay import (
        FILTER_SCOPES,
        ReplayFilter,
        ReplayScope,
        parse_rate,
        parse_when,
    )

    if status not in {s.value for s in FILTER_SCOPES}:
        raise fail(f"--status must be retired or failed, not {status!r}")
    try:
        per_second = parse_rate(rate) if rate else None
        since_dt = parse_when(since, now=now) if since else None
        until_dt = parse_when(until, now=now) if until else None
    except ValueError as exc:
        raise fail(str(exc)) from None
    wanted = ReplayFilter(
        scope=ReplayScope(status),
        since_ms=None if since_dt is None else int(since_dt.timestamp() * 1000),
        until_ms=None if until_dt is None else int(until_dt.timestamp() * 1000),
        error_code=error_code,
        reason=reason,
        chat_id=chat,
        prompt_version=prompt_version,
    )
    return wanted, per_second


async def _replay(
    handle: RedisHandle,
    wanted: ReplayFilter,
    per_second: float | None,
    now: datetime,
    *,
    dry_run: bool,
    yes: bool,
    as_json: bool,
) -> int:
    """Plan, show, confirm, apply, wake the pipeline; the exit status."""
    from memory_worker.api import MemoryQueue
    from memory_worker.wiring import replay_store

    settings = get_settings()
    store = replay_store(handle.client, settings)
    plan = await store.plan(wanted, now_ms=int(now.timestamp() * 1000), rate_per_second=per_second)
    if dry_run or not plan.items:
        if as_json:
            sys.stdout.write(plan_json(plan, None, dry_run=dry_run).decode() + "\n")
        else:
            _print_replay_plan(plan, dry_run=dry_run, console=out)
        return 0
    if not yes:
        _print_replay_plan(plan, dry_run=True, console=err, rows=10)
        if not confirm(f"Replay {len(plan.items)} run(s)?"):
            err.print("aborted: nothing was changed")
            return 1
    outcome = await _apply_with_progress(store, plan)
    await MemoryQueue(handle, settings).wake()
    await audit(  # like the console's replay (§15)
        handle.client,
        settings,
        "cli_replay",
        counters={
            "matched": len(plan.items),
            "replayed": len(outcome.replayed),
            "skipped": len(outcome.skipped),
        },
        context={
            **{k: str(v) for k, v in wanted.as_dict().items() if v is not None},
            **cli_actor(),
        },
    )
    if as_json:
        sys.stdout.write(plan_json(plan, outcome, dry_run=False).decode() + "\n")
    else:
        _print_replay_summary(plan, outcome)
    return 0


def _print_replay_plan(
    plan: ReplayPlan, *, dry_run: bool, console: Console, rows: int = 20
) -> None:
    n = len(plan.items)
    if not n:
        console.print("No runs match: nothing to replay.")
        _print_aged_out(plan, console, rows)
        return
    head = "[bold]Dry run[/bold] — would replay" if dry_run else "Replay"
    console.print(
        f"{head} [bold]{n}[/bold] run(s): attempts → 0, status stays failed, "
        "error log kept (+ a replay entry).",
        highlight=False,
    )
    by = Table("last failure code", "runs", "reason", "runs", box=None)
    codes = list(plan.by_code.items())
    reasons = list(plan.by_reason.items())
    for i in range(max(len(codes), len(reasons))):
        code, code_n = codes[i] if i < len(codes) else ("", "")
        why, why_n = reasons[i] if i < len(reasons) else ("", "")
        by.add_row(code, str(code_n), why, str(why_n))
    console.print(by)
    _print_availability(plan, console)
    table = Table("run", "chat", "attempts", "code", "reason", "failed at", "claimable at")
    for item in plan.items[:rows]:
        table.add_row(
            item.run_id,
            str(item.chat_id),
            f"{item.attempts} → 0",
            item.code or "-",
            item.reason or "-",
            ms_text(item.failed_at_ms),
            ms_text(item.available_at_ms),
        )
    console.print(table)
    if n > rows:
        console.print(f"… and {n - rows} more (--json lists them all)")
    _print_aged_out(plan, console, rows)


def _print_aged_out(plan: ReplayPlan, console: Console, rows: int) -> None:
    """One line per matching run whose text retention dropped: it cannot be replayed."""
    if not plan.aged_out:
        return
    days = get_settings().retired_run_message_retention_days
    console.print(
        f"{len(plan.aged_out)} matching run(s) cannot be replayed: their messages aged out "
        f"(retired runs keep them {days:g} days, MEMORY_RETIRED_RUN_MESSAGE_RETENTION_DAYS).",
        highlight=False,
    )
    for run in plan.aged_out[:rows]:
        when = f"at {ms_text(run.aged_at_ms)} UTC" if run.aged_at_ms is not None else ""
        console.print(
            f"  run {run.run_id} (chat {run.chat_id}, failed {ms_text(run.failed_at_ms)} UTC, "
            f"{run.code or '-'}): text aged out {when}".rstrip()
            + " — can no longer be replayed",
            highlight=False,
        )
    if len(plan.aged_out) > rows:
        console.print(f"  … and {len(plan.aged_out) - rows} more (--json lists them all)")


def _print_availability(plan: ReplayPlan, console: Console) -> None:
    if plan.rate_per_second is None or plan.last_available_ms is None:
        console.print("All become claimable at once (no --rate).")
        return
    minutes = (plan.last_available_ms - plan.now_ms) / 60_000
    console.print(
        f"Staggered at {plan.rate_per_second * 60:g}/min: the last one becomes claimable "
        f"at {ms_text(plan.last_available_ms)} UTC (in ~{minutes:.1f} min).",
        highlight=False,
    )


async def _apply_with_progress(store: ReplayStore, plan: ReplayPlan) -> ReplayOutcome:
    """Apply the plan; a progress bar on stderr when it takes more than one batch."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    if len(plan.items) <= store.batch_size:
        return await store.apply(plan)
    with Progress(
        TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), console=err, transient=True
    ) as progress:
        task = progress.add_task("replay", total=len(plan.items))
        return await store.apply(plan, on_batch=lambda n: progress.advance(task, n))


def _print_replay_summary(plan: ReplayPlan, outcome: ReplayOutcome) -> None:
    table = Table("replay", "runs", title="Replay summary")
    table.add_row("matched", str(len(plan.items)))
    table.add_row("replayed (attempts → 0)", str(len(outcome.replayed)))
    table.add_row("skipped (changed since the selection)", str(len(outcome.skipped)))
    if plan.aged_out:
        table.add_row("not replayable (messages aged out)", str(len(plan.aged_out)))
    for code, count in plan.by_code.items():
        table.add_row(f"  last failure {code}", str(count))
    out.print(table)
    _print_availability(plan, out)
    out.print("Pipeline woken. Follow it with `memory-worker runs list --status failed`.")


def plan_json(replay: ReplayPlan, outcome: ReplayOutcome | None, *, dry_run: bool) -> bytes:
    """The ``replay --json`` document."""
    skipped = set(outcome.skipped) if outcome else set()
    doc = {
        "dry_run": dry_run,
        "filter": replay.filter.as_dict(),
        "matched": len(replay.items),
        "replayed": len(outcome.replayed) if outcome else 0,
        "skipped": sorted(skipped),
        "rate_per_minute": None
        if replay.rate_per_second is None
        else round(replay.rate_per_second * 60, 6),
        "first_available_at": iso_ms(replay.items[0].available_at_ms) if replay.items else None,
        "last_available_at": iso_ms(replay.last_available_ms),
        "by_code": replay.by_code,
        "by_reason": replay.by_reason,
        "runs": [
            {
                "id": item.run_id,
                "chat_id": item.chat_id,
                "attempts": item.attempts,
                "code": item.code,
                "reason": item.reason,
                "failed_at": iso_ms(item.failed_at_ms),
                "available_at": iso_ms(item.available_at_ms),
                "replayed": outcome is not None and item.run_id not in skipped,
            }
            for item in replay.items
        ],
        # matched the selection, but retention dropped their messages: not replayable
        "aged_out": [
            {
                "id": run.run_id,
                "chat_id": run.chat_id,
                "code": run.code,
                "reason": run.reason,
                "failed_at": iso_ms(run.failed_at_ms),
                "aged_out_at": iso_ms(run.aged_at_ms),
                "replayable": False,
            }
            for run in replay.aged_out
        ],
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2)
