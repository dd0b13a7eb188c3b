"""Chaos soak (docs/reliability.md): faults of every kind at random, then heal — no work may be lost.

Three real worker processes (``python -m memory_worker run``) share a private
Valkey with AOF; the loopback farm simulator serves two extraction targets
and the embedder. First a fault-free **reference** run processes the same
runs on its own key prefix; then the **chaos** run enqueues them while a
seeded schedule (``bench/chaos_plan.py``) flips the farm between healthy,
UPSTREAM_ERROR, cancelled jobs, a 500 on one of the two extraction targets,
busy answers and a hung embedder, kills Valkey with -9 and restarts it from
its AOF on the same port, freezes it (SIGSTOP) for twice the lease, and
kills (-9) or stops (SIGTERM) workers and starts new ones. Then everything
heals and the backlog must drain.

Invariants (each printed with the runs that break it):

- every run completes exactly once (status, the store's ``completed``
  counter, the card store's applied-runs sets);
- attempts spent <= 1 + the kill -9s that hit the run while it was
  processing (the killed worker's runs are read from the lease owners);
- no run retired;
- each chat's visible memory equals the reference's (normalised facts and
  observation counts of the live cards);
- at most one farm probe per probe interval while every target is down;
- one admin page per incident (a loopback webhook receives the pages);
- no completed run keeps its extraction (§7).

    python bench/chaos.py --minutes 30 --seed 7

Exit status: 0 all invariants hold, 1 an invariant failed, 2 the harness
itself failed (e.g. the reference run did not complete). Everything runs on
loopback and stops by itself; every process it starts is stopped on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiohttp import web
from redis.exceptions import RedisError

from bench.chaos_plan import (
    ALL_DOWN,
    Action,
    ActionKind,
    Check,
    FarmMode,
    KillLedger,
    Observations,
    PageRecord,
    Plan,
    RunRecord,
    attempts_histogram,
    build_requests,
    config_for_minutes,
    describe_plan,
    evaluate,
    incident_timeline,
    make_plan,
    probe_windows,
    runs_held_by,
)
from llm_client import EMBEDDING as EMBEDDING_WF
from llm_client import MEMORY_EXTRACTION as EXTRACTION
from llm_client import BreakerStore, Circuit
from llm_client._routing.routes import parse_routes
from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore, normalise
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunRequest
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.storage.connections import RedisHandle, client_from_url
from memory_worker.storage.embedded import EmbeddedValkey, pid_alive
from memory_worker.worker.fleet import Fleet, WorkerProcess
from tests.support.routes import farm_target, route, routes_toml

EXTRACT_A = "llm-alpha"
EXTRACT_B = "llm-beta"
EMBEDDER = "embedder"

ROUTES = routes_toml(
    memory_extraction=route(
        farm_target(EXTRACT_A, "memory-extractor", endpoint="chat_completions"),
        farm_target(EXTRACT_B, "memory-extractor", endpoint="chat_completions"),
        max_hops=4,
    ),
    embedding=route(farm_target(EMBEDDER, "embedder", endpoint="encode"), max_hops=2),
    memory_merge=route(
        farm_target(EXTRACT_B, "memory-extractor", endpoint="chat_completions"), max_hops=2
    ),
)

#: Redis errors as the harness sees them (a killed or frozen server).
STORE_DOWN: tuple[type[BaseException], ...] = (RedisError, OSError, TimeoutError)


def farm_faults(mode: FarmMode) -> list[tuple[str, Fault]]:
    """The simulator faults that make up a farm mode (existing kinds only)."""
    upstream = "UPSTREAM_ERROR"
    if mode is FarmMode.OUTAGE:
        return [("*", Fault(FaultKind.JOB_FAILED, code=upstream, message="[Errno -3] dns"))]
    if mode is FarmMode.CANCELLED:
        return [("*", Fault(FaultKind.JOB_CANCELLED, code=upstream, message="backend gone"))]
    if mode is FarmMode.HALF_500:
        return [(EXTRACT_A, Fault(FaultKind.UPSTREAM_STATUS, status_code=500, message="boom"))]
    if mode is FarmMode.BUSY_SUBMIT:
        return [
            ("*", Fault(FaultKind.SUBMIT_STATUS, status_code=503, message="no slots available"))
        ]
    if mode is FarmMode.BUSY_UPSTREAM:
        return [("*", Fault(FaultKind.UPSTREAM_STATUS, status_code=503, message="server busy"))]
    if mode is FarmMode.HUNG_EMBEDDER:
        return [(EMBEDDER, Fault(FaultKind.HANG))]
    return []


def worker_overrides(
    *, lease: float, interval: float, page_cooldown: float, job_seconds: float
) -> dict[str, Any]:
    """Time-compressed worker settings (lease, probe interval, backoff, budgets)."""
    return {
        "lease_seconds": lease,
        "lease_renew_seconds": lease / 4,
        "consolidation_backend_retry_interval": interval,
        "backoff_unit_seconds": 0.25,
        "worker_concurrency": 2,
        "poll_delay_seconds": 0.05,
        "safety_net_seconds": 1,
        "worker_heartbeat_seconds": 0.5,
        "shutdown_grace_seconds": 2.0,
        "request_timeout_seconds": 3.0,
        "task_timeout_seconds": max(8.0, 4 * job_seconds),
        "capacity_wait_seconds": 2.0,
        # the embedder's budgets compressed too (production: 15 s each against a 15 s probe
        # interval): a fail-open probe of a hung embedder holds the route's probe permit
        # until its job's budget ends, and an uncompressed 15 s kept a healed route shut
        # 12 s past its incident
        "embedding_task_timeout_seconds": 3 * interval,
        "embedding_request_timeout_seconds": 3 * interval,
        "embedding_capacity_wait_seconds": 2.0,
        "capacity_poll_seconds": 0.1,
        "job_poll_seconds": 0.05,
        "redis_reconnect_max_seconds": 1.0,
        "breaker_cooldown_seconds": 2 * interval,
        "breaker_cooldown_max_seconds": 6 * interval,
        # compressed like the probe interval (production: 30 s against 15 s): a worker killed
        # while it holds a route's probe permit blocks the route's probes until the lease
        # ends, and an uncompressed 30 s kept a healed route shut 20 s past its incident
        "breaker_permit_lease_seconds": 3 * interval,
        "admin_report_cooldown": page_cooldown,
        # the merge pass folds cards on its own timer; it would make memory depend on timing
        "merge_min_cards": 1_000_000,
        "merge_interval_seconds": 86_400,
    }


# --------------------------------------------------------------------------- the parts


class RecordingFarm(FarmSimulator):
    """The farm simulator, also remembering when each submit arrived (monotonic)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.submit_log: list[tuple[float, str]] = []

    def _bump(self, service: str, counter: str) -> None:
        super()._bump(service, counter)
        if counter == "submits":
            self.submit_log.append((time.monotonic(), service))

    def set_mode(self, mode: FarmMode) -> None:
        self.clear_faults()
        for service, fault in farm_faults(mode):
            self.set_fault(service, fault)


class PageSink:
    """A loopback JSON webhook: the admins' pager."""

    def __init__(self) -> None:
        self.pages: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/hook", self._hook)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/hook"

    async def _hook(self, request: web.Request) -> web.Response:
        data = await request.json()
        if isinstance(data, dict):
            self.pages.append({**data, "received_at": time.time()})
        return web.json_response({"ok": True})

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


class ValkeyControl:
    """The private Valkey: kill -9 and restart on the same socket and dir, freeze and thaw."""

    def __init__(self, data_dir: Path, fsync: str) -> None:
        self.data_dir = data_dir
        self.fsync = fsync
        self.server = EmbeddedValkey(data_dir).ensure()
        self.stopped = False
        self.down = False

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def pid(self) -> int:
        assert self.server.pid is not None
        return self.server.pid

    async def configure(self) -> None:
        client = client_from_url(self.url, socket_timeout=5)
        try:
            await client.config_set("appendfsync", self.fsync)
        finally:
            await client.aclose()

    async def kill9(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        self.down = True
        for _ in range(200):
            if not _alive(self.pid):
                return
            await asyncio.sleep(0.01)

    async def restart(self) -> None:
        self.server = await asyncio.to_thread(EmbeddedValkey(self.data_dir).ensure, 30.0)
        self.down = False
        await self.configure()

    def freeze(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)
        self.stopped = True

    def thaw(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGCONT)
        self.stopped = False

    async def heal(self) -> None:
        if self.stopped:
            self.thaw()
        if self.down or not _alive(self.pid):
            await self.restart()

    def shutdown(self) -> None:
        pid = self.server.pid
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
        self.server.owned = True
        self.server.stop()


def _alive(pid: int) -> bool:
    if not pid_alive(pid):
        return False
    # a killed daemon is a zombie until init reaps it
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"
    return True


class LeaseWatch:
    """Who holds which run: the lease owners, sampled a few times a second."""

    def __init__(self, redis: Any, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self.last: dict[str, str] = {}
        self.history: deque[tuple[float, frozenset[str]]] = deque(maxlen=64)

    async def read(self) -> dict[str, str]:
        ids = [i.decode() for i in await self.redis.zrange(self.keys.leases, 0, -1)]
        if not ids:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for run_id in ids:
                pipe.hget(self.keys.run(run_id), "lease_owner")
            owners = await pipe.execute()
        return {rid: (o or b"").decode() for rid, o in zip(ids, owners, strict=True)}

    async def loop(self, stop: asyncio.Event, every: float = 0.25) -> None:
        while not stop.is_set():
            with contextlib.suppress(*STORE_DOWN):
                self.last = await asyncio.wait_for(self.read(), 1.0)
                self.history.append((time.monotonic(), frozenset(self.last)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)

    def recently_processing(self, since: float) -> set[str]:
        return {rid for at, ids in self.history if at >= since for rid in ids}


class RouteWatch:
    """When each workflow's route was entirely breaker-open, sampled a few times a second.

    §6 promises at most one probe per interval fleet-wide *once every target of a
    route is breaker-open*; until the breakers have tripped (the failure threshold
    per target, plus walks already in flight) the farm legitimately sees more.
    """

    def __init__(self, redis: Any, keys: Keys, settings: Settings, routes_toml: str) -> None:
        config = parse_routes(tomllib.loads(routes_toml), settings.route_defaults(), env={})
        self.targets = {
            wf: [t.id for t in config.routes[wf].targets] for wf in (EXTRACTION, EMBEDDING_WF)
        }
        #: service name → workflow, to attribute farm submits
        self.service_workflow = {
            t.service or t.provider: wf
            for wf in (EXTRACTION, EMBEDDING_WF)
            for t in config.routes[wf].targets
        }
        self.breakers = BreakerStore(redis, keys, settings.breaker_config())
        self.samples: list[tuple[float, str, bool]] = []

    async def read(self) -> list[tuple[str, bool]]:
        out = []
        for wf, ids in self.targets.items():
            views = await self.breakers.views(ids)
            out.append((wf, all(v.circuit is not Circuit.CLOSED for v in views)))
        return out

    async def loop(self, stop: asyncio.Event, t0: float, every: float = 0.2) -> None:
        while not stop.is_set():
            with contextlib.suppress(*STORE_DOWN):
                for wf, all_open in await asyncio.wait_for(self.read(), 1.0):
                    self.samples.append((time.monotonic() - t0, wf, all_open))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)


@dataclass
class Slots:
    """Worker processes by slot: a killed or stopped slot gets a fresh process."""

    fleet: Fleet
    procs: list[WorkerProcess] = field(default_factory=list)
    #: Slots being stopped or restarted right now (a second fault waits its turn: skipped).
    busy: set[int] = field(default_factory=set)

    def start(self, n: int) -> None:
        self.procs = [self.fleet.start(1)[0] for _ in range(n)]

    def restart(self, slot: int) -> None:
        self.procs[slot] = self.fleet.start(1)[0]

    def ensure_all(self) -> int:
        restarted = 0
        for slot, proc in enumerate(self.procs):
            if proc.proc.poll() is not None:
                self.restart(slot)
                restarted += 1
        return restarted


def log_line(t0: float, text: str) -> None:
    print(f"[{time.monotonic() - t0:7.1f}s] {text}", flush=True)


# --------------------------------------------------------------------------- phases


@dataclass
class Soak:
    plan: Plan
    requests: list[dict[str, Any]]
    tmp: Path
    valkey: ValkeyControl
    sim: RecordingFarm
    sink: PageSink
    env: dict[str, Any]
    job_seconds: float
    drain_timeout: float
    t_start: float = field(default_factory=time.monotonic)
    executed: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    ledger: KillLedger = field(default_factory=KillLedger)
    sigterm_escalations: int = 0

    def say(self, text: str) -> None:
        log_line(self.t_start, text)

    def settings(self, name: str) -> Settings:
        return Settings(
            redis_url=self.valkey.url,
            key_prefix=f"{name}{uuid.uuid4().hex[:6]}:",
            data_dir=self.tmp / "var",
            max_queued_runs=100_000,
            max_daily_enqueued_runs=100_000,
        )

    def client(self) -> Any:
        return client_from_url(self.valkey.url, socket_timeout=2.0)

    async def enqueue(self, queue: MemoryQueue, request: dict[str, Any], deadline: float) -> str:
        """Enqueue one run, retrying through store outages (enqueue is idempotent)."""
        parsed = RunRequest.model_validate(request)
        while True:
            try:
                result = await asyncio.wait_for(queue.enqueue(parsed), 3.0)
                assert result.run_id, result
                return result.run_id
            except STORE_DOWN:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.25)

    async def memory(self, redis: Any, keys: Keys) -> dict[int, dict[str, tuple[int, ...]]]:
        """Each chat's visible memory: normalised fact → observation counts of its live cards."""
        cards = CardStore(redis, keys)
        now = datetime.now(UTC)
        out: dict[int, dict[str, tuple[int, ...]]] = {}
        for chat in sorted({int(r["chat_id"]) for r in self.requests}):
            facts: dict[str, list[int]] = {}
            for card in await cards.live_cards(chat):
                if not card.visible_at(now):
                    continue
                key = "|".join(
                    (
                        card.scope_key,
                        normalise(card.subject),
                        card.predicate,
                        normalise(card.object),
                        normalise(card.fact_text),
                    )
                )
                facts.setdefault(key, []).append(card.observation_count)
            out[chat] = {k: tuple(sorted(v)) for k, v in facts.items()}
        return out

    async def wait_settled(
        self, store: RunStore, n: int, timeout: float, label: str, log_dir: Path
    ) -> bool:
        """Until every run is completed or retired and nothing is queued or processing.

        Also notes how long the first completion took when runs were outstanding
        (how fast work resumes once everything is back).
        """
        start = time.monotonic()
        end = start + timeout
        last = ""
        first_count: int | None = None
        resumed = False
        progress: dict[int, int] = {}  # every ~5 s: completed so far (stall or slow?)
        while time.monotonic() < end:
            with contextlib.suppress(*STORE_DOWN):
                counts = await asyncio.wait_for(store.counts(), 3.0)
                progress.setdefault(int(time.monotonic() - start) // 5 * 5, counts["completed"])
                last = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
                if first_count is None:
                    first_count = counts["completed"]
                elif not resumed and counts["completed"] > first_count:
                    resumed = True
                    self.notes.append(
                        f"{label}: first completion {time.monotonic() - start:.1f} s after "
                        f"the wait began ({n - first_count} run(s) outstanding)"
                    )
                if (
                    counts["completed"] + counts["retired"] >= n
                    and counts["queued"] == 0
                    and counts["processing"] == 0
                ):
                    return True
            await asyncio.sleep(0.25)
        self.say(f"not settled after {timeout:.0f} s: {last}")
        self.notes.append(f"{label}: completed by elapsed second {progress}")
        with contextlib.suppress(*STORE_DOWN):
            snapshot = await asyncio.wait_for(pipeline_snapshot(store.redis, store.keys), 5.0)
            self.notes += [f"{label}: {line}" for line in snapshot]
        self.notes += [f"{label}: log {line}" for line in recent_events(log_dir)]
        return False

    # --- reference -------------------------------------------------------------------------------

    async def reference(self) -> dict[int, dict[str, tuple[int, ...]]]:
        settings = self.settings("ref")
        redis = self.client()
        fleet = Fleet(settings, self.tmp / "ref", self.env)
        (self.tmp / "ref").mkdir()
        self.sim.run_seconds = 0.0
        self.sim.set_mode(FarmMode.HEALTHY)
        started = time.monotonic()
        self.say(f"reference: {len(self.requests)} runs on a healthy farm")
        try:
            queue = MemoryQueue(RedisHandle(redis, self.valkey.url), settings)
            deadline = time.monotonic() + 60
            for request in self.requests:
                await self.enqueue(queue, request, deadline)
            Slots(fleet).start(3)
            store = RunStore(redis, settings)
            if not await self.wait_settled(
                store, len(self.requests), 240, "reference", self.tmp / "ref"
            ):
                raise RuntimeError("the fault-free reference run did not complete")
            counts = await store.counts()
            if counts["completed"] != len(self.requests):
                raise RuntimeError(f"the reference run did not complete every run: {counts}")
            memory = await self.memory(redis, Keys(settings.key_prefix))
        finally:
            await asyncio.to_thread(fleet.stop_all)
            await redis.aclose()
        cards = sum(sum(len(v) for v in m.values()) for m in memory.values())
        self.say(
            f"reference: {len(self.requests)} runs completed in "
            f"{time.monotonic() - started:.1f} s, {cards} live cards in {len(memory)} chats"
        )
        return memory

    # --- chaos -----------------------------------------------------------------------------------

    async def chaos(self, reference: dict[int, dict[str, tuple[int, ...]]]) -> Observations:
        plan = self.plan
        settings = self.settings("chaos")
        keys = Keys(settings.key_prefix)
        redis = self.client()
        fleet = Fleet(settings, self.tmp / "chaos", self.env)
        (self.tmp / "chaos").mkdir()
        slots = Slots(fleet)
        watch = LeaseWatch(redis, keys)
        routes_watch = RouteWatch(redis, keys, settings, ROUTES)
        stop = asyncio.Event()
        run_ids: list[str | None] = [None] * len(self.requests)
        self.sim.run_seconds = self.job_seconds
        self.sim.set_mode(FarmMode.HEALTHY)
        self.sink.pages.clear()
        tasks: list[asyncio.Task[None]] = []
        queue = MemoryQueue(RedisHandle(redis, self.valkey.url), settings)
        try:
            slots.start(plan.config.workers)
            t0 = time.monotonic()
            wall0 = time.time()
            self.t_start = t0
            self.say(f"chaos: {plan.config.duration:.0f} s schedule, seed {plan.seed}")

            async def until(at: float) -> None:
                await asyncio.sleep(max(0.0, t0 + at - time.monotonic()))

            async def farm() -> None:
                for seg in plan.segments:
                    await until(seg.start)
                    self.sim.set_mode(seg.mode)
                    if seg.mode is not FarmMode.HEALTHY:
                        self.executed[f"farm:{seg.mode.value}"] += 1
                    self.say(f"farm -> {seg.mode.value} for {seg.seconds:.1f} s")

            async def feed() -> None:
                done = 0
                for at, upto in plan.enqueue:
                    await until(at)
                    deadline = time.monotonic() + 120
                    for i in range(done, upto):
                        run_ids[i] = await self.enqueue(queue, self.requests[i], deadline)
                    done = upto
                self.say(f"all {done} runs enqueued")

            async def act(action: Action) -> None:
                await until(action.at)
                await self.act(action, slots, watch)

            tasks = [
                asyncio.create_task(watch.loop(stop)),
                asyncio.create_task(routes_watch.loop(stop, t0)),
                asyncio.create_task(farm()),
                asyncio.create_task(feed()),
                *(asyncio.create_task(act(a)) for a in plan.actions),
            ]
            await until(plan.config.duration)
            driving = tasks[2:]  # the two watchers run until stop
            done, pending = await asyncio.wait(driving, timeout=60)
            for task in done:
                if task.exception() is not None:
                    raise RuntimeError(f"a chaos task failed: {task.exception()!r}")
            if pending:
                raise RuntimeError(f"{len(pending)} chaos task(s) did not finish")

            # heal: farm healthy, Valkey up, every worker slot running
            self.sim.set_mode(FarmMode.HEALTHY)
            await self.valkey.heal()
            restarted = slots.ensure_all()
            healed = time.monotonic()
            self.say(f"healed (restarted {restarted} worker(s)); waiting for the drain")
            store = RunStore(redis, settings)
            settled = await self.wait_settled(
                store,
                len(self.requests),
                self.drain_timeout,
                "drain after heal",
                self.tmp / "chaos",
            )
            drain = time.monotonic() - healed
            self.notes.append(
                f"drain after heal: {drain:.1f} s" + ("" if settled else " (NOT settled)")
            )
            stop.set()
            ids = [i for i in run_ids if i]
            runs = await store.get_many(ids)
            counters = {k.decode(): int(v) for k, v in (await redis.hgetall(keys.counters)).items()}
            cards = CardStore(redis, keys)
            applied: dict[int, list[str]] = {}
            for chat in sorted({int(r["chat_id"]) for r in self.requests}):
                # the per-chat applied-run record is a ZSET scored by time (bounded growth)
                members = await redis.zrange(cards.key(chat, "runs"), 0, -1)
                applied[chat] = sorted(m.decode() for m in members)
            memory = await self.memory(redis, keys)
            # a completed run keeps no extraction (§7: its completion dropped it)
            finished = [r.id for r in runs if r.status.value == "completed"]
            kept = [i for i in finished if await redis.exists(keys.run_extraction(i))]
        finally:
            stop.set()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.to_thread(fleet.stop_all)
            with contextlib.suppress(*STORE_DOWN):
                await redis.aclose()
        self.notes.append(f"counters: {dict(sorted(counters.items()))}")
        return Observations(
            expected_runs=len(self.requests),
            runs=[
                RunRecord(
                    run_id=r.id,
                    chat_id=r.chat_id,
                    status=r.status.value,
                    retired=r.retired,
                    attempts=r.attempts,
                    releases=r.releases,
                    error_codes=tuple(f"{e.code}/{e.reason}" for e in r.error_log),
                )
                for r in runs
            ],
            completed_counter=counters.get("completed", 0),
            applied=applied,
            kill_hits=dict(self.ledger.hits),
            touched={k: tuple(v) for k, v in self.ledger.touched.items()},
            reference=reference,
            chaos=memory,
            submits=[(at - t0, service) for at, service in self.sim.submit_log if at >= t0],
            route_open=tuple(routes_watch.samples),
            service_workflow=routes_watch.service_workflow,
            segments=plan.segments,
            pages=[
                PageRecord(
                    at=float(p.get("created_at_ms", 0)) / 1000 - wall0,
                    dedupe_key=str(p.get("dedupe_key")),
                    event_type=str(p.get("type")),
                    workflow=str(p.get("workflow")),
                )
                for p in self.sink.pages
            ],
            interval=plan.config.interval,
            probe_warmup=plan.config.probe_warmup,
            page_grace=plan.config.page_grace,
            kept_extractions=kept,
        )

    async def act(self, action: Action, slots: Slots, watch: LeaseWatch) -> None:
        kind = action.kind
        if kind is ActionKind.VALKEY_KILL9:
            if self.valkey.stopped or self.valkey.down:
                self.notes.append(f"skipped {kind.value} at {action.at:.1f} s (Valkey not up)")
                return
            before = time.monotonic()
            self.ledger.touch(action.at, "valkey kill -9", watch.last)
            await self.valkey.kill9()
            self.executed[kind.value] += 1
            if self.valkey.fsync != "always":
                # everysec may lose the last second of writes: a run seen processing in the
                # last two seconds may legitimately run again
                hit = watch.recently_processing(before - 2.0)
                self.ledger.record(action.at, "valkey kill -9", hit, "lease history")
            self.say(f"valkey kill -9 (down {action.seconds:.1f} s)")
            await asyncio.sleep(action.seconds)
            await self.valkey.restart()
            self.say("valkey restarted from its AOF")
        elif kind is ActionKind.VALKEY_STOP:
            if self.valkey.stopped or self.valkey.down:
                return
            self.ledger.touch(action.at, "valkey SIGSTOP", watch.last)
            self.valkey.freeze()
            self.executed[kind.value] += 1
            self.say(f"valkey SIGSTOP for {action.seconds:.1f} s")
            try:
                await asyncio.sleep(action.seconds)
            finally:
                self.valkey.thaw()
            self.say("valkey SIGCONT")
        else:
            assert action.worker is not None
            slot = action.worker
            proc = slots.procs[slot]
            if slot in slots.busy or proc.proc.poll() is not None:
                self.notes.append(f"skipped {kind.value} at {action.at:.1f} s: slot {slot} busy")
                return
            slots.busy.add(slot)
            try:
                await self.stop_worker(action, proc, slot, watch)
                await asyncio.sleep(action.seconds)
                slots.restart(slot)
            finally:
                slots.busy.discard(slot)
            self.say(f"worker {slot} restarted (pid {slots.procs[slot].pid})")

    async def stop_worker(
        self, action: Action, proc: WorkerProcess, slot: int, watch: LeaseWatch
    ) -> None:
        """kill -9, or SIGTERM and wait for the graceful exit (kill -9 if it never comes)."""
        if action.kind is ActionKind.WORKER_KILL9:
            await self.kill9(proc, slot, action.at, watch)
            self.executed[action.kind.value] += 1
            return
        held = runs_held_by(watch.last, proc.pid)
        self.ledger.touch(action.at, f"worker {slot} SIGTERM", held)
        proc.terminate()
        self.executed[action.kind.value] += 1
        self.say(f"worker {slot} (pid {proc.pid}) SIGTERM")
        grace = float(self.env.get("shutdown_grace_seconds", 2.0))
        try:
            await asyncio.to_thread(proc.wait, grace + 15.0)
        except subprocess.TimeoutExpired:
            self.sigterm_escalations += 1
            self.say(f"worker {slot} ignored SIGTERM for {grace + 15:.0f} s: kill -9")
            await self.kill9(proc, slot, action.at, watch)

    async def kill9(self, proc: WorkerProcess, slot: int, at: float, watch: LeaseWatch) -> None:
        snapshot = dict(watch.last)
        pid = proc.pid
        await asyncio.to_thread(proc.kill)
        try:
            held = runs_held_by(await asyncio.wait_for(watch.read(), 1.0), pid)
            source = "lease owners after the kill"
        except STORE_DOWN:
            held = runs_held_by(snapshot, pid)
            source = "last lease snapshot (store unreachable)"
        self.ledger.record(at, f"worker {slot} kill -9", held, source)
        self.ledger.touch(at, f"worker {slot} kill -9", held)
        self.say(f"worker {slot} (pid {pid}) kill -9, held {len(held)} run(s) [{source}]")


# --------------------------------------------------------------------------- the report


@dataclass
class SoakReport:
    checks: list[Check]
    figures: list[str]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def lines(self, max_details: int = 40) -> list[str]:
        out = ["", "=== figures ===", *self.figures, "", "=== invariants ==="]
        for check in self.checks:
            out.append(f"[{'PASS' if check.ok else 'FAIL'}] {check.name}: {check.summary}")
            out += [f"      {d}" for d in check.details[:max_details]]
            if len(check.details) > max_details:
                out.append(f"      … {len(check.details) - max_details} more")
        failed = [c.name for c in self.checks if not c.ok]
        out.append("")
        out.append("ALL INVARIANTS HOLD" if not failed else f"FAILED: {'; '.join(failed)}")
        return out


async def pipeline_snapshot(redis: Any, keys: Keys) -> list[str]:
    """Where the pipeline stands, for a drain that did not settle: arq's queue (due in s),
    the tick sets, the pipeline hash, the run indexes and the workers (ids and states only)."""
    now = time.time() * 1000

    def due(rows: list[tuple[bytes, float]], limit: int = 12) -> str:
        shown = [f"{m.decode()[-14:]}@{(score - now) / 1000:+.1f}s" for m, score in rows[:limit]]
        return f"{len(rows)} {shown}" + (" …" if len(rows) > limit else "")

    lines = []
    for name, key in (
        ("arq queue", keys.arq_queue),
        ("ticks:queued", keys.ticks_queued),
        ("ticks:started", keys.ticks_started),
        ("ticks:running", keys.ticks_running),
        ("runs:retry", keys.retry),
        ("leases", keys.leases),
    ):
        lines.append(f"{name}: {due(await redis.zrange(key, 0, -1, withscores=True))}")
    lines.append(f"runs:queued: {await redis.zcard(keys.queued)}")
    state = await redis.hgetall(keys.pipeline_state)
    lines.append(f"pipeline: { {k.decode(): v.decode() for k, v in state.items()} }")
    workers = await redis.zrange(keys.workers, 0, -1, withscores=True)
    lines.append(f"workers: {due(workers)}")
    return lines


def recent_events(log_dir: Path, n: int = 40) -> list[str]:
    """The workers' last ``n`` structured events (time, file, level, event; no fields)."""
    rows: list[tuple[str, str, str, str]] = []
    for path in sorted(log_dir.glob("worker*.log")):
        for line in path.read_text(errors="replace").splitlines()[-n:]:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                event = json.loads(line)
                rows.append(
                    (str(event["timestamp"]), path.stem, event["level"], str(event["event"])[:90])
                )
    return [" ".join(row) for row in sorted(rows)[-n:]]


def worker_log_events(log_dir: Path) -> Counter[str]:
    """Warning/error events and tracebacks in the chaos phase's worker logs."""
    found: Counter[str] = Counter()
    for path in sorted(log_dir.glob("worker*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if "Traceback (most recent call last)" in line:
                found["traceback"] += 1
            elif line.startswith("{") and '"level": "error"' in line:
                found["error"] += 1
            elif line.startswith("{") and '"level": "warning"' in line:
                found["warning"] += 1
    return found


def figures(soak: Soak, obs: Observations, elapsed: float) -> list[str]:
    runs = obs.runs
    rows = probe_windows(obs)
    page_types = Counter(p.event_type for p in obs.pages)
    farm = soak.sim.stats()
    lines = [
        f"seed {soak.plan.seed}; schedule {soak.plan.config.duration:.0f} s; total {elapsed:.0f} s",
        f"runs {obs.expected_runs} across {len(obs.reference)} chats; stored {len(runs)}; "
        f"completed {sum(r.status == 'completed' for r in runs)}; "
        f"store counter completed {obs.completed_counter}",
        f"attempts histogram {attempts_histogram(runs)}",
        f"releases {sum(r.releases for r in runs)}; retired {sum(r.retired for r in runs)}; "
        f"failed-status {sum(r.status == 'failed' for r in runs)}",
        f"probes per interval per workflow once its route was all open: max "
        f"{max((r[3] for r in rows), default=0)} over {len(rows)} (segment, workflow) pair(s) "
        f"({sum(r[2] for r in rows)} submits counted)",
        f"pages {len(obs.pages)} {dict(page_types)}",
        f"chaos worker logs: {dict(worker_log_events(soak.tmp / 'chaos'))}",
        f"faults planned {soak.plan.faults_by_kind()}",
        f"faults executed {dict(sorted(soak.executed.items()))}",
        f"kill -9 hits: {sum(obs.kill_hits.values())} run-hits over "
        f"{len(soak.ledger.kills)} kill(s); SIGTERM escalated to kill -9: "
        f"{soak.sigterm_escalations}",
        "farm submits (reference + chaos) "
        + ", ".join(f"{s} {v['submits']}" for s, v in farm.items()),
        *soak.notes,
    ]
    for at, what, ids, source in soak.ledger.kills:
        lines.append(f"  kill at {at:6.1f} s {what}: {len(ids)} run(s) {list(ids)} [{source}]")
    all_down = sum(s.seconds for s in soak.plan.segments if s.mode in ALL_DOWN)
    lines.append(f"every target down for {all_down:.0f} s of {soak.plan.config.duration:.0f} s")
    lines += incident_timeline(obs)
    return lines


def default_job_seconds(duration: float, runs: int, concurrency: int = 6) -> float:
    """Farm job time that keeps work in flight across the enqueue span (0.2–2 s)."""
    per_run = concurrency * 0.8 * duration / max(1, runs) / 2
    return round(min(2.0, max(0.2, (per_run - 0.3) / 2)), 2)


async def run_soak(
    minutes: float,
    seed: int,
    *,
    runs: int = 200,
    chats: int = 40,
    fsync: str = "always",
    keep: bool = False,
    job_seconds: float | None = None,
    drain_timeout: float | None = None,
    out: Callable[[str], None] = print,
) -> SoakReport:
    """The whole soak: reference, chaos, heal, drain, verdicts."""
    config = config_for_minutes(minutes, runs=runs)
    plan = make_plan(seed, config)
    for line in describe_plan(plan):
        out(line)
    job = job_seconds if job_seconds is not None else default_job_seconds(config.duration, runs)
    tmp = Path(tempfile.mkdtemp(prefix="mw-chaos-"))
    out(f"data dir {tmp}; farm job time {job:.2f} s; Valkey appendfsync {fsync}")
    started = time.monotonic()
    valkey: ValkeyControl | None = None
    sim = RecordingFarm()
    sink = PageSink()
    ok = False
    try:
        valkey = ValkeyControl(tmp / "valkey", fsync)
        await valkey.configure()
        await sim.start()
        await sink.start()
        routes = tmp / "routes.toml"
        routes.write_text(ROUTES)
        env = {
            "discovery_base_url": sim.base_url,
            "routes_file": str(routes),
            "admin_webhook_url": sink.url,
            **worker_overrides(
                lease=config.lease,
                interval=config.interval,
                page_cooldown=config.page_cooldown,
                job_seconds=job,
            ),
        }
        soak = Soak(
            plan=plan,
            requests=build_requests(runs, chats, seed),
            tmp=tmp,
            valkey=valkey,
            sim=sim,
            sink=sink,
            env=env,
            job_seconds=job,
            drain_timeout=drain_timeout or max(120.0, config.duration / 2),
        )
        reference = await soak.reference()
        reference_pages = len(sink.pages)
        if reference_pages:
            soak.notes.append(f"pages during the fault-free reference: {reference_pages}")
        observations = await soak.chaos(reference)
        checks = evaluate(observations)
        report = SoakReport(checks, figures(soak, observations, time.monotonic() - started))
        ok = report.ok
        return report
    finally:
        await sink.stop()
        await sim.stop()
        if valkey is not None:
            valkey.shutdown()
        if ok and not keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            out(f"kept {tmp} (worker logs under ref/ and chaos/)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="length of the fault schedule")
    parser.add_argument("--seed", type=int, default=None, help="schedule seed (default: random)")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--chats", type=int, default=40)
    parser.add_argument(
        "--fsync",
        choices=("always", "everysec"),
        default="always",
        help="Valkey appendfsync (everysec may lose the last second of writes on kill -9)",
    )
    parser.add_argument("--job-seconds", type=float, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the data dir and worker logs")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    print(f"chaos soak: seed {seed} (rerun with --seed {seed})", flush=True)
    try:
        report = asyncio.run(
            run_soak(
                args.minutes,
                seed,
                runs=args.runs,
                chats=args.chats,
                fsync=args.fsync,
                keep=args.keep,
                job_seconds=args.job_seconds,
            )
        )
    except (RuntimeError, RedisError, OSError, TimeoutError) as exc:
        print(f"chaos soak: harness failure: {exc!r}", file=sys.stderr)
        return 2
    for line in report.lines():
        print(line)
    print(f"(seed {seed})")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
