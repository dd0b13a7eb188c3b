"""Typed replies from redis-py for the tests.

redis-py gives each command one signature for its sync and its asyncio client, so every reply
is typed ``Awaitable[T] | T``, and ``execute_command`` is not annotated at all. These helpers
say, in one place, which half a call site gets: ``await answer(client.get(k))`` on an asyncio
client, ``sync_answer(client.info())`` on a sync one, ``command``/``sync_command`` for raw
commands, ``parsed_error`` for the exception a server's error reply becomes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import redis
import redis.asyncio
from redis._parsers.base import BaseParser
from redis.exceptions import RedisError
from redis.typing import EncodableT

T = TypeVar("T")


async def answer(reply: Awaitable[T] | T) -> T:
    """The reply of an asyncio client's command: always the awaitable half of the union."""
    return await cast("Awaitable[T]", reply)  # redis-py's shared stubs: see the module doc


def sync_answer(reply: Awaitable[T] | T) -> T:
    """The reply of a sync client's command: never the awaitable half of the union."""
    return cast("T", reply)  # redis-py's shared stubs: see the module doc


async def command(client: redis.asyncio.Redis, *args: EncodableT) -> Any:
    """``await client.execute_command(*args)``, typed."""
    execute: Callable[..., Awaitable[Any]] = client.execute_command
    return await execute(*args)


def sync_command(client: redis.Redis, *args: EncodableT) -> Any:
    """``client.execute_command(*args)``, typed."""
    execute: Callable[..., Any] = client.execute_command
    return execute(*args)


async def answer_bytes(reply: Awaitable[str | None] | str | None) -> bytes | None:
    """A string reply on a client without ``decode_responses`` (the project's): bytes.

    redis-py types these replies ``str`` whatever the client's decoding.
    """
    return cast("bytes | None", await answer(reply))


def parsed_error(reply: str, parser: type[BaseParser] = BaseParser) -> RedisError:
    """The exception redis-py raises for the error ``reply`` (the server's whole text, its code
    first), through ``parser``'s own table (``ClusterParser`` knows the cluster's codes)."""
    parse: Callable[[str], RedisError] = parser.parse_error
    return parse(reply)
