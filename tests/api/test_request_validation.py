"""Run request validation (§7, §13; fault-matrix rows 18 and 19): strict, bounded, all-or-nothing.

A request that passes here can always be stored, read back and turned into
memory; a bad one raises ``InvalidRunRequest`` and stores nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from memory_worker.api import MemoryQueue
from memory_worker.errors import InvalidRunRequest
from memory_worker.models import parse_run_request
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle
from tests.support.factories import request_dict

Mutation = Callable[[dict[str, Any]], None]


def _msg(**fields: Any) -> Mutation:
    return lambda d: d["messages"][0].update(fields)


def _top(**fields: Any) -> Mutation:
    return lambda d: d.update(fields)


REJECTED: list[tuple[str, Mutation, str]] = [
    ("chat-id-true", _top(chat_id=True), "chat_id"),
    ("chat-id-string", _top(chat_id="1"), "chat_id"),
    ("chat-id-float", _top(chat_id=1.0), "chat_id"),
    ("chat-id-beyond-int64", _top(chat_id=2**63), "chat_id"),
    ("thread-id-negative", _top(thread_id=-1), "thread_id"),
    ("message-id-negative", _msg(message_id=-1), "messages.0.message_id"),
    ("user-id-string", _msg(user_id="100"), "messages.0.user_id"),
    ("is-bot-string", _msg(is_bot="true"), "messages.0.is_bot"),
    ("is-bot-int", _msg(is_bot=1), "messages.0.is_bot"),
    ("integer-timestamp", _msg(sent_at=1_793_000_000), "messages.0.sent_at"),
    ("float-timestamp", _top(range_start=1_793_000_000.5), "range_start"),
    ("year-10000-by-offset", _top(range_end="9999-12-31T23:59:59-05:00"), "range_end"),
    ("year-2200", _top(range_end="2200-01-01T00:00:00Z"), "range_end"),
    ("before-1970", _top(range_start="1969-12-31T23:59:59Z"), "range_start"),
    ("naive-time", _top(range_start="2026-11-01T00:00:00"), "range_start"),
    ("lone-surrogate-text", _msg(text="a\ud800b"), "JSON-encodable"),
    ("lone-surrogate-name", _msg(sender_name="\udfff"), "JSON-encodable"),
]


@pytest.mark.parametrize(
    ("mutate", "where"), [(m, w) for _, m, w in REJECTED], ids=[i for i, _, _ in REJECTED]
)
def test_strict_validation_rejects(mutate: Mutation, where: str) -> None:
    data = request_dict()
    mutate(data)
    with pytest.raises(InvalidRunRequest) as raised:
        parse_run_request(data)
    assert any(where in p for p in raised.value.problems), raised.value.problems


@pytest.mark.parametrize(
    ("mutate", "where"),
    [(m, w) for i, m, w in REJECTED if "surrogate" not in i],
    ids=[i for i, _, _ in REJECTED if "surrogate" not in i],
)
def test_json_text_is_judged_like_the_object(mutate: Mutation, where: str) -> None:
    data = request_dict()
    mutate(data)
    with pytest.raises(InvalidRunRequest) as raised:
        parse_run_request(orjson.dumps(data))
    assert any(where in p for p in raised.value.problems), raised.value.problems


def test_lone_surrogate_escape_in_json_text_is_rejected() -> None:
    text = orjson.dumps(request_dict()).decode().replace("I love green tea", "\\ud800")
    with pytest.raises(InvalidRunRequest):
        parse_run_request(text)


@pytest.mark.parametrize(
    "mutate",
    [
        _top(chat_id=-1001234567890),
        _top(chat_id=2**63 - 1),
        _top(range_start="1970-01-01T00:00:00Z"),
        _msg(is_bot=True, is_forward=False),
        _msg(text="emoji 🙂 and ümlauts"),
        _top(range_start="2026-11-01T02:00:00+03:00"),
    ],
    ids=["supergroup-id", "int64-max", "epoch", "bools", "unicode", "offset"],
)
def test_strict_validation_accepts(mutate: Mutation) -> None:
    data = request_dict()
    mutate(data)
    parse_run_request(data)
    parse_run_request(orjson.dumps(data))


def test_every_accepted_time_survives_utc_and_expiry_arithmetic() -> None:
    """The bound is what keeps memory readable: the latest time plus a long TTL still fits."""
    from datetime import timedelta

    from memory_worker.models import LATEST_TIME

    latest = LATEST_TIME - timedelta(microseconds=1)
    assert (latest + timedelta(days=3650)).year < 9999


# --- all-or-nothing (row 18) ---------------------------------------------------------------------


async def _stored(queue: MemoryQueue) -> int:
    return len(await queue.list_runs(limit=10_000))


async def test_enqueue_many_stores_nothing_when_one_request_is_too_large(
    settings: Settings, redis: Any
) -> None:
    small = settings.model_copy(update={"max_message_chars": 50})
    queue = MemoryQueue(RedisHandle(client=redis, url=reveal(settings.redis_url) or ""), small)
    good = [request_dict(1, hour=h) for h in range(3)]
    oversize = request_dict(2, texts=["x" * 51])
    invalid = copy.deepcopy(good[0]) | {"chat_id": "7"}
    with pytest.raises(InvalidRunRequest) as raised:
        await queue.enqueue_many([*good, oversize, invalid])
    assert await _stored(queue) == 0
    problems = raised.value.problems
    assert any(p.startswith("item 4: messages.0.text") for p in problems), problems
    assert any(p.startswith("item 5: chat_id") for p in problems), problems

    results = await queue.enqueue_many(good)
    assert [r.status.value for r in results] == ["enqueued"] * 3
    assert await _stored(queue) == 3
