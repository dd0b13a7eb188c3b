"""The Discovery client against the farm simulator over real loopback HTTP (§3)."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from llm_client import (
    BackendUnavailable,
    CapacityUnavailable,
    CapacityWaitExpired,
    DecodeError,
    DiscoveryClient,
    EmptyResponse,
    RequestTimeout,
    TaskTimeout,
    Transport,
    Upstream,
)
from llm_client._transport.base import ChatTransport, EmbedTransport
from memory_worker.farmsim import EnvelopeStyle, FarmSimulator, Fault, FaultKind
from tests.support.chat_faults import FaultCase, fault_case
from tests.support.clock import ManualClock
from tests.support.harness import eventually
from tests.support.logs import capture_logs
from tests.support.simulator import sim_config

SERVICE = "llm-openai"
ENDPOINT = "chat_completions"
REQUEST: dict[str, Any] = {
    "model": "m",
    "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}],
}


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


# --- the happy path ----------------------------------------------------------------------


async def test_chat_submits_polls_and_decodes_every_envelope_shape(
    sim: FarmSimulator, client: DiscoveryClient
) -> None:
    sim.script(SERVICE, ["first", "second", "third"])
    results = [await client.chat(REQUEST) for _ in range(3)]  # top, nested, mixed envelopes
    assert [r.content for r in results] == ["first", "second", "third"]
    assert len({r.job_id for r in results}) == 3
    assert all(r.job_id and r.job_id.startswith("simjob-") for r in results)
    assert results[0].model == "m"
    assert results[0].prompt_tokens
    assert results[0].completion_tokens
    stats = sim.stats()[SERVICE]
    assert (stats["submits"], stats["succeeded"]) == (3, 3)
    assert stats["polls"] >= 3  # a QUEUED submit is followed by polls


async def test_submit_carries_the_spec_json(sim: FarmSimulator) -> None:
    config = sim_config(sim, task_timeout=42.0)
    async with DiscoveryClient(
        config, service=SERVICE, endpoint=ENDPOINT, api_key="k-1", workload="memory"
    ) as client:
        await client.chat(REQUEST, idempotency_key="run-7-attempt-1")
    submit = sim.last_submit(SERVICE)
    assert submit is not None
    invocation = submit["invocation"]
    assert (invocation["service_name"], invocation["endpoint_name"]) == (SERVICE, ENDPOINT)
    assert invocation["content_type"] == "application/json"
    assert invocation["timeout_ms"] == 42_000
    assert invocation["headers"] == {
        "Authorization": "Bearer k-1",
        "X-Request-Id": "run-7-attempt-1",
        "X-AIFarm-Workload": "memory",
    }
    assert (submit["idempotency_key"], submit["priority"]) == ("run-7-attempt-1", 10)
    inner = orjson.loads(base64.b64decode(invocation["body"]))
    assert inner == {**REQUEST, "stream": False}


async def test_caller_timeout_shortens_the_invocation_timeout(
    sim: FarmSimulator, client: DiscoveryClient
) -> None:
    await client.chat(REQUEST, timeout=1.5)
    submit = sim.last_submit(SERVICE)
    assert submit is not None
    assert submit["invocation"]["timeout_ms"] == 1500


async def test_queued_then_running_job_is_polled_to_completion() -> None:
    async with FarmSimulator(queued_seconds=0.1, run_seconds=0.1) as sim:
        async with DiscoveryClient(sim_config(sim), service=SERVICE, endpoint=ENDPOINT) as c:
            result = await c.chat(REQUEST)
        assert result.content
        assert sim.stats()[SERVICE]["polls"] >= 3


async def test_embed_through_the_same_api(sim: FarmSimulator) -> None:
    # what this asserts is the embed call's shape, not a budget: room for a loaded host
    config = sim_config(sim, request_timeout=15.0, task_timeout=20.0)
    async with DiscoveryClient(config, service="embedder", endpoint="encode") as client:
        texts = ["alice likes tea", "bob has a dog", "alice likes tea"]
        result = await client.embed(texts, dimension=512, task_description="memory card")
        assert len(result.embeddings) == 3
        assert all(len(v) == 512 for v in result.embeddings)
        assert result.embeddings[0] == result.embeddings[2] != result.embeddings[1]
        assert result.dimension == 512
        assert result.job_id
        assert sim.last_request("embedder") == {
            "prompts": texts,
            "dimension": 512,
            "task_description": "memory card",
        }
        assert (await client.embed([], dimension=512)).embeddings == []
    assert sim.submits("embedder") == 1


async def test_clients_satisfy_the_transport_protocols(client: DiscoveryClient) -> None:
    transports: tuple[ChatTransport, EmbedTransport] = (client, client)
    assert all(
        callable(getattr(t, name)) for t, name in zip(transports, ("chat", "embed"), strict=True)
    )


async def test_repeated_idempotency_key_returns_the_same_job(
    sim: FarmSimulator, client: DiscoveryClient
) -> None:
    first = await client.chat(REQUEST, idempotency_key="same-key")
    second = await client.chat(REQUEST, idempotency_key="same-key")
    assert first.job_id == second.job_id
    assert len(sim.job_ids()) == 1


# --- injected faults ---------------------------------------------------------------------

OUTAGE_MESSAGE = "[Errno -3] Temporary failure in name resolution"


@pytest.mark.parametrize(
    "case",
    [
        fault_case(
            Fault(FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message=OUTAGE_MESSAGE),
            BackendUnavailable,
            f"UPSTREAM_ERROR: {OUTAGE_MESSAGE}",
            id="outage",
        ),
        fault_case(
            Fault(FaultKind.JOB_FAILED, code="SERVICE_NOT_FOUND", message="no such service"),
            BackendUnavailable,
            "SERVICE_NOT_FOUND: no such service",
            id="service-not-found",
        ),
        fault_case(
            Fault(FaultKind.JOB_FAILED, code="SERVICE_DISABLED", message="disabled"),
            BackendUnavailable,
            "SERVICE_DISABLED: disabled",
            id="service-disabled",
        ),
        fault_case(
            Fault(FaultKind.JOB_FAILED, code="ENDPOINT_NOT_FOUND", message="no endpoint"),
            BackendUnavailable,
            "ENDPOINT_NOT_FOUND: no endpoint",
            id="endpoint-not-found",
        ),
        fault_case(
            Fault(FaultKind.JOB_FAILED, code="UPSTREAM_TIMEOUT", message="backend took too long"),
            Upstream,
            "UPSTREAM_TIMEOUT: backend took too long",
            id="upstream-timeout",
        ),
        fault_case(
            Fault(FaultKind.JOB_FAILED, code="INTERNAL", message="farm bug"),
            Upstream,
            "INTERNAL: farm bug",
            id="internal-code",
        ),
        fault_case(
            Fault(FaultKind.JOB_FAILED_TOP_LEVEL, message="top-level failure"),
            Upstream,
            "top-level failure",
            id="top-level-error",
        ),
        fault_case(Fault(FaultKind.JOB_FAILED_BARE), Upstream, "job failed", id="bare-failure"),
        fault_case(Fault(FaultKind.JOB_CANCELLED), Upstream, "was cancelled", id="cancelled"),
        fault_case(
            Fault(FaultKind.JOB_CANCELLED, code="UPSTREAM_ERROR", message="dns"),
            BackendUnavailable,
            "was cancelled: UPSTREAM_ERROR: dns",
            id="cancelled-upstream-error",
        ),
        fault_case(
            Fault(FaultKind.JOB_FAILED_STRING, message="[Errno -3] dns"),
            BackendUnavailable,
            "UPSTREAM_ERROR: [Errno -3] dns",
            id="string-error",
        ),
        fault_case(
            Fault(FaultKind.JOB_FAILED_TOP_LEVEL, message="SERVICE_DISABLED: maintenance"),
            BackendUnavailable,
            "SERVICE_DISABLED: maintenance",
            id="top-level-string-code",
        ),
        fault_case(
            Fault(
                FaultKind.SUBMIT_STATUS,
                status_code=404,
                code="SERVICE_NOT_FOUND",
                message="no service llm-openai",
            ),
            BackendUnavailable,
            "submit: status 404: SERVICE_NOT_FOUND: no service llm-openai",
            id="submit-404-service-not-found",
        ),
        fault_case(
            Fault(FaultKind.UPSTREAM_STATUS, status_code=500, message="Internal Server Error"),
            Upstream,
            "upstream returned status 500: Internal Server Error",
            id="upstream-500",
        ),
        fault_case(
            Fault(FaultKind.UPSTREAM_STATUS, status_code=503, message="model loading"),
            Upstream,
            "upstream returned status 503: model loading",
            id="upstream-503",
        ),
        fault_case(
            Fault(FaultKind.SUBMIT_STATUS, status_code=503, message="upstream unavailable"),
            Upstream,
            "submit: status 503: upstream unavailable",
            id="submit-503-not-capacity",
        ),
        fault_case(
            Fault(FaultKind.SUBMIT_STATUS, status_code=500, message="capacity exceeded"),
            Upstream,
            "submit: status 500: capacity exceeded",
            id="submit-500-capacity-is-not-capacity",
        ),
        fault_case(
            Fault(FaultKind.SUBMIT_STATUS, status_code=400, message="bad request"),
            Upstream,
            "submit: status 400: bad request",
            id="submit-400",
        ),
        fault_case(Fault(FaultKind.RESET), Transport, "submit: ", id="reset"),
        fault_case(
            Fault(FaultKind.EMPTY_BODY), EmptyResponse, "response body is empty", id="empty-body"
        ),
    ],
)
async def test_fault_maps_to_typed_error(
    sim: FarmSimulator, client: DiscoveryClient, case: FaultCase
) -> None:
    await case.check(sim, SERVICE, client, REQUEST)


async def test_outage_error_text_is_exact(sim: FarmSimulator, client: DiscoveryClient) -> None:
    sim.set_fault("*", Fault(FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message=OUTAGE_MESSAGE))
    with pytest.raises(BackendUnavailable) as info:
        await client.chat(REQUEST)
    assert str(info.value) == f"UPSTREAM_ERROR: {OUTAGE_MESSAGE}"
    assert info.value.code == "UPSTREAM_ERROR"


async def test_failures_are_logged_with_ids_state_and_code(
    sim: FarmSimulator, client: DiscoveryClient
) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.JOB_FAILED, code="SERVICE_DISABLED", message="off"))
    with capture_logs() as events, pytest.raises(BackendUnavailable):
        await client.chat(REQUEST)
    failed = [e for e in events if e["event"] == "discovery.call_failed"]
    assert len(failed) == 1
    event = failed[0]
    assert event["job_id"].startswith("simjob-")
    assert (event["service"], event["endpoint"]) == (SERVICE, ENDPOINT)
    assert event["state"] == "JOB_STATE_FAILED"
    assert (event["error"], event["code"]) == ("BackendUnavailable", "SERVICE_DISABLED")
    assert isinstance(event["elapsed_ms"], int)
    assert "off" not in repr(event)  # the farm's message text is not logged


async def test_upstream_status_keeps_the_status_code(
    sim: FarmSimulator, client: DiscoveryClient
) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.UPSTREAM_STATUS, status_code=502, message="bad gw"))
    with pytest.raises(Upstream) as info:
        await client.chat(REQUEST)
    assert info.value.status_code == 502


@pytest.mark.parametrize("rounds", [3])
async def test_malformed_envelopes_are_protocol_errors(
    sim: FarmSimulator, client: DiscoveryClient, rounds: int
) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.MALFORMED_ENVELOPE))
    for _ in range(rounds):  # non-JSON text, a JSON array, an object without a status
        with pytest.raises(DecodeError):
            await client.chat(REQUEST)


@pytest.mark.parametrize("kind", [FaultKind.TRUNCATED_JSON, FaultKind.GARBAGE])
async def test_bad_model_content_is_returned_for_the_pipeline_to_judge(
    sim: FarmSimulator, client: DiscoveryClient, kind: FaultKind
) -> None:
    sim.set_fault(SERVICE, Fault(kind))
    request = {**REQUEST, "response_format": {"type": "json_object"}}
    result = await client.chat(request)
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(result.content)


@pytest.mark.usefixtures("e5_loaded")  # the simulator's embedder: no model load in 2 s
async def test_embedder_faults_map_too(sim: FarmSimulator) -> None:
    async with DiscoveryClient(sim_config(sim), service="embedder", endpoint="encode") as client:
        sim.set_fault("embedder", Fault(FaultKind.TRUNCATED_JSON, times=1))
        with pytest.raises(DecodeError):
            await client.embed(["a"], dimension=8)
        sim.set_fault("embedder", Fault(FaultKind.GARBAGE, times=1))
        with pytest.raises(DecodeError):
            await client.embed(["a"], dimension=8)
        sim.set_fault("embedder", Fault(FaultKind.JOB_FAILED, code="SERVICE_DISABLED", times=1))
        with pytest.raises(BackendUnavailable):
            await client.embed(["a"], dimension=8)
        assert len((await client.embed(["a"], dimension=8)).embeddings[0]) == 8


async def test_slow_job_succeeds_within_the_task_budget(
    sim: FarmSimulator, client: DiscoveryClient
) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.SLOW, seconds=0.3))
    started = time.monotonic()
    assert (await client.chat(REQUEST)).content
    assert time.monotonic() - started >= 0.3


# --- capacity ------------------------------------------------------------------------


async def test_capacity_wait_resubmits_then_gives_up_on_its_budget(sim: FarmSimulator) -> None:
    config = sim_config(sim, capacity_wait=0.5, capacity_poll=0.2)
    sim.set_fault(
        SERVICE, Fault(FaultKind.SUBMIT_STATUS, status_code=429, message="no slots available")
    )
    async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
        started = time.monotonic()
        with pytest.raises(CapacityWaitExpired) as info:
            await client.chat(REQUEST)
        elapsed = time.monotonic() - started
    assert isinstance(info.value, CapacityUnavailable)
    assert info.value.seconds == 0.5
    assert info.value.budget == "capacity_wait"
    assert "no slots available" in str(info.value)
    # submits at 0, 0.2, 0.4 and one last at the 0.5 s budget edge — on a quiet host; on a
    # loaded one a slow answer leaves room for fewer (a CI run saw 2), never more, and it
    # resubmitted at least once before giving up on its budget
    submits = sim.submits(SERVICE)
    assert 2 <= submits <= 4
    assert sim.stats()[SERVICE]["rejected"] == submits
    assert 0.5 <= elapsed < 3.0


async def test_capacity_wait_succeeds_once_a_slot_frees(sim: FarmSimulator) -> None:
    config = sim_config(sim, capacity_wait=2.0, capacity_poll=0.05)
    sim.set_fault(
        SERVICE,
        Fault(
            FaultKind.SUBMIT_STATUS,
            status_code=503,
            message="service capacity unavailable",
            times=2,
        ),
    )
    async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
        assert (await client.chat(REQUEST)).content
    assert sim.submits(SERVICE) == 3


@pytest.mark.parametrize(
    ("status", "message", "error_type"),
    [
        pytest.param(503, "no slots available", CapacityUnavailable, id="capacity-503"),
        pytest.param(429, "too many requests", Upstream, id="plain-429"),
    ],
)
async def test_a_submit_that_names_its_pause_is_raised_at_once_with_it(
    sim: FarmSimulator, status: int, message: str, error_type: type[Exception]
) -> None:
    """§3: a capacity answer or a 429 with ``Retry-After`` is the farm asking for a pause:
    the client does not resubmit inside it; the walker cools the target fleet-wide."""
    from llm_client import FailureReason, retryable_reason

    config = sim_config(sim, capacity_wait=5.0, capacity_poll=0.05)
    fault = Fault(FaultKind.SUBMIT_STATUS, status_code=status, message=message, seconds=30)
    sim.set_fault(SERVICE, fault)
    async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
        started = time.monotonic()
        with pytest.raises(error_type) as info:
            await client.chat(REQUEST)
    assert time.monotonic() - started < 3.0  # not the 5 s capacity wait (slack for a busy host)
    assert sim.submits(SERVICE) == 1
    assert getattr(info.value, "retry_after", None) == 30.0
    assert retryable_reason(info.value) is FailureReason.CAPACITY_UNAVAILABLE


# --- budgets ---------------------------------------------------------------------------


async def test_task_budget_is_reanchored_when_the_job_starts_running() -> None:
    # Queued longer than the task budget, then runs quickly: still succeeds.
    async with FarmSimulator(queued_seconds=0.6, run_seconds=0.1) as sim:
        config = sim_config(sim, task_timeout=0.4, capacity_wait=1.0)
        async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
            assert (await client.chat(REQUEST)).content


async def test_running_longer_than_the_task_budget_is_a_task_timeout() -> None:
    async with FarmSimulator(queued_seconds=0.3, run_seconds=5.0) as sim:
        config = sim_config(sim, task_timeout=0.4, capacity_wait=1.0)
        async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
            started = time.monotonic()
            with pytest.raises(TaskTimeout) as info:
                await client.chat(REQUEST)
            elapsed = time.monotonic() - started
    # Re-anchored at RUNNING (~0.3 s) + 0.4 s; the queued deadline would be 1.4 s.
    assert 0.65 <= elapsed < 1.25
    assert info.value.seconds == 0.4
    assert info.value.budget == "task"
    assert "simjob-" in str(info.value)  # names the job
    assert "task budget of 0.4s" in str(info.value)


async def test_a_job_still_queued_when_the_capacity_wait_ends_is_capacity() -> None:
    # §3: a job that never left the farm's queue is a capacity answer, not a task timeout.
    async with FarmSimulator(queued_seconds=10.0) as sim:
        config = sim_config(sim, task_timeout=5.0, capacity_wait=0.3, job_poll=0.05)
        async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
            started = time.monotonic()
            with pytest.raises(CapacityWaitExpired) as info:
                await client.chat(REQUEST)
            elapsed = time.monotonic() - started
    assert 0.3 <= elapsed < 1.0  # the capacity wait, not capacity wait + task budget
    assert info.value.budget == "capacity_wait"
    assert info.value.seconds == pytest.approx(0.3)
    assert "still queued after the capacity wait of 0.3s" in str(info.value)
    assert "simjob-" in str(info.value)


async def test_a_zero_capacity_wait_still_polls_once() -> None:
    # capacity_wait = 0 means "do not wait for capacity", not "never poll": a job the
    # submit reports QUEUED that is running by the first poll goes through.
    async with FarmSimulator(run_seconds=0.05) as sim:
        config = sim_config(sim, task_timeout=2.0, capacity_wait=0.0, job_poll=0.02)
        async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
            assert (await client.chat(REQUEST)).content
    async with FarmSimulator(queued_seconds=10.0) as sim:
        config = sim_config(sim, task_timeout=2.0, capacity_wait=0.0, job_poll=0.02)
        async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
            with pytest.raises(CapacityWaitExpired):
                await client.chat(REQUEST)
        assert sim.stats()[SERVICE]["polls"] == 1


async def test_stuck_queued_fault_is_capacity(sim: FarmSimulator) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.STUCK_QUEUED))
    config = sim_config(sim, task_timeout=5.0, capacity_wait=0.2, job_poll=0.05)
    async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
        with pytest.raises(CapacityWaitExpired):
            await client.chat(REQUEST)
    sim.clear_faults()
    async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
        assert (await client.chat(REQUEST)).content


async def test_hung_job_is_a_task_timeout(sim: FarmSimulator) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.HANG))
    config = sim_config(sim, task_timeout=0.3, job_poll=0.05)
    async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
        with pytest.raises(TaskTimeout):
            await client.chat(REQUEST)


async def test_unanswered_http_request_is_a_request_timeout(sim: FarmSimulator) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.HANG_HTTP))
    config = sim_config(sim, request_timeout=0.3)
    async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            await client.chat(REQUEST)
    assert 0.3 <= time.monotonic() - started < 3.0  # the hang would never end
    assert isinstance(info.value, Transport)
    assert info.value.seconds == 0.3
    assert info.value.budget == "request"
    assert str(info.value) == "submit timed out after 0.3s"


async def test_callers_timeout_caps_the_whole_call(sim: FarmSimulator) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.HANG))
    async with DiscoveryClient(
        sim_config(sim, task_timeout=30.0), service=SERVICE, endpoint=ENDPOINT
    ) as client:
        started = time.monotonic()
        with pytest.raises(TaskTimeout) as info:
            await client.chat(REQUEST, timeout=0.3)
    assert 0.3 <= time.monotonic() - started < 3.0  # not the task's 30 s
    assert info.value.seconds == 0.3
    assert "caller's deadline" in str(info.value)


async def test_callers_timeout_cutting_an_http_round_trip_is_a_task_timeout(
    sim: FarmSimulator,
) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.HANG_HTTP))
    async with DiscoveryClient(
        sim_config(sim, request_timeout=5.0), service=SERVICE, endpoint=ENDPOINT
    ) as client:
        with pytest.raises(TaskTimeout) as info:
            await client.chat(REQUEST, timeout=0.25)
    assert not isinstance(info.value, Transport)  # a caller's cut is not an unreachable farm
    assert info.value.seconds == 0.25


async def test_callers_timeout_ends_a_capacity_wait(sim: FarmSimulator) -> None:
    sim.set_fault(SERVICE, Fault(FaultKind.SUBMIT_STATUS, status_code=429, message="no slots"))
    config = sim_config(sim, capacity_wait=30.0, capacity_poll=0.1)
    async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
        started = time.monotonic()
        with pytest.raises(CapacityWaitExpired) as info:
            await client.chat(REQUEST, timeout=0.35)
    assert time.monotonic() - started < 3.0  # not the 30 s capacity wait
    assert info.value.seconds == 0.35


async def test_connection_refused_after_the_farm_stops_is_transport(
    sim: FarmSimulator, client: DiscoveryClient
) -> None:
    assert (await client.chat(REQUEST)).content  # a kept-alive connection exists
    await sim.stop()
    with pytest.raises(Transport) as info:
        await client.chat(REQUEST)
    assert not isinstance(info.value, RequestTimeout)
    assert str(info.value).startswith("submit: ")
    await sim.start()  # same port, state kept: the client recovers
    assert (await client.chat(REQUEST)).content


async def test_farm_dropping_polls_is_transport() -> None:
    async with FarmSimulator(queued_seconds=0.3, clock=ManualClock()) as sim:  # queued for good
        config = sim_config(sim, job_poll=0.05)
        async with DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client:
            running = asyncio.ensure_future(client.chat(REQUEST))
            # submitted, now polling a queued job
            await eventually(lambda: sim.stats().get(SERVICE, {}).get("polls", 0) >= 1, every=0.01)
            sim.set_fault(SERVICE, Fault(FaultKind.RESET))
            with pytest.raises(Transport) as info:
                await running
    assert "poll job simjob-" in str(info.value)


# --- credentials ---------------------------------------------------------------------


async def test_bearer_token_travels_only_inside_the_invocation() -> None:
    async with FarmSimulator(queued_seconds=0.05) as farm:
        async with DiscoveryClient(
            sim_config(farm), service=SERVICE, endpoint=ENDPOINT, api_key="sk-inner-1"
        ) as client:
            await client.chat(REQUEST)
        assert farm.last_auth(SERVICE) == "Bearer sk-inner-1"
        assert farm.outer_auth_count == 0
        assert farm.stats()[SERVICE]["polls"] >= 1  # polls were checked too


async def test_no_api_key_sends_no_authorization(
    sim: FarmSimulator, client: DiscoveryClient
) -> None:
    await client.chat(REQUEST)
    assert sim.last_auth(SERVICE) is None
    submit = sim.last_submit(SERVICE)
    assert submit is not None
    assert "Authorization" not in submit["invocation"]["headers"]
