"""``enqueue FILE|-`` and ``runs list|show``: putting runs in and looking at them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.markup import escape
from rich.table import Table

from memory_worker.cli.common import (
    JsonFlag,
    app,
    fail,
    out,
    print_json,
    run_sync,
    runs_app,
    with_redis,
)
from memory_worker.errors import InvalidRunRequest
from memory_worker.models import SKIP_MEANING, Run, RunRequest, RunStatus, parse_run_request
from memory_worker.settings import get_settings
from memory_worker.storage.connections import RedisHandle


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
