"""Tick runners for tests, their stores built by the composition root as the worker's are."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from memory_worker.pipeline.processing import RunProcessor
from memory_worker.pipeline.runner import TickRunner
from memory_worker.settings import Settings
from memory_worker.wiring import run_store, tick_queue


def tick_runner(
    *, settings: Settings, redis: Redis, processor: RunProcessor, **fields: Any
) -> TickRunner:
    """A :class:`TickRunner` over ``redis`` with ``processor`` (any other field as given)."""
    return TickRunner(
        settings=settings,
        redis=redis,
        processor=processor,
        store=run_store(redis, settings),
        ticks=tick_queue(redis, settings),
        **fields,
    )
