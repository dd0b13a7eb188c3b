"""§3: the job status's ``error_code``, wherever the farm puts it, and which code wins.

Pure rows (no HTTP): every place the farm may carry the code, with and without a
message, for failed, cancelled and status-less answers; the never-reached codes
release (``BackendUnavailable``), ``UPSTREAM_TIMEOUT`` and unknown codes stay
``Upstream``; and the precedence table of ``llm_client._transport.envelope``'s docstring, row by
row, for codes that disagree.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llm_client import BackendUnavailable, LLMError, Upstream
from llm_client._transport.envelope import (
    BACKEND_UNAVAILABLE_CODES,
    decode_job_answer,
    envelope_from_json,
    farm_error_parts,
    http_status_error,
)

DNS = "[Errno -3] Temporary failure in name resolution"
NEVER_REACHED = sorted(BACKEND_UNAVAILABLE_CODES)


def decoded(envelope: dict[str, Any]) -> LLMError:
    with pytest.raises(LLMError) as info:
        decode_job_answer(orjson.dumps(envelope))
    return info.value


# --- the answer, exactly --------------------------------------------------------------


def test_the_farms_status_level_answer_is_backend_unavailable() -> None:
    error = decoded({"status": "JOB_STATE_FAILED", "error_code": "UPSTREAM_ERROR", "error": DNS})
    assert type(error) is BackendUnavailable
    assert error.code == "UPSTREAM_ERROR"
    assert str(error) == f"UPSTREAM_ERROR: {DNS}"


@pytest.mark.parametrize("code", NEVER_REACHED)
def test_every_never_reached_code_at_status_level_is_backend_unavailable(code: str) -> None:
    error = decoded({"id": "j", "status": "JOB_STATE_FAILED", "error_code": code, "error": DNS})
    assert type(error) is BackendUnavailable
    assert (error.code, str(error)) == (code, f"{code}: {DNS}")


@pytest.mark.parametrize("code", ["UPSTREAM_TIMEOUT", "INTERNAL", "SOMETHING_NEW_42"])
def test_other_status_level_codes_stay_upstream(code: str) -> None:
    error = decoded({"id": "j", "status": "JOB_STATE_FAILED", "error_code": code, "error": "m"})
    assert type(error) is Upstream
    assert (error.code, str(error)) == (code, f"{code}: m")


# --- wherever the farm puts it ----------------------------------------------------------------

PLACES = [
    pytest.param(
        {"status": "FAILED", "error_code": "SERVICE_DISABLED", "error": "off"},
        "SERVICE_DISABLED: off",
        id="top-level",
    ),
    pytest.param(
        {"status": "FAILED", "error_code": "SERVICE_DISABLED"},
        "SERVICE_DISABLED: job failed",
        id="top-level-without-message",
    ),
    pytest.param(
        {"job": {"job_id": "n", "state": "FAILED", "error_code": "SERVICE_DISABLED"}},
        "SERVICE_DISABLED: job failed",
        id="nested-job",
    ),
    pytest.param(
        {"job": {"state": "FAILED", "error_code": "SERVICE_DISABLED", "error": "off"}},
        "SERVICE_DISABLED: off",
        id="nested-job-with-message",
    ),
    pytest.param(
        {"job": {"state": "FAILED"}, "error_code": "SERVICE_DISABLED", "error": "off"},
        "SERVICE_DISABLED: off",
        id="top-level-beside-a-nested-job",
    ),
    pytest.param(
        {"job": {"state": "FAILED", "error_code": " "}, "error_code": "SERVICE_DISABLED"},
        "SERVICE_DISABLED: job failed",
        id="blank-nested-falls-back",
    ),
    pytest.param(
        {"status": "FAILED", "result": {"error_code": "SERVICE_DISABLED", "error": "off"}},
        "SERVICE_DISABLED: off",
        id="result-level",
    ),
    pytest.param(
        {"job": {"state": "FAILED", "result": {"error_code": "SERVICE_DISABLED"}}},
        "SERVICE_DISABLED: job failed",
        id="nested-result-level",
    ),
    pytest.param(
        {"status": "FAILED", "result": {"error": {"error_code": "SERVICE_DISABLED"}}},
        "SERVICE_DISABLED: job failed",
        id="inside-result-error",
    ),
    pytest.param(
        {"status": "FAILED", "error": {"error_code": "SERVICE_DISABLED", "message": "off"}},
        "SERVICE_DISABLED: off",
        id="inside-top-level-error",
    ),
    pytest.param(
        {"error_code": "SERVICE_DISABLED", "error": "off"},
        "SERVICE_DISABLED: off",
        id="no-status-at-all",
    ),
    pytest.param(
        {"status": "FAILED", "error_code": "service_disabled", "error": "off"},
        "service_disabled: off",
        id="lower-case-code",
    ),
]


@pytest.mark.parametrize(("envelope", "text"), PLACES)
def test_error_code_is_read_wherever_the_farm_puts_it(envelope: dict[str, Any], text: str) -> None:
    error = decoded(envelope)
    assert type(error) is BackendUnavailable
    assert (error.code or "").upper() == "SERVICE_DISABLED"
    assert str(error) == text


def test_a_cancelled_job_is_decoded_by_its_error_code() -> None:
    error = decoded(
        {"id": "j", "status": "JOB_STATE_CANCELLED", "error_code": "UPSTREAM_ERROR", "error": DNS}
    )
    assert type(error) is BackendUnavailable
    assert str(error) == f"job j was cancelled: UPSTREAM_ERROR: {DNS}"


@pytest.mark.parametrize("status", ["JOB_STATE_SUCCEEDED", "JOB_STATE_RUNNING", "QUEUED"])
def test_an_error_code_never_overrides_a_live_or_succeeded_job(status: str) -> None:
    envelope = envelope_from_json({"id": "j", "status": status, "error_code": "UPSTREAM_ERROR"})
    assert envelope.error_code == "UPSTREAM_ERROR"
    if status == "JOB_STATE_SUCCEEDED":
        with pytest.raises(LLMError) as info:  # a success without a body, not an outage
            decode_job_answer(orjson.dumps({"id": "j", "status": status, "error_code": "X_Y"}))
        assert not isinstance(info.value, BackendUnavailable)
    else:
        assert decode_job_answer(orjson.dumps({"id": "j", "status": status})) is None


@pytest.mark.parametrize("number", [503, "503", " 42 "])
def test_a_bare_number_is_not_a_farm_code(number: object) -> None:
    envelope = envelope_from_json({"status": "FAILED", "error_code": number, "error": "m"})
    assert envelope.error_code is None
    assert type(decoded({"status": "FAILED", "error_code": number, "error": "m"})) is Upstream


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, {"error_code": "SERVICE_NOT_FOUND", "error": "no such service"}),
        (503, {"error_code": "SERVICE_DISABLED", "message": "maintenance"}),
        (502, {"error": {"error_code": "UPSTREAM_ERROR", "message": DNS}}),
    ],
)
def test_farm_level_http_answers_are_decoded_by_their_error_code(
    status: int, body: dict[str, Any]
) -> None:
    error = http_status_error("submit", status, orjson.dumps(body))
    assert type(error) is BackendUnavailable
    assert error.code in NEVER_REACHED


# --- which code wins when they disagree (the docstring's table) -------------------------------

RESULT_ERROR = {"code": "UPSTREAM_TIMEOUT", "message": "slow"}

PRECEDENCE = [
    pytest.param(
        {"result": {"error": RESULT_ERROR, "error_code": "UPSTREAM_ERROR"}},
        ("UPSTREAM_TIMEOUT", "slow"),
        id="1-result.error.code-beats-result.error_code",
    ),
    pytest.param(
        {"result": {"error": RESULT_ERROR}, "error_code": "UPSTREAM_ERROR"},
        ("UPSTREAM_TIMEOUT", "slow"),
        id="1-result.error.code-beats-status-error_code",
    ),
    pytest.param(
        {"result": {"error": {"error_code": "INTERNAL"}}, "error_code": "UPSTREAM_ERROR"},
        ("INTERNAL", None),
        id="1-result.error.error_code-beats-status-error_code",
    ),
    pytest.param(
        {"result": {"error_code": "UPSTREAM_ERROR"}, "job": {"error_code": "INTERNAL"}},
        ("UPSTREAM_ERROR", None),
        id="2-result-level-beats-job-level",
    ),
    pytest.param(
        {"job": {"error_code": "UPSTREAM_ERROR"}, "error_code": "INTERNAL"},
        ("UPSTREAM_ERROR", None),
        id="2-job-level-beats-top-level",
    ),
    pytest.param(
        {"error_code": "UPSTREAM_ERROR", "error": {"code": "INTERNAL", "message": "m"}},
        ("UPSTREAM_ERROR", "m"),
        id="2-status-error_code-beats-error-object-code",
    ),
    pytest.param(
        {"error": {"code": "SERVICE_DISABLED", "message": "UPSTREAM_TIMEOUT: slow"}},
        ("SERVICE_DISABLED", "UPSTREAM_TIMEOUT: slow"),
        id="3-error-object-code-beats-leading-code-kept-in-text",
    ),
    pytest.param(
        {"error_code": "UPSTREAM_TIMEOUT", "error": "UPSTREAM_ERROR: dns"},
        ("UPSTREAM_TIMEOUT", "UPSTREAM_ERROR: dns"),
        id="2-status-error_code-beats-leading-code-kept-in-text",
    ),
    pytest.param(
        {"error_code": "UPSTREAM_ERROR", "error": "UPSTREAM_ERROR: dns"},
        ("UPSTREAM_ERROR", "dns"),
        id="agreeing-leading-code-is-not-repeated",
    ),
    pytest.param(
        {"error": "SERVICE_NOT_FOUND: gone"},
        ("SERVICE_NOT_FOUND", "gone"),
        id="4-leading-code-alone",
    ),
    pytest.param(
        {"result": {"error": "plain text"}, "error_code": "UPSTREAM_ERROR", "error": "top"},
        ("UPSTREAM_ERROR", "plain text"),
        id="message-from-result.error-before-top-level",
    ),
    pytest.param(
        {"error_code": "503", "error": {"code": "INTERNAL"}},
        ("INTERNAL", None),
        id="bare-number-skipped",
    ),
    pytest.param(
        {"result": {"error": {"code": 500, "message": "x"}}},
        ("500", "x"),
        id="bare-number-counts-when-alone",
    ),
    pytest.param(
        {"result": {"error": {"code": 500, "message": "x"}}, "error_code": "UPSTREAM_ERROR"},
        ("UPSTREAM_ERROR", "x"),
        id="bare-number-yields-to-a-real-code",
    ),
]


@pytest.mark.parametrize(("fields", "parts"), PRECEDENCE)
def test_precedence_when_codes_disagree(
    fields: dict[str, Any], parts: tuple[str | None, str | None]
) -> None:
    envelope = envelope_from_json({"id": "j", "status": "JOB_STATE_FAILED", **fields})
    assert farm_error_parts(envelope) == parts


@pytest.mark.parametrize(
    ("fields", "error_type"),
    [
        pytest.param(
            {"result": {"error": RESULT_ERROR}, "error_code": "UPSTREAM_ERROR"},
            Upstream,
            id="job-reported-timeout-is-not-released",
        ),
        pytest.param(
            {"result": {"error": {"message": "m"}}, "error_code": "UPSTREAM_ERROR"},
            BackendUnavailable,
            id="uncoded-result-error-takes-the-status-code",
        ),
        pytest.param(
            {"error_code": "UPSTREAM_TIMEOUT", "error": "UPSTREAM_ERROR: dns"},
            Upstream,
            id="status-code-beats-prose",
        ),
    ],
)
def test_the_winning_code_alone_decides_the_type(
    fields: dict[str, Any], error_type: type[LLMError]
) -> None:
    error = decoded({"id": "j", "status": "JOB_STATE_FAILED", **fields})
    assert type(error) is error_type
