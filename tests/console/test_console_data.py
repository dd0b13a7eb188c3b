"""The console's pure decisions (§15): outage banner, masking, superseded history, buckets."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import SecretStr

from llm_client import BreakerView, Circuit
from memory_worker.cards import Card, CardStatus
from memory_worker.console.data import (
    MASK,
    hourly_buckets,
    mask_setting,
    outage_banner,
    settings_rows,
)
from memory_worker.console.memory_data import card_matches, superseded_chains
from memory_worker.models import RouteError
from memory_worker.settings import Settings
from tests.support.cards import stored

NOW = 1_800_000_000_000
ROUTES = {"memory_extraction": ["a/x", "b/y"], "embedding": ["e/e"]}


def view(
    target: str,
    circuit: Circuit,
    *,
    opened: int | None = None,
    cooldown: float = 0,
    failures: int = 0,
) -> Any:
    return BreakerView(
        target=target,
        circuit=circuit,
        consecutive_failures=failures,
        trips=0 if circuit is Circuit.CLOSED else 1,
        opened_at_ms=opened,
        cooldown_remaining_s=cooldown,
        probe_in_flight=False,
        window_calls=0,
        window_failures=0,
        generation=0,
    )


def banner(breakers: list[Any], *, deferred: int | None = None, tick: int | None = None) -> Any:
    return outage_banner(
        now_ms=NOW,
        routes=ROUTES,
        breakers=breakers,
        deferred_since_ms=deferred,
        next_tick_ms=tick,
        runs_waiting=7,
        pages={"sent": 2, "suppressed": 5},
        failed_since=0,
    )


CLOSED = [view("a/x", Circuit.CLOSED), view("b/y", Circuit.CLOSED), view("e/e", Circuit.CLOSED)]


@pytest.mark.parametrize(
    ("breakers", "deferred", "tick", "open_routes", "since", "next_probe"),
    [
        pytest.param(CLOSED, None, None, None, None, None, id="healthy: no banner"),
        pytest.param(
            [view("a/x", Circuit.OPEN, opened=NOW - 9000, cooldown=4), *CLOSED[1:]],
            None,
            None,
            None,
            None,
            None,
            id="one target open, its fallback closed: no outage",
        ),
        pytest.param(
            [
                view("a/x", Circuit.OPEN, opened=NOW - 9000, cooldown=4),
                view("b/y", Circuit.HALF_OPEN, opened=NOW - 5000),
                CLOSED[2],
            ],
            None,
            None,
            ["memory_extraction"],
            NOW - 5000,
            4.0,
            id="every target of a route not closed: open since the last way out closed",
        ),
        pytest.param(
            CLOSED, NOW - 60_000, NOW + 12_000, [], NOW - 60_000, 12.0, id="deferred pipeline"
        ),
        pytest.param(
            [*CLOSED[:2], view("e/e", Circuit.OPEN, opened=NOW - 1000, cooldown=30)],
            NOW - 2000,
            NOW + 3000,
            ["embedding"],
            NOW - 2000,
            3.0,
            id="delayed tick wins over the cooldown",
        ),
    ],
)
def test_outage_banner(
    breakers: list[Any],
    deferred: int | None,
    tick: int | None,
    open_routes: list[str] | None,
    since: int | None,
    next_probe: float | None,
) -> None:
    found = banner(breakers, deferred=deferred, tick=tick)
    if open_routes is None:
        assert found is None
        return
    assert [r.workflow for r in found.open_routes] == open_routes
    assert found.since_ms == since
    assert found.next_probe_in_s == next_probe
    assert (found.runs_waiting, found.pages_sent, found.pages_suppressed) == (7, 2, 5)


def _error(workflow: str, age_ms: int) -> RouteError:
    at = datetime.fromtimestamp((NOW - age_ms) / 1000, tz=UTC)
    return RouteError(workflow=workflow, at=at, target="a/x", code="UPSTREAM_ERROR")


FAILING = [view("a/x", Circuit.CLOSED, failures=2), view("b/y", Circuit.CLOSED, failures=1)]


@pytest.mark.parametrize(
    ("breakers", "error_age_ms", "failing"),
    [
        pytest.param(
            [*FAILING, CLOSED[2]], 20_000, ["memory_extraction"], id="every target failed"
        ),
        pytest.param(
            [view("a/x", Circuit.OPEN, opened=NOW, failures=5), FAILING[1], CLOSED[2]],
            20_000,
            ["memory_extraction"],
            id="one open, the other failed",
        ),
        pytest.param([FAILING[0], CLOSED[1], CLOSED[2]], 20_000, [], id="a fallback answers"),
        pytest.param([*FAILING, CLOSED[2]], 16 * 60_000, [], id="the last error is old"),
        pytest.param([*FAILING, CLOSED[2]], None, [], id="no farm answer to name"),
    ],
)
def test_a_failing_route_raises_the_banner_before_a_breaker_opens(
    breakers: list[Any], error_age_ms: int | None, failing: list[str]
) -> None:
    """An outage's first minute: runs are released with the farm's code while the breakers
    still count failures; the banner names the route, its last error and what to do."""
    errors = (
        {}
        if error_age_ms is None
        else {"memory_extraction": _error("memory_extraction", error_age_ms)}
    )
    found = outage_banner(
        now_ms=NOW,
        routes=ROUTES,
        breakers=breakers,
        deferred_since_ms=None,
        next_tick_ms=None,
        runs_waiting=3,
        pages={},
        failed_since=0,
        last_errors=errors,
    )
    if not failing:
        assert found is None
        return
    assert found is not None
    assert [r.workflow for r in found.open_routes] == failing
    (route,) = found.open_routes
    assert route.failing
    assert found.failing_only
    assert route.failures == max(v.consecutive_failures for v in breakers[:2])
    assert route.last_error is not None
    assert route.last_error.code == "UPSTREAM_ERROR"


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("console_token", SecretStr("s3cret-token"), MASK),
        ("sentry_dsn", SecretStr(""), "unset"),
        ("sentry_dsn", None, "unset"),
        ("redis_url", "redis://:hunter2pw@db:6379/0", "redis://:[Filtered]@db:6379/0"),
        ("discovery_base_url", "http://farm:50051", "http://farm:50051"),
        ("admin_telegram_chat_ids", [1, 2], "1, 2"),
        ("max_attempts", 5, "5"),
    ],
)
def test_mask_setting(name: str, value: Any, shown: str) -> None:
    assert mask_setting(name, value) == shown


def test_settings_rows_never_hold_a_secret() -> None:
    settings = Settings(
        console_token=SecretStr("canary-console"),
        admin_telegram_bot_token=SecretStr("canary-telegram"),
        admin_telegram_chat_ids=[1],
        sentry_dsn=SecretStr("https://canary-dsn@sentry.example/1"),
        redis_url="redis://:canary-redis@127.0.0.1:6379/0",
    )
    text = repr(settings_rows(settings))
    assert "canary" not in text
    assert "MEMORY_CONSOLE_SHOW_MEMORY" in text


def test_a_derived_default_is_shown_as_derived_from_the_values_in_force() -> None:
    """With only the lease shortened, the renewal and the heartbeat follow it: the settings
    page shows them at their (derived) defaults, and only the lease as changed."""
    rows = {row.variable: row for row in settings_rows(Settings(lease_seconds=6))}
    assert (rows["MEMORY_LEASE_SECONDS"].value, rows["MEMORY_LEASE_SECONDS"].changed) == (
        "6.0",
        True,
    )
    for variable, value in (("MEMORY_LEASE_RENEW_SECONDS", "2.0"),
                            ("MEMORY_WORKER_HEARTBEAT_SECONDS", "1.0")):  # fmt: skip
        assert (rows[variable].value, rows[variable].default, rows[variable].changed) == (
            value,
            value,
            False,
        )


def card(card_id: str, fact: str, day: int, superseded_by: str | None = None) -> Card:
    at = datetime(2026, 1, day, tzinfo=UTC)
    return stored(
        card_id,
        f"ann lives in {fact}",
        chat=1,
        user=7,
        subject="ann",
        predicate="lives_in",
        obj=fact,
        conf=0.9,
        status=CardStatus.SUPERSEDED if superseded_by else CardStatus.ACTIVE,
        at=at,
        valid_until=at + timedelta(days=1) if superseded_by else None,
        superseded_by=superseded_by,
    )


def test_superseded_chains_are_transitive_newest_first() -> None:
    cards = [
        card("1", "Porto", 1, superseded_by="2"),
        card("2", "Lisbon", 2, superseded_by="3"),
        card("3", "Berlin", 3),
        card("4", "cycle", 4, superseded_by="4"),
    ]
    chains = superseded_chains(cards)
    assert [c.id for c in chains["3"]] == ["2", "1"]
    assert chains["4"] == []  # a self-reference cannot loop


def test_card_matches_is_case_insensitive_over_the_fact_parts() -> None:
    lisbon = card("2", "Lisbon", 2)
    assert card_matches(lisbon, "LISB")
    assert card_matches(lisbon, "")
    assert not card_matches(lisbon, "porto")


def test_hourly_buckets_end_with_the_current_hour() -> None:
    now = 1_800_000_123_456
    buckets = hourly_buckets(now, hours=3)
    assert len(buckets) == 3
    assert buckets[-1][0] <= now < buckets[-1][1]
    assert all(high - low == 3_600_000 for low, high in buckets)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(buckets))
