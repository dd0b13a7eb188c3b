"""Decoding the farm's answers: job envelopes, relayed responses, chat and embedding bodies.

Pure functions on bytes and plain JSON values (no I/O, no clock), so every
rule of §3 is pinned by table and property tests. Each function returns a
value or raises an ``llm_client`` error; JSON and base64 failures are mapped
at the edge (``llm_client._edge``); reading text and codes out of error values
lives in :mod:`llm_client._transport.error_text`.

The farm answers submit and poll with the same envelope, decoded tolerantly:
fields at the top level or nested under ``job``; ``id``/``job_id``;
``status``/``state``; nested fields win and a blank nested field falls back to
the top level. :func:`resolve` then decides what the envelope means: keep
polling (``None``), the backend's relayed response, or a typed error.

**Which code decides a failed or cancelled job** (§3). The farm
may name the code in several places; when they disagree, the first one found
in this order wins. A bare number is not a farm code: an ``error_code`` of ``503`` is
ignored, and an ``error.code`` of ``500`` counts only when no field names a real code.

====  ==========================================================  =====================
rank  where the code is                                            why this rank
====  ==========================================================  =====================
1     ``result.error.code`` (or ``result.error.error_code``)        the farm's own report
                                                                   of this job's failure
2     ``error_code`` beside the status: in ``result``, then in      the status's summary
      the nested ``job``, then at the top level                    field; inner
                                                                   wins, as for every
                                                                   nested field
3     the ``code`` of an ``error`` object (nested ``job.error``     a structured field,
      before the top-level ``error``)                              but not the job's own
4     the code leading the message (``"UPSTREAM_ERROR: …"``)       prose: read last
====  ==========================================================  =====================

The message is ``result.error``'s text, else the envelope ``error``'s text. Its
leading code is dropped when it is the winning code and kept otherwise, so a
disagreement stays visible in the error text. The winning code alone decides
the type: a backend-never-reached code (:data:`BACKEND_UNAVAILABLE_CODES`) is
``BackendUnavailable``, any other code (or none) ``Upstream``, classified by
its text. A fixed order was chosen over "any never-reached code wins": the
most specific report decides, and no field can turn a crash the job itself
reported into a release.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from llm_client._edge import b64decode, loads
from llm_client._errors import (
    BackendUnavailable,
    CapacityUnavailable,
    DecodeError,
    EmptyResponse,
    JobLost,
    LLMError,
    UnknownStatus,
    Upstream,
)
from llm_client._retry.classify import busy_status
from llm_client._transport.base import ChatResult, EmbedResult, UpstreamResponse
from llm_client._transport.error_text import (
    blank,
    body_error_parts,
    body_error_text,
    clip,
    compact_json,
    error_parts,
    farm_code,
    leading_code,
    scalar_text,
    structured_error_parts,
)


class JobState(StrEnum):
    """What a job status means to the client."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


#: The status vocabulary of §3 (upper-cased) and what each word means.
STATUS_STATES: Final[Mapping[str, JobState]] = {
    "SUBMITTED": JobState.QUEUED,
    "JOB_STATE_QUEUED": JobState.QUEUED,
    "PENDING": JobState.QUEUED,
    "QUEUED": JobState.QUEUED,
    "JOB_STATE_RUNNING": JobState.RUNNING,
    "RUNNING": JobState.RUNNING,
    "PROCESSING": JobState.RUNNING,
    "JOB_STATE_SUCCEEDED": JobState.SUCCEEDED,
    "COMPLETED": JobState.SUCCEEDED,
    "SUCCEEDED": JobState.SUCCEEDED,
    "SUCCESS": JobState.SUCCEEDED,
    "JOB_STATE_FAILED": JobState.FAILED,
    "FAILED": JobState.FAILED,
    "JOB_STATE_CANCELED": JobState.CANCELLED,
    "JOB_STATE_CANCELLED": JobState.CANCELLED,
    "CANCELED": JobState.CANCELLED,
    "CANCELLED": JobState.CANCELLED,
}

#: Farm error codes meaning the backend was never reached → ``BackendUnavailable``.
BACKEND_UNAVAILABLE_CODES: Final = frozenset(
    {"UPSTREAM_ERROR", "SERVICE_NOT_FOUND", "SERVICE_DISABLED", "ENDPOINT_NOT_FOUND"}
)

#: Poll statuses that mean the farm no longer knows a job it issued.
LOST_JOB_STATUSES: Final = frozenset({404})

#: Submit statuses that may mean "no free slot" (when the text says so).
CAPACITY_STATUSES: Final = frozenset({429, 503})
#: Words in a 429/503 submit answer that make it a capacity rejection.
CAPACITY_WORDS: Final = ("capacity", "slot")


@dataclass(frozen=True, slots=True)
class Envelope:
    """A decoded job envelope (submit and poll answers alike)."""

    job_id: str | None
    #: The status word, stripped and upper-cased; ``""`` when the envelope had none.
    status: str
    state: JobState
    #: The envelope's ``error`` (any JSON), ``None`` when absent or blank.
    error: object
    #: The ``result`` object, ``None`` when absent.
    result: Mapping[str, object] | None
    #: The ``error_code`` beside the status: from ``result``, the nested ``job`` or
    #: the top level, the innermost first; ``None`` when absent, blank or a bare number.
    error_code: str | None = None


# --- envelopes ------------------------------------------------------------------------


def normalize_status(raw: str) -> str:
    """Status words are case-insensitive: compare them stripped and upper-cased."""
    return raw.strip().upper()


def state_of(status: str) -> JobState:
    """What a (normalised) status word means; unknown words are ``UNKNOWN``."""
    return STATUS_STATES.get(status, JobState.UNKNOWN)


def parse_envelope(raw: bytes) -> Envelope:
    """Decode a submit or poll answer's body into an :class:`Envelope`."""
    return envelope_from_json(loads(raw, "decode job envelope"))


def envelope_from_json(data: object) -> Envelope:
    """Resolve top-level and nested (``job``) fields into one :class:`Envelope`."""
    if not isinstance(data, dict):
        raise DecodeError(f"decode job envelope: expected a JSON object, got {type(data).__name__}")
    nested = data.get("job")
    sources: tuple[Mapping[str, object], ...] = (
        (nested, data) if isinstance(nested, dict) else (data,)
    )

    def first_text(*keys: str) -> str | None:
        for source in sources:
            for key in keys:
                found = scalar_text(source.get(key))
                if found:
                    return found
        return None

    def first_value(key: str) -> object:
        for source in sources:
            value = source.get(key)
            if not blank(value):
                return value
        return None

    status = normalize_status(first_text("state", "status") or "")
    result = first_value("result")
    results = [found for source in sources if isinstance(found := source.get("result"), dict)]
    codes = (farm_code(holder.get("error_code")) for holder in (*results, *sources))
    return Envelope(
        job_id=first_text("job_id", "id"),
        status=status,
        state=state_of(status),
        error=first_value("error"),
        result=result if isinstance(result, dict) else None,
        error_code=next((code for code in codes if code), None),
    )


def _status_code(value: object) -> int:
    if value is None:
        return 200
    if isinstance(value, bool):
        raise DecodeError("decode job envelope: response status_code is not a number")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int):
        raise DecodeError("decode job envelope: response status_code is not a number")
    # Some farms report 0 for "no status relayed": treat it as a plain 200.
    return value or 200


def relayed_response(envelope: Envelope) -> UpstreamResponse | None:
    """The backend's response relayed in ``result.response``, body decoded; None if absent."""
    if envelope.result is None:
        return None
    response = envelope.result.get("response")
    if not isinstance(response, dict):
        return None
    body = response.get("body")
    if body is None:
        raw = b""
    elif isinstance(body, str):
        raw = b64decode(body, "decode job response body")
    else:
        raise DecodeError("decode job response body: expected base64 text")
    content_type = response.get("content_type")
    return UpstreamResponse(
        status_code=_status_code(response.get("status_code")),
        body=raw,
        content_type=content_type if isinstance(content_type, str) else "application/json",
        job_id=envelope.job_id,
    )


def _job_ref(envelope: Envelope) -> str:
    return f"job {envelope.job_id}" if envelope.job_id else "job (no id)"


def farm_error_parts(envelope: Envelope) -> tuple[str | None, str | None]:
    """``(code, message)`` of a failed or cancelled job, by the order in the module docstring."""
    result_error = envelope.result.get("error") if envelope.result is not None else None
    result_code, result_message = structured_error_parts(result_error)
    error_code, error_message = structured_error_parts(envelope.error)
    ranked = (result_code, envelope.error_code, error_code)
    code = next((c for c in ranked if c and not c.isdigit()), None) or next(
        (c for c in ranked if c), None
    )
    message = result_message or error_message
    if message is not None:
        lead, rest = leading_code(message)
        if lead is not None and (code is None or lead.upper() == code.upper()):
            code, message = code or lead, rest
    return code, message


def is_backend_unavailable_code(code: str | None) -> bool:
    """Whether a farm code means the backend was never reached (case-insensitive)."""
    return code is not None and code.upper() in BACKEND_UNAVAILABLE_CODES


def coded_error(
    text: str, code: str | None, *, status_code: int | None = None, fallback_code: str | None = None
) -> LLMError:
    """The error a farm code decides: ``BackendUnavailable`` for backend-never-reached
    codes, else ``Upstream`` (classified by its text and status)."""
    if is_backend_unavailable_code(code):
        return BackendUnavailable(text, code=code)
    return Upstream(text, code=code or fallback_code, status_code=status_code)


def failure_error(envelope: Envelope) -> LLMError:
    """The typed error of a FAILED job: ``CODE: message``; backend-never-reached codes are
    ``BackendUnavailable``, every other code (or none) is ``Upstream``."""
    code, message = farm_error_parts(envelope)
    if code and message:
        text = f"{code}: {message}"
    elif code:
        text = f"{code}: job failed"
    elif message:
        text = message
    else:
        text = f"job failed without an error report ({_job_ref(envelope)})"
    return coded_error(text, code)


def cancelled_error(envelope: Envelope) -> LLMError:
    """A CANCELLED job is decoded exactly like a FAILED one: its error code decides
    (``UPSTREAM_ERROR`` → ``BackendUnavailable``); the text says it was cancelled."""
    code, message = farm_error_parts(envelope)
    detail = ": ".join(part for part in (code, message) if part)
    text = f"{_job_ref(envelope)} was cancelled" + (f": {detail}" if detail else "")
    return coded_error(text, code, fallback_code="JOB_CANCELLED")


def upstream_status_error(response: UpstreamResponse) -> Upstream:
    """A relayed backend answer with a non-2xx status."""
    text = body_error_text(response.body)
    return Upstream(
        f"upstream returned status {response.status_code}" + (f": {text}" if text else ""),
        code=f"HTTP_{response.status_code}",
        status_code=response.status_code,
    )


def _ok(status_code: int) -> bool:
    return 200 <= status_code < 300


def resolve(envelope: Envelope) -> UpstreamResponse | None:
    """What an envelope means: ``None`` = keep polling; a response = done; else raise.

    - queued/running → ``None``;
    - failed → :func:`failure_error`; cancelled → :func:`cancelled_error`;
    - succeeded → the relayed response; non-2xx → ``Upstream``; no body → ``EmptyResponse``;
    - unknown status → the response if it is a usable 2xx, else ``UnknownStatus``
      (no status at all: ``Upstream`` from the envelope's error, else ``DecodeError``).
    """
    state = envelope.state
    if state in (JobState.QUEUED, JobState.RUNNING):
        return None
    if state is JobState.FAILED:
        raise failure_error(envelope)
    if state is JobState.CANCELLED:
        raise cancelled_error(envelope)
    response = relayed_response(envelope)
    if state is JobState.SUCCEEDED:
        if response is not None and not _ok(response.status_code):
            raise upstream_status_error(response)
        if response is None or not response.body.strip():
            raise EmptyResponse(f"{_job_ref(envelope)} succeeded but response body is empty")
        return response
    if response is not None and _ok(response.status_code) and response.body.strip():
        return response
    if envelope.status:
        raise UnknownStatus(
            f"{_job_ref(envelope)} reported unknown status {clip(envelope.status, 80)!r}",
            code="UNKNOWN_STATUS",
        )
    code, message = farm_error_parts(envelope)
    if code or message:
        raise coded_error(": ".join(part for part in (code, message) if part), code)
    raise DecodeError("decode job envelope: no job status")


def decode_job_answer(raw: bytes) -> UpstreamResponse | None:
    """Body of a submit/poll answer → ``None`` (still pending), the response, or an error."""
    return resolve(parse_envelope(raw))


# --- HTTP status answers of the farm itself ------------------------------------------------


def is_capacity_rejection(status_code: int, text: str | None) -> bool:
    """429/503 whose text says "capacity" or "slot" (500 "capacity" is not capacity)."""
    if status_code not in CAPACITY_STATUSES or not text:
        return False
    folded = text.casefold()
    return any(word in folded for word in CAPACITY_WORDS)


def http_status_error(
    what: str, status_code: int, body: bytes, retry_after: float | None = None
) -> LLMError:
    """A non-2xx answer of the farm to ``what`` (``submit``, ``poll job X``).

    An answer carrying a farm error code (``404 {"code": "SERVICE_NOT_FOUND"}``,
    or a text starting with one) is decoded by that code like ``result.error``:
    backend-never-reached codes are ``BackendUnavailable``. Otherwise ``Upstream``
    with the status (``HTTP_<status>`` unless the farm named its own code). A busy
    status (:func:`~llm_client._retry.classify.busy_status`: a 429, or a 503 with a valid
    ``Retry-After``, seconds in ``retry_after``) is always that ``Upstream``, carrying
    the pause: busy whatever code it carries, never a charged ``BackendUnavailable``.
    """
    code, message = body_error_parts(body)
    if code is not None and code.isdigit():
        code = None  # an HTTP-ish number, not a farm code: the status says it already
    detail = ": ".join(part for part in (code, message) if part)
    text = f"{what}: status {status_code}" + (f": {detail}" if detail else "")
    fallback = f"HTTP_{status_code}"
    if busy_status(status_code, retry_after) is not None:
        return Upstream(
            text, code=code or fallback, status_code=status_code, retry_after=retry_after
        )
    return coded_error(text, code, status_code=status_code, fallback_code=fallback)


def poll_status_error(
    job_id: str, status_code: int, body: bytes, retry_after: float | None = None
) -> LLMError:
    """A non-2xx answer to a poll of a job the farm issued.

    A farm code decides first (``404 {"code": "SERVICE_NOT_FOUND"}`` is
    ``BackendUnavailable``); any other 404 (``{"error": "job not found"}``, a bare 404 of a
    replica without the job) is :class:`JobLost`, the farm's loss; else as
    :func:`http_status_error` (a 503 with a valid ``Retry-After`` is busy there too).
    """
    error = http_status_error(f"poll job {job_id}", status_code, body, retry_after)
    if status_code in LOST_JOB_STATUSES and not isinstance(error, BackendUnavailable):
        return JobLost(f"{error.message} (the farm lost the job)", code="JOB_LOST")
    return error


def submit_status_error(
    status_code: int, body: bytes, retry_after: float | None = None
) -> LLMError:
    """A non-2xx submit answer: a farm code that decides, a capacity rejection, or
    ``Upstream`` with the status. ``retry_after`` (the answer's ``Retry-After``, seconds)
    travels on a capacity rejection or an ``Upstream``: a 429, a capacity answer or a 503
    that names its pause cools the target that long, fleet-wide (§3)."""
    error = http_status_error("submit", status_code, body, retry_after)
    if not isinstance(error, Upstream):
        return error
    if is_capacity_rejection(status_code, body_error_text(body)):
        return CapacityUnavailable(error.message, code=error.code, retry_after=retry_after)
    error.retry_after = retry_after
    return error


# --- inner bodies -----------------------------------------------------------------------


def _assistant_content(message: Mapping[str, object]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    if isinstance(content, str) and content.strip():
        return content
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict):
        function = calls[0].get("function")
        if isinstance(function, dict):
            arguments = function.get("arguments")
            if isinstance(arguments, str) and arguments.strip():
                return arguments
    return ""


def _optional_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def chat_result(response: UpstreamResponse, *, what: str = "chat completion") -> ChatResult:
    """Decode an OpenAI chat completion into a :class:`ChatResult`."""
    if not response.body.strip():
        raise EmptyResponse(f"{what}: response body is empty")
    data = loads(response.body, "decode chat completion payload")
    if not isinstance(data, dict):
        raise DecodeError("decode chat completion payload: expected a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        code, message = error_parts(data.get("error"))
        if code or message:
            raise Upstream(
                f"{what} carried an error: " + ": ".join(p for p in (code, message) if p),
                code=code,
            )
        raise DecodeError("decode chat completion payload: no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise DecodeError("decode chat completion payload: first choice has no message")
    content = _assistant_content(message)
    if not content:
        raise EmptyResponse(f"{what}: assistant message is empty")
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return ChatResult(
        content=content,
        model=_optional_str(data.get("model")),
        prompt_tokens=_optional_int(usage.get("prompt_tokens")),
        completion_tokens=_optional_int(usage.get("completion_tokens")),
        finish_reason=_optional_str(choice.get("finish_reason")),
        job_id=response.job_id,
        raw=data,
    )


def _vector(value: object, dimension: int, index: int) -> list[float]:
    if not isinstance(value, list) or len(value) != dimension:
        raise DecodeError(f"decode embeddings: vector {index} does not have dimension {dimension}")
    kinds = set(map(type, value))  # one C-level pass; JSON numbers are exactly float or int
    if kinds <= {float}:
        return list(value)
    if kinds <= {float, int}:
        return [float(item) for item in value]
    out: list[float] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise DecodeError(f"decode embeddings: vector {index} holds a non-number")
        out.append(float(item))
    return out


def embed_result(response: UpstreamResponse, *, count: int, dimension: int) -> EmbedResult:
    """Decode ``{"embeddings", "dimension", "count"}``; any count or dimension mismatch
    with what was asked is a ``DecodeError``."""
    if not response.body.strip():
        raise EmptyResponse("embeddings: response body is empty")
    data = loads(response.body, "decode embeddings")
    if not isinstance(data, dict):
        raise DecodeError("decode embeddings: expected a JSON object")
    embeddings = data.get("embeddings")
    if not isinstance(embeddings, list):
        raise DecodeError("decode embeddings: no embeddings list")
    reported_count = data.get("count", len(embeddings))
    if reported_count != count or len(embeddings) != count:
        raise DecodeError(
            f"decode embeddings: asked for {count} vectors, got {len(embeddings)} "
            f"(count {compact_json(reported_count, 20)})"
        )
    reported_dimension = data.get("dimension", dimension)
    if reported_dimension != dimension:
        raise DecodeError(
            f"decode embeddings: asked for dimension {dimension}, "
            f"got {compact_json(reported_dimension, 20)}"
        )
    vectors = [_vector(item, dimension, index) for index, item in enumerate(embeddings)]
    return EmbedResult(embeddings=vectors, dimension=dimension, job_id=response.job_id)
