"""Outlier ejection by error rate (§5), as pure functions on plain data.

A breaker (:mod:`llm_client._breaker.model`) opens on failures in a row or above 80 %; a
target that fails 60 % of its calls, fast, never trips it. This module is the second,
fleet-wide judge, after Envoy's outlier detection: each target's successes and charged
failures over a sliding window (``buckets`` ring buckets of ``window / buckets`` each),
and a verdict per tier.

- **Counted**: a success, or a failure the breaker charges (``Outcome.FAILURE``).
  Capacity, busy and rate-limit answers (neutral) and uncharged errors are never counted,
  so a busy healthy target is never ejected.
- **Failure percentage**: a target with at least ``failure_percentage_min_volume`` calls
  in the window, ``failure_percentage_threshold`` of which or more failed, is ejected.
- **Success rate**: when at least ``success_rate_min_hosts`` targets of the tier have
  ``success_rate_min_volume`` calls each, a target whose success rate is below
  ``mean − success_rate_stdev_factor × stdev`` of theirs is ejected.
- **Panic floor**: at most ``max_ejection_share`` of a tier's targets are ejected at once
  (one at least, never every one of them): the worst success rates go first.
- **Period**: an ejected target stays out ``base × times`` (capped at ``max_ejection``),
  ``times`` counting the ejections that followed each other within ``max_ejection`` of
  the previous one's end. Its counts start afresh when it is ejected.
- **Probation**: for one window after its period it is back, and the walker sends it a
  share of the calls (``probation_share``) first, even while a healthy peer could serve
  them all; failing again ejects it for longer.

An ejected target is never out of reach: the walker tries it after every other target of
the route. ``llm_client._outlier.store`` is the Lua translation of :func:`add`,
:func:`eject` and :func:`reset` (one hash per target), tested against this twin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum


class Standing(StrEnum):
    """Where a target stands with the outlier detector right now."""

    IN = "in"  # in rotation
    EJECTED = "ejected"  # out for its period (tried after every other target)
    PROBATION = "probation"  # back, and sent a share of the calls first


class Mode(StrEnum):
    """Which rule ejected a target."""

    FAILURE_PERCENTAGE = "failure_percentage"
    SUCCESS_RATE = "success_rate"


@dataclass(frozen=True, slots=True)
class EjectionConfig:
    """The detector's thresholds (memory-worker builds this from ``MEMORY_EJECTION_*``)."""

    enabled: bool = True
    #: The sliding window the counts cover, and the probation after an ejection.
    window_seconds: float = 60.0
    #: Ring buckets in the window (the window slides by ``window / buckets``).
    buckets: int = 6
    #: A walker flushes its counts and reads the fleet's at most this often.
    refresh_seconds: float = 1.0
    failure_percentage_threshold: float = 0.5
    failure_percentage_min_volume: int = 20
    success_rate_min_hosts: int = 3
    success_rate_min_volume: int = 20
    success_rate_stdev_factor: float = 1.9
    base_ejection_seconds: float = 30.0
    max_ejection_seconds: float = 300.0
    max_ejection_share: float = 0.5
    probation_share: float = 0.5

    @property
    def bucket_ms(self) -> int:
        return max(math.ceil(self.window_seconds * 1000 / self.buckets), 1)

    @property
    def window_ms(self) -> int:
        return self.bucket_ms * self.buckets

    @property
    def base_ms(self) -> int:
        return max(round(self.base_ejection_seconds * 1000), 1)

    @property
    def max_ms(self) -> int:
        return max(round(self.max_ejection_seconds * 1000), self.base_ms)


@dataclass(frozen=True, slots=True)
class Health:
    """What the fleet stores about one target.

    ``ring`` maps a bucket's slot (``bucket % buckets``) to ``(bucket, successes,
    failures)``; a slot holding an older bucket is stale."""

    ejected_until_ms: int = 0
    times: int = 0
    ejected_at_ms: int = 0
    ring: Mapping[int, tuple[int, int, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Tally:
    """One target's window as read, and its standing."""

    target: str
    successes: int = 0
    failures: int = 0
    standing: Standing = Standing.IN
    ejected_until_ms: int = 0
    times: int = 0

    @property
    def calls(self) -> int:
        return self.successes + self.failures

    @property
    def error_ratio(self) -> float:
        """Failures over calls in the window (0 without calls): the metrics' gauge."""
        return self.failures / self.calls if self.calls else 0.0

    def note(self, now_ms: int) -> str:
        """What operators read (CLI, console): ``ejected 25s (2× in a row)``, ``probation``
        or ``in``, then the window's failures over calls."""
        errors = f"{self.failures}/{self.calls} failed" if self.calls else "no calls"
        if self.standing is Standing.EJECTED:
            left = max(self.ejected_until_ms - now_ms, 0) / 1000
            return f"ejected {left:.0f}s ({self.times}× in a row) · {errors}"
        return f"{self.standing.value} · {errors}"

    @property
    def success_ratio(self) -> float:
        """The share that load sharing weighs a target by: ``(s + 1) / (s + f + 1)``, so a
        target without calls counts as healthy and one failure never zeroes it."""
        return (self.successes + 1) / (self.calls + 1)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A target to eject, and why (counts as judged)."""

    target: str
    mode: Mode
    successes: int
    failures: int


@dataclass(frozen=True, slots=True)
class Ejected:
    """A target the store ejected: for how long, and how many times in a row."""

    target: str
    until_ms: int
    times: int


# --- counting ----------------------------------------------------------------------------


def bucket_of(now_ms: int, config: EjectionConfig) -> int:
    return now_ms // config.bucket_ms


def add(
    health: Health, successes: int, failures: int, now_ms: int, config: EjectionConfig
) -> Health:
    """Count ``successes`` and ``failures`` in the current bucket (its slot restarts when
    it held an older bucket)."""
    if successes <= 0 and failures <= 0:
        return health
    bucket = bucket_of(now_ms, config)
    slot = bucket % config.buckets
    held = health.ring.get(slot)
    s, f = (held[1], held[2]) if held is not None and held[0] == bucket else (0, 0)
    ring = {**health.ring, slot: (bucket, s + max(successes, 0), f + max(failures, 0))}
    return replace(health, ring=ring)


def window(health: Health, now_ms: int, config: EjectionConfig) -> tuple[int, int]:
    """(successes, failures) of the buckets in the window ending now."""
    current = bucket_of(now_ms, config)
    live = [v for v in health.ring.values() if current - config.buckets < v[0] <= current]
    return sum(v[1] for v in live), sum(v[2] for v in live)


def standing(health: Health, now_ms: int, config: EjectionConfig) -> Standing:
    if now_ms < health.ejected_until_ms:
        return Standing.EJECTED
    if health.ejected_until_ms and now_ms < health.ejected_until_ms + config.window_ms:
        return Standing.PROBATION
    return Standing.IN


def tally(target: str, health: Health, now_ms: int, config: EjectionConfig) -> Tally:
    successes, failures = window(health, now_ms, config)
    return Tally(
        target,
        successes,
        failures,
        standing(health, now_ms, config),
        health.ejected_until_ms,
        health.times,
    )


# --- the verdict -------------------------------------------------------------------------


def allowed(size: int, config: EjectionConfig) -> int:
    """The panic floor: how many of a tier of ``size`` may be ejected at once."""
    if size <= 1:
        return 0
    return min(max(math.floor(config.max_ejection_share * size), 1), size - 1)


def decide(tier: Sequence[Tally], config: EjectionConfig) -> list[Verdict]:
    """The targets of one tier to eject now, worst success rate first, within the panic
    floor (targets already ejected count against it and are never judged again)."""
    if not config.enabled:
        return []
    judged = [t for t in tier if t.standing is not Standing.EJECTED]
    found: dict[str, Verdict] = {}
    for t in judged:
        if (
            t.calls >= config.failure_percentage_min_volume
            and t.failures >= config.failure_percentage_threshold * t.calls
        ):
            found[t.target] = Verdict(t.target, Mode.FAILURE_PERCENTAGE, t.successes, t.failures)
    measured = [t for t in judged if t.calls >= config.success_rate_min_volume]
    if len(measured) >= config.success_rate_min_hosts:
        rates = [t.successes / t.calls for t in measured]
        mean = sum(rates) / len(rates)
        stdev = math.sqrt(sum((r - mean) ** 2 for r in rates) / len(rates))
        floor = mean - config.success_rate_stdev_factor * stdev
        for t, rate in zip(measured, rates, strict=True):
            if rate < floor and t.target not in found:
                found[t.target] = Verdict(t.target, Mode.SUCCESS_RATE, t.successes, t.failures)
    ejected = sum(1 for t in tier if t.standing is Standing.EJECTED)
    room = max(allowed(len(tier), config) - ejected, 0)
    worst = sorted(
        found.values(), key=lambda v: (v.successes / (v.successes + v.failures), v.target)
    )
    return worst[:room]


# --- the store's transitions (the Lua twin) ----------------------------------------------


def period_ms(times: int, config: EjectionConfig) -> int:
    """How long the ``times``-th ejection in a row lasts: base × times, capped."""
    return min(config.base_ms * max(times, 1), config.max_ms)


def eject(
    tier: Sequence[Health], wanted: Sequence[int], now_ms: int, config: EjectionConfig
) -> tuple[list[Health], list[tuple[int, int, int]]]:
    """Eject the tier's targets at indexes ``wanted`` (in that order) while the panic floor
    allows, skipping any ejected meanwhile. Returns the tier's new healths and ``(index,
    until_ms, times)`` of each ejected."""
    healths = list(tier)
    room = allowed(len(healths), config) - sum(1 for h in healths if now_ms < h.ejected_until_ms)
    done: list[tuple[int, int, int]] = []
    for i in wanted:
        if room <= 0:
            break
        h = healths[i]
        if now_ms < h.ejected_until_ms:
            continue
        times = h.times + 1 if now_ms < h.ejected_until_ms + config.max_ms else 1
        until = now_ms + period_ms(times, config)
        healths[i] = Health(ejected_until_ms=until, times=times, ejected_at_ms=now_ms)
        done.append((i, until, times))
        room -= 1
    return healths, done


def reset(health: Health) -> Health:
    """Operator reset: in rotation, counts and ejections forgotten."""
    return Health()
