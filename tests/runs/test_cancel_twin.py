"""``runs/lua/cancel.lua`` matches its Python twin (``tests/support/run_lanes.py``) over random
lives of a few runs — enqueued (some of a newer version, parked), claimed, released, failed,
retired, completed, kept an extraction, cancelled, replayed by id — on a real Valkey; and after
every step every run stands in exactly the lanes its status allows, and no claim ever takes a
cancelled run."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from memory_worker.keys import Keys
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.runs.policy import plan_failure
from memory_worker.settings import Settings
from memory_worker.upkeep.run_actions import cancel_entry
from memory_worker.wiring import replay_store
from tests.support.factories import make_request
from tests.support.run_lanes import cancel_twin, lanes_of, seen

NEWER = "zz-newer"
FAR = 10**13


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.mark.parametrize("seed", range(6))
async def test_cancel_script_matches_its_twin_and_every_run_keeps_its_lanes(
    settings: Settings, redis: Any, seed: int
) -> None:
    rng = random.Random(seed)
    s = settings.model_copy(update={"max_attempts": 2, "backoff_unit_seconds": 3600.0})
    store, newer = (
        RunStore(redis, s),
        RunStore(redis, s.model_copy(update={"prompt_version": NEWER})),
    )
    keys, replays = Keys(s.key_prefix), replay_store(redis, s, store)
    ids: list[str] = []
    held: list[ClaimedRun] = []
    cancelled: set[str] = set()
    outcomes: set[str] = set()
    hour = 0
    for _ in range(40):
        op = rng.choice(["enqueue", "enqueue", "claim", "settle", "cancel", "cancel", "replay"])
        if op == "enqueue" or not ids:
            hour += 1
            version = NEWER if rng.random() < 0.2 else None
            request = make_request(700 + rng.randint(0, 2), hour=hour, prompt_version=version)
            run_id = (await (newer if request.prompt_version else store).enqueue(request)).run_id
            if run_id is not None:
                ids.append(run_id)
        elif op == "claim":
            claim = await store.claim("w1", at_ms=rng.choice([now_ms(), FAR]))
            if claim is not None:
                assert claim.id not in cancelled  # a cancelled run is never claimed
                held.append(claim)
        elif op == "settle" and held:
            claim = held.pop(rng.randrange(len(held)))
            how = rng.choice(["release", "fail", "complete", "keep"])
            if how == "release":
                await store.release(claim, reason="provider_unavailable")
            elif how == "complete":
                await store.complete(claim, {})
            elif how == "keep":  # a kept extraction, and the run still held
                await store.keep_extraction(claim, b"{}")
                held.append(claim)
            else:
                plan = plan_failure(claim.attempts, max_attempts=2, unit=3600.0, max_units=1,
                                    now_ms=now_ms())  # fmt: skip
                await store.fail(claim, plan, code="X", reason="provider_error", message="x")
        elif op == "cancel":
            run_id = rng.choice(ids)
            before = await seen(redis, keys, run_id, (NEWER,))
            expected, after = cancel_twin(before)
            run = await store.get(run_id)
            entry = cancel_entry(run, actor="test", now_ms=now_ms()).model_dump_json()
            answer = await store.cancel(run_id, entry)
            assert answer.outcome == expected, (run_id, before)
            assert await seen(redis, keys, run_id, (NEWER,)) == after, (run_id, before)
            outcomes.add(f"{expected}:{before.status}")
            if expected == "cancelled":
                cancelled.add(run_id)
        elif op == "replay":
            run_id = rng.choice(ids)
            replay = await replays.plan_run(run_id, now_ms=now_ms())
            if (await replays.apply(replay)).replayed:
                cancelled.discard(run_id)
        for run_id in ids:
            place = await seen(redis, keys, run_id, (NEWER,))
            assert place.lanes in lanes_of(place), (op, run_id, place)
            if place.status == "cancelled":
                assert not place.summary
                assert not place.extraction
    assert "cancelled:queued" in outcomes or "cancelled:failed" in outcomes, outcomes
    parked = await redis.hget(keys.parked_counts, NEWER)
    assert int(parked or 0) == await redis.zcard(keys.parked(NEWER))
