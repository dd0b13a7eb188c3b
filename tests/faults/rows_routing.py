"""Fault rows 5, 6 and 12: the routing walker, breaker permits and admin pages.

- 5: the whole farm down → extraction is probed and paged, not only ``embedding``;
- 6: a Redis error in routing bookkeeping never fails a run whose farm call succeeded;
- 12: a prober killed mid-probe blocks its workflow for one permit lease, not ~905 s.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from llm_client import (
    BreakerStore,
    ChatResult,
    Circuit,
    ClientFactory,
    EmbedResult,
    RedisEventLog,
    RouteTarget,
)
from llm_client._transport.base import ChatTransport, EmbedTransport
from memory_worker.api import MemoryQueue
from memory_worker.consolidation.routed import ConsolidationProcessor
from memory_worker.farmsim import Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.storage.connections import RedisHandle, client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.wiring import build_tick_runner
from tests.faults.context import FaultContext, Scenario, delivered_pages, seed_card_vector
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually, workers_up
from tests.support.routes import FARM_EMBEDDER, Route, farm_target, route, write_routes

DOWN = Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="[Errno -3] dns")
HANG = Fault(kind=FaultKind.HANG)

#: The extraction route's primary and fallback farm targets.
PRIMARY_TARGET = farm_target("llm-primary", "primary-model")
FALLBACK_TARGET = farm_target("llm-openai", "fallback-model")
PRIMARY, SECONDARY, EMBEDDER = (
    "llm-primary/primary-model",
    "llm-openai/fallback-model",
    "embedder/embedder",
)


def _routed_fleet(
    ctx: FaultContext, routes: Mapping[str, Route], interval: float, **overrides: Any
) -> Fleet:
    """A fleet on the farm simulator with these routes and backend retry interval."""
    env = {
        "discovery_base_url": ctx.sim.base_url,
        "routes_file": str(write_routes(ctx.tmp_path, **routes)),
        "consolidation_backend_retry_interval": interval,
    }
    return Fleet(ctx.settings, ctx.tmp_path, env | overrides)


def _breakers(ctx: FaultContext, settings: Settings | None = None) -> BreakerStore:
    s = settings or ctx.settings
    return BreakerStore(ctx.redis, Keys(s.key_prefix), s.breaker_config())


async def _wake(ctx: FaultContext) -> None:
    await MemoryQueue(RedisHandle(ctx.redis, ctx.redis_url), ctx.settings).wake()


def _farm_submits(ctx: FaultContext) -> int:
    return sum(service["submits"] for service in ctx.sim.stats().values())


# --- row 5 ------------------------------------------------------------------------------------


async def row5(ctx: FaultContext) -> None:
    """Whole farm down: both extraction targets and the embedder trip, both workflows page,
    the pages name every open route, and the fleet still sends ~one probe per interval."""
    interval = 0.5
    fleet = _routed_fleet(
        ctx,
        {
            "memory_extraction": route(PRIMARY_TARGET, FALLBACK_TARGET),
            "embedding": route(FARM_EMBEDDER),
        },
        interval,
        breaker_cooldown_seconds=120,  # stay open: only fail-open probes reach the farm
    )
    store = RunStore(ctx.redis, ctx.settings)
    for chat in range(12):  # chats with a card vector: every run makes the related lookup
        await seed_card_vector(ctx, chat)
    ids = [(await store.enqueue(make_request(chat, hour=chat))).run_id for chat in range(12)]
    ctx.sim.set_fault("*", DOWN)
    try:
        fleet.start(2)
        await _wake(ctx)
        breakers = _breakers(ctx)

        async def all_open() -> bool:
            views = await breakers.views([PRIMARY, SECONDARY, EMBEDDER])
            return all(v.circuit is not Circuit.CLOSED for v in views)

        await eventually(all_open, timeout=60)

        def paged(workflow: str) -> bool:
            key = f"circuit_open_exhaustion:{workflow}:-"
            return any(p["dedupe_key"] == key for p in delivered_pages(fleet))

        await eventually(lambda: paged("memory_extraction") and paged("embedding"), timeout=30)
        # The page of the later-opened route names both routes.
        texts = [p["text"] for p in delivered_pages(fleet)]
        assert any(
            "open routes: memory_extraction, embedding" in text.splitlines() for text in texts
        ), texts
        # Probing stays O(1) per interval: the lookup never probes, extraction's probe does.
        # (the next 8 submits take at least 6 intervals: observed, not slept for)
        before, started = _farm_submits(ctx), time.monotonic()
        await eventually(lambda: _farm_submits(ctx) >= before + 8, timeout=30)
        assert time.monotonic() - started >= (8 - 2) * interval
        # …and the extraction probes are what reaches the farm now.
        events = await RedisEventLog(ctx.redis, Keys(ctx.settings.key_prefix)).recent(limit=500)
        probed = {e.workflow for e in events if e.type == "failopen_probe"}
        assert "memory_extraction" in probed, probed
        counts = await store.counts()
        assert counts["failed"] == 0
        assert counts["retired"] == 0
        runs = await store.get_many([i for i in ids if i])
        released = [r for r in runs if r.releases > 0]
        assert released
        assert all(r.error_log == [] for r in runs)
        assert all(r.attempts == 0 for r in runs if r.status.value == "queued")
    finally:
        fleet.stop_all()


# --- row 6 ------------------------------------------------------------------------------------


class _Hooked:
    """A real farm client with a hook that runs after each successful answer."""

    def __init__(self, inner: Any, after: Any) -> None:
        self.inner = inner
        self.after = after

    async def chat(self, body: Mapping[str, Any], **kwargs: Any) -> ChatResult:
        result: ChatResult = await self.inner.chat(body, **kwargs)
        await self.after("chat")
        return result

    async def embed(self, texts: Sequence[str], **kwargs: Any) -> EmbedResult:
        await self.after("embed_before")
        result: EmbedResult = await self.inner.embed(texts, **kwargs)
        await self.after("embed")
        return result

    async def aclose(self) -> None:
        await self.inner.aclose()


class _HookedFactory(ClientFactory):
    def __init__(self, *args: Any, after: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.after = after

    def chat(self, target: RouteTarget) -> ChatTransport:
        return _Hooked(super().chat(target), self.after)  # type: ignore[return-value]

    def embed(self, target: RouteTarget) -> EmbedTransport:
        return _Hooked(super().embed(target), self.after)


async def row6(ctx: FaultContext) -> None:
    """Redis errors right after the farm answered (WRONGTYPE on the breaker's window, OOM on
    every plain write): the breaker record and the attempt counter fail (the held success
    when it lands), the run still completes on attempt 1 with a clean log.
    Then the embedder's breaker is unreadable (WRONGTYPE) before the call: fail open.
    (A private Valkey: the OOM must not reach the shared test server.)"""
    server = EmbeddedValkey(ctx.tmp_path / "valkey-row6").ensure()
    redis = client_from_url(server.url)
    routes = write_routes(
        ctx.tmp_path, memory_extraction=route(PRIMARY_TARGET), embedding=route(FARM_EMBEDDER)
    )
    settings = ctx.settings.model_copy(
        update={
            "redis_url": server.url,
            "discovery_base_url": ctx.sim.base_url,
            "routes_file": routes,
        }
    )
    keys = Keys(settings.key_prefix)
    phase = {"oom_after_chat": True}

    async def after(step: str) -> None:
        if step == "chat" and phase["oom_after_chat"]:
            # The breaker's window now answers WRONGTYPE (Valkey lets a flagless script
            # write past maxmemory, so OOM alone would spare the record)…
            await redis.set(keys.breaker_window(PRIMARY), "not-a-zset")
            # …and every plain write (attempt counters, events, pages) is refused: OOM.
            await redis.config_set("maxmemory-policy", "noeviction")
            await redis.config_set("maxmemory", 1)  # every write is refused from here
        elif step == "embed_before":
            # Writes come back before the run's own writes (store outages are other rows).
            await redis.config_set("maxmemory", 0)

    factory = _HookedFactory(settings.client_config(), after=after)
    pipeline = await build_tick_runner(settings, redis, transports=factory)
    processor = pipeline.processor
    assert isinstance(processor, ConsolidationProcessor)
    walker = processor.models.walker
    store = RunStore(redis, settings)
    breakers = BreakerStore(redis, keys, settings.breaker_config())

    async def completes_cleanly(chat: int, job: str) -> None:
        """A run of ``chat`` (hour ``chat``) through tick ``job``: done on attempt 1, clean log."""
        run_id = (await store.enqueue(make_request(chat, hour=chat))).run_id
        assert run_id is not None
        outcome = await pipeline.tick(job)
        run = await store.get(run_id)
        assert (outcome, run.status.value, run.attempts, run.error_log) == (
            "completed",
            "completed",
            1,
            [],
        ), (outcome, run)

    try:
        await completes_cleanly(1, "row6-a")
        # The run's successes are held (MEMORY_BREAKER_SUCCESS_HOLD_SECONDS); they land at
        # the latest twice the hold later — here now, the window still refusing them.
        assert await pipeline.carry.land(force=True) is False
        assert walker.bookkeeping_failures["breaker_record"] >= 1
        assert walker.bookkeeping_failures["attempt_counter"] >= 1
        await redis.delete(keys.breaker_window(PRIMARY))
        assert (await breakers.view(PRIMARY)).circuit is Circuit.CLOSED

        # Before the call: the embedder's breaker cannot be read (a real WRONGTYPE reply).
        phase["oom_after_chat"] = False
        await redis.set(keys.breaker(EMBEDDER), "not-a-hash")
        await completes_cleanly(2, "row6-b")
        assert walker.bookkeeping_failures["breaker_views"] >= 1
        assert ctx.sim.stats()["embedder"]["succeeded"] >= 2  # it was called, fail-open
    finally:
        for close in pipeline.closers:
            await close()
        await factory.aclose()
        await redis.aclose()
        server.stop()


# --- row 12 -----------------------------------------------------------------------------------


async def prober_kill_recovery(
    ctx: FaultContext, *, lease: float, interval: float, cooldown: float = 1.0
) -> dict[str, float]:
    """kill -9 a worker during a half-open probe, heal the farm, start a fresh worker: seconds
    from the heal to the first completed run, and the lease the dead prober left behind."""
    fleet = _routed_fleet(
        ctx,
        {"memory_extraction": route(PRIMARY_TARGET)},
        interval,
        breaker_cooldown_seconds=cooldown,
        breaker_cooldown_max_seconds=cooldown,
        breaker_failure_threshold=1,  # trip on the first failure, however long the interval
        breaker_permit_lease_seconds=lease,
        task_timeout_seconds=600,  # the probe hangs until it is killed
        lease_seconds=5,
    )
    store = RunStore(ctx.redis, ctx.settings)
    for chat in range(4):
        await store.enqueue(make_request(chat, hour=chat))
    breakers = _breakers(ctx)
    ctx.sim.set_fault("*", DOWN)
    try:
        (prober,) = fleet.start(1)
        await _wake(ctx)

        async def opened() -> bool:
            return (await breakers.view(PRIMARY)).trips >= 1

        await eventually(opened, timeout=60)
        ctx.sim.set_fault("*", HANG)
        hung_from = _farm_submits(ctx)

        async def probing() -> bool:
            return (await breakers.view(PRIMARY)).probe_in_flight

        await eventually(probing, timeout=60 + cooldown + interval)
        # the probe's job reached the farm (and hangs there)
        await eventually(lambda: _farm_submits(ctx) > hung_from, timeout=30, every=0.02)
        prober.kill()
        state = await breakers.state(PRIMARY)
        left_behind = (state.probe_until_ms - breakers.now_ms()) / 1000
        ctx.sim.clear_faults()
        healed = time.monotonic()
        fresh = fleet.start(1)
        # timed from the heal or, when later, from the fresh worker being up: its start-up
        # is no part of the promise (20 s at load 10 on two cores, past the slack)
        up = max(healed, await workers_up(fresh))
        await _wake(ctx)

        async def completed() -> bool:
            return (await store.counts())["completed"] >= 1

        await eventually(completed, timeout=interval + lease + 60, every=0.1)
        return {"first_completion_s": time.monotonic() - up, "lease_left_s": left_behind}
    finally:
        fleet.stop_all()


async def row12(ctx: FaultContext) -> None:
    """A killed prober frees its workflow within one lease: the first run completes within
    probe interval + lease of the farm's return (the measured figure uses the 30 s default)."""
    lease, interval = 5.0, 2.0
    figures = await prober_kill_recovery(ctx, lease=lease, interval=interval)
    assert 0 < figures["lease_left_s"] <= lease + 0.5, figures
    # the claim and the run on a shared two-core machine (the worker's start-up is timed
    # out of the figure; without the lease the workflow stays blocked for the probe's 600 s
    # task timeout)
    slack = 10.0
    assert figures["first_completion_s"] <= interval + lease + slack, figures
    counts = await RunStore(ctx.redis, ctx.settings).counts()
    assert counts["retired"] == 0


ROWS: dict[int, Scenario] = {5: row5, 6: row6, 12: row12}
