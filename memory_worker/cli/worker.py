"""``run [--serve]`` (a worker) and ``serve`` (health and metrics HTTP)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from memory_worker.cli.common import PORT, app, run_sync
from memory_worker.settings import Settings, get_settings

if TYPE_CHECKING:
    from memory_worker.worker.main import MemoryWorker
    from memory_worker.worker.watchdog import Liveness, Watchdog


@app.command()
def run(
    serve: Annotated[
        bool,
        typer.Option(
            "--serve",
            help="Also serve /healthz, /readyz (Redis + this worker's loop) and /metrics "
            "(this process's own series: the fleet's come from `serve`; never the console).",
        ),
    ] = False,
    host: Annotated[str | None, typer.Option(help="Bind address (MEMORY_SERVE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(**PORT, help="Port (MEMORY_SERVE_PORT).")] = None,
) -> None:
    """Run a worker until SIGTERM/SIGINT (same as `arq memory_worker.worker.WorkerSettings`)."""
    from memory_worker.wiring import check_run_routes, routing_routes
    from memory_worker.worker.process import run_worker

    settings = get_settings()
    # before Redis: a routes file that cannot work (a local model that cannot make
    # MEMORY_EMBEDDING_DIMENSION, a missing auth_env) is one line now, not a worker
    # waiting for Redis and failing only once it answers
    # and one without memory_extraction would release every run forever: refused too
    check_run_routes(routing_routes(settings), settings.routes_file)
    if not serve:
        run_sync(run_worker(settings))
        return
    run_sync(_run_serving(settings, host, port))


async def _run_serving(settings: Settings, host: str | None, port: int | None) -> None:
    """A worker plus its health server; readiness follows this worker's loop heartbeat."""
    from memory_worker.pipeline.process_metrics import process_metrics
    from memory_worker.server import HealthServer
    from memory_worker.storage.connections import resolve_url
    from memory_worker.worker.process import run_worker

    url, embedded = resolve_url(settings)
    settings = settings.model_copy(update={"redis_url": url})
    workers: list[MemoryWorker] = []

    # the latest worker: run_worker makes a new one each time Redis was away at its start
    def heartbeat() -> int | None:
        runner = workers[-1].ctx.get("runner") if workers else None
        return (runner.last_loop_ms or None) if runner is not None else None

    def tick_age() -> float | None:
        runner = workers[-1].ctx.get("runner") if workers else None
        return runner.oldest_tick_age() if runner is not None else None

    def writes_refused() -> list[str]:
        runner = workers[-1].ctx.get("runner") if workers else None
        return runner.writes_refused() if runner is not None else []

    def liveness() -> Liveness | None:
        watchdog: Watchdog | None = workers[-1].ctx.get("watchdog") if workers else None
        return watchdog.verdict() if watchdog is not None else None

    server = HealthServer(
        settings,
        url,
        host=host,
        port=port,
        worker_heartbeat=heartbeat,
        worker_tick_age=tick_age,
        worker_writes_refused=writes_refused,
        worker_liveness=liveness,
        console=False,  # a worker's probe port may face the network: no chat data on it
        # its own series (named by host and MEMORY_WORKER_SLOT); the fleet's come from `serve`
        process_metrics=process_metrics(settings.worker_slot),
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
    port: Annotated[int | None, typer.Option(**PORT, help="Port (MEMORY_SERVE_PORT).")] = None,
    metrics_only: Annotated[
        bool,
        typer.Option("--metrics-only", help="Serve /metrics, /healthz, /readyz only: no console."),
    ] = False,
) -> None:
    """Serve /healthz, /readyz, /metrics (the fleet's state from Redis) and the console at /
    until SIGTERM. Off loopback the console needs MEMORY_CONSOLE_TOKEN or
    MEMORY_CONSOLE_READ_TOKEN (else it refuses to start); --metrics-only leaves it out."""
    run_sync(_serve(get_settings(), host, port, console=not metrics_only))


async def _serve(
    settings: Settings, host: str | None, port: int | None, *, console: bool = True
) -> None:
    from memory_worker.console.auth import exposure_problem
    from memory_worker.errors import ConsoleExposedError
    from memory_worker.ops.sentry import init_sentry
    from memory_worker.server import serve_forever
    from memory_worker.storage.connections import resolve_url

    update: dict[str, Any] = {}
    if host is not None:
        update["serve_host"] = host
    if port is not None:
        update["serve_port"] = port
    settings = settings.model_copy(update=update)
    problem = exposure_problem(
        settings.serve_host, settings.console_token, settings.console_read_token
    )
    if console and problem is not None:  # before Redis, the embedded server or any socket
        raise ConsoleExposedError(problem)
    init_sentry(settings)
    url, embedded = resolve_url(settings)
    try:
        await serve_forever(settings, url, console=console)
    finally:
        if embedded is not None:
            embedded.stop()
