"""Circuit-breaker policy of one route target (§5), as pure functions on plain data.

This module is the specification; ``llm_client._breaker.store`` is a faithful
translation of it into Redis Lua so the whole fleet shares one breaker per
target. Every function takes ``now_ms`` (integer milliseconds) so the policy is
tested with tables and hypothesis, without Redis or a clock, and so Python and
Lua do the same integer arithmetic.

States (``Circuit``):

- **closed** — calls flow. Each charged failure adds to a consecutive count and
  to a time window; the breaker trips on ``failure_threshold`` consecutive
  charged failures, or when the window holds at least ``rate_min_calls`` calls
  of which more than ``rate_threshold`` failed.
- **open** — calls are refused for a cooldown that grows with repeated trips:
  ``cooldown × 2^(trips−1)``, capped at ``cooldown_max``.
- **half-open** — the cooldown has elapsed: exactly **one** probe permit is
  handed out. Probe success closes the breaker and resets trips; probe
  failure reopens it with the next, longer cooldown; a probe that ends without
  a verdict (capacity answer, caller error) frees the slot for the next probe.

Generations: every state change increments ``generation`` and every permit
carries the generation it was issued in. An outcome recorded with a stale
permit (issued before a change) is ignored, so a slow call that started while
the breaker was closed can neither close nor reopen a newer state. A probe
permit is a short lease (``lease_ms``, 30 s by default) that its holder renews
while the call runs (:func:`renew`), so an abandoned probe (a worker killed
mid-call) blocks the target for at most one lease, however long the call was
allowed to run (§5).

Outcomes (``Outcome``) and what charges the breaker (``classify``):

- success;
- failure — ``provider_unavailable``, ``provider_protocol_error``, ``provider_error``, and
  ``provider_timeout`` only when the attempt had a real slice of time and was
  not cut by the caller's deadline;
- neutral — ``capacity_unavailable`` / ``provider_overloaded``: neither success
  nor failure, so a busy healthy node is never quarantined (and never healed);
- not charged — non-retryable errors, short or deadline-cut timeouts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from llm_client._gateway.model import Latency, Refusal
from llm_client._retry.reasons import FailureReason


class Circuit(StrEnum):
    """What a caller sees of a breaker right now."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class Outcome(StrEnum):
    """How one attempt counts for its target's breaker."""

    SUCCESS = "success"
    FAILURE = "failure"
    NEUTRAL = "neutral"
    NOT_CHARGED = "not_charged"


class Transition(StrEnum):
    """A state change worth an event."""

    OPENED = "opened"
    REOPENED = "reopened"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class BreakerConfig:
    """Breaker thresholds (seconds for humans; the policy works in milliseconds)."""

    failure_threshold: int = 5
    rate_min_calls: int = 20
    rate_window_seconds: float = 120.0
    rate_threshold: float = 0.8
    cooldown_seconds: float = 30.0
    cooldown_max_seconds: float = 300.0
    timeout_min_slice_seconds: float = 30.0

    @property
    def rate_window_ms(self) -> int:
        return round(self.rate_window_seconds * 1000)

    @property
    def cooldown_ms(self) -> int:
        return round(self.cooldown_seconds * 1000)

    @property
    def cooldown_max_ms(self) -> int:
        return round(self.cooldown_max_seconds * 1000)


@dataclass(frozen=True, slots=True)
class BreakerState:
    """Everything stored about one target's breaker.

    ``window`` holds ``(at_ms, failed)`` for the recent successes and charged
    failures (the failure-rate rule); neutral and uncharged outcomes are not
    calls for this rule.
    """

    opened: bool = False
    generation: int = 0
    consecutive: int = 0
    trips: int = 0
    #: When the breaker first opened in the current incident (0 while closed).
    opened_at_ms: int = 0
    #: End of the current cooldown (0 while closed).
    open_until_ms: int = 0
    #: Expiry of the outstanding probe permit (0 = none outstanding).
    probe_until_ms: int = 0
    window: tuple[tuple[int, bool], ...] = field(default=())


@dataclass(frozen=True, slots=True)
class Permit:
    """Leave to make one attempt; pass ``generation`` back with the outcome.

    ``slot``: the in-flight slot the attempt holds on a target with ``max_in_flight``
    (:mod:`llm_client._gateway.model`), freed by the outcome's record."""

    generation: int
    probe: bool
    slot: str | None = None


@dataclass(frozen=True, slots=True)
class BreakerView:
    """The read model for operators, metrics, pages and the walker's ordering."""

    target: str
    circuit: Circuit
    consecutive_failures: int
    trips: int
    opened_at_ms: int | None
    cooldown_remaining_s: float
    probe_in_flight: bool
    window_calls: int
    window_failures: int
    generation: int

    @property
    def admissible(self) -> bool:
        """Would a call be let through right now (closed, or a free probe slot)?"""
        return self.circuit is Circuit.CLOSED or (
            self.circuit is Circuit.HALF_OPEN and not self.probe_in_flight
        )

    def as_dict(self) -> dict[str, object]:
        """JSON-able form for the CLI (``breakers list --json``)."""
        return {
            "target": self.target,
            "state": self.circuit.value,
            "consecutive_failures": self.consecutive_failures,
            "trips": self.trips,
            "opened_at_ms": self.opened_at_ms,
            "cooldown_remaining_s": round(self.cooldown_remaining_s, 3),
            "probe_in_flight": self.probe_in_flight,
            "window_calls": self.window_calls,
            "window_failures": self.window_failures,
            "generation": self.generation,
        }


# --- charging rules (§5) -------------------------------------------------------------------

_CHARGED = frozenset(
    {
        FailureReason.PROVIDER_UNAVAILABLE,
        FailureReason.PROVIDER_PROTOCOL_ERROR,
        FailureReason.PROVIDER_ERROR,
    }
)
_NEUTRAL = frozenset({FailureReason.CAPACITY_UNAVAILABLE, FailureReason.PROVIDER_OVERLOADED})


def classify(
    reason: FailureReason | None,
    *,
    slice_seconds: float,
    deadline_cut: bool,
    min_slice_seconds: float,
) -> Outcome:
    """How a failed attempt with retry ``reason`` counts for the breaker.

    ``slice_seconds`` is how long the attempt ran; ``deadline_cut`` says the
    caller's deadline (not the backend) ended it.
    """
    if reason is None:
        return Outcome.NOT_CHARGED
    if reason in _NEUTRAL:
        return Outcome.NEUTRAL
    if reason in _CHARGED:
        return Outcome.FAILURE
    # provider_timeout: only a real slice that the caller did not cut is the backend's fault.
    if not deadline_cut and slice_seconds >= min_slice_seconds:
        return Outcome.FAILURE
    return Outcome.NOT_CHARGED


# --- transitions ---------------------------------------------------------------------------


def cooldown_ms(trips: int, config: BreakerConfig) -> int:
    """Open period after the ``trips``-th consecutive trip: base × 2^(trips−1), capped."""
    exponent = max(trips - 1, 0)
    # Cap the exponent first so huge trip counts never build huge integers.
    if exponent >= 32:
        return config.cooldown_max_ms
    return min(config.cooldown_ms << exponent, config.cooldown_max_ms)


def prune(
    window: tuple[tuple[int, bool], ...], now_ms: int, config: BreakerConfig
) -> tuple[tuple[int, bool], ...]:
    """Drop window entries at or before ``now − rate_window``."""
    horizon = now_ms - config.rate_window_ms
    return tuple(entry for entry in window if entry[0] > horizon)


def circuit(state: BreakerState, now_ms: int) -> Circuit:
    """What a caller sees: closed; open during the cooldown; half-open after it."""
    if not state.opened:
        return Circuit.CLOSED
    if now_ms < state.open_until_ms:
        return Circuit.OPEN
    return Circuit.HALF_OPEN


def probe_in_flight(state: BreakerState, now_ms: int) -> bool:
    """An unexpired probe permit is outstanding."""
    return state.opened and state.probe_until_ms > now_ms


def probe_due(state: BreakerState, now_ms: int) -> bool:
    """Open, its cooldown over and no probe outstanding: the next caller's half-open probe
    is due. A walk tries such a target *first* (§6), so an opened target is probed even
    while a healthy peer could serve every call."""
    return circuit(state, now_ms) is Circuit.HALF_OPEN and not probe_in_flight(state, now_ms)


def acquire(
    state: BreakerState, now_ms: int, *, lease_ms: int, force: bool = False
) -> tuple[BreakerState, Permit | None]:
    """Ask leave for one attempt.

    Closed: a shared permit of the current generation. Open: refused during the
    cooldown (unless ``force``, the fail-open probe) and while another probe is
    outstanding; otherwise the single probe permit, valid for ``lease_ms``.
    """
    if not state.opened:
        return state, Permit(state.generation, probe=False)
    if probe_in_flight(state, now_ms):
        return state, None
    if not force and now_ms < state.open_until_ms:
        return state, None
    generation = state.generation + 1
    issued = replace(state, generation=generation, probe_until_ms=now_ms + lease_ms)
    return issued, Permit(generation, probe=True)


def renew(
    state: BreakerState, generation: int, now_ms: int, *, lease_ms: int
) -> tuple[BreakerState, bool]:
    """Extend the probe permit of ``generation`` to ``now + lease_ms``; False when it is gone.

    Only the current probe can be renewed: a closed breaker's permits are shared
    and never expire, and any change since the permit was issued (outcome
    recorded, newer probe granted, reset) moved the generation on. A probe whose
    lease lapsed without anybody taking the slot is still the current one, so
    its holder renews it (e.g. after the store was briefly unreachable).
    """
    if not state.opened or generation != state.generation or state.probe_until_ms <= 0:
        return state, False
    return replace(state, probe_until_ms=now_ms + lease_ms), True


def record(
    state: BreakerState,
    generation: int,
    outcome: Outcome,
    now_ms: int,
    config: BreakerConfig,
) -> tuple[BreakerState, Transition | None]:
    """Apply one attempt's ``outcome``, reported with its permit's ``generation``."""
    if generation != state.generation:
        return state, None  # stale permit: a newer state is not this call's business
    if state.opened:
        return _record_probe(state, outcome, now_ms, config)
    return _record_closed(state, outcome, now_ms, config)


def _record_closed(
    state: BreakerState, outcome: Outcome, now_ms: int, config: BreakerConfig
) -> tuple[BreakerState, Transition | None]:
    if outcome is Outcome.SUCCESS:
        window = (*prune(state.window, now_ms, config), (now_ms, False))
        return replace(state, consecutive=0, window=window), None
    if outcome is not Outcome.FAILURE:
        return state, None  # neutral / not charged: neither success nor failure
    window = (*prune(state.window, now_ms, config), (now_ms, True))
    consecutive = state.consecutive + 1
    if not _trips(consecutive, window, config):
        return replace(state, consecutive=consecutive, window=window), None
    opened = _tripped(state, consecutive, now_ms, config)
    return replace(opened, opened_at_ms=now_ms, window=window), Transition.OPENED


def _record_probe(
    state: BreakerState, outcome: Outcome, now_ms: int, config: BreakerConfig
) -> tuple[BreakerState, Transition | None]:
    generation = state.generation + 1
    if outcome is Outcome.SUCCESS:
        return BreakerState(generation=generation), Transition.CLOSED
    if outcome is Outcome.FAILURE:
        return _tripped(state, state.consecutive + 1, now_ms, config), Transition.REOPENED
    # No verdict: free the probe slot for the next caller.
    return replace(state, generation=generation, probe_until_ms=0), None


def _tripped(
    state: BreakerState, consecutive: int, now_ms: int, config: BreakerConfig
) -> BreakerState:
    """Opened (or reopened) by a charged failure: a new generation, one more trip, the
    next cooldown, no probe outstanding (a probe's failure keeps ``opened_at_ms``)."""
    trips = state.trips + 1
    return replace(
        state,
        opened=True,
        generation=state.generation + 1,
        consecutive=consecutive,
        trips=trips,
        open_until_ms=now_ms + cooldown_ms(trips, config),
        probe_until_ms=0,
    )


def _trips(consecutive: int, window: tuple[tuple[int, bool], ...], config: BreakerConfig) -> bool:
    if consecutive >= config.failure_threshold:
        return True
    calls = len(window)
    if calls < config.rate_min_calls:
        return False
    failures = sum(1 for _, failed in window if failed)
    return failures / calls > config.rate_threshold


def reset(state: BreakerState) -> BreakerState:
    """Operator reset: closed and clean, in a new generation (outstanding permits go stale)."""
    return BreakerState(generation=state.generation + 1)


def view(target: str, state: BreakerState, now_ms: int, config: BreakerConfig) -> BreakerView:
    """The read model of ``state`` at ``now_ms``."""
    window = prune(state.window, now_ms, config)
    current = circuit(state, now_ms)
    remaining = max(state.open_until_ms - now_ms, 0) / 1000 if state.opened else 0.0
    return BreakerView(
        target=target,
        circuit=current,
        consecutive_failures=state.consecutive,
        trips=state.trips,
        opened_at_ms=state.opened_at_ms if state.opened else None,
        cooldown_remaining_s=remaining,
        probe_in_flight=probe_in_flight(state, now_ms),
        window_calls=len(window),
        window_failures=sum(1 for _, failed in window if failed),
        generation=state.generation,
    )


@dataclass(frozen=True, slots=True)
class Begun:
    """What :meth:`BreakerStore.begin` found: closed flags in the given order, the first
    permit granted in the walker's order (``index`` into the given targets), if any, each
    target's refusal when it was tried before that (None: admitted or not tried), and
    each target's latency windows and cooling end as read (the next walk's order)."""

    closed: tuple[bool, ...]
    index: int | None
    permit: Permit | None
    refusals: tuple[Refusal | None, ...] = ()
    latency: tuple[Latency, ...] = ()
    cool_until_ms: tuple[int, ...] = ()
    #: Open targets whose half-open probe was due (tried first), in the given order.
    due: tuple[bool, ...] = ()


@dataclass(frozen=True, slots=True)
class Admitted:
    """What :meth:`BreakerStore.admit` answered: the permit, or why not and when asking
    again may be worth it (ms; 0 = unknown); and whether the fail-open permit was taken."""

    permit: Permit | None
    refusal: Refusal | None = None
    ready_ms: int = 0
    failopen_taken: bool = False
