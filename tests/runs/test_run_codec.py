"""§13: a claimed run reads back exactly the request that was enqueued.

``request_from_hash`` validates a run's stored messages from their JSON in one call.
Inputs at the edge of valid (64-bit ids, astral and combining text, 256-character names,
offsets and microseconds) come back equal; a stored message the request model would not
accept (a string id, a string flag, a time without an offset, an unknown field, broken
JSON) is a typed ``StoredRunUnreadable`` that names fields and never quotes the stored values
(chat text) — pydantic's own message would, and arq's failure line prints it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_worker.errors import StoredRunUnreadable, StoreError
from memory_worker.models import INT64_MAX, INT64_MIN, RunRequest
from memory_worker.runs import RunStore
from memory_worker.runs.codec import request_from_hash
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from tests.support.factories import request_dict

START = datetime(2026, 11, 1, tzinfo=UTC)
CANARY = "canary-codec-7f3a I am allergic to peanuts"

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
        "id": "r0123456789abcdef",
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
        ("sender_name", CANARY * 7),  # past the name's bound of 256
        ("text", 42),  # text that is not a string
        ("extra", CANARY),  # an unknown field
    ],
)
def test_a_stored_message_the_model_refuses_is_unreadable_and_quotes_no_value(
    field: str, value: Any
) -> None:
    request = RunRequest.model_validate(request_dict(7, texts=[CANARY, "second " + CANARY]))
    raw = [m.model_dump(mode="json") for m in request.messages]
    raw[0][field] = value
    with pytest.raises(StoredRunUnreadable) as info:
        request_from_hash(stored(request, orjson.dumps(raw)))
    assert isinstance(info.value, StoreError)
    assert info.value.run_id == "r0123456789abcdef"
    assert f"0.{field}" in str(info.value)
    assert "canary" not in str(info.value)
    assert "peanuts" not in str(info.value)
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__


@pytest.mark.parametrize("cut", [0, 1, 30, "inside the text", -3])
def test_broken_stored_json_is_unreadable_and_quotes_none_of_it(cut: int | str) -> None:
    request = RunRequest.model_validate(request_dict(7, texts=[CANARY]))
    fields = stored(request)
    text = fields["messages"]
    end = text.index("peanuts") + 3 if cut == "inside the text" else int(cut)
    fields["messages"] = text[:end]
    with pytest.raises(StoredRunUnreadable) as info:
        request_from_hash(fields)
    assert "canary" not in str(info.value)
    assert "peanuts" not in str(info.value)


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


WORKER_SCRIPT = textwrap.dedent(
    """
    import asyncio, os, orjson
    from memory_worker.logs import configure
    from memory_worker.pipeline.ticks import Mode, TickPlan
    from memory_worker.runs import RunStore
    from memory_worker.settings import Settings
    from memory_worker.settings.types import reveal
    from memory_worker.storage.connections import client_from_url
    from memory_worker.wiring import build_tick_runner
    from memory_worker.worker.main import create_worker
    from tests.support.factories import make_request

    configure("INFO", "json")

    async def main():
        settings = Settings()
        redis = client_from_url(reveal(settings.redis_url) or "")
        store = RunStore(redis, settings)
        canary = os.environ["CANARY"]
        run_id = (await store.enqueue(make_request(4242, texts=[canary, "more"]))).run_id
        raw = orjson.loads(await redis.hget(store.keys.run(run_id), "messages"))
        raw[0]["sender_name"] = canary * 7  # a hand-edited hash: past the name's bound
        await redis.hset(store.keys.run(run_id), "messages", orjson.dumps(raw))
        worker = create_worker(settings, redis, burst=True, handle_signals=False)
        worker.cron_jobs = []
        pipeline = await build_tick_runner(settings, redis)
        await pipeline.ticks.schedule(TickPlan(Mode.AMPLIFY, base=1), target=1)
        await asyncio.wait_for(worker.async_run(), 30)
        await worker.close()
        for closer in pipeline.closers:
            await closer()

    asyncio.run(main())
    """
)


def test_a_worker_claiming_an_unreadable_run_logs_its_fields_not_its_text(
    settings: Settings, redis: Any
) -> None:
    """The production worker and log configuration: the tick's failure line (arq's) names
    the run and the field, and no stored value — the run's text — reaches the log."""
    env = os.environ | {
        "REDIS_URL": reveal(settings.redis_url) or "",
        "MEMORY_KEY_PREFIX": settings.key_prefix,
        "CANARY": CANARY,
    }
    done = subprocess.run(
        [sys.executable, "-c", WORKER_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    output = done.stdout + done.stderr
    assert "StoredRunUnreadable" in output
    assert "0.sender_name" in output
    assert "canary-codec" not in output
    assert "peanuts" not in output


READ_FIELDS = ("chat_id", "thread_id", "range_start", "range_end", "cursor", "messages")


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from(READ_FIELDS),
    junk=st.text(chars, min_size=1, max_size=40).filter(lambda t: not t.strip().isdigit()),
)
def test_any_field_overwritten_is_unreadable_naming_the_field_and_never_the_value(
    field: str, junk: str
) -> None:
    """Whatever a hand edit or a corruption leaves in a field the claim reads, the run is a
    ``StoredRunUnreadable`` (never a ``ValueError`` quoting it, as ``int()`` does) that names
    the field and quotes nothing of the stored value."""
    fields = stored(RunRequest.model_validate(request_dict(7, texts=[CANARY])))
    fields[field] = "\u2063" + junk + CANARY  # never a valid value of any field
    with pytest.raises(StoredRunUnreadable) as info:
        request_from_hash(fields)
    message = str(info.value)
    assert field in message
    assert "canary" not in message  # the stored value ends with it: none of it is quoted


@pytest.mark.parametrize("field", ["chat_id", "thread_id", "range_start", "range_end", "messages"])
def test_a_field_missing_is_unreadable(field: str) -> None:
    fields = stored(RunRequest.model_validate(request_dict(7)))
    del fields[field]
    with pytest.raises(StoredRunUnreadable, match=f"{field}: missing"):
        request_from_hash(fields)


# --- a run shown (runs show, runs list, the console), not claimed ------------------------------

SHOWN_FIELDS = ["status", "chat_id", "thread_id", "range_start", "range_end", "created_at"]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    field=st.sampled_from(SHOWN_FIELDS),
    junk=st.text(chars, min_size=1, max_size=40),
)
async def test_a_shown_run_with_any_field_corrupted_is_unreadable_not_a_crash(
    settings: Settings, redis: Any, field: str, junk: str
) -> None:
    """A hand-edited run hash made ``runs show`` raise ``int()``'s ValueError, quoting the
    value (and ``runs list`` with it, for every run). Now ``get`` is a ``StoredRunUnreadable``
    naming the field and quoting nothing, and a listing leaves the run out and shows the rest."""
    store = RunStore(redis, settings)
    stale = [k async for k in redis.scan_iter(match=f"*{settings.key_prefix}*", count=1000)]
    if stale:  # the example before's runs (this test's own prefix only: a shared server)
        await redis.delete(*stale)
    good = (await store.enqueue(RunRequest.model_validate(request_dict(1)))).run_id
    bad = (await store.enqueue(RunRequest.model_validate(request_dict(2)))).run_id
    assert bad is not None
    await redis.hset(store.keys.run(bad), field, "\u2063" + junk + CANARY)
    with pytest.raises(StoredRunUnreadable) as info:
        await store.get(bad)
    assert info.value.run_id == bad
    assert f"{field}: not a valid value" in str(info.value)
    assert "canary" not in str(info.value)
    assert [run.id for run in await store.list_runs()] == [good]
    await redis.hdel(store.keys.run(bad), field)
    with pytest.raises(StoredRunUnreadable, match=f"{field}: missing"):
        await store.get(bad)
