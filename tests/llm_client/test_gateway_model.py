"""A target's admission beyond its breaker (§3, §6), pure: cooling, caps, latency, tokens.

Tables pin one rule per row; hypothesis checks the promises over random call sequences:
a rate cap never lets more than ``burst + elapsed / interval`` calls through, the slots
never exceed ``max_in_flight``, and a cooling target admits nothing until it ends.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_client import LATENCY_BUCKETS_MS, GatewayConfig, TargetLimits
from llm_client._gateway.model import (
    DAY_MS,
    Admission,
    Gate,
    Latency,
    Refusal,
    check,
    cool,
    cooling_ms,
    estimate_tokens,
    latency_bucket,
    note_latency,
    rate_interval_us,
    recent,
    release_slot,
    renew_slot,
    served,
    spend_tokens,
    take,
)

T0 = 1_700_000_000_000
NONE = TargetLimits()
CONFIG = GatewayConfig(retry_after_max_seconds=60)


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [
        pytest.param(None, 0, id="no-retry-after"),
        pytest.param(0.0, 0, id="zero"),
        pytest.param(-3.0, 0, id="negative"),
        pytest.param(30.0, 30_000, id="thirty-seconds"),
        pytest.param(0.0004, 1, id="rounded-up-to-a-ms"),
        pytest.param(3600.0, 60_000, id="capped-by-the-setting"),
        pytest.param(float("nan"), 0, id="nan"),
    ],
)
def test_cooling_ms(retry_after: float | None, expected: int) -> None:
    assert cooling_ms(retry_after, CONFIG) == expected


def test_cooling_refuses_until_it_ends_and_is_never_shortened() -> None:
    gate = cool(Gate(), T0, 30_000)
    assert check(gate, NONE, T0 + 29_999, 2)[1] == Admission(Refusal.COOLING, 1)
    assert check(gate, NONE, T0 + 30_000, 2)[1] == Admission(None)
    assert cool(gate, T0 + 1, 5_000).cool_until_ms == T0 + 30_000  # a shorter one later
    assert cool(gate, T0 + 1, 60_000).cool_until_ms == T0 + 60_001  # a longer one wins
    assert cool(gate, T0, 0) == gate


@pytest.mark.parametrize(
    ("gate", "limits", "now", "expected"),
    [
        pytest.param(Gate(), NONE, T0, Admission(None), id="uncapped-admits"),
        pytest.param(
            Gate(cool_until_ms=T0 + 5, tok_day=T0 // DAY_MS, tok_used=99),
            TargetLimits(tokens_per_day=10),
            T0,
            Admission(Refusal.COOLING, 5),
            id="cooling-before-tokens",
        ),
        pytest.param(
            Gate(tok_day=T0 // DAY_MS, tok_used=10),
            TargetLimits(tokens_per_day=10),
            T0,
            Admission(Refusal.TOKENS, (T0 // DAY_MS + 1) * DAY_MS - T0),
            id="tokens-spent-until-midnight",
        ),
        pytest.param(
            Gate(tok_day=T0 // DAY_MS - 1, tok_used=10**9),
            TargetLimits(tokens_per_day=10),
            T0,
            Admission(None),
            id="yesterdays-tokens-do-not-count",
        ),
        pytest.param(
            Gate(slots={"a": T0 + 1, "b": T0 + 1}),
            TargetLimits(max_in_flight=2),
            T0,
            Admission(Refusal.IN_FLIGHT, 0),
            id="slots-full",
        ),
        pytest.param(
            Gate(slots={"a": T0 + 1, "b": T0}),
            TargetLimits(max_in_flight=2),
            T0,
            Admission(None),
            id="an-expired-slot-is-free",
        ),
        pytest.param(
            Gate(tat_us=(T0 + 2_000) * 1000),
            TargetLimits(requests_per_minute=60),
            T0,
            Admission(Refusal.RATE, 1_000),
            id="rate-not-due-yet",
        ),
        pytest.param(
            Gate(tat_us=(T0 + 1_000) * 1000),
            TargetLimits(requests_per_minute=60),
            T0,
            Admission(None),
            id="rate-within-the-burst",
        ),
        pytest.param(
            Gate(tat_us=(T0 + 2_000) * 1000, slots={"a": T0 + 9}),
            TargetLimits(max_in_flight=1, requests_per_minute=60),
            T0,
            Admission(Refusal.IN_FLIGHT, 0),
            id="in-flight-before-rate",
        ),
    ],
)
def test_check(gate: Gate, limits: TargetLimits, now: int, expected: Admission) -> None:
    assert check(gate, limits, now, 2)[1] == expected


def test_take_advances_the_rate_and_leases_a_slot() -> None:
    limits = TargetLimits(max_in_flight=2, requests_per_minute=60)
    gate, slotted = take(Gate(), limits, T0, slot="s1", slot_lease_ms=30_000)
    assert slotted
    assert gate.slots == {"s1": T0 + 30_000}
    assert gate.tat_us == T0 * 1000 + 1_000_000
    gate, _ = take(gate, limits, T0, slot="s2", slot_lease_ms=30_000)
    assert gate.tat_us == T0 * 1000 + 2_000_000  # ahead of now by the burst
    assert check(gate, limits, T0, 2)[1].refusal is Refusal.IN_FLIGHT
    gate = release_slot(gate, "s1")
    assert check(gate, limits, T0, 2)[1] == Admission(Refusal.RATE, 1_000)
    assert take(Gate(), NONE, T0, slot="x", slot_lease_ms=1) == (Gate(), False)


def test_a_slot_is_renewed_while_held_and_not_once_gone() -> None:
    gate, _ = take(Gate(), TargetLimits(max_in_flight=1), T0, slot="s", slot_lease_ms=100)
    gate, renewed = renew_slot(gate, "s", T0 + 90, 100)
    assert renewed
    assert gate.slots == {"s": T0 + 190}
    assert renew_slot(release_slot(gate, "s"), "s", T0 + 91, 100)[1] is False
    assert release_slot(gate, None) == gate


@given(
    rpm=st.integers(1, 6000),
    burst=st.integers(1, 5),
    gaps=st.lists(st.integers(0, 5_000), min_size=1, max_size=200),
)
@settings(max_examples=200, deadline=None)
def test_the_rate_cap_never_admits_more_than_its_burst_plus_its_rate(
    rpm: int, burst: int, gaps: list[int]
) -> None:
    limits = TargetLimits(requests_per_minute=rpm)
    gate, now, admitted = Gate(), T0, []
    for gap in gaps:
        now += gap
        gate, verdict = check(gate, limits, now, burst)
        if verdict.refusal is None:
            gate, _ = take(gate, limits, now, slot="-", slot_lease_ms=1)
            admitted.append(now)
        else:
            assert verdict.refusal is Refusal.RATE
            assert verdict.ready_ms > 0
    interval_ms = rate_interval_us(rpm) / 1000
    for i, start in enumerate(admitted):  # any window [start, end] holds at most this many
        for j in range(i, len(admitted)):
            span = admitted[j] - start
            assert j - i + 1 <= burst + span / interval_ms + 1e-9


@given(
    cap=st.integers(1, 4),
    ops=st.lists(st.tuples(st.booleans(), st.integers(0, 300)), max_size=120),
)
@settings(max_examples=200, deadline=None)
def test_live_slots_never_exceed_max_in_flight(cap: int, ops: list[tuple[bool, int]]) -> None:
    limits = TargetLimits(max_in_flight=cap)
    gate, now, held, n = Gate(), T0, [], 0
    for start, gap in ops:
        now += gap
        if start:
            gate, verdict = check(gate, limits, now, 2)
            if verdict.refusal is None:
                n += 1
                gate, _ = take(gate, limits, now, slot=f"s{n}", slot_lease_ms=500)
                held.append(f"s{n}")
        elif held:
            gate = release_slot(gate, held.pop(0))
        assert sum(1 for until in gate.slots.values() if until > now) <= cap


def test_tokens_count_per_utc_day() -> None:
    day_end = (T0 // DAY_MS + 1) * DAY_MS
    gate = spend_tokens(Gate(), 7, T0)
    gate = spend_tokens(gate, 5, day_end - 1)
    assert (gate.tok_day, gate.tok_used) == (T0 // DAY_MS, 12)
    gate = spend_tokens(gate, 3, day_end)
    assert (gate.tok_day, gate.tok_used) == (T0 // DAY_MS + 1, 3)
    assert spend_tokens(gate, 0, day_end) == gate


@pytest.mark.parametrize(
    ("chars", "expected"),
    [pytest.param(0, 0, id="empty"), pytest.param(1, 1, id="one"), pytest.param(9, 3, id="nine")],
)
def test_estimate_tokens_rounds_up(chars: int, expected: int) -> None:
    assert estimate_tokens(chars, GatewayConfig(chars_per_token=4)) == expected


@pytest.mark.parametrize(
    ("elapsed", "bucket"),
    [
        pytest.param(0, 0, id="zero"),
        pytest.param(100, 0, id="upper-bound-included"),
        pytest.param(101, 1, id="next"),
        pytest.param(300_000, len(LATENCY_BUCKETS_MS) - 1, id="last-bound"),
        pytest.param(300_001, len(LATENCY_BUCKETS_MS), id="inf"),
    ],
)
def test_latency_bucket(elapsed: int, bucket: int) -> None:
    assert latency_bucket(elapsed) == bucket


W = 1_000


@pytest.mark.parametrize(
    ("latency", "now", "expected"),
    [
        pytest.param(Latency(5, 300, 3, 100, 1), 5 * W, (400, 4), id="both-windows"),
        pytest.param(Latency(5, 300, 3, 100, 1), 6 * W + 1, (300, 3), id="current-became-previous"),
        pytest.param(Latency(5, 300, 3, 100, 1), 7 * W, (0, 0), id="stale"),
        pytest.param(Latency(5, 300, 3, 100, 1), 4 * W, (400, 4), id="reader-clock-behind"),
    ],
)
def test_recent_reads_two_windows(latency: Latency, now: int, expected: tuple[int, int]) -> None:
    assert recent(latency, now, W) == expected


def test_note_latency_rolls_the_windows() -> None:
    lat = note_latency(Latency(), 100, 5 * W, W)
    assert lat == Latency(5, 100, 1, 0, 0)
    lat = note_latency(lat, 50, 5 * W + 10, W)
    assert lat == Latency(5, 150, 2, 0, 0)
    lat = note_latency(lat, 10, 6 * W, W)
    assert lat == Latency(6, 10, 1, 150, 2)
    assert note_latency(lat, 7, 5 * W, W) == Latency(6, 17, 2, 150, 2)  # clock behind
    assert note_latency(lat, 1, 9 * W, W) == Latency(9, 1, 1, 0, 0)


def test_served_notes_latency_bucket_and_tokens() -> None:
    gate = served(Gate(), elapsed_ms=700, tokens=12, now_ms=T0, window_ms=W)
    gate = served(gate, elapsed_ms=650, tokens=0, now_ms=T0 + 1, window_ms=W)
    assert gate.buckets == {latency_bucket(700): 2}
    assert recent(gate.latency, T0 + 1, W) == (1350, 2)
    assert gate.tok_used == 12
