"""Scraping ``/metrics`` endpoints the way Prometheus does, and a fleet that serves them.

:class:`ServingFleet` is a real fleet as an operator runs it: worker processes started with
``run --serve`` (each on a free loopback port) and one ``serve`` endpoint (the in-process
:class:`~memory_worker.server.HealthServer` without console, what ``serve
--metrics-only`` runs). :func:`sum_families` adds a scrape of every endpoint up the way
``sum without (instance, worker) (…)`` does, so a test can compare each family's fleet
total with the truth.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from memory_worker.pipeline.process_metrics import PROCESS_LABEL
from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.worker.fleet import WorkerProcess
from tests.support.harness import Fleet, eventually, free_port

Labels = tuple[tuple[str, str], ...]
#: {sample name: {sorted labels: value}}
Samples = dict[str, dict[Labels, float]]


def parse(text: str) -> Samples:
    """A scrape's samples (``_bucket``/``_count``/``_total`` names as exposed)."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def family_names(text: str) -> set[str]:
    """The metric family names of a scrape (``# TYPE`` lines)."""
    return {
        line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ") and line.split()
    }


async def scrape(url: str) -> str:
    """``GET url/metrics``'s text (asserting a 200 in Prometheus' text format)."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(url + "/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


def sum_families(scrapes: Iterable[str], *, drop: Iterable[str] = (PROCESS_LABEL,)) -> Samples:
    """Every endpoint's samples added up, the ``drop`` labels removed first (what
    ``sum without (instance, worker)`` over every scraped target gives)."""
    dropped = set(drop)
    total: Samples = {}
    for text in scrapes:
        for name, series in parse(text).items():
            bucket = total.setdefault(name, {})
            for labels, value in series.items():
                kept = tuple((k, v) for k, v in labels if k not in dropped)
                bucket[kept] = bucket.get(kept, 0.0) + value
    return total


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[name][tuple(sorted(labels.items()))]


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s series that carry ``labels`` (any other labels)."""
    wanted = set(labels.items())
    return sum(v for key, v in samples.get(name, {}).items() if wanted <= set(key))


class ServingFleet:
    """Worker processes with ``run --serve`` and one ``serve`` endpoint, on loopback."""

    def __init__(
        self, settings: Settings, tmp: Path, env_overrides: Mapping[str, Any] | None = None
    ) -> None:
        self.settings = settings
        self.fleet = Fleet(settings, tmp, dict(env_overrides or {}))
        self.worker_urls: list[str] = []
        self.serve: HealthServer | None = None

    def start_workers(self, n: int) -> list[WorkerProcess]:
        started = []
        for _ in range(n):
            port = free_port()
            args = ["--serve", "--host", "127.0.0.1", "--port", str(port)]
            started += self.fleet.start(1, args=args)
            self.worker_urls.append(f"http://127.0.0.1:{port}")
        return started

    async def start_serve(self) -> str:
        self.serve = HealthServer(  # what `serve --metrics-only` runs
            self.settings,
            reveal(self.settings.redis_url) or "",
            host="127.0.0.1",
            port=0,
            console=False,
        )
        await self.serve.start()
        return self.serve.base_url

    @property
    def urls(self) -> list[str]:
        """Every endpoint: ``serve`` first, then each worker's."""
        first = [self.serve.base_url] if self.serve is not None else []
        return first + self.worker_urls

    async def wait_serving(self, timeout: float = 60.0) -> None:
        """Until every worker's endpoint answers ``/metrics``."""

        async def up() -> bool:
            try:
                for url in self.worker_urls:
                    await scrape(url)
            except (httpx.HTTPError, AssertionError):
                return False
            return True

        await eventually(up, timeout=timeout, every=0.2)

    async def scrape_all(self) -> list[str]:
        return [await scrape(url) for url in self.urls]

    async def stop(self) -> None:
        self.fleet.stop_all()
        if self.serve is not None:
            await self.serve.stop()


def exposed_names(text: str) -> set[str]:
    """Every name a query can use on a scrape: each family's name (counters with their
    ``_total``, as exposed), and a histogram's ``_bucket``, ``_sum`` and ``_count`` — also
    for families that have no sample right now (a replica's gauges on a master)."""
    names: set[str] = set()
    for line in text.splitlines():
        if not line.startswith("# TYPE "):
            continue
        _, _, name, kind = line.split()[:4]
        names.add(name)
        if kind == "histogram":
            names.update(f"{name}{suffix}" for suffix in ("_bucket", "_sum", "_count"))
    return names


async def real_exposition(settings: Settings) -> set[str]:
    """The names a real ``serve`` endpoint and a real worker endpoint expose (both servers
    started in this process on the test's Redis, scraped over HTTP)."""
    from memory_worker.pipeline.process_metrics import WorkerMetrics

    url = reveal(settings.redis_url) or ""
    settings = settings.model_copy(update={"metrics_cache_seconds": 0.0})
    fleet = HealthServer(settings, url, host="127.0.0.1", port=0, console=False)
    worker = HealthServer(
        settings, url, host="127.0.0.1", port=0, console=False, process_metrics=WorkerMetrics()
    )
    names: set[str] = set()
    for server in (fleet, worker):
        await server.start()
        try:
            names |= exposed_names(await scrape(server.base_url))
        finally:
            await server.stop()
    return names


METRIC_NAME = re.compile(r"\b(memory_worker_[a-z0-9_]+)\b")


def metric_names(expr: str) -> set[str]:
    """The memory-worker metric names a PromQL expression reads."""
    return set(METRIC_NAME.findall(expr))
