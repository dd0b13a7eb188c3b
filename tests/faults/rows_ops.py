"""Fault rows of the ops area: deploys, the embedded server, security and bounds (14, 15, 16, 21, 23).

Every scenario runs against real parts: Valkey (the shared test server, or a
private embedded one), real ``memory-worker`` processes where the fault is about
processes, and the loopback farm simulator.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis as sync_redis

from memory_worker.cards import CardStore
from memory_worker.farmsim import Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import EnqueueStatus, RunStore
from memory_worker.runs.policy import plan_failure
from memory_worker.runs.replay import ReplayFilter
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.upkeep.maintenance import bound_growth
from memory_worker.wiring import replay_store
from tests.faults.context import FaultContext, Scenario
from tests.support.factories import make_request
from tests.support.harness import FAST, Fleet, cli, eventually, exits_within
from tests.support.pickled import inject_pickled_tick

DAY_MS = 86_400_000


def _now_ms() -> int:
    return int(time.time() * 1000)


# --- row 14: prompt versions across a deploy ------------------------------------------------------


async def row14(ctx: FaultContext) -> None:
    """The bot's env lacks the workers' version; a newer version is queued before its workers."""
    bot = RunStore(ctx.redis, ctx.settings.model_copy(update={"prompt_version": "memory_v0"}))
    plain = (await bot.enqueue(make_request(1401))).run_id  # no version in the request
    newer = (await bot.enqueue(make_request(1402, prompt_version="memory_v2"))).run_id
    older = (await bot.enqueue(make_request(1403, prompt_version="memory_v0"))).run_id
    assert plain and newer and older  # noqa: PT018
    fleet = Fleet(ctx.settings, ctx.tmp_path, {"discovery_base_url": ctx.sim.base_url})
    store = RunStore(ctx.redis, ctx.settings)  # the workers' version: memory_v1 (default)
    try:
        fleet.start(1)

        async def plain_done() -> bool:
            return (await store.get(plain)).status is RunStatus.COMPLETED

        await eventually(plain_done, timeout=60)
        await eventually(
            lambda: _status_is(store, older, RunStatus.SKIPPED), timeout=30
        )  # provably older: skipped
    finally:
        fleet.stop_all()
    done = await store.get(plain)
    assert (done.prompt_version, done.attempts) == ("memory_v1", 1)  # took the worker's
    kept = await store.get(newer)
    assert (kept.status, kept.attempts, kept.releases) == (RunStatus.QUEUED, 0, 0)
    assert kept.prompt_version == "memory_v2"
    assert kept.error_log == []
    # no spin: the parked run does not look claimable to memory_v1 workers
    assert await store.has_claimable() == 0
    # the newer version's workers get it
    v2 = RunStore(ctx.redis, ctx.settings.model_copy(update={"prompt_version": "memory_v2"}))
    claim = await v2.claim("v2-worker")
    assert claim is not None
    assert claim.id == newer
    # skipped runs can be replayed (they take the claiming worker's version)
    replayed = cli(ctx.settings, "replay", "--status", "skipped", "--yes", "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["replayed"] == 1
    again = await store.claim("v1-worker", at_ms=_now_ms() + 1000)
    assert again is not None
    assert again.id == older
    assert again.request.prompt_version == "memory_v1"


async def _status_is(store: RunStore, run_id: str, status: RunStatus) -> bool:
    return (await store.get(run_id)).status is status


# --- row 15: processes sharing the embedded server ------------------------------------------------


def _embedded_env(ctx: FaultContext, data_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("REDIS_URL", None)
    env.update(
        {
            "MEMORY_DATA_DIR": str(data_dir),
            "MEMORY_KEY_PREFIX": ctx.settings.key_prefix,
            "MEMORY_LOG_FORMAT": "json",
            "DISCOVERY_BASE_URL": ctx.sim.base_url,
        }
    )
    for name, value in FAST.items():
        env["MEMORY_" + name.upper()] = str(value)
    return env


def _start(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "memory_worker", *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _server_pid(valkey_dir: Path) -> int | None:
    try:
        return int(json.loads((valkey_dir / "server.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


async def row15(ctx: FaultContext) -> None:
    """Stop the process that started the embedded Valkey: the others carry on; kill the
    server itself: a surviving process restarts it on the same port and work resumes."""
    data_dir = ctx.tmp_path / "var"
    valkey_dir = data_dir / "valkey"
    env = _embedded_env(ctx, data_dir)
    starter = _start(env, ctx.tmp_path / "starter.log", "run")
    procs = [starter]
    try:
        await eventually(lambda: _server_pid(valkey_dir) is not None, timeout=30)
        server_pid = _server_pid(valkey_dir)
        other = _start(env, ctx.tmp_path / "other.log", "run")
        procs.append(other)
        logs = [ctx.tmp_path / "starter.log", ctx.tmp_path / "other.log"]
        # both workers up on the same server (observed in their logs, not slept for)
        await eventually(
            lambda: all(b"worker_started" in log.read_bytes() for log in logs), timeout=60
        )
        starter.send_signal(signal.SIGTERM)
        exits_within(starter, 30, logs[0])  # a slow stop fails with the starter's log
        assert starter.returncode == 0
        assert _server_pid(valkey_dir) == server_pid  # the server outlived its starter
        os.kill(server_pid or 0, 0)

        handle = EmbeddedValkey(valkey_dir).ensure()  # what every process resolves
        assert handle.pid == server_pid  # reused, not a second server
        settings = ctx.settings.model_copy(update={"redis_url": handle.url})
        redis = client_from_url(handle.url)
        try:
            store = RunStore(redis, settings)
            first = (await store.enqueue(make_request(1501))).run_id
            assert first
            wake = cli(settings, "runs", "list", "--json")  # another short-lived process
            assert wake.returncode == 0, wake.stderr

            async def done(run_id: str) -> bool:
                try:
                    return (await store.get(run_id)).status is RunStatus.COMPLETED
                except (sync_redis.ConnectionError, sync_redis.TimeoutError, OSError):
                    return False  # our own client may see the server die too

            await eventually(lambda: done(first), timeout=60)
            assert (await store.get(first)).attempts == 1

            # the server itself dies (kill -9): the surviving worker restarts it (its watch
            # thread, under the data dir's lock) on the same socket, and everyone reconnects
            os.kill(server_pid or 0, signal.SIGKILL)

            def restarted() -> bool:
                pid = _server_pid(valkey_dir)
                return pid is not None and pid != server_pid

            await eventually(restarted, timeout=30)
            again = EmbeddedValkey(valkey_dir).ensure()
            assert again.url == handle.url
            assert again.pid == _server_pid(valkey_dir)
            assert other.poll() is None  # the surviving worker rode it out
            second = (await store.enqueue(make_request(1502))).run_id
            assert second
            await store.redis.ping()
            await eventually(lambda: done(second), timeout=60)
        finally:
            await redis.aclose()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        EmbeddedValkey(valkey_dir).shutdown()  # the explicit stop
        assert _server_pid(valkey_dir) is None


# --- row 16: replayed runs and the queued cap -------------------------------------------------------


async def row16(ctx: FaultContext) -> None:
    """3 replayed runs + cap 3, released again and again by a real worker during a farm
    outage: fresh enqueues are still accepted; when the farm heals, all of them complete."""
    s = ctx.settings.model_copy(update={"max_queued_runs": 3, "max_attempts": 1})
    store = RunStore(ctx.redis, s)
    ids = []
    for i in range(3):
        rid = (await store.enqueue(make_request(1600 + i))).run_id
        assert rid
        claim = await store.claim("w")
        assert claim is not None
        plan = plan_failure(1, max_attempts=1, unit=60, max_units=60, now_ms=_now_ms())
        await store.fail(claim, plan, code="UPSTREAM_ERROR", reason=None, message="x")
        ids.append(rid)
    replay = replay_store(ctx.redis, s)
    outcome = await replay.apply(await replay.plan(ReplayFilter(), now_ms=_now_ms()))
    assert sorted(outcome.replayed) == sorted(ids)

    ctx.sim.set_fault("*", _UPSTREAM_ERROR)
    fleet = Fleet(
        s,
        ctx.tmp_path,
        {
            "discovery_base_url": ctx.sim.base_url,
            "max_queued_runs": 3,
            "max_attempts": 1,
            "breaker_failure_threshold": 1000,  # keep every tick claiming: many releases
            "breaker_rate_min_calls": 100000,
        },
    )
    try:
        fleet.start(1)

        async def released_twice() -> bool:
            return all(r.releases >= 2 for r in await store.get_many(ids))

        await eventually(released_twice, timeout=90)
        fresh = [(await store.enqueue(make_request(1610 + i))).status for i in range(3)]
        assert fresh == [EnqueueStatus.ENQUEUED] * 3, fresh
        assert (await store.enqueue(make_request(1620))).status is EnqueueStatus.QUEUE_FULL
        for run in await store.get_many(ids):
            assert run.attempts <= 1  # released, never spent
            assert [e.kind for e in run.error_log] == ["retired", "replay"]  # no new failure
        ctx.sim.clear_faults()

        async def all_done() -> bool:
            return (await store.counts())["completed"] == 6

        await eventually(all_done, timeout=120)
    finally:
        fleet.stop_all()
    for run in await store.get_many(ids):
        assert (run.status, run.attempts) == (RunStatus.COMPLETED, 1)


_UPSTREAM_ERROR = Fault(
    kind=FaultKind.JOB_FAILED,
    code="UPSTREAM_ERROR",
    message="[Errno -3] Temporary failure in name resolution",
)


# --- row 21: no pickle, no open embedded server -------------------------------------------------------


async def row21(ctx: FaultContext) -> None:
    """A pickled job injected into the queue is refused by a real worker, never executed;
    the embedded Valkey refuses clients without its password."""
    marker = ctx.tmp_path / "pwned"
    keys = Keys(ctx.settings.key_prefix)
    job_id = await inject_pickled_tick(ctx.redis, keys, "injected", marker)
    store = RunStore(ctx.redis, ctx.settings)
    rid = (await store.enqueue(make_request(2101))).run_id
    assert rid
    fleet = Fleet(ctx.settings, ctx.tmp_path, {"discovery_base_url": ctx.sim.base_url})
    try:
        fleet.start(1)
        await eventually(lambda: _status_is(store, rid, RunStatus.COMPLETED), timeout=60)
        await eventually(
            lambda: _gone(ctx.redis, keys.arq_queue, job_id), timeout=30
        )  # taken off the queue ...
    finally:
        fleet.stop_all()
    assert not marker.exists()  # ... and never unpickled
    assert "deserializ" in fleet.logs(tail=None).lower()  # refused as an undecodable job

    server = EmbeddedValkey(ctx.tmp_path / "valkey").ensure()
    try:
        password_file = server.data_dir / "password"
        assert password_file.stat().st_mode & 0o777 == 0o600
        assert server.pid is not None  # ensure() started it
        anonymous = sync_redis.Redis(unix_socket_path=str(server.socket_name))
        try:
            anonymous.ping()
            raise AssertionError("the embedded Valkey answered without its password")
        except sync_redis.AuthenticationError:
            pass
        finally:
            anonymous.close()
        assert sync_redis.Redis.from_url(server.url).ping()
    finally:
        server.stop()


async def _gone(redis: Any, queue: str, job_id: str) -> bool:
    return await redis.zscore(queue, job_id) is None


# --- row 23: bounded growth -----------------------------------------------------------------------------


async def row23(ctx: FaultContext) -> None:
    """Retired runs' messages, natural keys, applied-run records and dead workers all expire."""
    s = ctx.settings.model_copy(update={"max_attempts": 1})
    store = RunStore(ctx.redis, s)
    keys = Keys(s.key_prefix)
    cards = CardStore(ctx.redis, keys)
    t0 = _now_ms()
    done = (await store.enqueue(make_request(2301), at_ms=t0)).run_id
    dead = (await store.enqueue(make_request(2302, hour=-1), at_ms=t0)).run_id
    assert done and dead  # noqa: PT018
    first = await store.claim("w", at_ms=t0)
    second = await store.claim("w", at_ms=t0)
    assert first is not None
    assert second is not None
    assert first.id == done
    await store.complete(first, {}, at_ms=t0)
    plan = plan_failure(1, max_attempts=1, unit=60, max_units=60, now_ms=t0)
    await store.fail(second, plan, code="X", reason=None, message="x", at_ms=t0)
    await ctx.redis.zadd(keys.workers, {"gone": t0 - 3_600_000})
    await ctx.redis.zadd(cards.key(23, "runs"), {done: t0})
    await ctx.redis.sadd(keys.chats, "23")

    later = datetime.fromtimestamp((t0 + 100 * DAY_MS) / 1000, tz=UTC)
    pruned = await bound_growth(replay_store(ctx.redis, s, store), cards, s, now=later)
    assert pruned.store.runs == 1  # completed run (14 d)
    assert pruned.store.retired_messages == 1  # retired run's messages (30 d) ...
    assert (await store.get(dead)).error_log[0].code == "X"  # ... not its record
    assert pruned.store.natural_keys == 1  # the completed run's slice (90 d)
    assert pruned.store.workers == 1
    assert pruned.applied_runs == 1
    assert await ctx.redis.hlen(keys.natural_keys) == 1  # only the retired run's key is left
    again = await bound_growth(replay_store(ctx.redis, s, store), cards, s, now=later)
    assert (again.store.runs, again.store.retired_messages, again.store.natural_keys) == (0, 0, 0)


ROWS: dict[int, Scenario] = {14: row14, 15: row15, 16: row16, 21: row21, 23: row23}
