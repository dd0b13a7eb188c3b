"""Fault rows 1–4, "farm answers misread" (§3, §4, §5, §7).

Each scenario runs the production pipeline (``build_tick_runner``: routed
walker, fleet-shared breakers and the run store on the test Valkey, the real
Discovery client over HTTP) against the loopback farm simulator, one tick at a
time, and asserts what the spec promises: attempts spent, status, releases,
error log, breaker state and the routing events behind pages.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from llm_client import BreakerStore, Circuit, EventType, RedisEventLog
from memory_worker.farmsim import Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import Run, RunStatus
from memory_worker.pipeline.runner import TickRunner
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.wiring import build_tick_runner
from tests.faults.context import FaultContext, Scenario, seed_card_vector
from tests.support.factories import make_request
from tests.support.harness import Fleet, completed_run, eventually
from tests.support.routes import farm_target, route, routes_toml

#: Two extraction targets on the simulator (services llm-a, llm-b) and the embedder.
TWO_TARGETS = routes_toml(
    memory_extraction=route(
        farm_target("llm-a"), farm_target("llm-b"), slot_wait_seconds=1.0, slot_poll_seconds=0.1
    ),
    embedding=route(farm_target("embedder")),
)
A = "llm-a/memory-extractor"
B = "llm-b/memory-extractor"
EMBEDDER = "embedder/embedder"
EXTRACTOR = "llm-openai"  # the default extraction service

#: Budgets compressed for tests (seconds); every other knob keeps its default.
FAST: dict[str, Any] = {
    "request_timeout_seconds": 5.0,
    "task_timeout_seconds": 30.0,
    "capacity_wait_seconds": 0.5,
    "capacity_poll_seconds": 0.05,
    "job_poll_seconds": 0.02,
    "backoff_unit_seconds": 0.01,
    "lease_renew_seconds": 0.5,
}


def crashed() -> Fault:
    return Fault(FaultKind.UPSTREAM_STATUS, status_code=500, message="Internal Server Error")


async def pipeline(ctx: FaultContext, routes: str | None = None, **overrides: Any) -> TickRunner:
    update: dict[str, Any] = {**FAST, "discovery_base_url": ctx.sim.base_url, **overrides}
    if routes is not None:
        path = Path(ctx.tmp_path) / "routes.toml"
        path.write_text(routes)
        update["routes_file"] = path
    settings = ctx.settings.model_copy(update=update)
    return await build_tick_runner(settings, ctx.redis)


async def close(pipe: TickRunner) -> None:
    for closer in pipe.closers:
        await closer()


async def enqueue(ctx: FaultContext, chat_id: int) -> str:
    result = await RunStore(ctx.redis, ctx.settings).enqueue(make_request(chat_id))
    assert result.run_id
    return result.run_id


async def run_of(ctx: FaultContext, run_id: str) -> Run:
    return await RunStore(ctx.redis, ctx.settings).get(run_id)


def breakers(ctx: FaultContext, settings: Settings) -> BreakerStore:
    return BreakerStore(ctx.redis, Keys(settings.key_prefix), settings.breaker_config())


async def event_types(ctx: FaultContext) -> list[str]:
    log = RedisEventLog(ctx.redis, Keys(ctx.settings.key_prefix))
    return [event.type for event in await log.recent(limit=500)]


async def run_completed(ctx: FaultContext, run_id: str, *, attempts: int, releases: int) -> Run:
    """The run, asserted completed after ``attempts`` spent attempts and ``releases`` releases."""
    run = await run_of(ctx, run_id)
    assert (run.status, run.attempts, run.releases) == (RunStatus.COMPLETED, attempts, releases)
    return run


def assert_released(run: Run, *, attempts: int, releases: int, failures: int = 0) -> None:
    """Queued again, the attempt refunded, nothing added to the failure log."""
    assert run.status is RunStatus.QUEUED, run.status
    assert (run.attempts, run.releases, run.retired) == (attempts, releases, False)
    assert len([e for e in run.error_log if e.kind == "failure"]) == failures


# --- row 1: HTTP 500 is provider_error ------------------------------------------------------


async def row1(ctx: FaultContext) -> None:
    """A backend answering 500 is charged and failed over; a walk on which every target crashed fails the run;
    a node answering 500 to everything is quarantined, and then runs are released."""
    pipe = await pipeline(
        ctx,
        TWO_TARGETS,
        breaker_failure_threshold=3,
        breaker_cooldown_seconds=60.0,
        consolidation_backend_retry_interval=60.0,
    )
    store = breakers(ctx, pipe.settings)
    try:
        # One node crashes: failover to the other, the crash charged to its breaker.
        ctx.sim.set_fault("llm-a", crashed())
        first = await enqueue(ctx, 101)
        assert await pipe.tick("t1") == "completed"
        run = await run_completed(ctx, first, attempts=1, releases=0)
        assert (await store.view(A)).consecutive_failures == 1
        assert (await store.view(B)).consecutive_failures == 0

        # Every node crashes: the walk ends on provider_error and the run FAILS (attempt spent).
        ctx.sim.set_fault("llm-b", crashed())
        second = await enqueue(ctx, 102)
        assert await pipe.tick("t2") == "failed"
        run = await run_of(ctx, second)
        assert (run.status, run.attempts, run.releases) == (RunStatus.FAILED, 1, 0)
        (entry,) = run.error_log
        assert (entry.code, entry.reason) == ("HTTP_500", "provider_error")
        assert (
            (await store.view(A)).consecutive_failures,
            (await store.view(B)).consecutive_failures,
        ) == (2, 1)

        # Retried, it crashes both nodes again: A's breaker opens (threshold 3), the run fails.
        await asyncio.sleep(0.05)  # the backoff (attempts² × 10 ms) has passed
        assert await pipe.tick("t3") == "failed"
        assert (await store.view(A)).circuit is Circuit.OPEN
        # A is quarantined and B crashes (its breaker opens too): not every target crashed on
        # this call, so the route could not serve it — released, the attempt refunded.
        await asyncio.sleep(0.05)
        assert await pipe.tick("t4") == "deferred"
        assert {(await store.view(t)).circuit for t in (A, B)} == {Circuit.OPEN}
        assert_released(await run_of(ctx, second), attempts=2, releases=1, failures=2)
        run = await run_of(ctx, second)
        assert (run.attempts, run.retired) == (2, False)
        assert [e.reason for e in run.error_log] == ["provider_error"] * 2
        submits = ctx.sim.submits("llm-a") + ctx.sim.submits("llm-b")

        # Quarantined: the fleet's one fail-open probe crashes again → released, refunded.
        await asyncio.sleep(0.1)
        assert await pipe.tick("t5") == "deferred"
        assert_released(await run_of(ctx, second), attempts=2, releases=2, failures=2)
        assert ctx.sim.submits("llm-a") + ctx.sim.submits("llm-b") == submits + 1
        # Within the probe interval nobody even claims: no farm traffic, nothing spent.
        assert await pipe.tick("t6") == "deferred"
        assert ctx.sim.submits("llm-a") + ctx.sim.submits("llm-b") == submits + 1
        assert_released(await run_of(ctx, second), attempts=2, releases=2, failures=2)
        types = await event_types(ctx)
        assert EventType.CIRCUIT_OPENED in types
        assert EventType.CIRCUIT_OPEN_EXHAUSTION in types  # pages the admins

        # The farm heals and an operator resets the breakers: the run completes.
        ctx.sim.clear_faults()
        for target in (A, B):
            await store.reset(target)
        assert await pipe.tick("t7") == "completed"
        run = await run_completed(ctx, second, attempts=3, releases=2)
    finally:
        await close(pipe)


# --- row 2: busy answers are capacity ---------------------------------------------------------

BUSY = (
    "server busy",
    "queue full",
    "draining",
    "model loading",
    "insufficient memory",
    "token budget exhausted",
    "out of memory",
    "too many requests",
)


async def row2(ctx: FaultContext) -> None:
    """Busy answers never charge a breaker; all-busy and stuck-QUEUED runs are released."""
    pipe = await pipeline(ctx, TWO_TARGETS)
    store = breakers(ctx, pipe.settings)
    try:
        # A busy node (more answers than the trip threshold of 5) is never quarantined.
        for index, text in enumerate(BUSY):
            ctx.sim.set_fault(
                "llm-a", Fault(FaultKind.UPSTREAM_STATUS, status_code=503, message=text)
            )
            run_id = await enqueue(ctx, 200 + index)
            assert await pipe.tick(f"b{index}") == "completed"
            await run_completed(ctx, run_id, attempts=1, releases=0)
        view = await store.view(A)
        assert (view.circuit, view.consecutive_failures, view.window_calls) == (
            Circuit.CLOSED,
            0,
            0,
        )
        assert ctx.sim.stats()["llm-a"]["submits"] == len(BUSY)
        assert EventType.CIRCUIT_OPENED not in await event_types(ctx)

        # Every node busy for the whole slot wait → released, attempt refunded.
        ctx.sim.set_fault(
            "llm-b", Fault(FaultKind.UPSTREAM_STATUS, status_code=500, message="busy")
        )
        busy_run = await enqueue(ctx, 298)
        assert await pipe.tick("all-busy") == "deferred"
        assert_released(await run_of(ctx, busy_run), attempts=0, releases=1)
        assert {(await store.view(t)).circuit for t in (A, B)} == {Circuit.CLOSED}
        assert (await store.view(B)).consecutive_failures == 0

        # Jobs accepted but stuck QUEUED: capacity when the capacity wait ends, not a
        # task timeout after capacity wait + task budget (30 s here) → released.
        ctx.sim.clear_faults()
        for service in ("llm-a", "llm-b"):
            ctx.sim.set_fault(service, Fault(FaultKind.STUCK_QUEUED))
        started = time.monotonic()
        assert await pipe.tick("queued") == "deferred"
        assert time.monotonic() - started < 10.0
        assert_released(await run_of(ctx, busy_run), attempts=0, releases=2)
        assert {(await store.view(t)).consecutive_failures for t in (A, B)} == {0}

        # Capacity frees up: the run completes on its first spent attempt.
        ctx.sim.clear_faults()
        assert await pipe.tick("free") == "completed"
        await run_completed(ctx, busy_run, attempts=1, releases=2)
    finally:
        await close(pipe)


# --- row 3: cancelled jobs, string errors, farm-level codes ----------------------------------

UNREACHED = (
    Fault(FaultKind.JOB_CANCELLED, code="UPSTREAM_ERROR", message="backend unreachable"),
    Fault(FaultKind.JOB_FAILED_STRING, message="[Errno -3] Temporary failure in name resolution"),
    Fault(FaultKind.JOB_FAILED_TOP_LEVEL, message="UPSTREAM_ERROR: connection refused"),
    Fault(FaultKind.SUBMIT_STATUS, status_code=404, code="SERVICE_NOT_FOUND", message="gone"),
)


async def row3(ctx: FaultContext) -> None:
    """Answers that say the backend was never reached release the run, however phrased."""
    pipe = await pipeline(ctx, breaker_failure_threshold=len(UNREACHED) + 1)
    store = breakers(ctx, pipe.settings)
    target = f"{EXTRACTOR}/memory-extractor"
    try:
        run_id = await enqueue(ctx, 301)
        for index, fault in enumerate(UNREACHED, start=1):
            ctx.sim.set_fault(EXTRACTOR, fault)
            assert await pipe.tick(f"u{index}") == "deferred", fault.kind
            assert_released(await run_of(ctx, run_id), attempts=0, releases=index)
            # read as the farm saying "unreachable": charged like any outage
            assert (await store.view(target)).consecutive_failures == index
        ctx.sim.clear_faults()
        assert await pipe.tick("healed") == "completed"
        run = await run_completed(ctx, run_id, attempts=1, releases=len(UNREACHED))
        assert [e for e in run.error_log if e.kind == "failure"] == []
    finally:
        await close(pipe)


# --- row 4: the embedder's own budget; its timeout releases -----------------------------------


#: A tick that met a hung embedder ends far inside this: it costs the embedding budgets
#: (0.5 s each here, plus a retry hop and a loaded host's slack), never the 720 s task
#: budget. Asserted as that promise, not as a timing.
WELL_BELOW_THE_TASK_BUDGET = 120.0
#: Ticks a step of row 4 may take: on a loaded host a 0.5 s capacity wait can end a tick
#: busy (a job still queued), which releases the run (0 attempts) and tries again.
ROW4_TICKS = 10


def paid_extractions(ctx: FaultContext) -> int:
    """Extraction jobs the farm ran to success (what the farm is paid for)."""
    return int(ctx.sim.stats().get(EXTRACTOR, {}).get("succeeded", 0))


async def tick_released(pipe: TickRunner, ctx: FaultContext, run_id: str, name: str) -> Run:
    """One tick that releases ``run_id``, never costing the 720 s task budget: deferred, the
    attempt refunded, nothing in its failure log."""
    started = time.monotonic()
    assert await pipe.tick(name) == "deferred", name
    assert time.monotonic() - started < WELL_BELOW_THE_TASK_BUDGET
    run = await run_of(ctx, run_id)
    assert_released(run, attempts=0, releases=run.releases)
    return run


async def tick_until_completed(pipe: TickRunner, ctx: FaultContext, run_id: str, name: str) -> Run:
    """Tick until ``run_id`` completes on its first attempt; a tick before that (a busy
    embedder on a loaded host) only releases it."""
    for index in range(ROW4_TICKS):
        outcome = await pipe.tick(f"{name}-{index}")
        if outcome == "completed":
            run = await run_of(ctx, run_id)
            assert (run.status, run.attempts) == (RunStatus.COMPLETED, 1)
            assert [e for e in run.error_log if e.kind == "failure"] == []
            return run
        assert outcome == "deferred", (outcome, await run_of(ctx, run_id))
        run = await run_of(ctx, run_id)
        assert_released(run, attempts=0, releases=run.releases)
    raise AssertionError(f"{run_id} not completed in {ROW4_TICKS} ticks")


async def row4(ctx: FaultContext) -> None:
    """A hung embedder costs the embedding budget, not the 720 s task budget, and releases.

    The promises, not the timings: while the embedder hangs every tick releases the run
    (0 attempts, no failure), a chat with card vectors spends no extraction (the related
    lookup meets the hang first — timed out, or, on a loaded host, its retry hop ending on
    a job still queued: busy; a job stuck in the queue makes that certain), a new chat's extraction is paid once and kept for the rerun,
    and once the embedder answers the run completes on its first attempt."""
    pipe = await pipeline(
        ctx,
        task_timeout_seconds=720.0,
        embedding_task_timeout_seconds=0.5,
        embedding_capacity_wait_seconds=0.5,
    )
    try:
        await seed_card_vector(ctx, 401)
        run_id = await enqueue(ctx, 401)
        ctx.sim.set_fault("embedder", Fault(FaultKind.HANG))
        run = await tick_released(pipe, ctx, run_id, "hung")
        assert run.releases == 1
        # The lookup met the hang before any extraction: no extraction call was spent.
        assert ctx.sim.submits(EXTRACTOR) == 0
        assert ctx.sim.submits("embedder") >= 1

        ctx.sim.clear_faults()
        await tick_until_completed(pipe, ctx, run_id, "healed")
        assert paid_extractions(ctx) == 1

        # An embedder whose jobs hang in its queue ends the lookup's walk busy (what a loaded
        # host makes of the hang above, made certain): released, no extraction spent.
        await seed_card_vector(ctx, 404)
        queued = await enqueue(ctx, 404)
        ctx.sim.set_fault("embedder", Fault(FaultKind.STUCK_QUEUED))
        run = await tick_released(pipe, ctx, queued, "queued")
        assert run.release_log[-1].reason == "capacity_unavailable", run.release_log
        assert ctx.sim.submits(EXTRACTOR) == 1  # the first chat's, none for this one
        ctx.sim.clear_faults()
        await tick_until_completed(pipe, ctx, queued, "dequeued")
        assert paid_extractions(ctx) == 2

        # A new chat makes no lookup: its extraction is spent, then its cards' embedding
        # hangs and releases it all the same; the rerun takes the extraction it kept (§7).
        new_chat = await enqueue(ctx, 403)
        ctx.sim.set_fault("embedder", Fault(FaultKind.HANG))
        for index in range(ROW4_TICKS):
            await tick_released(pipe, ctx, new_chat, f"hung-new-chat-{index}")
            if paid_extractions(ctx) == 3:
                break
        assert paid_extractions(ctx) == 3
        ctx.sim.clear_faults()
        await tick_until_completed(pipe, ctx, new_chat, "healed-new-chat")
        assert paid_extractions(ctx) == 3  # not paid twice
    finally:
        await close(pipe)

    # The same through a real worker process with the default 15 s embedding budget
    # shortened by its setting: released (never failed) while the embedder hangs, then done.
    fleet = Fleet(
        ctx.settings,
        Path(ctx.tmp_path),
        env_overrides={
            "discovery_base_url": ctx.sim.base_url,
            "task_timeout_seconds": 720.0,
            "embedding_task_timeout_seconds": 0.5,
            "embedding_capacity_wait_seconds": 0.5,
        },
    )
    await seed_card_vector(ctx, 402)
    second = await enqueue(ctx, 402)
    ctx.sim.set_fault("embedder", Fault(FaultKind.HANG))
    extractions = ctx.sim.submits(EXTRACTOR)
    try:
        fleet.start(1)

        async def released_twice() -> bool:
            return (await run_of(ctx, second)).releases >= 2

        await eventually(released_twice, timeout=90)
        run = await run_of(ctx, second)  # the worker ticks on: queued or claimed again
        assert run.status in (RunStatus.QUEUED, RunStatus.PROCESSING), run.status
        assert run.attempts == (1 if run.status is RunStatus.PROCESSING else 0)
        assert not run.retired
        assert [e for e in run.error_log if e.kind == "failure"] == []
        assert ctx.sim.submits(EXTRACTOR) == extractions
        ctx.sim.clear_faults()

        run = await completed_run(lambda: run_of(ctx, second), timeout=90)
        assert run.attempts == 1
        assert [e for e in run.error_log if e.kind == "failure"] == []
    finally:
        fleet.stop_all()


ROWS: dict[int, Scenario] = {1: row1, 2: row2, 3: row3, 4: row4}
