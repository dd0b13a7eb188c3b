"""``runs/lua/forget_messages.lua`` against a Python twin, over random run states.

Runs of one chat are put in random states (queued, parked by an older worker,
processing, failed with a retry due, retired), a random forget (a user, or the
chat) runs, and every run's observable state — status, the index sets holding it,
its authors, its error log — is what the twin derives from the state before and
:func:`memory_worker.privacy.forget.plan_run`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import orjson
import pytest

from memory_worker.keys import Keys
from memory_worker.privacy.forget import RunAction, plan_run
from memory_worker.runs import RunStore
from memory_worker.runs.forget import RunForget
from memory_worker.runs.policy import plan_failure
from memory_worker.settings import Settings
from tests.support.forget import JAN, slice_of

USERS = (1, 2, 3)
INDEXES = ("queued", "retry", "leases", "retired")


@dataclass(frozen=True)
class Seen:
    status: str
    indexes: frozenset[str]
    authors: tuple[int, ...]
    errors: int
    parked: bool


async def seen(redis: Any, keys: Keys, run_id: str) -> Seen:
    status = (await redis.hget(keys.run(run_id), "status")).decode()
    raw = await redis.hget(keys.run(run_id), "messages")
    index_keys = (keys.queued, keys.retry, keys.leases, keys.retired)
    indexes = frozenset(
        [
            name
            for name, key in zip(INDEXES, index_keys, strict=True)
            if await redis.zscore(key, run_id) is not None
        ]
    )
    in_status = await redis.zscore(keys.by_status(status), run_id) is not None
    assert in_status, (run_id, status)
    return Seen(
        status=status,
        indexes=indexes,
        authors=tuple(m["user_id"] for m in orjson.loads(raw)) if raw else (),
        errors=await redis.llen(keys.run_errors(run_id)),
        parked=await redis.zscore(keys.parked("memory_v9"), run_id) is not None,
    )


def twin(before: Seen, user: int | None) -> Seen:
    """The state a forget leaves (the Python twin of forget_messages.lua)."""
    raw = orjson.dumps([{"message_id": i, "user_id": u} for i, u in enumerate(before.authors)])
    fields = {"status": before.status.encode(), "messages": raw}
    change = plan_run("r", fields, user)
    if change is None:
        return before
    kept = tuple(m["user_id"] for m in orjson.loads(change.messages)) if change.messages else ()
    if change.action is RunAction.STRIP:
        return replace(before, authors=kept)
    if before.status == "skipped":
        return replace(before, authors=(), errors=0)
    return Seen("skipped", frozenset(), (), 0, parked=False)


async def make_runs(store: RunStore, rng: random.Random, n: int) -> list[str]:
    s = store.settings
    ids: list[str] = []
    for i in range(n):
        rows = [(10 * i + j, rng.choice(USERS), "u", f"text {j}") for j in range(rng.randint(1, 4))]
        request = slice_of(JAN + timedelta(hours=i), *rows)
        if rng.random() < 0.2:
            request = request.model_copy(update={"prompt_version": "memory_v9"})
        added = await store.enqueue(request)
        assert added.run_id is not None
        ids.append(added.run_id)
    for _ in range(rng.randint(0, n)):
        claim = (await store.claim_detailed("w1")).run
        if claim is None:
            break
        fate = rng.choice(["processing", "retry", "retired"])
        if fate != "processing":
            attempts = s.max_attempts if fate == "retired" else 1
            plan = plan_failure(attempts, max_attempts=s.max_attempts, unit=3600.0,
                                max_units=1, now_ms=0)  # fmt: skip
            await store.fail(claim, plan, code="DECODE_ERROR", reason=None, message="x")
    return ids


@pytest.mark.parametrize("seed", range(5))
async def test_forget_messages_script_matches_its_twin(
    settings: Settings, redis: Any, seed: int
) -> None:
    rng = random.Random(seed)
    s = settings.model_copy(update={"max_attempts": 2})
    store = RunStore(redis, s)
    keys = Keys(s.key_prefix)
    ids = await make_runs(store, rng, rng.randint(3, 12))
    forget = RunForget(redis, keys, chunk=rng.randint(1, 4))
    for _ in range(3):
        user = rng.choice([*USERS, None])
        before = {}
        for run_id in ids:
            before[run_id] = await seen(redis, keys, run_id)
        await forget.apply(await forget.plan(ids, user), user)
        for run_id in ids:
            assert await seen(redis, keys, run_id) == twin(before[run_id], user), run_id
        parked = await redis.hget(keys.parked_counts, "memory_v9")  # parked runs count as queued
        assert int(parked or 0) == await redis.zcard(keys.parked("memory_v9"))
