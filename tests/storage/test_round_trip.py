"""storage.round_trip: a script call and the breaker records it takes along share one round
trip; a rider never changes the call's answer and is tried once (real Valkey)."""

from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from llm_client import Outcome, RecordCarry, Rider
from llm_client._breaker.model import Permit
from memory_worker.keys import Keys
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.round_trip import call_with_riders
from tests.llm_client.test_breaker_carry import T0, TARGETS, store_on

CALL = "redis.call('SET', KEYS[1], ARGV[1]); return ARGV[1]"
FAILING = "return redis.error_reply('ERR the call failed')"


async def reads(admin: Any) -> int:
    """Read events the server processed (one per round trip a client sent in one write)."""
    return int((await admin.info("stats"))["total_reads_processed"])


async def carried(admin: Any, prefix: str, n: int = 2) -> tuple[list[Rider], list[BaseException]]:
    """``n`` plain successes held back by a real breaker store, as riders; and where their
    losses are reported (the walker's counter, here a list)."""
    store = store_on(admin, prefix)
    lost: list[BaseException] = []
    with RecordCarry() as carry:
        for i in range(n):
            await store.record(
                TARGETS[i % 2], Permit(0, False), Outcome.SUCCESS, now_ms=T0, count=True
            )
    assert len(carry.pending) == n
    carry.pending = [
        type(c)(c.store, c.keys, c.args, lambda exc: lost.append(exc)) for c in carry.pending
    ]
    return carry.riders(), lost


async def counted(admin: Any, prefix: str) -> dict[bytes, bytes]:
    keys = Keys(prefix)  # the counter the records write (store_on's)
    result: dict[bytes, bytes] = await admin.hgetall(keys.routing_tag + ":attempts")
    return result


async def test_the_riders_and_the_call_share_one_round_trip(admin: Any) -> None:
    call = admin.register_script(CALL)
    warm, _ = await carried(admin, "rt-warm:")
    await call_with_riders(admin, warm, call, keys=["rt-one:warm"], args=["w"])  # scripts loaded
    riders, lost = await carried(admin, "rt-one:")
    before = await reads(admin)
    answer = await call_with_riders(admin, riders, call, keys=["rt-one:k"], args=["v"])
    assert await reads(admin) - before == 2  # the pipeline, and the measuring INFO
    assert answer == b"v"
    assert await admin.get("rt-one:k") == b"v"
    assert await counted(admin, "rt-one:") == {b"farm/a:ok": b"1", b"farm/b:ok": b"1"}
    assert lost == []


async def test_without_riders_the_call_goes_alone(admin: Any) -> None:
    call = admin.register_script(CALL)
    assert await call_with_riders(admin, [], call, keys=["rt-alone:k"], args=["x"]) == b"x"


async def test_scripts_the_server_never_saw_are_loaded_and_run_once(admin: Any) -> None:
    riders, lost = await carried(admin, "rt-noscript:")
    await admin.script_flush()  # NOSCRIPT for the rider and the call alike
    call = admin.register_script(CALL + " -- rt-noscript")
    answer = await call_with_riders(admin, riders, call, keys=["rt-noscript:k"], args=["v"])
    assert answer == b"v"
    assert await counted(admin, "rt-noscript:") == {b"farm/a:ok": b"1", b"farm/b:ok": b"1"}
    assert lost == []


async def test_a_failing_rider_is_reported_lost_and_the_call_answers(
    admin: Any, caplog: pytest.LogCaptureFixture
) -> None:
    riders, lost = await carried(admin, "rt-badrider:", n=1)
    bad = riders[0]
    canary = "sk-live-CANARY4242rider"  # an error text that echoes a secret
    failing = admin.register_script(f"return redis.error_reply('ERR {canary}')")
    broken = Rider(bad.client, failing, [], [], bad.records)
    call = admin.register_script(CALL)
    answer = await call_with_riders(admin, [broken], call, keys=["rt-badrider:k"], args=["v"])
    assert answer == b"v"
    assert len(lost) == 1
    assert isinstance(lost[0], ResponseError)
    assert "breaker_records_store_error" in caplog.text  # the loss is logged by type only
    assert canary not in caplog.text


async def test_a_failing_call_raises_and_its_riders_still_land(admin: Any) -> None:
    riders, lost = await carried(admin, "rt-badcall:")
    with pytest.raises(ResponseError, match="the call failed"):
        await call_with_riders(admin, riders, admin.register_script(FAILING), keys=[], args=[])
    assert await counted(admin, "rt-badcall:") == {b"farm/a:ok": b"1", b"farm/b:ok": b"1"}
    assert lost == []


async def test_a_lost_round_trip_raises_and_reports_every_rider_lost(admin: Any) -> None:
    riders, lost = await carried(admin, "rt-gone:")
    gone = client_from_url("redis://127.0.0.1:1/0")  # nothing listens there
    moved = [Rider(gone, r.script, r.keys, r.args, r.records) for r in riders]
    try:
        with pytest.raises(RedisConnectionError):
            await call_with_riders(
                gone, moved, gone.register_script(CALL), keys=["rt-gone:k"], args=["v"]
            )
    finally:
        await gone.aclose()
    assert len(lost) == 2
    assert await counted(admin, "rt-gone:") == {}


async def test_a_rider_of_another_server_goes_alone_first(admin: Any) -> None:
    riders, lost = await carried(admin, "rt-other:", n=1)
    other = client_from_url("redis://127.0.0.1:1/0")
    try:
        call = other.register_script(CALL)
        with pytest.raises(RedisConnectionError):  # the call's server is down, not the rider's
            await call_with_riders(other, riders, call, keys=["rt-other:k"], args=["v"])
    finally:
        await other.aclose()
    assert await counted(admin, "rt-other:") == {b"farm/a:ok": b"1"}
    assert lost == []
