"""The per-target scripts against their pure twins (§3, §5, §6): breaker and gate together.

Random sequences of admissions, begins, records, renewals and resets — with caps,
Retry-After cooling, latencies and tokens — run through the Lua store and through
``llm_client._gateway.target``; after every step the stored breaker, gate and slots must
equal the model's. Then what the gate costs the server: nothing on an uncapped target.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter
from typing import Any

import pytest
from redis.asyncio import Redis

from llm_client import BreakerConfig, BreakerStore, GatewayConfig, Outcome, TargetLimits
from llm_client._breaker import model as policy
from llm_client._breaker.model import Permit
from llm_client._gateway import target as twin
from llm_client._gateway.model import Gate, Refusal, live_slots
from llm_client._gateway.target import Ask, Report, TargetState
from memory_worker.keys import Keys
from tests.llm_client.test_breaker_store import inner_commands

T0 = 1_700_000_000_000
TARGETS = ["farm/a", "farm/b", "farm/c"]


def scripted_slots(store: BreakerStore) -> None:
    """Slot tokens s1, s2, … so the model can name the same ones."""
    store._slots = (f"s{n}" for n in itertools.count(1))


def comparable(state: TargetState, now: int, config: BreakerConfig) -> TargetState:
    """Time-pruned windows and live slots (both are pruned lazily by time)."""
    breaker = dataclasses.replace(
        state.breaker, window=tuple(sorted(policy.prune(state.breaker.window, now, config)))
    )
    gate = dataclasses.replace(state.gate, slots=live_slots(state.gate.slots, now))
    return TargetState(breaker, gate)


def random_limits(rng: random.Random) -> TargetLimits:
    return TargetLimits(
        max_in_flight=rng.choice([None, 1, 2]),
        requests_per_minute=rng.choice([None, 30, 600, 6000]),
        tokens_per_day=rng.choice([None, 50, 10**6]),
    )


def random_report(rng: random.Random) -> Report:
    return Report(
        cool_ms=rng.choice([0, 0, 0, 500, 5_000]),
        elapsed_ms=rng.choice([None, 0, 40, 900, 70_000, 400_000]),
        tokens=rng.choice([0, 7, 40]),
        window_ms=2_000,
    )


class Pair:
    """The store and the model, stepped together."""

    def __init__(self, store: BreakerStore, config: BreakerConfig, rng: random.Random) -> None:
        self.store, self.config, self.rng = store, config, rng
        self.model = {t: TargetState() for t in TARGETS}
        self.limits = {t: random_limits(rng) for t in TARGETS}
        self.permits: list[tuple[str, Permit]] = []
        self.slot = 0

    def ask(self, lease: int, **kw: Any) -> Ask:
        self.slot += 1
        return Ask(lease_ms=lease, slot=f"s{self.slot}", slot_lease_ms=lease, burst=2, **kw)

    async def admit(self, now: int) -> None:
        target = self.rng.choice(TARGETS)
        lease = self.rng.choice([100, 2000])
        force = self.rng.random() < 0.1
        ask = self.ask(lease, force=force, failopen_free=True)
        limits = self.limits[target]
        self.model[target], expected, admission, _ = twin.acquire(
            self.model[target], limits, now, ask
        )
        if force:  # a fresh fail-open key each time: only the target's rules decide
            got, _ = await self.store.acquire_failopen(
                target,
                f"wf-{self.slot}",
                lease_seconds=lease / 1000,
                interval_seconds=60,
                now_ms=now,
                limits=limits,
            )
            assert got == expected
        else:
            admitted = await self.store.admit(
                target, lease_seconds=lease / 1000, now_ms=now, limits=limits
            )
            assert (admitted.permit, admitted.refusal) == (expected, admission.refusal)
            assert admitted.ready_ms == admission.ready_ms
        if expected is not None:
            self.permits.append((target, expected))

    async def begin(self, now: int) -> None:
        order = self.rng.sample(TARGETS, 3)
        probes = self.rng.random() < 0.7
        lease = self.rng.choice([100, 2000])
        ask = self.ask(lease)
        states, index, permit, refusals = twin.begin(
            [self.model[t] for t in order], [self.limits[t] for t in order], now, ask, probes=probes
        )
        for name, state in zip(order, states, strict=True):
            self.model[name] = state
        begun = await self.store.begin(
            order,
            f"wf-begin-{self.slot}",
            lease_seconds=lease / 1000,
            interval_seconds=0,
            probes=probes,
            now_ms=now,
            limits=[self.limits[t] for t in order],
        )
        assert (begun.index, begun.permit, list(begun.refusals)) == (index, permit, refusals)
        assert list(begun.latency) == [self.model[t].gate.latency for t in order]
        assert list(begun.cool_until_ms) == [self.model[t].gate.cool_until_ms for t in order]
        if permit is not None and index is not None:
            self.permits.append((order[index], permit))

    async def record(self, now: int) -> None:
        target, permit = self.permits.pop(self.rng.randrange(len(self.permits)))
        outcome = self.rng.choices(list(Outcome), weights=[4, 5, 2, 1])[0]
        report = random_report(self.rng)
        self.model[target], expected = twin.record(
            self.model[target], permit, outcome, now, self.config, report
        )
        got = await self.store.record(target, permit, outcome, now_ms=now, report=report)
        assert got == expected

    async def renew(self, now: int) -> None:
        target, permit = self.rng.choice(self.permits)
        lease = self.rng.choice([100, 2000, 30_000])
        self.model[target], expected = twin.renew(self.model[target], permit, now, lease)
        got = await self.store.renew(target, permit, lease_seconds=lease / 1000, now_ms=now)
        assert got == expected

    async def reset(self) -> None:
        target = self.rng.choice(TARGETS)
        self.model[target] = twin.reset(self.model[target])
        await self.store.reset(target)

    async def compare(self, now: int) -> None:
        for target in TARGETS:
            stored = await self.store.target_state(target)
            assert comparable(stored, now, self.config) == comparable(
                self.model[target], now, self.config
            ), target


@pytest.mark.parametrize("seed", range(10))
async def test_lua_matches_the_pure_twins_on_random_sequences(
    redis: Redis, key_prefix: str, seed: int
) -> None:
    rng = random.Random(seed)
    config = BreakerConfig(
        failure_threshold=rng.choice([2, 3]),
        rate_min_calls=rng.choice([4, 20]),
        rate_window_seconds=rng.choice([2.0, 10.0]),
        cooldown_seconds=rng.choice([0.5, 3.0]),
        cooldown_max_seconds=rng.choice([2.0, 20.0]),
    )
    gateway = GatewayConfig(latency_window_seconds=2.0, rate_burst=2)
    store = BreakerStore(redis, Keys(key_prefix), config, gateway=gateway)
    scripted_slots(store)
    pair = Pair(store, config, rng)
    now = T0
    for _ in range(220):
        now += rng.choice([0, 1, 50, 400, 1500, 4000])
        op = rng.random()
        if op < 0.3:
            await pair.admit(now)
        elif op < 0.45:
            await pair.begin(now)
        elif op < 0.55 and pair.permits:
            await pair.renew(now)
        elif op < 0.97 and pair.permits:
            await pair.record(now)
        elif op >= 0.97:
            await pair.reset()
        await pair.compare(now)


async def test_begin_reports_refusals_and_the_latency_it_read(
    redis: Redis, key_prefix: str
) -> None:
    store = BreakerStore(redis, Keys(key_prefix), BreakerConfig())
    a, b, c = TARGETS
    p = await store.acquire(a, lease_seconds=1, now_ms=T0)
    assert p is not None
    await store.record(a, p, Outcome.NEUTRAL, now_ms=T0, report=Report(cool_ms=30_000))
    p = await store.acquire(b, lease_seconds=1, now_ms=T0)
    assert p is not None
    await store.record(b, p, Outcome.SUCCESS, now_ms=T0, report=Report(elapsed_ms=250))
    capped = TargetLimits(max_in_flight=1)
    held = await store.admit(b, lease_seconds=30, now_ms=T0, limits=capped)
    assert held.permit is not None
    assert held.permit.slot is not None
    begun = await store.begin(
        [a, b, c],
        "wf",
        lease_seconds=30,
        interval_seconds=0,
        now_ms=T0 + 1,
        limits=[TargetLimits(), capped, TargetLimits()],
    )
    assert begun.index == 2
    assert begun.refusals == (Refusal.COOLING, Refusal.IN_FLIGHT, None)
    assert begun.cool_until_ms == (T0 + 30_000, 0, 0)
    assert begun.latency[1].cur_sum == 250
    assert begun.latency[1].cur_count == 1


async def test_the_gate_costs_an_uncapped_target_nothing(admin: Any) -> None:
    """Uncapped: begin is one HMGET per target (as without the gate), a success's record
    HMGET + HSET + ZADD. Capped: the slot set and the rate's field, only there."""
    keys = Keys("gatecost:")
    store = BreakerStore(admin, keys, BreakerConfig())
    targets = ["cost/a", "cost/b"]
    warm = await store.begin(targets, "wf", lease_seconds=30, interval_seconds=15, now_ms=T0)
    assert warm.permit is not None
    await store.record(targets[0], warm.permit, Outcome.SUCCESS, now_ms=T0)  # TTLs set
    spent = await inner_commands(
        admin, store.begin(targets, "wf", lease_seconds=30, interval_seconds=15, now_ms=T0 + 1)
    )
    assert spent == Counter({"evalsha": 1, "hmget": 2})
    spent = await inner_commands(
        admin,
        store.record(
            targets[0], warm.permit, Outcome.SUCCESS, now_ms=T0 + 2, report=Report(elapsed_ms=9)
        ),
    )
    # and its preflight's TYPE of the keys it may write (corrupt data refused before a write)
    assert spent == Counter({"evalsha": 1, "hmget": 1, "hset": 1, "zadd": 1, "type": 3})
    capped = [TargetLimits(max_in_flight=2, requests_per_minute=600), TargetLimits()]
    spent = await inner_commands(
        admin,
        store.begin(
            targets, "wf", lease_seconds=30, interval_seconds=15, now_ms=T0 + 3, limits=capped
        ),
    )
    assert spent == Counter(
        {
            "evalsha": 1,
            "hmget": 2,
            "zremrangebyscore": 1,
            "zcard": 1,
            "zadd": 1,
            "pexpire": 2,
            "hset": 1,
        }
    )


async def test_a_slot_outlives_nothing_a_dead_holder_left(redis: Redis, key_prefix: str) -> None:
    """A worker killed mid-call leaves its slot; it frees itself when its lease lapses."""
    store = BreakerStore(redis, Keys(key_prefix), BreakerConfig())
    one = TargetLimits(max_in_flight=1)
    held = await store.admit("farm/a", lease_seconds=5, now_ms=T0, limits=one)
    assert held.permit is not None
    refused = await store.admit("farm/a", lease_seconds=5, now_ms=T0 + 4_999, limits=one)
    assert refused.refusal is Refusal.IN_FLIGHT
    freed = await store.admit("farm/a", lease_seconds=5, now_ms=T0 + 5_000, limits=one)
    assert freed.permit is not None
    state = await store.target_state("farm/a")
    assert list(state.gate.slots) == [freed.permit.slot]
    assert Gate() != state.gate


def test_slot_tokens_share_their_stores_prefix_and_count_up(redis: Redis, key_prefix: str) -> None:
    """A slot token is the store's prefix (drawn once) and a count: unique across stores
    and attempts without drawing randomness per attempt."""
    one = BreakerStore(redis, Keys(key_prefix), BreakerConfig())
    other = BreakerStore(redis, Keys(key_prefix), BreakerConfig())
    tokens = [one._slot() for _ in range(3)]
    prefixes = {token.split(":")[0] for token in tokens}
    assert len(prefixes) == 1
    assert [token.split(":")[1] for token in tokens] == ["1", "2", "3"]
    assert other._slot().split(":")[0] not in prefixes
