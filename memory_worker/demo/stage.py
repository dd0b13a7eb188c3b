"""The demo's stage: a loopback admin inbox, in-process workers, storage, polling."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memory_worker.api import MemoryQueue
from memory_worker.models import RunRequest
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.worker.main import MemoryWorker, create_worker


class AdminInbox:
    """A loopback webhook (and Telegram-compatible) endpoint that keeps every page."""

    def __init__(self) -> None:
        self.pages: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self) -> None:
        app = web.Application()

        async def webhook(request: web.Request) -> web.Response:
            self.pages.append(await request.json())
            return web.json_response({"ok": True})

        async def telegram(request: web.Request) -> web.Response:
            body = await request.json()
            self.pages.append({"type": "telegram", "text": body.get("text", "")})
            return web.json_response({"ok": True, "result": {"message_id": len(self.pages)}})

        app.router.add_post("/webhook", webhook)
        app.router.add_post("/bot{token}/sendMessage", telegram)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = getattr(site, "_server", None)
        self.port = int(server.sockets[0].getsockname()[1]) if server else 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/webhook"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


class Workers:
    """In-process workers built like ``memory-worker run`` (default pipeline wiring)."""

    def __init__(self, settings: Settings, url: str, n: int) -> None:
        self.settings = settings
        self.url = url
        self.n = n
        self.workers: list[MemoryWorker] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        for _ in range(self.n):
            worker = create_worker(self.settings, client_from_url(self.url), handle_signals=False)
            self.workers.append(worker)
            self.tasks.append(asyncio.create_task(worker.async_run()))

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        for worker in self.workers:
            with contextlib.suppress(Exception):
                await worker.close()


async def until(
    predicate: Callable[[], Awaitable[bool]], *, timeout: float, every: float = 0.05
) -> bool:
    """Poll ``predicate`` until it holds (True) or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await predicate():
            return True
        await asyncio.sleep(every)
    return False


async def readable_cards(queue: MemoryQueue, runs: Sequence[RunRequest]) -> list[Any]:
    """Every card the bot can read for these chats (chat cards + each participant's)."""
    cards: dict[tuple[int, str], Any] = {}  # card ids are per chat
    by_chat: dict[int, set[int]] = {}
    for request in runs:
        by_chat.setdefault(request.chat_id, set()).update(m.user_id for m in request.messages)
    for chat_id, users in by_chat.items():
        for user in (None, *sorted(users)):
            with contextlib.suppress(Exception):  # consolidation not wired: no card store yet
                for card in await queue.visible_cards(chat_id, user_id=user):
                    cards[(card.chat_id, card.id)] = card
    return list(cards.values())


class ProgressBar:
    """A Rich progress bar as a context manager yielding (progress, task)."""

    def __init__(self, console: Console, label: str) -> None:
        self.progress = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )

    def __enter__(self) -> tuple[Progress, Any]:
        self.progress.start()
        return self.progress, self.progress.add_task("runs", total=None)

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


def as_text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def counter_delta(before: dict[str, int], after: dict[str, int], prefix: str) -> int:
    def total(counters: dict[str, int]) -> int:
        return sum(v for k, v in counters.items() if k.startswith(prefix))

    return total(after) - total(before)


@contextlib.asynccontextmanager
async def storage(settings: Settings, data_dir: Path, console: Console) -> AsyncIterator[str]:
    """REDIS_URL (under a throw-away prefix) or the demo's own embedded Valkey."""
    if settings.redis_url is not None:
        console.print("Redis: [cyan]REDIS_URL[/] (keys under a throw-away prefix)", highlight=False)
        yield settings.redis_url.get_secret_value()
        return
    server = EmbeddedValkey(data_dir / "valkey").ensure()
    console.print(
        f"Redis: embedded Valkey on a private socket, data in [cyan]{server.data_dir}[/]",
        highlight=False,
    )
    try:
        yield server.url
    finally:
        server.stop()


async def delete_prefix(url: str, prefix: str) -> None:
    client = client_from_url(url)
    try:
        keys = [k async for k in client.scan_iter(match=f"*{prefix}*", count=1000)]
        for start in range(0, len(keys), 500):
            await client.delete(*keys[start : start + 500])
    finally:
        await client.aclose()
