"""``memory-worker``: the one command-line entry point (§11, §13).

Commands: ``run [--serve]`` (a worker), ``serve`` (health and metrics HTTP),
``enqueue FILE|-``, ``runs list|show``, ``replay``, ``breakers list|reset``,
``report``, ``demo [--fast]``, ``config [--markdown]``.

Every command reads the same settings (env vars, see ``memory-worker config``)
and talks to ``REDIS_URL`` or the embedded Valkey. ``--json`` prints one JSON
document on stdout; logs and prompts go to stderr.

Every failure is **one line** on stderr (``error: …``) and exit status 2:
bad input, an unreadable or non-UTF-8 file, Redis unreachable, refused
credentials, ``NOPERM``, ``OOM``, a broken routes file, an unparseable time.
:func:`failure_message` maps each exception type to its line (secrets
redacted, no traceback); an unexpected error is one line too, its traceback
logged at debug level (``MEMORY_LOG_LEVEL=debug``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import orjson
import typer
from rich.console import Console
from rich.table import Table

from memory_worker.connections import RedisHandle, open_redis
from memory_worker.errors import InvalidRunRequest, MemoryWorkerError
from memory_worker.models import Run, RunRequest, RunStatus, parse_run_request
from memory_worker.settings import Settings, get_settings

if TYPE_CHECKING:
    from arq.connections import ArqRedis

    from llm_client.breaker import BreakerView
    from memory_worker.replay import ReplayOutcome, ReplayPlan, ReplayStore

app = typer.Typer(
    name="memory-worker",
    help="Durable memory consolidation worker for a chat bot (arq + Redis).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
runs_app = typer.Typer(help="Inspect memory runs.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
breakers_app = typer.Typer(
    help="Inspect and reset the fleet's circuit breakers.", no_args_is_help=True
)
app.add_typer(breakers_app, name="breakers")

out = Console(width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True)
T = TypeVar("T")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def _run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


#: The exit status of every failure (usage errors from typer/click exit 2 as well).
EXIT_FAILURE = 2


def _error_line(message: str) -> None:
    """One line on stderr, whatever the terminal width (rich would wrap it)."""
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")
    sys.stderr.flush()


def _fail(message: str, code: int = EXIT_FAILURE) -> typer.Exit:
    _error_line(message)
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


# --- run and serve ------------------------------------------------------------------------------


@app.command()
def run(
    serve: Annotated[
        bool,
        typer.Option(
            "--serve",
            help="Also serve /healthz, /readyz (Redis + this worker's loop) and /metrics.",
        ),
    ] = False,
    host: Annotated[str | None, typer.Option(help="Bind address (MEMORY_SERVE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (MEMORY_SERVE_PORT).")] = None,
) -> None:
    """Run a worker until SIGTERM/SIGINT (same as `arq memory_worker.worker.WorkerSettings`)."""
    from memory_worker.worker import run_worker

    settings = get_settings()
    if not serve:
        _run(run_worker(settings))
        return
    _run(_run_serving(settings, host, port))


async def _run_serving(settings: Settings, host: str | None, port: int | None) -> None:
    """A worker plus its health server; readiness follows this worker's loop heartbeat."""
    from memory_worker.connections import resolve_url
    from memory_worker.serve import HealthServer
    from memory_worker.worker import MemoryWorker, run_worker

    url, embedded = resolve_url(settings)
    settings = settings.model_copy(update={"redis_url": url})
    workers: list[MemoryWorker] = []

    def heartbeat() -> int | None:
        pipeline = workers[0].ctx.get("pipeline") if workers else None
        return (pipeline.last_loop_ms or None) if pipeline is not None else None

    def tick_age() -> float | None:
        pipeline = workers[0].ctx.get("pipeline") if workers else None
        return pipeline.oldest_tick_age() if pipeline is not None else None

    server = HealthServer(
        settings, url, host=host, port=port, worker_heartbeat=heartbeat, worker_tick_age=tick_age
    )
    await server.start()
    try:
        await run_worker(settings, on_worker=workers.append)
    finally:
        await server.stop()
        if embedded is not None:
            embedded.stop()


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (MEMORY_SERVE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (MEMORY_SERVE_PORT).")] = None,
) -> None:
    """Serve /healthz, /readyz and /metrics (the fleet's state from Redis) until SIGTERM."""
    _run(_serve(get_settings(), host, port))


async def _serve(settings: Settings, host: str | None, port: int | None) -> None:
    from memory_worker.connections import resolve_url
    from memory_worker.sentry import init_sentry
    from memory_worker.serve import serve_forever

    init_sentry(settings)
    url, embedded = resolve_url(settings)
    update: dict[str, Any] = {}
    if host is not None:
        update["serve_host"] = host
    if port is not None:
        update["serve_port"] = port
    try:
        await serve_forever(settings.model_copy(update=update), url)
    finally:
        if embedded is not None:
            embedded.stop()


# --- enqueue ------------------------------------------------------------------------------------


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
        data = Path(path).read_bytes()
    except OSError as exc:
        raise _fail(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    return _decode(data, path)


def _read_stdin() -> str:
    return _decode(sys.stdin.buffer.read(), "stdin")


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _fail(
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

    found = _run(with_redis(get_settings(), action))  # RunNotFound: one line, exit 2
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


# --- replay -------------------------------------------------------------------------------------


@app.command()
def replay(
    since: Annotated[
        str | None,
        typer.Option(
            help="Only runs that failed at or after this time (ISO 8601, or 6h / 2d ago)."
        ),
    ] = None,
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
    chat: Annotated[int | None, typer.Option(help="Only this chat id.")] = None,
    prompt_version: Annotated[
        str | None, typer.Option("--prompt-version", help="Only this prompt version.")
    ] = None,
    status: Annotated[
        str,
        typer.Option(
            help="retired (attempts exhausted; the default) or failed (every failed run, "
            "retired or still waiting for its backoff)."
        ),
    ] = "retired",
    rate: Annotated[
        str | None,
        typer.Option(
            help="Stagger availability to a drain rate (14/min, 2/s, 500/h) so fresh runs "
            "are not starved. Default: all claimable at once."
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change; write nothing.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Give retired (or failed) runs a fresh set of attempts, keeping their error log.

    Replayed runs stay failed with attempts 0 and wait in the retry bucket.
    They never count against MEMORY_MAX_QUEUED_RUNS.
    Repeating a replay is a no-op.
    """
    from memory_worker.replay import ReplayFilter, ReplayScope, parse_rate, parse_when

    now = datetime.now(UTC)
    if status not in {s.value for s in ReplayScope}:
        raise _fail(f"--status must be retired or failed, not {status!r}")
    try:
        per_second = parse_rate(rate) if rate else None
        since_dt = parse_when(since, now=now) if since else None
        until_dt = parse_when(until, now=now) if until else None
    except ValueError as exc:
        raise _fail(str(exc)) from None
    wanted = ReplayFilter(
        scope=ReplayScope(status),
        since_ms=None if since_dt is None else int(since_dt.timestamp() * 1000),
        until_ms=None if until_dt is None else int(until_dt.timestamp() * 1000),
        error_code=error_code,
        reason=reason,
        chat_id=chat,
        prompt_version=prompt_version,
    )
    settings = get_settings()

    async def action(handle: RedisHandle) -> int:
        from memory_worker.api import MemoryQueue
        from memory_worker.replay import ReplayStore, plan_json

        store = ReplayStore(handle.client, settings)
        plan = await store.plan(
            wanted, now_ms=int(now.timestamp() * 1000), rate_per_second=per_second
        )
        if dry_run or not plan.items:
            if as_json:
                sys.stdout.write(plan_json(plan, None, dry_run=dry_run).decode() + "\n")
            else:
                _print_replay_plan(plan, dry_run=dry_run, console=out)
            return 0
        if not yes:
            _print_replay_plan(plan, dry_run=True, console=err, rows=10)
            if not typer.confirm(f"Replay {len(plan.items)} run(s)?", err=True):
                err.print("aborted: nothing was changed")
                return 1
        outcome = await _apply_with_progress(store, plan)
        await MemoryQueue(handle, settings).wake()
        if as_json:
            sys.stdout.write(plan_json(plan, outcome, dry_run=False).decode() + "\n")
        else:
            _print_replay_summary(plan, outcome)
        return 0

    code = _run(with_redis(settings, action))
    if code:
        raise typer.Exit(code)


def _print_replay_plan(
    plan: ReplayPlan, *, dry_run: bool, console: Console, rows: int = 20
) -> None:
    n = len(plan.items)
    if not n:
        console.print("No runs match: nothing to replay.")
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
            _ms_text(item.failed_at_ms),
            _ms_text(item.available_at_ms),
        )
    console.print(table)
    if n > rows:
        console.print(f"… and {n - rows} more (--json lists them all)")


def _print_availability(plan: ReplayPlan, console: Console) -> None:
    if plan.rate_per_second is None or plan.last_available_ms is None:
        console.print("All become claimable at once (no --rate).")
        return
    minutes = (plan.last_available_ms - plan.now_ms) / 60_000
    console.print(
        f"Staggered at {plan.rate_per_second * 60:g}/min: the last one becomes claimable "
        f"at {_ms_text(plan.last_available_ms)} UTC (in ~{minutes:.1f} min).",
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
    for code, count in plan.by_code.items():
        table.add_row(f"  last failure {code}", str(count))
    out.print(table)
    _print_availability(plan, out)
    out.print("Pipeline woken. Follow it with `memory-worker runs list --status failed`.")


def _ms_text(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


# --- breakers -----------------------------------------------------------------------------------


@breakers_app.command("list")
def breakers_list(as_json: JsonFlag = False) -> None:
    """Every configured or stored breaker: state, failures, trips, cooldown."""
    from memory_worker.metrics import fleet_breakers, route_target_ids

    settings = get_settings()
    targets = route_target_ids(settings, strict=True)  # a broken routes file is an error

    async def action(handle: RedisHandle) -> list[BreakerView]:
        return await fleet_breakers(handle.client, settings).list(targets)

    views = _run(with_redis(settings, action))
    if as_json:
        _print_json([v.as_dict() for v in views])
        return
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
    )
    for v in views:
        state = v.circuit.value
        table.add_row(
            v.target,
            f"[{colour.get(state, 'white')}]{state}[/]",
            str(v.consecutive_failures),
            str(v.trips),
            _ms_text(v.opened_at_ms),
            f"{v.cooldown_remaining_s:.0f}s",
            "yes" if v.probe_in_flight else "-",
            f"{v.window_failures}/{v.window_calls}",
        )
    out.print(table)


@breakers_app.command("reset")
def breakers_reset(
    target: Annotated[str, typer.Argument(help="Target id provider/model (see breakers list).")],
    force: Annotated[
        bool, typer.Option("--force", help="Reset even a target no route or state knows.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Close a breaker now: counters cleared, outstanding probe permits made stale."""
    from memory_worker.metrics import fleet_breakers, route_target_ids

    settings = get_settings()
    targets = route_target_ids(settings, strict=True)

    async def action(handle: RedisHandle) -> BreakerView:
        store = fleet_breakers(handle.client, settings)
        known = set(targets) | set(await store.known_targets())
        if target not in known and not force:
            names = ", ".join(sorted(known)) or "none"
            raise _fail(f"unknown target {target!r} (known: {names}); --force resets it anyway")
        return await store.reset(target)

    view = _run(with_redis(settings, action))
    if as_json:
        _print_json(view.as_dict())
        return
    out.print(f"breaker [bold]{view.target}[/bold] reset: {view.circuit.value}", highlight=False)


# --- report -------------------------------------------------------------------------------------


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
    settings = get_settings()

    async def action(handle: RedisHandle) -> dict[str, Any]:
        return await report_data(
            handle.client, settings, limit=limit, types=event_type, workflow=workflow
        )

    data = _run(with_redis(settings, action))
    if as_json:
        _print_json(data)
        return
    print_report(data, out)


async def report_data(
    redis: ArqRedis,
    settings: Settings,
    *,
    limit: int = 50,
    types: list[str] | None = None,
    workflow: str | None = None,
) -> dict[str, Any]:
    """The ``report`` document: events (newest first) plus the fleet's current state."""
    from llm_client.events import RedisEventLog
    from memory_worker.keys import Keys
    from memory_worker.metrics import fleet_breakers, read_sample, route_target_ids

    events = await RedisEventLog(redis, Keys(settings.key_prefix)).recent(
        limit=limit, types=types, workflow=workflow
    )
    sample = await read_sample(
        redis,
        settings,
        breakers=fleet_breakers(redis, settings),
        targets=route_target_ids(settings),
    )
    deferred = sample.deferred_since_s
    return {
        "events": [e.as_dict() for e in events],
        "pages": dict(sample.admin_pages),
        "pages_pending": sample.admin_outbox,
        "breakers": [v.as_dict() for v in sample.breakers],
        "runs": dict(sample.runs),
        "ticks": {
            "pending": sample.ticks.pending,
            "delayed": sample.ticks.delayed,
            "running": sample.ticks.running,
        },
        "pipeline_deferred_since": None
        if deferred is None
        else datetime.fromtimestamp(deferred, tz=UTC).isoformat(),
    }


def print_report(data: dict[str, Any], console: Console) -> None:
    """The ``report`` document as tables (also used by the demo)."""
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
            _ms_text(e["at_ms"]),
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


# --- demo ---------------------------------------------------------------------------------------


@app.command()
def demo(
    fast: Annotated[bool, typer.Option("--fast", help="Shorten every interval (CI).")] = False,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Where the demo's embedded Valkey keeps its data (default var/demo)."),
    ] = None,
) -> None:
    """The walkthrough: extraction, a farm outage, recovery (embedded Valkey + farm simulator)."""
    from memory_worker.demo import run_demo

    code = _run(run_demo(get_settings(), fast=fast, data_dir=data_dir))
    raise typer.Exit(code)


# --- config -------------------------------------------------------------------------------------

CONFIG_START = "<!-- config-table:start (generated: memory-worker config --markdown) -->"
CONFIG_END = "<!-- config-table:end -->"


@app.command("config")
def config_cmd(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the README table.")] = False,
    update_readme: Annotated[
        Path | None,
        typer.Option("--update-readme", help="Rewrite the table between this README's markers."),
    ] = None,
) -> None:
    """Every setting with its environment variable, default and meaning."""
    if update_readme is not None:
        text = update_readme.read_text(encoding="utf-8")
        update_readme.write_text(replace_config_table(text), encoding="utf-8")
        return
    if markdown:
        sys.stdout.write(config_markdown())
        return
    table = Table("variable", "default", "meaning")
    for row in config_rows():
        table.add_row(*row)
    out.print(table)


def config_rows() -> list[tuple[str, str, str]]:
    """(environment variable, default, meaning) of every setting, in model order."""
    from memory_worker.settings import env_name

    rows = []
    for name, info in Settings.model_fields.items():
        default = info.get_default(call_default_factory=True)
        shown = "" if default is None else str(default)
        rows.append((env_name(name), shown, info.description or ""))
    return rows


def config_markdown() -> str:
    """The README's configuration table, generated from the settings model."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    lines += [
        f"| `{var}` | {f'`{default}`' if default else '*unset*'} | {desc} |"
        for var, default, desc in config_rows()
    ]
    return "\n".join(lines) + "\n"


def replace_config_table(readme: str) -> str:
    """``readme`` with a freshly generated table between the markers."""
    start = readme.index(CONFIG_START) + len(CONFIG_START)
    end = readme.index(CONFIG_END)
    return readme[:start] + "\n" + config_markdown() + readme[end:]


# --- failures -------------------------------------------------------------------------------


def _redis_where(settings: Settings) -> str:
    """Where Redis was sought, without credentials: ``host:port`` or "the embedded Valkey"."""
    from urllib.parse import urlsplit

    if not settings.redis_url:
        return "the embedded Valkey"
    try:
        parts = urlsplit(settings.redis_url)
        host = parts.hostname or parts.path or "?"
        return f"{host}:{parts.port}" if parts.port else host
    except ValueError:
        return "REDIS_URL"


def failure_message(exc: BaseException, settings: Settings | None = None) -> str:
    """The one line an operator sees for ``exc`` (most specific type first; no secrets)."""
    from redis import exceptions as r

    from llm_client.routes import RoutesError
    from memory_worker.connections import RedisUrlError
    from memory_worker.embedded import EmbeddedValkeyError
    from memory_worker.sentry import redact

    where = _redis_where(settings) if settings is not None else "Redis"
    message: str
    if isinstance(exc, InvalidRunRequest):
        n = len(exc.problems)
        message = f"{n} problem{'s' if n != 1 else ''} in the run requests, nothing was stored: "
        message += "; ".join(exc.problems)
    elif isinstance(exc, RoutesError | MemoryWorkerError | RedisUrlError | EmbeddedValkeyError):
        message = str(exc)
    elif isinstance(exc, r.AuthenticationError | r.AuthorizationError):
        message = f"Redis at {where} refused the credentials in REDIS_URL (wrong user or password)"
    elif isinstance(exc, r.NoPermissionError):
        message = f"Redis at {where} refused a command for this user (NOPERM): {exc}"
    elif isinstance(exc, r.OutOfMemoryError):
        message = (
            f"Redis at {where} is out of memory (OOM: maxmemory reached); the command was "
            "not applied — free memory or raise maxmemory, then retry"
        )
    elif isinstance(exc, r.ReadOnlyError):
        message = f"Redis at {where} is a read-only replica (failover in progress?): {exc}"
    elif isinstance(exc, r.TimeoutError):
        message = f"Redis at {where} did not answer in time"
    elif isinstance(exc, r.ConnectionError):
        message = f"cannot reach Redis at {where}: {exc}"
    elif isinstance(exc, r.RedisError):
        message = f"Redis at {where} answered an error: {type(exc).__name__}: {exc}"
    elif isinstance(exc, OSError):
        message = f"{exc.strerror or type(exc).__name__}: {exc.filename or ''}".rstrip(": ")
    else:
        message = f"unexpected {type(exc).__name__}: {exc} (MEMORY_LOG_LEVEL=debug logs the trace)"
    return redact(message)


def main() -> None:
    try:
        app()
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        import structlog

        structlog.get_logger(__name__).debug("cli_failed", exc_info=True)
        try:
            settings: Settings | None = get_settings()
        except Exception:
            settings = None
        _error_line(failure_message(exc, settings))
        sys.exit(EXIT_FAILURE)
