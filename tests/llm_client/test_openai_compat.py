"""The direct OpenAI-compatible client against the simulator's ``/v1/chat/completions``."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from llm_client import (
    ClientConfig,
    DecodeError,
    EmptyResponse,
    OpenAICompatClient,
    RequestTimeout,
    TaskTimeout,
    Transport,
    Upstream,
)
from llm_client._transport.base import ChatTransport
from memory_worker.farmsim import DIRECT_SERVICE, FarmSimulator, Fault, FaultKind
from tests.support.chat_faults import FaultCase, fault_case

REQUEST: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def config(sim: FarmSimulator, **overrides: float) -> ClientConfig:
    values: dict[str, Any] = {"request_timeout": 2.0, "task_timeout": 3.0} | overrides
    return ClientConfig(base_url=sim.base_url, **values)


@pytest.fixture
async def client(sim: FarmSimulator) -> AsyncIterator[OpenAICompatClient]:
    async with OpenAICompatClient(sim.base_url, api_key="k-direct", config=config(sim)) as c:
        yield c


async def test_chat_posts_to_chat_completions_with_bearer(
    sim: FarmSimulator, client: OpenAICompatClient
) -> None:
    sim.script(DIRECT_SERVICE, ["scripted answer"])
    transport: ChatTransport = client
    result = await transport.chat(REQUEST, idempotency_key="key-1")
    assert result.content == "scripted answer"
    assert result.model == "m"
    assert (result.job_id or "").startswith("chatcmpl-")
    assert client.url == f"{sim.base_url}/v1/chat/completions"
    assert sim.last_auth(DIRECT_SERVICE) == "Bearer k-direct"  # here the provider IS the server
    assert sim.last_request(DIRECT_SERVICE) == {**REQUEST, "stream": False}
    assert sim.stats()[DIRECT_SERVICE]["succeeded"] == 1


async def test_v1_base_url_is_normalised_too(sim: FarmSimulator) -> None:
    async with OpenAICompatClient(f"{sim.base_url}/v1/", config=config(sim)) as client:
        assert (await client.chat(REQUEST)).content
    assert sim.last_auth(DIRECT_SERVICE) is None


@pytest.mark.parametrize(
    "case",
    [
        fault_case(
            Fault(FaultKind.SUBMIT_STATUS, status_code=429, message="rate limit exceeded"),
            Upstream,
            "chat completions: status 429: rate limit exceeded",
            id="429",
        ),
        fault_case(
            Fault(FaultKind.UPSTREAM_STATUS, status_code=503, message="model loading"),
            Upstream,
            "chat completions: status 503: model loading",
            id="503",
        ),
        fault_case(
            Fault(FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="dns"),
            Upstream,
            "chat completions: status 502: UPSTREAM_ERROR: dns",
            id="502",
        ),
        fault_case(Fault(FaultKind.RESET), Transport, "chat completions: ", id="reset"),
        fault_case(
            Fault(FaultKind.EMPTY_BODY), EmptyResponse, "response body is empty", id="empty-body"
        ),
        fault_case(
            Fault(FaultKind.MALFORMED_ENVELOPE),
            DecodeError,
            "decode chat completion payload",
            id="not-a-completion",
        ),
    ],
)
async def test_faults_map_to_the_same_typed_errors(
    sim: FarmSimulator, client: OpenAICompatClient, case: FaultCase
) -> None:
    await case.check(sim, DIRECT_SERVICE, client, REQUEST)


async def test_status_error_carries_status_code(
    sim: FarmSimulator, client: OpenAICompatClient
) -> None:
    sim.set_fault(DIRECT_SERVICE, Fault(FaultKind.UPSTREAM_STATUS, status_code=503))
    with pytest.raises(Upstream) as info:
        await client.chat(REQUEST)
    assert info.value.status_code == 503
    assert info.value.code == "HTTP_503"


@pytest.mark.parametrize("kind", [FaultKind.GARBAGE, FaultKind.TRUNCATED_JSON])
async def test_bad_model_content_is_returned(
    sim: FarmSimulator, client: OpenAICompatClient, kind: FaultKind
) -> None:
    sim.set_fault(DIRECT_SERVICE, Fault(kind))
    result = await client.chat({**REQUEST, "response_format": {"type": "json_object"}})
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(result.content)


@pytest.mark.parametrize(
    ("fault", "task_timeout", "call_timeout", "cut", "why"),
    [
        pytest.param(Fault(FaultKind.HANG_HTTP), 0.3, None, 0.3, "task budget", id="task-budget"),
        pytest.param(
            Fault(FaultKind.SLOW, seconds=5.0),
            3.0,
            0.2,
            0.2,
            "caller's deadline",
            id="caller-deadline",
        ),
    ],
)
async def test_an_unanswered_call_times_out_on_the_budget_that_cuts_it(
    sim: FarmSimulator,
    fault: Fault,
    task_timeout: float,
    call_timeout: float | None,
    cut: float,
    why: str,
) -> None:
    """The task budget, or the caller's shorter ``timeout``, ends the call: a TaskTimeout."""
    sim.set_fault(DIRECT_SERVICE, fault)
    async with OpenAICompatClient(
        sim.base_url, config=config(sim, task_timeout=task_timeout)
    ) as client:
        started = time.monotonic()
        with pytest.raises(TaskTimeout) as info:
            await client.chat(REQUEST, timeout=call_timeout)
    assert cut <= time.monotonic() - started < cut + 2.0  # under the other budget (3 s, or never)
    assert info.value.seconds == cut
    assert why in str(info.value)


async def test_slow_answer_within_budget_succeeds(
    sim: FarmSimulator, client: OpenAICompatClient
) -> None:
    sim.set_fault(DIRECT_SERVICE, Fault(FaultKind.SLOW, seconds=0.2))
    assert (await client.chat(REQUEST)).content


async def test_connection_refused_is_transport(
    sim: FarmSimulator, client: OpenAICompatClient
) -> None:
    assert (await client.chat(REQUEST)).content
    await sim.stop()
    with pytest.raises(Transport) as info:
        await client.chat(REQUEST)
    assert not isinstance(info.value, RequestTimeout)
    await sim.start()
    assert (await client.chat(REQUEST)).content
