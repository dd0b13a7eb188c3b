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
from llm_client.retry import PHRASE_RULES, REJECT_PHRASES, reason_from_message

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
        R.PROVIDER_UNAVAILABLE
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
    assert retryable_reason(Upstream("upstream returned status 500: capacity exceeded")) is None
