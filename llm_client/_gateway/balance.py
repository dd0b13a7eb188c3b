"""A walk's order over a route's targets (§6): tiers, load sharing and slow-node ejection.

Pure: the random source, the in-flight counts and the latency windows come in as
arguments, with ``now_ms``, so every rule is a table test.

- **Tiers.** A route's targets are grouped by ``tier`` (default: their position, so a
  file without tiers keeps its primary → fallbacks order); tiers are tried lowest first.
- **Load sharing within a tier** (``MEMORY_ROUTING_BALANCE``):
  ``least_in_flight`` puts first the target with the fewest calls in flight per unit of
  weight (this process's count), ties broken by a weighted draw; ``weighted_random``
  draws the whole order by weight (Efraimidis–Spirakis keys ``u ** (1 / weight)``).
- **Slow nodes** (Envoy-style outlier ejection): a target whose mean success latency over
  the last two windows is ``outlier_factor`` × the tier's median (the lower median of the
  targets with enough samples, itself included) and at least ``outlier_min_gap_ms``
  slower goes to the back of its tier — slowest last — while its windows say so; at most
  ``outlier_max_share`` of a tier (one target at least, never all of it). It is never a
  breaker charge: a slow node is still called when the tier's others are busy, capped,
  open or fail, and once its slow samples age out of the windows (or it is fast again)
  it is back in rotation.

- **Error rate** (:mod:`llm_client._outlier`): a target's weight is multiplied by its
  success ratio over the fleet's window, and ``least_in_flight`` orders by
  ``(in flight + 1) / weight`` (Envoy's least request), so a target that fails fast —
  and so has few calls in flight — is never put ahead of an equally loaded healthy peer.
  An ejected target goes after every other target of the route; one on probation is put
  first in its tier for ``probation_share`` of the calls, even while a peer could serve.

The breaker still has the last word: the walk tries closed targets in this order and
breaker-open ones last, as probes (:mod:`llm_client._routing.step`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from llm_client._gateway.model import GatewayConfig, Latency, recent
from llm_client._outlier.model import Standing, Tally

LEAST_IN_FLIGHT = "least_in_flight"
WEIGHTED_RANDOM = "weighted_random"
STRATEGIES = (LEAST_IN_FLIGHT, WEIGHTED_RANDOM)


class Balanced(Protocol):
    """What ordering needs of a target (``RouteTarget`` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def weight(self) -> float: ...


T = TypeVar("T", bound=Balanced)

#: A uniform draw in [0, 1) (``random.Random().random``; tests pass a scripted one).
Draw = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Outlier:
    """A target moved to the back of its tier as slow, and why (means in ms)."""

    target: str
    mean_ms: int
    median_ms: int
    samples: int


def mean_ms(latency: Latency | None, now_ms: int, window_ms: int) -> tuple[int, int] | None:
    """(mean success latency in ms, samples) over the two windows; None without samples."""
    if latency is None:
        return None
    total, count = recent(latency, now_ms, window_ms)
    return (total // count, count) if count else None


def outliers(
    tier: Sequence[Balanced],
    latency: Mapping[str, Latency],
    now_ms: int,
    config: GatewayConfig,
) -> list[Outlier]:
    """The slow outliers of one tier, slowest first (see the module docstring)."""
    measured: list[tuple[int, int, str]] = []
    for target in tier:
        found = mean_ms(latency.get(target.id), now_ms, config.latency_window_ms)
        if found is not None and found[1] >= config.outlier_min_samples:
            measured.append((found[0], found[1], target.id))
    if len(measured) < 2:
        return []
    means = sorted(mean for mean, _, _ in measured)
    median = means[(len(means) - 1) // 2]
    slow = [
        Outlier(target, mean, median, samples)
        for mean, samples, target in sorted(measured, reverse=True)
        if mean >= config.outlier_factor * median and mean - median >= config.outlier_min_gap_ms
    ]
    allowed = max(int(config.outlier_max_share * len(tier)), 1)
    return slow[: min(allowed, len(tier) - 1)]


def weighted_keys(
    targets: Sequence[T], draw: Draw, ratio: Mapping[str, float] | None = None
) -> dict[str, float]:
    """An Efraimidis–Spirakis key per target: sorting by it descending is a draw of the
    whole order with each place taken in proportion to weight (× its success ratio)."""
    keys: dict[str, float] = {}
    for target in targets:
        u = 1.0 - draw()  # (0, 1]: never 0, so a key is never 0 ** x
        keys[target.id] = u ** (1.0 / weight(target, ratio))
    return keys


def weight(target: Balanced, ratio: Mapping[str, float] | None) -> float:
    """A target's weight times its success ratio (1 when unknown)."""
    return target.weight * (ratio or {}).get(target.id, 1.0)


def spread(
    targets: Sequence[T],
    in_flight: Mapping[str, int],
    draw: Draw,
    strategy: str,
    ratio: Mapping[str, float] | None = None,
) -> list[T]:
    """One tier's targets in the order its calls should try them (``ratio``: each one's
    success ratio, 1 when absent)."""
    keys = weighted_keys(targets, draw, ratio)
    if strategy == WEIGHTED_RANDOM:
        return sorted(targets, key=lambda t: -keys[t.id])
    if not ratio:
        return sorted(targets, key=lambda t: (in_flight.get(t.id, 0) / t.weight, -keys[t.id]))
    return sorted(
        targets, key=lambda t: ((in_flight.get(t.id, 0) + 1) / weight(t, ratio), -keys[t.id])
    )


def tiers(targets: Sequence[T], tier_of: Callable[[T], int]) -> list[list[T]]:
    """``targets`` grouped by tier, lowest tier first, route order kept within each."""
    grouped: dict[int, list[T]] = {}
    for target in targets:
        grouped.setdefault(tier_of(target), []).append(target)
    return [grouped[tier] for tier in sorted(grouped)]


def prefer(
    targets: Sequence[T],
    tier_of: Callable[[T], int],
    *,
    latency: Mapping[str, Latency],
    in_flight: Mapping[str, int],
    draw: Draw,
    now_ms: int,
    config: GatewayConfig,
    health: Mapping[str, Tally] | None = None,
    probation_share: float = 0.0,
) -> list[T]:
    """The order a call tries ``targets``: tier by tier; in each, the targets shared out by
    :func:`spread` (a target on probation first for ``probation_share`` of the calls), then
    the slow outliers, fastest of them first; the ejected ones after every tier."""
    health = health or {}
    ratio = {t.id: health[t.id].success_ratio for t in targets if t.id in health}
    ejected = [t for t in targets if t.id in health and health[t.id].standing is Standing.EJECTED]
    ordered: list[T] = []
    for tier in tiers([t for t in targets if t not in ejected], tier_of):
        slow = [o.target for o in outliers(tier, latency, now_ms, config)]
        kept = spread([t for t in tier if t.id not in slow], in_flight, draw, config.balance, ratio)
        for target in [t for t in kept if _on_probation(t, health)]:
            if draw() < probation_share:
                kept = [target] + [t for t in kept if t is not target]
        ordered += kept
        ordered += [t for target in reversed(slow) for t in tier if t.id == target]
    return ordered + ejected


def _on_probation(target: Balanced, health: Mapping[str, Tally]) -> bool:
    found = health.get(target.id)
    return found is not None and found.standing is Standing.PROBATION
