"""Assembles a worker's :class:`TickRunner` from the settings (the composition root).

::

    routes (config/routes.toml or defaults) ──▶ Walker ──▶ ClientFactory ──▶ Discovery / OpenAI
         breakers (Redis, fleet-shared) ──────┘   │
                                                  └─▶ events: Redis stream, admin reporter, attempt metrics
    claimed run ──▶ ConsolidationProcessor ──▶ consolidate_run ──▶ CardStore (one atomic write per run)

Kept apart from ``worker.py`` so the arq glue stays free of transport,
routing and consolidation imports, and tests can build pipelines with their
own processors.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

import httpx
import structlog
from arq.connections import ArqRedis

from llm_client.breaker_store import BreakerStore
from llm_client.clients import ClientFactory, TransportFactory
from llm_client.events import EventType, Fanout, RedisEventLog, RoutingEvent
from llm_client.routes import EMBEDDING, MEMORY_EXTRACTION, MEMORY_MERGE, load_routes
from llm_client.routing import Walker
from llm_client.transport import ChatResult
from llm_client.walk import WalkerConfig
from memory_worker.cards import CardStore
from memory_worker.cards.replication import replicas_present
from memory_worker.connections import cards_client, close_cards_client
from memory_worker.consolidate import consolidate_run
from memory_worker.deadlines import deadline_after
from memory_worker.keys import Keys
from memory_worker.maintenance import (
    bound_growth,
    collapse_duplicates,
    expire_cards,
    merge_pass,
)
from memory_worker.metrics import AttemptCounter, success_counter
from memory_worker.model_calls import ChatCall, Embedder, Vectors
from memory_worker.notifiers import notifiers_from_settings
from memory_worker.processing import ProcessResult
from memory_worker.redis_checks import check_cards_redis
from memory_worker.reembed import Reembedder, reembed_pass, route_target
from memory_worker.reports import AdminReporter, route_breakers, route_open_workflows
from memory_worker.run_store import ClaimedRun, RunStore
from memory_worker.settings import Settings
from memory_worker.tick_runner import TickRunner
from memory_worker.ticks import TickOutcome

log = structlog.get_logger(__name__)


class RoutedModels:
    """The consolidation's chat call and embedder, served by the routed walker."""

    def __init__(self, walker: Walker, attempts: AttemptCounter, settings: Settings) -> None:
        self.walker = walker
        self.attempts = attempts
        self.settings = settings
        self.context: Mapping[str, str] = {}

    async def chat(
        self,
        request: Mapping[str, Any],
        *,
        workflow: str,
        idempotency_key: str,
        timeout: float | None,
    ) -> ChatResult:
        routed = await self.walker.chat(
            workflow,
            request,
            deadline=deadline_after(timeout),
            idempotency_key=idempotency_key,
            context=self.context,
        )
        if not routed.counted:
            await self._success(routed.target.id)
        return routed.value

    async def embed(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        return await self._embed(texts, idempotency_key=idempotency_key, timeout=timeout)

    async def lookup_embed(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        """An optional embedding (the related-card lookup): closed targets only, no probe."""
        return await self._embed(
            texts, idempotency_key=idempotency_key, timeout=timeout, probes=False
        )

    async def _embed(
        self,
        texts: Sequence[str],
        *,
        idempotency_key: str,
        timeout: float | None,
        probes: bool = True,
    ) -> list[list[float]]:
        # Cards, summaries and the related-card lookup's run text: passages (no task).
        routed = await self.walker.embed(
            EMBEDDING,
            texts,
            dimension=self.settings.embedding_dimension,
            deadline=deadline_after(timeout),
            idempotency_key=idempotency_key,
            context=self.context,
            probes=probes,
        )
        if not routed.counted:  # the breaker record counted it otherwise
            await self._success(routed.target.id)
        # §16: the vectors carry the model that made them (the card store never mixes two)
        return Vectors(routed.value.embeddings, model=routed.target.model)

    async def _success(self, target: str) -> None:
        try:  # metrics are bookkeeping: they never fail a run (§7 "Store faults")
            await self.attempts.record_success(target)
        except Exception as exc:
            self.walker.bookkeeping_failed("attempt_counter", exc, target=target)

    @property
    def has_embedding_route(self) -> bool:
        return self.walker.routes.get(EMBEDDING) is not None

    def extractor(self, context: Mapping[str, str]) -> ChatCall:
        scoped = RoutedModels(self.walker, self.attempts, self.settings)
        scoped.context = context
        return scoped.chat

    def embedder(self, context: Mapping[str, str]) -> Embedder | None:
        if not self.has_embedding_route:
            return None
        scoped = RoutedModels(self.walker, self.attempts, self.settings)
        scoped.context = context
        return scoped.embed

    def lookup_embedder(self, context: Mapping[str, str]) -> Embedder | None:
        """The related-card lookup's embedder: it never probes an open embedding route, so
        during an outage the run's extraction call is the one that probes (§6 rev 2)."""
        if not self.has_embedding_route:
            return None
        scoped = RoutedModels(self.walker, self.attempts, self.settings)
        scoped.context = context
        return scoped.lookup_embed


class ConsolidationProcessor:
    """A claimed run → consolidated memory (``consolidate_run``) through the walker."""

    def __init__(self, models: RoutedModels, cards: CardStore, settings: Settings) -> None:
        self.models = models
        self.cards = cards
        self.settings = settings

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        context = {"run_id": run.id, "chat_id": str(run.request.chat_id)}
        result = await consolidate_run(
            run.id,
            run.request,
            store=self.cards,
            extractor=self.models.extractor(context),
            embedder=self.models.embedder(context),
            lookup_embedder=self.models.lookup_embedder(context),
            settings=self.settings,
            deadline=deadline,
            attempt=run.attempts,
            forget_epoch=run.forget_epoch,
        )
        continuations = [result.continuation] if result.continuation is not None else []
        return ProcessResult(summary=result.summary(), continuations=continuations)


class WalkerGate:
    """The pre-claim gate: defer when a route the run needs is entirely breaker-open.

    One ``routes.open`` script reads every gated workflow's breakers (≈ 3 commands). At
    fleet rates one process's ticks ask many times a second and nearly always hear
    "passable", so a "not blocked" answer is reused for ``reuse_seconds``
    (``MEMORY_ROUTE_GATE_REUSE_SECONDS``, 0 = always read). A "blocked" answer is never
    reused, and the reused one is dropped as soon as this process learns anything that
    could mean a route opened: a tick that did not complete (deferred, released for an
    outage, failed, abandoned, idle, a store error), breaker news from this process's
    walker (:attr:`Walker.breaker_news`: a transition, an all-open walk, a fail-open
    probe), a gate read that failed or said "blocked". A read that began before such news
    does not store its answer.

    What a stale "passable" costs: the tick claims, and its walk finds the route open —
    ``circuit_open_exhaustion`` (its page is deduplicated fleet-wide), then either the
    route's fail-open probe, which the fleet gets at most once per probe interval however
    many walkers ask (a fresh read that found the permit free would have let the tick
    claim and probe too), or :class:`AllCircuitsOpen`, a routing error that releases the
    run without spending an attempt. The deferral (§8) then happens there: that tick ends
    ``deferred`` and queues the single delayed probe, and its outcome drops the reused
    answer. What is lost is the claim, the release and any farm call the run made before
    the open route's (an extraction before an open embedding route is redone later), for
    at most the ticks this process starts inside one window — a tick that read the gate
    just before the trip costs the same. During an outage each tick defers, so nothing
    is reused across probe intervals (a window is ≤ 5 s against the 15 s retry interval
    anyway): one delayed probe, O(1) work per interval.
    """

    def __init__(
        self,
        walker: Walker,
        workflows: Sequence[str],
        *,
        reuse_seconds: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.walker = walker
        self.workflows = tuple(workflows)
        self.reuse_seconds = reuse_seconds
        self._clock = clock
        #: Until when (``clock``) the last "passable" may be reused; None: read next time.
        self._passable_until: float | None = None
        self._news_seen = 0  # the walker's breaker news when that answer was read
        self._generation = 0  # moves on every drop: a read that began before it is not kept
        #: Gate questions answered from the reused answer (process-local, for tests).
        self.reused = 0

    async def blocked(self) -> bool:
        """Fails open: an unreadable breaker store never blocks (the claim meets it next).

        Every workflow's routes in one round trip (no breaker window is read)."""
        now = self._clock()
        if self._reusable(now):
            self.reused += 1
            return False
        generation, news = self._generation, self.walker.breaker_news
        try:
            flags = await self.walker.routes_open(self.workflows)
        except Exception as exc:
            self.forget()
            self.walker.bookkeeping_failed("route_gate", exc, workflows=",".join(self.workflows))
            return False
        if any(flags.values()):
            self.forget()
            return True
        if (
            self.reuse_seconds > 0
            and generation == self._generation
            and news == self.walker.breaker_news
        ):
            self._passable_until, self._news_seen = now + self.reuse_seconds, news
        return False

    def _reusable(self, now: float) -> bool:
        return (
            self._passable_until is not None
            and now < self._passable_until
            and self.walker.breaker_news == self._news_seen
        )

    def tick_ended(self, outcome: TickOutcome) -> None:
        """Only a completed run says the routes still work; anything else drops the answer."""
        if outcome is not TickOutcome.COMPLETED:
            self.forget()

    def forget(self) -> None:
        """Drop the reused answer: the next question reads the breakers."""
        self._passable_until = None
        self._generation += 1


class Maintenance:
    """Card expiry, duplicate collapse and the merge pass, paced fleet-wide by Redis locks."""

    def __init__(
        self,
        redis: ArqRedis,
        keys: Keys,
        cards: CardStore,
        models: RoutedModels,
        settings: Settings,
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.cards = cards
        self.models = models
        self.settings = settings

    async def _due(self, job: str, period: float) -> bool:
        """True for exactly one worker per ``period`` (a SET NX lease)."""
        return bool(
            await self.redis.set(
                self.keys.maintenance_lock(job), "1", nx=True, px=max(int(period * 1000), 1000)
            )
        )

    async def __call__(self) -> str:
        done: list[str] = []
        now = datetime.now(UTC)
        s = self.settings
        if await self._due("expiry", s.maintenance_seconds):
            expired = await expire_cards(self.cards, now=now)
            folded = await collapse_duplicates(self.cards, now=now)
            # issue 9 row 23: every retention bound, not only finished runs
            pruned = (
                await bound_growth(RunStore(self.redis, s), self.cards, s, now=now)
            ).store.runs
            log.info(
                "maintenance_expiry", expired=expired, duplicates_folded=folded, runs_pruned=pruned
            )
            done.append(f"expired={expired} folded={folded} pruned={pruned}")
        if await self._due("merge", s.merge_interval_seconds):
            if await self.models.walker.route_is_open(MEMORY_MERGE):
                done.append("merge=deferred")
            else:
                result = await merge_pass(
                    self.cards,
                    self.models.extractor({"job": "merge_pass"}),
                    embedder=self.models.embedder({"job": "merge_pass"}),
                    settings=s,
                    now=now,
                    deadline=deadline_after(s.route_wall_seconds),
                )
                done.append(f"merge={result}")
        if await self._due("reembed", s.reembed_budget_seconds):
            done.append(await self._reembed())
        return "; ".join(done) or "not due"

    async def _reembed(self) -> str:
        """Model switches (§16): chats whose vectors are not of the embedding route's model."""
        s = self.settings
        target = route_target(self.models.walker.routes, EMBEDDING, s.embedding_dimension)
        embedder = self.models.embedder({"job": "reembed"})
        if target is None or embedder is None:
            return "reembed=no route"
        worker = Reembedder(
            self.cards, embedder, target, s, progress_key=self.keys.reembed_progress
        )
        results = await reembed_pass(worker, budget_seconds=s.reembed_budget_seconds)
        states = Counter(r.state for r in results)
        return "reembed=" + (",".join(f"{k}:{v}" for k, v in sorted(states.items())) or "none")


def retired_reporter(events: Fanout) -> Callable[[list[str], str, str | None], Awaitable[None]]:
    """The pipeline's hook: runs retired → a ``runs_retired`` event (stream + admin page)."""

    async def on_retired(run_ids: list[str], code: str, reason: str | None) -> None:
        await events.emit(
            RoutingEvent(
                EventType.RUNS_RETIRED,
                MEMORY_EXTRACTION,
                reason=reason,
                error_code=code,
                counters={"runs": len(run_ids)},
                context={"run_id": run_ids[0]} if run_ids else {},
            )
        )

    return on_retired


async def build_tick_runner(
    settings: Settings, redis: ArqRedis, *, transports: TransportFactory | None = None
) -> TickRunner:
    """The production pipeline: routed, breaker-guarded consolidation with admin reports.

    ``transports`` replaces the real farm clients (benchmarks use an instant farm).
    """
    keys = Keys(settings.key_prefix)
    cards = await card_store(settings, redis, keys)  # first: nothing else to close if it fails
    http = httpx.AsyncClient(timeout=httpx.Timeout(settings.request_timeout_seconds))
    routes = load_routes(settings.routes_file, settings.route_defaults())
    # a routed success counts itself in the attempt metrics with its breaker record
    breakers = BreakerStore(
        redis, keys, settings.breaker_config(), success_counter=success_counter(keys)
    )
    runs = RunStore(redis, settings)

    reporter = AdminReporter.from_settings(
        settings,
        redis,
        keys,
        notifiers_from_settings(settings, http),
        breakers=route_breakers(routes, breakers),
        waiting_runs=partial(waiting_runs, runs),
        open_routes=route_open_workflows(routes, breakers),
    )
    attempts = AttemptCounter(redis, keys)
    events = Fanout(
        RedisEventLog(redis, keys, maxlen=settings.routing_events_maxlen), reporter, attempts
    )
    walker = Walker(
        routes,
        breakers,
        events,
        transports or farm_clients(settings, http),
        WalkerConfig(
            probe_interval_seconds=settings.consolidation_backend_retry_interval,
            permit_lease_seconds=settings.breaker_permit_lease_seconds,
        ),
    )
    models = RoutedModels(walker, attempts, settings)
    gated = [MEMORY_EXTRACTION] + ([EMBEDDING] if models.has_embedding_route else [])
    pipeline = TickRunner(
        settings=settings,
        redis=redis,
        processor=ConsolidationProcessor(models, cards, settings),
        gate=WalkerGate(walker, gated, reuse_seconds=settings.route_gate_reuse_seconds),
        on_retired=retired_reporter(events),
    )
    pipeline.background.append(reporter.run)
    pipeline.maintenance = Maintenance(redis, keys, cards, models, settings)
    pipeline.closers.append(http.aclose)
    pipeline.closers.append(lambda: close_cards_client(cards.redis, redis))
    return pipeline


def farm_clients(settings: Settings, http: httpx.AsyncClient) -> ClientFactory:
    """The real farm clients (chat and embedding over ``http``, local embedding threads)."""
    return ClientFactory(
        settings.client_config(),
        embed_config=settings.client_config(workflow=EMBEDDING),
        http=http,
        local_concurrency=settings.local_embed_concurrency,
        local_threads=settings.local_embed_threads,
    )


async def waiting_runs(runs: RunStore) -> int:
    """Runs still owed work (the admin page's "runs waiting")."""
    counts = await runs.counts()
    return counts["queued"] + counts["processing"] + counts["failed"] - counts["retired"]


async def card_store(settings: Settings, redis: ArqRedis, keys: Keys) -> CardStore:
    """The worker's card store: on ``MEMORY_CARDS_URL`` (a cluster) or the queue's server,
    checked like the queue's (§2 rev 2: no eviction, scripts allowed), writes replicated to
    one replica before a run completes when the card server has replicas."""
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
        cards_redis, keys, wait_replicas=replicas, wait_timeout_ms=settings.cards_wait_timeout_ms
    )
