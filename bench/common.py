"""Shared set-up for the benchmarks: a fresh embedded Valkey, settings, runs, a fleet.

Every benchmark prints its figure as a ratio against a baseline measured in
the same run, so machine speed cancels out.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory_worker.api import MemoryQueue
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.models import RunRequest
from memory_worker.pipeline.ticks import TickQueue
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.worker.fleet import Fleet

BASE = datetime(2026, 1, 1, tzinfo=UTC)

#: A farm outage as the workers see it: every job fails with a retryable upstream error.
OUTAGE = Fault(
    kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="[Errno -3] Temporary failure"
)


@dataclass
class Bench:
    settings: Settings
    redis: Any
    tmp: Path
    server: EmbeddedValkey


@asynccontextmanager
async def fresh_bench(**settings: Any) -> AsyncIterator[Bench]:
    """A private Valkey (so INFO stats are ours alone) and settings on it."""
    with tempfile.TemporaryDirectory(prefix="mw-bench-") as tmp:
        server = EmbeddedValkey(Path(tmp) / "valkey").ensure()
        redis = client_from_url(server.url)
        base = Settings(
            redis_url=server.url,
            key_prefix=f"b{uuid.uuid4().hex[:6]}:",
            data_dir=Path(tmp) / "var",
            max_queued_runs=10_000_000,
            max_daily_enqueued_runs=10_000_000,
        )
        try:
            yield Bench(base.model_copy(update=settings), redis, Path(tmp), server)
        finally:
            await redis.aclose()
            server.stop()


class Pipeline(NamedTuple):
    store: RunStore
    queue: MemoryQueue
    ticks: TickQueue


async def pipeline(bench: Bench, runs: int = 0) -> Pipeline:
    """The run store with ``runs`` tiny runs queued, the queue API (to wake it) and the ticks."""
    store = RunStore(bench.redis, bench.settings)
    await fill(store, runs)
    url = reveal(bench.settings.redis_url) or ""
    queue = MemoryQueue(RedisHandle(bench.redis, url), bench.settings)
    return Pipeline(store, queue, TickQueue(bench.redis, queue.keys))


@contextmanager
def farm_fleet(bench: Bench, sim: FarmSimulator, workers: int, **overrides: Any) -> Iterator[Fleet]:
    """``workers`` worker processes on the bench's Valkey and the simulated farm, stopped on exit."""
    fleet = Fleet(bench.settings, bench.tmp, {"discovery_base_url": sim.base_url, **overrides})
    fleet.start(workers)
    try:
        yield fleet
    finally:
        fleet.stop_all()


def run_bench(
    main: Callable[..., Coroutine[Any, Any, None]], doc: str | None, **defaults: float
) -> None:
    """Run ``main`` with one ``--name value`` option per keyword (typed like its default), in order.

    A SIGTERM (``timeout``, a CI runner's stop) cancels ``main``, so its context managers
    stop what they started — the bench's Valkey, the farm, the workers — instead of leaving
    them running with no parent (Python's default SIGTERM ends the process at once)."""
    parser = argparse.ArgumentParser(description=doc)
    for name, default in defaults.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    args = vars(parser.parse_args()).values()

    async def cancellable() -> None:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        await main(*args)

    try:
        asyncio.run(cancellable())
    except asyncio.CancelledError:
        sys.exit(128 + signal.SIGTERM)


def tiny_request(i: int) -> RunRequest:
    """A small valid run: one message, a distinct one-minute window per index."""
    start = BASE + timedelta(minutes=i)
    return RunRequest.model_validate(
        {
            "chat_id": 1 + i % 997,
            "range_start": start.isoformat(),
            "range_end": (start + timedelta(minutes=1)).isoformat(),
            "messages": [
                {
                    "message_id": i + 1,
                    "user_id": 7,
                    "sender_name": "ann",
                    "text": "I love green tea",
                    "sent_at": (start + timedelta(seconds=30)).isoformat(),
                }
            ],
        }
    )


async def fill(store: RunStore, n: int, *, start: int = 0, concurrency: int = 512) -> None:
    """Enqueue ``n`` runs through the real enqueue script, many in flight at once."""
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            await store.enqueue(tiny_request(i))

    for chunk in range(start, start + n, 20_000):
        await asyncio.gather(*(one(i) for i in range(chunk, min(chunk + 20_000, start + n))))


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)
