"""Pure parts of the Discovery client: the submit JSON, poll pacing, keys, repr."""

from __future__ import annotations

import base64

import pytest

from llm_client import ClientConfig, DiscoveryClient
from llm_client.discovery import (
    DEFAULT_TIMEOUT_MS,
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
