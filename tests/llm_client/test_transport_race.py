"""redis-py 5 leaks a lost connection as AttributeError/TypeError (redis/redis-py#4287).

Seen in the cluster failover test: a card write raced a killed master and redis-py's
own socket write raised ``AttributeError: 'NoneType' object has no attribute
'writelines'`` — not a ``RedisError``, so it escaped the store-write retry and would
have failed the run (an attempt spent on a failover). The edge now reads it as what it
is: a store fault (retried, released — never charged to the run).
"""

from __future__ import annotations

import pytest
from redis.asyncio.connection import Connection

from memory_worker.runs.policy import Verdict, decide
from memory_worker.storage.connections import retry_store_write
from memory_worker.storage.faults import is_store_fault, is_transport_race


async def _real_race() -> BaseException:
    """The error redis-py itself raises writing on a connection whose stream is gone."""
    connection = Connection(host="127.0.0.1", port=1)
    try:
        await connection._send_packed_command([b"PING\r\n"])
    except BaseException as exc:
        return exc
    raise AssertionError("redis-py wrote on a connection with no stream")


async def test_redis_pys_leaked_write_error_is_a_store_fault() -> None:
    error = await _real_race()
    assert isinstance(error, AttributeError)
    assert is_transport_race(error)
    assert is_store_fault(error)


async def test_an_attribute_error_of_our_own_is_not() -> None:
    with pytest.raises(AttributeError) as caught:
        None.missing  # type: ignore[attr-defined]  # noqa: B018
    assert not is_transport_race(caught.value)
    assert not is_store_fault(caught.value)
    assert decide(caught.value).verdict is not Verdict.RELEASE


async def test_the_store_write_retry_rides_it_out() -> None:
    calls = 0

    async def write() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise await _real_race()
        return "landed"

    assert await retry_store_write("card write", write, cap=0.01) == "landed"
    assert calls == 3


async def test_other_errors_still_escape_the_retry() -> None:
    async def write() -> str:
        raise ValueError("a bug, not a lost connection")

    with pytest.raises(ValueError, match="a bug"):
        await retry_store_write("card write", write, cap=0.01)
