"""What a tick costs the queue's Redis, command by command.

Each cut is counted here with ``INFO commandstats`` on a private Valkey (a script's inner
commands count), and the cuts that leave a set unpruned or a member in place show that the
pending/running counts the decisions read stay those of the exact scan.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

import pytest
from arq.constants import abort_jobs_ss, in_progress_key_prefix, job_key_prefix, retry_key_prefix

from memory_worker.keys import Keys
from memory_worker.pipeline.ticks import Mode, TickOutcome, TickPlan, TickQueue, plan_followups
from memory_worker.settings import Settings
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.worker.main import MemoryWorker, create_worker
from memory_worker.worker.prelude import next_pipeline_plain, plain_prelude_pipelines
from tests.support.logs import capture_logs

T0 = 1_800_000_000_000
DAY = 86_400_000
COMPLETED = plan_followups(TickOutcome.COMPLETED, retry_interval=15)


async def calls(admin: Any) -> dict[str, int]:
    stats = await admin.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


async def cost(admin: Any, action: Any) -> dict[str, int]:
    """The commands the ``action`` coroutine sends (inner ones included), by name."""
    before = await calls(admin)
    await action
    after = await calls(admin)
    spent = {k: n - before.get(k, 0) for k, n in after.items() if n - before.get(k, 0)}
    spent["info"] -= 1  # the first snapshot
    return {k: n for k, n in spent.items() if n}


async def running_tick(queue: TickQueue, redis: Any, name: str, at_ms: int) -> str:
    """A tick queued by ``schedule`` and started as MemoryWorker's start leaves it."""
    job_id = queue.keys.tick_job_id(name)
    await redis.zadd(queue.keys.arq_queue, {job_id: at_ms})
    await redis.zadd(queue.keys.ticks_queued, {job_id: at_ms + DAY})
    await redis.set(in_progress_key_prefix + job_id, b"1", px=3_610_000)
    await redis.zadd(queue.keys.ticks_started, {job_id: at_ms + 3_610_000})
    await redis.zadd(queue.running_key, {job_id: at_ms + 30_000})
    return job_id


async def test_a_completed_ticks_schedule_costs_nine_inner_commands(admin: Any) -> None:
    """Steady state (the pipeline at its target: one follow-up). The finishing tick leaves
    the running and queued sets, clears the deferral mark, counts (started pruned, two
    ZINTERCARD) and queues its follow-up. It stays in "started" (below), no ZCOUNT (only
    if_idle reads it), and the queued prune only every PRUNE_QUEUED_MS: 9 inner commands,
    12 before; and the preflight's 5 TYPE (corrupt data refused before the first write)."""
    queue = TickQueue(admin, Keys("cost1:"))
    ticks = [await running_tick(queue, admin, f"r{i}", T0) for i in range(2)]
    await queue.schedule(TickPlan(Mode.AMPLIFY, base=0), target=2, at_ms=T0, done="warm")
    spent = await cost(
        admin,
        queue.schedule(COMPLETED, target=1, at_ms=T0 + 10, done=ticks[0], clear_deferred=True),
    )
    assert spent == {
        "evalsha": 1,
        "zrem": 2,
        "hdel": 1,
        "zremrangebyscore": 1,
        "zintercard": 2,
        "set": 1,
        "zadd": 2,
        "type": 5,  # the preflight: one TYPE a typed key it may write (the ticks' sets, marks)
    }
    later = T0 + TickQueue.PRUNE_QUEUED_MS
    spent = await cost(admin, queue.schedule(COMPLETED, target=1, at_ms=later, done=ticks[1]))
    assert spent["zremrangebyscore"] == 2  # the queued set's prune is due again


async def test_only_if_idle_counts_the_running_ticks(admin: Any) -> None:
    queue = TickQueue(admin, Keys("cost2:"))
    await running_tick(queue, admin, "r0", T0)
    await queue.schedule(TickPlan(Mode.AMPLIFY, base=0), target=1, at_ms=T0, done="warm")
    for mode in Mode:
        spent = await cost(admin, queue.schedule(TickPlan(mode, base=1), target=1, at_ms=T0))
        assert spent.get("zcount", 0) == (mode is Mode.IF_IDLE)


async def test_a_finished_tick_left_in_started_changes_no_count(
    redis: Any, settings: Settings
) -> None:
    """The finishing tick stays in "started" until its lease would end. Out of "queued", it
    is in neither ZINTERCARD: every count equals the exact scan's (``counts``), before and
    after arq's finish, before and after its started entry lapses, and no poll offers it
    while it is still on arq's queue."""
    queue = TickQueue(redis, Keys(settings.key_prefix))
    now = int(time.time() * 1000) - 1000
    done = await running_tick(queue, redis, "done", now)
    waiting = queue.keys.tick_job_id("waiting")  # queued, not started
    await redis.zadd(queue.keys.arq_queue, {waiting: now})
    await redis.zadd(queue.keys.ticks_queued, {waiting: now + DAY})

    result = await queue.schedule(COMPLETED, target=8, at_ms=now, done=done)
    assert (result.added, result.pending_before) == (2, 1)
    assert await redis.zscore(queue.keys.ticks_started, done) is not None
    worker = create_worker(settings, redis, burst=True, handle_signals=False)
    offered = {j.decode() for j in await worker._ready_jobs(100)}
    assert done not in offered  # arq has not finished it yet
    assert waiting in offered

    async def agrees(at_ms: int) -> None:
        probe = await queue.schedule(TickPlan(Mode.PROBE, base=0), target=8, at_ms=at_ms, done="x")
        assert probe.pending_before == (await queue.counts(at_ms=at_ms)).pending == 3

    await agrees(now)  # still on arq's queue, in-progress key and started entry alive
    await worker.finish_job(done, True, None, None, False, None, None)
    await agrees(now)
    await agrees(now + 3_700_000)  # its started entry has lapsed and been pruned
    assert await redis.zscore(queue.keys.ticks_started, done) is None


async def test_a_tick_arq_runs_again_leaves_started_at_its_finish(
    redis: Any, settings: Settings
) -> None:
    """A tick cancelled after its follow-ups went in (a shutdown) is run again by arq: its
    finish takes it out of "started" too, so the next poll offers it at once, as when the
    schedule took it out."""
    queue = TickQueue(redis, Keys(settings.key_prefix))
    now = int(time.time() * 1000) - 1000
    tick = await running_tick(queue, redis, "again", now)
    await queue.schedule(COMPLETED, target=1, at_ms=now, done=tick)
    worker = create_worker(settings, redis, burst=True, handle_signals=False)
    assert tick.encode() not in await worker._ready_jobs(100)
    await worker.finish_job(tick, False, None, None, False, None, None)  # arq: run it again
    assert await redis.zscore(queue.keys.arq_queue, tick) is not None
    assert tick.encode() in await worker._ready_jobs(100)


@pytest.mark.parametrize("zdiff", [True, False], ids=["zdiff", "redis6.0"])
async def test_a_finished_tick_leaves_started_only_where_the_poll_reads_it_all(
    redis: Any, settings: Settings, zdiff: bool
) -> None:
    """Without ZDIFF (Redis < 6.2) the poll reads all of "started": there, a finished tick
    leaves it at its finish, so the set stays as small as the running ticks."""
    queue = TickQueue(redis, Keys(settings.key_prefix))
    now = int(time.time() * 1000) - 1000
    tick = await running_tick(queue, redis, "finished", now)
    await queue.schedule(COMPLETED, target=1, at_ms=now, done=tick)
    worker = create_worker(settings, redis, burst=True, handle_signals=False)
    worker.has_zdiff = zdiff
    await worker.finish_job(tick, True, None, None, False, None, None)
    assert (await redis.zscore(queue.keys.ticks_started, tick) is None) is not zdiff


async def test_a_stale_queued_tick_is_pruned_by_the_next_call_due(
    redis: Any, settings: Settings
) -> None:
    """A queued tick goes stale with its job key, a day after it was due; only one that no
    worker started in that day is still on arq's queue. A process prunes it on its first call
    and then every PRUNE_QUEUED_MS (or when its clock goes back)."""
    keys = Keys(settings.key_prefix)
    stale = keys.tick_job_id("stale")
    await redis.zadd(keys.arq_queue, {stale: T0})
    await redis.zadd(keys.ticks_queued, {stale: T0 + DAY})
    probe = TickPlan(Mode.PROBE, base=0)
    expired = T0 + DAY + 1

    assert (
        await TickQueue(redis, keys).schedule(probe, target=1, at_ms=expired, done="x")
    ).pending_before == 0
    await redis.zadd(keys.ticks_queued, {stale: T0 + DAY})  # as if queued again

    queue = TickQueue(redis, keys)
    assert (await queue.schedule(probe, target=1, at_ms=T0 + DAY - 1, done="x")).pending_before == 1
    lag = T0 + DAY - 1 + TickQueue.PRUNE_QUEUED_MS - 1
    assert (await queue.schedule(probe, target=1, at_ms=lag, done="x")).pending_before == 1
    assert (await queue.schedule(probe, target=1, at_ms=lag + 1, done="x")).pending_before == 0

    await redis.zadd(keys.ticks_queued, {stale: T0 + DAY})
    assert (await queue.schedule(probe, target=1, at_ms=lag + 1, done="x")).pending_before == 1
    assert (
        await queue.schedule(probe, target=1, at_ms=expired, done="x")
    ).pending_before == 0  # clock back


def worker_on(server: EmbeddedValkey, admin: Any, tmp_path: Any) -> MemoryWorker:
    settings = Settings(redis_url=server.url, key_prefix="cost3:", data_dir=tmp_path / "var")
    return create_worker(settings, admin, burst=True, handle_signals=False)


async def test_a_finish_leaves_arqs_abort_set_alone_unless_aborts_are_allowed(
    admin: Any, private_valkey: EmbeddedValkey, tmp_path: Any
) -> None:
    worker = worker_on(private_valkey, admin, tmp_path)
    assert worker.allow_abort_jobs is False  # ours
    for allow in (False, True):
        worker.allow_abort_jobs = allow
        job_id = f"cost3:job-{allow}"
        await admin.zadd(worker.queue_name, {job_id: 1})
        await admin.zadd(abort_jobs_ss, {job_id: 1})  # a Job.abort mark
        for prefix in (in_progress_key_prefix, job_key_prefix, retry_key_prefix):
            await admin.set(prefix + job_id, b"1")
        spent = await cost(admin, worker.finish_job(job_id, True, None, None, False, None, None))
        assert spent == {"zrem": 1 + allow, "del": 1}
        assert await admin.zscore(worker.queue_name, job_id) is None
        assert (
            await admin.exists(
                *(p + job_id for p in (in_progress_key_prefix, job_key_prefix, retry_key_prefix))
            )
            == 0
        )
        assert (await admin.zscore(abort_jobs_ss, job_id) is None) is allow
        await admin.zrem(abort_jobs_ss, job_id)


async def test_a_job_start_costs_four_inner_commands_and_a_lost_race_one(
    admin: Any, private_valkey: EmbeddedValkey, tmp_path: Any
) -> None:
    """The start takes the in-progress key with SET NX (EXISTS + SET before), gives it
    back if the job is gone or not due, and otherwise answers as arq's start."""
    worker = worker_on(private_valkey, admin, tmp_path)
    keys = worker.tick_keys
    assert keys is not None
    now = int(time.time() * 1000)
    tick = keys.tick_job_id("start")
    await admin.zadd(worker.queue_name, {tick: now - 5})
    await worker._start("warm", keys, False, now)  # the script loaded

    spent = await cost(admin, worker._start(tick, keys, True, now))
    # and the preflight's TYPE of the two sets it may ZADD to (before its first write)
    assert spent == {"evalsha": 1, "set": 1, "zscore": 1, "zadd": 2, "type": 2}
    assert await admin.exists(in_progress_key_prefix + tick)
    assert await admin.zscore(keys.ticks_started, tick) is not None

    lost: list[Any] = []
    spent = await cost(admin, _keep(lost, worker._start(tick, keys, True, now)))
    assert (lost, spent) == ([None], {"evalsha": 1, "set": 1, "type": 2})  # another has it

    for name, score in (("gone", None), ("later", now + 60_000)):
        job_id = keys.tick_job_id(name)
        if score is not None:
            await admin.zadd(worker.queue_name, {job_id: score})
        assert await worker._start(job_id, keys, True, now) is None
        assert not await admin.exists(in_progress_key_prefix + job_id)  # given back
        assert await admin.zscore(keys.ticks_started, job_id) is None


async def _keep(into: list[Any], result: Any) -> None:
    into.append(await result)


async def test_the_poll_prunes_started_once_a_second(
    admin: Any, private_valkey: EmbeddedValkey, tmp_path: Any
) -> None:
    """Every poll pruned "started" (≈ 0.6 a run); now a worker's poll does once every
    PRUNE_STARTED_MS, and every tick's schedule still does (its counts stay exact)."""
    worker = worker_on(private_valkey, admin, tmp_path)
    worker.PRUNE_STARTED_MS = 60_000  # a slow machine's calls stay within it
    assert await cost(admin, worker._ready_jobs(10)) == {"zremrangebyscore": 1, "zdiff": 1}
    assert await cost(admin, worker._ready_jobs(10)) == {"zdiff": 1}
    assert worker._started_pruned_at is not None
    worker._started_pruned_at -= worker.PRUNE_STARTED_MS
    assert await cost(admin, worker._ready_jobs(10)) == {"zremrangebyscore": 1, "zdiff": 1}


@pytest.mark.parametrize("tick", [True, False], ids=["tick", "other_job"])
async def test_a_ticks_run_job_prelude_goes_without_multi_exec(
    admin: Any, private_valkey: EmbeddedValkey, tmp_path: Any, tick: bool
) -> None:
    """arq's run_job opens with GET job + INCR/EXPIRE tries in MULTI/EXEC; a tick's goes
    without (2 commands a run). A job whose key is gone takes arq's failed-job finish, its
    own transaction, afterwards: a tick shows that one MULTI only, any other job both."""
    worker = worker_on(private_valkey, admin, tmp_path)
    assert worker.tick_keys is not None
    job_id = worker.tick_keys.tick_job_id("prelude") if tick else "cost3:cron:other"
    await admin.zadd(worker.queue_name, {job_id: 1})
    spent = await cost(admin, worker.run_job(job_id, 1))
    assert (spent.get("multi", 0), spent.get("exec", 0)) == ((1, 1) if tick else (2, 2))
    assert spent["get"] == 1  # the job (gone: "job expired")
    assert spent["incrby"] == 1  # its try counter, as arq counts it
    assert await admin.zscore(worker.queue_name, job_id) is None  # finished as arq does


async def test_the_plain_prelude_is_one_pipeline_of_one_task(admin: Any) -> None:
    """The flag is the task's own (a ContextVar): its next transactional pipeline only;
    concurrent tasks on the same pool keep their transactions."""
    plain_prelude_pipelines(admin)
    plain_prelude_pipelines(admin)  # idempotent

    async def two_pipelines() -> None:
        next_pipeline_plain()
        for _ in range(2):
            async with admin.pipeline(transaction=True) as pipe:
                pipe.get("cost4:a")
                await asyncio.sleep(0)  # another task's pipeline runs in between
                await pipe.execute()

    async def other() -> None:
        async with admin.pipeline(transaction=True) as pipe:
            pipe.get("cost4:b")
            await pipe.execute()

    spent = await cost(admin, asyncio.gather(two_pipelines(), other()))
    assert (spent["multi"], spent["exec"], spent["get"]) == (2, 2, 3)


async def test_a_tick_prelude_refused_by_a_full_redis_loses_no_tick(
    admin: Any, private_valkey: EmbeddedValkey, tmp_path: Any
) -> None:
    """Without the transaction, a Redis out of memory refuses the prelude's INCR as it
    refused the MULTI before: the job raises, stays queued and counts no try."""
    worker = worker_on(private_valkey, admin, tmp_path)
    assert worker.tick_keys is not None
    job_id = worker.tick_keys.tick_job_id("oom")
    await admin.zadd(worker.queue_name, {job_id: 1})
    await admin.config_set("maxmemory", "1")
    try:
        with pytest.raises(Exception, match="maxmemory"):
            await worker.run_job(job_id, 1)
    finally:
        await admin.config_set("maxmemory", "0")
    assert await admin.zscore(worker.queue_name, job_id) == 1  # still queued: runs again
    assert await admin.get(retry_key_prefix + job_id) is None  # no try counted


async def test_a_job_task_that_raises_is_logged_not_left_unretrieved(
    admin: Any, private_valkey: EmbeddedValkey, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """arq leaves a run_job task that raised (Redis failed around the job) for asyncio to
    report as "Task exception was never retrieved" when it is collected; the worker's
    done-callback takes the exception and logs ``job_task_failed`` (type only), and the
    job stays queued to run again."""
    worker = worker_on(private_valkey, admin, tmp_path)
    assert worker.tick_keys is not None
    job_id = worker.tick_keys.tick_job_id("raises")
    await admin.zadd(worker.queue_name, {job_id: 1})
    real = worker.run_job

    async def full_then_run(job: str, score: int) -> None:
        await admin.config_set("maxmemory", "1")  # after the start, before the prelude
        await real(job, score)

    monkeypatch.setattr(worker, "run_job", full_then_run)
    unretrieved: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    await worker.sem.acquire()  # as start_jobs does before a start
    worker.job_counter += 1
    try:
        with capture_logs() as logs:
            assert await worker._try_start(job_id)
            task = worker.tasks.pop(job_id)
            await asyncio.wait([task])
            await asyncio.sleep(0)  # the done-callback runs
        del task
        gc.collect()
    finally:
        await admin.config_set("maxmemory", "0")
        loop.set_exception_handler(None)
    # asyncio had nothing to report of a task (the collection may also meet another test's
    # leftovers in this process, e.g. "Unclosed RedisCluster client": not this promise's)
    assert [c for c in unretrieved if "task" in c or "future" in c] == []
    failed = [e for e in logs if e["event"] == "job_task_failed"]
    assert [(e["job_id"], e["error"]) for e in failed] == [(job_id, "OutOfMemoryError")]
    assert worker.job_counter == 0  # the slot given back
    assert await admin.zscore(worker.queue_name, job_id) == 1  # still queued: runs again


async def test_a_job_start_refused_by_a_full_redis_starts_nothing(
    admin: Any, private_valkey: EmbeddedValkey, tmp_path: Any
) -> None:
    """The start script's first write is the in-progress key's SET NX: a Redis out of memory
    refuses it, so nothing is written (no in-progress key, not marked running or started)
    and no task is made; the job stays queued and starts once memory is back."""
    worker = worker_on(private_valkey, admin, tmp_path)
    keys = worker.tick_keys
    assert keys is not None
    job_id = keys.tick_job_id("full")
    await admin.zadd(worker.queue_name, {job_id: 1})
    await admin.config_set("maxmemory", "1")
    try:
        assert not await worker._try_start(job_id)
    finally:
        await admin.config_set("maxmemory", "0")
    assert job_id not in worker.tasks
    assert not await admin.exists(in_progress_key_prefix + job_id)
    assert await admin.zscore(keys.ticks_running, job_id) is None
    assert await admin.zscore(keys.ticks_started, job_id) is None
    assert await admin.zscore(worker.queue_name, job_id) == 1  # still queued
    started = await worker._start(job_id, keys, True, int(time.time() * 1000))
    assert started is not None  # memory back: it starts
    assert float(started) == 1
