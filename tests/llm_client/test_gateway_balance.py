"""A walk's order (§6), pure: tiers, load sharing by weight, slow-node ejection.

The random source is injected (a seeded ``random.Random`` or a scripted sequence), so
shares are measured exactly and every ejection rule is a table row.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_client import GatewayConfig, Standing, Tally
from llm_client._gateway.balance import (
    LEAST_IN_FLIGHT,
    WEIGHTED_RANDOM,
    outliers,
    prefer,
    spread,
)
from llm_client._gateway.model import Latency

NOW = 1_700_000_000_000
WINDOW = GatewayConfig().latency_window_ms
INDEX = NOW // WINDOW


@dataclass(frozen=True)
class T:
    id: str
    tier: int = 0
    weight: float = 1.0


def lat(mean: int, count: int = 10) -> Latency:
    """Windows holding ``count`` successes of ``mean`` ms, current at NOW."""
    return Latency(INDEX, mean * count, count, 0, 0)


def config(**overrides: object) -> GatewayConfig:
    return GatewayConfig(**overrides)  # type: ignore[arg-type]


A, B, C, D = T("a"), T("b"), T("c"), T("d")


def ordered(targets: list[T], **kw: object) -> list[str]:
    rng = random.Random(1)
    found = prefer(
        targets,
        lambda t: t.tier,
        latency=kw.pop("latency", {}),  # type: ignore[arg-type]
        in_flight=kw.pop("in_flight", {}),  # type: ignore[arg-type]
        draw=rng.random,
        now_ms=NOW,
        config=config(**kw),
    )
    return [t.id for t in found]


def test_without_tiers_the_route_order_is_kept() -> None:
    route = [T("a", 0), T("b", 1), T("c", 2)]
    for strategy in (LEAST_IN_FLIGHT, WEIGHTED_RANDOM):
        assert ordered(route, balance=strategy) == ["a", "b", "c"]


def test_tiers_come_lowest_first_whatever_the_route_order() -> None:
    route = [T("late", 1), T("x", 0), T("y", 0)]
    assert ordered(route)[-1] == "late"
    assert set(ordered(route)[:2]) == {"x", "y"}


@pytest.mark.parametrize("strategy", [LEAST_IN_FLIGHT, WEIGHTED_RANDOM])
@pytest.mark.parametrize(
    ("weights", "shares"),
    [
        pytest.param((1.0, 1.0), (0.5, 0.5), id="equal"),
        pytest.param((3.0, 1.0), (0.75, 0.25), id="three-to-one"),
        pytest.param((1.0, 1.0, 2.0), (0.25, 0.25, 0.5), id="three-targets"),
    ],
)
def test_idle_targets_are_drawn_in_proportion_to_weight(
    strategy: str, weights: tuple[float, ...], shares: tuple[float, ...]
) -> None:
    tier = [T(f"t{i}", 0, w) for i, w in enumerate(weights)]
    rng = random.Random(7)
    firsts = Counter(spread(tier, {}, rng.random, strategy)[0].id for _ in range(20_000))
    for i, share in enumerate(shares):
        assert firsts[f"t{i}"] / 20_000 == pytest.approx(share, abs=0.015)


@pytest.mark.parametrize(
    ("in_flight", "first"),
    [
        pytest.param({"a": 2, "b": 1}, "b", id="fewer-in-flight-first"),
        pytest.param({"a": 0, "b": 1}, "a", id="idle-first"),
        pytest.param({"a": 3, "b": 2}, "b", id="per-weight-equal-weights"),
    ],
)
def test_least_in_flight_puts_the_least_loaded_first(in_flight: dict[str, int], first: str) -> None:
    assert spread([A, B], in_flight, random.Random(0).random, LEAST_IN_FLIGHT)[0].id == first


def test_least_in_flight_counts_per_unit_of_weight() -> None:
    heavy, light = T("heavy", 0, 4.0), T("light", 0, 1.0)
    # 3 in flight on a weight-4 target (0.75 each) beats 1 on a weight-1 target (1.0)
    order = spread([heavy, light], {"heavy": 3, "light": 1}, random.Random(0).random, "x")
    assert order[0].id == "heavy"


OUTLIER_ROWS = [
    # (id, tier latencies in ms (None: no samples), samples each, config, expected outliers)
    ("ten-times-slower", {"a": 100, "b": 1000}, 10, {}, ["b"]),
    ("three-times-is-enough", {"a": 100, "b": 300}, 10, {}, ["b"]),
    ("under-the-factor", {"a": 100, "b": 290}, 10, {}, []),
    ("too-few-samples", {"a": 100, "b": 1000}, 4, {}, []),
    ("alone-in-its-tier", {"a": 1000}, 10, {}, []),
    ("peer-without-samples", {"a": 100, "b": None}, 10, {}, []),
    ("fast-tier-below-the-gap", {"a": 10, "b": 100}, 10, {}, []),
    ("gap-setting-lowered", {"a": 10, "b": 100}, 10, {"outlier_min_gap_ms": 50}, ["b"]),
    ("a-slow-majority-is-the-norm", {"a": 100, "b": 1000, "c": 1000}, 10, {}, []),
    ("never-the-whole-tier", {"a": 100, "b": 1000}, 10, {"outlier_max_share": 1.0}, ["b"]),
    (
        "share-allows-two",
        {"a": 100, "b": 100, "c": 900, "d": 1000},
        10,
        {"outlier_max_share": 0.5},
        ["d", "c"],
    ),
    (
        "share-allows-one-slowest-first",
        {"a": 100, "b": 100, "c": 900, "d": 1000},
        10,
        {"outlier_max_share": 0.25},
        ["d"],
    ),
]


@pytest.mark.parametrize(
    ("means", "samples", "overrides", "expected"),
    [r[1:] for r in OUTLIER_ROWS],
    ids=[r[0] for r in OUTLIER_ROWS],
)
def test_outliers(
    means: dict[str, int | None], samples: int, overrides: dict[str, object], expected: list[str]
) -> None:
    tier = [T(name) for name in means]
    latency = {name: lat(mean, samples) for name, mean in means.items() if mean is not None}
    found = outliers(tier, latency, NOW, config(**overrides))
    assert [o.target for o in found] == expected
    for o in found:  # the reason names both sides
        assert o.mean_ms >= 3 * o.median_ms
        assert o.samples == samples


def test_an_ejected_target_goes_to_the_back_of_its_tier_only() -> None:
    route = [T("a", 0), T("slow", 0), T("b", 0), T("fallback", 1)]
    latency = {"a": lat(100), "slow": lat(2000), "b": lat(120), "fallback": lat(50)}
    for seed in range(20):
        found = prefer(
            route,
            lambda t: t.tier,
            latency=latency,
            in_flight={},
            draw=random.Random(seed).random,
            now_ms=NOW,
            config=config(),
        )
        assert [t.id for t in found][2:] == ["slow", "fallback"]


def test_an_ejected_target_comes_back_when_its_slow_windows_age_out() -> None:
    route = [A, B]
    slow = {"a": lat(100), "b": Latency(INDEX, 10 * 2000, 10, 0, 0)}
    assert ordered(route, latency=slow)[-1] == "b"
    later = NOW + 2 * WINDOW  # two windows on: the slow samples are gone
    found = prefer(
        route,
        lambda t: t.tier,
        latency=slow,
        in_flight={},
        draw=random.Random(3).random,
        now_ms=later,
        config=config(),
    )
    assert outliers(route, slow, later, config()) == []
    assert {t.id for t in found} == {"a", "b"}


@given(
    tiers=st.lists(st.integers(0, 3), min_size=1, max_size=6),
    weights=st.lists(st.floats(0.1, 10), min_size=6, max_size=6),
    means=st.lists(st.one_of(st.none(), st.integers(1, 5000)), min_size=6, max_size=6),
    loads=st.lists(st.integers(0, 5), min_size=6, max_size=6),
    strategy=st.sampled_from([LEAST_IN_FLIGHT, WEIGHTED_RANDOM]),
    seed=st.integers(0, 1000),
)
@settings(max_examples=300, deadline=None)
def test_the_order_is_a_permutation_tier_by_tier(
    tiers: list[int],
    weights: list[float],
    means: list[int | None],
    loads: list[int],
    strategy: str,
    seed: int,
) -> None:
    route = [T(f"t{i}", tier, weights[i]) for i, tier in enumerate(tiers)]
    latency = {t.id: lat(m) for t, m in zip(route, means, strict=False) if m is not None}
    in_flight = {t.id: n for t, n in zip(route, loads, strict=False)}
    found = prefer(
        route,
        lambda t: t.tier,
        latency=latency,
        in_flight=in_flight,
        draw=random.Random(seed).random,
        now_ms=NOW,
        config=config(balance=strategy),
    )
    assert sorted(t.id for t in found) == sorted(t.id for t in route)
    assert [t.tier for t in found] == sorted(t.tier for t in route)


# --- error rate (outlier ejection, §5) --------------------------------------------------------


def by_health(
    targets: list[T], health: dict[str, Tally], share: float = 0.0, **kw: object
) -> list[list[str]]:
    """The first target of 2000 orders drawn with ``health``."""
    rng = random.Random(7)
    firsts = []
    for _ in range(2000):
        found = prefer(
            targets,
            lambda t: t.tier,
            latency={},
            in_flight=kw.get("in_flight", {}),  # type: ignore[arg-type]
            draw=rng.random,
            now_ms=NOW,
            config=config(balance=kw.get("balance", LEAST_IN_FLIGHT)),
            health=health,
            probation_share=share,
        )
        firsts.append([t.id for t in found])
    return firsts


def test_an_ejected_target_goes_after_every_tier() -> None:
    route = [T("a", 0), T("b", 0), T("c", 1)]
    health = {"a": Tally("a", standing=Standing.EJECTED)}
    assert {tuple(o) for o in by_health(route, health)} == {("b", "c", "a")}


@pytest.mark.parametrize("in_flight", [0, 1])
def test_least_in_flight_never_prefers_a_fast_failing_target(in_flight: int) -> None:
    """Its few calls in flight (it fails fast) never put it ahead of an equally (or, at 60 %
    failures, one call more) loaded healthy peer: (in flight + 1) / (weight × success
    ratio); under heavier load on the peer it takes a share again."""
    health = {"a": Tally("a", 8, 12), "b": Tally("b", 20, 0)}
    orders = by_health([A, B], health, in_flight={"b": in_flight})
    assert all(o[0] == "b" for o in orders)


def test_weighted_random_weighs_by_success_ratio() -> None:
    health = {"a": Tally("a", 8, 12), "b": Tally("b", 20, 0)}  # a: 9/21
    orders = by_health([A, B], health, balance=WEIGHTED_RANDOM)
    share = sum(o[0] == "a" for o in orders) / len(orders)
    expected = (9 / 21) / (9 / 21 + 1)  # the first place of a weighted draw
    assert abs(share - expected) < 0.04


@pytest.mark.parametrize("share", [0.25, 0.5, 1.0])
def test_a_target_on_probation_is_first_for_its_share_of_the_calls(share: float) -> None:
    """Even while its peer has fewer calls in flight (it could serve them all)."""
    health = {"a": Tally("a", standing=Standing.PROBATION), "b": Tally("b")}
    orders = by_health([A, B], health, share, in_flight={"a": 3})
    first = sum(o[0] == "a" for o in orders) / len(orders)
    assert abs(first - share) < 0.04
