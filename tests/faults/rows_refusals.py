"""Fault-matrix rows of settlements the store refuses and runs that cannot be read (§7): 34–37.

Rows 34 and 35 refuse the write that settles a run, on a private Valkey under a real worker
process, while its farm call is slow: a failed snapshot with ``stop-writes-on-bgsave-error``
(``MISCONF``: every write refused, the release too), and an ACL that denies this worker's
user the two keys a completion and a release write (``NOPERM``; claims and heartbeats still
land). The store's fault, never the run's: the tick leaves at once, the worker owes the run a
release and says so (its ``/readyz`` 503 ``redis_refuses_writes``, its
``memory_worker_redis_writes_refused`` 1, the ``run_settlement_refused`` line), the run
stays held (no claim takes it and spends an attempt), and once the store takes writes it is
released uncharged and completes on attempt 1. Before this, the tick gave the release up,
the run sat out its lease and was claimed again: one attempt spent.

Row 37 denies one run's completion its later write only (a selector): the completion's
preflight refuses it before its first write, so the run is never half completed, only
released until the ACL allows the write.

Row 36 plants a run whose stored request no longer validates: the worker fails it for good
within seconds — not after its lease, not once per attempt — naming the run and the field,
never its value, while six other chats' runs complete.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from memory_worker.farmsim.faults import Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from tests.faults.context import FaultContext
from tests.faults.rows_store import (
    BAD_CHAT,
    GOOD_CHATS,
    SETTLED_WITHIN,
    STORE_FAST,
    _enqueue,
    _readyz,
    private_store,
)
from tests.support.factories import make_request
from tests.support.harness import Fleet, cli, completed_run, eventually, free_port, workers_up
from tests.support.scrape import parse, scrape

#: How long the store refuses writes: well past the workers' 2 s lease, so a claim would
#: have taken the run from its owner had the owner not kept it.
REFUSED_FOR = 6.0


async def _bgsave_status(redis: Any, want: str) -> None:
    async def settled() -> bool:
        info = await redis.info("persistence")
        return bool(info.get("rdb_bgsave_in_progress") == 0) and (
            info.get("rdb_last_bgsave_status") == want
        )

    await eventually(settled, timeout=30)


async def fail_snapshots(redis: Any) -> Path:
    """Make the server's snapshots fail and its writes refused (``MISCONF``): a directory
    where the snapshot's file goes (its rename fails, even for root), a save rule, and
    ``stop-writes-on-bgsave-error``. Returns the directory (removing it heals the store)."""
    folder = (await redis.config_get("dir"))["dir"]
    name = (await redis.config_get("dbfilename"))["dbfilename"]
    blocker = _block(Path(folder) / name)
    await redis.config_set("save", "3600 1")
    await redis.config_set("stop-writes-on-bgsave-error", "yes")
    await redis.bgsave(schedule=True)
    await _bgsave_status(redis, "err")
    return blocker


def _block(path: Path) -> Path:
    """A directory at ``path`` (the snapshot's file, if any, removed first)."""
    if path.exists():
        path.unlink()
    path.mkdir()
    return path


async def heal_snapshots(redis: Any, blocker: Path) -> None:
    await asyncio.to_thread(blocker.rmdir)
    await redis.bgsave(schedule=True)
    await _bgsave_status(redis, "ok")


def all_keys_but(excluded: Sequence[str]) -> list[str]:
    """ACL key patterns (glob) that match every key except ``excluded`` (an ACL lists only
    what it allows). A suffix trie of the excluded keys: at each suffix, any other character
    before it is allowed, and so is the suffix alone when it is not excluded."""
    patterns = set()
    suffixes = {key[i:] for key in excluded for i in range(len(key) + 1)}
    for suffix in suffixes:
        before = sorted({s[0] for s in suffixes if len(s) == len(suffix) + 1 and s[1:] == suffix})
        if before:
            patterns.add(f"*[^{''.join(before)}]{suffix}")
        else:  # a whole excluded key: only longer keys end with it
            patterns.add(f"*?{suffix}")
        if suffix and suffix not in excluded:
            patterns.add(suffix)
    return sorted(patterns)


def _worker_refused(text: str) -> float | None:
    """A worker endpoint's ``memory_worker_redis_writes_refused`` (its one series)."""
    values = list(parse(text).get("memory_worker_redis_writes_refused", {}).values())
    return values[0] if len(values) == 1 else None


async def _owes(port: int, code: str) -> bool:
    status, body = await _readyz(port)
    refused = (body.get("worker") or {}).get("settlements_refused")
    return status == 503 and "redis_refuses_writes" in body["problems"] and refused == [code]


async def row34(ctx: FaultContext) -> None:
    """A failed snapshot (``MISCONF``) refuses the card write and the release of a run in
    flight, for :data:`REFUSED_FOR` s: the run is released uncharged once the store takes
    writes, and completes on attempt 1."""
    port = free_port()
    async with private_store(ctx.settings, ctx.sim, ctx.tmp_path, serve_port=port) as p:
        (rid,) = await _enqueue(p.store, 1)
        service = p.settings.extraction_service
        ctx.sim.set_fault(service, Fault(kind=FaultKind.SLOW, seconds=1.0, times=1))
        p.fleet.start(1, args=["--serve"])
        await eventually(lambda: ctx.sim.submits(service) >= 1, timeout=30)
        blocker = await fail_snapshots(p.redis)
        refused_at = time.monotonic()
        await eventually(partial(_owes, port, "misconf"), timeout=SETTLED_WITHIN)
        print(f"owed {time.monotonic() - refused_at:.2f} s after the store began refusing writes")
        assert _worker_refused(await scrape(f"http://127.0.0.1:{port}")) == 1.0
        assert '"run_settlement_refused"' in p.fleet.logs(tail=None)
        run = await p.store.get(rid)  # nothing lands while every write is refused
        assert (run.status, run.attempts, run.releases) == (RunStatus.PROCESSING, 1, 0), run
        await asyncio.sleep(max(0.0, REFUSED_FOR - (time.monotonic() - refused_at)))

        await heal_snapshots(p.redis, blocker)
        run = await completed_run(lambda: p.get(rid), timeout=60)
        assert (run.attempts, run.releases, run.error_log) == (1, 1, []), p.fleet.logs()
        assert [e.reason for e in run.release_log] == ["store_refused"]
        assert ctx.sim.submits(service) == 2  # the refused write's extraction, redone once
        await eventually(lambda: _readyz_ok(port), timeout=SETTLED_WITHIN)
        assert _worker_refused(await scrape(f"http://127.0.0.1:{port}")) == 0.0


async def _readyz_ok(port: int) -> bool:
    return (await _readyz(port))[0] == 200


async def row35(ctx: FaultContext) -> None:
    """An ACL denies the worker's user the keys a completion and a release write (``NOPERM``)
    while a run is in flight: the single tick goes on to the other chats' runs (claims still
    land), every refused run is owed, not charged; once the ACL allows the keys again each
    is released and all seven complete on attempt 1."""
    port = free_port()
    async with private_store(ctx.settings, ctx.sim, ctx.tmp_path) as p:
        user, password = "settler", uuid.uuid4().hex
        await p.redis.execute_command(
            "ACL", "SETUSER", user, "reset", "on", f">{password}", "~*", "&*", "+@all"
        )
        socket_path = p.server.url.rpartition("@")[2]
        as_user = p.settings.model_copy(
            update={"redis_url": f"unix://{user}:{password}@{socket_path}"}
        )
        (ctx.tmp_path / "acl").mkdir()
        fleet = Fleet(
            as_user,
            ctx.tmp_path / "acl",
            {
                "discovery_base_url": ctx.sim.base_url,
                **STORE_FAST,
                "serve_port": port,
                "worker_concurrency": 1,
            },
        )
        keys = Keys(p.settings.key_prefix)
        denied = [keys.worker_completed, keys.runs_hourly]  # a completion's; a release's
        allowed = all_keys_but(denied)
        store = p.store
        bad = (await store.enqueue(make_request(BAD_CHAT, hour=23))).run_id or ""
        good = [
            (await store.enqueue(make_request(c, hour=i))).run_id or ""
            for i, c in enumerate(GOOD_CHATS)
        ]
        service = p.settings.extraction_service
        ctx.sim.set_fault(service, Fault(kind=FaultKind.SLOW, seconds=1.0, times=1))
        try:
            fleet.start(1, args=["--serve"])
            await eventually(lambda: ctx.sim.submits(service) >= 1, timeout=30)
            await p.redis.execute_command(
                "ACL", "SETUSER", user, "resetkeys", *(f"~{a}" for a in allowed)
            )
            for key in [*denied, keys.counters, keys.run(bad), keys.worker_runs]:
                dry = await p.redis.execute_command("ACL", "DRYRUN", user, "HSET", key, "f", "v")
                assert (dry in (b"OK", "OK")) is (key not in denied), (key, dry)
            refused_at = time.monotonic()
            await eventually(partial(_owes, port, "noperm"), timeout=SETTLED_WITHIN)
            print(f"owed {time.monotonic() - refused_at:.2f} s after the ACL denied the keys")
            assert _worker_refused(await scrape(f"http://127.0.0.1:{port}")) == 1.0
            # the one slot is free: the other chats' runs are claimed and extracted meanwhile
            await eventually(lambda: ctx.sim.submits(service) >= 3, timeout=SETTLED_WITHIN)
            run = await store.get(bad)
            assert (run.status, run.attempts, run.releases) == (RunStatus.PROCESSING, 1, 0), run
            await asyncio.sleep(max(0.0, REFUSED_FOR - (time.monotonic() - refused_at)))

            await p.redis.execute_command("ACL", "SETUSER", user, "resetkeys", "~*")
            run = await completed_run(partial(store.get, bad), timeout=60)
            assert (run.attempts, run.releases, run.error_log) == (1, 1, []), fleet.logs()
            assert [e.reason for e in run.release_log] == ["store_refused"]
            for rid in good:
                run = await completed_run(partial(store.get, rid), timeout=60)
                assert (run.attempts, run.error_log) == (1, []), (run, fleet.logs())
            logs = fleet.logs(tail=None)
            assert '"run_settlement_refused"' in logs
            assert '"code": "noperm"' in logs
            texts = [m.text for m in make_request(BAD_CHAT, hour=23).messages]
            assert not any(t in logs for t in texts)  # codes and ids only, never chat text
            await eventually(lambda: _readyz_ok(port), timeout=SETTLED_WITHIN)
        finally:
            fleet.stop_all()


#: The lease of row 36's workers: long, so a run left to its lease would still be held when
#: the row ends (before, an unreadable run stayed claimed until its lease expired, and was
#: claimed again after each expiry, an attempt spent each time).
LONG_LEASE = 120.0
#: How soon the unreadable run must be failed once the two workers are up (seconds: generous
#: for a loaded 2-core host, where 8-12 s were measured with their start; 2.8 s on an idle one).
UNREADABLE_WITHIN = 20.0
#: Stands for chat text in the stored run: it must reach no failure, log or page.
UNREADABLE_CANARY = "canary-3e9d1b: my locker code is 5512"


async def row36(ctx: FaultContext) -> None:
    """One chat's stored run no longer validates (a message's ``is_bot`` overwritten): the
    run that claims it fails for good within seconds as ``StoredRunUnreadable``, naming the
    run and the field, never its value, shown by ``runs show``; six other chats' runs
    complete."""
    store = RunStore(ctx.redis, ctx.settings)
    request = make_request(BAD_CHAT, hour=23, texts=[UNREADABLE_CANARY])
    bad = (await store.enqueue(request)).run_id or ""
    key = store.keys.run(bad)
    messages = orjson.loads(await ctx.redis.hget(key, "messages"))
    messages[0]["is_bot"] = "yes"
    await ctx.redis.hset(key, "messages", orjson.dumps(messages))
    good = [
        (await store.enqueue(make_request(c, hour=i))).run_id or ""
        for i, c in enumerate(GOOD_CHATS)
    ]
    fleet = Fleet(
        ctx.settings,
        ctx.tmp_path,
        {"discovery_base_url": ctx.sim.base_url, "lease_seconds": LONG_LEASE},
    )
    # timed from the workers being up (their start-up took 13-20 s on a loaded host)
    started = await workers_up(fleet.start(2))
    try:

        async def failed() -> bool:
            return bool((await store.get(bad)).error_log)

        await eventually(failed, timeout=UNREADABLE_WITHIN)
        took = time.monotonic() - started
        run = await store.get(bad)
        assert (run.status, run.retired, run.attempts) == (RunStatus.FAILED, True, 1), run
        (entry,) = run.error_log
        assert (entry.code, entry.kind) == ("StoredRunUnreadable", "retired"), entry
        assert bad in entry.message
        assert "messages.0.is_bot" in entry.message, entry
        assert UNREADABLE_CANARY not in entry.message
        print(f"the unreadable run failed {took:.2f} s after the workers started: {entry.message}")
        for rid in good:
            run = await completed_run(partial(store.get, rid), timeout=60)
            assert (run.attempts, run.error_log) == (1, []), (run, fleet.logs())
        run = await store.get(bad)  # no retry, ever
        assert (run.status, run.attempts, len(run.error_log)) == (RunStatus.FAILED, 1, 1), run
        shown = await asyncio.to_thread(cli, ctx.settings, "runs", "show", bad)
        assert shown.returncode == 0, shown.stderr
        assert "StoredRunUnreadable" in shown.stdout
        assert "messages.0.is_bot" in shown.stdout
        assert UNREADABLE_CANARY not in shown.stdout
        logs = fleet.logs(tail=None)
        assert '"run_unreadable"' in logs
        assert UNREADABLE_CANARY not in logs
    finally:
        fleet.stop_all()


async def row37(ctx: FaultContext) -> None:
    """An ACL denies one run's completion its later write — ``HDEL`` of the run's messages,
    after the counters, the status sets and the status — through a selector (every other
    key and command allowed): the completion writes nothing (its preflight asks first), so
    the run is never half completed; it is released (``store_refused``, 0 attempts), and
    once the ACL allows the write it completes on attempt 1, as do six other chats' runs."""
    async with private_store(ctx.settings, ctx.sim, ctx.tmp_path) as p:
        user, password = "completer", uuid.uuid4().hex
        keys = Keys(p.settings.key_prefix)
        store = p.store
        bad = (await store.enqueue(make_request(BAD_CHAT, hour=23))).run_id or ""
        good = [
            (await store.enqueue(make_request(c, hour=i))).run_id or ""
            for i, c in enumerate(GOOD_CHATS)
        ]
        selector = "(" + " ".join([*(f"~{a}" for a in all_keys_but([keys.run(bad)])), "+hdel"])
        await p.redis.execute_command(
            "ACL", "SETUSER", user, "reset", "on", f">{password}", "~*", "&*", "+@all", "-hdel",
            selector + ")",
        )  # fmt: skip
        dry = await p.redis.execute_command("ACL", "DRYRUN", user, "HDEL", keys.run(bad), "f")
        assert dry not in (b"OK", "OK"), dry
        socket_path = p.server.url.rpartition("@")[2]
        as_user = p.settings.model_copy(
            update={"redis_url": f"unix://{user}:{password}@{socket_path}"}
        )
        (ctx.tmp_path / "acl").mkdir()
        fleet = Fleet(
            as_user,
            ctx.tmp_path / "acl",
            {"discovery_base_url": ctx.sim.base_url, **STORE_FAST, "worker_concurrency": 2},
        )
        try:
            # settled within SETTLED_WITHIN of the worker being up, not of its spawn (a loaded
            # 2-core host's start-up alone can take 15 s)
            await workers_up(fleet.start(1))

            async def refused() -> bool:  # (or half completed, as it was before the preflight)
                run = await store.get(bad)
                released = any(e.reason == "store_refused" for e in run.release_log)
                return released or run.status == RunStatus.COMPLETED

            await eventually(refused, timeout=SETTLED_WITHIN)
            refused_at = time.monotonic()
            while time.monotonic() - refused_at < REFUSED_FOR:  # never half completed
                run = await store.get(bad)
                assert run.status != RunStatus.COMPLETED, run
                assert run.attempts <= 1, run
                assert await p.redis.zscore(keys.by_status("completed"), bad) is None
                assert await p.redis.hexists(keys.run(bad), "messages")
                await asyncio.sleep(0.2)

            await p.redis.execute_command("ACL", "SETUSER", user, "+hdel")
            run = await completed_run(partial(store.get, bad), timeout=60)
            assert (run.attempts, run.error_log) == (1, []), fleet.logs()
            assert run.releases >= 1
            assert {e.reason for e in run.release_log} == {"store_refused"}
            logs = fleet.logs(tail=None)
            assert '"error": "StoreWriteRefused"' in logs
            assert ctx.sim.submits(p.settings.extraction_service) <= 1 + len(good)  # kept
            for rid in good:
                run = await completed_run(partial(store.get, rid), timeout=60)
                assert (run.attempts, run.error_log) == (1, []), (run, fleet.logs())
            counters = await p.redis.hgetall(keys.counters)
            assert counters[b"completed"] == str(1 + len(good)).encode(), counters
        finally:
            fleet.stop_all()


ROWS = {34: row34, 35: row35, 36: row36, 37: row37}
