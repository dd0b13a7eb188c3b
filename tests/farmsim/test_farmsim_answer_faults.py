"""The simulator's error-code and lost-job answers, observed on the wire.

- ``job_failed_error_code``: the code in the job status's ``error_code`` with a bare-string
  ``error`` beside it, in the exact shape a real farm sent;
- ``job_not_found``: the farm loses the jobs it issued (a restart, a replica without them) —
  polls answer ``404 {"error": "job not found"}`` for a window on the simulator's clock, and
  a resubmit with a known idempotency key is not recognised.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.farmsim.jobs import EnvelopeStyle
from tests.support.clock import ManualClock
from tests.support.simulator import client as client  # the fixture
from tests.support.simulator import fields, finish, poll, serving, submit

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": False}
DNS = "[Errno -3] Temporary failure in name resolution"
FAILED_CODE = Fault(FaultKind.JOB_FAILED_ERROR_CODE, code="UPSTREAM_ERROR", message=DNS)


@pytest.fixture
def clock() -> ManualClock:
    """The simulator's clock, moved by hand: windows and job timings pass without waiting."""
    return ManualClock()


async def _submitted(client: httpx.AsyncClient, key: str) -> Any:
    answer = await client.post("/v1/jobs/blocking", json=submit(CHAT, key=key))
    assert answer.status_code == 200
    return answer.json()


# --- job_failed_error_code ------------------------------------------------------------------


async def test_status_level_error_code_in_the_exact_shape_the_farm_sent() -> None:
    async with serving(FarmSimulator(envelope_styles=[EnvelopeStyle.TOP])) as http:
        http_sim_fault = await http.post(
            "/_sim/faults", json={"service": "llm", **FAILED_CODE.to_json()}
        )
        assert http_sim_fault.status_code == 200
        envelope = await finish(http, submit(CHAT))
    assert envelope == {
        "id": envelope["id"],
        "status": "JOB_STATE_FAILED",
        "error_code": "UPSTREAM_ERROR",
        "error": DNS,
    }


async def test_nested_envelopes_carry_the_code_beside_the_nested_state() -> None:
    sim = FarmSimulator(envelope_styles=[EnvelopeStyle.NESTED])
    sim.set_fault("llm", Fault(FaultKind.JOB_FAILED_ERROR_CODE, code="SERVICE_DISABLED"))
    async with serving(sim) as http:
        envelope = await finish(http, submit(CHAT))
    job = envelope["job"]
    assert (job["state"], job["error_code"]) == ("JOB_STATE_FAILED", "SERVICE_DISABLED")
    assert isinstance(job["error"], str)
    assert "result" not in job


async def test_a_pending_job_carries_no_error_code(clock: ManualClock) -> None:
    sim = FarmSimulator(clock=clock, queued_seconds=5.0)
    sim.set_fault("llm", FAILED_CODE)
    async with serving(sim) as http:
        queued = await _submitted(http, "k")
        assert "error_code" not in queued
        clock.advance(5.0)
        done = await poll(http, fields(queued)[0])
    assert (done["status"], done["error_code"]) == ("JOB_STATE_FAILED", "UPSTREAM_ERROR")


async def test_the_direct_endpoint_answers_502_naming_the_code(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("direct", FAILED_CODE)
    answer = await client.post("/v1/chat/completions", json=CHAT)
    assert answer.status_code == 502
    assert answer.json() == {"error": {"message": f"UPSTREAM_ERROR: {DNS}"}}


# --- job_not_found --------------------------------------------------------------------------


async def test_lost_jobs_answer_404_for_the_window_then_polls_answer_again(
    clock: ManualClock,
) -> None:
    sim = FarmSimulator(clock=clock)
    sim.set_fault("llm", Fault(FaultKind.JOB_NOT_FOUND, seconds=45))
    async with serving(sim) as http:
        job_id = fields(await _submitted(http, "run-1"))[0]
        for _ in range(3):  # every poll, not only the first
            lost = await http.get(f"/v1/jobs/{job_id}")
            assert (lost.status_code, lost.json()) == (404, {"error": "job not found"})
        clock.advance(44.9)
        assert (await http.get(f"/v1/jobs/{job_id}")).status_code == 404
        clock.advance(0.1)  # the window is over: the farm answers for its jobs again
        assert fields(await poll(http, job_id))[1] == "JOB_STATE_SUCCEEDED"
        assert sim.faults() == {}
    assert sim.stats()["llm"]["polls"] == 5


async def test_a_farm_that_lost_its_jobs_does_not_know_their_keys(clock: ManualClock) -> None:
    sim = FarmSimulator(clock=clock)
    sim.set_fault("*", Fault(FaultKind.JOB_NOT_FOUND))
    async with serving(sim) as http:
        first = fields(await _submitted(http, "run-1"))[0]
        again = fields(await _submitted(http, "run-1"))[0]
        assert again != first  # a new job: the resubmit was not recognised
        assert (await http.get(f"/v1/jobs/{again}")).status_code == 404  # and lost the same way
        sim.clear_faults()
        # healed: the key now names the latest job, which the farm answers for
        assert fields(await _submitted(http, "run-1"))[0] == again
        assert fields(await poll(http, again))[1] == "JOB_STATE_SUCCEEDED"


async def test_a_reboot_keeps_jobs_and_keys(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    """Without the fault a simulated restart loses nothing: the same key answers the same job."""
    first = fields(await _submitted(client, "run-1"))[0]
    await sim.stop()
    await sim.start()
    assert fields(await _submitted(client, "run-1"))[0] == first
    assert fields(await poll(client, first))[1] == "JOB_STATE_SUCCEEDED"


def test_the_window_is_on_the_simulators_clock(clock: ManualClock) -> None:
    sim = FarmSimulator(clock=clock)
    sim.set_fault("llm", Fault(FaultKind.JOB_NOT_FOUND, seconds=1))
    assert sim.faults()["llm"]["kind"] == "job_not_found"
    clock.advance(1)
    assert sim.faults() == {}
