"""Pure parts of the Discovery client: the submit JSON, poll pacing, keys, repr."""

from __future__ import annotations

import base64

import pytest

from llm_client import CapacityWaitExpired, ClientConfig, DiscoveryClient, TaskTimeout
from llm_client._transport.discovery import (
    DEFAULT_TIMEOUT_MS,
    CallBudget,
    new_idempotency_key,
    poll_delay,
    submit_payload,
)


def test_submit_payload_matches_the_spec_shape() -> None:
    payload = submit_payload(
        service="llm-openai",
        endpoint="chat_completions",
        body=b'{"model":"m"}',
        headers={"Authorization": "Bearer k", "X-Request-Id": "key-1"},
        idempotency_key="key-1",
        priority=10,
        timeout_ms=720_000,
    )
    assert payload == {
        "invocation": {
            "service_name": "llm-openai",
            "endpoint_name": "chat_completions",
            "headers": {"Authorization": "Bearer k", "X-Request-Id": "key-1"},
            "body": base64.b64encode(b'{"model":"m"}').decode(),
            "content_type": "application/json",
            "timeout_ms": 720_000,
        },
        "idempotency_key": "key-1",
        "priority": 10,
    }


def test_submit_payload_omits_empty_headers_and_fixes_bad_numbers() -> None:
    payload = submit_payload(
        service="s",
        endpoint="e",
        body=b"{}",
        headers={},
        idempotency_key="k",
        priority=-3,
        timeout_ms=0,
    )
    assert "headers" not in payload["invocation"]
    assert payload["priority"] == 0
    assert payload["invocation"]["timeout_ms"] == DEFAULT_TIMEOUT_MS


@pytest.mark.parametrize(
    ("polls_done", "delay"),
    [(0, 0.0), (1, 0.125), (2, 0.25), (3, 0.5), (4, 1.0), (50, 1.0)],
)
def test_poll_delay_polls_at_once_then_ramps_to_job_poll(polls_done: int, delay: float) -> None:
    assert poll_delay(polls_done, 1.0) == delay


def test_idempotency_keys_are_unique_and_name_the_workload() -> None:
    keys = {new_idempotency_key("memory") for _ in range(1000)}
    assert len(keys) == 1000
    assert all(key.startswith("memory-") for key in keys)


async def test_repr_never_shows_the_api_key() -> None:
    async with DiscoveryClient(
        ClientConfig(base_url="http://farm"), service="s", endpoint="e", api_key="sk-SECRET"
    ) as client:
        assert "sk-SECRET" not in repr(client)
        assert "sk-SECRET" not in str(vars(client).get("service"))


def budget(timeout: float | None = None) -> CallBudget:
    # started at t=100 with capacity_wait 60 and task 720, as ClientConfig's defaults
    return CallBudget(
        started=100.0,
        call_deadline=None if timeout is None else 100.0 + timeout,
        call_seconds=timeout,
        task_deadline=100.0 + 60 + 720,
        task_seconds=60 + 720,
    )


def test_task_deadline_is_capacity_plus_task_until_running_then_reanchored() -> None:
    clock = budget()
    assert clock.limit() == (880.0, False)
    never_started = clock.expired("job j", by_caller=False)
    assert isinstance(never_started, CapacityWaitExpired)  # §3: never started = capacity
    assert "did not start within 780s" in str(never_started)
    clock.mark_running(500.0, 720.0)
    assert clock.limit() == (1220.0, False)
    clock.mark_running(900.0, 720.0)  # only the first sight of RUNNING re-anchors
    assert clock.limit() == (1220.0, False)
    error = clock.expired("job j", by_caller=False)
    assert str(error) == "job j did not finish within the task budget of 720s"
    assert error.seconds == 720.0


def test_a_queued_job_is_bounded_by_the_capacity_wait_once_a_poll_saw_it() -> None:
    clock = budget()
    clock.queue_deadline, clock.queue_seconds = 160.0, 60.0
    assert clock.limit() == (880.0, False)  # the submit's QUEUED alone does not count
    clock.mark_queued()
    assert clock.limit() == (160.0, False)
    error = clock.expired("job j", by_caller=False)
    assert isinstance(error, CapacityWaitExpired)
    assert error.budget == "capacity_wait"
    assert error.seconds == 60.0
    assert str(error) == "job j still queued after the capacity wait of 60s"
    clock.mark_running(150.0, 720.0)  # it started: the task budget takes over
    assert clock.limit() == (870.0, False)
    clock.mark_queued()  # no effect once running
    assert clock.limit() == (870.0, False)
    assert type(clock.expired("job j", by_caller=False)) is TaskTimeout
    assert budget(timeout=30.0).limit() == (130.0, True)


def test_a_caller_cut_while_refused_for_capacity_is_capacity() -> None:
    clock = budget(timeout=30.0)
    clock.waiting_for_slot = True
    error = clock.expired("submit", by_caller=True)
    assert isinstance(error, CapacityWaitExpired)
    assert error.seconds == 30.0


def test_callers_deadline_wins_when_earlier() -> None:
    clock = budget(timeout=30.0)
    assert clock.limit() == (130.0, True)
    error = clock.expired("submit", by_caller=True)
    assert str(error) == "submit: cut by the caller's deadline after 30s"
    assert error.seconds == 30.0
    assert budget(timeout=10_000.0).limit() == (880.0, False)
