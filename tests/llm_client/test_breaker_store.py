"""§5 breakers in Redis: the Lua store against the real server, and against the pure policy."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from llm_client import BreakerConfig, BreakerStore, Circuit, Outcome, success_counter
from llm_client._breaker import model as policy
from llm_client._breaker.model import BreakerState, Permit, Transition
from llm_client._breaker.store import STATE_TTL_MS
from llm_client._gateway.target import Report
from memory_worker.keys import Keys
from tests.support.harness import eventually
from tests.support.replies import answer

T0 = 1_700_000_000_000
TARGET = "farm/memory-extractor"


def make_store(redis: Redis, key_prefix: str, config: BreakerConfig | None = None) -> BreakerStore:
    return BreakerStore(redis, Keys(key_prefix), config or BreakerConfig())


async def charge(
    store: BreakerStore, n: int, now: int, target: str = TARGET
) -> list[Transition | None]:
    transitions = []
    for i in range(n):
        permit = await store.acquire(target, lease_seconds=60, now_ms=now + i)
        assert permit is not None
        transitions.append(await store.record(target, permit, Outcome.FAILURE, now_ms=now + i))
    return transitions


async def test_five_charged_failures_open_the_shared_breaker(redis: Redis, key_prefix: str) -> None:
    store = make_store(redis, key_prefix)
    transitions = await charge(store, 5, T0)
    assert transitions == [None, None, None, None, Transition.OPENED]
    other_worker = make_store(redis, key_prefix)  # another process would build the same
    seen = await other_worker.view(TARGET, now_ms=T0 + 10)
    assert seen.circuit is Circuit.OPEN
    assert seen.consecutive_failures == 5
    assert seen.trips == 1
    assert seen.opened_at_ms == T0 + 4
    assert seen.cooldown_remaining_s == pytest.approx(29.994)
    assert seen.window_failures == 5
    assert await other_worker.acquire(TARGET, lease_seconds=60, now_ms=T0 + 10) is None


async def test_half_open_admits_exactly_one_of_twenty_concurrent_callers(
    redis: Redis, key_prefix: str
) -> None:
    store = make_store(redis, key_prefix)
    await charge(store, 5, T0)
    after = T0 + 4 + 30_000
    permits = await asyncio.gather(
        *(store.acquire(TARGET, lease_seconds=60, now_ms=after) for _ in range(20))
    )
    granted = [p for p in permits if p is not None]
    assert len(granted) == 1
    assert granted[0].probe
    # Probe failure doubles the cooldown.
    transition = await store.record(TARGET, granted[0], Outcome.FAILURE, now_ms=after + 1)
    assert transition is Transition.REOPENED
    reopened = await store.view(TARGET, now_ms=after + 1)
    assert reopened.circuit is Circuit.OPEN
    assert reopened.trips == 2
    assert reopened.cooldown_remaining_s == pytest.approx(60.0)
    # Next probe after the longer cooldown; success closes and resets.
    probe = await store.acquire(TARGET, lease_seconds=60, now_ms=after + 1 + 60_000)
    assert probe is not None
    transition = await store.record(TARGET, probe, Outcome.SUCCESS, now_ms=after + 60_002)
    assert transition is Transition.CLOSED
    closed = await store.view(TARGET, now_ms=after + 60_002)
    assert closed.circuit is Circuit.CLOSED
    assert (closed.trips, closed.consecutive_failures, closed.window_calls) == (0, 0, 0)


async def test_stale_permit_is_ignored_by_the_store(redis: Redis, key_prefix: str) -> None:
    store = make_store(redis, key_prefix)
    old = await store.acquire(TARGET, lease_seconds=60, now_ms=T0)
    assert old is not None
    await charge(store, 5, T0)
    probe = await store.acquire(TARGET, lease_seconds=60, now_ms=T0 + 40_000)
    assert probe is not None
    assert await store.record(TARGET, old, Outcome.SUCCESS, now_ms=T0 + 40_001) is None
    assert (await store.view(TARGET, now_ms=T0 + 40_001)).probe_in_flight


async def test_failopen_permit_is_one_per_interval_and_respects_a_live_probe(
    redis: Redis, key_prefix: str
) -> None:
    store = make_store(redis, key_prefix)
    await charge(store, 5, T0)
    during = T0 + 1000  # inside the 30 s cooldown
    assert await store.failopen_free("memory_extraction")
    results = await asyncio.gather(
        *(
            store.acquire_failopen(
                TARGET,
                "memory_extraction",
                lease_seconds=60,
                interval_seconds=30,
                now_ms=during,
            )
            for _ in range(10)
        )
    )
    granted = [(p, taken) for p, taken in results if p is not None]
    assert len(granted) == 1
    permit, taken = granted[0]
    assert permit.probe
    assert taken
    assert not await store.failopen_free("memory_extraction")
    # The probe releases without a verdict; the fail-open permit still blocks this interval.
    await store.record(TARGET, permit, Outcome.NOT_CHARGED, now_ms=during + 1)
    again, _ = await store.acquire_failopen(
        TARGET, "memory_extraction", lease_seconds=60, interval_seconds=30, now_ms=during + 2
    )
    assert again is None


async def test_failopen_does_not_take_the_permit_when_a_probe_is_live(
    redis: Redis, key_prefix: str
) -> None:
    store = make_store(redis, key_prefix)
    await charge(store, 5, T0)
    probe = await store.acquire(TARGET, lease_seconds=60, now_ms=T0 + 31_000)
    assert probe is not None
    permit, taken = await store.acquire_failopen(
        TARGET, "embedding", lease_seconds=60, interval_seconds=30, now_ms=T0 + 31_001
    )
    assert permit is None
    assert not taken
    assert await store.failopen_free("embedding")


async def test_a_half_open_probe_is_the_interval_s_failopen_probe(
    redis: Redis, key_prefix: str
) -> None:
    store = make_store(redis, key_prefix)
    await charge(store, 5, T0)
    probe = await store.acquire(
        TARGET,
        lease_seconds=60,
        workflow="memory_extraction",
        interval_seconds=15,
        now_ms=T0 + 31_000,
    )
    assert probe is not None
    assert not await store.failopen_free("memory_extraction")
    await store.record(TARGET, probe, Outcome.FAILURE, now_ms=T0 + 31_010)  # fast failure
    extra, _ = await store.acquire_failopen(
        TARGET, "memory_extraction", lease_seconds=60, interval_seconds=15, now_ms=T0 + 31_020
    )
    assert extra is None  # no fail-open probe on top of the half-open one


async def test_reset_and_list(redis: Redis, key_prefix: str) -> None:
    store = make_store(redis, key_prefix)
    await charge(store, 5, T0)
    await charge(store, 2, T0, target="other/model")
    listed = await store.list(["never/seen"])
    assert [v.target for v in listed] == ["never/seen", "farm/memory-extractor", "other/model"]
    assert listed[0].circuit is Circuit.CLOSED
    after = await store.reset(TARGET)
    assert after.circuit is Circuit.CLOSED
    assert after.trips == 0
    assert after.window_calls == 0
    assert json.dumps(after.as_dict())


# --- the Lua store is a faithful translation of the pure policy ------------------------------


async def test_steady_successes_keep_the_window_bounded_and_the_rate_rule_exact(
    redis: Redis, key_prefix: str
) -> None:
    """Successes prune the window lazily (every 16th call): the stored window never holds
    more than the window's calls plus 16, and a failure still counts only in-window calls."""
    config = BreakerConfig(rate_min_calls=4, rate_window_seconds=1.0, rate_threshold=0.5)
    store = make_store(redis, key_prefix, config)
    window_key = Keys(key_prefix).breaker_window(TARGET)
    now = T0
    for _ in range(300):  # one success every 100 ms: 10 calls in any 1 s window
        now += 100
        permit = await store.acquire(TARGET, lease_seconds=60, now_ms=now)
        assert permit is not None
        await store.record(TARGET, permit, Outcome.SUCCESS, now_ms=now)
        assert await redis.zcard(window_key) <= 10 + 16
    # 3 failures against the 10 in-window successes (stale ones would dilute the same):
    # 3 of 13 is below the rate; the window then holds exactly the in-window calls
    transitions = await charge(store, 3, now + 1)
    assert transitions == [None, None, None]
    seen = await store.view(TARGET, now_ms=now + 3)
    assert (seen.window_calls, seen.window_failures) == (13, 3)
    assert await redis.zcard(window_key) == 13


# --- what a record costs the server, and the TTLs it still keeps ---------------------------


async def inner_commands(admin: Any, call: Awaitable[object]) -> Counter[str]:
    """The commands ``call`` makes the server run in steady state (``INFO commandstats``
    delta: a script's inner commands count), the measuring ``INFO`` left out. A script's
    first use on a server — an ``EVALSHA`` answered ``NOSCRIPT``, then ``SCRIPT LOAD`` — is
    a one-time cost that depends on which test ran first on the shared server, so failed
    calls and ``SCRIPT`` are left out too."""

    async def calls() -> Counter[str]:
        stats = await admin.info("commandstats")
        return Counter(
            {
                name.removeprefix("cmdstat_"): int(v["calls"]) - int(v.get("failed_calls", 0))
                for name, v in stats.items()
            }
        )

    before = await calls()
    await call
    spent = await calls() - before
    del spent["info"]
    del spent["script"]
    return spent


async def test_a_closed_success_costs_evalsha_hmget_hset_and_zadd(admin: Any) -> None:
    """The hot path (a closed breaker's success) sets no TTL; the first record of a
    hash, every 16th call (lazy prune + window TTL) and one call a window later do. The
    one HSET carries the call's sequence number, its latency and its tokens together."""
    keys = Keys("cost:")
    store = BreakerStore(admin, keys, BreakerConfig(), success_counter=success_counter(keys))
    warm = await store.acquire("warm/up", lease_seconds=60, now_ms=T0)
    assert warm is not None
    await store.record("warm/up", warm, Outcome.SUCCESS, now_ms=T0)  # scripts loaded
    permit = await store.acquire(TARGET, lease_seconds=60, now_ms=T0)
    assert permit is not None
    # with the preflight's TYPE of the three keys a record may write (before its first write)
    hot = Counter({"evalsha": 1, "hmget": 1, "hset": 1, "zadd": 1, "type": 3})
    ttls = Counter({"pexpire": 2})
    now = T0
    for seq in range(1, 40):
        now += 100
        count = seq % 2 == 0  # with the attempt counter: one HINCRBY more
        report = Report(elapsed_ms=seq * 37, tokens=seq % 3)
        spent = await inner_commands(
            admin,
            store.record(TARGET, permit, Outcome.SUCCESS, now_ms=now, count=count, report=report),
        )
        expected = hot + Counter({"hincrby": int(count), "type": int(count)})  # its key too
        if seq == 1:
            expected += ttls  # a new hash: both keys get their TTLs
        elif seq % 16 == 0:
            expected += Counter({"zremrangebyscore": 1, "pexpire": 1})
        assert spent == expected, seq
    window_ms = store.config.rate_window_ms
    spent = await inner_commands(
        admin, store.record(TARGET, permit, Outcome.SUCCESS, now_ms=T0 + 100 + window_ms)
    )
    assert spent == hot + ttls  # the TTLs were set a window ago: set again
    spent = await inner_commands(
        admin, store.record(TARGET, permit, Outcome.SUCCESS, now_ms=T0 + 200 + window_ms)
    )
    assert spent == hot
    # A worker whose clock is a window behind the mark's sets them too (it cannot tell
    # how long ago the mark was written).
    spent = await inner_commands(
        admin, store.record(TARGET, permit, Outcome.SUCCESS, now_ms=T0 + 100)
    )
    assert spent == hot + ttls


async def test_every_entry_outlives_its_window_and_an_idle_window_disappears(
    redis: Redis, key_prefix: str
) -> None:
    """Real clock, sparse and dense calls: after every record the window expires no earlier
    than the entry just added leaves the window, and the hash lives a week past it; once
    calls stop, the window disappears on its own (margin 0 here to see it happen)."""
    config = BreakerConfig(rate_window_seconds=0.2)
    store = BreakerStore(redis, Keys(key_prefix), config, window_ttl_margin_ms=0)
    hash_key = Keys(key_prefix).breaker(TARGET)
    window_key = Keys(key_prefix).breaker_window(TARGET)
    rng = random.Random(3)
    for i in range(30):
        await asyncio.sleep(rng.choice([0, 0, 0.03, 0.12, 0.25]))
        now = int(time.time() * 1000)
        permit = await store.acquire(TARGET, lease_seconds=60, now_ms=now)
        assert permit is not None
        outcome = Outcome.FAILURE if i in (7, 8) else Outcome.SUCCESS
        assert await store.record(TARGET, permit, outcome, now_ms=now) is None
        assert await answer(redis.pexpiretime(window_key)) >= now + config.rate_window_ms, i
        assert await answer(redis.pexpiretime(hash_key)) >= now + STATE_TTL_MS, i

    async def window_gone() -> bool:
        left: int = await answer(redis.exists(window_key))
        return left == 0

    await eventually(window_gone, timeout=5)
    assert await redis.exists(hash_key)


async def test_a_window_deleted_under_a_fresh_ttl_mark_gets_a_ttl_within_16_calls(
    redis: Redis, key_prefix: str
) -> None:
    store = make_store(redis, key_prefix)
    window_key = Keys(key_prefix).breaker_window(TARGET)
    permit = await store.acquire(TARGET, lease_seconds=60, now_ms=T0)
    assert permit is not None
    await store.record(TARGET, permit, Outcome.SUCCESS, now_ms=T0)  # seq 1: TTLs set
    await redis.delete(window_key)  # e.g. an operator; the hash still says "TTLs set"
    without_ttl = 0
    for i in range(1, 16):  # seq 2..16, all within one window of the mark
        await store.record(TARGET, permit, Outcome.SUCCESS, now_ms=T0 + i)
        without_ttl += await redis.pttl(window_key) == -1
    assert 0 < without_ttl < 15
    assert await redis.pttl(window_key) > 0


async def assert_keys_have_ttls(redis: Redis, *names: str) -> None:
    for name in names:
        assert await redis.pttl(name) != -1, name  # -2: absent, else a TTL


def pruned(state: BreakerState, now: int, config: BreakerConfig) -> BreakerState:
    """``state`` with its window pruned at ``now`` (and sorted: the window is a multiset)."""
    return dataclasses.replace(state, window=tuple(sorted(policy.prune(state.window, now, config))))


@pytest.mark.parametrize("seed", range(12))
async def test_lua_store_matches_pure_policy_on_random_sequences(
    redis: Redis, key_prefix: str, seed: int
) -> None:
    rng = random.Random(seed)
    config = BreakerConfig(
        failure_threshold=rng.choice([2, 3, 5]),
        rate_min_calls=rng.choice([4, 6, 20]),
        rate_window_seconds=rng.choice([2.0, 10.0, 120.0]),
        rate_threshold=rng.choice([0.5, 0.8]),
        cooldown_seconds=rng.choice([0.5, 3.0]),
        cooldown_max_seconds=rng.choice([2.0, 20.0]),
    )
    store = make_store(redis, key_prefix, config)
    state, now = BreakerState(), T0
    permits: list[Permit] = []
    for _ in range(250):
        now += rng.choice([0, 1, 50, 400, 1500, 4000])
        op = rng.random()
        if op < 0.45:
            force = rng.random() < 0.1
            lease = rng.choice([100, 2000])
            state, expected = policy.acquire(state, now, lease_ms=lease, force=force)
            if force:
                got, _ = await store.acquire_failopen(
                    TARGET,
                    f"wf{len(permits)}-{now}",  # a fresh permit key: only breaker rules decide
                    lease_seconds=lease / 1000,
                    interval_seconds=60,
                    now_ms=now,
                )
            else:
                got = await store.acquire(TARGET, lease_seconds=lease / 1000, now_ms=now)
            assert got == expected
            if got is not None:
                permits.append(got)
        elif op < 0.6 and permits:
            # A holder renews its lease while its call runs (§5).
            permit = rng.choice(permits)
            lease = rng.choice([100, 2000, 30_000])
            state, expected_renewed = policy.renew(state, permit.generation, now, lease_ms=lease)
            renewed = await store.renew(TARGET, permit, lease_seconds=lease / 1000, now_ms=now)
            assert renewed == (expected_renewed and permit.probe)
        elif op < 0.97 and permits:
            permit = permits.pop(rng.randrange(len(permits)))
            outcome = rng.choices(list(Outcome), weights=[3, 6, 1, 1])[0]
            state, expected_transition = policy.record(
                state, permit.generation, outcome, now, config
            )
            got_transition = await store.record(TARGET, permit, outcome, now_ms=now)
            assert got_transition == expected_transition
        else:
            state = policy.reset(state)
            await store.reset(TARGET)
        stored = await store.state(TARGET)
        assert pruned(stored, now, config) == pruned(state, now, config)
        await assert_keys_have_ttls(
            redis, Keys(key_prefix).breaker(TARGET), Keys(key_prefix).breaker_window(TARGET)
        )
        assert await store.view(TARGET, now_ms=now) == policy.view(TARGET, state, now, config)


# --- three worker processes share one breaker -----------------------------------------------

WORKER = textwrap.dedent(
    """
    import asyncio, json, sys
    from llm_client._breaker.model import BreakerConfig, Outcome
    from llm_client._breaker.store import BreakerStore
    from memory_worker.storage.connections import client_from_url
    from memory_worker.keys import Keys

    async def main(url, prefix, action, n):
        redis = client_from_url(url)
        store = BreakerStore(redis, Keys(prefix), BreakerConfig())
        target = "farm/memory-extractor"
        if action == "charge":
            for _ in range(n):
                permit = await store.acquire(target, lease_seconds=60)
                if permit is not None:
                    await store.record(target, permit, Outcome.FAILURE)
                    await asyncio.sleep(0.01)
        elif action == "reset":
            await store.reset(target)
        print(json.dumps((await store.view(target)).as_dict()))
        await redis.aclose()

    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
    """
)


def run_workers(redis_url: str, key_prefix: str, actions: list[tuple[str, int]]) -> list[dict]:  # type: ignore[type-arg]
    root = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, redis_url, key_prefix, action, str(n)],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for action, n in actions
    ]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    return outputs


@pytest.mark.slow
async def test_three_worker_processes_share_breaker_state(redis_url: str, key_prefix: str) -> None:
    # Each process charges two failures: the fleet's five-failure threshold is crossed together.
    charged = await asyncio.to_thread(
        run_workers, redis_url, key_prefix, [("charge", 2), ("charge", 2), ("charge", 2)]
    )
    assert any(v["consecutive_failures"] >= 2 for v in charged)
    seen = await asyncio.to_thread(
        run_workers, redis_url, key_prefix, [("read", 0), ("read", 0), ("read", 0)]
    )
    assert [v["state"] for v in seen] == ["open", "open", "open"]
    assert {v["consecutive_failures"] for v in seen} == {5}  # the late sixth report was stale
    assert {v["trips"] for v in seen} == {1}
    reset = await asyncio.to_thread(run_workers, redis_url, key_prefix, [("reset", 0)])
    assert reset[0]["state"] == "closed"
    seen = await asyncio.to_thread(run_workers, redis_url, key_prefix, [("read", 0), ("read", 0)])
    assert [v["state"] for v in seen] == ["closed", "closed"]


async def test_the_clis_breaker_views_are_json_documents(redis: Redis, key_prefix: str) -> None:
    """``breakers list --json`` / ``breakers reset``: the given targets plus every stored one,
    each view a JSON document; a reset closes and cleans."""
    store = make_store(redis, key_prefix)
    await charge(store, 5, T0)
    listed = [view.as_dict() for view in await store.list(["routed/but-never-called"])]
    assert [b["target"] for b in listed] == ["routed/but-never-called", TARGET]
    assert listed[1]["state"] in ("open", "half_open")
    assert json.loads(json.dumps(listed)) == listed
    after = (await store.reset(TARGET)).as_dict()
    assert (after["state"], after["consecutive_failures"]) == ("closed", 0)
