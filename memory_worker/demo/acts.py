"""The demo's acts: extraction, the outage, recovery and the summary, narrated."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table

from memory_worker.api import MemoryQueue
from memory_worker.demo.stage import (
    AdminInbox,
    ProgressBar,
    as_text,
    counter_delta,
    readable_cards,
    until,
)
from memory_worker.demo.story import (
    RECALL_QUESTIONS,
    UPSTREAM_ERROR,
    StoryFacts,
    Timing,
    story_checks,
    story_held,
)
from memory_worker.farmsim import FarmSimulator
from memory_worker.models import Run, RunRequest, RunStatus
from memory_worker.pipeline.ticks import TickCounts, TickQueue
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.storage.connections import awaited


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
        return {as_text(k): int(v) for k, v in raw.items()}

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

        await self._until_completed(ids, "extracting")
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
                words = " [yellow](words only: farm down)[/]" if hits.degraded else ""
                table.add_row(str(chat_id), question, card.fact_text + words, f"{score:.2f}")
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
        table = await self._watch_outage(ids, started)
        counts = await self._settle_outage(ids, started, before)
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

    async def _watch_outage(self, ids: Sequence[str], started: float) -> Table:
        """Sample the fleet while the farm is down: a row every probe interval or so."""
        interval = self.timing.probe_interval
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
        return table

    async def _settle_outage(
        self, ids: Sequence[str], started: float, before: dict[str, int]
    ) -> TickCounts:
        """Wait until only the probe waits, then record what the outage cost."""
        interval = self.timing.probe_interval

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
        self.facts.outage_failures = counter_delta(before, after, "failed:")
        self.facts.outage_retired = counter_delta(before, after, "retired:")
        self.facts.outage_attempts_spent = (
            sum(r.attempts for r in runs) + self.facts.outage_failures
        )
        return counts

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
        from memory_worker.ops.metrics import report_data

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
        self.facts.drained = await self._until_completed(all_ids, "draining")
        self.facts.drain_seconds = time.monotonic() - started
        runs = await self.runs(all_ids)
        self.facts.total_runs = len(all_ids)
        self.facts.completed = sum(r.status is RunStatus.COMPLETED for r in runs)
        self.say(
            f"[green]✓[/] Backlog drained in {self.facts.drain_seconds:.1f}s: "
            f"{self.facts.completed}/{self.facts.total_runs} runs completed."
        )

    async def _until_completed(self, ids: Sequence[str], label: str) -> bool:
        """Show a progress bar until every run completed (True) or the wait ran out."""
        with ProgressBar(self.console, label) as (progress, task):

            async def advance() -> bool:
                completed = sum(r.status is RunStatus.COMPLETED for r in await self.runs(ids))
                progress.update(task, completed=completed, total=len(ids))
                return completed == len(ids)

            return await until(advance, timeout=self.timing.wait_seconds)

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
