"""§4: the fleet-breaker original's busy markers are capacity, in any spelling.

One row per marker and spelling variant (underscores, hyphens, case, punctuation), as the
backend answers it through the farm (``upstream returned status N: …`` with the status) and
as the farm itself answers a submit (``submit: status N: …``). Then the rows that must stay
faults (500/502/504, a 503 that crashed or says nothing useful, "500 … capacity"), and the
guard that keeps a rejected *bad request* from being read as busy.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from llm_client import FailureReason, Upstream, retryable_reason
from llm_client._breaker.model import Outcome, classify
from llm_client._retry.classify import NOT_BUSY_STATUSES, PHRASE_RULES, fold
from llm_client._transport.base import UpstreamResponse
from llm_client._transport.envelope import http_status_error, upstream_status_error

R = FailureReason


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
    ],
)
def test_fold(raw: str, folded: str) -> None:
    assert fold(raw) == folded
    assert fold(fold(raw)) == fold(raw)
