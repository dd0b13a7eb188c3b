"""Every farm simulator fault, observed on the wire (Discovery jobs and the direct endpoint)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.farmsim.backends import GARBAGE_TEXT
from tests.support.clock import ManualClock
from tests.support.simulator import client as client  # the fixture
from tests.support.simulator import (
    content,
    extraction,
    fields,
    finish,
    poll,
    response,
    serving,
    states,
    submit,
    timeline,
)

EXTRACTION = extraction("I love jazz. I live in Berlin. I work at Siemens.")
CHAT = {
    "model": "m",
    "messages": [{"role": "user", "content": EXTRACTION}],
    "response_format": {"type": "json_object"},
    "stream": False,
}


@pytest.fixture
def clock() -> ManualClock:
    """The simulator's clock, moved by hand: job timings pass without waiting for them."""
    return ManualClock()


def _submit(inner: Any = None, *, service: str = "llm", endpoint: str = "chat") -> dict[str, Any]:
    return submit(CHAT if inner is None else inner, service=service, endpoint=endpoint)


# --------------------------------------------------------------------------- job faults


async def test_job_failed_carries_result_error(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    message = "[Errno -3] Temporary failure in name resolution"
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message=message))
    envelope = await finish(client, _submit())
    _, state, result, error = fields(envelope)
    assert state == "JOB_STATE_FAILED"
    assert result == {"error": {"code": "UPSTREAM_ERROR", "message": message}}
    assert error is None


async def test_job_failed_defaults_to_upstream_error(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_FAILED))
    _, _, result, _ = fields(await finish(client, _submit()))
    assert result["error"]["code"] == "UPSTREAM_ERROR"
    assert result["error"]["message"]


async def test_job_failed_with_other_code(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_TIMEOUT", message="slow"))
    _, _, result, _ = fields(await finish(client, _submit()))
    assert result == {"error": {"code": "UPSTREAM_TIMEOUT", "message": "slow"}}


async def test_job_failed_top_level_has_only_a_top_level_error(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_FAILED_TOP_LEVEL, message="worker crashed"))
    envelope = await finish(client, _submit())
    _, state, result, _ = fields(envelope)
    assert state == "JOB_STATE_FAILED"
    assert result is None
    assert envelope["error"] == "worker crashed"


async def test_job_failed_bare_has_no_error_anywhere(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_FAILED_BARE))
    envelope = await finish(client, _submit())
    _, state, result, error = fields(envelope)
    assert (state, result, error) == ("JOB_STATE_FAILED", None, None)


async def test_job_cancelled(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_CANCELLED))
    _, state, result, error = fields(await finish(client, _submit()))
    assert (state, result, error) == ("JOB_STATE_CANCELLED", None, None)


async def test_job_cancelled_with_a_code_carries_result_error(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault(
        "llm", Fault(kind=FaultKind.JOB_CANCELLED, code="UPSTREAM_ERROR", message="dns failure")
    )
    _, state, result, _ = fields(await finish(client, _submit()))
    assert state == "JOB_STATE_CANCELLED"
    assert result == {"error": {"code": "UPSTREAM_ERROR", "message": "dns failure"}}


async def test_job_failed_string_gives_the_error_as_text(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_FAILED_STRING, message="[Errno -3] dns"))
    _, state, result, _ = fields(await finish(client, _submit()))
    assert state == "JOB_STATE_FAILED"
    assert result == {"error": "UPSTREAM_ERROR: [Errno -3] dns"}


async def test_stuck_queued_job_never_leaves_the_queue(clock: ManualClock) -> None:
    sim = FarmSimulator(clock=clock)
    sim.set_fault("llm", Fault(kind=FaultKind.STUCK_QUEUED, times=1))
    hours = await timeline(sim, clock, _submit(), [3600, 7200, 10800])
    assert states(hours) == ["JOB_STATE_QUEUED"] * 4
    # the fault is used up: the next job runs normally
    assert states(await timeline(sim, clock, _submit(), [0]))[-1] == "JOB_STATE_SUCCEEDED"


async def test_stuck_queued_with_seconds_is_a_long_queue(clock: ManualClock) -> None:
    sim = FarmSimulator(clock=clock)
    sim.set_fault("llm", Fault(kind=FaultKind.STUCK_QUEUED, seconds=20))
    envelopes = await timeline(sim, clock, _submit(), [19.9, 20])
    assert states(envelopes) == ["JOB_STATE_QUEUED", "JOB_STATE_QUEUED", "JOB_STATE_SUCCEEDED"]


async def test_submit_status_with_a_code_is_a_farm_level_error(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault(
        "llm",
        Fault(
            kind=FaultKind.SUBMIT_STATUS,
            status_code=404,
            code="SERVICE_NOT_FOUND",
            message="no service llm",
        ),
    )
    answer = await client.post("/v1/jobs/blocking", json=_submit())
    assert answer.status_code == 404
    assert answer.json() == {"code": "SERVICE_NOT_FOUND", "message": "no service llm"}
    assert sim.job_ids() == []


@pytest.mark.parametrize(
    ("status_code", "message", "expected_status", "expected_message"),
    [
        (None, None, 503, "model loading"),
        (502, "bad gateway", 502, "bad gateway"),
        (429, "rate limit exceeded", 429, "rate limit exceeded"),
    ],
)
async def test_upstream_status_is_relayed_in_a_succeeded_job(
    sim: FarmSimulator,
    client: httpx.AsyncClient,
    status_code: int | None,
    message: str | None,
    expected_status: int,
    expected_message: str,
) -> None:
    sim.set_fault(
        "llm", Fault(kind=FaultKind.UPSTREAM_STATUS, status_code=status_code, message=message)
    )
    status, body = response(await finish(client, _submit()))
    assert status == expected_status
    assert json.loads(body) == {"error": {"message": expected_message}}


async def test_empty_body(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.EMPTY_BODY))
    assert response(await finish(client, _submit())) == (200, b"")


async def test_truncated_json_is_the_normal_answer_cut_inside_the_cards(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.TRUNCATED_JSON, times=1))
    truncated = content(response(await finish(client, _submit()))[1])
    healthy = content(response(await finish(client, _submit()))[1])
    assert healthy.startswith(truncated)
    assert healthy.index('"candidate_cards"') < len(truncated) < healthy.index('"resolutions"')
    with pytest.raises(json.JSONDecodeError):
        json.loads(truncated)


async def test_garbage_is_prose(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.GARBAGE))
    text = content(response(await finish(client, _submit()))[1])
    assert text == GARBAGE_TEXT
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


async def test_slow_job_runs_for_its_seconds_then_succeeds(clock: ManualClock) -> None:
    sim = FarmSimulator(clock=clock)
    sim.set_fault("llm", Fault(kind=FaultKind.SLOW, seconds=30))
    envelopes = await timeline(sim, clock, _submit(), [10, 29.9, 30])
    assert states(envelopes) == [  # running to the last moment of its 30 s, then done
        "JOB_STATE_QUEUED",
        "JOB_STATE_RUNNING",
        "JOB_STATE_RUNNING",
        "JOB_STATE_SUCCEEDED",
    ]
    assert response(envelopes[-1])[0] == 200


async def test_hung_job_stays_running_until_the_client_gives_up(clock: ManualClock) -> None:
    sim = FarmSimulator(clock=clock)
    sim.set_fault("llm", Fault(kind=FaultKind.HANG))
    day = [3600 * 24 * i / 5 for i in range(1, 6)]  # no client's task budget outlasts it
    polled = (await timeline(sim, clock, _submit(), day))[1:]
    assert set(states(polled)) == {"JOB_STATE_RUNNING"}


async def test_jobs_in_flight_keep_the_outcome_they_were_created_with(
    clock: ManualClock,
) -> None:
    sim = FarmSimulator(run_seconds=0.1, clock=clock)
    async with serving(sim) as client:
        healthy = fields((await client.post("/v1/jobs/blocking", json=_submit())).json())[0]
        sim.set_fault("*", Fault(kind=FaultKind.JOB_FAILED))
        failing = fields((await client.post("/v1/jobs/blocking", json=_submit())).json())[0]
        clock.advance(0.15)  # both ran their 0.1 s
        assert response(await poll(client, healthy))[0] == 200
        assert fields(await poll(client, failing))[1] == "JOB_STATE_FAILED"


# --------------------------------------------------------------------------- wire faults


@pytest.mark.parametrize(
    ("status_code", "message", "expected_status", "expected_error"),
    [
        (None, None, 503, "no slots available"),
        (429, "no slots available", 429, "no slots available"),
        (503, "upstream unavailable", 503, "upstream unavailable"),
        (500, "capacity exceeded", 500, "capacity exceeded"),
    ],
)
async def test_submit_status_refuses_the_submit(
    sim: FarmSimulator,
    client: httpx.AsyncClient,
    status_code: int | None,
    message: str | None,
    expected_status: int,
    expected_error: str,
) -> None:
    sim.set_fault(
        "llm", Fault(kind=FaultKind.SUBMIT_STATUS, status_code=status_code, message=message)
    )
    answer = await client.post("/v1/jobs/blocking", json=_submit())
    assert answer.status_code == expected_status
    assert answer.json() == {"error": expected_error}
    assert sim.job_ids() == []


async def test_reset_drops_the_connection(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.RESET))
    with pytest.raises(httpx.TransportError):
        await client.post("/v1/jobs/blocking", json=_submit())
    assert sim.stats()["llm"]["rejected"] == 1


async def test_reset_also_drops_polls_while_active(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    job_id = fields((await client.post("/v1/jobs/blocking", json=_submit())).json())[0]
    sim.set_fault("llm", Fault(kind=FaultKind.RESET))
    with pytest.raises(httpx.TransportError):
        await client.get(f"/v1/jobs/{job_id}")
    sim.clear_faults("llm")
    assert (await client.get(f"/v1/jobs/{job_id}")).status_code == 200


async def test_hang_http_is_never_answered_until_the_client_times_out(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.HANG_HTTP))
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        await client.post("/v1/jobs/blocking", json=_submit(), timeout=0.2)
    assert 0.2 <= time.monotonic() - started < 1.5


async def test_malformed_envelope_rotates_through_three_bad_shapes(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.MALFORMED_ENVELOPE, times=3))
    answers = [await client.post("/v1/jobs/blocking", json=_submit()) for _ in range(3)]
    assert all(a.status_code == 200 for a in answers)
    with pytest.raises(json.JSONDecodeError):
        json.loads(answers[0].content)
    assert isinstance(answers[1].json(), list)
    shape = answers[2].json()
    assert isinstance(shape, dict)
    assert not {"status", "state", "job"} & set(shape)
    # times=3 used up: healthy again
    healthy = await client.post("/v1/jobs/blocking", json=_submit())
    assert fields(healthy.json())[1] == "JOB_STATE_QUEUED"


async def test_malformed_envelope_also_hits_polls(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    job_id = fields((await client.post("/v1/jobs/blocking", json=_submit())).json())[0]
    sim.set_fault("llm", Fault(kind=FaultKind.MALFORMED_ENVELOPE))
    polled = await client.get(f"/v1/jobs/{job_id}")
    assert polled.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(polled.content)


# --------------------------------------------------------------------------- scoping


async def test_times_n_then_healthy(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_FAILED, times=2))
    states = [fields(await finish(client, _submit()))[1] for _ in range(3)]
    assert states == ["JOB_STATE_FAILED", "JOB_STATE_FAILED", "JOB_STATE_SUCCEEDED"]
    assert sim.faults() == {}


async def test_wildcard_fault_hits_every_service_and_a_service_fault_wins(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("*", Fault(kind=FaultKind.JOB_FAILED))
    sim.set_fault("embedder", Fault(kind=FaultKind.HEALTHY))
    assert fields(await finish(client, _submit(service="llm")))[1] == "JOB_STATE_FAILED"
    assert fields(await finish(client, _submit(service="other")))[1] == "JOB_STATE_FAILED"
    embedded = await finish(
        client, _submit({"prompts": ["x"]}, service="embedder", endpoint="encode")
    )
    assert response(embedded)[0] == 200
    sim.clear_faults()
    assert fields(await finish(client, _submit(service="llm")))[1] == "JOB_STATE_SUCCEEDED"


@pytest.mark.parametrize(
    ("kind", "check"),
    [
        (FaultKind.TRUNCATED_JSON, "truncated"),
        (FaultKind.GARBAGE, "garbage"),
        (FaultKind.EMPTY_BODY, "empty"),
    ],
)
async def test_embedder_content_faults(
    sim: FarmSimulator, client: httpx.AsyncClient, kind: FaultKind, check: str
) -> None:
    sim.set_fault("embedder", Fault(kind=kind))
    inner = {"prompts": ["Anna likes jazz"], "dimension": 32}
    status, body = response(
        await finish(client, _submit(inner, service="embedder", endpoint="encode"))
    )
    assert status == 200
    if check == "empty":
        assert body == b""
    else:
        with pytest.raises(json.JSONDecodeError):
            json.loads(body)
        if check == "garbage":
            assert body.decode() == GARBAGE_TEXT


# --------------------------------------------------------------------------- direct endpoint


async def _direct(client: httpx.AsyncClient, **kwargs: Any) -> httpx.Response:
    return await client.post(
        "/v1/chat/completions", json=CHAT, headers={"Authorization": "Bearer direct"}, **kwargs
    )


async def test_direct_endpoint_answers_a_chat_completion(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    answer = await _direct(client)
    assert answer.status_code == 200
    assert answer.headers["server"] == "farm-simulator"
    completion = answer.json()
    assert completion["object"] == "chat.completion"
    assert completion["choices"][0]["finish_reason"] == "stop"
    assert completion["usage"]["total_tokens"] > 0
    cards = json.loads(completion["choices"][0]["message"]["content"])["candidate_cards"]
    assert len(cards) == 3
    assert sim.last_auth("direct") == "Bearer direct"
    assert sim.outer_auth_count == 0  # counted for Discovery calls only
    assert sim.stats()["direct"] == {
        "submits": 1,
        "polls": 0,
        "succeeded": 1,
        "failed": 0,
        "rejected": 0,
    }


@pytest.mark.parametrize(
    ("fault", "status", "message"),
    [
        (Fault(kind=FaultKind.SUBMIT_STATUS, status_code=429), 429, "no slots available"),
        (Fault(kind=FaultKind.UPSTREAM_STATUS), 503, "model loading"),
        (
            Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="dns"),
            502,
            "UPSTREAM_ERROR: dns",
        ),
        (Fault(kind=FaultKind.JOB_CANCELLED), 502, "bad gateway"),
        (
            Fault(kind=FaultKind.JOB_CANCELLED, code="UPSTREAM_ERROR", message="gone"),
            502,
            "UPSTREAM_ERROR: gone",
        ),
        (
            Fault(kind=FaultKind.JOB_FAILED_STRING, message="dns"),
            502,
            "UPSTREAM_ERROR: dns",
        ),
    ],
)
async def test_direct_status_faults(
    sim: FarmSimulator, client: httpx.AsyncClient, fault: Fault, status: int, message: str
) -> None:
    sim.set_fault("direct", fault)
    answer = await _direct(client)
    assert answer.status_code == status
    assert answer.json() == {"error": {"message": message}}
    assert sim.stats()["direct"]["failed"] == 1


@pytest.mark.parametrize("kind", [FaultKind.RESET, FaultKind.HANG_HTTP, FaultKind.HANG])
async def test_direct_connection_faults(
    sim: FarmSimulator, client: httpx.AsyncClient, kind: FaultKind
) -> None:
    sim.set_fault("direct", Fault(kind=kind))
    with pytest.raises(httpx.TransportError):
        await _direct(client, timeout=0.2)
    assert sim.stats()["direct"]["rejected"] == 1


async def test_direct_content_faults(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    sim.set_fault("direct", Fault(kind=FaultKind.EMPTY_BODY, times=1))
    empty = await _direct(client)
    assert (empty.status_code, empty.content) == (200, b"")
    sim.set_fault("direct", Fault(kind=FaultKind.GARBAGE, times=1))
    assert (await _direct(client)).json()["choices"][0]["message"]["content"] == GARBAGE_TEXT
    sim.set_fault("direct", Fault(kind=FaultKind.TRUNCATED_JSON, times=1))
    truncated = (await _direct(client)).json()["choices"][0]["message"]["content"]
    healthy = (await _direct(client)).json()["choices"][0]["message"]["content"]
    assert healthy.startswith(truncated)
    assert len(truncated) < len(healthy)


async def test_direct_malformed_and_slow(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    sim.set_fault("direct", Fault(kind=FaultKind.MALFORMED_ENVELOPE, times=1))
    malformed = await _direct(client)
    assert malformed.status_code == 200
    assert "choices" not in malformed.text
    sim.set_fault("direct", Fault(kind=FaultKind.SLOW, seconds=0.2, times=1))
    started = time.monotonic()
    assert (await _direct(client)).status_code == 200
    assert time.monotonic() - started >= 0.2


async def test_direct_scripted_output(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    sim.script("direct", ['{"episode_summary": "scripted"}'])
    first = (await _direct(client)).json()["choices"][0]["message"]["content"]
    second = (await _direct(client)).json()["choices"][0]["message"]["content"]
    assert first == '{"episode_summary": "scripted"}'
    assert json.loads(second)["participants"] == ["Anna"]
