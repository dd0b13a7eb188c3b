"""§5 breaker policy: tables for every rule, hypothesis for the invariants (no Redis, no clock)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from llm_client import BreakerConfig, Circuit, FailureReason, Outcome
from llm_client._breaker.model import (
    BreakerState,
    Permit,
    Transition,
    acquire,
    circuit,
    classify,
    cooldown_ms,
    record,
    renew,
    reset,
    view,
)

R = FailureReason
CFG = BreakerConfig()
LEASE = 60_000
T0 = 1_700_000_000_000


def fail_n(
    state: BreakerState, n: int, now: int, step: int = 1, cfg: BreakerConfig = CFG
) -> tuple[BreakerState, int]:
    for _ in range(n):
        state, permit = acquire(state, now, lease_ms=LEASE)
        assert permit is not None
        state, _ = record(state, permit.generation, Outcome.FAILURE, now, cfg)
        now += step
    return state, now


# --- charging rules ------------------------------------------------------------------------

CLASSIFY_ROWS = [
    pytest.param(R.PROVIDER_UNAVAILABLE, 0.1, False, Outcome.FAILURE, id="unavailable-charges"),
    pytest.param(R.PROVIDER_PROTOCOL_ERROR, 0.1, False, Outcome.FAILURE, id="protocol-charges"),
    pytest.param(R.PROVIDER_UNAVAILABLE, 0.1, True, Outcome.FAILURE, id="unavailable-even-at-cut"),
    pytest.param(R.PROVIDER_ERROR, 0.1, False, Outcome.FAILURE, id="provider-error-charges"),
    pytest.param(R.PROVIDER_ERROR, 0.1, True, Outcome.FAILURE, id="provider-error-even-at-cut"),
    pytest.param(R.PROVIDER_TIMEOUT, 30.0, False, Outcome.FAILURE, id="timeout-real-slice"),
    pytest.param(R.PROVIDER_TIMEOUT, 720.0, False, Outcome.FAILURE, id="timeout-task-budget"),
    pytest.param(R.PROVIDER_TIMEOUT, 29.9, False, Outcome.NOT_CHARGED, id="timeout-short-slice"),
    pytest.param(R.PROVIDER_TIMEOUT, 600.0, True, Outcome.NOT_CHARGED, id="timeout-deadline-cut"),
    pytest.param(R.CAPACITY_UNAVAILABLE, 60.0, False, Outcome.NEUTRAL, id="capacity-neutral"),
    pytest.param(R.PROVIDER_OVERLOADED, 0.1, False, Outcome.NEUTRAL, id="overloaded-neutral"),
    pytest.param(None, 0.1, False, Outcome.NOT_CHARGED, id="non-retryable-free"),
    pytest.param(None, 100.0, True, Outcome.NOT_CHARGED, id="non-retryable-cut-free"),
]


@pytest.mark.parametrize(("reason", "slice_s", "cut", "expected"), CLASSIFY_ROWS)
def test_classify(reason: R | None, slice_s: float, cut: bool, expected: Outcome) -> None:
    assert classify(reason, slice_seconds=slice_s, deadline_cut=cut, min_slice_seconds=30.0) is (
        expected
    )


# --- cooldown ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trips", "expected_s"),
    [(1, 30), (2, 60), (3, 120), (4, 240), (5, 300), (6, 300), (40, 300), (10_000, 300)],
)
def test_cooldown_doubles_per_trip_and_caps(trips: int, expected_s: int) -> None:
    assert cooldown_ms(trips, CFG) == expected_s * 1000


# --- trips ---------------------------------------------------------------------------------


def test_five_consecutive_failures_open_with_first_cooldown() -> None:
    state, now = fail_n(BreakerState(), 4, T0)
    assert circuit(state, now) is Circuit.CLOSED
    state, permit = acquire(state, now, lease_ms=LEASE)
    assert permit is not None
    state, transition = record(state, permit.generation, Outcome.FAILURE, now, CFG)
    assert transition is Transition.OPENED
    assert circuit(state, now) is Circuit.OPEN
    assert state.trips == 1
    assert state.open_until_ms == now + 30_000
    assert state.opened_at_ms == now


def test_success_resets_consecutive_count() -> None:
    state, now = fail_n(BreakerState(), 4, T0)
    state, permit = acquire(state, now, lease_ms=LEASE)
    assert permit is not None
    state, _ = record(state, permit.generation, Outcome.SUCCESS, now, CFG)
    assert state.consecutive == 0
    state, now = fail_n(state, 4, now + 1)
    assert circuit(state, now) is Circuit.CLOSED


@pytest.mark.parametrize("outcome", [Outcome.NEUTRAL, Outcome.NOT_CHARGED])
def test_neutral_outcomes_neither_charge_nor_heal(outcome: Outcome) -> None:
    state, now = fail_n(BreakerState(), 4, T0)
    for _ in range(100):
        state, permit = acquire(state, now, lease_ms=LEASE)
        assert permit is not None
        state, transition = record(state, permit.generation, outcome, now, CFG)
        assert transition is None
    assert state.consecutive == 4  # not healed either
    assert state.window == tuple((T0 + i, True) for i in range(4))  # not a call for the rate rule
    state, _ = fail_n(state, 1, now)
    assert state.opened


def test_failure_rate_trips_with_enough_volume() -> None:
    # 17 failures and 3 successes interleaved so no run of 5 failures: 85 % > 80 % over 20 calls.
    pattern = [True] * 4 + [False] + [True] * 4 + [False] + [True] * 4 + [False] + [True] * 5
    cfg = BreakerConfig(failure_threshold=6)
    state, now = BreakerState(), T0
    transitions = []
    for failed in pattern:
        state, permit = acquire(state, now, lease_ms=LEASE)
        assert permit is not None
        state, transition = record(
            state, permit.generation, Outcome.FAILURE if failed else Outcome.SUCCESS, now, cfg
        )
        transitions.append(transition)
        now += 1000
    assert sum(pattern) == 17
    assert transitions[-1] is Transition.OPENED
    assert all(t is None for t in transitions[:-1])


def test_failure_rate_needs_more_than_threshold() -> None:
    # Exactly 80 % over 20 calls does not trip (the rule is "> 80 %").
    cfg = BreakerConfig(failure_threshold=100)
    state, now = BreakerState(), T0
    for i in range(20):
        state, permit = acquire(state, now, lease_ms=LEASE)
        assert permit is not None
        outcome = Outcome.SUCCESS if i % 5 == 4 else Outcome.FAILURE
        state, transition = record(state, permit.generation, outcome, now, cfg)
        assert transition is None
        now += 1000
    assert view("t", state, now, cfg).window_failures == 16


def test_failure_rate_window_forgets_old_calls() -> None:
    cfg = BreakerConfig(failure_threshold=100)
    state, now = fail_n(BreakerState(), 19, T0, step=1000, cfg=cfg)
    now += 120_000  # all 19 fall out of the window
    state, now = fail_n(state, 19, now, step=1000, cfg=cfg)
    assert not state.opened
    assert view("t", state, now, cfg).window_calls == 19


# --- half-open -----------------------------------------------------------------------------


def opened_state() -> tuple[BreakerState, int]:
    state, now = fail_n(BreakerState(), 5, T0)
    assert state.opened
    return state, now - 1


def test_open_refuses_until_cooldown_then_exactly_one_probe() -> None:
    state, now = opened_state()
    state, permit = acquire(state, now + 29_999, lease_ms=LEASE)
    assert permit is None
    after = now + 30_000
    assert circuit(state, after) is Circuit.HALF_OPEN
    state, probe = acquire(state, after, lease_ms=LEASE)
    assert probe is not None
    assert probe.probe
    for i in range(20):
        state, other = acquire(state, after + i, lease_ms=LEASE)
        assert other is None


def test_probe_success_closes_and_resets() -> None:
    state, now = opened_state()
    state, probe = acquire(state, now + 30_000, lease_ms=LEASE)
    assert probe is not None
    state, transition = record(state, probe.generation, Outcome.SUCCESS, now + 30_001, CFG)
    assert transition is Transition.CLOSED
    assert state == BreakerState(generation=state.generation)
    assert circuit(state, now + 30_001) is Circuit.CLOSED


def test_probe_failure_reopens_with_doubled_cooldown() -> None:
    state, now = opened_state()
    t = now + 30_000
    state, probe = acquire(state, t, lease_ms=LEASE)
    assert probe is not None
    state, transition = record(state, probe.generation, Outcome.FAILURE, t + 5, CFG)
    assert transition is Transition.REOPENED
    assert state.trips == 2
    assert state.open_until_ms == t + 5 + 60_000
    assert state.opened_at_ms == T0 + 4  # since when: the first trip of the incident
    state, again = acquire(state, t + 5 + 59_999, lease_ms=LEASE)
    assert again is None


@pytest.mark.parametrize("outcome", [Outcome.NEUTRAL, Outcome.NOT_CHARGED])
def test_probe_without_verdict_frees_the_slot(outcome: Outcome) -> None:
    state, now = opened_state()
    t = now + 30_000
    state, probe = acquire(state, t, lease_ms=LEASE)
    assert probe is not None
    state, transition = record(state, probe.generation, outcome, t + 1, CFG)
    assert transition is None
    assert state.opened
    assert state.trips == 1
    state, next_probe = acquire(state, t + 2, lease_ms=LEASE)
    assert next_probe is not None
    assert next_probe.probe


def test_abandoned_probe_expires_and_its_late_verdict_is_stale() -> None:
    state, now = opened_state()
    t = now + 30_000
    state, first = acquire(state, t, lease_ms=1000)
    assert first is not None
    state, blocked = acquire(state, t + 999, lease_ms=1000)
    assert blocked is None
    state, second = acquire(state, t + 1000, lease_ms=1000)
    assert second is not None
    assert second.generation > first.generation
    before = state
    state, transition = record(state, first.generation, Outcome.SUCCESS, t + 1001, CFG)
    assert transition is None
    assert state == before


def test_renewed_probe_holds_the_slot_past_its_first_lease() -> None:
    state, now = opened_state()
    t = now + 30_000
    state, probe = acquire(state, t, lease_ms=1000)
    assert probe is not None
    for k in range(1, 6):  # a long call renews every 300 ms
        state, renewed = renew(state, probe.generation, t + 300 * k, lease_ms=1000)
        assert renewed
    assert state.probe_until_ms == t + 1500 + 1000
    state, other = acquire(state, t + 2499, lease_ms=1000)
    assert other is None
    state, other = acquire(state, t + 2500, lease_ms=1000)  # holder stopped renewing
    assert other is not None


def test_a_lapsed_lease_is_renewed_when_nobody_took_the_slot() -> None:
    state, now = opened_state()
    t = now + 30_000
    state, probe = acquire(state, t, lease_ms=1000)
    assert probe is not None
    state, renewed = renew(state, probe.generation, t + 5000, lease_ms=1000)
    assert renewed
    assert state.probe_until_ms == t + 6000


RENEW_REFUSED = [
    pytest.param("recorded", id="after-its-own-verdict"),
    pytest.param("taken", id="after-a-newer-probe"),
    pytest.param("reset", id="after-operator-reset"),
    pytest.param("closed", id="closed-permit"),
]


@pytest.mark.parametrize("change", RENEW_REFUSED)
def test_renew_refuses_a_permit_that_is_not_the_current_probe(change: str) -> None:
    state, now = opened_state()
    t = now + 30_000
    state, probe = acquire(state, t, lease_ms=1000)
    assert probe is not None
    if change == "recorded":
        state, _ = record(state, probe.generation, Outcome.NEUTRAL, t + 1, CFG)
    elif change == "taken":
        state, newer = acquire(state, t + 1000, lease_ms=1000)
        assert newer is not None
    elif change == "reset":
        state = reset(state)
    else:
        state, probe = acquire(BreakerState(), t, lease_ms=1000)
        assert probe is not None
    before = state
    state, renewed = renew(state, probe.generation, t + 1001, lease_ms=1000)
    assert not renewed
    assert state == before


def test_stale_closed_permit_cannot_close_a_later_half_open_probe() -> None:
    state = BreakerState()
    state, old = acquire(state, T0, lease_ms=LEASE)
    assert old is not None
    state, now = fail_n(state, 5, T0)
    state, probe = acquire(state, now + 30_000, lease_ms=LEASE)
    assert probe is not None
    state2, transition = record(state, old.generation, Outcome.SUCCESS, now + 30_001, CFG)
    assert transition is None
    assert state2 == state
    state3, transition = record(state, old.generation, Outcome.FAILURE, now + 30_001, CFG)
    assert transition is None
    assert state3 == state


def test_force_probe_ignores_cooldown_but_not_an_outstanding_probe() -> None:
    state, now = opened_state()
    state, permit = acquire(state, now + 1, lease_ms=LEASE, force=True)
    assert permit is not None
    assert permit.probe
    state, other = acquire(state, now + 2, lease_ms=LEASE, force=True)
    assert other is None


def test_reset_closes_and_makes_permits_stale() -> None:
    state, now = opened_state()
    state, probe = acquire(state, now + 30_000, lease_ms=LEASE)
    assert probe is not None
    state = reset(state)
    assert circuit(state, now) is Circuit.CLOSED
    assert state.trips == 0
    assert state.consecutive == 0
    same, transition = record(state, probe.generation, Outcome.FAILURE, now + 30_001, CFG)
    assert transition is None
    assert same == state


def test_view_reports_state_for_operators() -> None:
    state, now = opened_state()
    seen = view("farm/m", state, now + 10_000, CFG)
    assert seen.circuit is Circuit.OPEN
    assert seen.consecutive_failures == 5
    assert seen.trips == 1
    assert seen.cooldown_remaining_s == pytest.approx(20.0)
    assert seen.window_failures == 5
    assert not seen.admissible
    assert seen.as_dict()["state"] == "open"
    later = view("farm/m", state, now + 30_000, CFG)
    assert later.circuit is Circuit.HALF_OPEN
    assert later.admissible


# --- invariants (hypothesis) ---------------------------------------------------------------

OUTCOMES = st.sampled_from(list(Outcome))


class BreakerMachine(RuleBasedStateMachine):
    """Random permits, outcomes, stale reports and clock jumps never break the rules."""

    @initialize()
    def start(self) -> None:
        self.state = BreakerState()
        self.now = T0
        self.permits: list[Permit] = []

    @rule(advance=st.integers(min_value=0, max_value=200_000))
    def tick(self, advance: int) -> None:
        self.now += advance

    @rule(force=st.booleans())
    def take_permit(self, force: bool) -> None:
        before = self.state
        self.state, permit = acquire(self.state, self.now, lease_ms=LEASE, force=force)
        if permit is None:
            assert self.state == before
            return
        if permit.probe:
            assert before.opened
            assert self.state.generation == before.generation + 1
        else:
            assert not before.opened
        self.permits.append(permit)

    @rule(data=st.data(), outcome=OUTCOMES)
    def report(self, data: st.DataObject, outcome: Outcome) -> None:
        if not self.permits:
            return
        permit = self.permits.pop(data.draw(st.integers(0, len(self.permits) - 1)))
        before = self.state
        was_closed = not before.opened
        self.state, transition = record(self.state, permit.generation, outcome, self.now, CFG)
        if permit.generation != before.generation:
            assert self.state == before  # stale permits change nothing
            assert transition is None
            return
        if was_closed and outcome is Outcome.SUCCESS:
            assert self.state.consecutive == 0
            assert not self.state.opened
        if outcome in (Outcome.NEUTRAL, Outcome.NOT_CHARGED) and was_closed:
            assert self.state == before
        if transition is not None:
            assert self.state.generation == before.generation + 1

    @rule(data=st.data(), lease=st.integers(min_value=1, max_value=60_000))
    def renew_permit(self, data: st.DataObject, lease: int) -> None:
        if not self.permits:
            return
        permit = self.permits[data.draw(st.integers(0, len(self.permits) - 1))]
        before = self.state
        self.state, renewed = renew(self.state, permit.generation, self.now, lease_ms=lease)
        if not renewed:
            assert self.state == before
            return
        # only the current probe is renewed, and only its lease changes
        assert permit.probe
        assert permit.generation == before.generation
        assert self.state == replace(before, probe_until_ms=self.now + lease)

    @rule()
    def operator_reset(self) -> None:
        self.state = reset(self.state)

    @invariant()
    def at_most_one_live_probe(self) -> None:
        if self.state.opened:
            live = [p for p in self.permits if p.generation == self.state.generation]
            assert len(live) <= 1
            assert all(p.probe for p in live)

    @invariant()
    def closed_means_clean(self) -> None:
        if not self.state.opened:
            assert self.state.trips == 0
            assert self.state.open_until_ms == 0
            assert self.state.consecutive < CFG.failure_threshold

    @invariant()
    def cooldown_is_bounded(self) -> None:
        if self.state.opened:
            assert self.state.trips >= 1
            assert self.state.open_until_ms - self.now <= CFG.cooldown_max_ms


TestBreakerMachine = BreakerMachine.TestCase
TestBreakerMachine.settings = settings(max_examples=200, stateful_step_count=60, deadline=None)


@given(st.lists(st.sampled_from([Outcome.FAILURE, Outcome.SUCCESS]), max_size=200))
@settings(max_examples=200, deadline=None)
def test_consecutive_rule_matches_a_simple_counter(outcomes: list[Outcome]) -> None:
    """In closed state with the rate rule out of reach, it opens exactly at the 5th failure in a row."""
    cfg = BreakerConfig(rate_min_calls=10_000)
    state, now, streak = BreakerState(), T0, 0
    for outcome in outcomes:
        if state.opened:
            break
        state, permit = acquire(state, now, lease_ms=LEASE)
        assert permit is not None
        state, transition = record(state, permit.generation, outcome, now, cfg)
        streak = streak + 1 if outcome is Outcome.FAILURE else 0
        assert (transition is Transition.OPENED) == (streak == 5)
        now += 10
