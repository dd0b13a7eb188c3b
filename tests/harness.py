"""End-to-end helpers: real worker processes (see ``memory_worker.fleet``) and polling."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from memory_worker.fleet import FAST
from memory_worker.fleet import Fleet as _Fleet
from memory_worker.settings import Settings

__all__ = ["FAST", "Fleet", "eventually"]


class Fleet(_Fleet):
    """A fleet with the time-compressed FAST settings under any per-test overrides."""

    def __init__(self, settings: Settings, tmp: Path, env_overrides: dict[str, Any] | None = None):
        super().__init__(settings, tmp, {**FAST, **(env_overrides or {})})


async def eventually(
    predicate: Callable[[], Awaitable[bool] | bool], *, timeout: float = 20.0, every: float = 0.05
) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        value = predicate()
        if not isinstance(value, bool):
            value = await value
        if value:
            return
        if loop.time() > end:
            raise AssertionError(f"condition not met within {timeout:.1f}s")
        await asyncio.sleep(every)
