"""Fakes for routing tests: scripted per-target behaviour and a recording event sink."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from redis.asyncio import Redis

from llm_client import (
    BreakerConfig,
    BreakerStore,
    Circuit,
    GatewayConfig,
    Outcome,
    RouteDefaults,
    RoutesConfig,
    RouteTarget,
    RoutingEvent,
    TaskTimeout,
    Walker,
    WalkerConfig,
)
from llm_client._routing.routes import parse_routes
from memory_worker.keys import Keys
from memory_worker.ops.metrics import route_target_ids
from memory_worker.settings import Settings
from memory_worker.wiring import breaker_store

Behaviour = Callable[[float], Awaitable[Any]]


def ok(value: Any = "ok", delay: float = 0.0) -> Behaviour:
    async def behave(timeout: float) -> Any:
        if delay:
            await asyncio.sleep(delay)
        return value

    return behave


def fail(make: Callable[[], BaseException], delay: float = 0.0) -> Behaviour:
    async def behave(timeout: float) -> Any:
        if delay:
            await asyncio.sleep(delay)
        raise make()

    return behave


def hang() -> Behaviour:
    """Runs until the caller's timeout, then reports the cut like the real clients do."""

    async def behave(timeout: float) -> Any:
        await asyncio.sleep(timeout)
        raise TaskTimeout(f"cut by the caller's deadline after {timeout:g}s", seconds=timeout)

    return behave


class FakeFarm:
    """Per-target scripted behaviour; counts calls and records idempotency keys."""

    def __init__(self) -> None:
        self.behaviour: dict[str, Behaviour] = {}
        self.calls: Counter[str] = Counter()
        self.keys: list[str | None] = []
        self.timeouts: list[float] = []

    def set(self, target: str, behaviour: Behaviour) -> None:
        self.behaviour[target] = behaviour

    async def attempt(self, target: RouteTarget, timeout: float, key: str | None) -> Any:
        self.calls[target.id] += 1
        self.keys.append(key)
        self.timeouts.append(timeout)
        return await self.behaviour[target.id](timeout)

    @property
    def total(self) -> int:
        return sum(self.calls.values())


class RecordingSink:
    def __init__(self) -> None:
        self.events: list[RoutingEvent] = []

    async def emit(self, event: RoutingEvent) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, event_type: str) -> list[RoutingEvent]:
        return [e for e in self.events if e.type == event_type]


def routes_of(
    *targets: str,
    workflow: str = "memory_extraction",
    per_target: Mapping[str, Mapping[str, Any]] | None = None,
    **budget: Any,
) -> RoutesConfig:
    """A route whose targets are ``provider/model`` ids on fake OpenAI-compatible URLs
    (``per_target``: more keys of a target's table, e.g. its tier and caps)."""
    raw_targets = []
    for target in targets:
        provider, model = target.split("/", 1)
        raw_targets.append(
            {
                "transport": "openai",
                "provider": provider,
                "url": f"http://{provider}.test/v1",
                "model": model,
                **(per_target or {}).get(target, {}),
            }
        )
    raw = {"routes": {workflow: {"targets": raw_targets, **budget}}}
    return parse_routes(raw, RouteDefaults())


FAST_BREAKER = BreakerConfig(cooldown_seconds=0.2, cooldown_max_seconds=5.0)


def make_walker(
    redis: Redis,
    key_prefix: str,
    routes: RoutesConfig,
    sink: Any,
    *,
    breaker: BreakerConfig = FAST_BREAKER,
    probe_interval: float = 15.0,
    clock: Callable[[], float] = time.time,
    gateway: GatewayConfig | None = None,
    seed: int | None = None,
) -> Walker:
    gateway = gateway or GatewayConfig()
    store = BreakerStore(redis, Keys(key_prefix), breaker, clock=clock, gateway=gateway)
    return Walker(
        routes,
        store,
        sink,
        config=WalkerConfig(
            probe_interval_seconds=probe_interval, probe_lease_grace_seconds=1.0, gateway=gateway
        ),
        rng=None if seed is None else random.Random(seed),
    )


def scripted(
    redis: Redis, key_prefix: str, routes: RoutesConfig, behaviours: dict[str, Behaviour], **kw: Any
) -> tuple[FakeFarm, RecordingSink, Walker]:
    """A farm scripted per target, a recording sink and a walker over ``routes`` (``kw``: its own)."""
    farm, sink = FakeFarm(), RecordingSink()
    for target, behaviour in behaviours.items():
        farm.set(target, behaviour)
    return farm, sink, make_walker(redis, key_prefix, routes, sink, **kw)


async def breaker_state(walker: Walker, target: str) -> tuple[Circuit, int, int]:
    """``target``'s circuit, consecutive failures and calls in the window (untouched: CLOSED, 0, 0)."""
    view = await walker.breakers.view(target)
    return view.circuit, view.consecutive_failures, view.window_calls


async def trip_first_target(redis: Redis, settings: Settings) -> str:
    """Fail the deployment's first route target until its breaker opens; that target's id."""
    breakers = breaker_store(redis, settings)
    target = route_target_ids(settings)[0]
    for _ in range(settings.breaker_failure_threshold):
        permit = await breakers.acquire(target, lease_seconds=5)
        assert permit is not None
        await breakers.record(target, permit, Outcome.FAILURE)
    return target
