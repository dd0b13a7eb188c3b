"""One run by id (§13): cancel it for good, or replay it — ``runs cancel|replay ID`` and the
console's run page. A cancel spans the run store and the card store, so it lives here.

**Cancel**, in this order:

1. the run is read: not there, finished (completed, skipped) or cancelled already — answered,
   nothing written (:func:`cancel_preview` says which, and what a cancel would do);
2. the card store marks the run cancelled for card writes (``cards/lua/cancel_mark.lua``):
   from then on the run's card write (``cards/lua/apply.lua``) refuses, atomically, so a
   worker still working on it writes nothing of it. When its card write landed before, the
   cancel is refused instead (the run's memory is written: it completes). Either way nothing
   is half-written: the card write is one script;
3. the run store takes it out for good (``runs/lua/cancel.lua``): off its lane (queued,
   parked, released, due for a retry, retired, or processing — its lease goes), status
   ``cancelled``, a ``cancel`` entry in its error log. The worker that held a processing run
   stops at its next checkpoint: its lease renewal answers "cancelled", its checks before the
   embedding and the card write find it cancelled, its card write refuses; its completion,
   failure and release are refused by status.

**Replay by id**: a failed (retired or waiting for its backoff), skipped or cancelled run gets
a fresh set of attempts through replay's own path (:meth:`ReplayStore.plan_run`, then
:meth:`ReplayStore.apply`, scope ``run``); a cancelled run's card mark goes first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from memory_worker.cards import CardStore
from memory_worker.models import ErrorLogEntry, Run, RunStatus
from memory_worker.runs import RunStore
from memory_worker.runs.replay import ReplayOutcome, ReplayPlan, ReplayStore


class CancelOutcome(StrEnum):
    """What a cancel of one run did (or would do)."""

    CANCELLED = "cancelled"  # taken out for good
    ALREADY = "already_cancelled"  # cancelled before: nothing changed
    FINISHED = "finished"  # completed or skipped: nothing left to cancel
    WRITTEN = "written"  # its card write landed: its memory is written, it completes
    RACED = "raced"  # its status kept moving under the cancel: try again


#: Outcomes that refuse the cancel (the CLI exits 2 on them).
REFUSED = frozenset({CancelOutcome.FINISHED, CancelOutcome.WRITTEN, CancelOutcome.RACED})


@dataclass(frozen=True, slots=True)
class CancelPreview:
    """What a cancel of ``run`` would do, before anything is written."""

    run: Run
    outcome: CancelOutcome
    #: One sentence for the operator: what happens (or why nothing can).
    what: str

    @property
    def allowed(self) -> bool:
        return self.outcome is CancelOutcome.CANCELLED


@dataclass(frozen=True, slots=True)
class CancelResult:
    """What a cancel did."""

    run_id: str
    chat_id: int
    outcome: CancelOutcome
    #: The run's status before the cancel.
    before: str

    def as_dict(self) -> dict[str, str | int]:
        return {
            "run_id": self.run_id,
            "chat_id": self.chat_id,
            "outcome": self.outcome.value,
            "status_before": self.before,
        }


def cancel_preview(run: Run) -> CancelPreview:
    """What cancelling ``run`` would do (pure: from the run as read)."""
    status = run.status
    if status is RunStatus.CANCELLED:
        return CancelPreview(run, CancelOutcome.ALREADY, "It is cancelled already.")
    if status in (RunStatus.COMPLETED, RunStatus.SKIPPED):
        return CancelPreview(
            run, CancelOutcome.FINISHED, f"It is {status.value}: nothing left to cancel."
        )
    if status is RunStatus.PROCESSING:
        what = (
            f"A worker ({run.lease_owner or 'unknown'}) holds it: it stops at its next "
            "checkpoint and nothing of the run is written; the run is cancelled at once."
        )
    elif status is RunStatus.FAILED:
        what = (
            "It leaves the retired runs (no filter replay takes it)."
            if run.retired
            else "It leaves the retry lane: its next attempt never comes."
        )
    else:
        what = "It leaves the queue: no worker claims it."
    return CancelPreview(
        run, CancelOutcome.CANCELLED, what + " `replay` by id puts it back while it is kept."
    )


def cancel_entry(run: Run, *, actor: str, now_ms: int) -> ErrorLogEntry:
    """The error-log entry that records a cancel (who, from which status; no text)."""
    return ErrorLogEntry(
        attempt=run.attempts,
        failed_at=datetime.fromtimestamp(now_ms / 1000, tz=UTC),
        code="cancelled",
        reason=actor,
        message=f"cancelled by an operator ({actor}) while {run.status.value}",
        kind="cancel",
    )


class RunActions:
    """Cancel or replay one run by id, over the run store and the card store."""

    def __init__(self, runs: RunStore, cards: CardStore, replays: ReplayStore) -> None:
        self.runs = runs
        self.cards = cards
        self.replays = replays

    async def preview_cancel(self, run_id: str) -> CancelPreview:
        """What :meth:`cancel` would do (reads only; raises ``RunNotFound``)."""
        return cancel_preview(await self.runs.get(run_id))

    async def cancel(self, run_id: str, *, actor: str, now_ms: int) -> CancelResult:
        """Cancel the run (see the module doc for the steps); raises ``RunNotFound``."""
        preview = await self.preview_cancel(run_id)
        run = preview.run
        if not preview.allowed:
            return CancelResult(run.id, run.chat_id, preview.outcome, run.status.value)
        if not await self.cards.mark_cancelled(run.chat_id, run.id, now_ms=now_ms):
            return CancelResult(run.id, run.chat_id, CancelOutcome.WRITTEN, run.status.value)
        entry = cancel_entry(run, actor=actor, now_ms=now_ms).model_dump_json()
        answer = await self.runs.cancel(run.id, entry, at_ms=now_ms)
        outcome = {
            "cancelled": CancelOutcome.CANCELLED,
            "already": CancelOutcome.ALREADY,
            "finished": CancelOutcome.FINISHED,
        }.get(answer.outcome, CancelOutcome.RACED)
        return CancelResult(run.id, run.chat_id, outcome, answer.before)

    async def preview_replay(self, run_id: str, *, now_ms: int) -> ReplayPlan:
        """The plan of replaying the run (one item, or none: see ``aged_out``); reads only."""
        return await self.replays.plan_run(run_id, now_ms=now_ms)

    async def replay(self, run_id: str, *, now_ms: int) -> tuple[ReplayPlan, ReplayOutcome]:
        """Replay the run by id (replay's own path); a cancelled run's card mark goes first,
        so the run may write again once a worker claims it."""
        replay = await self.preview_replay(run_id, now_ms=now_ms)
        if not replay.items:
            return replay, ReplayOutcome()
        run = await self.runs.get(run_id)
        if run.status is RunStatus.CANCELLED:
            await self.cards.drop_cancel_mark(run.chat_id, run.id)
        return replay, await self.replays.apply(replay)


def cancel_refusal(run_id: str, outcome: CancelOutcome) -> str:
    """Why a cancel changed nothing (one line)."""
    if outcome is CancelOutcome.WRITTEN:
        return (
            f"run {run_id} has written its memory already (its card write landed): it "
            "completes; nothing was cancelled"
        )
    if outcome is CancelOutcome.FINISHED:
        return f"run {run_id} is finished: nothing left to cancel"
    if outcome is CancelOutcome.ALREADY:
        return f"run {run_id} is cancelled already"
    return f"run {run_id} kept changing status under the cancel: nothing was changed; try again"


def replay_refusal(run: Run) -> str:
    """Why a run cannot be replayed by id (one line)."""
    if run.status in (RunStatus.QUEUED, RunStatus.PROCESSING):
        return f"run {run.id} is {run.status.value}: it will run, nothing to replay"
    if run.status is RunStatus.COMPLETED:
        return f"run {run.id} is completed: its messages are gone, nothing to replay"
    if run.status is RunStatus.FAILED and run.attempts == 0:
        return f"run {run.id} was replayed already and waits for its first attempt"
    return f"run {run.id} cannot be replayed: its messages are gone (retention or a forget)"
