"""The simulated backends behind the farm: OpenAI-style chat and the embedder.

Pure functions from an inner request (and the fault acting on its job) to what
the backend answers. The chat model is :mod:`memory_worker.farmsim.extractor`
(or a scripted output); the embedder is a :class:`~memory_worker.farmsim.embedder.SimEmbedder`
(the real multilingual model by default, the hashed one on request).
Faults that change the model's answer (truncated, garbage, empty, upstream
status) are applied here, so the Discovery jobs and the direct endpoint
misbehave the same way.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

import orjson

from memory_worker.farmsim import adversary, embedder, extractor
from memory_worker.farmsim.faults import (
    DEFAULT_FAILED_CODE,
    DEFAULT_FAILED_MESSAGE,
    DEFAULT_SUBMIT_MESSAGE,
    DEFAULT_SUBMIT_STATUS,
    DEFAULT_TOP_LEVEL_MESSAGE,
    DEFAULT_UPSTREAM_MESSAGE,
    DEFAULT_UPSTREAM_STATUS,
    Fault,
    FaultKind,
)
from memory_worker.farmsim.jobs import JobState, Outcome, UpstreamReply

EMBED_ENDPOINT = "encode"
SIMULATED_MODEL = "farm-simulator-rules"
JSON = "application/json"

#: What the ``garbage`` fault answers instead of JSON.
GARBAGE_TEXT = (
    "Sure! Here is a summary of the conversation: everyone had a lovely time "
    "and talked about many interesting things. Let me know if you need anything else."
)

#: What a model answers to a prompt that is not a memory task, in text mode.
PLAIN_REPLY = "ok (farm simulator)"

#: Bodies the ``malformed_envelope`` fault rotates through: not an envelope.
MALFORMED_BODIES: tuple[tuple[bytes, str], ...] = (
    (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    (b'[{"status": "JOB_STATE_QUEUED"}]', JSON),
    (b'{"accepted": true, "note": "no status here"}', JSON),
)

_FAILED_KINDS = frozenset(
    {
        FaultKind.JOB_FAILED,
        FaultKind.JOB_FAILED_TOP_LEVEL,
        FaultKind.JOB_FAILED_BARE,
        FaultKind.JOB_CANCELLED,
        FaultKind.JOB_FAILED_STRING,
        FaultKind.JOB_FAILED_ERROR_CODE,
    }
)


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (UTF-8, non-ASCII kept)."""
    return orjson.dumps(value)


def decode_body(value: object) -> bytes:
    """An invocation body: standard, URL-safe or unpadded base64 (ValueError otherwise)."""
    if not isinstance(value, str):
        raise ValueError("invocation.body must be a base64 string")
    try:
        data = (value + "=" * (-len(value) % 4)).encode("ascii")
    except UnicodeEncodeError as exc:
        raise ValueError("invocation.body is not base64") from exc
    for altchars in (None, b"-_"):
        try:
            return base64.b64decode(data, altchars=altchars, validate=True)
        except binascii.Error:
            continue
    raise ValueError("invocation.body is not base64")


def is_embed_endpoint(endpoint: str) -> bool:
    """Whether an invocation goes to the embedder rather than a chat model."""
    return endpoint == EMBED_ENDPOINT


def malformed_body(counter: int) -> tuple[bytes, str]:
    """The ``counter``-th malformed answer: text, a JSON array, an object without status."""
    return MALFORMED_BODIES[counter % len(MALFORMED_BODIES)]


def error_reply(status_code: int, message: str) -> UpstreamReply:
    """A backend error answer in the OpenAI shape."""
    return UpstreamReply(status_code, dumps({"error": {"message": message}}))


# --------------------------------------------------------------------------- chat


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def last_user_content(request: Mapping[str, Any]) -> str | None:
    """The content of the request's last user message."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return None


def wants_json(request: Mapping[str, Any]) -> bool:
    """Whether the request asked for a JSON answer."""
    fmt = request.get("response_format")
    return isinstance(fmt, Mapping) and fmt.get("type") in ("json_object", "json_schema")


def rule_content(request: Mapping[str, Any]) -> str:
    """The rule-based model's answer to a chat request."""
    content = last_user_content(request) or ""
    task = extractor.parse_task(content)
    answered = extractor.answer(task) if task is not None else None
    if answered is not None:
        return dumps(answered).decode()
    if wants_json(request):
        return dumps(extractor.empty_extraction()).decode()
    return PLAIN_REPLY


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


def completion(request: Mapping[str, Any], content: str, completion_id: str) -> dict[str, Any]:
    """An OpenAI chat completion carrying ``content``."""
    prompt = sum(
        _tokens(_text_of(m.get("content")))
        for m in request.get("messages") or []
        if isinstance(m, Mapping)
    )
    answer = _tokens(content)
    model = request.get("model")
    return {
        "id": f"chatcmpl-{completion_id}",
        "object": "chat.completion",
        "model": model if isinstance(model, str) and model else SIMULATED_MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": answer,
            "total_tokens": prompt + answer,
        },
    }


def adversarial_content(request: Mapping[str, Any], moves: str | None) -> str:
    """The rule-based model's answer with its cards disguised (the ``adversarial`` fault)."""
    task = extractor.parse_task(last_user_content(request) or "")
    answered = extractor.answer(adversary.blind(task)) if task is not None else None
    if answered is None:
        return rule_content(request)
    return dumps(adversary.disguised(answered, adversary.moves_of(moves))).decode()


def chat_reply(
    raw: bytes,
    kind: FaultKind,
    scripted: str | None,
    completion_id: str,
    moves: str | None = None,
) -> UpstreamReply:
    """The chat backend's answer to ``raw`` under a content-level fault (``moves``: the
    ``adversarial`` fault's code)."""
    try:
        request = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return error_reply(400, "request body is not valid JSON")
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        return error_reply(400, "request must be an object with a messages list")
    if kind is FaultKind.EMPTY_BODY:
        return UpstreamReply(200, b"")
    if kind is FaultKind.GARBAGE:
        content = GARBAGE_TEXT
    elif kind is FaultKind.TRUNCATED_JSON:
        content = extractor.truncate_json(rule_content(request))
    elif kind is FaultKind.ADVERSARIAL:
        content = adversarial_content(request, moves)
    elif scripted is not None:
        content = scripted
    else:
        content = rule_content(request)
    return UpstreamReply(200, dumps(completion(request, content, completion_id)))


# --------------------------------------------------------------------------- embedder


def embed_prompts(raw: bytes) -> tuple[list[str], bool] | None:
    """The texts of an embedding request and whether they are queries (None if malformed)."""
    try:
        request = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    prompts = request.get("prompts") if isinstance(request, dict) else None
    if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
        return None
    return prompts, bool(request.get("task_description"))


def answers_vectors(kind: FaultKind) -> bool:
    """Whether an embedding job under a fault of ``kind`` answers with vectors at all
    (an outage answers at once, without running the model)."""
    return kind not in _FAILED_KINDS and kind not in (
        FaultKind.UPSTREAM_STATUS,
        FaultKind.EMPTY_BODY,
        FaultKind.GARBAGE,
    )


def embed_reply(raw: bytes, kind: FaultKind, model: embedder.SimEmbedder) -> UpstreamReply:
    """The embedder's answer to ``raw`` under a content-level fault.

    A request with a ``task_description`` embeds queries, one without passages
    (what e5's prefixes need; the hashed embedder ignores it).
    """
    try:
        request = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return error_reply(400, "request body is not valid JSON")
    prompts = request.get("prompts") if isinstance(request, dict) else None
    if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
        return error_reply(400, "prompts must be a list of strings")
    dimension = request.get("dimension", embedder.DEFAULT_DIMENSION)
    if not isinstance(dimension, int) or not 1 <= dimension <= embedder.MAX_DIMENSION:
        return error_reply(400, f"dimension must be within 1..{embedder.MAX_DIMENSION}")
    if kind is FaultKind.EMPTY_BODY:
        return UpstreamReply(200, b"")
    if kind is FaultKind.GARBAGE:
        return UpstreamReply(200, GARBAGE_TEXT.encode(), "text/plain")
    vectors = model.embed(prompts, dimension, bool(request.get("task_description")))
    body = dumps({"embeddings": vectors, "dimension": dimension, "count": len(vectors)})
    if kind is FaultKind.TRUNCATED_JSON:
        body = extractor.truncate_json(body.decode()).encode()
    return UpstreamReply(200, body)


# --------------------------------------------------------------------------- outcomes


def failed_outcome(fault: Fault) -> Outcome:
    """How a job fails under one of the job-failure faults."""
    if fault.kind is FaultKind.JOB_FAILED:
        return Outcome(
            JobState.FAILED,
            result_error={
                "code": fault.code or DEFAULT_FAILED_CODE,
                "message": fault.message or DEFAULT_FAILED_MESSAGE,
            },
        )
    if fault.kind is FaultKind.JOB_FAILED_TOP_LEVEL:
        return Outcome(JobState.FAILED, top_error=fault.message or DEFAULT_TOP_LEVEL_MESSAGE)
    if fault.kind is FaultKind.JOB_CANCELLED:
        if fault.code is not None:
            return Outcome(
                JobState.CANCELLED,
                result_error={"code": fault.code, "message": fault.message or "job cancelled"},
            )
        return Outcome(JobState.CANCELLED, top_error=fault.message)
    if fault.kind is FaultKind.JOB_FAILED_STRING:
        code = fault.code or DEFAULT_FAILED_CODE
        return Outcome(
            JobState.FAILED, result_error=f"{code}: {fault.message or DEFAULT_FAILED_MESSAGE}"
        )
    if fault.kind is FaultKind.JOB_FAILED_ERROR_CODE:
        code = fault.code or DEFAULT_FAILED_CODE
        fields = {"error_code": code, "error": fault.message or DEFAULT_FAILED_MESSAGE}
        return Outcome(JobState.FAILED, status_fields=fields)
    return Outcome(JobState.FAILED)


def job_outcome(
    endpoint: str,
    raw: bytes,
    fault: Fault,
    scripted: str | None,
    job_id: str,
    model: embedder.SimEmbedder,
) -> Outcome:
    """How a job created under ``fault`` ends."""
    if fault.kind in _FAILED_KINDS:
        return failed_outcome(fault)
    if fault.kind is FaultKind.UPSTREAM_STATUS:
        return Outcome(
            JobState.SUCCEEDED,
            response=error_reply(
                fault.status_code or DEFAULT_UPSTREAM_STATUS,
                fault.message or DEFAULT_UPSTREAM_MESSAGE,
            ),
        )
    if is_embed_endpoint(endpoint):
        return Outcome(JobState.SUCCEEDED, response=embed_reply(raw, fault.kind, model))
    return Outcome(
        JobState.SUCCEEDED, response=chat_reply(raw, fault.kind, scripted, job_id, fault.code)
    )


def direct_reply(
    raw: bytes, fault: Fault, scripted: str | None, completion_id: str
) -> UpstreamReply:
    """The direct OpenAI-compatible endpoint's answer under ``fault``.

    Status faults answer their status; job failures become a 502 naming the
    farm's error code; content faults change the assistant content.
    """
    if fault.kind is FaultKind.SUBMIT_STATUS:
        return error_reply(
            fault.status_code or DEFAULT_SUBMIT_STATUS, fault.message or DEFAULT_SUBMIT_MESSAGE
        )
    if fault.kind is FaultKind.UPSTREAM_STATUS:
        return error_reply(
            fault.status_code or DEFAULT_UPSTREAM_STATUS, fault.message or DEFAULT_UPSTREAM_MESSAGE
        )
    if fault.kind in _FAILED_KINDS:
        outcome = failed_outcome(fault)
        if isinstance(outcome.result_error, str):
            text = outcome.result_error
        elif outcome.result_error is not None:
            text = f"{outcome.result_error['code']}: {outcome.result_error['message']}"
        elif outcome.status_fields is not None:
            text = f"{outcome.status_fields['error_code']}: {outcome.status_fields['error']}"
        else:
            text = outcome.top_error or "bad gateway"
        return error_reply(fault.status_code or 502, text)
    return chat_reply(raw, fault.kind, scripted, completion_id, fault.code)
