"""A routed call's breaker bookkeeping in two round trips, the gate in one.

The folded scripts (``walk.begin``, ``routes.open``, the counting ``breaker.record``) are
checked against the operations they replace, on random breaker states, and the round
trips of a successful call are counted.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis

from llm_client import (
    BreakerConfig,
    BreakerStore,
    Circuit,
    Outcome,
    Walker,
    WalkerConfig,
    attempt_field,
    success_counter,
)
from memory_worker.keys import Keys
from tests.support.replies import answer, answer_bytes
from tests.support.routing_fakes import FakeFarm, RecordingSink, ok, routes_of

NOW = 1_700_000_000_000


def random_state(rng: random.Random) -> dict[str, int]:
    """A breaker hash: closed, open in its cooldown, half-open, with or without a probe."""
    opened = rng.random() < 0.7
    return {
        "opened": int(opened),
        "gen": rng.randrange(0, 9),
        "consec": rng.randrange(0, 6),
        "trips": rng.randrange(0, 4),
        "opened_at": NOW - 60_000 if opened else 0,
        "open_until": NOW + rng.choice([-5_000, 0, 5_000]) if opened else 0,
        "probe_until": NOW + rng.choice([-1_000, 0, 1_000]) if opened and rng.random() < 0.5 else 0,
    }


async def seed(redis: Redis, keys: Keys, target: str, state: dict[str, int]) -> None:
    await redis.delete(keys.breaker(target))
    await answer(redis.hset(keys.breaker(target), mapping=state))


async def slow_begin(
    store: BreakerStore, targets: list[str], workflow: str, probes: bool
) -> tuple[tuple[bool, ...], int | None, Any]:
    """What the walk does without the fold (its slow path): read the views, then acquire
    in its order — open targets whose probe is due first (with probes), the closed ones,
    then the other open ones."""
    views = await store.views(targets, now_ms=NOW)
    closed = [v.circuit is Circuit.CLOSED for v in views]
    due = [v.circuit is Circuit.HALF_OPEN and not v.probe_in_flight for v in views]
    order = [i for i, d in enumerate(due) if d and probes]
    order += [i for i, c in enumerate(closed) if c]
    order += [i for i, c in enumerate(closed) if not c and not due[i] and probes]
    for i in order:
        permit = await store.acquire(
            targets[i], lease_seconds=30, workflow=workflow, interval_seconds=15, now_ms=NOW
        )
        if permit is not None:
            return tuple(closed), i, permit
    return tuple(closed), None, None


async def test_begin_matches_views_then_acquires_in_the_walk_order(
    redis: Redis, key_prefix: str
) -> None:
    rng = random.Random(11)
    keys = Keys(key_prefix)
    store = BreakerStore(redis, keys, BreakerConfig())
    for trial in range(150):
        states = [random_state(rng) for _ in range(3)]
        probes = rng.random() < 0.7
        folded = [f"fold{trial}/{i}" for i in range(3)]
        slow = [f"slow{trial}/{i}" for i in range(3)]
        for a, b, state in zip(folded, slow, states, strict=True):
            await seed(redis, keys, a, state)
            await seed(redis, keys, b, state)
        begun = await store.begin(
            folded,
            f"wf-fold{trial}",
            lease_seconds=30,
            interval_seconds=15,
            probes=probes,
            now_ms=NOW,
        )
        closed, index, permit = await slow_begin(store, slow, f"wf-slow{trial}", probes)
        assert (begun.closed, begun.index, begun.permit) == (closed, index, permit), states
        for a, b in zip(folded, slow, strict=True):  # the same state change, fail-open too
            assert await answer(redis.hgetall(keys.breaker(a))) == await answer(
                redis.hgetall(keys.breaker(b))
            )
        assert await redis.exists(keys.failopen_permit(f"wf-fold{trial}")) == await redis.exists(
            keys.failopen_permit(f"wf-slow{trial}")
        )


async def test_routes_open_matches_the_view_based_gate(redis: Redis, key_prefix: str) -> None:
    rng = random.Random(7)
    keys = Keys(key_prefix)
    store = BreakerStore(redis, keys, BreakerConfig())
    for trial in range(150):
        routes = []
        for w in range(2):
            targets = [f"t{trial}/{w}/{i}" for i in range(rng.randrange(0, 3))]
            for target in targets:
                await seed(redis, keys, target, random_state(rng))
            if rng.random() < 0.5:
                await redis.set(keys.failopen_permit(f"wf{trial}/{w}"), 1, px=60_000)
            routes.append((f"wf{trial}/{w}", targets))
        expected = []
        for workflow, targets in routes:  # Walker.route_is_open before the fold
            views = await store.views(targets, now_ms=NOW)
            if not targets or any(v.admissible for v in views):
                expected.append(False)
            elif views[0].probe_in_flight:
                expected.append(True)
            else:
                expected.append(not await store.failopen_free(workflow))
        assert await store.routes_open(routes, now_ms=NOW) == expected


class Counting:
    """Counts the commands a Redis client sends (a script call is one)."""

    def __init__(self, redis: Redis) -> None:
        self.commands: list[str] = []
        original: Callable[..., Awaitable[Any]] = redis.execute_command

        async def counted(*args: Any, **options: Any) -> Any:
            self.commands.append(str(args[0]))
            return await original(*args, **options)

        redis.execute_command = counted  # type: ignore[method-assign]


async def test_a_successful_routed_call_costs_two_round_trips_and_counts_itself(
    redis: Redis, key_prefix: str
) -> None:
    keys = Keys(key_prefix)
    store = BreakerStore(redis, keys, BreakerConfig(), success_counter=success_counter(keys))
    walker = Walker(routes_of("farm/a", "hosted/b"), store, RecordingSink(), config=WalkerConfig())
    farm = FakeFarm()
    farm.set("farm/a", ok("served"))
    await walker.call("memory_extraction", farm.attempt)  # scripts loaded
    counting = Counting(redis)
    routed = await walker.call("memory_extraction", farm.attempt)
    assert routed.value == "served"
    assert routed.counted
    assert counting.commands == ["EVALSHA", "EVALSHA"]  # begin, record (+ the metric)
    field = attempt_field("farm/a", Outcome.SUCCESS.value, None)
    assert await answer_bytes(redis.hget(keys.routing_attempts, field)) == b"2"
    state = await store.state("farm/a")
    assert len(state.window) == 2  # both successes recorded in the breaker window
    await walker.routes_open(
        ["memory_extraction"]
    )  # its script loaded (NOSCRIPT is a test's order)
    counting.commands.clear()
    assert await walker.routes_open(["memory_extraction", "embedding"]) == {
        "memory_extraction": False,
        "embedding": False,
    }
    assert counting.commands == ["EVALSHA"]  # every workflow's gate, one round trip


async def test_without_a_counter_the_caller_counts_the_success(
    redis: Redis, key_prefix: str
) -> None:
    store = BreakerStore(redis, Keys(key_prefix), BreakerConfig())
    walker = Walker(routes_of("farm/a"), store, RecordingSink(), config=WalkerConfig())
    farm = FakeFarm()
    farm.set("farm/a", ok("served"))
    routed = await walker.call("memory_extraction", farm.attempt)
    assert not routed.counted
    assert not await redis.exists(Keys(key_prefix).routing_attempts)
