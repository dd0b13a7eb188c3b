"""The pre-claim gate reuses a fresh "every route passable" answer.

The rules (``WalkerGate``): a "not blocked" answer is reused for
``MEMORY_ROUTE_GATE_REUSE_SECONDS``; a "blocked" one never is; the reused answer is dropped by
a tick that did not complete, by breaker news from this process's walker, by a failed read,
and a read that began before such news does not store its answer. The clock is injected
(no sleeps). The last test counts, with ``INFO commandstats``, that consecutive productive
ticks of one process read the breakers once per window.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from llm_client import BackendUnavailable, BreakerConfig, Circuit, EventType, Outcome, RoutingEvent
from memory_worker.models import RunStatus
from memory_worker.ops.metrics import route_target_ids
from memory_worker.pipeline.gate import WalkerGate
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.pipeline.ticks import TickOutcome
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.wiring import breaker_store, build_tick_runner
from tests.support.clock import ManualClock
from tests.support.factories import make_request
from tests.support.harness import free_port
from tests.support.routing_fakes import breaker_state, fail, routes_of, scripted

WORKFLOWS = ("memory_extraction", "embedding")


class FakeWalker:
    """What the gate uses of a walker: ``routes_open``, ``breaker_news``, bookkeeping."""

    def __init__(self) -> None:
        self.open = False
        self.error: Exception | None = None
        self.reads = 0
        self.breaker_news = 0
        self.hold: asyncio.Event | None = None
        self.bookkeeping_failures: Counter[str] = Counter()

    async def routes_open(self, workflows: Sequence[str]) -> dict[str, bool]:
        self.reads += 1
        if self.hold is not None:
            await self.hold.wait()
        if self.error is not None:
            raise self.error
        return {w: self.open and w == "embedding" for w in workflows}

    def bookkeeping_failed(self, operation: str, error: BaseException, **fields: Any) -> None:
        self.bookkeeping_failures[operation] += 1


def gate_of(walker: FakeWalker, clock: ManualClock, reuse: float = 1.0) -> WalkerGate:
    return WalkerGate(walker, WORKFLOWS, reuse_seconds=reuse, clock=clock)  # type: ignore[arg-type]


async def test_a_passable_answer_is_reused_until_its_window_ends() -> None:
    walker, clock = FakeWalker(), ManualClock(1000.0)
    gate = gate_of(walker, clock)
    assert not await gate.blocked()
    assert walker.reads == 1
    clock.now += 0.75
    assert not await gate.blocked()
    assert not await gate.blocked()
    assert (walker.reads, gate.reused) == (1, 2)
    clock.now += 0.25  # the window is measured from the read's start, and ends here
    assert not await gate.blocked()
    assert walker.reads == 2
    clock.now += 0.5
    assert not await gate.blocked()
    assert walker.reads == 2


async def test_a_reused_passable_never_hides_an_open_route_past_its_window() -> None:
    walker, clock = FakeWalker(), ManualClock(1000.0)
    gate = gate_of(walker, clock)
    assert not await gate.blocked()
    walker.open = True  # another process's walks opened the route meanwhile
    clock.now += 0.5
    assert not await gate.blocked()  # the reused answer: the claim's walk meets the outage
    clock.now += 0.5
    assert await gate.blocked()
    assert walker.reads == 2


async def test_a_blocked_answer_is_never_reused() -> None:
    walker, clock = FakeWalker(), ManualClock(1000.0)
    gate = gate_of(walker, clock)
    walker.open = True
    for _ in range(3):
        assert await gate.blocked()
    assert walker.reads == 3
    walker.open = False
    assert not await gate.blocked()  # read at once, not after a window
    assert not await gate.blocked()
    assert (walker.reads, gate.reused) == (4, 1)


@pytest.mark.parametrize("outcome", list(TickOutcome))
async def test_only_a_completed_tick_keeps_the_reused_answer(outcome: TickOutcome) -> None:
    walker, clock = FakeWalker(), ManualClock(1000.0)
    gate = gate_of(walker, clock)
    assert not await gate.blocked()
    gate.tick_ended(outcome)
    assert not await gate.blocked()
    assert walker.reads == (1 if outcome is TickOutcome.COMPLETED else 2)


async def test_breaker_news_of_this_process_drops_the_reused_answer() -> None:
    walker, clock = FakeWalker(), ManualClock(1000.0)
    gate = gate_of(walker, clock)
    assert not await gate.blocked()
    walker.breaker_news += 1  # e.g. a walk of this process tripped a breaker
    walker.open = True
    assert await gate.blocked()
    walker.open = False
    assert not await gate.blocked()
    assert not await gate.blocked()  # read after the news: reused again
    assert walker.reads == 3


async def test_a_failed_read_fails_open_and_drops_the_reused_answer() -> None:
    walker, clock = FakeWalker(), ManualClock(1000.0)
    gate = gate_of(walker, clock)
    assert not await gate.blocked()
    clock.now += 1.0
    walker.error = RedisConnectionError("store away")
    assert not await gate.blocked()  # §7: an unreadable store never blocks
    assert not await gate.blocked()  # and its "passable" is not reused
    assert walker.reads == 3
    assert walker.bookkeeping_failures["route_gate"] == 2
    walker.error = None
    assert not await gate.blocked()
    assert not await gate.blocked()
    assert walker.reads == 4


@pytest.mark.parametrize("news", ["deferred_tick", "breaker_news"])
async def test_a_read_that_began_before_news_does_not_store_its_answer(news: str) -> None:
    """Concurrent ticks: a tick's outage (or a transition) lands while another reads."""
    walker, clock = FakeWalker(), ManualClock(1000.0)
    gate = gate_of(walker, clock)
    walker.hold = asyncio.Event()
    reading = asyncio.create_task(gate.blocked())
    while walker.reads == 0:
        await asyncio.sleep(0)
    if news == "deferred_tick":
        gate.tick_ended(TickOutcome.DEFERRED)
    else:
        walker.breaker_news += 1
    walker.hold.set()
    assert not await reading  # answered as read, but not kept
    assert not await gate.blocked()
    assert walker.reads == 2
    assert not await gate.blocked()  # that read began after the news: kept
    assert walker.reads == 2


async def test_reuse_zero_reads_before_every_claim() -> None:
    walker, clock = FakeWalker(), ManualClock(1000.0)
    gate = gate_of(walker, clock, reuse=0.0)
    for _ in range(3):
        assert not await gate.blocked()
    assert (walker.reads, gate.reused) == (3, 0)


def test_the_reuse_window_is_a_setting_bounded_far_below_the_retry_interval() -> None:
    s = Settings()
    assert s.route_gate_reuse_seconds == 1.0
    assert Settings(route_gate_reuse_seconds=0).route_gate_reuse_seconds == 0
    with pytest.raises(ValueError):
        Settings(route_gate_reuse_seconds=6)
    with pytest.raises(ValueError):
        Settings(route_gate_reuse_seconds=-1)
    assert s.consolidation_backend_retry_interval >= 5 * 3


async def test_the_walker_counts_the_breaker_news_its_walks_announce(
    redis: Any, key_prefix: str
) -> None:
    """A real walk that trips a breaker moves ``breaker_news``; a plain failure does not."""
    breaker = BreakerConfig(failure_threshold=2, cooldown_seconds=60.0)
    farm, sink, walker = scripted(
        redis,
        key_prefix,
        routes_of("farm/a"),
        {"farm/a": fail(lambda: BackendUnavailable("UPSTREAM_ERROR: 503", code="UPSTREAM_ERROR"))},
        breaker=breaker,
    )
    clock = ManualClock(1000.0)
    gate = WalkerGate(walker, ["memory_extraction"], reuse_seconds=1.0, clock=clock)
    assert not await gate.blocked()
    with pytest.raises(BackendUnavailable):
        await walker.call("memory_extraction", farm.attempt)
    assert walker.breaker_news == 0  # one charged failure: no transition
    assert not await gate.blocked()
    assert gate.reused == 1
    with pytest.raises(BackendUnavailable):
        await walker.call("memory_extraction", farm.attempt)
    assert (await breaker_state(walker, "farm/a"))[0] is Circuit.OPEN
    assert EventType.CIRCUIT_OPENED in sink.types()
    assert walker.breaker_news == 1
    assert not await gate.blocked()  # read again (the fail-open permit is still free)
    assert gate.reused == 1
    await walker.emit(RoutingEvent(EventType.ATTEMPT_FAILED, "memory_extraction"))
    await walker.emit(RoutingEvent(EventType.CIRCUIT_OPEN_EXHAUSTION, "memory_extraction"))
    assert walker.breaker_news == 2


# --- the commands a productive tick spends on the gate -------------------------------------


async def commandstats(client: Any) -> Counter[str]:
    stats = await client.info("commandstats")
    return Counter({k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()})


class Instant:
    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        return ProcessResult(summary={"cards": 0})


async def test_consecutive_productive_ticks_read_the_breakers_once_per_window(
    private_valkey: EmbeddedValkey, key_prefix: str, tmp_path: Any
) -> None:
    s = Settings(redis_url=private_valkey.url, key_prefix=key_prefix, data_dir=tmp_path / "var")
    assert s.redis_url is not None
    redis, admin = (
        client_from_url(reveal(s.redis_url) or ""),
        client_from_url(reveal(s.redis_url) or ""),
    )
    pipeline = await build_tick_runner(s, redis)
    try:
        built = pipeline.gate
        assert isinstance(built, WalkerGate)
        assert built.reuse_seconds == s.route_gate_reuse_seconds == 1.0
        clock = ManualClock(1000.0)
        gate = WalkerGate(built.walker, built.workflows, reuse_seconds=1.0, clock=clock)
        pipeline.gate, pipeline.processor = gate, Instant()
        await built.walker.routes_open(built.workflows)  # the script is loaded
        store = RunStore(redis, s)
        for chat in range(1, 7):
            await store.enqueue(make_request(chat))
        spent: list[Counter[str]] = []
        asked = gate.blocked

        async def measured() -> bool:
            before = await commandstats(admin)
            answer = await asked()
            after = await commandstats(admin)
            after["info"] -= 1  # the first snapshot
            spent.append(+(after - before))
            return answer

        gate.blocked = measured  # type: ignore[method-assign]
        outcomes = []
        for n, advance in enumerate([0.0, 0.25, 0.25, 0.25, 0.25, 0.5]):
            clock.now += advance
            outcomes.append(await pipeline.tick(f"tick-{n}"))
        assert outcomes == ["completed"] * 6
        read = spent[0]
        assert read["evalsha"] == 1
        assert set(read) == {"evalsha", "hmget"}
        # one read per window of 1 s: at 0 s and at 1.0 s, none in between
        assert spent == [read, Counter(), Counter(), Counter(), read, Counter()]
        assert (await store.counts())["completed"] == 6
        assert await pipeline.tick("tick-idle") == "idle"  # no run left: not "completed"
        clock.now += 0.1
        assert await pipeline.tick("tick-after-idle") == "idle"
        assert spent[-2:] == [Counter(), read]  # the idle tick dropped the reused answer
    finally:
        for close in pipeline.closers:
            await close()
        await redis.aclose()
        await admin.aclose()


async def test_routes_opened_by_another_process_inside_the_window_spend_no_attempt(
    private_valkey: EmbeddedValkey, key_prefix: str, tmp_path: Any
) -> None:
    """The fault the reuse risks: every breaker opens in another process right after this
    one heard "passable". The next tick claims on the reused answer, its walk meets the
    open routes (its one fail-open probe hits a dead farm), and the run goes back to the
    queue with its attempt refunded; the tick defers, and the one after reads the
    breakers again and defers before claiming."""
    dead_farm = f"http://127.0.0.1:{free_port()}"
    s = Settings(
        redis_url=private_valkey.url,
        key_prefix=key_prefix,
        data_dir=tmp_path / "var",
        discovery_base_url=dead_farm,
    )
    assert s.redis_url is not None
    redis = client_from_url(reveal(s.redis_url) or "")
    pipeline = await build_tick_runner(s, redis)
    try:
        built = pipeline.gate
        assert isinstance(built, WalkerGate)
        clock = ManualClock(1000.0)
        pipeline.gate = gate = WalkerGate(
            built.walker, built.workflows, reuse_seconds=1.0, clock=clock
        )
        real = pipeline.processor
        store = RunStore(redis, s)
        ids = [(await store.enqueue(make_request(chat))).run_id or "" for chat in (1, 2)]
        pipeline.processor = Instant()
        assert await pipeline.tick("tick-1") == "completed"  # "passable" is reused now
        # the claim order of two chats enqueued in one instant is the queue's to choose
        done = [rid for rid in ids if (await store.get(rid)).status is RunStatus.COMPLETED]
        assert len(done) == 1
        first, second = done[0], next(rid for rid in ids if rid not in done)
        breakers = breaker_store(redis, s)
        for target in route_target_ids(s):  # another process's walks open every breaker
            for _ in range(s.breaker_failure_threshold):
                permit = await breakers.acquire(target, lease_seconds=5)
                if permit is not None:
                    await breakers.record(target, permit, Outcome.FAILURE)
        pipeline.processor = real
        clock.now += 0.5
        assert await pipeline.tick("tick-2") == "deferred"
        assert gate.reused == 1  # that tick claimed on the reused answer
        run = await store.get(second)
        assert run.status is RunStatus.QUEUED  # released, not failed
        assert run.attempts == 0  # its attempt refunded
        assert (await store.get(first)).status is RunStatus.COMPLETED
        claims = await store.counts()
        clock.now += 0.1
        assert await pipeline.tick("tick-3") == "deferred"  # read again: blocked, no claim
        assert gate.reused == 1
        assert await store.counts() == claims
        assert (await store.get(second)).attempts == 0
    finally:
        for close in pipeline.closers:
            await close()
        await redis.aclose()
