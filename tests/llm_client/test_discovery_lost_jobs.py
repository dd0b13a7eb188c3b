"""The Discovery client and §3: status-level ``error_code`` and jobs the farm loses.

Against the farm simulator over loopback HTTP, and against a scripted farm (an
``httpx.MockTransport``) where the exact order of answers matters: a job lost once and
found on the resubmit.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from llm_client import (
    BackendUnavailable,
    ClientConfig,
    DiscoveryClient,
    FailureReason,
    JobLost,
    LLMError,
    Upstream,
    retryable_reason,
)
from llm_client._transport.envelope import BACKEND_UNAVAILABLE_CODES
from memory_worker.farmsim import EnvelopeStyle, FarmSimulator, Fault, FaultKind
from tests.support.logs import capture_logs
from tests.support.simulator import sim_config

SERVICE, ENDPOINT = "llm-openai", "chat_completions"
REQUEST: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
DNS = "[Errno -3] Temporary failure in name resolution"
COMPLETION = orjson.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})


@pytest.fixture
async def sim() -> AsyncIterator[FarmSimulator]:
    async with FarmSimulator(
        envelope_styles=(EnvelopeStyle.TOP, EnvelopeStyle.NESTED, EnvelopeStyle.MIXED)
    ) as farm:
        yield farm


@pytest.fixture
async def client(sim: FarmSimulator) -> AsyncIterator[DiscoveryClient]:
    async with DiscoveryClient(sim_config(sim), service=SERVICE, endpoint=ENDPOINT) as c:
        yield c


# --- status-level error_code over HTTP ---------------------------------------------------------


@pytest.mark.parametrize("code", sorted(BACKEND_UNAVAILABLE_CODES))
async def test_status_level_never_reached_codes_are_backend_unavailable(
    sim: FarmSimulator, client: DiscoveryClient, code: str
) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.JOB_FAILED_ERROR_CODE, code=code, message=DNS))
    for _ in range(3):  # top-level, nested and mixed envelopes
        with pytest.raises(BackendUnavailable) as info:
            await client.chat(REQUEST)
        assert (info.value.code, str(info.value)) == (code, f"{code}: {DNS}")
        assert retryable_reason(info.value) is FailureReason.PROVIDER_UNAVAILABLE


@pytest.mark.parametrize("code", ["UPSTREAM_TIMEOUT", "SOMETHING_NEW_42"])
async def test_other_status_level_codes_stay_upstream(
    sim: FarmSimulator, client: DiscoveryClient, code: str
) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.JOB_FAILED_ERROR_CODE, code=code, message="m"))
    with pytest.raises(Upstream) as info:
        await client.chat(REQUEST)
    assert not isinstance(info.value, BackendUnavailable)
    assert info.value.code == code


# --- a job the farm loses ----------------------------------------------------------------------


async def test_a_farm_losing_every_job_is_backend_unavailable_after_one_resubmit(
    sim: FarmSimulator, client: DiscoveryClient
) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.JOB_NOT_FOUND))
    with capture_logs() as events, pytest.raises(JobLost) as info:
        await client.chat(REQUEST, idempotency_key="run-1:1")
    assert isinstance(info.value, BackendUnavailable)
    assert retryable_reason(info.value) is FailureReason.PROVIDER_UNAVAILABLE
    assert info.value.code == "JOB_LOST"
    stats = sim.stats()[SERVICE]
    assert (stats["submits"], stats["polls"]) == (2, 2)  # resubmitted once, then gave up
    assert (sim.last_submit(SERVICE) or {})["idempotency_key"] == "run-1:1"
    lost = [e for e in events if e["event"] == "discovery.job_lost"]
    assert len(lost) == 1
    assert "job not found" not in repr(events)  # the farm's text is not logged


def scripted_farm(
    answers: list[tuple[str, int, dict[str, Any]]],
) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A farm answering each request with the next scripted (method, status, JSON); it records
    every request it got."""
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        method, status, body = answers.pop(0)
        assert request.method == method, (request.method, request.url)
        return httpx.Response(status, json=body)

    return httpx.MockTransport(answer), seen


def succeeded(job_id: str) -> dict[str, Any]:
    body = base64.b64encode(COMPLETION).decode()
    return {"id": job_id, "status": "JOB_STATE_SUCCEEDED", "result": {"response": {"body": body}}}


#: The scripted farm's client budgets (compressed, as for the simulator).
SCRIPTED = ClientConfig(
    base_url="http://farm.test",
    request_timeout=2.0,
    task_timeout=3.0,
    capacity_wait=1.0,
    job_poll=0.01,
)


async def _call(transport: httpx.MockTransport) -> Any:
    async with (
        httpx.AsyncClient(transport=transport) as http,
        DiscoveryClient(SCRIPTED, service=SERVICE, endpoint=ENDPOINT, http=http) as client,
    ):
        return await client.chat(REQUEST, idempotency_key="run-7:1")


NOT_FOUND = {"error": "job not found"}


async def test_a_job_lost_once_is_found_again_by_the_resubmit() -> None:
    transport, seen = scripted_farm(
        [
            ("POST", 200, {"id": "a", "status": "JOB_STATE_QUEUED"}),
            ("GET", 404, NOT_FOUND),
            ("POST", 200, {"id": "b", "status": "JOB_STATE_QUEUED"}),
            ("GET", 200, succeeded("b")),
        ]
    )
    result = await _call(transport)
    assert (result.content, result.job_id) == ("ok", "b")
    submits = [orjson.loads(r.content) for r in seen if r.method == "POST"]
    assert [s["idempotency_key"] for s in submits] == ["run-7:1", "run-7:1"]
    assert submits[0] == submits[1]  # the same job, asked again
    assert [r.url.path for r in seen if r.method == "GET"] == ["/v1/jobs/a", "/v1/jobs/b"]


@pytest.mark.parametrize(
    "lost",
    [
        pytest.param((404, NOT_FOUND), id="404-job-not-found"),
        pytest.param((404, {}), id="404-bare"),
        pytest.param((404, {"code": "JOB_NOT_FOUND", "message": "no job"}), id="404-coded"),
    ],
)
async def test_a_job_lost_twice_is_job_lost(lost: tuple[int, dict[str, Any]]) -> None:
    status, body = lost
    transport, seen = scripted_farm(
        [
            ("POST", 200, {"id": "a", "status": "JOB_STATE_RUNNING"}),
            ("GET", status, body),
            ("POST", 200, {"id": "a", "status": "JOB_STATE_RUNNING"}),  # same job, same replica
            ("GET", status, body),
        ]
    )
    with pytest.raises(JobLost) as info:
        await _call(transport)
    assert "again after a resubmit" in str(info.value)
    assert len(seen) == 4


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        pytest.param(
            404,
            {"code": "SERVICE_NOT_FOUND", "message": "gone"},
            BackendUnavailable,
            id="404-farm-code-decides",
        ),
        pytest.param(500, {"error": "boom"}, Upstream, id="500-is-not-lost"),
        pytest.param(410, NOT_FOUND, Upstream, id="410-is-not-lost"),
    ],
)
async def test_other_poll_answers_are_not_a_lost_job(
    status: int, body: dict[str, Any], expected: type[LLMError]
) -> None:
    transport, seen = scripted_farm(
        [("POST", 200, {"id": "a", "status": "JOB_STATE_QUEUED"}), ("GET", status, body)]
    )
    with pytest.raises(LLMError) as info:
        await _call(transport)
    assert type(info.value) is expected
    assert len(seen) == 2  # no resubmit
