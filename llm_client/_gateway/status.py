"""What operators see of each routed target beyond its breaker (§6, §11, §15).

:func:`statuses` is pure: from the routes, each target's stored gate and ``now`` it says
whether the target is cooling (and for how long), which caps hold it back right now, its
recent latency and whether a route has moved it to the back of its tier as slow — the
same rules the walker applies (:mod:`llm_client._gateway.balance`), so the console and
``breakers list`` show exactly what the walk does. :func:`target_statuses` reads the
gates from the store in one round trip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from llm_client._breaker.store import BreakerStore
from llm_client._gateway.balance import Outlier, mean_ms, outliers
from llm_client._gateway.model import (
    DAY_MS,
    LATENCY_BUCKETS_MS,
    Gate,
    GatewayConfig,
    TargetLimits,
    live_slots,
    rate_tolerance_us,
)
from llm_client._routing.routes import RoutesConfig, RouteTarget, tier_of


@dataclass(frozen=True, slots=True)
class TargetStatus:
    """One target's gate, read for operators (no text from outside: ids and numbers)."""

    target: str
    #: ``(workflow, tier)`` of every route naming it.
    tiers: tuple[tuple[str, int], ...]
    limits: TargetLimits
    cooling_s: float
    in_flight: int
    #: Seconds until the rate cap admits the next call (0: now).
    rate_wait_s: float
    tokens_today: int
    latency_mean_ms: int | None
    latency_samples: int
    #: The route (workflow) that moved it back as slow, and why; None: it is not slow.
    slow: tuple[str, Outlier] | None
    #: Successes per latency bucket, fleet-wide (``LATENCY_BUCKETS_MS``, then +Inf).
    buckets: tuple[int, ...]

    @property
    def capped(self) -> tuple[str, ...]:
        """The caps holding it back right now, each as a short reason."""
        limits, found = self.limits, []
        if limits.max_in_flight is not None and self.in_flight >= limits.max_in_flight:
            found.append(f"max_in_flight {self.in_flight}/{limits.max_in_flight}")
        if limits.requests_per_minute is not None and self.rate_wait_s > 0:
            found.append(
                f"requests_per_minute {limits.requests_per_minute}: "
                f"next call in {self.rate_wait_s:.1f}s"
            )
        if limits.tokens_per_day is not None and self.tokens_today >= limits.tokens_per_day:
            found.append(
                f"tokens_per_day {self.tokens_today}/{limits.tokens_per_day} until 00:00 UTC"
            )
        return tuple(found)

    @property
    def notes(self) -> tuple[str, ...]:
        """Why the walker passes it over now, if it does: cooling, caps, slowness."""
        found = []
        if self.cooling_s > 0:
            found.append(f"cooling {self.cooling_s:.0f}s (Retry-After)")
        found += [f"capped: {reason}" for reason in self.capped]
        if self.slow is not None:
            workflow, why = self.slow
            found.append(
                f"slow in {workflow}: {why.mean_ms} ms vs tier median {why.median_ms} ms "
                f"over {why.samples} calls (tried last in its tier)"
            )
        return tuple(found)

    def as_dict(self) -> dict[str, object]:
        """JSON-able form (``breakers list --json``)."""
        return {
            "tiers": dict(self.tiers),
            "limits": {
                "max_in_flight": self.limits.max_in_flight,
                "requests_per_minute": self.limits.requests_per_minute,
                "tokens_per_day": self.limits.tokens_per_day,
            },
            "cooling_s": round(self.cooling_s, 3),
            "in_flight": self.in_flight,
            "rate_wait_s": round(self.rate_wait_s, 3),
            "tokens_today": self.tokens_today,
            "capped": list(self.capped),
            "latency_mean_ms": self.latency_mean_ms,
            "latency_samples": self.latency_samples,
            "slow": None if self.slow is None else self.slow[0],
            "notes": list(self.notes),
            "latency_buckets": list(self.buckets),
        }


def _slow(
    target: RouteTarget,
    routes: RoutesConfig,
    gates: Mapping[str, Gate],
    now_ms: int,
    config: GatewayConfig,
) -> tuple[str, Outlier] | None:
    latency = {name: gate.latency for name, gate in gates.items()}
    for workflow, route in routes.routes.items():
        tier = [t for t in route.ordered if tier_of(t) == tier_of(target)]
        if target.id not in {t.id for t in tier}:
            continue
        for outlier in outliers(tier, latency, now_ms, config):
            if outlier.target == target.id:
                return workflow, outlier
    return None


def status(
    target: RouteTarget,
    routes: RoutesConfig,
    gates: Mapping[str, Gate],
    now_ms: int,
    config: GatewayConfig,
) -> TargetStatus:
    """One target's status at ``now_ms`` (``gates``: every routed target's, by id)."""
    gate = gates.get(target.id, Gate())
    limits = target.limits
    rpm = limits.requests_per_minute
    ahead_us = (
        gate.tat_us - now_ms * 1000 - (rate_tolerance_us(rpm, config.rate_burst) if rpm else 0)
    )
    found = mean_ms(gate.latency, now_ms, config.latency_window_ms)
    buckets = tuple(gate.buckets.get(i, 0) for i in range(len(LATENCY_BUCKETS_MS) + 1))
    return TargetStatus(
        target=target.id,
        tiers=tuple(
            (workflow, tier_of(t))
            for workflow, route in routes.routes.items()
            for t in route.targets
            if t.id == target.id
        ),
        limits=limits,
        cooling_s=max(gate.cool_until_ms - now_ms, 0) / 1000,
        in_flight=len(live_slots(gate.slots, now_ms)),
        rate_wait_s=max(ahead_us, 0) / 1_000_000 if rpm else 0.0,
        tokens_today=gate.tok_used if gate.tok_day == now_ms // DAY_MS else 0,
        latency_mean_ms=None if found is None else found[0],
        latency_samples=0 if found is None else found[1],
        slow=_slow(target, routes, gates, now_ms, config),
        buckets=buckets,
    )


def statuses(
    routes: RoutesConfig, gates: Mapping[str, Gate], now_ms: int, config: GatewayConfig
) -> list[TargetStatus]:
    """Every routed target's status, first appearance first."""
    return [status(t, routes, gates, now_ms, config) for t in routes.targets()]


async def target_statuses(
    store: BreakerStore, routes: RoutesConfig, *, now_ms: int | None = None
) -> list[TargetStatus]:
    """:func:`statuses` with the gates read from ``store`` (one round trip)."""
    ids: Sequence[str] = routes.target_ids()
    now = store.now_ms() if now_ms is None else now_ms
    gates = dict(zip(ids, await store.gates(ids), strict=True))
    return statuses(routes, gates, now, store.gateway)
