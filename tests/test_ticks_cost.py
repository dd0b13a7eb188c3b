"""Issue 11, item 7: what a tick costs the queue's Redis, command by command.

Each cut is counted here with ``INFO commandstats`` on a private Valkey (a script's inner
commands count), and the cuts that leave a set unpruned or a member in place show that the
pending/running counts the decisions read stay those of the exact scan.
"""

from __future__ import annotations

import time
from typing import Any

from arq.constants import abort_jobs_ss, in_progress_key_prefix, job_key_prefix, retry_key_prefix

from memory_worker.embedded import EmbeddedValkey
from memory_worker.settings import Settings
from memory_worker.worker import MemoryWorker, create_worker


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
    assert spent == {"evalsha": 1, "set": 1, "zscore": 1, "zadd": 2}
    assert await admin.exists(in_progress_key_prefix + tick)
    assert await admin.zscore(keys.ticks_started, tick) is not None

    lost: list[Any] = []
    spent = await cost(admin, _keep(lost, worker._start(tick, keys, True, now)))
    assert (lost, spent) == ([None], {"evalsha": 1, "set": 1})  # another worker has it

    for name, score in (("gone", None), ("later", now + 60_000)):
        job_id = keys.tick_job_id(name)
        if score is not None:
            await admin.zadd(worker.queue_name, {job_id: score})
        assert await worker._start(job_id, keys, True, now) is None
        assert not await admin.exists(in_progress_key_prefix + job_id)  # given back
        assert await admin.zscore(keys.ticks_started, job_id) is None


async def _keep(into: list[Any], result: Any) -> None:
    into.append(await result)
