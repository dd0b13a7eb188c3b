"""The outlier store's scripts against their pure twin (§5), on a real Valkey: random
sequences of counts, ejections and resets through ``lua/outlier_*.lua`` and through
``llm_client._outlier.model``; after every step the stored state, the windows read and
the ejections made must be the model's."""

from __future__ import annotations

import random

import pytest
from redis.asyncio import Redis

from llm_client import EjectionConfig, OutlierStore
from llm_client._outlier import model
from llm_client._outlier.model import Health, Mode, Verdict
from memory_worker.keys import Keys

T0 = 1_700_000_000_000
TARGETS = ["farm/a", "farm/b", "farm/c", "farm/d"]


@pytest.mark.parametrize("seed", range(8))
async def test_lua_matches_the_pure_twin_on_random_sequences(
    redis: Redis, key_prefix: str, seed: int
) -> None:
    rng = random.Random(seed)
    cfg = EjectionConfig(
        window_seconds=rng.choice([3.0, 6.0]),
        buckets=rng.choice([3, 6]),
        base_ejection_seconds=rng.choice([0.5, 2.0]),
        max_ejection_seconds=rng.choice([1.0, 5.0]),
        max_ejection_share=rng.choice([0.25, 0.5, 1.0]),
    )
    store = OutlierStore(redis, Keys(key_prefix), cfg)
    twin = {t: Health() for t in TARGETS}
    now = T0
    for _ in range(200):
        now += rng.choice([0, 1, 200, 700, 1500, 4000])
        op = rng.random()
        if op < 0.6:
            counts = {t: (rng.randint(0, 3), rng.randint(0, 3)) for t in rng.sample(TARGETS, 2)}
            read = rng.sample(TARGETS, rng.randint(1, 4))
            tallies = await store.sync(read, counts, now_ms=now)
            for target, (ok, bad) in counts.items():
                if target in read:
                    twin[target] = model.add(twin[target], ok, bad, now, cfg)
            assert tallies == [model.tally(t, twin[t], now, cfg) for t in read]
        elif op < 0.95:
            tier = rng.sample(TARGETS, rng.randint(1, 4))
            wanted = rng.sample(range(len(tier)), rng.randint(1, len(tier)))
            verdicts = [Verdict(tier[i], Mode.FAILURE_PERCENTAGE, 0, 1) for i in wanted]
            ejected = await store.eject(tier, verdicts, now_ms=now)
            healths, done = model.eject([twin[t] for t in tier], wanted, now, cfg)
            for target, health in zip(tier, healths, strict=True):
                twin[target] = health
            assert [(e.target, e.until_ms, e.times) for e in ejected] == [
                (tier[i], until, times) for i, until, times in done
            ]
        else:
            target = rng.choice(TARGETS)
            await store.reset(target)
            twin[target] = model.reset(twin[target])
        for target in TARGETS:
            assert await store.health(target) == twin[target]


async def test_sync_only_writes_what_it_counts(redis: Redis, key_prefix: str) -> None:
    """A read-only sync creates no key; counts set a TTL that outlives the longest ejection."""
    cfg = EjectionConfig()
    store = OutlierStore(redis, Keys(key_prefix), cfg)
    assert (await store.sync(["farm/x"], now_ms=T0))[0].calls == 0
    assert not await redis.exists(Keys(key_prefix).outlier("farm/x"))
    await store.sync(["farm/x"], {"farm/x": (1, 2)}, now_ms=T0)
    ttl = await redis.pttl(Keys(key_prefix).outlier("farm/x"))
    assert cfg.max_ms + cfg.window_ms < ttl <= store.ttl_ms
