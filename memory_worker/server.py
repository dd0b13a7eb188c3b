"""The health and metrics HTTP server (§11): ``/healthz``, ``/readyz``, ``/metrics``,
and the operator console at ``/`` (§15, :mod:`memory_worker.console`).

``memory-worker serve`` runs it standalone (readiness = Redis reachable; metrics = the
fleet's state from Redis), with the console unless ``--metrics-only`` (the Procfile's
``metrics`` process: the three endpoints on the network, no console, so Prometheus never
puts chats' memory on the network). ``memory-worker run --serve`` runs the three endpoints
next to a worker, never the console, and readiness also requires the worker loop's
heartbeat to be fresh.

Who exports which series (§11): ``serve`` alone exports the fleet's series (sampled from
Redis: runs, counters, breakers, routes, pages, the stores' health); ``run --serve``
exports only its own process's (:mod:`memory_worker.pipeline.process_metrics`, labelled
``worker``: slots, ticks, runs, claims, farm calls and capacity waits), so summing a
family over every endpoint counts each thing once. Both export
``memory_worker_build_info`` and the standard ``process_*`` series. Off loopback the console needs a token
(:mod:`memory_worker.console.auth`) and will not start without one.

The server is aiohttp on the caller's loop (:class:`HealthServer` start/stop),
with its own Redis client whose timeouts are short, so a hanging Redis makes
``/readyz`` answer 503 promptly instead of hanging the probe.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector
from redis.asyncio import Redis

from memory_worker.logs import get_logger
from memory_worker.ops.health import HealthCheck, Heartbeat, TickAge, WritesRefused
from memory_worker.ops.metrics import (
    MemoryCollector,
    Sample,
    redis_sampler,
    route_target_ids,
)
from memory_worker.pipeline.process_metrics import BuildInfoCollector
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.health import StoreCollector, StoreHealth, StoreProbe
from memory_worker.storage.sampling import Sampler
from memory_worker.wiring import breaker_store
from memory_worker.worker.watchdog import PINNED, Liveness

log = get_logger(__name__)

_STARTED = web.AppKey("started", float)

#: This process's worker's watchdog verdict (None: no worker, or not started yet).
LivenessCheck = Callable[[], Liveness | None]


def health_client(url: str) -> Redis:
    """A Redis client for probes: fail fast rather than wait on a dead server."""
    return client_from_url(url, socket_connect_timeout=1.0, socket_timeout=1.5)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=orjson.dumps(data), status=status, content_type="application/json", charset="utf-8"
    )


def metrics_registry(
    settings: Settings,
    *,
    sampler: Sampler[Sample] | None = None,
    stores: StoreHealth | None = None,
    process: Collector | None = None,
) -> CollectorRegistry:
    """What one endpoint's ``/metrics`` exports: the fleet's series (``sampler``, ``stores``:
    ``serve``) or this process's (``process``: ``run --serve``), never both; plus the
    build and the standard process series."""
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)
    registry.register(BuildInfoCollector(settings))
    if sampler is not None:
        registry.register(MemoryCollector(sampler))
    if stores is not None:
        registry.register(StoreCollector(stores))
    if process is not None:
        registry.register(process)
    return registry


def build_app(
    check: HealthCheck,
    sampler: Sampler[Sample] | None,
    *,
    registry: CollectorRegistry,
    stores: StoreHealth | None = None,
    liveness: LivenessCheck | None = None,
) -> web.Application:
    """The aiohttp application answering the three endpoints (``registry``: what
    ``/metrics`` exports, see :func:`metrics_registry`; ``sampler`` and ``stores`` are
    refreshed before a scrape; ``liveness``: this process's worker's watchdog verdict; a
    wedged or pinned worker answers ``/healthz`` 503, one its restart guard keeps up 200
    with the reason and counts)."""
    loop = asyncio.get_running_loop()
    app = web.Application()
    app[_STARTED] = loop.time()

    async def healthz(request: web.Request) -> web.Response:
        uptime = asyncio.get_running_loop().time() - request.app[_STARTED]
        body: dict[str, Any] = {"status": "alive", "pid": os.getpid(), "uptime_s": round(uptime, 3)}
        verdict = liveness() if liveness is not None else None
        if verdict is None or verdict.reason is None:
            return _json(body)
        if verdict.detail:  # a pinned worker's counts over its window
            body.update(dict(verdict.detail))
        if verdict.wedged:  # §11: 503 before the worker exits (wedged, or pinned)
            status = "pinned" if verdict.reason == PINNED else "wedged"
            body.update(status=status, reason=verdict.reason, stalled_s=round(verdict.stalled_s, 1))
            return _json(body, 503)
        body.update(reason=verdict.reason)  # pinned, kept up by its restart guard: paged
        return _json(body)

    async def readyz(_: web.Request) -> web.Response:
        ready, body = await check.ready()
        return _json(body, 200 if ready else 503)

    async def metrics(_: web.Request) -> web.Response:
        if sampler is not None:
            await sampler.refresh()
        if stores is not None:
            await stores.sampler.refresh()
        return web.Response(
            body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    return app


class HealthServer:
    """The endpoints on ``host:port`` (port 0 = any free port, see :attr:`port`)."""

    def __init__(
        self,
        settings: Settings,
        url: str,
        *,
        worker_heartbeat: Heartbeat | None = None,
        worker_tick_age: TickAge | None = None,
        worker_writes_refused: WritesRefused | None = None,
        worker_liveness: LivenessCheck | None = None,
        host: str | None = None,
        port: int | None = None,
        console: bool = True,
        process_metrics: Collector | None = None,
    ) -> None:
        self.settings = settings
        self.console = console
        #: ``run --serve``: this worker process's series, exported instead of the fleet's.
        self.process_metrics = process_metrics
        self.url = url
        self.host = host if host is not None else settings.serve_host
        self.port = port if port is not None else settings.serve_port
        self.worker_heartbeat = worker_heartbeat
        self.worker_tick_age = worker_tick_age
        self.worker_writes_refused = worker_writes_refused
        self.worker_liveness = worker_liveness
        self._redis: Redis | None = None
        self._stores: StoreHealth | None = None
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        redis = self._redis = health_client(self.url)
        targets = route_target_ids(self.settings)
        stores = self._stores = StoreHealth(
            StoreProbe(redis, self.settings), min_interval=self.settings.metrics_cache_seconds
        )
        check = HealthCheck(
            redis,
            self.settings,
            worker_heartbeat=self._heartbeat if self.worker_heartbeat else None,
            worker_tick_age=self.worker_tick_age,
            worker_writes_refused=self.worker_writes_refused,
            breakers=breaker_store(redis, self.settings),
            targets=targets,
            stores=stores,
        )
        if self.process_metrics is not None:  # a worker's endpoint: its own series only
            sampler = None
            registry = metrics_registry(self.settings, process=self.process_metrics)
        else:  # the fleet's series, from Redis: this endpoint alone exports them
            sampler = redis_sampler(redis, self.settings)
            registry = metrics_registry(self.settings, sampler=sampler, stores=stores)
        app = build_app(
            check,
            sampler,
            registry=registry,
            stores=stores if sampler is not None else None,
            liveness=self.worker_liveness,
        )
        if self.console:  # the operator console (§15) at / on the same server
            from memory_worker.console import add_console

            try:
                add_console(app, redis, self.settings.model_copy(update={"serve_host": self.host}))
            except Exception:
                await self.stop()
                raise
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        log.info("health_server_started", host=self.host, port=self.port, console=self.console)

    def _heartbeat(self) -> int | None:
        return self.worker_heartbeat() if self.worker_heartbeat else None

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._stores is not None:
            await self._stores.probe.aclose()
            self._stores = None
        if self._redis is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()
            self._redis = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"


async def serve_forever(settings: Settings, url: str, *, console: bool = True) -> None:
    """``memory-worker serve``: run the endpoints (and the console) until SIGINT/SIGTERM."""
    server = HealthServer(settings, url, console=console)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # before the start: a SIGTERM right after "health_server_started" must stop it cleanly
    # (it killed the process outright when the handlers came after the start line)
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await server.start()
    try:
        await stop.wait()
    finally:
        await server.stop()
        log.info("health_server_stopped")
