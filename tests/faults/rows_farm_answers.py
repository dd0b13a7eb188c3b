"""Fault rows 24–26 (§3, §4): the job status's error code, busy answers, lost jobs.

Real worker processes on the test Valkey and the loopback farm simulator answering in the
exact shapes a real farm sends; each row asserts attempts spent, breaker state, releases and
pages, and that the runs complete once the farm heals.

- 24: ``{"status":"JOB_STATE_FAILED","error_code":"UPSTREAM_ERROR","error":"[Errno -3] …"}``
  releases every run (no attempt spent), charges and opens the breakers and pages; then, in
  process, every never-reached code releases and ``UPSTREAM_TIMEOUT``/unknown codes fail.
- 25: the fleet-breaker original's busy answers (HTTP status + body, from the backend and
  from the farm) never charge a healthy node, 21 in a row; every node busy releases.
- 26: a farm that answers every poll ``404 {"error": "job not found"}`` for 45 s costs no
  attempt and retires nothing; the runs complete after.
"""

from __future__ import annotations

from typing import Any

from llm_client import BreakerStore, Circuit, EventType
from memory_worker.api import MemoryQueue
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import Run, RunStatus
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.storage.connections import RedisHandle
from tests.faults.context import FaultContext, Scenario, delivered_pages
from tests.faults.rows_farm import EXTRACTOR, assert_released, close, event_types, pipeline
from tests.support.clock import ManualClock
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually
from tests.support.routes import FARM_EMBEDDER, farm_target, route, write_routes

DNS = "[Errno -3] Temporary failure in name resolution"
A, B = "llm-a/memory-extractor", "llm-b/memory-extractor"

#: Worker settings of these rows: quick probes and short, capped breaker cooldowns.
QUICK: dict[str, Any] = {
    "consolidation_backend_retry_interval": 0.3,
    "breaker_cooldown_seconds": 0.5,
    "breaker_cooldown_max_seconds": 2.0,
}


def _fleet(ctx: FaultContext, sim: FarmSimulator, **overrides: Any) -> Fleet:
    """A fleet whose extraction route is llm-a then llm-b, both on ``sim``."""
    routes = write_routes(
        ctx.tmp_path,
        memory_extraction=route(
            farm_target("llm-a"), farm_target("llm-b"), slot_wait_seconds=1.0, slot_poll_seconds=0.1
        ),
        embedding=route(FARM_EMBEDDER),
    )
    env = {"discovery_base_url": sim.base_url, "routes_file": str(routes), **QUICK, **overrides}
    return Fleet(ctx.settings, ctx.tmp_path, env)


def _breakers(ctx: FaultContext) -> BreakerStore:
    s = ctx.settings
    return BreakerStore(ctx.redis, Keys(s.key_prefix), s.breaker_config())


async def _enqueue(ctx: FaultContext, chats: range) -> list[str]:
    store = RunStore(ctx.redis, ctx.settings)
    ids = [(await store.enqueue(make_request(chat, hour=chat % 24))).run_id for chat in chats]
    await MemoryQueue(RedisHandle(ctx.redis, ctx.redis_url), ctx.settings).wake()
    return [run_id for run_id in ids if run_id]


async def _runs(ctx: FaultContext, ids: list[str]) -> list[Run]:
    return await RunStore(ctx.redis, ctx.settings).get_many(ids)


async def _releases(ctx: FaultContext, ids: list[str]) -> int:
    """Releases of these runs in all (the claim takes the newest window first, so during an
    outage the probes mostly take the same run: count the tries, not the runs)."""
    return sum(run.releases for run in await _runs(ctx, ids))


async def _all_completed(ctx: FaultContext, ids: list[str]) -> bool:
    return all(run.status is RunStatus.COMPLETED for run in await _runs(ctx, ids))


async def _until_completed(ctx: FaultContext, ids: list[str]) -> None:
    await eventually(lambda: _all_completed(ctx, ids), timeout=60)


def _failures(run: Run) -> list[Any]:
    return [entry for entry in run.error_log if entry.kind == "failure"]


async def _nothing_spent(ctx: FaultContext, ids: list[str]) -> None:
    """While workers run: nothing failed or retired, no failure logged, and a run that is not
    being worked on right now holds no spent attempt."""
    counts = await RunStore(ctx.redis, ctx.settings).counts()
    assert (counts["failed"], counts["retired"]) == (0, 0), counts
    for run in await _runs(ctx, ids):
        assert _failures(run) == [], run.error_log
        assert run.attempts == (1 if run.status is RunStatus.PROCESSING else 0), run


async def _completed_on_first_attempt(ctx: FaultContext, ids: list[str], releases: int) -> None:
    """Every run completes having spent exactly one attempt (the one that succeeded), after
    ``releases`` released tries or more in all."""
    await _until_completed(ctx, ids)
    for run in await _runs(ctx, ids):
        assert (run.attempts, run.retired) == (1, False), run
        assert _failures(run) == []
    assert await _releases(ctx, ids) >= releases


async def _tried_at_no_cost(ctx: FaultContext, ids: list[str], tries: int) -> bool:
    """Whether the runs were released ``tries`` times in all — checking on every look that
    nothing was spent meanwhile (a spent attempt fails the row at once)."""
    await _nothing_spent(ctx, ids)
    return await _releases(ctx, ids) >= tries


def _paged(fleet: Fleet, prefix: str) -> bool:
    return any(page["dedupe_key"].startswith(prefix) for page in delivered_pages(fleet))


# --- row 24: the job status's error_code -------------------------------------------------------

STATUS_LEVEL = Fault(FaultKind.JOB_FAILED_ERROR_CODE, code="UPSTREAM_ERROR", message=DNS)


async def row24(ctx: FaultContext) -> None:
    """The farm's status-level ``error_code`` answer: 6 runs released, 0 attempts, the breakers
    charged and open, the admins paged; healed, every run completes on its first attempt."""
    await _status_level_codes(ctx)
    ids = await _enqueue(ctx, range(2101_00, 2101_06))
    ctx.sim.set_fault("*", STATUS_LEVEL)
    fleet = _fleet(ctx, ctx.sim)
    breakers = _breakers(ctx)
    try:
        fleet.start(2)

        async def outage_seen() -> bool:
            views = await breakers.views([A, B])
            return (
                await _tried_at_no_cost(ctx, ids, len(ids))
                and all(view.circuit is not Circuit.CLOSED for view in views)
                and _paged(fleet, "circuit_open_exhaustion:memory_extraction")
            )

        await eventually(outage_seen, timeout=60)
        await _nothing_spent(ctx, ids)
        assert ctx.sim.stats()["llm-a"]["failed"] >= 1  # the farm really answered FAILED
        ctx.sim.clear_faults()
        await _completed_on_first_attempt(ctx, ids, releases=len(ids))
        assert not _paged(fleet, "runs_retired")
    finally:
        fleet.stop_all()


#: Status-level codes the farm never reached the backend with: each releases the run.
NEVER_REACHED = ("UPSTREAM_ERROR", "SERVICE_NOT_FOUND", "SERVICE_DISABLED", "ENDPOINT_NOT_FOUND")
#: Other status-level codes stay ``Upstream``: the run fails (the reason its text gives).
STAYS_UPSTREAM = (("UPSTREAM_TIMEOUT", "provider_timeout"), ("SOMETHING_NEW", None))


async def _status_level_codes(ctx: FaultContext) -> None:
    """Every kind of code the farm may put in ``error_code``, one tick each, in process, on
    keys of its own (a failed run's backoff keeps it out of the next tick's claim)."""
    prefix = f"{ctx.settings.key_prefix}codes:"
    pipe = await pipeline(ctx, key_prefix=prefix, backoff_unit_seconds=600.0)
    s: Settings = pipe.settings
    store = RunStore(ctx.redis, s)
    target = f"{EXTRACTOR}/memory-extractor"
    breakers = BreakerStore(ctx.redis, Keys(s.key_prefix), s.breaker_config())

    def answer(code: str) -> None:
        fault = Fault(FaultKind.JOB_FAILED_ERROR_CODE, code=code, message="backend said no")
        ctx.sim.set_fault(EXTRACTOR, fault)

    try:
        run_id = (await store.enqueue(make_request(2101_50))).run_id
        assert run_id
        for index, code in enumerate(NEVER_REACHED, start=1):
            answer(code)
            assert await pipe.tick(f"code-{code}") == "deferred", code
            assert_released(await store.get(run_id), attempts=0, releases=index)
            assert (await breakers.view(target)).consecutive_failures == index  # charged
        ctx.sim.clear_faults()
        assert await pipe.tick("healed") == "completed"
        for index, (code, reason) in enumerate(STAYS_UPSTREAM, start=1):
            run_id = (await store.enqueue(make_request(2101_50 + index))).run_id
            assert run_id
            answer(code)
            assert await pipe.tick(f"code-{code}") == "failed", code
            run = await store.get(run_id)
            assert (run.status, run.attempts, run.releases) == (RunStatus.FAILED, 1, 0)
            (entry,) = run.error_log
            assert (entry.code, entry.reason) == (code, reason)
    finally:
        ctx.sim.clear_faults()
        await close(pipe)


# --- row 25: busy markers ---------------------------------------------------------------------

#: The issue's busy answers, as the backend relays them (status + body) and as the farm itself
#: answers a submit, in several spellings; each is answered 3 times in a row below.
BUSY: tuple[Fault, ...] = (
    Fault(FaultKind.UPSTREAM_STATUS, status_code=503, message="request rejected"),
    Fault(FaultKind.UPSTREAM_STATUS, status_code=502, message="token_budget_exhausted"),
    Fault(FaultKind.UPSTREAM_STATUS, status_code=503, message="insufficient KV-headroom"),
    Fault(FaultKind.UPSTREAM_STATUS, status_code=503, message="Model not loaded."),
    Fault(FaultKind.UPSTREAM_STATUS, status_code=503, message="Service Temporarily Unavailable"),
    Fault(FaultKind.SUBMIT_STATUS, status_code=503, message="Request_Rejected: back-pressure"),
    Fault(FaultKind.SUBMIT_STATUS, status_code=503, message="SERVER_BUSY"),
)
CAPACITY_TIMEOUT = Fault(
    FaultKind.UPSTREAM_STATUS, status_code=503, message="request timed out waiting for capacity"
)


async def row25(ctx: FaultContext) -> None:
    """A healthy, busy node answering 21 busy answers in a row is never charged or opened and
    costs no run anything; every node answering "503: request timed out waiting for capacity"
    releases the 6 waiting runs again and again (12 tries, twice what spent 6 attempts
    before) without spending an attempt."""
    fleet = _fleet(ctx, ctx.sim)
    breakers = _breakers(ctx)
    try:
        fleet.start(2)
        served: list[str] = []
        for index, fault in enumerate(BUSY):
            ctx.sim.set_fault("llm-a", fault)
            ids = await _enqueue(ctx, range(2102_00 + 3 * index, 2102_03 + 3 * index))
            await _until_completed(ctx, ids)
            served += ids
        for run in await _runs(ctx, served):
            assert (run.attempts, run.releases, run.error_log) == (1, 0, []), run
        view = await breakers.view(A)
        assert (view.circuit, view.consecutive_failures, view.window_calls) == (
            Circuit.CLOSED,
            0,
            0,
        )
        assert ctx.sim.submits("llm-a") >= 3 * len(BUSY)
        assert EventType.CIRCUIT_OPENED not in await event_types(ctx)
        assert delivered_pages(fleet) == []  # a busy node is nothing to page about

        # Every node busy: released, again and again, and no attempt is spent.
        for service in ("llm-a", "llm-b"):
            ctx.sim.set_fault(service, CAPACITY_TIMEOUT)
        waiting = await _enqueue(ctx, range(2102_50, 2102_56))
        await eventually(lambda: _tried_at_no_cost(ctx, waiting, 12), timeout=90)
        await _nothing_spent(ctx, waiting)
        views = await breakers.views([A, B])
        assert {(v.circuit, v.consecutive_failures) for v in views} == {(Circuit.CLOSED, 0)}
        assert _paged(fleet, "capacity_wait_timeout")  # the whole route busy: actionable
        assert not _paged(fleet, "circuit_open_exhaustion")

        ctx.sim.clear_faults()
        await _completed_on_first_attempt(ctx, waiting, releases=12)
    finally:
        fleet.stop_all()


# --- row 26: a farm that loses its jobs -------------------------------------------------------

LOST_SECONDS = 45.0


async def row26(ctx: FaultContext) -> None:
    """Every poll answers 404 "job not found" for 45 s: the fleet goes through as many lost
    tries as used to retire all three runs (3 × 5), spends 0 attempts, retires nothing; the
    runs complete after. The 45 s are the farm's, on the simulator's manual clock: the workers run in real
    time through those tries (compressed probe and cooldown settings), and the window
    closes when the clock is moved past it."""
    clock = ManualClock(1000.0)
    async with FarmSimulator(clock=clock) as sim:
        ids = await _enqueue(ctx, range(2107_00, 2107_03))
        sim.set_fault("*", Fault(FaultKind.JOB_NOT_FOUND, seconds=LOST_SECONDS))
        fleet = _fleet(ctx, sim)
        try:
            fleet.start(2)
            tries = ctx.settings.max_attempts * len(ids)  # what used to retire every run
            await eventually(lambda: _tried_at_no_cost(ctx, ids, tries), timeout=120)
            await _nothing_spent(ctx, ids)
            assert sim.stats()["llm-a"]["polls"] >= 2  # lost jobs were polled, resubmitted
            assert _paged(fleet, "circuit_open_exhaustion:memory_extraction")

            clock.advance(LOST_SECONDS)  # the farm finds its feet again
            await _completed_on_first_attempt(ctx, ids, releases=tries)
            assert not _paged(fleet, "runs_retired")
        finally:
            fleet.stop_all()


ROWS: dict[int, Scenario] = {24: row24, 25: row25, 26: row26}
