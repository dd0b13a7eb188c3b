"""§4 retry classifier, pinned row by row."""

from __future__ import annotations

import pytest

from llm_client import (
    AllCircuitsOpen,
    BackendUnavailable,
    CapacityUnavailable,
    CapacityWaitExpired,
    CapacityWaitTimeout,
    DeadlineExceeded,
    DecodeError,
    EmptyResponse,
    Exhausted,
    FailureReason,
    NoCandidates,
    RequestError,
    RequestTimeout,
    RouteUnavailable,
    TaskTimeout,
    Transport,
    Upstream,
    retryable_reason,
)
from llm_client._retry.classify import (
    PHRASE_RULES,
    REJECT_PHRASES,
    STATUS_RULES,
    WHOLE_WORDS,
    reason_from_message,
    reason_from_status,
)

R = FailureReason


def test_backend_unavailable_is_unavailable_without_any_phrase() -> None:
    err = BackendUnavailable("SERVICE_NOT_FOUND: nothing here matches", code="SERVICE_NOT_FOUND")
    assert reason_from_message(str(err)) is None  # the text alone would not retry
    assert retryable_reason(err) is R.PROVIDER_UNAVAILABLE


def test_transport_is_unavailable_even_when_text_says_timed_out() -> None:
    assert retryable_reason(Transport("read timed out")) is R.PROVIDER_UNAVAILABLE
    assert retryable_reason(Transport("zzz")) is R.PROVIDER_UNAVAILABLE
    assert retryable_reason(RequestTimeout("poll timed out after 30s", seconds=30)) is (
        R.PROVIDER_UNAVAILABLE
    )


TYPED_ROWS = [
    pytest.param(
        CapacityUnavailable("status 503: no slots available"), R.CAPACITY_UNAVAILABLE, id="capacity"
    ),
    pytest.param(
        CapacityWaitExpired("capacity wait timed out", seconds=60),
        R.CAPACITY_UNAVAILABLE,
        id="capacity-wait",
    ),
    pytest.param(
        TaskTimeout("job x did not finish", seconds=720), R.PROVIDER_TIMEOUT, id="task-timeout"
    ),
    pytest.param(
        EmptyResponse("job x succeeded but response body is empty"),
        R.PROVIDER_PROTOCOL_ERROR,
        id="empty",
    ),
    pytest.param(DecodeError("bad base64"), R.PROVIDER_PROTOCOL_ERROR, id="decode"),
    pytest.param(RequestError("service unavailable"), None, id="request-error-never"),
    pytest.param(
        RouteUnavailable("no route", workflow="w"), R.PROVIDER_UNAVAILABLE, id="route-unavailable"
    ),
    pytest.param(NoCandidates("none", workflow="w"), R.PROVIDER_UNAVAILABLE, id="no-candidates"),
    pytest.param(AllCircuitsOpen("open", workflow="w"), R.PROVIDER_UNAVAILABLE, id="all-open"),
    pytest.param(Exhausted("spent", workflow="w"), R.PROVIDER_UNAVAILABLE, id="exhausted"),
    pytest.param(DeadlineExceeded("cut", workflow="w"), R.PROVIDER_TIMEOUT, id="deadline"),
    pytest.param(CapacityWaitTimeout("busy", workflow="w"), R.CAPACITY_UNAVAILABLE, id="slot-wait"),
]


@pytest.mark.parametrize(("error", "expected"), TYPED_ROWS)
def test_typed_reason_wins(error: Exception, expected: FailureReason | None) -> None:
    assert retryable_reason(error) is expected


PHRASE_ROWS = [(reason, phrase) for reason, phrases in PHRASE_RULES for phrase in phrases]


@pytest.mark.parametrize(("reason", "phrase"), PHRASE_ROWS, ids=[p for _, p in PHRASE_ROWS])
def test_every_phrase_row(reason: FailureReason, phrase: str) -> None:
    # Upstream is classified by text; mixed case must not matter.
    err = Upstream(f"upstream said: {phrase.upper()} (request 7)")
    expected = reason
    # "gateway timeout" contains "timeout": the earlier timeout group wins by design.
    if reason is R.PROVIDER_UNAVAILABLE and "timeout" in phrase:
        expected = R.PROVIDER_TIMEOUT
    # "overload" is a substring of "overloaded"; both are the same group anyway.
    assert retryable_reason(err) is expected


@pytest.mark.parametrize("phrase", REJECT_PHRASES)
def test_reject_list_wins_over_every_group(phrase: str) -> None:
    assert retryable_reason(Upstream(f"{phrase}: service unavailable, timed out, no slots")) is None


NOT_RETRYABLE = [
    pytest.param("status 400: invalid schema for response_format", id="400-schema"),
    pytest.param("status 401: invalid api key", id="401-auth"),
    pytest.param("status 403: forbidden", id="403"),
    pytest.param("job failed", id="generic"),
    pytest.param("", id="empty"),
    pytest.param("   ", id="blank"),
]


@pytest.mark.parametrize("message", NOT_RETRYABLE)
def test_unmatched_text_is_not_retryable(message: str) -> None:
    assert retryable_reason(Upstream(message)) is None
    assert retryable_reason(RuntimeError(message)) is None


def test_plain_exceptions_use_phrases() -> None:
    assert retryable_reason(RuntimeError("Connection refused")) is R.PROVIDER_UNAVAILABLE
    assert retryable_reason(ValueError("rate limit hit")) is R.PROVIDER_OVERLOADED


def test_upstream_status_texts() -> None:
    assert retryable_reason(Upstream("upstream returned status 503: model loading")) is (
        R.CAPACITY_UNAVAILABLE
    )
    assert retryable_reason(Upstream("upstream returned status 502: bad gateway")) is (
        R.PROVIDER_UNAVAILABLE
    )
    assert retryable_reason(Upstream("upstream returned status 429: slow down")) is (
        R.PROVIDER_OVERLOADED
    )
    assert retryable_reason(Upstream("UPSTREAM_TIMEOUT: backend took too long")) is (
        R.PROVIDER_TIMEOUT
    )
    assert retryable_reason(Upstream("upstream returned status 500: capacity exceeded")) is (
        R.PROVIDER_ERROR
    )


# --- busy answers are capacity, never faults (§4) ------------------------------------------

#: Every busy answer the contract names, as a backend would phrase it, with the status it came with.
BUSY_ROWS = [
    pytest.param("status 503: Server busy, retry", 503, id="server-busy"),
    pytest.param("status 503: backend is busy", 503, id="busy"),
    pytest.param("status 500: BUSY", 500, id="busy-500"),
    pytest.param("status 503: request queue full", 503, id="queue-full"),
    pytest.param("status 429: Too Many Requests", 429, id="too-many-requests"),
    pytest.param("status 503: try again later", 503, id="try-again-later"),
    pytest.param("status 503: node is draining", 503, id="draining"),
    pytest.param("status 503: model loading", 503, id="model-loading"),
    pytest.param("status 503: Loading model into memory", 503, id="loading-model"),
    pytest.param("status 500: insufficient memory to load model", 500, id="insufficient-memory"),
    pytest.param("status 500: CUDA out of memory", 500, id="out-of-memory"),
    pytest.param("status 500: no free blocks in the KV cache", 500, id="kv-cache"),
    pytest.param("status 503: token budget exhausted for this minute", 503, id="token-budget"),
    pytest.param("status 503: insufficient KV for this request", 503, id="insufficient-kv"),
    pytest.param("status 503: insufficient slots", 503, id="insufficient-slots"),
    pytest.param("status 503: model llama-3-70b not loaded", 503, id="not-loaded"),
    pytest.param("status 503: no model loaded", 503, id="no-model-loaded"),
    pytest.param("status 503: no models loaded on this node", 503, id="no-models-loaded"),
    pytest.param("status 503: model is loading, please wait", 503, id="loading"),
    pytest.param("status 503: server over capacity", 503, id="over-capacity"),
    pytest.param("status 503: node at capacity", 503, id="at-capacity"),
    pytest.param("status 503: request queue is full", 503, id="queue-is-full"),
    pytest.param("status 503: SlotCapExceeded", 503, id="slot-cap-camel"),
]


@pytest.mark.parametrize(("text", "status"), BUSY_ROWS)
def test_busy_answers_are_capacity(text: str, status: int) -> None:
    error = Upstream(f"upstream returned {text}", status_code=status)
    assert retryable_reason(error) is R.CAPACITY_UNAVAILABLE


@pytest.mark.parametrize("text", ["invalid business_id", "busybox image not found"])
def test_busy_is_a_whole_word(text: str) -> None:
    assert "busy" in WHOLE_WORDS
    assert retryable_reason(Upstream(f"upstream returned status 400: {text}")) is None


# --- provider_error (§4) -------------------------------------------------------------------

PROVIDER_ERROR_ROWS = [
    pytest.param("upstream returned status 500: boom", 500, id="500-upstream"),
    pytest.param("upstream returned status 500", None, id="500-text-only"),
    pytest.param("submit: status 500: capacity exceeded", 500, id="500-capacity-is-not-capacity"),
    pytest.param("Internal Server Error", None, id="internal-server-error"),
    pytest.param("chat completions: status 500: Internal Server Error", 500, id="direct-500"),
    pytest.param("HTTP 500 from backend", None, id="http-500"),
    pytest.param("upstream returned status 501: not implemented", 501, id="501"),
    pytest.param("upstream returned status 507: insufficient storage", 507, id="507"),
    pytest.param("upstream returned status 520: unknown", 520, id="520"),
    pytest.param("upstream returned status 599", 599, id="599"),
]


@pytest.mark.parametrize(("text", "status"), PROVIDER_ERROR_ROWS)
def test_backend_crashes_are_provider_error(text: str, status: int | None) -> None:
    assert retryable_reason(Upstream(text, status_code=status)) is R.PROVIDER_ERROR


STAYS_ROWS = [
    pytest.param(
        "submit: status 503: upstream unavailable", 503, R.PROVIDER_UNAVAILABLE, id="503-upstream"
    ),
    pytest.param("status 503: service unavailable", 503, R.PROVIDER_UNAVAILABLE, id="503"),
    pytest.param("status 502: bad gateway", 502, R.PROVIDER_UNAVAILABLE, id="502"),
    pytest.param("status 504: gateway timeout", 504, R.PROVIDER_TIMEOUT, id="504"),
    pytest.param("status 503: no slots available", 503, R.CAPACITY_UNAVAILABLE, id="503-slots"),
    pytest.param("status 429: rate limit", 429, R.PROVIDER_OVERLOADED, id="429"),
    pytest.param("status 400: invalid schema", 400, None, id="400"),
    pytest.param("status 400: max_tokens 500 is too large", 400, None, id="400-with-500-in-text"),
    pytest.param("status 401: invalid api key", 401, None, id="401"),
    pytest.param("status 403: forbidden", 403, None, id="403"),
    pytest.param("status 404: model not found", 404, None, id="404"),
    pytest.param("status 500: validation failed", 500, None, id="500-reject-list-wins"),
]


@pytest.mark.parametrize(("text", "status", "expected"), STAYS_ROWS)
def test_other_statuses_keep_their_reason(
    text: str, status: int, expected: FailureReason | None
) -> None:
    assert retryable_reason(Upstream(text, status_code=status)) is expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (499, None),
        (500, R.PROVIDER_ERROR),
        (503, R.PROVIDER_ERROR),
        (599, R.PROVIDER_ERROR),
        (600, None),
        (None, None),
    ],
)
def test_status_rules(status: int | None, expected: FailureReason | None) -> None:
    assert STATUS_RULES  # the table is data
    assert reason_from_status(status) is expected


def test_status_only_applies_to_upstream() -> None:
    # Only Upstream carries a status the classifier trusts; a plain error is read by text.
    assert retryable_reason(RuntimeError("boom")) is None
    assert retryable_reason(RuntimeError("Internal Server Error")) is R.PROVIDER_ERROR
