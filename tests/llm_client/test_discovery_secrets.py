"""Canary: tokens and prompts never reach logs or error texts, whatever the farm does."""

from __future__ import annotations

import base64
import logging
import uuid
from typing import Any

import pytest

from llm_client import DiscoveryClient, LLMError, OpenAICompatClient
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from tests.support.logs import capture_logs
from tests.support.simulator import sim_config

TOKEN = f"sk-CANARY-{uuid.uuid4().hex}"
PROMPT = f"PROMPT-CANARY-{uuid.uuid4().hex}"
REQUEST: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": PROMPT}]}

FAULTS = [
    None,
    Fault(FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="dns failure"),
    Fault(FaultKind.JOB_FAILED_TOP_LEVEL),
    Fault(FaultKind.JOB_CANCELLED),
    Fault(FaultKind.UPSTREAM_STATUS, status_code=503),
    Fault(FaultKind.SUBMIT_STATUS, status_code=503, message="upstream unavailable"),
    Fault(FaultKind.SUBMIT_STATUS, status_code=429, message="no slots available"),
    Fault(FaultKind.RESET),
    Fault(FaultKind.HANG_HTTP),
    Fault(FaultKind.HANG),
    Fault(FaultKind.MALFORMED_ENVELOPE),
    Fault(FaultKind.EMPTY_BODY),
    Fault(FaultKind.GARBAGE),
]


def error_texts(error: BaseException) -> str:
    """The error's text, repr and every chained cause's, as one string."""
    parts = []
    seen: BaseException | None = error
    while seen is not None:
        parts += [str(seen), repr(seen), repr(vars(seen)) if hasattr(seen, "__dict__") else ""]
        seen = seen.__cause__ or seen.__context__
    return "\n".join(parts)


def _base64_forms(secret: str) -> list[str]:
    """How ``secret`` looks inside any base64 text (one form per byte alignment)."""
    forms = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret.encode()).decode()
        forms.append(encoded[4:-4])  # the quanta that do not depend on neighbours
    return forms


FORBIDDEN = [TOKEN, PROMPT, *_base64_forms(TOKEN), *_base64_forms(PROMPT)]


def assert_clean(text: str) -> None:
    for secret in FORBIDDEN:
        assert secret not in text


async def test_canaries_never_reach_logs_or_errors(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    errors: list[LLMError] = []
    async with FarmSimulator() as sim:
        config = sim_config(sim, request_timeout=0.3, task_timeout=0.3, capacity_wait=0.1)
        with capture_logs() as events:
            async with (
                DiscoveryClient(config, service="svc", endpoint="chat", api_key=TOKEN) as farm,
                OpenAICompatClient(sim.base_url, api_key=TOKEN, config=config) as direct,
            ):
                for fault in FAULTS:
                    sim.clear_faults()
                    if fault is not None:
                        sim.set_fault("*", fault)
                    for client in (farm, direct):
                        try:
                            await client.chat(REQUEST)
                        except LLMError as exc:
                            errors.append(exc)
                    try:
                        await farm.embed([PROMPT], dimension=8)
                    except LLMError as exc:
                        errors.append(exc)
                sim.set_fault("*", Fault(FaultKind.HANG))
                try:
                    await farm.chat(REQUEST, timeout=0.05)  # cut by the caller's deadline
                except LLMError as exc:
                    errors.append(exc)
        assert sim.last_auth("svc") == f"Bearer {TOKEN}"  # the token did travel
    assert len(errors) >= 20  # the faults really produced errors to inspect
    assert events  # and the client really logged
    assert_clean(repr(events))
    assert_clean(caplog.text)
    captured = capsys.readouterr()
    assert_clean(captured.out + captured.err)
    for error in errors:
        assert_clean(error_texts(error))
