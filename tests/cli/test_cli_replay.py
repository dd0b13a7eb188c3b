"""`memory-worker replay` (§11): exact selection, byte-identical dry run, idempotence, the cap.

User story: after an incident retired runs by UPSTREAM_ERROR, the operator replays
exactly those — not the runs that failed for a real reason — and they complete.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest

from memory_worker.farmsim import FarmSimulator
from memory_worker.keys import Keys
from memory_worker.models import RunRequest, RunStatus
from memory_worker.pipeline.ticks import TickQueue
from memory_worker.runs import EnqueueStatus, RunStore
from memory_worker.runs.policy import plan_failure
from memory_worker.runs.replay import ReplayFilter, ReplayStore
from memory_worker.settings import Settings
from memory_worker.wiring import build_tick_runner, event_log, replay_store
from tests.support.factories import make_request
from tests.support.harness import cli


async def retire(store: RunStore, request: RunRequest, *, code: str, reason: str | None) -> str:
    """Enqueue ``request`` and spend all its attempts failing with ``code``."""
    result = await store.enqueue(request)
    assert result.run_id is not None
    s = store.settings
    while True:
        claim = await store.claim("w", at_ms=int(time.time() * 1000) + 10**9)
        assert claim is not None
        assert claim.id == result.run_id
        plan = plan_failure(
            claim.attempts,
            max_attempts=s.max_attempts,
            unit=s.backoff_unit_seconds,
            max_units=s.backoff_max_units,
            now_ms=int(time.time() * 1000),
        )
        await store.fail(claim, plan, code=code, reason=reason, message=f"{code}: failed")
        if plan.retire:
            return result.run_id


async def dump_prefix(redis: Any, prefix: str) -> dict[bytes, tuple[bytes | None, int]]:
    """Every key of the deployment: DUMP bytes and whether it has a TTL."""
    keys = sorted([k async for k in redis.scan_iter(match=f"*{prefix}*", count=1000)])
    state: dict[bytes, tuple[bytes | None, int]] = {}
    for key in keys:
        ttl = await redis.pttl(key)
        state[key] = (await redis.dump(key), -1 if ttl < 0 else 1)
    return state


@pytest.fixture
def few_attempts(settings: Settings) -> Settings:
    return settings.model_copy(update={"max_attempts": 2, "backoff_unit_seconds": 0.001})


@pytest.fixture
async def two_groups(few_attempts: Settings, redis: Any) -> tuple[list[str], list[str]]:
    """Three runs retired by UPSTREAM_ERROR, two by a decode error (different chats)."""
    store = RunStore(redis, few_attempts)
    upstream = [
        await retire(
            store, make_request(100 + i, hour=i), code="UPSTREAM_ERROR", reason="provider_timeout"
        )
        for i in range(3)
    ]
    decode = [
        await retire(
            store,
            make_request(200 + i, hour=i),
            code="DecodeError",
            reason="provider_protocol_error",
        )
        for i in range(2)
    ]
    return upstream, decode


async def test_replay_by_error_code_resets_exactly_that_group_and_they_complete(
    few_attempts: Settings, redis: Any, two_groups: tuple[list[str], list[str]]
) -> None:
    upstream, decode = two_groups
    store = RunStore(redis, few_attempts)
    before = {r.id: r for r in await store.get_many(upstream + decode)}

    done = cli(few_attempts, "replay", "--error-code", "UPSTREAM_ERROR", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["matched"] == report["replayed"] == 3
    assert sorted(r["id"] for r in report["runs"]) == sorted(upstream)
    assert report["by_code"] == {"UPSTREAM_ERROR": 3}

    for run in await store.get_many(upstream):
        assert run.status is RunStatus.FAILED
        assert run.attempts == 0
        assert not run.retired
        assert run.next_attempt_at is not None
        old = before[run.id].error_log
        assert run.error_log[: len(old)] == old  # the log is kept…
        assert run.error_log[-1].kind == "replay"  # …and records the replay
        assert run.error_log[-1].attempt == 2
    for run in await store.get_many(decode):
        assert run == before[run.id]  # untouched
    assert (await store.counts())["retired"] == 2
    assert (await TickQueue(redis, Keys(few_attempts.key_prefix)).counts()).pending >= 1  # woken

    # a pipeline against the farm simulator completes every replayed run
    async with FarmSimulator() as sim:
        farm = few_attempts.model_copy(update={"discovery_base_url": sim.base_url})
        pipeline = await build_tick_runner(farm, redis)  # the production pipeline
        try:
            outcomes = [await pipeline.tick(f"job{i}") for i in range(4)]
        finally:
            for close in pipeline.closers:
                await close()
    assert outcomes == ["completed", "completed", "completed", "idle"]
    for run in await store.get_many(upstream):
        assert run.status is RunStatus.COMPLETED
        assert run.attempts == 1
        assert run.error_log[-1].kind == "replay"
    assert all(r.retired for r in await store.get_many(decode))


async def test_dry_run_writes_nothing_and_a_second_replay_is_a_no_op(
    few_attempts: Settings, redis: Any, two_groups: tuple[list[str], list[str]]
) -> None:
    upstream, _ = two_groups
    before = await dump_prefix(redis, few_attempts.key_prefix)
    assert before

    dry = cli(few_attempts, "replay", "--error-code", "UPSTREAM_ERROR", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would replay" in dry.stdout
    for run_id in upstream:
        assert run_id in dry.stdout
    dry_json = cli(few_attempts, "replay", "--dry-run", "--json", "--rate", "10/min")
    assert dry_json.returncode == 0, dry_json.stderr
    assert json.loads(dry_json.stdout)["matched"] == 5
    assert json.loads(dry_json.stdout)["replayed"] == 0
    assert await dump_prefix(redis, few_attempts.key_prefix) == before  # byte-identical

    refused = cli(few_attempts, "replay", "--error-code", "UPSTREAM_ERROR", stdin="n\n")
    assert refused.returncode == 1
    assert "3 run(s)" in refused.stderr
    assert await dump_prefix(redis, few_attempts.key_prefix) == before
    nobody = cli(few_attempts, "replay", "--error-code", "UPSTREAM_ERROR", stdin="")
    assert nobody.returncode == 2  # no terminal, no --yes: refused in one line, not "Aborted!"
    assert "pass --yes" in nobody.stderr.strip().splitlines()[-1]
    assert await dump_prefix(redis, few_attempts.key_prefix) == before

    first = cli(few_attempts, "replay", "--error-code", "UPSTREAM_ERROR", stdin="y\n")
    assert first.returncode == 0, first.stderr
    assert "Replay summary" in first.stdout
    (audited,) = await event_log(redis, few_attempts).recent(types=["cli_replay"])
    assert audited.counters == {"matched": 3, "replayed": 3, "skipped": 0}
    assert dict(audited.context)["error_code"] == "UPSTREAM_ERROR"
    assert dict(audited.context)["actor"] == "cli"
    after_first = await dump_prefix(redis, few_attempts.key_prefix)
    assert after_first != before

    again = cli(few_attempts, "replay", "--error-code", "UPSTREAM_ERROR", "--yes", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["replayed"] == 0
    assert json.loads(again.stdout)["matched"] == 0
    assert await dump_prefix(redis, few_attempts.key_prefix) == after_first  # a no-op


async def test_replayed_runs_stay_outside_the_queued_cap(settings: Settings, redis: Any) -> None:
    cap = 5000
    capped = settings.model_copy(
        update={"max_attempts": 1, "max_queued_runs": cap, "max_daily_enqueued_runs": 10**6}
    )
    store = RunStore(redis, capped)
    retired = [
        await retire(store, make_request(9000 + i), code="UPSTREAM_ERROR", reason=None)
        for i in range(3)
    ]
    for i in range(cap):
        result = await store.enqueue(make_request(i, hour=i % 24, texts=[f"hello {i}"]))
        assert result.status is EnqueueStatus.ENQUEUED
    assert (await store.enqueue(make_request(cap + 1))).status is EnqueueStatus.QUEUE_FULL

    done = cli(capped, "replay", "--yes", "--json", MEMORY_MAX_QUEUED_RUNS=str(cap))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["replayed"] == 3

    # the cap still refuses new runs, and the replayed ones are claimable (retry bucket first)
    assert (await store.enqueue(make_request(cap + 2))).status is EnqueueStatus.QUEUE_FULL
    counts = await store.counts()
    assert counts["queued"] == cap
    assert counts["failed"] == 3
    claimed = [await store.claim("w") for _ in range(3)]
    assert sorted(c.id for c in claimed if c is not None) == sorted(retired)


async def test_rate_staggers_availability(few_attempts: Settings, redis: Any) -> None:
    store = RunStore(redis, few_attempts)
    ids = [
        await retire(store, make_request(300 + i), code="UPSTREAM_ERROR", reason=None)
        for i in range(4)
    ]
    # 6/min: the second run is due 10 s after the CLI's clock, however slow a loaded
    # machine is to start the CLI and come back (at 60/min the test was flaky under load)
    done = cli(few_attempts, "replay", "--rate", "6/min", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    runs = {r.id: r for r in await store.get_many(ids)}
    times = sorted(r.next_attempt_at for r in runs.values() if r.next_attempt_at)
    assert len(times) == 4
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    assert gaps == pytest.approx([10.0, 10.0, 10.0])
    first = await store.claim("w")
    assert first is not None
    assert await store.claim("w") is None  # the others are not due yet


async def test_bad_arguments_are_clear_errors(settings: Settings, redis: Any) -> None:
    bad_rate = cli(settings, "replay", "--rate", "fast", "--dry-run")
    assert bad_rate.returncode == 2
    assert "rate" in bad_rate.stderr
    bad_time = cli(settings, "replay", "--since", "last tuesday", "--dry-run")
    assert bad_time.returncode == 2
    assert "ISO 8601" in bad_time.stderr
    bad_status = cli(settings, "replay", "--status", "queued", "--dry-run")
    assert bad_status.returncode == 2


async def test_store_applies_in_batches_and_rechecks_each_run(
    few_attempts: Settings, redis: Any, two_groups: tuple[list[str], list[str]]
) -> None:
    upstream, decode = two_groups
    store = ReplayStore(redis, few_attempts, RunStore(redis, few_attempts), batch_size=2)
    plan = await store.plan(ReplayFilter(), now_ms=int(time.time() * 1000))
    assert len(plan.items) == 5
    # one run changes between the selection and the apply: it is skipped, not clobbered
    runs = RunStore(redis, few_attempts)
    other = replay_store(redis, few_attempts)
    sneaky = await other.plan(ReplayFilter(chat_id=200), now_ms=int(time.time() * 1000))
    await other.apply(sneaky)
    batches: list[int] = []
    outcome = await store.apply(plan, on_batch=batches.append)
    assert batches == [2, 2, 1]
    assert sorted(outcome.skipped) == [decode[0]]
    assert sorted(outcome.replayed) == sorted(upstream + decode[1:])
    entries = (await runs.get(decode[0])).error_log
    assert [e.kind for e in entries].count("replay") == 1  # replayed once, not twice


async def test_skipped_runs_can_be_replayed_under_the_new_version(
    settings: Settings, redis: Any
) -> None:
    """Fault-matrix row 14: a run skipped for an older prompt version is not lost for good."""
    v2 = settings.model_copy(update={"prompt_version": "memory_v2"})
    store = RunStore(redis, v2)
    old = (await store.enqueue(make_request(1, prompt_version="memory_v1"))).run_id
    assert old
    assert await store.claim("w") is None
    assert (await store.get(old)).status is RunStatus.SKIPPED
    listed = cli(v2, "replay", "--status", "skipped", "--dry-run", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["id"] for r in json.loads(listed.stdout)["runs"]] == [old]
    done = cli(
        v2, "replay", "--status", "skipped", "--prompt-version", "memory_v1", "--yes", "--json"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["replayed"] == 1
    run = await store.get(old)
    assert (run.status, run.attempts, run.prompt_version) == (RunStatus.FAILED, 0, None)
    claim = await store.claim("w", at_ms=int(time.time() * 1000) + 1000)
    assert claim is not None
    assert claim.id == old
    assert claim.request.prompt_version == "memory_v2"
    again = cli(v2, "replay", "--status", "skipped", "--yes", "--json")
    assert json.loads(again.stdout)["matched"] == 0
