"""What one successful claim costs the queue's Redis.

Counted on a private Valkey with ``INFO commandstats`` (commands a script runs count, as
they cost the server the same), in the steady state: the store knows the lanes' heads
from its previous claim, so the claim is one script call.
"""

from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import OutOfMemoryError

from llm_client import as_text
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.runs.store import LaneHeads
from memory_worker.settings import Settings
from tests.support.factories import make_request

T0 = 1_800_000_000_000
#: Inner commands of one claim from the queued lane (docs/scaling.md explains each).
CLAIM_COMMANDS = 14
#: Its preflight's ``TYPE`` of each distinct key it may write with a typed command (the
#: lanes, status sets, counters, parked counts, the worker's runs, each candidate's run hash
#: and error log): corrupt data refused before the first write.
CLAIM_TYPE_CHECKS = 16


async def calls(admin: Any) -> dict[str, int]:
    stats = await admin.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


async def test_a_claim_from_the_queued_lane_costs_at_most_14_commands_and_its_type_checks(
    admin: Any, settings: Settings
) -> None:
    store = RunStore(admin, settings)
    ids = [(await store.enqueue(make_request(chat), at_ms=T0)).run_id for chat in (1, 2, 3)]
    await store.heartbeat("w", [], concurrency=1, at_ms=T0)
    first = await store.claim("w", at_ms=T0 + 10)  # loads the script, learns the heads
    assert first is not None
    before = await calls(admin)
    claim = await store.claim("w", at_ms=T0 + 20)
    after = await calls(admin)
    spent = {k: n - before.get(k, 0) for k, n in after.items() if n > before.get(k, 0)}
    assert spent.pop("info") == 1  # the first snapshot
    assert spent.pop("evalsha") == 1  # one round trip
    assert spent.pop("type") <= CLAIM_TYPE_CHECKS, spent
    assert sum(spent.values()) <= CLAIM_COMMANDS, spent
    # and it is a whole claim: the second run, leased to w, listed under w, counted
    assert claim is not None
    assert {first.id, claim.id} < set(ids)
    run = await store.get(claim.id)
    assert (run.status, run.attempts, run.lease_owner) == (RunStatus.PROCESSING, 1, "w")
    assert (await store.counts())["processing"] == 2
    assert await admin.zscore(store.keys.leases, claim.id) is not None
    held = await admin.hget(store.keys.worker_runs, "w")
    assert held.decode().split(",") == [first.id, claim.id]
    assert int(await admin.hget(store.keys.counters, "claimed:queued")) == 2


async def snapshot(admin: Any, prefix: str) -> dict[bytes, bytes]:
    """Every key of ``prefix`` as DUMP serializes it (value and type; no TTL)."""
    return {key: await admin.dump(key) async for key in admin.scan_iter(match=f"{prefix}*")}


@pytest.mark.parametrize("head", ["queued", "older_version", "hash_gone", "dead_owner_lease"])
async def test_out_of_memory_refuses_the_whole_claim(
    admin: Any, settings: Settings, head: str
) -> None:
    """§7: Redis lets a script that has written finish, so the claim's first write must
    be one OOM refuses (its ZREMs come after): else it would take or reclaim runs while the
    owners' heartbeats and renewals are refused. Each kind of head the walk can meet."""
    s = settings.model_copy(update={"max_attempts": 3})
    store = RunStore(admin, s)
    first = (await store.enqueue(make_request(1), at_ms=T0)).run_id
    version = "memory_v0" if head == "older_version" else None
    request = make_request(2, hour=-1, prompt_version=version)
    second = (await store.enqueue(request, at_ms=T0)).run_id
    third = (await store.enqueue(make_request(3, hour=-2), at_ms=T0)).run_id
    assert first
    assert second
    assert third
    held = await store.claim("dead", at_ms=T0)  # the first: learns the heads
    assert held is not None
    assert held.id == first
    later = T0 + 10
    if head == "hash_gone":
        await admin.delete(store.keys.run(second))
    elif head == "dead_owner_lease":
        later = T0 + int(s.lease_seconds * 1000) + store.heartbeat_ttl_ms + 1
        await store.heartbeat("w", [], concurrency=1, at_ms=later - 1)  # the store answered
        store._claim_heads = LaneHeads([first], [second])
    before = await snapshot(admin, s.key_prefix)
    await admin.config_set("maxmemory-policy", "noeviction")
    await admin.config_set("maxmemory", "1")
    try:
        with pytest.raises(OutOfMemoryError):
            await store.claim("w", at_ms=later)
    finally:
        await admin.config_set("maxmemory", "0")
    assert await snapshot(admin, s.key_prefix) == before
    # memory back: the same claim goes through
    expected = {"queued": second, "dead_owner_lease": first}.get(head, third)
    claim = await store.claim("w", at_ms=later)
    assert claim is not None
    assert claim.id == expected


async def test_a_worker_id_cannot_be_a_pulse_field(admin: Any, settings: Settings) -> None:
    """The pulse shares ``workers:runs`` with the owners' held runs (``lua/pulse.lua``)."""
    store = RunStore(admin, settings)
    with pytest.raises(ValueError):
        await store.heartbeat("pulse:at", ["r1"], concurrency=1, at_ms=T0)
    with pytest.raises(ValueError):
        await store.claim("pulse:since", at_ms=T0)
    assert await admin.exists(store.keys.worker_runs) == 0


@pytest.mark.parametrize("older", [0, 1, 2, 3, 7])
async def test_the_heads_answered_are_the_lanes_first_ids_as_the_script_ended(
    admin: Any, settings: Settings, older: int
) -> None:
    """The script reads each lane once (its first peek + 1 ids) and walks and answers from
    that view: past it (more heads skipped than it holds) it reads the lane again. The
    heads it answers are the lanes' first ``peek`` ids after the claim, plus the run."""
    store, peek = RunStore(admin, settings), 2
    ids = []
    for i in range(older + 4):
        version = "memory_v0" if i < older else None
        request = make_request(i + 1, hour=-i, prompt_version=version)
        rid = (await store.enqueue(request, at_ms=T0)).run_id
        assert rid
        ids.append(rid)
    for due, rid in enumerate(ids[-2:]):  # two due retries
        await admin.zrem(store.keys.queued, rid)
        await admin.zadd(store.keys.retry, {rid: T0 - 5 + due})
    fields, _, skipped, _, again, heads = await store._claim_once(
        "w", "tok", T0, peek, LaneHeads([], ids), loops=64
    )
    got = {as_text(fields[i]): as_text(fields[i + 1]) for i in range(0, len(fields), 2)}
    retry = [as_text(i) for i in await admin.zrange(store.keys.retry, 0, peek - 1)]
    queued = [as_text(i) for i in await admin.zrange(store.keys.queued, 0, peek - 1)]
    assert (got["id"], int(again)) == (ids[-2], 0)  # due retries come before queued runs
    assert [as_text(i) for i in skipped] == []
    assert [[as_text(i) for i in lane] for lane in heads] == [[], [*retry, *queued, ids[-2]]]
    # the queued lane: the older runs are skipped, in order, by the next claims
    claim = await store.claim_detailed("w", at_ms=T0)
    assert claim.run is not None
    assert (claim.run.id, claim.skipped) == (ids[-1], [])
    store._claim_heads = LaneHeads([], ids)
    claim = await store.claim_detailed("w", at_ms=T0)
    assert claim.run is not None
    assert (claim.run.id, claim.skipped) == (ids[older], ids[:older])
    left = [as_text(i) for i in await admin.zrange(store.keys.queued, 0, -1)]
    assert left == ids[older + 1 : -2]
