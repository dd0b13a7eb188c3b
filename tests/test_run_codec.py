"""§13: a claimed run reads back exactly the request that was enqueued.

``request_from_hash`` validates a run's stored messages from their JSON in one call.
Inputs at the edge of valid (64-bit ids, astral and combining text, 256-character names,
offsets and microseconds) come back equal; a stored message the request model would not
accept (a string id, a string flag, a time without an offset, an unknown field) is a typed
``ValidationError``, never a half-read run.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from memory_worker.models import INT64_MAX, INT64_MIN, RunRequest
from memory_worker.runs import RunStore
from memory_worker.runs.codec import request_from_hash
from memory_worker.settings import Settings
from tests.support.factories import request_dict

START = datetime(2026, 11, 1, tzinfo=UTC)

#: Any Unicode but lone surrogates (refused at enqueue: they cannot be UTF-8).
chars = st.characters(exclude_categories=["Cs"])
texts = st.text(chars, min_size=1, max_size=200)
offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@st.composite
def requests(draw: st.DrawFn) -> RunRequest:
    count = draw(st.integers(1, 6))
    ids = draw(st.lists(st.integers(0, INT64_MAX), min_size=count, max_size=count, unique=True))
    messages = [
        {
            "message_id": message_id,
            "user_id": draw(st.integers(INT64_MIN, INT64_MAX)),
            "sender_name": draw(st.text(chars, max_size=256)),
            "is_bot": draw(st.booleans()),
            "is_forward": draw(st.booleans()),
            "text": draw(texts),
            "sent_at": (START + timedelta(microseconds=draw(st.integers(0, 3_600_000_000))))
            .astimezone(draw(offsets))
            .isoformat(),
        }
        for message_id in ids
    ]
    return RunRequest.model_validate(
        {
            "chat_id": draw(st.integers(INT64_MIN, INT64_MAX)),
            "thread_id": draw(st.integers(0, INT64_MAX)),
            "range_start": START.isoformat(),
            "range_end": (START + timedelta(hours=1)).isoformat(),
            "messages": messages,
        }
    )


def stored(request: RunRequest, messages: bytes | None = None) -> dict[str, str]:
    """The run hash fields ``request_from_hash`` reads, as the claim hands them over (text)."""
    return {
        "chat_id": str(request.chat_id),
        "thread_id": str(request.thread_id),
        "range_start": request.range_start.isoformat(),
        "range_end": request.range_end.isoformat(),
        "prompt_version": "v1",
        "cursor": "",
        "messages": (messages or request.messages_json()).decode(),
    }


@settings(max_examples=200, deadline=None)
@given(requests())
def test_every_valid_request_reads_back_equal(request: RunRequest) -> None:
    back = request_from_hash(stored(request))
    assert back.messages == request.messages
    assert [m.sent_at.utcoffset() for m in back.messages] == [
        m.sent_at.utcoffset() for m in request.messages
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("user_id", "100"),  # a string id
        ("message_id", -1),  # a negative message id
        ("message_id", INT64_MAX + 1),  # past 64 bits
        ("is_bot", "true"),  # a string flag
        ("is_forward", 1),  # a number flag
        ("sent_at", "2026-11-01T00:01:00"),  # no offset
        ("sent_at", 1_700_000_000),  # a number time
        ("sender_name", "x" * 257),  # one past the name's bound
        ("extra", "field"),  # an unknown field
    ],
)
def test_a_stored_message_the_model_refuses_is_a_validation_error(field: str, value: Any) -> None:
    request = RunRequest.model_validate(request_dict(7))
    raw = [m.model_dump(mode="json") for m in request.messages]
    raw[0][field] = value
    with pytest.raises(ValidationError):
        request_from_hash(stored(request, orjson.dumps(raw)))


@pytest.mark.parametrize("messages", [b"", b"[", b"{}", b"[null]", b"not json"])
def test_unreadable_stored_messages_are_a_validation_error(messages: bytes) -> None:
    request = RunRequest.model_validate(request_dict(7))
    fields = stored(request)
    fields["messages"] = messages.decode()
    with pytest.raises(ValidationError):
        request_from_hash(fields)


async def test_a_claim_on_a_real_server_returns_the_edge_request_it_stored(
    settings: Settings, redis: Any
) -> None:
    edge = request_dict(INT64_MIN, thread_id=INT64_MAX, user_id=INT64_MAX - 1)
    edge["messages"][0]["text"] = "🧠 zweite Zeile\nи ещё é́ " + "\u200d" * 3
    edge["messages"][0]["sender_name"] = "ü" * 256
    edge["messages"][1]["message_id"] = INT64_MAX
    edge["messages"][1]["is_forward"] = True
    edge["messages"][1]["sent_at"] = "2026-11-01T05:32:00.000001+05:30"
    request = RunRequest.model_validate(edge)
    store = RunStore(redis, settings)
    assert (await store.enqueue(request)).run_id
    claim = (await store.claim_detailed("w1")).run
    assert claim is not None
    back = claim.request
    assert back.messages == request.messages
    assert [m.sent_at.utcoffset() for m in back.messages] == [
        m.sent_at.utcoffset() for m in request.messages
    ]
    assert (back.chat_id, back.thread_id, back.range_start, back.range_end) == (
        request.chat_id,
        request.thread_id,
        request.range_start,
        request.range_end,
    )
    assert back.prompt_version == settings.prompt_version  # stamped at enqueue
