"""Carried records (llm_client._breaker.carry): a plain success's record rides on the next
walk's first round trip, and lands exactly as if it had been sent alone (real Valkey)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from llm_client import BreakerConfig, BreakerStore, Outcome, RecordCarry, TargetLimits
from llm_client._breaker.model import Permit
from llm_client._gateway.target import Report
from memory_worker.keys import Keys
from tests.llm_client.test_breaker_store import inner_commands
from tests.support.harness import eventually

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


# --- held and folded (a worker process's carry: RecordCarry(hold_seconds)) -------------------

#: Latencies of five successes: four in one histogram bucket, one in another.
ELAPSED = [420, 430, 410, 9_000, 425]


async def state_of(admin: Any, prefix: str, target: str) -> tuple[dict[bytes, bytes], list[Any]]:
    """A breaker's hash without ``ttl_at`` and its window's members (their times left out:
    a folded record's calls share the latest time, by design)."""
    keys = Keys(prefix)
    fields = await admin.hgetall(keys.breaker(target))
    fields.pop(b"ttl_at", None)
    return fields, sorted(await admin.zrange(keys.breaker_window(target), 0, -1))


async def test_folded_successes_land_as_if_recorded_one_by_one(admin: Any) -> None:
    """One breaker, one generation: the five successes go as one script call holding one
    record per latency bucket, and leave the same counts, sums, window entries and
    sequence number as five records sent alone."""
    alone, folded = store_on(admin, "fold-alone:"), store_on(admin, "fold-held:")
    for i, ms in enumerate(ELAPSED):
        report = Report(elapsed_ms=ms, tokens=70 + i)
        await alone.record(
            TARGETS[0], Permit(0, False), Outcome.SUCCESS, now_ms=T0 + i, count=True, report=report
        )
    with RecordCarry() as carry:
        for i, ms in enumerate(ELAPSED):
            report = Report(elapsed_ms=ms, tokens=70 + i)
            await folded.record(
                TARGETS[0],
                Permit(0, False),
                Outcome.SUCCESS,
                now_ms=T0 + i,
                count=True,
                report=report,
            )
    assert len(carry.pending) == 5
    spent = await inner_commands(admin, carry.land())
    assert spent["evalsha"] == 1  # one round trip, one script
    assert spent["zadd"] == 2  # one record per latency bucket
    assert await state_of(admin, "fold-held:", TARGETS[0]) == await state_of(
        admin, "fold-alone:", TARGETS[0]
    )
    counter = ":attempts"
    assert await admin.hgetall(Keys("fold-held:").routing_tag + counter) == await admin.hgetall(
        Keys("fold-alone:").routing_tag + counter
    )


async def test_held_successes_wait_for_the_hold_then_ride_on_a_walk(admin: Any) -> None:
    store = store_on(admin, "fold-wait:")
    counter = Keys("fold-wait:").routing_tag + ":attempts"
    with RecordCarry(hold_seconds=0.3) as carry:
        await store.record(TARGETS[0], Permit(0, False), Outcome.SUCCESS, count=True)
        spent = await inner_commands(
            admin, store.begin(TARGETS, "wf", lease_seconds=30, interval_seconds=15)
        )
        assert spent["hincrby"] == 0  # too young to go
        assert len(carry.pending) == 1
        assert carry.riders() == []
        await asyncio.sleep(0.35)
        await store.begin(TARGETS, "wf", lease_seconds=30, interval_seconds=15)
    assert carry.pending == []
    assert await admin.hgetall(counter) == {b"farm/a:ok": b"1"}  # it rode on the begin
    await carry.close()


async def test_an_idle_process_lands_held_successes_alone(admin: Any) -> None:
    """Nothing else goes out: the timer lands them twice the hold after the oldest."""
    store = store_on(admin, "fold-idle:")
    counter = Keys("fold-idle:").routing_tag + ":attempts"
    with RecordCarry(hold_seconds=0.2) as carry:
        for _ in range(3):
            await store.record(TARGETS[1], Permit(0, False), Outcome.SUCCESS, count=True)
    assert await admin.hgetall(counter) == {}
    for _ in range(40):
        await asyncio.sleep(0.05)
        if not carry.pending:
            break
    assert carry.pending == []
    # the records leave ``pending`` before their round trip: wait for it to land (a fixed
    # 50 ms was too short for a loaded host's round trip), then what landed is exact
    for _ in range(100):
        landed = await admin.hgetall(counter)
        if landed:
            break
        await asyncio.sleep(0.05)
    assert landed == {b"farm/b:ok": b"3"}
    await carry.close()


async def test_a_success_held_after_the_timer_fired_lands_on_a_timer_of_its_own(
    admin: Any,
) -> None:
    """The timer's land takes what was held; a success held after it gets its own timer."""
    store = store_on(admin, "fold-again:")
    counter = Keys("fold-again:").routing_tag + ":attempts"
    with RecordCarry(hold_seconds=0.1) as carry:
        await store.record(TARGETS[1], Permit(0, False), Outcome.SUCCESS, count=True)
        # the timer's land took it and is over (a land still in flight takes later ones too)
        await eventually(lambda: _answered(admin.hgetall(counter), {b"farm/b:ok": b"1"}), timeout=3)
        await eventually(lambda: not carry._landing, timeout=3)
        await store.record(TARGETS[1], Permit(0, False), Outcome.SUCCESS, count=True)
    assert carry.pending
    await eventually(lambda: not carry.pending, timeout=3)
    await eventually(lambda: _answered(admin.hgetall(counter), {b"farm/b:ok": b"2"}), timeout=3)
    await carry.close()


async def _answered(reply: Any, expected: dict[bytes, bytes]) -> bool:
    return bool(await reply == expected)


async def test_close_lands_what_is_held_at_once(admin: Any) -> None:
    store = store_on(admin, "fold-close:")
    counter = Keys("fold-close:").routing_tag + ":attempts"
    with RecordCarry(hold_seconds=60) as carry:
        await store.record(TARGETS[0], Permit(0, False), Outcome.SUCCESS, count=True)
    await carry.close()
    assert await admin.hgetall(counter) == {b"farm/a:ok": b"1"}


async def test_a_failure_never_overtakes_a_held_success(admin: Any) -> None:
    """Four charged failures, a success (held), a failure: the success lands first in the
    same script, so the count restarts and the breaker stays closed — were the failure sent
    ahead of the held success it would be the fifth in a row and open the breaker."""
    store = store_on(admin, "fold-order:")
    for i in range(4):
        await store.record(TARGETS[0], Permit(0, False), Outcome.FAILURE, now_ms=T0 + i)
    with RecordCarry(hold_seconds=60) as carry:
        await store.record(TARGETS[0], Permit(0, False), Outcome.SUCCESS, now_ms=T0 + 5)
        assert len(carry.pending) == 1
        spent = await inner_commands(
            admin, store.record(TARGETS[0], Permit(0, False), Outcome.FAILURE, now_ms=T0 + 6)
        )
        assert carry.pending == []
    assert spent["evalsha"] == 1  # the held success and the failure, one script
    fields, _ = await state_of(admin, "fold-order:", TARGETS[0])
    assert fields[b"consec"] == b"1"
    assert fields.get(b"opened", b"0") == b"0"
