"""``run [--serve]`` (a worker) and ``serve`` (health and metrics HTTP)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from memory_worker.cli.common import app, run_sync
from memory_worker.settings import Settings, get_settings

if TYPE_CHECKING:
    from memory_worker.worker import MemoryWorker


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
    from llm_client import load_routes
    from memory_worker.worker import run_worker

    settings = get_settings()
    # before Redis: a routes file that cannot work (a local model that cannot make
    # MEMORY_EMBEDDING_DIMENSION, a missing auth_env) is one line now, not a worker
    # waiting for Redis and failing only once it answers
    load_routes(settings.routes_file, settings.route_defaults())
    if not serve:
        run_sync(run_worker(settings))
        return
    run_sync(_run_serving(settings, host, port))


async def _run_serving(settings: Settings, host: str | None, port: int | None) -> None:
    """A worker plus its health server; readiness follows this worker's loop heartbeat."""
    from memory_worker.connections import resolve_url
    from memory_worker.serve import HealthServer
    from memory_worker.worker import run_worker

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
    run_sync(_serve(get_settings(), host, port))


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
