"""``memory-worker``: the one command-line entry point (§11, §13).

Every command reads the same settings (env vars, see ``memory-worker config``)
and talks to ``REDIS_URL`` or the embedded Valkey. ``--json`` prints one JSON
document on stdout; errors go to stderr with a non-zero exit code.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import orjson
import typer
from rich.console import Console
from rich.table import Table

from memory_worker.connections import RedisHandle, open_redis
from memory_worker.errors import InvalidRunRequest, MemoryWorkerError, RunNotFound
from memory_worker.models import Run, RunRequest, RunStatus, parse_run_request
from memory_worker.settings import Settings, get_settings

app = typer.Typer(
    name="memory-worker",
    help="Durable memory consolidation worker for a chat bot (arq + Redis).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
runs_app = typer.Typer(help="Inspect memory runs.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")

out = Console(width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True)
T = TypeVar("T")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def _run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def _fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[red]error:[/red] {message}", highlight=False, markup=True)
    return typer.Exit(code)


def _print_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


async def with_redis(settings: Settings, action: Callable[[RedisHandle], Awaitable[T]]) -> T:
    """Open Redis (starting the embedded Valkey if needed), run ``action``, close."""
    handle = await open_redis(settings)
    try:
        return await action(handle)
    finally:
        await handle.close()


@app.callback()
def _setup() -> None:
    """Logs go to stderr (stdout is for results), configured from the settings."""
    from memory_worker.logs import configure

    settings = get_settings()
    configure(settings.log_level, settings.log_format)


# --- run ----------------------------------------------------------------------------------------


@app.command()
def run() -> None:
    """Run a worker until SIGTERM/SIGINT (same as `arq memory_worker.worker.WorkerSettings`)."""
    from memory_worker.worker import run_worker

    _run(run_worker(get_settings()))


# --- enqueue ------------------------------------------------------------------------------------


def read_requests(text: str) -> list[RunRequest]:
    """Parse a JSON object, a JSON array, or JSONL; every problem is reported, by line."""
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
    requests: list[RunRequest] = []
    problems: list[str] = []
    for where, doc in documents:
        if isinstance(doc, Exception):
            problems.append(f"{where}: not valid JSON ({doc})")
            continue
        if not isinstance(doc, dict):
            problems.append(f"{where}: expected a JSON object")
            continue
        try:
            requests.append(parse_run_request(doc))
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
    text = sys.stdin.read() if source == "-" else _read_file(source)
    try:
        requests = read_requests(text)
    except InvalidRunRequest as exc:
        for problem in exc.problems:
            err.print(f"[red]invalid:[/red] {problem}", highlight=False)
        raise typer.Exit(2) from None

    async def action(handle: RedisHandle) -> list[dict[str, Any]]:
        from memory_worker.api import MemoryQueue

        queue = MemoryQueue(handle, get_settings())
        try:
            results = await queue.enqueue_many(requests)
        except InvalidRunRequest as exc:
            raise _fail(str(exc), 2) from None
        return [{"status": r.status.value, "run_id": r.run_id} for r in results]

    results = _run(with_redis(get_settings(), action))
    if as_json:
        _print_json(results)
        return
    counts: dict[str, int] = {}
    for item in results:
        counts[item["status"]] = counts.get(item["status"], 0) + 1
    out.print(", ".join(f"{status}: {n}" for status, n in sorted(counts.items())))


def _read_file(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise _fail(f"cannot read {path}: {exc.strerror}", 2) from None


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
    as_json: JsonFlag = False,
) -> None:
    """Most recently updated runs first."""
    from memory_worker.run_store import RunStore

    async def action(handle: RedisHandle) -> list[Run]:
        return await RunStore(handle.client, get_settings()).list_runs(status, limit)

    runs = _run(with_redis(get_settings(), action))
    if as_json:
        _print_json([run_json(r) for r in runs])
        return
    table = Table("id", "status", "attempts", "releases", "chat", "thread", "window", "updated")
    for r in runs:
        label = "retired" if r.retired else r.status.value
        table.add_row(
            r.id,
            label,
            f"{r.attempts}/{r.max_attempts}",
            str(r.releases),
            str(r.chat_id),
            str(r.thread_id),
            f"{r.range_start:%Y-%m-%d %H:%M}–{r.range_end:%H:%M}",
            f"{r.updated_at:%Y-%m-%d %H:%M:%S}",
        )
    out.print(table)


@runs_app.command("show")
def runs_show(run_id: str, as_json: JsonFlag = False) -> None:
    """One run with its error log."""
    from memory_worker.run_store import RunStore

    async def action(handle: RedisHandle) -> Run:
        return await RunStore(handle.client, get_settings()).get(run_id)

    try:
        found = _run(with_redis(get_settings(), action))
    except RunNotFound as exc:
        raise _fail(str(exc)) from None
    if as_json:
        _print_json(run_json(found))
        return
    data = run_json(found)
    errors = data.pop("error_log")
    for key, value in data.items():
        out.print(f"[bold]{key}[/bold]: {value}", highlight=False)
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


# --- config -------------------------------------------------------------------------------------


@app.command("config")
def config_cmd(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the README table.")] = False,
) -> None:
    """Every setting with its environment variable, default and meaning."""
    from memory_worker.settings import env_name

    rows = []
    for name, info in Settings.model_fields.items():
        default = info.get_default(call_default_factory=True)
        shown = "" if default is None else str(default)
        rows.append((env_name(name), shown, info.description or ""))
    if markdown:
        sys.stdout.write("| variable | default | meaning |\n|---|---|---|\n")
        for var, default, desc in rows:
            sys.stdout.write(f"| `{var}` | `{default}` | {desc} |\n")
        return
    table = Table("variable", "default", "meaning")
    for row in rows:
        table.add_row(*row)
    out.print(table)


def main() -> None:
    try:
        app()
    except MemoryWorkerError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(1)
