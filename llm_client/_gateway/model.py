"""Admission of one route target beyond its breaker (§3, §6), as pure functions on plain data.

A target's breaker (:mod:`llm_client._breaker.model`) says whether it is *healthy*; this
module says whether it may take a call *now*, and what it remembers about the calls it
served. Like the breaker policy it is the specification of Lua scripts
(``llm_client/_breaker/lua/``, sharing ``gate_lib.lua``) that keep this state in the
target's breaker hash, so the whole fleet shares it with no extra round trip per call.
Every function takes ``now_ms`` (integer milliseconds) and does integer arithmetic, so
Python and Lua agree to the unit.

- **Cooling** (``Retry-After``): a capacity answer or a 429 that names a delay cools the
  target for that long, capped (``MEMORY_RETRY_AFTER_MAX_SECONDS``); no call reaches it
  meanwhile from any process. Neutral for the breaker.
- **Caps** (``routes.toml`` per target): ``max_in_flight`` (leased slots, renewed while
  the call runs, so a killed worker frees its slot within one lease),
  ``requests_per_minute`` (a GCRA: one call per ``60/N`` s on average, a burst of
  ``MEMORY_ROUTING_RATE_BURST`` calls) and ``tokens_per_day`` (a UTC day's tokens, from
  the answers' usage, estimated when absent). Over a cap is capacity, never a fault.
- **Latency**: each success's duration in two consecutive windows of
  ``MEMORY_ROUTING_LATENCY_WINDOW_SECONDS`` (the slow-node signal,
  :mod:`llm_client._gateway.balance`) and in a fleet-wide histogram (the console's).

The refusal order is fixed: cooling, then the day's tokens, then in-flight slots, then
the rate. Nothing is taken unless everything admits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

#: A UTC day in milliseconds (``tokens_per_day`` resets at midnight UTC).
DAY_MS = 86_400_000

#: Upper bounds (ms) of the fleet-wide latency histogram's buckets; one more is +Inf.
LATENCY_BUCKETS_MS: tuple[int, ...] = (
    100,
    250,
    500,
    1_000,
    2_500,
    5_000,
    10_000,
    30_000,
    60_000,
    120_000,
    300_000,
)


class Refusal(StrEnum):
    """Why a target took no call now."""

    OPEN = "open"  # its breaker refused (open, or the probe is taken)
    COOLING = "cooling"  # it asked for a pause (Retry-After)
    TOKENS = "tokens"  # its tokens_per_day are spent until midnight UTC
    IN_FLIGHT = "in_flight"  # max_in_flight calls are running
    RATE = "rate"  # requests_per_minute: the next call is not due yet

    @property
    def capacity(self) -> bool:
        """A capacity refusal: neutral for breakers, never a fault."""
        return self is not Refusal.OPEN

    @property
    def waitable(self) -> bool:
        """Worth waiting for within one call's capacity wait (a slot, the next rate tick);
        a cooling target or a spent day is left for the rest of the call."""
        return self in (Refusal.IN_FLIGHT, Refusal.RATE)


@dataclass(frozen=True, slots=True)
class TargetLimits:
    """A target's caps from ``routes.toml`` (None: uncapped)."""

    max_in_flight: int | None = None
    requests_per_minute: int | None = None
    tokens_per_day: int | None = None

    @property
    def capped(self) -> bool:
        return any(
            x is not None
            for x in (self.max_in_flight, self.requests_per_minute, self.tokens_per_day)
        )


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """The gateway knobs (memory-worker builds this from its settings)."""

    #: A Retry-After longer than this cools the target this long only.
    retry_after_max_seconds: float = 300.0
    #: Calls a ``requests_per_minute`` cap lets through back to back.
    rate_burst: int = 2
    #: Length of one latency window (the slow-node signal reads two of them).
    latency_window_seconds: float = 15.0
    #: A target this many times its tier's median latency is a slow outlier.
    outlier_factor: float = 3.0
    #: Successes a target (and a peer) needs in the windows before it can be judged.
    outlier_min_samples: int = 5
    #: …and it must be at least this much slower than the median (ms), so fast tiers
    #: are not reshuffled by noise.
    outlier_min_gap_ms: int = 200
    #: At most this share of a tier is moved back as slow at once (one target at least).
    outlier_max_share: float = 0.5
    #: How a tier's calls are spread: ``least_in_flight`` or ``weighted_random``.
    balance: str = "least_in_flight"
    #: Characters per token when an answer carries no usage (tokens_per_day estimates).
    chars_per_token: int = 4

    @property
    def latency_window_ms(self) -> int:
        return max(round(self.latency_window_seconds * 1000), 1)

    @property
    def retry_after_max_ms(self) -> int:
        return round(self.retry_after_max_seconds * 1000)


@dataclass(frozen=True, slots=True)
class Latency:
    """A target's success latencies in two consecutive windows (index ``window`` = the
    window of its newest sample: ``now_ms // window_ms``)."""

    window: int = 0
    cur_sum: int = 0
    cur_count: int = 0
    prev_sum: int = 0
    prev_count: int = 0


@dataclass(frozen=True, slots=True)
class Gate:
    """A target's admission state as the fleet stores it."""

    #: No call before this instant (0: not cooling).
    cool_until_ms: int = 0
    #: The rate cap's theoretical arrival time (µs; GCRA).
    tat_us: int = 0
    #: The UTC day ``tok_used`` counts (``now_ms // DAY_MS``), and the tokens used in it.
    tok_day: int = 0
    tok_used: int = 0
    #: In-flight slots: token → lease expiry (ms); expired ones do not count.
    slots: Mapping[str, int] = field(default_factory=dict)
    latency: Latency = Latency()
    #: Successes per latency bucket (index into :data:`LATENCY_BUCKETS_MS`, last = +Inf).
    buckets: Mapping[int, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Admission:
    """A gate's verdict: None = admitted; else why not and when it may be worth asking again
    (``ready_ms`` after now; 0 = unknown)."""

    refusal: Refusal | None
    ready_ms: int = 0


# --- cooling ---------------------------------------------------------------------------------


def cooling_ms(retry_after_seconds: float | None, config: GatewayConfig) -> int:
    """How long an answer's ``Retry-After`` cools its target (ms, capped; 0 = not at all)."""
    if retry_after_seconds is None or not retry_after_seconds > 0:
        return 0
    return min(math.ceil(retry_after_seconds * 1000), config.retry_after_max_ms)


def cool(gate: Gate, now_ms: int, ms: int) -> Gate:
    """Cool for ``ms`` from now, never shortening a longer cooling already set."""
    if ms <= 0:
        return gate
    return replace(gate, cool_until_ms=max(gate.cool_until_ms, now_ms + ms))


# --- the rate cap (GCRA) ---------------------------------------------------------------------


def rate_interval_us(requests_per_minute: int) -> int:
    """The spacing of a ``requests_per_minute`` cap (µs between calls on average)."""
    return 60_000_000 // requests_per_minute


def rate_tolerance_us(requests_per_minute: int, burst: int) -> int:
    """How far ahead of now the rate's arrival time may run: ``burst − 1`` spacings."""
    return max(burst - 1, 0) * rate_interval_us(requests_per_minute)


# --- admission -------------------------------------------------------------------------------


def live_slots(slots: Mapping[str, int], now_ms: int) -> dict[str, int]:
    """The slots whose lease has not expired at ``now_ms``."""
    return {token: until for token, until in slots.items() if until > now_ms}


def check(gate: Gate, limits: TargetLimits, now_ms: int, burst: int) -> tuple[Gate, Admission]:
    """Would ``gate`` admit a call now? Takes nothing; drops expired slots on the way
    (only once the in-flight check is reached, like the script)."""
    if gate.cool_until_ms > now_ms:
        return gate, Admission(Refusal.COOLING, gate.cool_until_ms - now_ms)
    day = now_ms // DAY_MS
    spent = gate.tok_day == day and gate.tok_used >= (limits.tokens_per_day or 0)
    if limits.tokens_per_day is not None and spent:
        return gate, Admission(Refusal.TOKENS, (day + 1) * DAY_MS - now_ms)
    if limits.max_in_flight is not None:
        gate = replace(gate, slots=live_slots(gate.slots, now_ms))
        if len(gate.slots) >= limits.max_in_flight:
            return gate, Admission(Refusal.IN_FLIGHT, 0)
    rpm = limits.requests_per_minute
    if rpm is not None:
        ahead = gate.tat_us - now_ms * 1000 - rate_tolerance_us(rpm, burst)
        if ahead > 0:
            return gate, Admission(Refusal.RATE, -(-ahead // 1000))
    return gate, Admission(None)


def take(
    gate: Gate, limits: TargetLimits, now_ms: int, *, slot: str, slot_lease_ms: int
) -> tuple[Gate, bool]:
    """What an admitted call takes: the next rate tick and, when capped, a slot leased for
    ``slot_lease_ms``. Returns the gate and whether a slot was taken."""
    rpm = limits.requests_per_minute
    if rpm is not None:
        tat = max(gate.tat_us, now_ms * 1000) + rate_interval_us(rpm)
        gate = replace(gate, tat_us=tat)
    if limits.max_in_flight is None:
        return gate, False
    return replace(gate, slots={**gate.slots, slot: now_ms + slot_lease_ms}), True


def release_slot(gate: Gate, slot: str | None) -> Gate:
    """A call ended: its slot is free (a slot already gone stays gone)."""
    if slot is None or slot not in gate.slots:
        return gate
    return replace(gate, slots={t: u for t, u in gate.slots.items() if t != slot})


def renew_slot(gate: Gate, slot: str, now_ms: int, lease_ms: int) -> tuple[Gate, bool]:
    """Extend a running call's slot to ``now + lease_ms``; False when it is gone (expired
    and dropped by another admission)."""
    if slot not in gate.slots:
        return gate, False
    return replace(gate, slots={**gate.slots, slot: now_ms + lease_ms}), True


# --- what a served call leaves behind ----------------------------------------------------------


def spend_tokens(gate: Gate, tokens: int, now_ms: int) -> Gate:
    """Count ``tokens`` against today's (UTC) budget."""
    if tokens <= 0:
        return gate
    day = now_ms // DAY_MS
    used = gate.tok_used + tokens if gate.tok_day == day else tokens
    return replace(gate, tok_day=day, tok_used=used)


def latency_bucket(elapsed_ms: int) -> int:
    """The histogram bucket of one success (index; ``len(LATENCY_BUCKETS_MS)`` = +Inf)."""
    for index, bound in enumerate(LATENCY_BUCKETS_MS):
        if elapsed_ms <= bound:
            return index
    return len(LATENCY_BUCKETS_MS)


def note_latency(latency: Latency, elapsed_ms: int, now_ms: int, window_ms: int) -> Latency:
    """One success of ``elapsed_ms`` at ``now_ms`` into the two windows."""
    index = now_ms // window_ms
    if index == latency.window:
        return replace(
            latency, cur_sum=latency.cur_sum + elapsed_ms, cur_count=latency.cur_count + 1
        )
    if index == latency.window + 1:
        return Latency(index, elapsed_ms, 1, latency.cur_sum, latency.cur_count)
    if index < latency.window:  # a worker whose clock is behind: count it as current
        return replace(
            latency, cur_sum=latency.cur_sum + elapsed_ms, cur_count=latency.cur_count + 1
        )
    return Latency(index, elapsed_ms, 1, 0, 0)


def recent(latency: Latency, now_ms: int, window_ms: int) -> tuple[int, int]:
    """(sum of ms, successes) over the current and the previous window at ``now_ms``."""
    index = now_ms // window_ms
    if latency.window >= index:
        return latency.cur_sum + latency.prev_sum, latency.cur_count + latency.prev_count
    if latency.window == index - 1:
        return latency.cur_sum, latency.cur_count
    return 0, 0


def served(gate: Gate, *, elapsed_ms: int, tokens: int, now_ms: int, window_ms: int) -> Gate:
    """A success: its latency (windows and histogram) and its tokens."""
    bucket = latency_bucket(elapsed_ms)
    buckets = {**gate.buckets, bucket: gate.buckets.get(bucket, 0) + 1}
    gate = replace(
        gate,
        latency=note_latency(gate.latency, elapsed_ms, now_ms, window_ms),
        buckets=buckets,
    )
    return spend_tokens(gate, tokens, now_ms)


# --- tokens of an answer ---------------------------------------------------------------------


def estimate_tokens(chars: int, config: GatewayConfig) -> int:
    """Tokens of ``chars`` characters when no usage was reported (rounded up)."""
    if chars <= 0:
        return 0
    return -(-chars // max(config.chars_per_token, 1))
