"""A simulated Discovery job's life, and the envelopes that report it (§3).

A job's state is a pure function of its timeline and ``now``: it is QUEUED for
``queued_seconds`` (forever when that is infinite, the ``stuck_queued`` fault),
RUNNING for ``run_seconds`` (forever when that is None, the ``hang`` fault),
then in its terminal state. The terminal :class:`Outcome` is
decided when the job is created, so every poll reports the same result.

Envelopes come in several shapes (top-level ``id``/``status``, nested
``job: {job_id, state}``, or nested with a blank state that falls back to the
top level) so a client's tolerant decoding is exercised; the shape is fixed
per job.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class JobState(StrEnum):
    """The states the simulator reports."""

    QUEUED = "JOB_STATE_QUEUED"
    RUNNING = "JOB_STATE_RUNNING"
    SUCCEEDED = "JOB_STATE_SUCCEEDED"
    FAILED = "JOB_STATE_FAILED"
    CANCELLED = "JOB_STATE_CANCELLED"

    @property
    def terminal(self) -> bool:
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


class EnvelopeStyle(StrEnum):
    """Where an envelope puts the job's fields."""

    TOP = "top"  # {"id", "status", "result"?, "error"?}
    NESTED = "nested"  # {"job": {"job_id", "state", "result"?}, "error"?}
    MIXED = "mixed"  # {"id", "status", "result"?, "job": {"job_id", "state": ""}}


#: The shapes the simulator rotates through by default (the contract's two).
DEFAULT_STYLES: tuple[EnvelopeStyle, ...] = (EnvelopeStyle.TOP, EnvelopeStyle.NESTED)


@dataclass(frozen=True, slots=True)
class UpstreamReply:
    """The backend's HTTP answer as the farm relays it."""

    status_code: int
    body: bytes
    content_type: str = "application/json"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a job ends: its terminal state and what it carries."""

    state: JobState
    response: UpstreamReply | None = None
    #: ``result.error``: an object ``{code, message}`` or a string (``"CODE: message"``).
    result_error: dict[str, str] | str | None = None
    top_error: str | None = None
    #: Fields reported beside the status word (``error_code`` and a string ``error``).
    status_fields: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Job:
    """One submitted job; times are on the simulator's clock (monotonic unless injected)."""

    id: str
    service: str
    endpoint: str
    submitted_at: float
    queued_seconds: float
    run_seconds: float | None
    outcome: Outcome
    style: EnvelopeStyle = EnvelopeStyle.TOP
    idempotency_key: str | None = None


def finishes_at(job: Job) -> float | None:
    """When the job reaches its terminal state, or None if it never does."""
    if job.run_seconds is None or math.isinf(job.queued_seconds):
        return None
    return job.submitted_at + job.queued_seconds + job.run_seconds


def job_state(job: Job, now: float) -> JobState:
    """The state ``job`` is in at ``now``."""
    if now < job.submitted_at + job.queued_seconds:
        return JobState.QUEUED
    end = finishes_at(job)
    if end is None or now < end:
        return JobState.RUNNING
    return job.outcome.state


def result_json(outcome: Outcome) -> dict[str, Any] | None:
    """The envelope's ``result`` for a job that ended with ``outcome``."""
    if outcome.response is not None:
        reply = outcome.response
        return {
            "response": {
                "status_code": reply.status_code,
                "body": base64.b64encode(reply.body).decode("ascii"),
                "content_type": reply.content_type,
            }
        }
    if isinstance(outcome.result_error, str):
        return {"error": outcome.result_error}
    if outcome.result_error is not None:
        return {"error": dict(outcome.result_error)}
    return None


def envelope(job: Job, state: JobState) -> dict[str, Any]:
    """The envelope reporting ``job`` in ``state``, in the job's shape."""
    result = result_json(job.outcome) if state.terminal else None
    top_error = job.outcome.top_error if state.terminal else None
    fields: dict[str, Any] = {}
    if result is not None:
        fields["result"] = result
    if state.terminal and job.outcome.status_fields:
        fields.update(job.outcome.status_fields)
    if job.style is EnvelopeStyle.NESTED:
        body: dict[str, Any] = {"job": {"job_id": job.id, "state": state.value, **fields}}
    elif job.style is EnvelopeStyle.MIXED:
        body = {"id": job.id, "status": state.value, **fields}
        body["job"] = {"job_id": job.id, "state": ""}
    else:
        body = {"id": job.id, "status": state.value, **fields}
    if top_error is not None:
        body["error"] = top_error
    return body
