"""Carried records (llm_client._breaker.carry): a plain success's record rides on the next
walk's first round trip, and lands exactly as if it had been sent alone (real Valkey)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from llm_client import RecordCarry
from llm_client._breaker.model import BreakerConfig, Outcome, Permit
from llm_client._breaker.store import BreakerStore
from llm_client._gateway.model import TargetLimits
from llm_client._gateway.target import Report
from memory_worker.keys import Keys
from tests.test_breaker_store import inner_commands

T0 = 1_800_000_000_000
TARGETS = ["farm/a", "farm/b"]


def store_on(admin: Any, prefix: str) -> BreakerStore:
    keys = Keys(prefix)
    return BreakerStore(
        admin,
        keys,
        BreakerConfig(),
        success_counter=lambda target: (keys.routing_tag + ":attempts", f"{target}:ok"),
    )


async def snapshot(admin: Any, store: BreakerStore, prefix: str) -> dict[str, Any]:
    """Everything the two walks wrote, with the prefix taken out of the key names."""
    keys = Keys(prefix)
    found: dict[str, Any] = {}
    for target in TARGETS:
        found[f"hash {target}"] = await admin.hgetall(keys.breaker(target))
        found[f"window {target}"] = await admin.zrange(
            keys.breaker_window(target), 0, -1, withscores=True
        )
    found["attempts"] = await admin.hgetall(keys.routing_tag + ":attempts")
    return found


async def two_walks(store: BreakerStore) -> Any:
    """A walk's success on farm/a, then the next walk's begin (as one run does)."""
    first = await store.begin(TARGETS, "wf", lease_seconds=30, interval_seconds=15, now_ms=T0)
    assert first.permit is not None
    report = Report(elapsed_ms=420, tokens=77)
    transition = await store.record(
        TARGETS[0], first.permit, Outcome.SUCCESS, now_ms=T0 + 5, count=True, report=report
    )
    assert transition is None
    return await store.begin(TARGETS, "wf2", lease_seconds=30, interval_seconds=15, now_ms=T0 + 9)


async def test_a_carried_record_lands_as_if_sent_alone(admin: Any) -> None:
    alone = store_on(admin, "carry-alone:")
    second_alone = await two_walks(alone)
    carried = store_on(admin, "carry-ride:")
    with RecordCarry() as carry:
        second_carried = await two_walks(carried)
        assert carry.pending == []  # the second begin took it along
    assert second_carried == second_alone  # the begin read the record it carried
    assert await snapshot(admin, carried, "carry-ride:") == await snapshot(
        admin, alone, "carry-alone:"
    )


async def test_a_carried_success_costs_no_round_trip_of_its_own(admin: Any) -> None:
    store = store_on(admin, "carry-cost:")
    first = await store.begin(TARGETS, "wf", lease_seconds=30, interval_seconds=15, now_ms=T0)
    assert first.permit is not None
    with RecordCarry() as carry:
        spent = await inner_commands(
            admin, store.record(TARGETS[0], first.permit, Outcome.SUCCESS, now_ms=T0 + 1)
        )
        assert spent == Counter()  # nothing sent
        assert len(carry.pending) == 1
        spent = await inner_commands(
            admin,
            store.begin(TARGETS, "wf", lease_seconds=30, interval_seconds=15, now_ms=T0 + 2),
        )
    assert spent["evalsha"] == 1  # record + begin, one round trip
    assert spent["hmget"] == 3  # the record's read and begin's two


@pytest.mark.parametrize(
    ("permit", "outcome", "report"),
    [
        (Permit(0, probe=True), Outcome.SUCCESS, Report()),  # it closes the breaker
        (Permit(0, False, slot="s1"), Outcome.SUCCESS, Report()),  # it frees a slot
        (Permit(0, False), Outcome.SUCCESS, Report(cool_ms=5_000)),  # it cools the target
        (Permit(0, False), Outcome.FAILURE, Report()),  # it may open the breaker
        (Permit(0, False), Outcome.NOT_CHARGED, Report()),
    ],
    ids=["probe", "slot", "cooling", "failure", "not-charged"],
)
async def test_only_a_plain_success_is_carried(
    admin: Any, permit: Permit, outcome: Outcome, report: Report
) -> None:
    store = store_on(admin, "carry-rule:")
    with RecordCarry() as carry:
        spent = await inner_commands(
            admin, store.record(TARGETS[0], permit, outcome, now_ms=T0, report=report)
        )
        assert carry.pending == []
    assert spent["evalsha"] == 1  # sent at once


async def test_what_is_left_lands_with_flush(admin: Any) -> None:
    store = store_on(admin, "carry-flush:")
    counter = Keys("carry-flush:").routing_tag + ":attempts"
    with RecordCarry() as carry:
        for n in range(3):
            await store.record(
                TARGETS[n % 2], Permit(0, False), Outcome.SUCCESS, now_ms=T0, count=True
            )
    assert len(carry.pending) == 3
    assert await admin.hgetall(counter) == {}
    assert await carry.land() is True
    assert carry.pending == []
    assert await admin.hgetall(counter) == {b"farm/a:ok": b"2", b"farm/b:ok": b"1"}


@pytest.mark.parametrize("where", ["flush", "begin"])
async def test_a_failed_round_trip_drops_its_records_and_tells_each_walker(
    admin: Any, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Tried once, like a record sent alone: a retry after a script failed half-way could
    count a success twice."""
    store = store_on(admin, f"carry-fail-{where}:")
    told: list[str] = []

    def teller(target: str) -> Callable[[BaseException], None]:
        return lambda exc: told.append(f"{target} {type(exc).__name__}")

    with RecordCarry() as carry:
        for target in TARGETS:
            await store.record(
                target, Permit(0, False), Outcome.SUCCESS, now_ms=T0, carried_failed=teller(target)
            )

    async def refused(**_: Any) -> Any:
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(store, "_carry", refused)
    if where == "flush":
        assert await carry.land() is False  # best effort: logged, nothing raised
    else:
        with carry, pytest.raises(RedisConnectionError):
            await store.begin(TARGETS, "wf", lease_seconds=30, interval_seconds=15, now_ms=T0)
    assert carry.pending == []
    assert told == ["farm/a ConnectionError", "farm/b ConnectionError"]


async def test_concurrent_walks_of_one_run_send_a_record_once(admin: Any) -> None:
    store = store_on(admin, "carry-race:")
    counter = Keys("carry-race:").routing_tag + ":attempts"
    caps = [TargetLimits(), TargetLimits()]
    with RecordCarry() as carry:
        await store.record(TARGETS[0], Permit(0, False), Outcome.SUCCESS, now_ms=T0, count=True)
        await asyncio.gather(
            *(
                store.begin(
                    TARGETS, "wf", lease_seconds=30, interval_seconds=15, now_ms=T0, limits=caps
                )
                for _ in range(4)
            )
        )
    assert carry.pending == []
    assert await admin.hget(counter, "farm/a:ok") == b"1"
