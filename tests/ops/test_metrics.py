"""Metrics (§11): values match the store, the cache keeps last good values, gauges absent first.

Scrapes go over HTTP to the real server (``HealthServer``) and are parsed with
``prometheus_client.parser``; the Redis-outage cases use their own embedded
Valkey in a temporary directory so stopping it disturbs no other test.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from llm_client import AttemptCounter, EventType, RoutingEvent
from llm_client._outlier.model import Mode as Rule
from llm_client._outlier.model import Verdict
from memory_worker.keys import Keys
from memory_worker.ops.metrics import (
    MemoryCollector,
    Sample,
    _run_metrics,
    read_sample,
    route_target_ids,
)
from memory_worker.pipeline.ticks import Mode, TickCounts, TickPlan, TickQueue
from memory_worker.runs import RunStore
from memory_worker.runs.policy import plan_failure
from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.storage.sampling import Sampler
from memory_worker.wiring import outlier_store
from tests.support.clock import ManualClock
from tests.support.factories import make_request
from tests.support.harness import eventually
from tests.support.routing_fakes import trip_first_target

Families = dict[str, dict[tuple[tuple[str, str], ...], float]]


def parse(text: str) -> Families:
    """{family or sample name: {sorted labels: value}} of a scrape."""
    out: Families = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def value(families: Families, name: str, **labels: str) -> float:
    return families[name][tuple(sorted(labels.items()))]


async def scrape(url: str) -> Families:
    async with httpx.AsyncClient(timeout=5) as client:
        response = await client.get(url + "/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return parse(response.text)


# --- the cache, without Redis -----------------------------------------------------------------


def _sample(queued: int = 1) -> Sample:
    return Sample(
        at=1000.0,
        runs={"queued": queued, "processing": 0, "completed": 0, "failed": 0, "skipped": 0}
        | {"retired": 0},
        oldest_queued_age_s=2.0,
        oldest_processing_age_s=None,
        lease_overdue_s=0.0,
        leases_expired=0,
        counters={"released:provider_unavailable": 3},
        ticks=TickCounts(1, 1, 0),
        deferred_since_s=None,
        workers_live=1,
    )


async def test_sampler_rate_limits_attempts_and_keeps_last_good_on_failure() -> None:
    clock = ManualClock()
    reads: list[float] = []
    failing = False

    async def read() -> Sample:
        reads.append(clock.now)
        if failing:
            raise ConnectionError("redis down")
        return _sample(queued=len(reads))

    sampler = Sampler(read, min_interval=5.0, clock=clock)
    registry = CollectorRegistry()
    registry.register(MemoryCollector(sampler))

    assert "memory_worker_runs" not in parse(generate_latest(registry).decode())
    first = await sampler.refresh()
    assert first is not None
    assert first.runs["queued"] == 1
    for _ in range(50):  # a scrape storm inside the interval: no extra Redis reads
        await sampler.refresh()
    assert reads == [0.0]

    failing = True
    for step in range(1, 31):  # 30 s of scrapes every second against a failing Redis
        clock.now = float(step)
        kept = await sampler.refresh()
        assert kept is first  # last good values survive
    assert reads == [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]
    assert sampler.errors == 6
    families = parse(generate_latest(registry).decode())
    assert value(families, "memory_worker_sample_errors_total") == 6
    assert value(families, "memory_worker_runs", status="queued") == 1
    assert value(families, "memory_worker_runs_released_total", reason="provider_unavailable") == 3

    failing = False
    clock.now = 35.0
    assert (await sampler.refresh()).runs["queued"] == 8  # type: ignore[union-attr]


async def test_sampler_times_out_a_hanging_read() -> None:
    async def hang() -> Sample:
        await asyncio.sleep(60)
        raise AssertionError

    sampler = Sampler(hang, min_interval=0.0, timeout=0.05)
    assert await sampler.refresh() is None
    assert sampler.errors == 1


# --- values match the store, over HTTP ---------------------------------------------------------


async def test_scraped_values_match_the_store(settings: Settings, redis: Any) -> None:
    settings = settings.model_copy(update={"max_attempts": 1, "metrics_cache_seconds": 0.0})
    store = RunStore(redis, settings)
    keys = Keys(settings.key_prefix)
    for i in range(5):
        await store.enqueue(make_request(10 + i, hour=i))
    retired = await store.claim("w1")
    assert retired is not None
    plan = plan_failure(1, max_attempts=1, unit=60, max_units=60, now_ms=0)
    await store.fail(retired, plan, code="UPSTREAM_ERROR", reason="provider_timeout", message="x")
    released = await store.claim("w1")
    assert released is not None
    await store.release(released, reason="provider_unavailable")
    held = await store.claim("w2")
    assert held is not None
    await TickQueue(redis, keys).schedule(TickPlan(Mode.PROBE, base=1, delay_s=30), target=1)
    await redis.hset(keys.pipeline_state, "deferred_since", "1700000000000")
    target = await trip_first_target(redis, settings)
    counter = AttemptCounter(redis, keys)
    await counter.emit(
        RoutingEvent(
            EventType.ATTEMPT_FAILED,
            "memory_extraction",
            target=target,
            reason="provider_unavailable",
            counters={"charged": 1},
        )
    )
    await counter.record_success(target)
    await redis.hincrby(keys.admin_counters, "sent", 2)
    await redis.hincrby(keys.admin_counters, "suppressed", 5)
    outliers = outlier_store(redis, settings)
    await outliers.sync([target], {target: (12, 18)})  # 60 % of 30 calls failed
    routed = route_target_ids(settings)
    assert len(routed) >= 2
    other = next(t for t in routed if t != target)
    await outliers.eject([other, target], [Verdict(other, Rule.FAILURE_PERCENTAGE, 0, 20)])

    server = HealthServer(settings, reveal(settings.redis_url) or "", port=0)
    await server.start()
    try:
        families = await scrape(server.base_url)
    finally:
        await server.stop()

    counts = await store.counts()
    for status in ("queued", "processing", "completed", "failed", "skipped"):
        assert value(families, "memory_worker_runs", status=status) == counts[status]
    assert (counts["queued"], counts["processing"], counts["failed"]) == (3, 1, 1)
    assert value(families, "memory_worker_retired_runs") == counts["retired"] == 1
    assert value(families, "memory_worker_runs_retired_total", reason="provider_timeout") == 1
    assert value(families, "memory_worker_runs_failed_total", reason="provider_timeout") == 1
    assert value(families, "memory_worker_runs_released_total", reason="provider_unavailable") == 1
    assert value(families, "memory_worker_runs_claimed_total", bucket="queued") == 3
    assert value(families, "memory_worker_enqueue_total", result="enqueued") == 5
    assert value(families, "memory_worker_ticks", state="pending") == 1
    assert value(families, "memory_worker_ticks", state="delayed") == 1
    assert value(families, "memory_worker_pipeline_deferred") == 1
    # a moment (the stored deferred_since), not a duration that grows with every scrape
    assert value(families, "memory_worker_pipeline_deferred_since_timestamp_seconds") == 1.7e9
    assert value(families, "memory_worker_breaker_state", target=target) == 2
    assert value(families, "memory_worker_breaker_trips", target=target) == 1
    assert value(families, "memory_worker_target_error_ratio", target=target) == 0.6
    assert value(families, "memory_worker_target_window_calls", target=target) == 30
    assert value(families, "memory_worker_target_ejected", target=target) == 0
    assert value(families, "memory_worker_target_ejected", target=other) == 1
    assert (
        value(
            families,
            "memory_worker_routing_attempts_total",
            target=target,
            outcome="failure",
            reason="provider_unavailable",
        )
        == 1
    )
    assert (
        value(
            families,
            "memory_worker_routing_attempts_total",
            target=target,
            outcome="success",
            reason="-",
        )
        == 1
    )
    assert value(families, "memory_worker_admin_pages_total", result="sent") == 2
    assert value(families, "memory_worker_admin_pages_total", result="suppressed") == 5
    assert 0 < value(families, "memory_worker_oldest_queued_run_timestamp_seconds") <= time.time()
    assert value(families, "memory_worker_oldest_expired_lease_timestamp_seconds") == 0
    assert value(families, "memory_worker_sample_errors_total") == 0
    assert "process_cpu_seconds_total" in families


async def test_overdue_lease_and_oldest_ages(settings: Settings, redis: Any) -> None:
    settings = settings.model_copy(update={"lease_seconds": 1.0})
    store = RunStore(redis, settings)
    await store.enqueue(make_request(1), at_ms=1_000)
    await store.enqueue(make_request(2))
    claim = await store.claim("w", at_ms=10_000)  # lease expired long ago
    assert claim is not None
    sample = await read_sample(redis, settings, now=100.0)
    assert sample.leases_expired == 1
    assert sample.lease_overdue_s == pytest.approx(100.0 - 11.0)
    assert sample.oldest_processing_age_s == pytest.approx(90.0)
    # /metrics has the moments (claimed at 10 s, its lease expired at 11 s), not the ages
    shown = {m.name: m.samples[0].value for m in _run_metrics(sample) if len(m.samples) == 1}
    assert shown["memory_worker_oldest_processing_run_timestamp_seconds"] == pytest.approx(10.0)
    assert shown["memory_worker_oldest_expired_lease_timestamp_seconds"] == pytest.approx(11.0)
    assert shown["memory_worker_oldest_queued_run_timestamp_seconds"] == pytest.approx(
        100.0 - sample.oldest_queued_age_s  # type: ignore[operator]
    )


# --- Redis goes away: last good values, no retry storm, absent before the first sample -------


async def test_scrape_survives_redis_outage_with_last_good_values(
    own_valkey: EmbeddedValkey, tmp_path: Path
) -> None:
    interval = 1.0  # long beside a scrape (~0.3 s on a loaded 2-core host), so the count tells
    settings = Settings(
        redis_url=own_valkey.url,
        key_prefix="m:",
        data_dir=tmp_path / "var",
        metrics_cache_seconds=interval,
    )
    own_valkey.stop()  # Redis is down before the first sample
    server = HealthServer(settings, reveal(settings.redis_url) or "", port=0)
    await server.start()
    try:
        families = await scrape(server.base_url)
        assert "memory_worker_runs" not in families  # absent, not zero
        assert "memory_worker_ticks" not in families
        assert value(families, "memory_worker_sample_errors_total") == 1

        restarted = EmbeddedValkey(tmp_path / "valkey").ensure()  # the same socket
        try:
            client = client_from_url(restarted.url)
            store = RunStore(client, settings)
            for i in range(3):
                await store.enqueue(make_request(i, hour=i))
            await client.aclose()
            samples: list[Any] = []

            async def sampled_again() -> bool:  # once the cache's interval has passed
                samples.append(await scrape(server.base_url))
                return "memory_worker_runs" in samples[-1]

            await eventually(sampled_again, timeout=10, every=interval / 3)
            good = samples[-1]
            assert value(good, "memory_worker_runs", status="queued") == 3
        finally:
            restarted.stop()

        # Redis gone again: scrape hard for ≥ 1.5 s, and until the scrapes are more than twice
        # what the bound below allows (else it could not tell); every answer is 200 with the
        # last good values
        await asyncio.sleep(interval)
        loop = asyncio.get_running_loop()
        start = loop.time()
        before = value(good, "memory_worker_sample_attempts_total")
        scrapes = 0

        def bound() -> float:  # the scrape cadence does not drive Redis reads: one an interval
            return (loop.time() - start) / interval + 2

        while (loop.time() - start < 1.5 or scrapes <= 2 * bound()) and loop.time() - start < 15:
            during = await scrape(server.base_url)
            scrapes += 1
            assert value(during, "memory_worker_runs", status="queued") == 3
        allowed = bound()
        attempts = value(during, "memory_worker_sample_attempts_total") - before
        assert scrapes > 2 * allowed, "the machine scraped too slowly to tell"
        assert attempts <= allowed
        assert value(during, "memory_worker_sample_errors_total") >= 2
    finally:
        await server.stop()
