"""Store faults: which exceptions mean "Redis failed", never "the work is bad" (§7).

The one home of that classification, at the connections edge: the tick, the
lease renewer and the store's retries all ask :func:`is_store_fault`, so a new
kind of Redis failure (a client library leaking a raw error, a cluster client's
own exceptions) is taught here once.
"""

from __future__ import annotations

from redis.exceptions import RedisError

from memory_worker.errors import StoreError

#: Where redis-py < 8 leaks a raw error when it writes to a connection the server reset
#: (redis/redis-py#4287: a cluster node killed, an idle connection dropped).
_TRANSPORT_FILES = (
    "redis/asyncio/connection.py",
    "asyncio/selector_events.py",
    "asyncio/streams.py",
)


def is_transport_race(error: BaseException) -> bool:
    """An ``AttributeError``/``TypeError`` raised inside redis-py's (or asyncio's) socket
    write: a lost connection in disguise (redis-py 5 leaks it; arq pins redis < 6)."""
    if not isinstance(error, AttributeError | TypeError):
        return False
    tb, where = error.__traceback__, ""
    while tb is not None:
        where, tb = tb.tb_frame.f_code.co_filename, tb.tb_next
    return where.replace("\\", "/").endswith(_TRANSPORT_FILES)


def is_store_fault(error: BaseException) -> bool:
    """A Redis error of any kind: never evidence against the work (§7)."""
    return isinstance(error, RedisError | StoreError) or is_transport_race(error)
