"""The farm simulator over real loopback HTTP: job lifecycle, envelopes, admin, stats."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest

from memory_worker.farmsim import EnvelopeStyle, FarmSimulator, Fault, FaultKind
from memory_worker.farmsim.embedder import EmbedderKind, cosine, embed_text
from tests.support.clock import ManualClock
from tests.support.harness import eventually
from tests.support.simulator import client as client  # the fixture
from tests.support.simulator import (
    content,
    extraction,
    fields,
    finish,
    response,
    serving,
    states,
    submit,
    timeline,
)


def _chat(content: str, *, json_mode: bool = False) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You extract memory."},
            {"role": "user", "content": content},
        ],
        "temperature": 0,
        "stream": False,
    }
    if json_mode:
        request["response_format"] = {"type": "json_object"}
    return request


def _content(envelope: Any) -> str:
    status, body = response(envelope)
    assert status == 200
    return content(body)


async def test_banner_says_it_is_a_simulator(client: httpx.AsyncClient) -> None:
    answer = await client.get("/")
    assert answer.status_code == 200
    assert answer.headers["server"] == "farm-simulator"
    banner = answer.json()
    assert banner["simulator"] is True
    assert "simulator" in banner["description"].lower()


async def test_unknown_job_is_404_and_still_labelled(client: httpx.AsyncClient) -> None:
    answer = await client.get("/v1/jobs/no-such-job")
    assert answer.status_code == 404
    assert answer.headers["server"] == "farm-simulator"
    assert answer.json() == {"error": "job not found"}


async def test_base_url_needs_a_start_when_port_is_zero() -> None:
    with pytest.raises(RuntimeError):
        _ = FarmSimulator().base_url


async def test_job_goes_queued_running_succeeded_on_its_timings() -> None:
    clock = ManualClock()
    sim = FarmSimulator(queued_seconds=15, run_seconds=15, clock=clock)
    # each state's last moment, and the next state's first
    envelopes = await timeline(sim, clock, submit(_chat("hi")), [14.9, 15, 29.9, 30])
    assert states(envelopes) == [
        "JOB_STATE_QUEUED",
        "JOB_STATE_QUEUED",
        "JOB_STATE_RUNNING",
        "JOB_STATE_RUNNING",
        "JOB_STATE_SUCCEEDED",
    ]


async def _timed_blocking_submit(
    *, run_seconds: float, submit_block_seconds: float
) -> tuple[Any, float]:
    """One blocking submit to a simulator with these timings: its envelope and how long it took."""
    sim = FarmSimulator(run_seconds=run_seconds, submit_block_seconds=submit_block_seconds)
    async with serving(sim) as client:
        started = time.monotonic()
        answer = await client.post("/v1/jobs/blocking", json=submit(_chat("hi")))
        return answer.json(), time.monotonic() - started


async def test_submit_blocks_until_the_job_finishes() -> None:
    envelope, elapsed = await _timed_blocking_submit(run_seconds=0.1, submit_block_seconds=2.0)
    assert 0.1 <= elapsed < 1.5
    assert _content(envelope) == "ok (farm simulator)"


async def test_blocking_submit_answers_running_when_its_budget_ends() -> None:
    envelope, elapsed = await _timed_blocking_submit(run_seconds=5.0, submit_block_seconds=0.1)
    assert 0.1 <= elapsed < 1.5
    assert fields(envelope)[1] == "JOB_STATE_RUNNING"


async def test_envelope_shape_alternates_between_top_level_and_nested(
    client: httpx.AsyncClient,
) -> None:
    first = (await client.post("/v1/jobs/blocking", json=submit(_chat("a")))).json()
    second = (await client.post("/v1/jobs/blocking", json=submit(_chat("b")))).json()
    assert set(first) == {"id", "status"}
    assert first["status"] == "JOB_STATE_QUEUED"
    assert set(second) == {"job"}
    assert set(second["job"]) == {"job_id", "state"}
    # a job keeps its shape on every poll
    polled = (await client.get(f"/v1/jobs/{second['job']['job_id']}")).json()
    assert polled["job"]["state"] == "JOB_STATE_SUCCEEDED"
    assert "result" in polled["job"]


async def test_mixed_envelope_style_can_be_selected() -> None:
    sim = FarmSimulator(envelope_styles=[EnvelopeStyle.MIXED])
    async with serving(sim) as client:
        envelope = await finish(client, submit(_chat("hi")))
    assert envelope["job"]["state"] == ""
    assert envelope["status"] == "JOB_STATE_SUCCEEDED"
    assert _content(envelope) == "ok (farm simulator)"


async def test_repeated_idempotency_key_returns_the_existing_job(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    payload = submit(_chat("hi"), key="run-1:attempt-1")
    first = fields((await client.post("/v1/jobs/blocking", json=payload)).json())[0]
    again = (await client.post("/v1/jobs/blocking", json=payload)).json()
    other = fields(
        (await client.post("/v1/jobs/blocking", json=submit(_chat("hi"), key="run-2"))).json()
    )[0]
    again_id, again_state, _, _ = fields(again)
    assert again_id == first
    assert again_state == "JOB_STATE_SUCCEEDED"  # the existing job, as it is now
    assert other != first
    assert len(sim.job_ids()) == 2
    assert sim.submits("llm") == 3


async def test_oldest_jobs_are_forgotten_beyond_max_jobs() -> None:
    sim = FarmSimulator(max_jobs=2)
    async with serving(sim) as client:
        ids = [
            fields(
                (
                    await client.post("/v1/jobs/blocking", json=submit(_chat("x"), key=f"k{i}"))
                ).json()
            )[0]
            for i in range(3)
        ]
        assert sim.job_ids() == ids[1:]
        assert (await client.get(f"/v1/jobs/{ids[0]}")).status_code == 404
        assert (await client.get(f"/v1/jobs/{ids[2]}")).status_code == 200
        again = await client.post("/v1/jobs/blocking", json=submit(_chat("x"), key="k0"))
        assert fields(again.json())[0] not in ids  # its key was forgotten with it


async def test_resubmitted_key_waits_like_a_fresh_blocking_submit() -> None:
    sim = FarmSimulator(run_seconds=0.2, submit_block_seconds=0.05)
    async with serving(sim) as client:
        payload = submit(_chat("x"), key="same")
        first = (await client.post("/v1/jobs/blocking", json=payload)).json()
        assert fields(first)[1] == "JOB_STATE_RUNNING"
        started = time.monotonic()
        states = [fields(first)[1]]
        while states[-1] != "JOB_STATE_SUCCEEDED":
            assert time.monotonic() - started < 3.0
            again = (await client.post("/v1/jobs/blocking", json=payload)).json()
            assert fields(again)[0] == fields(first)[0]
            states.append(fields(again)[1])
        assert len(sim.job_ids()) == 1
        assert len(states) <= 6  # each resubmit waited up to its block budget


async def test_token_travels_inside_the_invocation(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    payload = submit(_chat("hi"), headers={"Authorization": "Bearer inner-token"})
    await client.post("/v1/jobs/blocking", json=payload)
    assert sim.last_auth("llm") == "Bearer inner-token"
    assert sim.outer_auth_count == 0
    assert sim.last_submit("llm") == payload
    assert sim.last_request("llm") == _chat("hi")
    await client.post(
        "/v1/jobs/blocking", json=submit(_chat("hi")), headers={"Authorization": "Bearer x"}
    )
    assert sim.outer_auth_count == 1
    assert sim.last_auth("llm") is None


async def test_extraction_job_answers_the_rule_based_cards(client: httpx.AsyncClient) -> None:
    envelope = await finish(
        client, submit(_chat(extraction("I love jazz. I live in Berlin."), json_mode=True))
    )
    answer = json.loads(_content(envelope))
    assert answer["participants"] == ["Anna"]
    assert [(c["predicate"], c["object"]) for c in answer["candidate_cards"]] == [
        ("likes", "jazz"),
        ("lives_in", "Berlin"),
    ]


async def test_merge_job_answers_clusters(client: httpx.AsyncClient) -> None:
    task = {
        "task": "memory_merge",
        "subject": "Anna",
        "cards": [
            {"id": "a", "predicate": "likes", "fact": "Anna likes jazz", "salience": 0.5, "obs": 1},
            {
                "id": "b",
                "predicate": "likes",
                "fact": "Anna likes jazz.",
                "salience": 0.9,
                "obs": 2,
            },
        ],
    }
    envelope = await finish(client, submit(_chat(json.dumps(task), json_mode=True)))
    assert json.loads(_content(envelope))["clusters"] == [
        {"survivor_id": "b", "absorbed_ids": ["a"], "merged_fact_text": "Anna likes jazz."}
    ]


async def test_non_task_prompt_in_json_mode_extracts_nothing(client: httpx.AsyncClient) -> None:
    envelope = await finish(client, submit(_chat("ping", json_mode=True)))
    assert json.loads(_content(envelope))["candidate_cards"] == []


async def _embed_body(client: httpx.AsyncClient, inner: dict[str, Any]) -> dict[str, Any]:
    envelope = await finish(client, submit(inner, service="embedder", endpoint="encode"))
    _, _, result, _ = fields(envelope)
    body: dict[str, Any] = json.loads(base64.b64decode(result["response"]["body"]))
    return body


async def test_hashed_embedder_job_answers_its_exact_unit_vectors() -> None:
    sim = FarmSimulator(embedder="hashed")
    async with serving(sim) as client:
        inner = {"prompts": ["Anna likes jazz", "Bob lives in Berlin"], "dimension": 64}
        body = await _embed_body(client, inner)
    assert body["dimension"] == 64
    assert body["count"] == 2
    assert body["embeddings"][0] == pytest.approx(embed_text("Anna likes jazz", 64))


def test_the_default_embedder_is_the_real_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_FARMSIM_EMBEDDER", raising=False)
    assert FarmSimulator().embedder.kind is EmbedderKind.LOCAL
    monkeypatch.setenv("MEMORY_FARMSIM_EMBEDDER", "hashed")
    assert FarmSimulator().embedder.kind is EmbedderKind.HASHED
    assert FarmSimulator(embedder="local").embedder.kind is EmbedderKind.LOCAL


async def test_local_embedder_answers_e5_padded_to_the_asked_dimension() -> None:
    async with (
        FarmSimulator(embedder="local") as sim,
        httpx.AsyncClient(base_url=sim.base_url, timeout=10.0) as client,
    ):
        await _check_local_vectors(client)


async def _check_local_vectors(client: httpx.AsyncClient) -> None:
    prompts = ["I love green tea", "Мария любит зелёный чай", "Bob works as a nurse"]
    passages = await _embed_body(client, {"prompts": prompts, "dimension": 512})
    vectors = passages["embeddings"]
    assert passages["dimension"] == 512
    assert len(vectors) == 3
    assert all(v[384:] == [0.0] * 128 for v in vectors)  # e5's 384 floats, zero-padded
    assert all(sum(x * x for x in v) == pytest.approx(1.0, abs=1e-3) for v in vectors)
    # meaning, across languages: the Russian tea sentence beats the English nurse one
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    # a task description makes a query (e5's "query:" prefix): another vector, same model
    queries = await _embed_body(
        client, {"prompts": prompts[:1], "dimension": 512, "task_description": "find cards"}
    )
    assert queries["embeddings"][0] != vectors[0]
    assert cosine(queries["embeddings"][0], vectors[0]) > 0.8
    # fewer floats than the model makes: cut and re-normalised
    small = await _embed_body(client, {"prompts": prompts[:1], "dimension": 8})
    assert len(small["embeddings"][0]) == 8
    assert sum(x * x for x in small["embeddings"][0]) == pytest.approx(1.0, abs=1e-3)


async def test_bad_embed_request_is_an_upstream_400(client: httpx.AsyncClient) -> None:
    envelope = await finish(
        client, submit({"prompts": "not a list"}, service="embedder", endpoint="encode")
    )
    _, state, result, _ = fields(envelope)
    assert state == "JOB_STATE_SUCCEEDED"
    assert result["response"]["status_code"] == 400


async def test_scripted_outputs_come_first_then_rules(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.script("llm", ["first", "second"])
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_FAILED, times=1))
    failed = await finish(client, submit(_chat("hi")))
    assert fields(failed)[1] == "JOB_STATE_FAILED"  # a failed job does not use the script
    contents = [_content(await finish(client, submit(_chat("hi")))) for _ in range(3)]
    assert contents == ["first", "second", "ok (farm simulator)"]


async def test_wildcard_script_serves_any_chat_service(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.script("*", ["scripted"])
    assert _content(await finish(client, submit(_chat("hi"), service="other"))) == "scripted"


async def test_bad_submits_are_refused(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    not_json = await client.post("/v1/jobs/blocking", content=b"{nope")
    assert not_json.status_code == 400
    no_service = await client.post("/v1/jobs/blocking", json={"invocation": {}})
    assert no_service.status_code == 400
    bad_body = submit(_chat("hi"))
    bad_body["invocation"]["body"] = "%%% not base64 %%%"
    refused = await client.post("/v1/jobs/blocking", json=bad_body)
    assert refused.status_code == 400
    assert sim.stats()["llm"]["rejected"] == 1
    assert sim.job_ids() == []


async def test_inner_body_that_is_not_json_is_an_upstream_400(client: httpx.AsyncClient) -> None:
    payload = submit(_chat("hi"))
    payload["invocation"]["body"] = base64.b64encode(b"not json").decode()
    _, state, result, _ = fields(await finish(client, payload))
    assert state == "JOB_STATE_SUCCEEDED"
    assert result["response"]["status_code"] == 400


async def test_url_safe_unpadded_body_is_accepted(client: httpx.AsyncClient) -> None:
    payload = submit(_chat("hi?>"))
    raw = json.dumps(_chat("hi?>")).encode()
    payload["invocation"]["body"] = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert _content(await finish(client, payload)) == "ok (farm simulator)"


async def test_stats_count_submits_polls_outcomes_and_rejections(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    await finish(client, submit(_chat("a")))
    await finish(client, submit(_chat("b")))
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_CANCELLED, times=1))
    await finish(client, submit(_chat("c")))
    sim.set_fault("llm", Fault(kind=FaultKind.SUBMIT_STATUS, status_code=429, times=1))
    await client.post("/v1/jobs/blocking", json=submit(_chat("d")))
    await finish(client, submit({"prompts": ["x"]}, service="embedder", endpoint="encode"))
    job_id = sim.job_ids()[0]
    await client.get(f"/v1/jobs/{job_id}")  # a second report of a finished job counts once
    assert sim.stats() == {
        "embedder": {"submits": 1, "polls": 1, "succeeded": 1, "failed": 0, "rejected": 0},
        "llm": {"submits": 4, "polls": 4, "succeeded": 2, "failed": 1, "rejected": 1},
    }
    assert sim.submits("llm") == 4
    assert sim.submits("nobody") == 0
    sim.reset_stats()
    assert sim.stats() == {}


async def test_stop_refuses_connections_and_start_resumes_on_the_same_port(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    envelope = await finish(client, submit(_chat("hi")))
    job_id = fields(envelope)[0]
    port = sim.port
    sim.set_fault("llm", Fault(kind=FaultKind.JOB_FAILED))
    await sim.stop()
    assert not sim.running
    with pytest.raises(httpx.ConnectError):
        await client.get("/")
    await sim.start()
    assert sim.port == port
    polled = (await client.get(f"/v1/jobs/{job_id}")).json()
    assert _content(polled) == "ok (farm simulator)"
    assert sim.faults()["llm"]["kind"] == "job_failed"
    assert sim.stats()["llm"]["submits"] == 1


async def test_stop_closes_connections_that_are_still_waiting(
    sim: FarmSimulator, client: httpx.AsyncClient
) -> None:
    sim.set_fault("llm", Fault(kind=FaultKind.HANG_HTTP))
    pending = asyncio.create_task(client.post("/v1/jobs/blocking", json=submit(_chat("hi"))))
    await eventually(lambda: sim.submits("llm") == 1, every=0.01)  # it is waiting in the hang
    started = time.monotonic()
    await sim.stop()
    with pytest.raises(httpx.TransportError):
        await pending
    assert time.monotonic() - started < 1.5


async def test_admin_endpoints(sim: FarmSimulator, client: httpx.AsyncClient) -> None:
    answer = await client.post(
        "/_sim/faults",
        json={"service": "llm", "kind": "submit_status", "status_code": 429, "times": 1},
    )
    assert answer.status_code == 200
    assert (await client.get("/_sim/faults")).json()["llm"]["remaining"] == 1
    refused = await client.post("/v1/jobs/blocking", json=submit(_chat("hi")))
    assert refused.status_code == 429
    assert refused.json() == {"error": "no slots available"}

    await client.post("/_sim/faults", json={"service": "*", "kind": "job_failed"})
    assert (await client.delete("/_sim/faults", params={"service": "*"})).status_code == 200
    assert sim.faults() == {}
    await client.post("/_sim/faults", json={"service": "llm", "kind": "garbage"})
    await client.delete("/_sim/faults")
    assert sim.faults() == {}

    scripted = await client.post("/_sim/script", json={"service": "llm", "outputs": ["x"]})
    assert scripted.json()["queued"] == 1
    assert _content(await finish(client, submit(_chat("hi")))) == "x"

    stats = (await client.get("/_sim/stats")).json()
    assert stats == sim.stats()
    assert stats["llm"]["submits"] == 2
    assert (await client.post("/_sim/reset-stats")).status_code == 200
    assert (await client.get("/_sim/stats")).json() == {}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/_sim/faults", {"kind": "reset"}),
        ("/_sim/faults", {"service": "llm", "kind": "melted"}),
        ("/_sim/faults", {"service": "llm"}),
        ("/_sim/faults", [1, 2]),
        ("/_sim/script", {"service": "llm", "outputs": "x"}),
        ("/_sim/script", {"outputs": ["x"]}),
    ],
)
async def test_admin_rejects_bad_input(client: httpx.AsyncClient, path: str, body: Any) -> None:
    answer = await client.post(path, json=body)
    assert answer.status_code == 400
    assert "error" in answer.json()


def test_standalone_module_prints_its_url_and_stops_on_ctrl_c() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "memory_worker.farmsim", "--port", "0", "--run-seconds", "0.01"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        banner = httpx.get(url + "/", timeout=3.0)
        assert banner.json()["simulator"] is True
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_an_embedder_outage_answers_without_running_the_model(
    sim: FarmSimulator, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    warmed: list[list[str]] = []
    monkeypatch.setattr(sim.embedder, "warm", lambda texts, is_query: warmed.append(list(texts)))
    sim.set_fault("embedder", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR"))
    envelope = await finish(
        client, submit({"prompts": ["outage text"]}, service="embedder", endpoint="encode")
    )
    assert fields(envelope)[1] == "JOB_STATE_FAILED"
    sim.clear_faults()
    await _embed_body(client, {"prompts": ["healthy text"], "dimension": 16})
    assert warmed == [["healthy text"]]  # only the healthy job ran the model
