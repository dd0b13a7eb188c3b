"""Outlier ejection by error rate (§5), the pure policy: counting, the two rules, the panic
floor, the growing period, probation — tables and properties, no Redis, no clock."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_client import EjectionConfig, Standing, Tally
from llm_client._outlier.model import (
    Health,
    Mode,
    add,
    allowed,
    decide,
    eject,
    period_ms,
    standing,
    tally,
    window,
)

CFG = EjectionConfig(
    window_seconds=60,
    buckets=6,
    failure_percentage_threshold=0.5,
    failure_percentage_min_volume=20,
    success_rate_min_hosts=3,
    success_rate_min_volume=20,
    success_rate_stdev_factor=1.9,
    base_ejection_seconds=30,
    max_ejection_seconds=300,
    max_ejection_share=0.5,
)
T0 = 1_700_000_000_000


def t(name: str, ok: int, bad: int, where: Standing = Standing.IN) -> Tally:
    return Tally(name, ok, bad, where)


# --- the verdict ---------------------------------------------------------------------------

DECIDE = [
    # (tier, expected [(target, mode)])
    pytest.param([t("a", 8, 12), t("b", 20, 0)], [("a", Mode.FAILURE_PERCENTAGE)], id="60%-fast"),
    pytest.param(
        [t("a", 10, 10), t("b", 20, 0)], [("a", Mode.FAILURE_PERCENTAGE)], id="50%-inclusive"
    ),
    pytest.param([t("a", 11, 9), t("b", 20, 0)], [], id="45%-stays"),
    pytest.param([t("a", 2, 17), t("b", 20, 0)], [], id="below-min-volume"),
    pytest.param([t("a", 0, 0), t("b", 0, 0)], [], id="no-calls"),
    pytest.param([t("a", 0, 40)], [], id="a-lone-target-is-never-ejected"),
    pytest.param(
        [t("a", 0, 40), t("b", 0, 40)], [("a", Mode.FAILURE_PERCENTAGE)], id="panic-floor-of-two"
    ),
    pytest.param(
        [t("a", 5, 40), t("b", 0, 40), t("c", 2, 40), t("d", 1, 40)],
        [("b", Mode.FAILURE_PERCENTAGE), ("d", Mode.FAILURE_PERCENTAGE)],
        id="panic-floor-half-worst-first",
    ),
    pytest.param(
        [t("a", 0, 40, Standing.EJECTED), t("b", 0, 40)], [], id="floor-counts-the-ejected"
    ),
    pytest.param(
        [t("a", 0, 40, Standing.EJECTED), t("b", 0, 40), t("c", 0, 40), t("d", 40, 0)],
        [("b", Mode.FAILURE_PERCENTAGE)],
        id="ejected-never-judged-again",
    ),
    pytest.param(
        [t("a", 100, 0), t("b", 100, 1), t("c", 99, 1), t("d", 100, 0), t("e", 70, 30)],
        [("e", Mode.SUCCESS_RATE)],
        id="success-rate-below-peers",
    ),
    pytest.param([t("a", 70, 30), t("b", 100, 0)], [], id="success-rate-needs-min-hosts"),
    pytest.param(
        [t("a", 90, 10), t("b", 90, 10), t("c", 90, 10)], [], id="success-rate-equal-peers"
    ),
    pytest.param(
        [t("a", 40, 60, Standing.PROBATION), t("b", 100, 0)],
        [("a", Mode.FAILURE_PERCENTAGE)],
        id="probation-fails-again",
    ),
]


@pytest.mark.parametrize(("tier", "expected"), DECIDE)
def test_decide(tier: list[Tally], expected: list[tuple[str, Mode]]) -> None:
    assert [(v.target, v.mode) for v in decide(tier, CFG)] == expected


def test_disabled_never_ejects() -> None:
    off = EjectionConfig(enabled=False)
    assert decide([t("a", 0, 100), t("b", 100, 0)], off) == []


@pytest.mark.parametrize(
    ("size", "share", "expected"),
    [
        (0, 0.5, 0),
        (1, 1.0, 0),
        (2, 0.1, 1),
        (2, 1.0, 1),
        (4, 0.5, 2),
        (10, 0.1, 1),
        (10, 0.35, 3),
        (3, 1.0, 2),
    ],
)
def test_panic_floor(size: int, share: float, expected: int) -> None:
    assert allowed(size, EjectionConfig(max_ejection_share=share)) == expected


@settings(max_examples=300, deadline=None)
@given(
    counts=st.lists(
        st.tuples(st.integers(0, 60), st.integers(0, 60), st.booleans()), min_size=1, max_size=8
    ),
    share=st.floats(0.05, 1.0),
)
def test_never_beyond_the_panic_floor_and_never_a_busy_answer(
    counts: list[tuple[int, int, bool]], share: float
) -> None:
    """Whatever the counts: the ejected plus the new stay within the floor, never every
    target; a target is ejected only with failures; never one already out."""
    cfg = EjectionConfig(max_ejection_share=share, failure_percentage_min_volume=5)
    tier = [
        t(f"t{i}", ok, bad, Standing.EJECTED if out else Standing.IN)
        for i, (ok, bad, out) in enumerate(counts)
    ]
    verdicts = decide(tier, cfg)
    out = sum(1 for x in tier if x.standing is Standing.EJECTED)
    assert out + len(verdicts) <= max(allowed(len(tier), cfg), out)
    assert len(verdicts) < len(tier) or not verdicts
    by_id = {x.target: x for x in tier}
    for v in verdicts:
        assert by_id[v.target].failures > 0
        assert by_id[v.target].standing is not Standing.EJECTED


# --- counting, period, standing --------------------------------------------------------------


def test_window_slides_by_buckets() -> None:
    h = add(Health(), 3, 1, T0, CFG)
    h = add(h, 2, 2, T0 + 10_000, CFG)
    assert window(h, T0 + 10_000, CFG) == (5, 3)
    # the first bucket leaves the window six buckets after its own
    first_bucket_end = (T0 // CFG.bucket_ms + 6) * CFG.bucket_ms
    assert window(h, first_bucket_end - 1, CFG) == (5, 3)
    assert window(h, first_bucket_end, CFG) == (2, 2)
    # a slot that held an older bucket restarts
    h = add(h, 1, 0, first_bucket_end, CFG)
    assert window(h, first_bucket_end, CFG) == (3, 2)


@pytest.mark.parametrize(("times", "seconds"), [(1, 30), (2, 60), (5, 150), (10, 300), (1000, 300)])
def test_period_grows_and_is_capped(times: int, seconds: int) -> None:
    assert period_ms(times, CFG) == seconds * 1000


def test_ejections_in_a_row_grow_then_forget() -> None:
    healths, done = eject([Health(), Health()], [0], T0, CFG)
    assert done == [(0, T0 + 30_000, 1)]
    assert standing(healths[0], T0 + 29_999, CFG) is Standing.EJECTED
    assert standing(healths[0], T0 + 30_000, CFG) is Standing.PROBATION
    assert standing(healths[0], T0 + 30_000 + CFG.window_ms, CFG) is Standing.IN
    # ejected again soon after coming back: twice as long
    healths, done = eject(healths, [0], T0 + 40_000, CFG)
    assert done == [(0, T0 + 100_000, 2)]
    # still out: not again; the peer cannot go while it is out (floor of a pair)
    assert eject(healths, [0, 1], T0 + 50_000, CFG)[1] == []
    # long after its last period: a first ejection again
    healths, done = eject(healths, [0], T0 + 100_000 + CFG.max_ms, CFG)
    assert done == [(0, T0 + 100_000 + CFG.max_ms + 30_000, 1)]
    # the counts start afresh with an ejection
    assert window(healths[0], T0 + 100_000 + CFG.max_ms, CFG) == (0, 0)


def test_tally_ratios() -> None:
    h = add(Health(), 8, 12, T0, CFG)
    seen = tally("a", h, T0, CFG)
    assert (seen.calls, seen.error_ratio) == (20, 0.6)
    assert math.isclose(seen.success_ratio, 9 / 21)
    assert Tally("b").success_ratio == 1.0
    assert Tally("b").error_ratio == 0.0
