"""The composition root: every store, event log, walker and runner built from the settings.

::

    routes (config/routes.toml or defaults) ──▶ Walker ──▶ ClientFactory ──▶ Discovery / OpenAI / local
         breakers (Redis, fleet-shared) ──────┘   │
                                                  └─▶ events: Redis stream, admin outbox, attempt metrics
    claimed run ──▶ ConsolidationProcessor ──▶ consolidate_run ──▶ CardStore (one atomic write per run)

This module only assembles: the behaviour it wires lives with its concept
(:mod:`~memory_worker.consolidation.routed`, :mod:`~memory_worker.pipeline.gate`,
:mod:`~memory_worker.upkeep.maintenance`, :mod:`~memory_worker.paging.reports`).

Every store and event log has one factory here — :func:`run_store`, :func:`tick_queue`,
:func:`replay_store`, :func:`card_store` (the worker's), :func:`bot_card_store` and
:func:`card_store_on`, :func:`forgetter`, :func:`breaker_store`, :func:`event_log` — each
reading every setting its store needs, so that no call site can build one without a setting
(``tests/test_structure.py`` fails on a store built anywhere else in the package).

One walker factory, :func:`build_routing`, serves both sides: the worker's
pipeline and the bot's ``MemoryQueue.recall`` get the same walker from the same
settings — the same breakers and permit leases, the same routing-event stream,
attempt metrics and admin outbox. The bot side only *queues* pages: the outbox is
fleet-wide and the workers' reporters deliver it, so a bot process never sends a
page itself and an outage seen by recall is deduplicated with the workers' pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from redis.asyncio import Redis

from llm_client import (
    EMBEDDING,
    MEMORY_EXTRACTION,
    AttemptCounter,
    BreakerStore,
    BreakerView,
    ClientFactory,
    Fanout,
    OutlierStore,
    RedisEventLog,
    RoutesConfig,
    TransportFactory,
    Walker,
    WalkerConfig,
    WalkObserver,
    load_routes,
    success_counter,
)
from memory_worker.cards import CardStore
from memory_worker.cards.withdrawn import Thresholds
from memory_worker.errors import RoutesIncomplete
from memory_worker.keys import Keys
from memory_worker.paging.notifiers import notifiers_from_settings
from memory_worker.paging.reports import (
    AdminReporter,
    PagedLog,
    pinned_reporter,
    retired_reporter,
    route_breakers,
    route_open_workflows,
)
from memory_worker.pipeline.ticks import TickQueue
from memory_worker.runs import RunStore
from memory_worker.runs.replay import ReplayStore
from memory_worker.settings import Settings
from memory_worker.storage.connections import CardsRedis, cards_client, close_cards_client
from memory_worker.upkeep.forgetter import Forgetter
from memory_worker.upkeep.run_actions import RunActions

if TYPE_CHECKING:
    from memory_worker.pipeline.runner import TickRunner


@dataclass
class Routing:
    """A routed walker and what it reports through: one per process side (worker or bot)."""

    walker: Walker
    reporter: AdminReporter
    attempts: AttemptCounter
    events: Fanout
    http: httpx.AsyncClient

    async def aclose(self) -> None:
        """Close the farm clients this routing opened (not the Redis client it was given)."""
        if isinstance(self.walker.transports, ClientFactory):
            await self.walker.transports.aclose()
        await self.http.aclose()


# --- stores and event logs: built here only, each from every setting it reads ---------------


def run_store(redis: Redis, settings: Settings) -> RunStore:
    """The run store: runs, their indexes and counters (§7)."""
    return RunStore(redis, settings)


def tick_queue(redis: Redis, settings: Settings) -> TickQueue:
    """The tick queue: pending and running tick jobs, the pipeline's state (§8)."""
    return TickQueue(redis, Keys(settings.key_prefix))


def replay_store(redis: Redis, settings: Settings, runs: RunStore | None = None) -> ReplayStore:
    """Replay's candidates and their atomic apply, over ``runs`` (a new run store if None)."""
    return ReplayStore(redis, settings, runs if runs is not None else run_store(redis, settings))


def card_store_on(cards_redis: CardsRedis, settings: Settings) -> CardStore:
    """A card store on a card client the caller holds (the console's, the bot's): the
    settings' withdrawal thresholds (§10), no replica wait (only a worker's run waits)."""
    return CardStore(
        cards_redis,
        Keys(settings.key_prefix),
        thresholds=Thresholds.from_settings(settings),
        history_max=settings.card_history_max_events,
    )


def bot_card_store(settings: Settings, redis: Redis) -> CardStore:
    """The bot's card store: on ``MEMORY_CARDS_URL`` (e.g. a cluster), else ``redis``."""
    return card_store_on(cards_client(settings, redis), settings)


def forgetter(redis: Redis, settings: Settings, cards_redis: CardsRedis) -> Forgetter:
    """The steps of one forget over the run store on ``redis`` and the cards on
    ``cards_redis`` (§14)."""
    return Forgetter(redis, settings, cards_redis=cards_redis)


def run_actions(redis: Redis, settings: Settings, cards_redis: CardsRedis) -> RunActions:
    """Cancel or replay one run by id (§13): the run store on ``redis``, the card store on
    ``cards_redis`` (where the cancelled run's card write is refused)."""
    runs = run_store(redis, settings)
    return RunActions(
        runs, card_store_on(cards_redis, settings), replay_store(redis, settings, runs)
    )


def breaker_store(redis: Redis, settings: Settings) -> BreakerStore:
    """The fleet's breakers: the policy, the gateway's caps and cooling, and a routed
    success counted in the attempt metrics with its breaker record (§5, §11)."""
    keys = Keys(settings.key_prefix)
    return BreakerStore(
        redis,
        keys,
        settings.breaker_config(),
        success_counter=success_counter(keys),
        gateway=settings.gateway_config(),
    )


def outlier_store(redis: Redis, settings: Settings) -> OutlierStore:
    """The fleet's outlier counts and ejections by error rate (§5)."""
    return OutlierStore(redis, Keys(settings.key_prefix), settings.ejection_config())


async def reset_target(redis: Redis, settings: Settings, target: str) -> BreakerView:
    """An operator's reset (CLI ``breakers reset``, the console): the target's breaker
    closed and clean, and its ejection and error counts forgotten (§5)."""
    await outlier_store(redis, settings).reset(target)
    return await breaker_store(redis, settings).reset(target)


def event_log(redis: Redis, settings: Settings) -> RedisEventLog:
    """The routing-event stream, trimmed at ``MEMORY_ROUTING_EVENTS_MAXLEN`` by every
    writer — the walkers' events and the console's audit events alike."""
    return RedisEventLog(redis, Keys(settings.key_prefix), maxlen=settings.routing_events_maxlen)


# --- walkers -----------------------------------------------------------------------------------


def walker_config(settings: Settings) -> WalkerConfig:
    """The walker's own knobs, from the settings (probe interval, permit lease, gateway)."""
    return WalkerConfig(
        probe_interval_seconds=settings.consolidation_backend_retry_interval,
        permit_lease_seconds=settings.breaker_permit_lease_seconds,
        gateway=settings.gateway_config(),
    )


def build_routing(
    settings: Settings,
    redis: Redis,
    *,
    transports: TransportFactory | None = None,
    require_secrets: bool = True,
    observer: WalkObserver | None = None,
) -> Routing:
    """The routed walker with fleet-shared breakers, routing events, attempt metrics and
    the admin outbox. ``transports`` replaces the real farm clients (benchmarks, tests);
    ``require_secrets=False`` lets a process without every provider's token (the bot)
    load the routes — a target whose token is missing fails its own calls; ``observer``
    receives the walker's durations (the worker's histograms)."""
    keys = Keys(settings.key_prefix)
    http = httpx.AsyncClient(timeout=httpx.Timeout(settings.request_timeout_seconds))
    routes = load_routes(
        settings.routes_file, settings.route_defaults(), require_secrets=require_secrets
    )
    breakers = breaker_store(redis, settings)
    reporter = AdminReporter.from_settings(
        settings,
        redis,
        keys,
        notifiers_from_settings(settings, http),
        breakers=route_breakers(routes, breakers),
        waiting_runs=run_store(redis, settings).waiting,
        open_routes=route_open_workflows(routes, breakers),
    )
    attempts = AttemptCounter(redis, keys)
    events = Fanout(PagedLog(event_log(redis, settings), reporter), attempts)
    walker = Walker(
        routes,
        breakers,
        events,
        transports or farm_clients(settings, http),
        walker_config(settings),
        observer=observer,
        outliers=outlier_store(redis, settings),
    )
    return Routing(walker, reporter, attempts, events, http)


#: The workflows a run cannot do without: a worker without a route for one does no work.
RUN_WORKFLOWS = (MEMORY_EXTRACTION,)


def check_run_routes(routes: RoutesConfig, source: Path | str | None) -> None:
    """Refuse routes on which no run can complete (:class:`RoutesIncomplete`, one line).

    A routes file is authoritative, so one that lists only ``embedding`` (a recall-only
    snippet used as the whole file) turns extraction off: every run would be released
    forever, quietly. A worker refuses that at start; the bot's library, which may only
    recall, does not check."""
    missing = [
        wf for wf in RUN_WORKFLOWS if wf not in routes.routes or not routes.routes[wf].eligible
    ]
    if missing:
        where = source or "the default routes"
        raise RoutesIncomplete(
            f"{where} has no enabled {' or '.join(missing)} route: every run would be "
            "released forever; add one (see config/routes.toml, or `memory-worker "
            "init-config`)"
        )


async def build_tick_runner(
    settings: Settings, redis: Redis, *, transports: TransportFactory | None = None
) -> TickRunner:
    """The production pipeline: routed, breaker-guarded consolidation with admin reports.

    ``transports`` replaces the real farm clients (benchmarks use an instant farm). The
    worker's parts are imported here, not with this module: the bot builds its stores and
    its recall walker through the root without loading the worker's pipeline.
    """
    from memory_worker.consolidation.routed import ConsolidationProcessor, RoutedModels
    from memory_worker.pipeline.gate import WalkerGate
    from memory_worker.pipeline.process_metrics import process_metrics
    from memory_worker.pipeline.runner import TickRunner
    from memory_worker.upkeep.maintenance import Maintenance

    keys = Keys(settings.key_prefix)
    check_run_routes(routing_routes(settings), settings.routes_file)
    cards = await card_store(settings, redis, keys)  # first: nothing else to close if it fails
    metrics = process_metrics(
        settings.worker_slot
    )  # this process's series, its walker's farm calls included
    routing = build_routing(settings, redis, transports=transports, observer=metrics)
    models = RoutedModels(routing.walker, routing.attempts, settings)
    gated = [MEMORY_EXTRACTION] + ([EMBEDDING] if models.has_embedding_route else [])
    runs = run_store(redis, settings)
    return TickRunner(
        settings=settings,
        redis=redis,
        store=runs,
        ticks=tick_queue(redis, settings),
        processor=ConsolidationProcessor(models, cards, settings, runs),
        gate=WalkerGate(routing.walker, gated, reuse_seconds=settings.route_gate_reuse_seconds),
        on_retired=retired_reporter(routing.events),
        on_pinned=pinned_reporter(routing.events),
        background=[routing.reporter.run],
        maintenance=Maintenance(
            redis, keys, cards, models, settings, replay=replay_store(redis, settings, runs)
        ),
        closers=[routing.aclose, partial(close_cards_client, cards.redis, redis)],
        metrics=metrics,
    )


def routing_routes(settings: Settings) -> RoutesConfig:
    """The configured routes as a worker loads them (secrets required)."""
    return load_routes(settings.routes_file, settings.route_defaults())


def farm_clients(settings: Settings, http: httpx.AsyncClient | None = None) -> ClientFactory:
    """The real farm clients (chat and embedding over ``http``, local embedding threads)."""
    return ClientFactory(
        settings.client_config(),
        embed_config=settings.client_config(workflow=EMBEDDING),
        http=http,
        local_concurrency=settings.local_embed_concurrency,
        local_threads=settings.local_embed_threads,
    )


async def card_store(settings: Settings, redis: Redis, keys: Keys) -> CardStore:
    """The worker's card store: on ``MEMORY_CARDS_URL`` (a cluster) or the queue's server,
    checked like the queue's (§2: no eviction, scripts allowed), writes replicated to
    one replica before a run completes when the card server has replicas."""
    from memory_worker.cards.replication import replicas_present
    from memory_worker.storage.checks import check_cards_redis

    cards_redis = cards_client(settings, redis)
    try:
        await check_cards_redis(cards_redis, redis)
        replicas = settings.cards_wait_replicas
        if replicas is None:
            replicas = 1 if await replicas_present(cards_redis) else 0
    except BaseException:  # e.g. the cluster mid-failover at start: the worker starts again
        await close_cards_client(cards_redis, redis)
        raise
    return CardStore(
        cards_redis,
        keys,
        wait_replicas=replicas,
        wait_timeout_ms=settings.cards_wait_timeout_ms,
        thresholds=Thresholds.from_settings(settings),
        history_max=settings.card_history_max_events,
    )
