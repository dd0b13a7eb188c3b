"""Pure parts of the farm simulator: job timelines, envelopes, the fault book."""

from __future__ import annotations

import base64

import pytest

from memory_worker.farmsim.faults import Fault, FaultBook, FaultKind, retry_after
from memory_worker.farmsim.jobs import (
    EnvelopeStyle,
    Job,
    JobState,
    Outcome,
    UpstreamReply,
    envelope,
    finishes_at,
    job_state,
)

SUCCESS = Outcome(JobState.SUCCEEDED, response=UpstreamReply(200, b'{"ok": 1}'))


def _job(
    run_seconds: float | None = 2.0,
    outcome: Outcome = SUCCESS,
    style: EnvelopeStyle = EnvelopeStyle.TOP,
) -> Job:
    return Job(
        id="j1",
        service="llm",
        endpoint="chat_completions",
        submitted_at=100.0,
        queued_seconds=1.0,
        run_seconds=run_seconds,
        outcome=outcome,
        style=style,
    )


@pytest.mark.parametrize(
    ("now", "state"),
    [
        (100.0, JobState.QUEUED),
        (100.99, JobState.QUEUED),
        (101.0, JobState.RUNNING),
        (102.99, JobState.RUNNING),
        (103.0, JobState.SUCCEEDED),
        (1e9, JobState.SUCCEEDED),
    ],
)
def test_job_state_follows_the_timeline(now: float, state: JobState) -> None:
    assert job_state(_job(), now) is state


def test_hung_job_runs_forever() -> None:
    job = _job(run_seconds=None)
    assert finishes_at(job) is None
    assert job_state(job, 1e12) is JobState.RUNNING


def test_failed_outcome_is_the_terminal_state() -> None:
    job = _job(outcome=Outcome(JobState.FAILED, result_error={"code": "X", "message": "y"}))
    assert job_state(job, 200.0) is JobState.FAILED


def test_top_level_envelope() -> None:
    job = _job()
    assert envelope(job, JobState.QUEUED) == {"id": "j1", "status": "JOB_STATE_QUEUED"}
    done = envelope(job, JobState.SUCCEEDED)
    assert done["status"] == "JOB_STATE_SUCCEEDED"
    response = done["result"]["response"]
    assert response["status_code"] == 200
    assert base64.b64decode(response["body"]) == b'{"ok": 1}'
    assert response["content_type"] == "application/json"


def test_nested_envelope() -> None:
    job = _job(style=EnvelopeStyle.NESTED)
    assert envelope(job, JobState.RUNNING) == {
        "job": {"job_id": "j1", "state": "JOB_STATE_RUNNING"}
    }
    assert "result" in envelope(job, JobState.SUCCEEDED)["job"]


def test_mixed_envelope_leaves_nested_state_blank() -> None:
    body = envelope(_job(style=EnvelopeStyle.MIXED), JobState.SUCCEEDED)
    assert body["status"] == "JOB_STATE_SUCCEEDED"
    assert body["job"] == {"job_id": "j1", "state": ""}
    assert "result" in body


@pytest.mark.parametrize("style", list(EnvelopeStyle))
def test_errors_sit_where_each_fault_puts_them(style: EnvelopeStyle) -> None:
    failed = _job(
        outcome=Outcome(JobState.FAILED, result_error={"code": "UPSTREAM_ERROR", "message": "m"}),
        style=style,
    )
    body = envelope(failed, JobState.FAILED)
    result = body["job"]["result"] if style is EnvelopeStyle.NESTED else body["result"]
    assert result == {"error": {"code": "UPSTREAM_ERROR", "message": "m"}}
    top = _job(outcome=Outcome(JobState.FAILED, top_error="boom"), style=style)
    top_body = envelope(top, JobState.FAILED)
    assert top_body["error"] == "boom"
    assert "result" not in top_body
    assert "result" not in top_body.get("job", {})


def test_non_terminal_envelope_hides_the_outcome() -> None:
    job = _job(outcome=Outcome(JobState.FAILED, top_error="boom"))
    assert envelope(job, JobState.RUNNING) == {"id": "j1", "status": "JOB_STATE_RUNNING"}


def test_fault_applies_times_then_healthy() -> None:
    book = FaultBook()
    book.set("llm", Fault(kind=FaultKind.RESET, times=2))
    assert book.peek("llm").kind is FaultKind.RESET
    assert book.take("llm").kind is FaultKind.RESET
    assert book.take("llm").kind is FaultKind.RESET
    assert book.take("llm").kind is FaultKind.HEALTHY
    assert book.active() == {}


def test_service_fault_wins_over_wildcard() -> None:
    book = FaultBook()
    book.set("*", Fault(kind=FaultKind.JOB_FAILED))
    book.set("embedder", Fault(kind=FaultKind.SLOW, seconds=0.1))
    assert book.take("embedder").kind is FaultKind.SLOW
    assert book.take("llm").kind is FaultKind.JOB_FAILED
    book.clear("embedder")
    assert book.take("embedder").kind is FaultKind.JOB_FAILED
    book.clear()
    assert book.take("llm").kind is FaultKind.HEALTHY


def test_peek_does_not_use_up_a_fault() -> None:
    book = FaultBook()
    book.set("llm", Fault(kind=FaultKind.HANG_HTTP, times=1))
    for _ in range(3):
        assert book.peek("llm").kind is FaultKind.HANG_HTTP
    assert book.active()["llm"]["remaining"] == 1


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"kind": "no_such_kind"},
        {"kind": "reset", "times": 0},
        {"kind": "reset", "times": "2"},
        {"kind": "submit_status", "status_code": "429"},
        {"kind": "slow", "seconds": "fast"},
        {"kind": "submit_status", "retry_after": 30},
    ],
)
def test_fault_from_json_rejects_bad_input(data: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Fault.from_json(data)


def test_fault_json_round_trip() -> None:
    fault = Fault(kind=FaultKind.SUBMIT_STATUS, status_code=429, message="no slots", times=3)
    assert Fault.from_json(fault.to_json()) == fault
    verbatim = Fault(kind=FaultKind.SUBMIT_STATUS, status_code=429, retry_after="²", seconds=5)
    assert Fault.from_json(verbatim.to_json()) == verbatim
    assert retry_after(verbatim) == {"Retry-After": "²"}  # the verbatim header wins
    assert Fault.from_json({"kind": "JOB_FAILED"}).kind is FaultKind.JOB_FAILED
