"""Property: whatever the farm sends, the pure decoder answers a value or an ``llm_client`` error.

Random envelopes (statuses, ids, nesting, codes, error shapes, response
status codes of any type, bodies in every base64 flavour or broken), random
JSON and random bytes all go through ``decode_job_answer`` and, when that
yields a response, through the chat and embedding decoders too. Any other
exception type escaping is a bug in the decoder.
"""

from __future__ import annotations

import base64
import contextlib

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_client import LLMError, UpstreamResponse
from llm_client._transport.envelope import (
    STATUS_STATES,
    chat_result,
    decode_job_answer,
    embed_result,
    submit_status_error,
)
from llm_client._transport.error_text import body_error_text

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
any_json = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)

statuses = (
    st.sampled_from(sorted(STATUS_STATES))
    | st.sampled_from(sorted(STATUS_STATES)).map(str.lower)
    | st.text(max_size=12)
    | any_json
)
codes = (
    st.sampled_from(
        [
            *("UPSTREAM_ERROR", "SERVICE_NOT_FOUND", "SERVICE_DISABLED", "ENDPOINT_NOT_FOUND"),
            *("UPSTREAM_TIMEOUT", "INTERNAL", "upstream_error", ""),
        ]
    )
    | st.text(max_size=10)
    | any_json
)
errors = any_json | st.fixed_dictionaries(
    {}, optional={"code": codes, "message": any_json, "error": any_json, "detail": any_json}
)


def _encode(raw: bytes, flavour: int) -> str:
    if flavour == 0:
        return base64.b64encode(raw).decode()
    if flavour == 1:
        return base64.urlsafe_b64encode(raw).decode()
    return base64.b64encode(raw).decode().rstrip("=")


completion_bodies = st.builds(
    lambda content, extra: orjson.dumps(
        {"choices": [{"message": {"role": "assistant", "content": content}}], **extra}
    ),
    any_json,
    st.dictionaries(st.sampled_from(["usage", "model", "error"]), any_json, max_size=2),
)
embedding_bodies = st.builds(
    lambda vectors, dimension, count: orjson.dumps(
        {"embeddings": vectors, "dimension": dimension, "count": count}
    ),
    st.lists(st.lists(st.floats(allow_nan=False, allow_infinity=False) | any_json, max_size=3)),
    json_scalars,
    json_scalars,
)
inner_bodies = completion_bodies | embedding_bodies | st.binary(max_size=40)
bodies = (
    st.builds(_encode, inner_bodies, st.integers(0, 2))
    | st.text(max_size=20)  # mostly broken base64
    | any_json
)
responses = st.fixed_dictionaries(
    {},
    optional={
        "status_code": st.integers(-1, 700) | any_json,
        "body": bodies,
        "content_type": any_json,
    },
)
results = st.fixed_dictionaries({}, optional={"response": responses | any_json, "error": errors})
fields = st.fixed_dictionaries(
    {},
    optional={
        "id": any_json,
        "job_id": any_json,
        "status": statuses,
        "state": statuses,
        "error": errors,
        "result": results | any_json,
    },
)
envelopes = st.builds(
    lambda top, nested, nest: {**top, "job": nested} if nest else top,
    fields,
    fields | any_json,
    st.booleans(),
)
plausible = st.builds(
    lambda status, code, body, flavour, nest: orjson.dumps(
        (lambda job: {"job": job} if nest else job)(
            {
                "id": "j",
                "status": status,
                "result": {"response": {"status_code": code, "body": _encode(body, flavour)}},
            }
        )
    ),
    st.sampled_from(sorted(STATUS_STATES)),
    st.sampled_from([200, 201, 204, 400, 503]),
    inner_bodies,
    st.integers(0, 2),
    st.booleans(),
)
answers = (
    plausible
    | plausible
    | envelopes.map(orjson.dumps)
    | any_json.map(orjson.dumps)
    | st.binary(max_size=60)
    | envelopes.map(lambda e: orjson.dumps(e)[: len(orjson.dumps(e)) // 2])
)


def _decode_all(raw: bytes) -> None:
    response = decode_job_answer(raw)
    if response is None:
        return
    assert isinstance(response, UpstreamResponse)
    with contextlib.suppress(LLMError):
        chat_result(response)
    with contextlib.suppress(LLMError):
        embed_result(response, count=1, dimension=2)


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(answers)
def test_any_farm_answer_decodes_to_a_value_or_a_typed_error(raw: bytes) -> None:
    with contextlib.suppress(LLMError):
        _decode_all(raw)


@settings(max_examples=200)
@given(st.integers(100, 599), st.binary(max_size=60) | any_json.map(orjson.dumps))
def test_any_status_answer_maps_to_a_typed_error(status: int, body: bytes) -> None:
    error = submit_status_error(status, body)
    assert isinstance(error, LLMError)
    assert str(error).startswith(f"submit: status {status}")
    text = body_error_text(body)
    assert text is None or len(text) <= 501


@settings(max_examples=200)
@given(inner_bodies)
def test_any_inner_body_decodes_to_a_value_or_a_typed_error(body: bytes) -> None:
    response = UpstreamResponse(200, body)
    for count, dimension in ((0, 0), (1, 2), (2, 3)):
        with contextlib.suppress(LLMError):
            embed_result(response, count=count, dimension=dimension)
    with contextlib.suppress(LLMError):
        chat_result(response)
