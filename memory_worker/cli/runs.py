"""``enqueue FILE|-``, ``runs list|show`` and ``runs cancel|replay ID``: putting runs in,
looking at them, and acting on one run by id (audited, §13)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import orjson
import typer
from rich.markup import escape
from rich.table import Table

from memory_worker.cli.common import (
    DryRunFlag,
    JsonFlag,
    YesFlag,
    app,
    confirm,
    err,
    fail,
    out,
    print_json,
    run_sync,
    runs_app,
    with_redis,
)
from memory_worker.errors import InvalidRunRequest
from memory_worker.models import SKIP_MEANING, Run, RunRequest, RunStatus, parse_run_request
from memory_worker.ops.audit import audit, cli_actor
from memory_worker.runs import now_ms
from memory_worker.settings import get_settings
from memory_worker.storage.connections import RedisHandle

if TYPE_CHECKING:
    from memory_worker.upkeep.run_actions import RunActions

T = TypeVar("T")


def read_requests(text: str) -> list[tuple[str, RunRequest]]:
    """Parse a JSON object, a JSON array, or JSONL into (where, request) pairs.

    ``where`` is ``line N`` / ``item N`` / ``document``; every problem is reported by it.
    """
    stripped = text.strip()
    if not stripped:
        raise InvalidRunRequest(["input: no run requests"])
    documents: list[tuple[str, Any]] = []
    try:
        whole = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                documents.append((f"line {number}", orjson.loads(line)))
            except orjson.JSONDecodeError as exc:
                documents.append((f"line {number}", exc))
    else:
        if isinstance(whole, list):
            documents = [(f"item {i}", doc) for i, doc in enumerate(whole, start=1)]
        else:
            documents = [("document", whole)]
    requests: list[tuple[str, RunRequest]] = []
    problems: list[str] = []
    for where, doc in documents:
        if isinstance(doc, Exception):
            problems.append(f"{where}: not valid JSON ({doc})")
            continue
        if not isinstance(doc, dict):
            problems.append(f"{where}: expected a JSON object")
            continue
        try:
            requests.append((where, parse_run_request(doc)))
        except InvalidRunRequest as exc:
            problems.extend(f"{where}: {p}" for p in exc.problems)
    if problems:
        raise InvalidRunRequest(problems)
    return requests


@app.command()
def enqueue(
    source: Annotated[str, typer.Argument(help="JSONL/JSON file of run requests, or - for stdin.")],
    as_json: JsonFlag = False,
) -> None:
    """Validate and enqueue run requests. Nothing is stored if any request is invalid."""
    text = _read_stdin() if source == "-" else _read_file(source)
    requests = read_requests(text)  # InvalidRunRequest: one line listing every problem

    async def action(handle: RedisHandle) -> list[dict[str, Any]]:
        from memory_worker.api import MemoryQueue

        queue = MemoryQueue(handle, get_settings())
        # every request parsed and size-checked before the first is stored (all-or-nothing)
        results = await queue.enqueue_many(
            [r for _, r in requests], labels=[where for where, _ in requests]
        )
        return [{"status": r.status.value, "run_id": r.run_id} for r in results]

    results = run_sync(with_redis(get_settings(), action))
    if as_json:
        print_json(results)
        return
    counts: dict[str, int] = {}
    for item in results:
        counts[item["status"]] = counts.get(item["status"], 0) + 1
    out.print(", ".join(f"{status}: {n}" for status, n in sorted(counts.items())))


def _read_file(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    return _decode(data, path)


def _read_stdin() -> str:
    return _decode(sys.stdin.buffer.read(), "stdin")


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise fail(
            f"cannot read {where}: not valid UTF-8 (byte 0x{data[exc.start]:02x} "
            f"at offset {exc.start}, line {line})"
        ) from None


# --- runs ---------------------------------------------------------------------------------------


def run_json(run: Run) -> dict[str, Any]:
    data: dict[str, Any] = run.model_dump(mode="json")
    return data


@runs_app.command("list")
def runs_list(
    status: Annotated[
        RunStatus | None, typer.Option("--status", help="Only runs in this status.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000)] = 100,
    retired: Annotated[
        bool,
        typer.Option(
            "--retired", help="Only retired runs (failed, attempts spent), newest retirement first."
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Most recently updated runs first."""
    from memory_worker.wiring import run_store

    if retired and status not in (None, RunStatus.FAILED):
        raise fail(f"--retired runs are failed runs: drop --status {status.value}")

    async def action(handle: RedisHandle) -> list[Run]:
        store = run_store(handle.client, get_settings())
        if retired:
            return await store.list_retired(limit)
        return await store.list_runs(status, limit)

    runs = run_sync(with_redis(get_settings(), action))
    if as_json:
        print_json([run_json(r) for r in runs])
        return
    table = Table(
        "id", "status", "attempts", "releases", "last error", "chat", "thread", "window", "updated"
    )
    for r in runs:
        label = "retired" if r.retired else r.status.value
        table.add_row(
            r.id,
            label,
            budget_text(r),
            str(r.releases),
            last_error_text(r),
            str(r.chat_id),
            str(r.thread_id),
            f"{r.range_start:%Y-%m-%d %H:%M}–{r.range_end:%H:%M}",
            f"{r.updated_at:%Y-%m-%d %H:%M:%S}",
        )
    out.print(table)


def budget_text(run: Run) -> str:
    """``attempts/budget``: the budget of the run's last claim (``?``: never claimed)."""
    return f"{run.attempts}/{'?' if run.max_attempts is None else run.max_attempts}"


def last_error_text(run: Run) -> str:
    """The run's last error code (and reason), ``-`` without one (masked when stored)."""
    if not run.error_log:
        return "-"
    last = run.error_log[-1]
    return f"{last.code} ({last.reason})" if last.reason else last.code


@runs_app.command("show")
def runs_show(run_id: str, as_json: JsonFlag = False) -> None:
    """One run with its error log."""
    from memory_worker.wiring import run_store

    async def action(handle: RedisHandle) -> Run:
        return await run_store(handle.client, get_settings()).get(run_id)

    found = run_sync(with_redis(get_settings(), action))  # RunNotFound: one line, exit 2
    if as_json:
        print_json(run_json(found))
        return
    data = run_json(found)
    errors = data.pop("error_log")
    releases = data.pop("release_log")
    if data["max_attempts"] is None:
        data["max_attempts"] = "- (never claimed: the claiming worker's MEMORY_MAX_ATTEMPTS)"
    if found.skip_reason is None:
        data.pop("skip_reason")
    else:
        data["skip_reason"] = f"{found.skip_reason.value}: {SKIP_MEANING[found.skip_reason.value]}"
    for key, value in data.items():
        out.print(f"[bold]{key}[/bold]: {escape(str(value))}", highlight=False)
    if releases:
        history = Table("released_at", "reason", "route", "target", "code", title="Releases")
        for e in releases:
            history.add_row(
                e["at"], e["reason"], e["workflow"] or "-", e["target"] or "-", e["code"] or "-"
            )
        out.print(history)
    if errors:
        table = Table("attempt", "failed_at", "kind", "code", "reason", "message")
        for e in errors:
            table.add_row(
                str(e["attempt"]),
                e["failed_at"],
                e["kind"],
                e["code"],
                str(e["reason"]),
                e["message"],
            )
        out.print(table)


# --- one run by id: cancel, replay (§13) --------------------------------------------------------


async def _with_actions(
    action: Callable[[RedisHandle, RunActions], Awaitable[T]],
) -> T:
    """Run ``action`` with the run actions over the queue's Redis and the card store's."""
    from memory_worker.storage.connections import cards_client, close_cards_client
    from memory_worker.wiring import run_actions

    settings = get_settings()

    async def inside(handle: RedisHandle) -> T:
        cards = cards_client(settings, handle.client)  # MEMORY_CARDS_URL, else the queue's
        try:
            return await action(handle, run_actions(handle.client, settings, cards))
        finally:
            await close_cards_client(cards, handle.client)

    return await with_redis(settings, inside)


@runs_app.command("cancel")
def runs_cancel(
    run_id: Annotated[str, typer.Argument(metavar="ID", help="The run's id (runs list).")],
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Take one run out for good: queued, released, due for a retry or retired, it leaves its
    lane; processing, its worker stops at its next checkpoint and nothing of it is written.
    Shown first, y/N unless --yes; audited. `runs replay ID` puts it back."""
    from memory_worker.upkeep.run_actions import REFUSED, CancelOutcome, cancel_refusal

    async def action(handle: RedisHandle, actions: RunActions) -> int:
        preview = await actions.preview_cancel(run_id)  # RunNotFound: one line, exit 2
        run = preview.run
        if preview.outcome is CancelOutcome.ALREADY:
            _said(as_json, run, "already_cancelled", f"run {run.id} is cancelled already")
            return 0
        if not preview.allowed:
            raise fail(f"run {run.id}: {preview.what} Nothing was changed.")
        if dry_run or not yes:
            console = out if dry_run else err
            head = "Dry run — would cancel" if dry_run else "Cancel"
            console.print(f"{head} run {run.id} ({_status_text(run)}, chat {run.chat_id}).")
            console.print(preview.what, highlight=False)
            if dry_run:
                return 0
            if not confirm(f"Cancel run {run.id}?"):
                err.print("aborted: nothing was changed")
                return 1
        done = await actions.cancel(run.id, actor="cli", now_ms=now_ms())
        if done.outcome in REFUSED:
            raise fail(cancel_refusal(done.run_id, done.outcome))
        if done.outcome is CancelOutcome.CANCELLED:
            await audit(
                handle.client,
                get_settings(),
                "cli_run_cancel",
                context={
                    "run_id": done.run_id,
                    "chat_id": str(done.chat_id),
                    "status_before": done.before,
                    **cli_actor(),
                },
            )
        if as_json:
            print_json(done.as_dict())
        else:
            out.print(f"run {done.run_id} {done.outcome.value} (was {done.before})")
        return 0

    code = run_sync(_with_actions(action))
    if code:
        raise typer.Exit(code)


@runs_app.command("replay")
def runs_replay(
    run_id: Annotated[str, typer.Argument(metavar="ID", help="The run's id (runs list).")],
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Give one retired, failed, skipped or cancelled run a fresh set of attempts (replay's own
    path: error log kept, a replay entry added; claimable now). Shown first, y/N unless
    --yes; audited."""
    from memory_worker.api import MemoryQueue
    from memory_worker.upkeep.run_actions import replay_refusal

    async def action(handle: RedisHandle, actions: RunActions) -> int:
        now = now_ms()
        run = await actions.runs.get(run_id)  # RunNotFound: one line, exit 2
        plan = await actions.preview_replay(run.id, now_ms=now)
        if not plan.items:
            raise fail(replay_refusal(run) + "; nothing was changed")
        if dry_run or not yes:
            console = out if dry_run else err
            head = "Dry run — would replay" if dry_run else "Replay"
            console.print(
                f"{head} run {run.id} ({_status_text(run)}, chat {run.chat_id}): attempts "
                f"{run.attempts} → 0, claimable now, error log kept (+ a replay entry).",
                highlight=False,
            )
            if dry_run:
                return 0
            if not confirm(f"Replay run {run.id}?"):
                err.print("aborted: nothing was changed")
                return 1
        _, outcome = await actions.replay(run.id, now_ms=now)
        if not outcome.replayed:
            raise fail(f"run {run.id} changed since it was read: nothing was replayed")
        await MemoryQueue(handle, get_settings()).wake()
        await audit(
            handle.client,
            get_settings(),
            "cli_run_replay",
            counters={"attempts_before": run.attempts},
            context={
                "run_id": run.id,
                "chat_id": str(run.chat_id),
                "status_before": run.status.value,
                **cli_actor(),
            },
        )
        result = {"run_id": run.id, "chat_id": run.chat_id, "status_before": run.status.value}
        if as_json:
            print_json({**result, "replayed": True, "attempts_before": run.attempts})
        else:
            out.print(f"run {run.id} replayed (was {_status_text(run)}): claimable now")
        return 0

    code = run_sync(_with_actions(action))
    if code:
        raise typer.Exit(code)


def _status_text(run: Run) -> str:
    return f"{run.status.value}{' (retired)' if run.retired else ''}"


def _said(as_json: bool, run: Run, outcome: str, line: str) -> None:
    if as_json:
        print_json(
            {
                "run_id": run.id,
                "chat_id": run.chat_id,
                "outcome": outcome,
                "status_before": run.status.value,
            }
        )
    else:
        out.print(line, highlight=False)
