"""Metrics with clear ownership (§11): fleet series from ``serve`` only, process series
labelled by their process, every counter at 0 from the start, histograms, build info.

User story: "I scrape `serve` and every `run --serve` of the fleet (as the runbook says),
sum each family, and get the true counts; the first retirement shows in `increase()`."
The end-to-end case runs three real worker processes against the farm simulator.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from llm_client import BreakerView, Circuit
from memory_worker.farmsim import FarmSimulator
from memory_worker.keys import Keys
from memory_worker.ops.fleet_counters import (
    ATTEMPT_KINDS,
    KNOWN_LABELS,
    PAGE_RESULTS,
    attempt_metrics,
    counter_metrics,
    page_metrics,
)
from memory_worker.ops.outage_metrics import route_open_metrics
from memory_worker.pipeline.process_metrics import RUN_OUTCOMES, WorkerMetrics, build_info
from memory_worker.pipeline.ticks import TickOutcome
from memory_worker.runs import RunStore
from memory_worker.runs.policy import plan_failure
from memory_worker.server import metrics_registry
from memory_worker.settings import Settings
from memory_worker.version import __version__
from tests.support.factories import make_request
from tests.support.harness import FAST, eventually
from tests.support.promtool import check_metrics
from tests.support.scrape import ServingFleet, family_names, parse, sum_families, total, value

# --- every counter at 0 from the start (pure) --------------------------------------------------


def _by_name(families: Any) -> dict[str, dict[tuple[str, ...], float]]:
    return {
        f.name: {tuple(s.labels.values()): s.value for s in f.samples if s.name.endswith("_total")}
        for f in families
    }


@pytest.mark.parametrize(
    ("family", "prefix"),
    [
        pytest.param("memory_worker_enqueue", "enqueue", id="enqueue"),
        pytest.param("memory_worker_runs_claimed", "claimed", id="claimed"),
        pytest.param("memory_worker_runs_released", "released", id="released"),
        pytest.param("memory_worker_runs_failed", "failed", id="failed"),
        pytest.param("memory_worker_runs_retired", "retired", id="retired"),
        pytest.param("memory_worker_runs_skipped", "skipped", id="skipped"),
        pytest.param("memory_worker_forgets", "forgets", id="forgets"),
        pytest.param("memory_worker_reads_degraded", "degraded", id="degraded"),
    ],
)
def test_every_known_label_of_a_counter_family_is_exported_at_0(family: str, prefix: str) -> None:
    empty = _by_name(counter_metrics({}))
    assert empty[family] == {(label,): 0 for label in KNOWN_LABELS[prefix]}
    counted = _by_name(
        counter_metrics({f"{prefix}:{KNOWN_LABELS[prefix][0]}": 2, f"{prefix}:new": 1})
    )
    assert counted[family][(KNOWN_LABELS[prefix][0],)] == 2
    assert counted[family][("new",)] == 1  # an unforeseen value still shows when it happens


def test_known_reasons_cover_what_the_pipeline_counts() -> None:
    assert {"provider_unavailable", "capacity_unavailable", "shutdown", "watchdog"} <= set(
        KNOWN_LABELS["released"]
    )
    assert {"provider_timeout", "task_timeout", "not_retryable"} <= set(KNOWN_LABELS["failed"])
    assert "worker_lost" in KNOWN_LABELS["retired"]
    assert set(KNOWN_LABELS["enqueue"]) == {"enqueued", "duplicate", "queue_full", "daily_cap"}


def test_plain_counters_and_pages_and_attempts_start_at_0() -> None:
    plain = _by_name(counter_metrics({}))
    for name in ("runs_completed", "runs_replayed", "pipeline_deferred"):
        assert plain[f"memory_worker_{name}"] == {(): 0}
    pages = _by_name(page_metrics({"sent": 3}))["memory_worker_admin_pages"]
    assert pages == {(r,): (3 if r == "sent" else 0) for r in PAGE_RESULTS}
    attempts = _by_name(attempt_metrics({("a/m", "failure", "odd"): 4}, ["a/m", "b/m"]))
    series = attempts["memory_worker_routing_attempts"]
    for target in ("a/m", "b/m"):
        for outcome, reason in ATTEMPT_KINDS:
            assert series[(target, outcome, reason)] == 0
    assert series[("a/m", "failure", "odd")] == 4


def _view(target: str, circuit: Circuit) -> BreakerView:
    return BreakerView(
        target=target,
        circuit=circuit,
        consecutive_failures=0,
        trips=0,
        opened_at_ms=0,
        cooldown_remaining_s=0.0,
        probe_in_flight=False,
        window_calls=0,
        window_failures=0,
        generation=0,
    )


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        pytest.param({"a": Circuit.CLOSED, "b": Circuit.CLOSED}, 0, id="all-closed"),
        pytest.param({"a": Circuit.OPEN, "b": Circuit.CLOSED}, 0, id="fallback-closed"),
        pytest.param({"a": Circuit.OPEN, "b": Circuit.HALF_OPEN}, 1, id="open-and-probing"),
        pytest.param({"a": Circuit.OPEN, "b": Circuit.OPEN}, 1, id="all-open"),
        pytest.param({}, 0, id="no-view-yet"),
    ],
)
def test_route_open_is_1_only_while_every_target_is_open(
    states: dict[str, Circuit], expected: int
) -> None:
    routes = {"memory_extraction": ["a", "b"], "embedding": ["e"]}
    views = [_view(t, c) for t, c in states.items()] + [_view("e", Circuit.CLOSED)]
    (family,) = route_open_metrics(routes, views)
    got = {s.labels["workflow"]: s.value for s in family.samples}
    assert got == {"memory_extraction": expected, "embedding": 0}


# --- this process's series (pure) --------------------------------------------------------------


def _scrape(metrics: WorkerMetrics) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    return parse(generate_latest(metrics_registry(Settings(), process=metrics)).decode())


W = {"worker": "host-a:101"}
TICK = "memory_worker_tick_duration_seconds"
RUN = "memory_worker_run_duration_seconds"
WAIT = "memory_worker_claim_wait_seconds"


def test_process_series_exist_at_0_labelled_by_their_process_and_count_observations() -> None:
    metrics = WorkerMetrics("host-a:101")
    metrics.set_slots(4)
    first = _scrape(metrics)
    for outcome in TickOutcome:
        assert value(first, f"{TICK}_count", outcome=outcome.value, **W) == 0
    for run_outcome in RUN_OUTCOMES:
        assert value(first, f"{RUN}_count", outcome=run_outcome, **W) == 0
    assert value(first, f"{WAIT}_count", **W) == 0
    assert value(first, "memory_worker_worker_slots", **W) == 4

    metrics.tick_started()
    metrics.tick_started()
    assert value(_scrape(metrics), "memory_worker_worker_slots_busy", **W) == 2
    metrics.tick_ended("completed", 0.3)
    metrics.run_settled("completed", 0.2)
    metrics.claimed(7.0)
    metrics.claimed(-1.0)  # a clock step back is a zero wait, never negative
    after = _scrape(metrics)
    assert value(after, "memory_worker_worker_slots_busy", **W) == 1
    done = {"outcome": "completed", **W}
    assert value(after, f"{TICK}_bucket", le="0.25", **done) == 0
    assert value(after, f"{TICK}_bucket", le="0.5", **done) == 1
    assert value(after, f"{RUN}_sum", **done) == pytest.approx(0.2)
    assert [value(after, f"{WAIT}_bucket", le=le, **W) for le in ("0.05", "5.0", "15.0")] == [
        1,
        1,
        2,
    ]


def test_build_info_names_the_version_and_the_prompt_version() -> None:
    family = build_info(Settings(prompt_version="memory_v1"))
    (sample,) = family.samples
    assert family.name == "memory_worker_build_info"
    assert sample.labels == {"version": __version__, "prompt_version": "memory_v1"}
    assert sample.value == 1


def test_a_worker_endpoint_exports_no_fleet_series() -> None:
    text = generate_latest(metrics_registry(Settings(), process=WorkerMetrics("h:1"))).decode()
    names = family_names(text)
    assert "memory_worker_build_info" in names
    assert {n for n in names if n.startswith("memory_worker_")} == {
        "memory_worker_build_info",
        "memory_worker_worker_slots",
        "memory_worker_worker_slots_busy",
        "memory_worker_tick_duration_seconds",
        "memory_worker_run_duration_seconds",
        "memory_worker_claim_wait_seconds",
        "memory_worker_claim_seconds",
        "memory_worker_farm_call_seconds",
        "memory_worker_capacity_wait_seconds",
        # the one family of the stores' health a worker exports too: the refusals it met
        # itself (§7: an ACL on one key, which the fleet's probe cannot see), by worker
        "memory_worker_redis_writes_refused",
    }
    check_metrics(text)


# --- the claim wait: since when a run was claimable, by lane ----------------------------------

T0 = 1_800_000_000_000


async def test_a_claim_says_since_when_its_run_was_claimable(
    settings: Settings, redis: Any
) -> None:
    settings = settings.model_copy(update={"lease_seconds": 10.0})
    store = RunStore(redis, settings)
    await store.enqueue(make_request(1), at_ms=T0)
    claim = await store.claim("w1", at_ms=T0 + 4_000)
    assert claim is not None
    assert claim.ready_at_ms == T0  # queued at T0

    await store.release(claim, reason="provider_unavailable", at_ms=T0 + 5_000)
    again = await store.claim("w1", at_ms=T0 + 6_000)
    assert again is not None
    assert again.ready_at_ms == T0 + 5_000  # released at T0 + 5 s

    plan = plan_failure(again.attempts, max_attempts=5, unit=1.0, max_units=60, now_ms=T0 + 7_000)
    await store.fail(
        again, plan, code="X", reason="provider_timeout", message="m", at_ms=T0 + 7_000
    )
    retry = await store.claim("w1", at_ms=T0 + 60_000)
    assert retry is not None
    assert retry.ready_at_ms == plan.next_attempt_at_ms  # due for its retry

    lost = await store.claim("w2", at_ms=T0 + 60_000 + 11_000)  # w1's lease expired
    assert lost is not None
    assert lost.id == retry.id
    assert lost.ready_at_ms == T0 + 60_000 + 10_000  # since its lease expired


# --- a real fleet: summing every endpoint gives the true counts --------------------------------


@pytest.mark.slow
async def test_summing_serve_and_every_worker_endpoint_gives_the_true_counts(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    """Three ``run --serve`` workers and one ``serve``: 16 runs complete; each family summed
    over the four endpoints is the fleet's truth — not 32 completed, not 6 workers."""
    fleet = ServingFleet(settings, tmp_path, {"discovery_base_url": sim.base_url})
    try:
        await fleet.start_serve()
        before = sum_families(await fleet.scrape_all())  # serve only yet: every counter at 0
        assert value(before, "memory_worker_runs_retired_total", reason="provider_timeout") == 0
        assert value(before, "memory_worker_runs_completed_total") == 0
        fleet.start_workers(3)
        await fleet.wait_serving()
        store = RunStore(redis, settings)
        for i in range(16):
            assert (await store.enqueue(make_request(500 + i, hour=i % 24))).run_id

        async def all_done() -> bool:
            return (await store.counts())["completed"] == 16

        await eventually(all_done, timeout=120)
        await asyncio.sleep(settings.metrics_cache_seconds + 0.1)  # serve's next sample
        scrapes = await fleet.scrape_all()
    finally:
        await fleet.stop()

    for text in scrapes:  # both kinds of endpoint pass promtool's lint
        check_metrics(text)
    fleet_only = family_names(scrapes[0]) - family_names(scrapes[1])
    for text in scrapes[1:]:  # no fleet family on a worker's endpoint
        assert not fleet_only & family_names(text)
    summed = sum_families(scrapes)
    counters = {
        k.decode(): int(v)
        for k, v in (await redis.hgetall(Keys(settings.key_prefix).counters)).items()
    }
    assert value(summed, "memory_worker_runs_completed_total") == 16 == counters["completed"]
    assert value(summed, "memory_worker_runs", status="completed") == 16
    assert value(summed, "memory_worker_enqueue_total", result="enqueued") == 16
    assert value(summed, "memory_worker_workers") == 3
    claimed = total(summed, "memory_worker_runs_claimed_total")
    assert claimed == sum(v for k, v in counters.items() if k.startswith("claimed:"))
    # the workers' own series, summed over their endpoints, count the same runs once
    assert value(summed, "memory_worker_run_duration_seconds_count", outcome="completed") == 16
    assert total(summed, "memory_worker_claim_wait_seconds_count") == claimed
    assert value(summed, "memory_worker_tick_duration_seconds_count", outcome="completed") == 16
    assert value(summed, "memory_worker_worker_slots") == 3 * FAST["worker_concurrency"]
    assert len(summed["memory_worker_build_info"]) == 1  # one build across the fleet
    assert total(summed, "memory_worker_build_info") == 4  # serve and three workers
