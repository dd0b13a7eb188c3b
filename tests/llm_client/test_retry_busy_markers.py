"""§4: the busy markers — the fleet-breaker original's and d-inference's capacity family —
are capacity, in any spelling.

One row per marker and spelling variant (underscores, hyphens, case, CamelCase,
punctuation), as the backend answers it through the farm (``upstream returned status N: …``
with the status) and as the farm itself answers a submit (``submit: status N: …``). Then
the answers a farm really gave, word for word; the rows that must stay faults (500/502/504,
a 503 that crashed or says nothing useful, "500 … capacity", a model that failed to load);
the guard that keeps a rejected *bad request* from being read as busy; a 429, which is
a rate limit whatever its body says; and a 503, which is busy whatever its body says when
it names its pause with a valid ``Retry-After`` (RFC 9110 §15.6.4), and read as before when
it does not.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from llm_client import (
    BackendUnavailable,
    FailureReason,
    JobLost,
    Outcome,
    Upstream,
    UpstreamResponse,
    retryable_reason,
)
from llm_client._breaker.model import classify
from llm_client._retry.classify import NOT_BUSY_STATUSES, PHRASE_RULES, busy_status, fold
from llm_client._transport.envelope import (
    http_status_error,
    poll_status_error,
    submit_status_error,
    upstream_status_error,
)
from llm_client._transport.openai_compat import status_error
from llm_client._transport.retry_after import retry_after_seconds

R = FailureReason
BUSY = frozenset({R.CAPACITY_UNAVAILABLE, R.PROVIDER_OVERLOADED})


def charge(reason: FailureReason | None) -> Outcome:
    """How the breaker counts an attempt that failed so after a full minute's slice."""
    return classify(reason, slice_seconds=60.0, deadline_cut=False, min_slice_seconds=30.0)


#: The markers of the fleet-breaker original's two tables (§4), with the status a busy
#: node answers them with.
MARKERS: list[tuple[str, int]] = [
    ("node is draining", 503),
    ("slot cap reached", 503),
    ("slot limit reached for model", 429),
    ("all slots full", 503),
    ("slots exhausted", 503),
    ("no free slot", 503),
    ("token budget exhausted", 502),
    ("insufficient kv headroom", 503),
    ("insufficient memory", 503),
    ("request rejected", 503),
    ("queue full", 503),
    ("server busy", 503),
    ("service temporarily unavailable", 503),
    ("request timed out waiting for capacity", 503),
    ("model not loaded", 503),
    # d-inference's capacity family: KV, memory or slots short; a model not (yet) loaded;
    # slot caps, full queues, over capacity, too many requests.
    ("insufficient kv", 503),
    ("insufficient kv cache blocks", 503),
    ("insufficient slots", 503),
    ("model is not loaded", 503),
    ("no model loaded", 503),
    ("no models loaded", 503),
    ("model is loading", 503),
    ("loading", 503),
    ("slot cap exceeded", 429),
    ("queue is full", 503),
    ("server over capacity", 503),
    ("server at capacity", 503),
    ("too many requests", 429),
]


def _separated(sep: str) -> Callable[[str], str]:
    return lambda text: text.replace(" ", sep)


#: Spellings a backend may use for the same marker.
VARIANTS: dict[str, Callable[[str], str]] = {
    "plain": lambda text: text,
    "upper": str.upper,
    "title": str.title,
    "underscores": _separated("_"),
    "upper-underscores": lambda text: text.replace(" ", "_").upper(),
    "hyphens": _separated("-"),
    "dots": _separated("."),
    "double-spaces": _separated("  "),
    "punctuated": lambda text: text.replace(" ", ", ", 1) + "!",
    "camel": lambda text: "".join(word[:1].upper() + word[1:] for word in text.split()),
    "camel-lower": lambda text: (
        text.split()[0] + "".join(word[:1].upper() + word[1:] for word in text.split()[1:])
    ),
}

ROWS = [
    pytest.param(variant(marker), status, id=f"{marker.replace(' ', '-')}:{name}")
    for marker, status in MARKERS
    for name, variant in VARIANTS.items()
]


@pytest.mark.parametrize(("text", "status"), ROWS)
def test_busy_marker_relayed_from_the_backend_is_capacity(text: str, status: int) -> None:
    body = f'{{"error": {{"message": "{text}"}}}}'.encode()
    error = upstream_status_error(UpstreamResponse(status_code=status, body=body))
    assert retryable_reason(error) is R.CAPACITY_UNAVAILABLE
    assert charge(retryable_reason(error)) is Outcome.NEUTRAL


@pytest.mark.parametrize(("text", "status"), ROWS)
def test_busy_marker_in_a_farm_answer_is_capacity(text: str, status: int) -> None:
    error = http_status_error("submit", status, f'{{"error": "{text}"}}'.encode())
    assert retryable_reason(error) is R.CAPACITY_UNAVAILABLE


def test_every_marker_is_a_row_of_the_capacity_table() -> None:
    capacity = dict(PHRASE_RULES)[R.CAPACITY_UNAVAILABLE]
    for marker, _ in MARKERS:
        assert any(fold(phrase) in fold(marker) for phrase in capacity), marker


def test_the_issue_answers_exactly() -> None:
    for status, text in [
        (503, "request rejected"),
        (502, "token_budget_exhausted"),
        (503, "insufficient kv headroom"),
        (503, "model not loaded"),
        (503, "service temporarily unavailable"),
        (503, "request timed out waiting for capacity"),
    ]:
        error = Upstream(f"upstream returned status {status}: {text}", status_code=status)
        assert retryable_reason(error) is R.CAPACITY_UNAVAILABLE, text


#: The answers a farm gave that were charged as faults (five in a row opened a busy node's
#: breaker), word for word, with a status each was seen with.
MEASURED = [
    pytest.param(503, "503: insufficient KV", id="503-insufficient-kv"),
    pytest.param(503, "insufficient kv: need 4096 have 1024", id="kv-need-have-503"),
    pytest.param(500, "insufficient kv: need 4096 have 1024", id="kv-need-have-500"),
    pytest.param(503, "model gpt-oss-120b not loaded", id="model-not-loaded"),
    pytest.param(503, "no model loaded", id="no-model-loaded"),
    pytest.param(503, "SlotCapExceeded", id="slot-cap-exceeded"),
    pytest.param(500, "SlotCapExceeded", id="slot-cap-exceeded-500"),
    pytest.param(503, "InsufficientKV", id="insufficient-kv-camel"),
    pytest.param(503, "ERR_NO_MODEL_LOADED", id="no-model-loaded-code"),
]


@pytest.mark.parametrize(("status", "text"), MEASURED)
def test_the_measured_answers_are_capacity_however_they_arrive(status: int, text: str) -> None:
    body = f'{{"error": {{"message": "{text}"}}}}'.encode()
    for error in (
        upstream_status_error(UpstreamResponse(status_code=status, body=body)),
        http_status_error("submit", status, f'{{"error": "{text}"}}'.encode()),
        submit_status_error(status, body),
        status_error(status, body, None),
        Upstream(text),
    ):
        assert retryable_reason(error) is R.CAPACITY_UNAVAILABLE, error
        assert charge(retryable_reason(error)) is Outcome.NEUTRAL


# --- what stays a fault ----------------------------------------------------------------------

FAULTS = [
    pytest.param(500, "Internal Server Error", R.PROVIDER_ERROR, id="500"),
    pytest.param(500, "segfault in worker", R.PROVIDER_ERROR, id="500-crash"),
    pytest.param(500, "capacity exceeded", R.PROVIDER_ERROR, id="500-capacity-is-not-capacity"),
    pytest.param(502, "Bad Gateway", R.PROVIDER_UNAVAILABLE, id="502"),
    pytest.param(502, "", R.PROVIDER_UNAVAILABLE, id="502-empty"),
    pytest.param(504, "Gateway Timeout", R.PROVIDER_TIMEOUT, id="504"),
    pytest.param(503, "upstream unavailable", R.PROVIDER_UNAVAILABLE, id="503-upstream"),
    pytest.param(503, "Service Unavailable", R.PROVIDER_UNAVAILABLE, id="503-plain"),
    pytest.param(503, "", R.PROVIDER_UNAVAILABLE, id="503-empty"),
    pytest.param(503, "<html>oops</html>", R.PROVIDER_UNAVAILABLE, id="503-opaque"),
    pytest.param(503, "worker crashed: core dumped", R.PROVIDER_UNAVAILABLE, id="503-crash"),
    pytest.param(503, "connection refused", R.PROVIDER_UNAVAILABLE, id="503-refused"),
    # a model that failed to load crashed; one that is loading is busy
    pytest.param(
        500, "error loading model weights: checksum mismatch", R.PROVIDER_ERROR, id="error-loading"
    ),
    pytest.param(500, "model loading failed", R.PROVIDER_ERROR, id="loading-failed"),
    pytest.param(500, "LoadingError: bad config", R.PROVIDER_ERROR, id="loading-error-camel"),
    pytest.param(503, "failed loading adapter", R.PROVIDER_UNAVAILABLE, id="failed-loading-503"),
]


@pytest.mark.parametrize(("status", "text", "reason"), FAULTS)
def test_crashes_and_opaque_answers_stay_faults(
    status: int, text: str, reason: FailureReason
) -> None:
    body = f'{{"error": {{"message": "{text}"}}}}'.encode() if text else b""
    error = upstream_status_error(UpstreamResponse(status_code=status, body=body))
    assert retryable_reason(error) is reason
    assert charge(reason) is Outcome.FAILURE


@pytest.mark.parametrize("status", sorted(NOT_BUSY_STATUSES))
def test_a_rejected_bad_request_is_not_busy(status: int) -> None:
    error = Upstream(
        f"upstream returned status {status}: request rejected: invalid schema",
        status_code=status,
    )
    assert retryable_reason(error) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("took 1.503 s then failed", None, id="decimal-is-not-a-503"),
        pytest.param("invalid business_id", None, id="business-is-not-busy"),
        pytest.param("Client.Timeout exceeded", R.PROVIDER_TIMEOUT, id="dotted-phrase"),
        pytest.param("status:  unavailable", R.PROVIDER_UNAVAILABLE, id="spaced-colon"),
        pytest.param("User_Cancelled: service unavailable", None, id="reject-list-folded"),
        pytest.param("what capacity do you need", None, id="what-capacity-is-not-at-capacity"),
        pytest.param("reloading config", None, id="reloading-is-not-loading"),
        pytest.param("knot loaded", None, id="knot-is-not-not"),
    ],
)
def test_folding_keeps_the_old_rows(text: str, reason: FailureReason | None) -> None:
    assert retryable_reason(Upstream(text)) is reason


@pytest.mark.parametrize(
    ("raw", "folded"),
    [
        ("TOKEN_BUDGET_EXHAUSTED", "token budget exhausted"),
        ("kv-headroom", "kv headroom"),
        ("Request   rejected.", "request rejected."),
        ("status 503: x", "status 503: x"),
        ("v1.503", "v1.503"),
        ("SlotCapExceeded", "slot cap exceeded"),
        ("InsufficientKV: need 4096", "insufficient kv need 4096"),
        ("KVCacheFull", "kv cache full"),
        ("noModelLoaded", "no model loaded"),
        ("HTTP503", "http503"),
    ],
)
def test_fold(raw: str, folded: str) -> None:
    assert fold(raw) == folded
    assert fold(fold(raw)) == fold(raw)


# --- a 429 is a rate limit, whatever it says ---------------------------------------------

#: Bodies a 429 came with: none of them makes it anything but busy.
TOO_MANY = [
    pytest.param("", R.PROVIDER_OVERLOADED, id="empty"),
    pytest.param("rate limit", R.PROVIDER_OVERLOADED, id="rate-limit"),
    pytest.param("slow down", R.PROVIDER_OVERLOADED, id="slow-down"),
    pytest.param("Internal Server Error", R.PROVIDER_OVERLOADED, id="crash-text"),
    pytest.param("timed out", R.PROVIDER_OVERLOADED, id="timeout-text"),
    pytest.param("decode chat completion payload", R.PROVIDER_OVERLOADED, id="protocol-text"),
    pytest.param("validation failed", R.PROVIDER_OVERLOADED, id="reject-text"),
    pytest.param("<html>nginx</html>", R.PROVIDER_OVERLOADED, id="html"),
    pytest.param("no slots available", R.CAPACITY_UNAVAILABLE, id="capacity-text"),
]


@pytest.mark.parametrize(("text", "reason"), TOO_MANY)
def test_a_429_is_busy_whatever_its_body_says(text: str, reason: FailureReason) -> None:
    body = f'{{"error": {{"message": "{text}"}}}}'.encode() if text else b""
    for error in (
        upstream_status_error(UpstreamResponse(status_code=429, body=body)),
        http_status_error("submit", 429, body),
        status_error(429, body, "zz"),
    ):
        assert retryable_reason(error) is reason, error
        assert charge(retryable_reason(error)) is Outcome.NEUTRAL


@pytest.mark.parametrize("code", ["UPSTREAM_ERROR", "SERVICE_NOT_FOUND", "SERVICE_DISABLED"])
def test_a_429_with_a_never_reached_code_is_still_a_rate_limit(code: str) -> None:
    body = f'{{"code": "{code}", "message": "slow down"}}'.encode()
    error = submit_status_error(429, body, 5.0)
    assert isinstance(error, Upstream)
    assert (error.status_code, error.retry_after) == (429, 5.0)
    assert retryable_reason(error) is R.PROVIDER_OVERLOADED


# --- a 503 that names its pause is busy (RFC 9110 §15.6.4) ---------------------------------

#: Pauses an error may carry, and whether each is one a farm named (finite, 0 or more).
PAUSES: list[tuple[float | None, bool]] = [
    (None, False),
    (0.0, True),
    (2.0, True),
    (30.0, True),
    (1e9, True),
    (-1.0, False),
    (float("nan"), False),
    (float("inf"), False),
]


@pytest.mark.parametrize(("pause", "valid"), PAUSES)
def test_the_busy_status_table_over_every_status_and_pause(
    pause: float | None, valid: bool
) -> None:
    """Every HTTP status from 100 to 599: a 429 is busy whatever its pause, a 503 only
    with a valid one, every other status never by its status alone."""
    for status in [None, *range(100, 600)]:
        if status == 429 or (status == 503 and valid):
            expected: FailureReason | None = R.PROVIDER_OVERLOADED
        else:
            expected = None
        assert busy_status(status, pause) is expected, (status, pause)


#: Bodies a 503 came with, and what the answer is without a valid Retry-After (read by its
#: text: "status 503" is ``provider_unavailable``, charged) and with one (busy whatever it
#: says).
UNAVAILABLE = [
    pytest.param("", R.PROVIDER_UNAVAILABLE, R.PROVIDER_OVERLOADED, id="empty"),
    pytest.param(
        "Service Unavailable", R.PROVIDER_UNAVAILABLE, R.PROVIDER_OVERLOADED, id="unavailable"
    ),
    pytest.param(
        "Internal Server Error", R.PROVIDER_UNAVAILABLE, R.PROVIDER_OVERLOADED, id="crash-text"
    ),
    pytest.param("<html>nginx</html>", R.PROVIDER_UNAVAILABLE, R.PROVIDER_OVERLOADED, id="html"),
    pytest.param("timed out", R.PROVIDER_TIMEOUT, R.PROVIDER_OVERLOADED, id="timeout-text"),
    pytest.param(
        "model loading failed", R.PROVIDER_UNAVAILABLE, R.PROVIDER_OVERLOADED, id="load-failed"
    ),
    pytest.param("validation failed", None, R.PROVIDER_OVERLOADED, id="reject-text"),
    pytest.param(
        "down for maintenance", R.PROVIDER_UNAVAILABLE, R.PROVIDER_OVERLOADED, id="maintenance"
    ),
    pytest.param(
        "no slots available", R.CAPACITY_UNAVAILABLE, R.CAPACITY_UNAVAILABLE, id="capacity"
    ),
    pytest.param("insufficient kv", R.CAPACITY_UNAVAILABLE, R.CAPACITY_UNAVAILABLE, id="kv-family"),
]

#: ``Retry-After`` values as sent, and whether each is valid (RFC 9110 §10.2.3).
HEADERS = [
    ("0", True),
    ("7", True),
    ("Fri, 01 Mar 2024 12:01:00 GMT", True),
    (None, False),
    ("", False),
    ("1.5", False),
    ("-3", False),
    ("²", False),
    ("soon", False),
]


@pytest.mark.parametrize(("header", "valid"), HEADERS)
@pytest.mark.parametrize(("text", "without", "paused"), UNAVAILABLE)
def test_a_503_is_busy_exactly_when_it_names_a_valid_pause(
    text: str,
    without: FailureReason | None,
    paused: FailureReason,
    header: str | None,
    valid: bool,
) -> None:
    """The farm's submit answer, a poll answer and a direct provider's answer alike: with a
    valid ``Retry-After`` a 503 is never charged and carries its pause; without one (or
    with an invalid one) it reads as it always did, a fault unless a busy phrase matches."""
    body = f'{{"error": {{"message": "{text}"}}}}'.encode() if text else b""
    now = 1709294400.0  # 2024-03-01 12:00:00 GMT: the date above is 60 s ahead
    seconds = retry_after_seconds(header, now=now)
    assert (seconds is not None) is valid
    expected = paused if valid else without
    for error in (
        submit_status_error(503, body, seconds),
        http_status_error("poll job j", 503, body, seconds),
        status_error(503, body, header, now=now),
    ):
        assert retryable_reason(error) is expected, (error, header)
        assert getattr(error, "retry_after", None) == seconds
        outcome = charge(retryable_reason(error))
        assert (outcome is Outcome.NEUTRAL) is (valid or expected in BUSY), error


@pytest.mark.parametrize("code", ["UPSTREAM_ERROR", "SERVICE_NOT_FOUND", "SERVICE_DISABLED"])
def test_a_503_that_names_its_pause_is_busy_whatever_farm_code_it_carries(code: str) -> None:
    """As a 429: the status and its pause say busy, the code cannot make it charged."""
    body = f'{{"code": "{code}", "message": "try later"}}'.encode()
    for error in (submit_status_error(503, body, 5.0), poll_status_error("j", 503, body, 5.0)):
        assert isinstance(error, Upstream)
        assert (error.status_code, error.retry_after) == (503, 5.0)
        assert retryable_reason(error) is R.PROVIDER_OVERLOADED
    # without its pause the code decides, as before: the backend was never reached
    assert isinstance(submit_status_error(503, body), BackendUnavailable)
    assert retryable_reason(submit_status_error(503, body)) is R.PROVIDER_UNAVAILABLE


def test_a_poll_answered_404_is_a_lost_job_even_with_a_pause() -> None:
    error = poll_status_error("j", 404, b'{"error": "job not found"}', 5.0)
    assert isinstance(error, JobLost)


def test_a_relayed_503_carries_no_headers_and_stays_a_fault() -> None:
    """The farm relays a backend's status and body, not its headers: a relayed 503 is read
    by its text (a relayed pause would need the farm to relay ``Retry-After``)."""
    error = upstream_status_error(UpstreamResponse(status_code=503, body=b"Service Unavailable"))
    assert error.retry_after is None
    assert retryable_reason(error) is R.PROVIDER_UNAVAILABLE
    assert charge(retryable_reason(error)) is Outcome.FAILURE
