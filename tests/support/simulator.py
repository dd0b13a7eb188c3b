"""Client helpers for the farm simulator: a client config on it, and its Discovery wire (build a
submit, read an envelope, wait).

The wire suites (``test_farmsim_server``, ``test_farmsim_faults``) speak raw HTTP to the
simulator; these are the few steps every one of them takes.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest

from llm_client import ClientConfig
from memory_worker.farmsim import FarmSimulator
from tests.support.clock import ManualClock

TERMINAL = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}


def sim_config(sim: FarmSimulator, **budgets: float) -> ClientConfig:
    """A client config on ``sim`` with budgets compressed for tests (``budgets`` override them)."""
    values: dict[str, Any] = {
        "request_timeout": 2.0,
        "task_timeout": 3.0,
        "capacity_wait": 1.0,
        "capacity_poll": 0.05,
        "job_poll": 0.02,
    } | budgets
    return ClientConfig(base_url=sim.base_url, **values)


def submit(
    inner: Any,
    *,
    service: str = "llm",
    endpoint: str = "chat_completions",
    key: str | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A ``/v1/jobs`` submit body invoking ``service``/``endpoint`` with ``inner`` as JSON."""
    invocation: dict[str, Any] = {
        "service_name": service,
        "endpoint_name": endpoint,
        "body": base64.b64encode(json.dumps(inner).encode()).decode(),
        "content_type": "application/json",
        "timeout_ms": 5000,
    }
    if headers:
        invocation["headers"] = headers
    body: dict[str, Any] = {"invocation": invocation, "priority": 10}
    if key is not None:
        body["idempotency_key"] = key
    return body


def extraction(text: str, *, existing: list[dict[str, Any]] | None = None) -> str:
    """A memory-extraction task (one message by Anna in chat 42) as the chat prompt's JSON."""
    return json.dumps(
        {
            "task": "memory_extraction",
            "run": {"id": "r1", "chat_id": 42, "thread_id": 0},
            "messages": [
                {
                    "message_id": 1,
                    "user_id": 7,
                    "sender_name": "Anna",
                    "text": text,
                    "sent_at": "2024-05-01T10:00:00Z",
                }
            ],
            "existing_cards": existing or [],
        }
    )


def fields(envelope: Any) -> tuple[str | None, str | None, Any, Any]:
    """id, state, result, error — decoded tolerantly, nested fields first."""
    job = envelope.get("job") or {}
    job_id = job.get("job_id") or envelope.get("id")
    state = job.get("state") or envelope.get("status")
    result = job.get("result", envelope.get("result"))
    error = job.get("error", envelope.get("error"))
    return job_id, state, result, error


async def finish(client: httpx.AsyncClient, payload: dict[str, Any]) -> Any:
    """Submit ``payload`` (blocking) and poll the job until it is terminal; its last envelope."""
    answer = await client.post("/v1/jobs/blocking", json=payload)
    assert answer.status_code == 200
    envelope = answer.json()
    job_id, state, _, _ = fields(envelope)
    deadline = time.monotonic() + 3.0
    while state not in TERMINAL:
        assert time.monotonic() < deadline, "job never finished"
        await asyncio.sleep(0.01)
        envelope = await poll(client, job_id)
        _, state, _, _ = fields(envelope)
    return envelope


def response(envelope: Any) -> tuple[int, bytes]:
    """A succeeded job's relayed response: its status code and body."""
    _, state, result, _ = fields(envelope)
    assert state == "JOB_STATE_SUCCEEDED"
    relayed = result["response"]
    return relayed["status_code"], base64.b64decode(relayed["body"])


def content(body: bytes) -> str:
    """The assistant's text in a chat-completions body."""
    text = json.loads(body)["choices"][0]["message"]["content"]
    assert isinstance(text, str)
    return text


@contextlib.asynccontextmanager
async def serving(sim: FarmSimulator) -> AsyncIterator[httpx.AsyncClient]:
    """``sim`` started and an HTTP client on it, both closed after — for a test that builds its
    own simulator (other timings, an injected clock)."""
    async with sim, httpx.AsyncClient(base_url=sim.base_url, timeout=3.0) as http:
        yield http


async def poll(client: httpx.AsyncClient, job_id: str | None) -> Any:
    """One ``GET /v1/jobs/{id}``: the job's envelope now."""
    return (await client.get(f"/v1/jobs/{job_id}")).json()


async def timeline(
    sim: FarmSimulator, clock: ManualClock, payload: dict[str, Any], moments: Sequence[float]
) -> list[Any]:
    """Serve ``sim`` (built on ``clock``), submit ``payload``, then poll its job at each of
    ``moments`` — seconds after the submit on that clock, set by hand, never waited for: the
    submit's envelope and each poll's, in order."""
    async with serving(sim) as client:
        submitted = clock.now
        envelopes = [(await client.post("/v1/jobs/blocking", json=payload)).json()]
        for moment in moments:
            clock.now = submitted + moment
            envelopes.append(await poll(client, fields(envelopes[0])[0]))
    return envelopes


def states(envelopes: Sequence[Any]) -> list[str | None]:
    """The job state each envelope reports."""
    return [fields(envelope)[1] for envelope in envelopes]


@pytest.fixture
async def client(sim: FarmSimulator) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client on the ``sim`` fixture's simulator (import it as the fixture)."""
    async with httpx.AsyncClient(base_url=sim.base_url, timeout=3.0) as http:
        yield http
