"""The pure twins of the per-target scripts: breaker policy and admission, composed.

The scripts ``breaker_acquire``, ``breaker_begin``, ``breaker_record`` and
``breaker_renew`` (``llm_client/_breaker/lua/``) each change a target's breaker
(:mod:`llm_client._breaker.model`) and its gate (:mod:`llm_client._gateway.model`) in one
atomic step. These functions are that composition, in the scripts' order, so a test can
drive random sequences through both and compare: the breaker decides first (an open
breaker refuses before any cap is read), then the gate, and nothing is taken unless
both admit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from llm_client._breaker import model as breaker
from llm_client._breaker.model import BreakerConfig, BreakerState, Outcome, Permit, Transition
from llm_client._gateway.model import (
    Admission,
    Gate,
    Refusal,
    TargetLimits,
    check,
    cool,
    release_slot,
    renew_slot,
    served,
    take,
)


@dataclass(frozen=True, slots=True)
class TargetState:
    """Everything the fleet stores about one target."""

    breaker: BreakerState = field(default_factory=BreakerState)
    gate: Gate = field(default_factory=Gate)


@dataclass(frozen=True, slots=True)
class Ask:
    """What one admission asks: the probe lease, the slot to take and its lease, the
    rate burst, and whether this is the fail-open probe (``force``) with the workflow's
    fail-open permit free."""

    lease_ms: int
    slot: str
    slot_lease_ms: int
    burst: int = 2
    force: bool = False
    failopen_free: bool = False


def _breaker_refuses(state: BreakerState, now_ms: int, force: bool) -> bool:
    if not state.opened:
        return False
    if breaker.probe_in_flight(state, now_ms):
        return True
    return now_ms < state.open_until_ms and not force


def acquire(
    target: TargetState, limits: TargetLimits, now_ms: int, ask: Ask
) -> tuple[TargetState, Permit | None, Admission, bool]:
    """``breaker.acquire``: the permit (or the refusal) and whether the workflow's
    fail-open permit was taken."""
    state = target.breaker
    if _breaker_refuses(state, now_ms, ask.force):
        return target, None, Admission(Refusal.OPEN), False
    gate, admission = check(target.gate, limits, now_ms, ask.burst)
    if admission.refusal is not None:
        return replace(target, gate=gate), None, admission, False
    failopen = state.opened and now_ms < state.open_until_ms  # only when forced
    if failopen and not ask.failopen_free:
        return replace(target, gate=gate), None, Admission(Refusal.OPEN), False
    state, permit = breaker.acquire(state, now_ms, lease_ms=ask.lease_ms, force=ask.force)
    assert permit is not None
    gate, slotted = take(gate, limits, now_ms, slot=ask.slot, slot_lease_ms=ask.slot_lease_ms)
    permit = replace(permit, slot=ask.slot if slotted else None)
    return TargetState(state, gate), permit, Admission(None), failopen


def begin(
    targets: Sequence[TargetState],
    limits: Sequence[TargetLimits],
    now_ms: int,
    ask: Ask,
    *,
    probes: bool,
) -> tuple[list[TargetState], int | None, Permit | None, list[Refusal | None]]:
    """``walk.begin``: (``probes``) the open targets whose half-open probe is due, then the
    closed ones in the given order, then (``probes``) the other open ones; the first
    admission's index and permit, and each examined target's refusal."""
    states = list(targets)
    due = [i for i, t in enumerate(states) if breaker.probe_due(t.breaker, now_ms)]
    order = [i for i in due if probes] + [i for i, t in enumerate(states) if not t.breaker.opened]
    if probes:
        order += [i for i, t in enumerate(states) if t.breaker.opened and i not in due]
    refusals: list[Refusal | None] = [None] * len(states)
    normal = replace(ask, force=False, failopen_free=False)
    for i in order:
        states[i], permit, admission, _ = acquire(states[i], limits[i], now_ms, normal)
        if permit is not None:
            return states, i, permit, refusals
        refusals[i] = admission.refusal
    return states, None, None, refusals


@dataclass(frozen=True, slots=True)
class Report:
    """What a finished attempt reports with its outcome: the cooling its answer asked for,
    and for a success its duration and tokens."""

    cool_ms: int = 0
    elapsed_ms: int | None = None
    tokens: int = 0
    window_ms: int = 30_000


def record(
    target: TargetState,
    permit: Permit,
    outcome: Outcome,
    now_ms: int,
    config: BreakerConfig,
    report: Report,
) -> tuple[TargetState, Transition | None]:
    """``breaker.record``: the slot freed, the cooling and a success's latency and tokens
    noted whatever the permit's generation, then the breaker's own rules."""
    gate = cool(release_slot(target.gate, permit.slot), now_ms, report.cool_ms)
    if outcome is Outcome.SUCCESS and report.elapsed_ms is not None:
        gate = served(
            gate,
            elapsed_ms=report.elapsed_ms,
            tokens=report.tokens,
            now_ms=now_ms,
            window_ms=report.window_ms,
        )
    state, transition = breaker.record(target.breaker, permit.generation, outcome, now_ms, config)
    return TargetState(state, gate), transition


def reset(target: TargetState) -> TargetState:
    """``breaker.reset``: the breaker closed and clean, and the gate's stored state with it
    (cooling, rate, tokens, latency); slots of calls still running stay theirs."""
    return TargetState(breaker.reset(target.breaker), Gate(slots=target.gate.slots))


def renew(
    target: TargetState, permit: Permit, now_ms: int, lease_ms: int
) -> tuple[TargetState, bool]:
    """``breaker.renew``: extend the probe's lease and the slot's; True while either is
    still this attempt's."""
    state, gate = target.breaker, target.gate
    probe = slot = False
    if permit.probe:
        state, probe = breaker.renew(state, permit.generation, now_ms, lease_ms=lease_ms)
    if permit.slot is not None:
        gate, slot = renew_slot(gate, permit.slot, now_ms, lease_ms)
    return TargetState(state, gate), probe or slot
