"""Run requests are a trust boundary (§7, §13): whatever a bot hands ``MemoryQueue.enqueue``,
either ``InvalidRunRequest`` with nothing stored, or a stored run that reads back equal —
never another exception, and never the message text in the error.

Two properties over arbitrary JSON-ish requests (:func:`requests`): wholly arbitrary JSON
values and bytes, and valid requests bent by a few mutations (a field set to any JSON value,
dropped or added, ids past 64 bits, times at and past the supported range, duplicate ids,
lone surrogates, swapped windows), each handed over as a dict, JSON bytes or JSON text.
Every text a message carries holds a canary, and no error may contain it.

- **parse** (:data:`PARSE_EXAMPLES` examples, no Redis): ``parse_run_request`` returns a
  ``RunRequest`` or raises ``InvalidRunRequest``; an accepted request encodes to at least
  ``MEMORY_MAX_RUN_BYTES``'s floor (the smallest valid run);
- **enqueue on a real Valkey** (:data:`STORE_EXAMPLES` examples, each under a fresh key
  prefix, with small size limits so the store's own checks refuse some too):
  ``MemoryQueue.enqueue`` refuses with no key written under the prefix, or stores a run
  within the limits whose claim reads back the request field for field (offsets included).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from llm_client import as_text
from memory_worker.api import MemoryQueue
from memory_worker.errors import InvalidRunRequest
from memory_worker.models import INT64_MAX, INT64_MIN, RunRequest, parse_run_request
from memory_worker.runs.codec import request_from_hash
from memory_worker.settings import Settings
from memory_worker.settings.runs import SMALLEST_RUN_BYTES
from memory_worker.storage.connections import RedisHandle, client_from_url

PARSE_EXAMPLES = 400
STORE_EXAMPLES = 60

CANARY = "CANARY-req-5e1d I am allergic to peanuts"
START = datetime(2026, 11, 1, tzinfo=UTC)

#: Any Unicode, lone surrogates included (a Python caller can hand them over), and without.
ANY_CHARS = st.characters()
VALID_CHARS = st.characters(exclude_categories=["Cs"])


def canary_texts(chars: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(lambda a, b: f"{a}{CANARY}{b}", st.text(chars, max_size=20),
                     st.text(chars, max_size=20))  # fmt: skip


texts = canary_texts(ANY_CHARS)
valid_texts = canary_texts(VALID_CHARS)
big_ints = st.one_of(
    st.integers(INT64_MIN, INT64_MAX),
    st.sampled_from([INT64_MIN - 1, INT64_MAX + 1, 2**80, -(2**80), -1, 0]),
)
offsets = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(lambda m: timezone(timedelta(minutes=m)))
times = st.one_of(
    st.datetimes(datetime(1960, 1, 1), datetime(2300, 1, 1), timezones=st.just(UTC))
    .flatmap(lambda t: offsets.map(lambda tz: t.astimezone(tz).isoformat())),
    st.sampled_from(["1970-01-01T00:00:00Z", "2199-12-31T23:59:59.999999Z", "2200-01-01T00:00:00Z",
                     "2026-11-01T00:00:00", "2026-11-01", "9999-12-31T23:59:59-05:00", "",
                     "2026-11-01T00:00:00.1234567+14:00", "2026-13-01T00:00:00Z"]),
    st.integers(0, 2**40),
)  # fmt: skip
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), big_ints, st.floats(), st.text(ANY_CHARS, max_size=10),
              texts, times),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(ANY_CHARS, max_size=8), inner, max_size=3),
    ),
    max_leaves=8,
)  # fmt: skip
MESSAGE_FIELDS = ["message_id", "user_id", "sender_name", "is_bot", "is_forward", "text", "sent_at"]
REQUEST_FIELDS = ["chat_id", "thread_id", "range_start", "range_end", "prompt_version", "cursor",
                  "messages"]  # fmt: skip


@st.composite
def valid_requests(draw: st.DrawFn) -> dict[str, Any]:
    """A request the model accepts, at the edges of what it accepts."""
    count = draw(st.integers(1, 4))
    ids = draw(st.lists(st.integers(0, INT64_MAX), min_size=count, max_size=count, unique=True))
    start = START + timedelta(seconds=draw(st.integers(-(10**9), 10**9)))
    messages = [
        {
            "message_id": i,
            "user_id": draw(st.integers(INT64_MIN, INT64_MAX)),
            "sender_name": draw(st.one_of(valid_texts, st.just(""))),
            "is_bot": draw(st.booleans()),
            "is_forward": draw(st.booleans()),
            "text": draw(valid_texts),
            "sent_at": (start + timedelta(microseconds=draw(st.integers(0, 3_600_000_000))))
            .astimezone(draw(offsets))
            .isoformat(),
        }
        for i in ids
    ]
    data: dict[str, Any] = {
        "chat_id": draw(st.integers(INT64_MIN, INT64_MAX)),
        "range_start": start.astimezone(draw(offsets)).isoformat(),
        "range_end": (start + timedelta(hours=1, microseconds=1)).astimezone(draw(offsets))
        .isoformat(),
        "messages": messages,
    }  # fmt: skip
    if draw(st.booleans()):
        data["thread_id"] = draw(st.integers(0, INT64_MAX))
    if draw(st.booleans()):
        data["prompt_version"] = draw(st.text(VALID_CHARS, min_size=1, max_size=64))
    if draw(st.booleans()):
        data["cursor"] = {"after_sent_at": start.isoformat(),
                          "after_message_id": draw(st.integers(0, INT64_MAX))}  # fmt: skip
    return data


def _mutations(draw: st.DrawFn, data: dict[str, Any]) -> None:
    """Bend ``data`` in place, a few times."""
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["set", "drop", "extra", "message", "duplicate", "swap"]))
        messages = data.get("messages")
        if kind == "set":
            data[draw(st.sampled_from(REQUEST_FIELDS))] = draw(json_values)
        elif kind == "drop" and data:
            data.pop(draw(st.sampled_from(sorted(data))), None)
        elif kind == "extra":
            data[draw(st.text(ANY_CHARS, max_size=8))] = draw(json_values)
        elif isinstance(messages, list) and messages and isinstance(messages[0], dict):
            message = messages[draw(st.integers(0, len(messages) - 1))]
            if not isinstance(message, dict):
                continue
            if kind == "message":
                field = draw(st.sampled_from([*MESSAGE_FIELDS, "extra"]))
                message[field] = draw(st.one_of(json_values, big_ints, times, texts))
            elif kind == "duplicate":
                messages.append(dict(message))
            elif kind == "swap":
                data["range_start"], data["range_end"] = (
                    data.get("range_end"),
                    data.get("range_start"),
                )


@st.composite
def requests(draw: st.DrawFn, valid: int = 1) -> Any:
    """Any JSON-ish run request, as a dict, JSON bytes, JSON text or raw bytes; ``valid`` in
    four start valid and stay so (the rest are bent, or anything at all)."""
    shape = draw(st.sampled_from(["valid"] * valid + ["bent"] * (3 - valid) + ["anything"]))
    if shape == "anything":
        data: Any = draw(json_values)
    else:
        data = draw(valid_requests())
        if shape == "bent":
            _mutations(draw, data)
    form = draw(st.sampled_from(["dict", "bytes", "text"] + ["raw"] * (shape != "valid")))
    if form == "dict" or not isinstance(data, dict | list):
        return data
    if form == "raw":
        return draw(st.binary(max_size=64))
    try:
        encoded = orjson.dumps(data)
    except TypeError:  # surrogates, ints past 64 bits: only a dict can carry them
        return data
    return encoded if form == "bytes" else encoded.decode()


def assert_refusal_is_safe(error: InvalidRunRequest) -> None:
    text = str(error)
    assert error.problems, text
    assert "CANARY" not in text, text
    assert "peanuts" not in text, text
    assert error.__cause__ is None


@settings(max_examples=PARSE_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=requests())
def test_any_request_parses_or_is_one_safe_typed_error(raw: Any) -> None:
    try:
        parsed = parse_run_request(raw)
    except InvalidRunRequest as error:
        assert_refusal_is_safe(error)
        event("refused")
        return
    assert isinstance(parsed, RunRequest)
    assert len(parsed.messages_json()) >= SMALLEST_RUN_BYTES
    event("accepted")


#: Small limits (a message's canary text is 41 to 81 characters), so the store's own size
#: checks refuse some of the requests the model accepts.
MAX_MESSAGE_CHARS, MAX_RUN_MESSAGES, MAX_RUN_BYTES = 70, 3, 4000


def _shown(request: RunRequest) -> dict[str, Any]:
    """A request as JSON data (times with their offsets), the prompt version aside."""
    return request.model_dump(mode="json", exclude={"prompt_version"})


async def _enqueue_and_read_back(redis_url: str, raw: Any) -> str:
    prefix = f"rq{uuid.uuid4().hex[:10]}:"
    settings = Settings(
        redis_url=redis_url,
        key_prefix=prefix,
        max_message_chars=MAX_MESSAGE_CHARS,
        max_run_messages=MAX_RUN_MESSAGES,
        max_run_bytes=MAX_RUN_BYTES,
    )
    client: Any = client_from_url(redis_url)
    queue = MemoryQueue(RedisHandle(client=client, url=redis_url), settings)
    try:
        try:
            result = await queue.enqueue(raw)
        except InvalidRunRequest as error:
            assert_refusal_is_safe(error)
            assert [k async for k in client.scan_iter(match=f"{prefix}*")] == []
            return "refused"
        assert result.run_id is not None
        request = parse_run_request(raw)
        assert len(request.messages) <= MAX_RUN_MESSAGES  # stored: within the store's limits
        assert all(len(m.text) <= MAX_MESSAGE_CHARS for m in request.messages)
        assert len(request.messages_json()) <= MAX_RUN_BYTES
        if request.prompt_version in (None, settings.prompt_version):  # a worker claims it
            claim = await queue.store.claim("w-props")
            assert claim is not None
            back = claim.request
        else:  # another version's run is left for its workers: read as their claim would
            stored = await client.hgetall(queue.keys.run(result.run_id))
            back = request_from_hash({as_text(k): as_text(v) for k, v in stored.items()})
        assert _shown(back) == _shown(request)
        assert back.prompt_version == (request.prompt_version or settings.prompt_version)
        return "stored"
    finally:
        keys = [k async for k in client.scan_iter(match=f"*{prefix}*", count=1000)]
        if keys:
            await client.delete(*keys)
        await client.aclose()


@settings(
    max_examples=STORE_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(raw=requests(valid=2))
def test_enqueue_on_a_real_server_stores_nothing_or_reads_back_equal(
    raw: Any, redis_url: str
) -> None:
    event(asyncio.run(_enqueue_and_read_back(redis_url, raw)))
