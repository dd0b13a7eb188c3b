"""§3 envelope decoding, pinned row by row (pure: no HTTP, no clock)."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from llm_client import (
    BackendUnavailable,
    CapacityUnavailable,
    DecodeError,
    EmptyResponse,
    LLMError,
    RequestError,
    UnknownStatus,
    Upstream,
    UpstreamResponse,
)
from llm_client._edge import b64decode, dumps
from llm_client._transport.envelope import (
    JobState,
    chat_result,
    decode_job_answer,
    embed_result,
    envelope_from_json,
    http_status_error,
    is_capacity_rejection,
    parse_envelope,
    resolve,
    submit_status_error,
)
from llm_client._transport.error_text import body_error_text, error_parts, error_text, leading_code

OUTAGE = (
    b'{"status":"JOB_STATE_FAILED","result":{"error":{"code":"UPSTREAM_ERROR",'
    b'"message":"[Errno -3] Temporary failure in name resolution"}}}'
)


def b64(data: bytes | str, *, urlsafe: bool = False, pad: bool = True) -> str:
    raw = data.encode() if isinstance(data, str) else data
    text = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()
    return text if pad else text.rstrip("=")


def succeeded(body: bytes, status_code: int = 200, **extra: Any) -> bytes:
    envelope = {
        "status": "JOB_STATE_SUCCEEDED",
        "id": "j1",
        "result": {"response": {"status_code": status_code, "body": b64(body)}},
        **extra,
    }
    return orjson.dumps(envelope)


def completion(content: Any) -> bytes:
    return orjson.dumps(
        {
            "id": "c1",
            "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 5},
        }
    )


# --- the real outage -----------------------------------------------------------------


def test_real_outage_json_is_backend_unavailable_with_exact_text() -> None:
    with pytest.raises(BackendUnavailable) as info:
        decode_job_answer(OUTAGE)
    assert str(info.value) == "UPSTREAM_ERROR: [Errno -3] Temporary failure in name resolution"
    assert info.value.code == "UPSTREAM_ERROR"


# --- id / status resolution ----------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "job_id", "status", "state"),
    [
        pytest.param(
            {"id": "a", "status": "JOB_STATE_QUEUED"},
            "a",
            "JOB_STATE_QUEUED",
            "queued",
            id="top-level",
        ),
        pytest.param(
            {"job_id": "b", "state": "running"},
            "b",
            "RUNNING",
            "running",
            id="job_id-state-lowercase",
        ),
        pytest.param(
            {"job_id": "b", "id": "a", "status": "x"}, "b", "X", "unknown", id="job_id-beats-id"
        ),
        pytest.param(
            {"job": {"job_id": "n", "state": "JOB_STATE_RUNNING"}},
            "n",
            "JOB_STATE_RUNNING",
            "running",
            id="nested-only",
        ),
        pytest.param(
            {"id": "top", "status": "QUEUED", "job": {"id": "nest", "state": "SUCCEEDED"}},
            "nest",
            "SUCCEEDED",
            "succeeded",
            id="nested-wins",
        ),
        pytest.param(
            {"id": "top", "status": "PENDING", "job": {"id": "  ", "state": ""}},
            "top",
            "PENDING",
            "queued",
            id="blank-nested-falls-back",
        ),
        pytest.param(
            {"id": "top", "status": "PENDING", "job": {"state": None}},
            "top",
            "PENDING",
            "queued",
            id="null-nested-falls-back",
        ),
        pytest.param(
            {"id": 42, "status": " Processing "},
            "42",
            "PROCESSING",
            "running",
            id="int-id-padded-status",
        ),
        pytest.param({"status": "done-ish"}, None, "DONE-ISH", "unknown", id="unknown-word"),
        pytest.param(
            {"job": "not-an-object", "id": "t", "status": "FAILED"},
            "t",
            "FAILED",
            "failed",
            id="job-not-object",
        ),
        pytest.param({}, None, "", "unknown", id="empty-object"),
    ],
)
def test_envelope_resolution(
    data: dict[str, Any], job_id: str | None, status: str, state: str
) -> None:
    envelope = envelope_from_json(data)
    assert envelope.job_id == job_id
    assert envelope.status == status
    assert envelope.state is JobState(state)


@pytest.mark.parametrize(
    ("word", "state"),
    [
        ("SUBMITTED", "queued"),
        ("JOB_STATE_QUEUED", "queued"),
        ("PENDING", "queued"),
        ("queued", "queued"),
        ("JOB_STATE_RUNNING", "running"),
        ("Running", "running"),
        ("processing", "running"),
        ("JOB_STATE_SUCCEEDED", "succeeded"),
        ("completed", "succeeded"),
        ("Succeeded", "succeeded"),
        ("success", "succeeded"),
        ("job_state_failed", "failed"),
        ("FAILED", "failed"),
        ("JOB_STATE_CANCELED", "cancelled"),
        ("JOB_STATE_CANCELLED", "cancelled"),
        ("canceled", "cancelled"),
        ("CANCELLED", "cancelled"),
        ("JOB_STATE_PAUSED", "unknown"),
    ],
)
def test_status_vocabulary_is_case_insensitive(word: str, state: str) -> None:
    assert envelope_from_json({"id": "j", "status": word}).state is JobState(state)


def test_nested_result_and_error_win_with_fallback() -> None:
    envelope = envelope_from_json(
        {"error": "top", "result": {"a": 1}, "job": {"error": "", "result": {"b": 2}}}
    )
    assert envelope.error == "top"
    assert envelope.result == {"b": 2}


# --- base64 bodies -------------------------------------------------------------------

PAYLOAD = bytes(range(256)) * 3 + b"\xfb\xff"  # exercises + / and - _ alphabets


@pytest.mark.parametrize(
    "encoded",
    [
        pytest.param(b64(PAYLOAD), id="standard"),
        pytest.param(b64(PAYLOAD, urlsafe=True), id="urlsafe"),
        pytest.param(b64(PAYLOAD, pad=False), id="standard-no-pad"),
        pytest.param(b64(PAYLOAD, urlsafe=True, pad=False), id="urlsafe-no-pad"),
        pytest.param(
            "\n".join(b64(PAYLOAD)[i : i + 76] for i in range(0, 1100, 76)), id="mime-wrapped"
        ),
    ],
)
def test_body_base64_variants_decode(encoded: str) -> None:
    assert b64decode(encoded, "t") == PAYLOAD


@pytest.mark.parametrize("bad", ["a", "ab!d", "é===", "abc=d"])
def test_bad_base64_is_decode_error(bad: str) -> None:
    with pytest.raises(DecodeError):
        b64decode(bad, "decode job response body")


def test_bad_base64_body_in_succeeded_envelope_is_decode_error() -> None:
    raw = orjson.dumps(
        {
            "status": "JOB_STATE_SUCCEEDED",
            "result": {"response": {"status_code": 200, "body": "@@"}},
        }
    )
    with pytest.raises(DecodeError):
        decode_job_answer(raw)


# --- error text extraction -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param("  boom  ", "boom", id="string-trimmed"),
        pytest.param({"message": "m", "error": "e"}, "m", id="message-first"),
        pytest.param({"error": "e", "detail": "d"}, "e", id="error-second"),
        pytest.param({"detail": "d", "code": "C"}, "d", id="detail-third"),
        pytest.param({"code": "C"}, "C", id="code-last"),
        pytest.param({"message": "", "detail": "d"}, "d", id="blank-skipped"),
        pytest.param({"error": {"message": "deep"}}, "deep", id="nested-error-message"),
        pytest.param({"error": {"error": {"detail": "deeper"}}}, "deeper", id="twice-nested"),
        pytest.param({"other": 1}, "{other:1}", id="raw-json-fallback"),
        pytest.param([1, 2], "[1,2]", id="list-raw"),
        pytest.param(503, "503", id="number"),
        pytest.param("", None, id="blank"),
        pytest.param({}, None, id="empty-object"),
        pytest.param(None, None, id="null"),
    ],
)
def test_error_text(value: Any, text: str | None) -> None:
    assert error_text(value) == text


@pytest.mark.parametrize(
    ("value", "parts"),
    [
        ({"code": "X", "message": "m"}, ("X", "m")),
        ({"code": "X"}, ("X", None)),
        ({"message": "m"}, (None, "m")),
        ("plain", (None, "plain")),
        ({"error": {"code": "SERVICE_DISABLED", "message": "off"}}, ("SERVICE_DISABLED", "off")),
        ({"code": "X", "error": {"message": "inner"}}, ("X", "inner")),
        (None, (None, None)),
    ],
)
def test_error_parts(value: Any, parts: tuple[str | None, str | None]) -> None:
    assert error_parts(value) == parts


def test_error_text_survives_very_deep_values() -> None:
    deep: Any = "x"
    for _ in range(900):
        deep = {"error": deep} if len(str(type(deep))) % 2 else {"nest": [deep]}
    assert isinstance(error_text(deep), str)
    assert len(error_text(deep) or "") <= 501


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b'{"error": {"message": "model loading"}}', "model loading"),
        (b'{"detail": "nope"}', "nope"),
        (b"plain text failure\n", "plain text failure"),
        (b"\xff\xfe broken", "\ufffd\ufffd broken"),
        (b"   ", None),
    ],
)
def test_body_error_text(body: bytes, text: str | None) -> None:
    assert body_error_text(body) == text


# --- failed / cancelled jobs -----------------------------------------------------------


@pytest.mark.parametrize(
    "code", ["UPSTREAM_ERROR", "SERVICE_NOT_FOUND", "SERVICE_DISABLED", "ENDPOINT_NOT_FOUND"]
)
def test_backend_never_reached_codes_are_backend_unavailable(code: str) -> None:
    raw = orjson.dumps(
        {
            "id": "j",
            "status": "JOB_STATE_FAILED",
            "result": {"error": {"code": code, "message": "m"}},
        }
    )
    with pytest.raises(BackendUnavailable) as info:
        decode_job_answer(raw)
    assert str(info.value) == f"{code}: m"
    assert info.value.code == code


@pytest.mark.parametrize("code", ["UPSTREAM_TIMEOUT", "INTERNAL", "SOMETHING_NEW_42"])
def test_other_codes_are_upstream(code: str) -> None:
    raw = orjson.dumps(
        {"id": "j", "status": "FAILED", "result": {"error": {"code": code, "message": "m"}}}
    )
    with pytest.raises(Upstream) as info:
        decode_job_answer(raw)
    assert not isinstance(info.value, BackendUnavailable)
    assert str(info.value) == f"{code}: m"
    assert info.value.code == code


@pytest.mark.parametrize(
    ("envelope", "error_type", "text"),
    [
        pytest.param(
            {"id": "j", "status": "JOB_STATE_FAILED"},
            Upstream,
            "job failed without an error report (job j)",
            id="bare",
        ),
        pytest.param(
            {"id": "j", "status": "JOB_STATE_FAILED", "error": "top-level text"},
            Upstream,
            "top-level text",
            id="top-level-string",
        ),
        pytest.param(
            {"status": "FAILED", "error": {"code": "SERVICE_DISABLED", "message": "off"}},
            BackendUnavailable,
            "SERVICE_DISABLED: off",
            id="top-level-object-with-code",
        ),
        pytest.param(
            {
                "status": "FAILED",
                "error": "top",
                "result": {"error": {"code": "UPSTREAM_TIMEOUT", "message": "slow"}},
            },
            Upstream,
            "UPSTREAM_TIMEOUT: slow",
            id="result-error-beats-top-level",
        ),
        pytest.param(
            {"status": "FAILED", "error": "top", "result": {"error": {}}},
            Upstream,
            "top",
            id="blank-result-error-falls-back",
        ),
        pytest.param(
            {"status": "FAILED", "result": {"error": {"code": "upstream_error"}}},
            BackendUnavailable,
            "upstream_error: job failed",
            id="code-only-case-insensitive",
        ),
        pytest.param(
            {"status": "FAILED", "result": {"error": "just text"}},
            Upstream,
            "just text",
            id="result-error-string",
        ),
        pytest.param(
            {"id": "j", "status": "JOB_STATE_CANCELLED"},
            Upstream,
            "job j was cancelled",
            id="cancelled",
        ),
        pytest.param(
            {"id": "j", "status": "canceled", "error": "by farm"},
            Upstream,
            "job j was cancelled: by farm",
            id="cancelled-with-reason",
        ),
    ],
)
def test_failed_and_cancelled_jobs(
    envelope: dict[str, Any], error_type: type[LLMError], text: str
) -> None:
    with pytest.raises(error_type) as info:
        decode_job_answer(orjson.dumps(envelope))
    assert type(info.value) is error_type
    assert str(info.value) == text


# --- §3: cancelled like failed, string errors, farm-level codes ----------------------------

REV2_ROWS = [
    pytest.param(
        {
            "id": "j",
            "status": "JOB_STATE_CANCELLED",
            "result": {"error": {"code": "UPSTREAM_ERROR", "message": "dns"}},
        },
        BackendUnavailable,
        "UPSTREAM_ERROR",
        "job j was cancelled: UPSTREAM_ERROR: dns",
        id="cancelled-upstream-error",
    ),
    pytest.param(
        {"id": "j", "status": "CANCELED", "error": {"code": "SERVICE_DISABLED"}},
        BackendUnavailable,
        "SERVICE_DISABLED",
        "job j was cancelled: SERVICE_DISABLED",
        id="cancelled-top-level-code",
    ),
    pytest.param(
        {"id": "j", "status": "CANCELLED", "error": "UPSTREAM_ERROR: backend gone"},
        BackendUnavailable,
        "UPSTREAM_ERROR",
        "job j was cancelled: UPSTREAM_ERROR: backend gone",
        id="cancelled-string-code",
    ),
    pytest.param(
        {
            "id": "j",
            "status": "CANCELLED",
            "result": {"error": {"code": "UPSTREAM_TIMEOUT", "message": "slow"}},
        },
        Upstream,
        "UPSTREAM_TIMEOUT",
        "job j was cancelled: UPSTREAM_TIMEOUT: slow",
        id="cancelled-other-code",
    ),
    pytest.param(
        {"id": "j", "status": "CANCELLED"},
        Upstream,
        "JOB_CANCELLED",
        "job j was cancelled",
        id="cancelled-bare",
    ),
    pytest.param(
        {
            "status": "JOB_STATE_FAILED",
            "error": "UPSTREAM_ERROR: [Errno -3] Temporary failure in name resolution",
        },
        BackendUnavailable,
        "UPSTREAM_ERROR",
        "UPSTREAM_ERROR: [Errno -3] Temporary failure in name resolution",
        id="string-top-level",
    ),
    pytest.param(
        {"status": "FAILED", "result": {"error": "SERVICE_NOT_FOUND: no such service"}},
        BackendUnavailable,
        "SERVICE_NOT_FOUND",
        "SERVICE_NOT_FOUND: no such service",
        id="string-result-error",
    ),
    pytest.param(
        {"status": "FAILED", "result": {"error": {"message": "ENDPOINT_NOT_FOUND: encode"}}},
        BackendUnavailable,
        "ENDPOINT_NOT_FOUND",
        "ENDPOINT_NOT_FOUND: encode",
        id="message-with-leading-code",
    ),
    pytest.param(
        {"status": "FAILED", "error": "UPSTREAM_ERROR"},
        BackendUnavailable,
        "UPSTREAM_ERROR",
        "UPSTREAM_ERROR: job failed",
        id="string-code-only",
    ),
    pytest.param(
        {"status": "FAILED", "error": "UPSTREAM_TIMEOUT: took too long"},
        Upstream,
        "UPSTREAM_TIMEOUT",
        "UPSTREAM_TIMEOUT: took too long",
        id="string-other-code",
    ),
    pytest.param(
        {"status": "FAILED", "error": "Error: UPSTREAM_ERROR later in the text"},
        Upstream,
        None,
        "Error: UPSTREAM_ERROR later in the text",
        id="code-not-leading-is-text",
    ),
    pytest.param(
        {"status": "FAILED", "error": "NOTE: prose, not a code"},
        Upstream,
        None,
        "NOTE: prose, not a code",
        id="single-word-is-not-a-code",
    ),
    pytest.param(
        {"error": "UPSTREAM_ERROR: no status at all"},
        BackendUnavailable,
        "UPSTREAM_ERROR",
        "UPSTREAM_ERROR: no status at all",
        id="no-status-string-code",
    ),
]


@pytest.mark.parametrize(("envelope", "error_type", "code", "text"), REV2_ROWS)
def test_rev2_failure_decoding(
    envelope: dict[str, Any], error_type: type[LLMError], code: str | None, text: str
) -> None:
    with pytest.raises(LLMError) as info:
        decode_job_answer(orjson.dumps(envelope))
    assert type(info.value) is error_type
    assert info.value.code == code
    assert str(info.value) == text


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("UPSTREAM_ERROR: dns", ("UPSTREAM_ERROR", "dns")),
        ("  SERVICE_NOT_FOUND :x: y ", ("SERVICE_NOT_FOUND", "x: y")),
        ("UPSTREAM_ERROR", ("UPSTREAM_ERROR", None)),
        ("UPSTREAM_ERROR:\nline two", ("UPSTREAM_ERROR", "line two")),
        ("upstream_error: lower case prose", (None, "upstream_error: lower case prose")),
        ("ERROR: one word", (None, "ERROR: one word")),
        ("HTTP 500", (None, "HTTP 500")),
    ],
)
def test_leading_code(text: str, parts: tuple[str | None, str | None]) -> None:
    assert leading_code(text) == parts


def test_bare_failure_says_job_failed() -> None:
    with pytest.raises(Upstream, match="job failed"):
        decode_job_answer(b'{"status": "JOB_STATE_FAILED"}')


# --- succeeded / pending / unknown ----------------------------------------------------


def test_pending_states_mean_keep_polling() -> None:
    for status in ("JOB_STATE_QUEUED", "RUNNING", "submitted", "processing"):
        assert decode_job_answer(orjson.dumps({"id": "j", "status": status})) is None


def test_succeeded_returns_decoded_response_with_job_id() -> None:
    response = decode_job_answer(succeeded(b'{"ok": true}'))
    assert response == UpstreamResponse(200, b'{"ok": true}', "application/json", "j1")


def test_succeeded_with_upstream_error_status_carries_status_and_text() -> None:
    with pytest.raises(Upstream) as info:
        decode_job_answer(succeeded(b'{"error": {"message": "model loading"}}', status_code=503))
    assert str(info.value) == "upstream returned status 503: model loading"
    assert info.value.status_code == 503


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(succeeded(b""), id="empty-body"),
        pytest.param(b'{"status": "SUCCEEDED"}', id="no-result"),
        pytest.param(
            b'{"status": "SUCCEEDED", "result": {"response": {"status_code": 200}}}', id="no-body"
        ),
    ],
)
def test_succeeded_without_body_is_empty_response(raw: bytes) -> None:
    with pytest.raises(EmptyResponse, match="response body is empty"):
        decode_job_answer(raw)


def test_unknown_status_with_2xx_response_is_done() -> None:
    raw = orjson.dumps(
        {"status": "DONE", "result": {"response": {"status_code": 200, "body": b64("x")}}}
    )
    assert decode_job_answer(raw) == UpstreamResponse(200, b"x", "application/json", None)


@pytest.mark.parametrize(
    ("data", "error_type"),
    [
        pytest.param({"id": "j", "status": "DONE"}, UnknownStatus, id="unknown-no-response"),
        pytest.param(
            {"status": "DONE", "result": {"response": {"status_code": 500, "body": b64("x")}}},
            UnknownStatus,
            id="unknown-5xx",
        ),
        pytest.param({"id": "j"}, DecodeError, id="no-status"),
        pytest.param({"error": "submit refused"}, Upstream, id="no-status-but-error"),
        pytest.param(
            {"status": "SUCCEEDED", "result": {"response": {"status_code": "abc", "body": ""}}},
            DecodeError,
            id="bad-status-code",
        ),
        pytest.param(
            {"status": "SUCCEEDED", "result": {"response": {"status_code": 200, "body": 5}}},
            DecodeError,
            id="body-not-text",
        ),
    ],
)
def test_unusable_envelopes(data: dict[str, Any], error_type: type[LLMError]) -> None:
    with pytest.raises(error_type):
        decode_job_answer(orjson.dumps(data))


@pytest.mark.parametrize("raw", [b"<html>oops</html>", b"[1, 2]", b"", b'"text"', b"null", b"{"])
def test_undecodable_envelope_is_decode_error(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        parse_envelope(raw)


def test_resolve_accepts_numeric_status_code_variants() -> None:
    for code in (200, 200.0, "200", None, 0):
        envelope = envelope_from_json(
            {"status": "SUCCEEDED", "result": {"response": {"status_code": code, "body": b64("x")}}}
        )
        response = resolve(envelope)
        assert response is not None
        assert response.status_code == 200


# --- the farm's own HTTP status answers --------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "capacity"),
    [
        (429, b'{"error": "no slots available"}', True),
        (503, b'{"error": "service capacity unavailable"}', True),
        (503, b"No Slot free", True),
        (429, b'{"error": {"message": "Capacity exhausted"}}', True),
        (500, b'{"error": "capacity exceeded"}', False),
        (503, b'{"error": "upstream unavailable"}', False),
        (429, b'{"error": "rate limited"}', False),
        (502, b'{"error": "no slots"}', False),
    ],
)
def test_capacity_rejections(status: int, body: bytes, capacity: bool) -> None:
    assert is_capacity_rejection(status, body_error_text(body)) is capacity
    error = submit_status_error(status, body)
    assert isinstance(error, CapacityUnavailable) is capacity
    assert isinstance(error, Upstream) is not capacity
    assert str(error).startswith(f"submit: status {status}: ")


def test_non_capacity_submit_status_text() -> None:
    error = submit_status_error(503, b'{"error": "upstream unavailable"}')
    assert isinstance(error, Upstream)
    assert str(error) == "submit: status 503: upstream unavailable"
    assert error.status_code == 503


FARM_CODE_ROWS = [
    pytest.param(
        404,
        b'{"code": "SERVICE_NOT_FOUND", "message": "no service llm-x"}',
        BackendUnavailable,
        "SERVICE_NOT_FOUND",
        "submit: status 404: SERVICE_NOT_FOUND: no service llm-x",
        id="404-service-not-found",
    ),
    pytest.param(
        404,
        b'{"error": {"code": "ENDPOINT_NOT_FOUND", "message": "encode"}}',
        BackendUnavailable,
        "ENDPOINT_NOT_FOUND",
        "submit: status 404: ENDPOINT_NOT_FOUND: encode",
        id="404-nested-code",
    ),
    pytest.param(
        503,
        b'{"code": "SERVICE_DISABLED"}',
        BackendUnavailable,
        "SERVICE_DISABLED",
        "submit: status 503: SERVICE_DISABLED",
        id="503-code-only",
    ),
    pytest.param(
        502,
        b"UPSTREAM_ERROR: connection refused",
        BackendUnavailable,
        "UPSTREAM_ERROR",
        "submit: status 502: UPSTREAM_ERROR: connection refused",
        id="text-body-code",
    ),
    pytest.param(
        400,
        b'{"code": "INVALID_ARGUMENT", "message": "bad body"}',
        Upstream,
        "INVALID_ARGUMENT",
        "submit: status 400: INVALID_ARGUMENT: bad body",
        id="other-code-is-upstream",
    ),
    pytest.param(
        429,
        b'{"error": {"code": 429, "message": "no slots available"}}',
        CapacityUnavailable,
        "HTTP_429",
        "submit: status 429: no slots available",
        id="numeric-code-is-not-a-farm-code",
    ),
    pytest.param(
        404,
        b'{"error": "job not found"}',
        Upstream,
        "HTTP_404",
        "submit: status 404: job not found",
        id="no-code",
    ),
]


@pytest.mark.parametrize(("status", "body", "error_type", "code", "text"), FARM_CODE_ROWS)
def test_farm_level_answers_are_decoded_by_their_code(
    status: int, body: bytes, error_type: type[LLMError], code: str, text: str
) -> None:
    error = submit_status_error(status, body)
    assert type(error) is error_type
    assert error.code == code
    assert str(error) == text


def test_poll_answer_with_a_code_is_decoded_by_it() -> None:
    error = http_status_error("poll job j", 404, b'{"code": "SERVICE_NOT_FOUND"}')
    assert type(error) is BackendUnavailable
    assert str(error) == "poll job j: status 404: SERVICE_NOT_FOUND"


def test_poll_status_is_never_capacity() -> None:
    error = http_status_error("poll job j", 429, b'{"error": "no slots available"}')
    assert type(error) is Upstream
    assert str(error) == "poll job j: status 429: no slots available"


# --- chat completions ----------------------------------------------------------------


def ok(body: bytes) -> UpstreamResponse:
    return UpstreamResponse(200, body, job_id="j9")


def test_chat_result_decodes_completion() -> None:
    result = chat_result(ok(completion("hello")))
    assert (result.content, result.model, result.prompt_tokens, result.completion_tokens) == (
        "hello",
        "m",
        3,
        5,
    )
    assert result.job_id == "j9"


def test_chat_result_accepts_content_parts_and_tool_call_arguments() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert chat_result(ok(completion(parts))).content == "ab"
    tool = {
        "index": 0,
        "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"function": {"name": "f", "arguments": '{"x":1}'}}],
        },
    }
    body = orjson.dumps({"choices": [tool]})
    assert chat_result(ok(body)).content == '{"x":1}'


@pytest.mark.parametrize(
    ("body", "error_type"),
    [
        pytest.param(b"", EmptyResponse, id="empty"),
        pytest.param(completion(""), EmptyResponse, id="empty-content"),
        pytest.param(completion(None), EmptyResponse, id="null-content"),
        pytest.param(b"not json", DecodeError, id="not-json"),
        pytest.param(b"[]", DecodeError, id="array"),
        pytest.param(b'{"choices": []}', DecodeError, id="no-choices"),
        pytest.param(b'{"choices": [1]}', DecodeError, id="choice-not-object"),
        pytest.param(
            b'{"error": {"message": "bad model", "code": 400}}', Upstream, id="error-in-200"
        ),
    ],
)
def test_chat_result_errors(body: bytes, error_type: type[LLMError]) -> None:
    with pytest.raises(error_type):
        chat_result(ok(body))


# --- embeddings ----------------------------------------------------------------------


def embeddings(vectors: list[list[Any]], **override: Any) -> UpstreamResponse:
    data = {
        "embeddings": vectors,
        "dimension": len(vectors[0]) if vectors else 0,
        "count": len(vectors),
    }
    return ok(orjson.dumps(data | override))


def test_embed_result_decodes_in_order() -> None:
    result = embed_result(embeddings([[1, 0.5], [0, -1]]), count=2, dimension=2)
    assert result.embeddings == [[1.0, 0.5], [0.0, -1.0]]
    assert {type(x) for vector in result.embeddings for x in vector} == {float}  # ints too
    assert (result.dimension, result.job_id) == (2, "j9")


@pytest.mark.parametrize(
    ("response", "count", "dimension"),
    [
        pytest.param(embeddings([[1.0, 2.0]]), 2, 2, id="fewer-vectors"),
        pytest.param(embeddings([[1.0, 2.0]], count=3), 1, 2, id="count-disagrees"),
        pytest.param(embeddings([[1.0, 2.0]], dimension=3), 1, 2, id="dimension-field-disagrees"),
        pytest.param(embeddings([[1.0, 2.0, 3.0]], dimension=2), 1, 2, id="vector-too-long"),
        pytest.param(embeddings([[1.0, "x"]]), 1, 2, id="non-number"),
        pytest.param(embeddings([[True, 1.0]]), 1, 2, id="bool-is-not-a-number"),
        pytest.param(embeddings([[1, None]]), 1, 2, id="null-is-not-a-number"),
        pytest.param(ok(b'{"embeddings": "no"}'), 1, 2, id="not-a-list"),
        pytest.param(ok(b"{"), 1, 2, id="not-json"),
    ],
)
def test_embed_result_mismatches_are_decode_errors(
    response: UpstreamResponse, count: int, dimension: int
) -> None:
    with pytest.raises(DecodeError):
        embed_result(response, count=count, dimension=dimension)


def test_unserialisable_request_is_request_error() -> None:
    with pytest.raises(RequestError):
        dumps({"x": object()}, "encode request")
