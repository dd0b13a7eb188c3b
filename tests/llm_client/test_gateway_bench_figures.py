"""The gateway bench reads its latency figures from the workers' own ``/metrics``: a
renamed metric must stop it (it once printed ``run p95 <= nan`` for a name gone long ago),
and its quantile interpolates inside a bucket the way Prometheus' ``histogram_quantile``
does."""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from memory_worker.pipeline.process_metrics import RUN_BUCKETS

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def gateway() -> Iterator[ModuleType]:
    """``bench/gateway.py`` as its script runs it (``bench/`` on the path for ``common``)."""
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("bench.gateway")
    finally:
        sys.path.remove(str(BENCH))


def scrape(observations: list[float], outcome: str = "completed") -> str:
    registry = CollectorRegistry()
    runs = Histogram(
        "memory_worker_run_duration_seconds",
        "runs",
        ["worker", "outcome"],
        buckets=RUN_BUCKETS,
        registry=registry,
    )
    for seconds in observations:
        runs.labels("w1", outcome).observe(seconds)
    return generate_latest(registry).decode()


def test_the_bench_reads_the_run_histogram_the_workers_export(gateway: ModuleType) -> None:
    texts = [scrape([0.3] * 10), scrape([0.7] * 30)]  # two workers, summed
    total, count, buckets = gateway.histogram(
        texts, "memory_worker_run_duration_seconds", outcome="completed"
    )
    assert count == 40
    assert total == pytest.approx(0.3 * 10 + 0.7 * 30)
    assert dict(buckets)[0.5] == 10
    assert dict(buckets)[1.0] == 40


def test_a_missing_series_stops_the_bench(gateway: ModuleType) -> None:
    with pytest.raises(LookupError, match="memory_worker_run_seconds"):
        gateway.histogram([scrape([0.3])], "memory_worker_run_seconds", outcome="completed")
    with pytest.raises(LookupError):
        gateway.histogram(
            [scrape([0.3], outcome="failed")],
            "memory_worker_run_duration_seconds",
            outcome="completed",
        )


def test_the_quantile_interpolates_inside_its_bucket(gateway: ModuleType) -> None:
    buckets = [(0.5, 10.0), (1.0, 100.0), (2.5, 100.0), (math.inf, 100.0)]
    # the 95th of 100 is the 85th of the 90 in (0.5, 1]: 0.5 + 0.5 * 85/90
    assert gateway.quantile(buckets, 0.95) == pytest.approx(0.5 + 0.5 * 85 / 90)
    assert gateway.quantile(buckets, 0.05) == pytest.approx(0.25)  # half of the first bucket
    assert gateway.quantile([(1.0, 0.0), (math.inf, 10.0)], 0.5) == 1.0  # +Inf: its lower bound
    assert math.isnan(gateway.quantile([], 0.5))
    assert math.isnan(gateway.quantile([(1.0, 0.0), (math.inf, 0.0)], 0.5))
