"""Busy, however the farm says it (§3, §4, §5, §7), end to end on the loopback farm.

The worker's production pipeline (``build_tick_runner``: the routed walker, fleet-shared
breakers and the run store on the test Valkey, the real Discovery and OpenAI-compatible
clients over HTTP) against the farm simulator. One row per answer a real farm gave, in
its own words: capacity answers spelled the d-inference way (KV headroom, a model not
loaded, a slot cap in CamelCase), a 429 that ends a walk whose budget is nearly spent, a
``Retry-After`` that is neither ASCII digits nor an HTTP-date, and a 503 that names its
pause with a valid one (busy whatever its body or farm code says; a pause of 30 s cools
the target, so it is asked once).

Each row answers one run's six ticks in a row that way — one more than the breaker's trip
threshold of 5 — and asserts what the contract promises for a busy answer: each tick
releases the run with its attempt refunded and nothing in its failure log, and the node's
breaker stays closed with nothing charged (no consecutive failure, no call in its
failure-rate window).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from llm_client import Circuit, EventType
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.models import RunStatus
from memory_worker.settings import Settings
from tests.faults.context import FaultContext
from tests.faults.rows_farm import (
    assert_released,
    breakers,
    close,
    enqueue,
    event_types,
    pipeline,
    run_of,
)
from tests.support.routes import Target, farm_target, route, routes_toml

#: More busy answers in a row than the breaker's trip threshold (5 consecutive failures).
IN_A_ROW = 6

#: Route budgets: end a busy walk at once (no slot wait), so six ticks take a second.
AT_ONCE: dict[str, float] = {"slot_wait_seconds": 0.0, "slot_poll_seconds": 0.05}
#: A walk whose wall budget is nearly spent when the busy answer comes back: the slot wait
#: (30 s) is far from over, but the next poll would not fit in what is left.
NEARLY_SPENT: dict[str, float] = {
    "wall_seconds": 0.5,
    "slot_wait_seconds": 30.0,
    "slot_poll_seconds": 1.0,
}


@dataclass(frozen=True)
class Answer:
    """A farm answer: which simulator service gives it (``direct``: the OpenAI-compatible
    endpoint), the fault that makes it, and the route budgets it meets."""

    service: str
    fault: Fault
    budgets: dict[str, float]


def relayed(status: int, text: str) -> Fault:
    """The backend's own answer, relayed by the farm in a succeeded job."""
    return Fault(FaultKind.UPSTREAM_STATUS, status_code=status, message=text)


def refused(status: int, text: str, retry_after: str | None = None) -> Fault:
    """The farm's own answer to the submit (or the direct endpoint's answer)."""
    return Fault(FaultKind.SUBMIT_STATUS, status_code=status, message=text, retry_after=retry_after)


ROWS = [
    pytest.param(Answer("llm-a", relayed(503, "503: insufficient KV"), AT_ONCE), id="kv-503"),
    pytest.param(
        Answer("llm-a", relayed(500, "insufficient kv: need 4096 have 1024"), AT_ONCE),
        id="kv-need-have-500",
    ),
    pytest.param(
        Answer("llm-a", relayed(503, "model gpt-oss-120b not loaded"), AT_ONCE),
        id="model-not-loaded",
    ),
    pytest.param(Answer("llm-a", relayed(503, "no model loaded"), AT_ONCE), id="no-model-loaded"),
    pytest.param(Answer("llm-a", relayed(503, "SlotCapExceeded"), AT_ONCE), id="slot-cap-camel"),
    pytest.param(
        Answer("llm-a", refused(429, "rate limit"), NEARLY_SPENT), id="429-budget-nearly-spent"
    ),
    pytest.param(
        Answer("llm-a", refused(429, "too many requests", retry_after="²"), AT_ONCE),
        id="429-retry-after-superscript",
    ),
    pytest.param(
        Answer("llm-a", refused(503, "no slots available", retry_after="١٢٠"), AT_ONCE),
        id="503-capacity-retry-after-arabic-indic-digits",
    ),
    pytest.param(
        Answer(
            "direct",
            Fault(
                FaultKind.UPSTREAM_STATUS,
                status_code=503,
                message="SlotCapExceeded",
                retry_after="²",
            ),
            AT_ONCE,
        ),
        id="direct-slot-cap-retry-after-superscript",
    ),
    pytest.param(
        Answer("direct", relayed(429, "Rate limit reached for requests"), NEARLY_SPENT),
        id="direct-429-budget-nearly-spent",
    ),
    # A 503 that names its pause (RFC 9110 §15.6.4), whatever it says: a pause of 0 s and
    # a date already past are valid and cool nothing, so each of the six ticks asks again.
    pytest.param(
        Answer("llm-a", refused(503, "Service Unavailable", retry_after="0"), AT_ONCE),
        id="503-retry-after-zero",
    ),
    pytest.param(
        Answer(
            "llm-a",
            refused(503, "Internal Server Error", retry_after="Sun, 06 Nov 1994 08:49:37 GMT"),
            AT_ONCE,
        ),
        id="503-crash-text-retry-after-past-date",
    ),
    pytest.param(
        Answer(
            "llm-a",
            Fault(
                FaultKind.SUBMIT_STATUS,
                status_code=503,
                code="UPSTREAM_ERROR",
                message="try later",
                retry_after="0",
            ),
            AT_ONCE,
        ),
        id="503-upstream-error-code-retry-after",
    ),
    pytest.param(
        Answer(
            "direct",
            Fault(
                FaultKind.UPSTREAM_STATUS,
                status_code=503,
                message="Service Unavailable",
                retry_after="0",
            ),
            AT_ONCE,
        ),
        id="direct-503-retry-after-zero",
    ),
]


def extraction_target(sim: FarmSimulator, service: str) -> tuple[Target, str]:
    """The route target that reaches ``service`` on the simulator, and its breaker id."""
    if service == "direct":
        return {"transport": "openai", "url": f"{sim.base_url}/v1", "model": "m"}, "127.0.0.1/m"
    return farm_target(service), f"{service}/memory-extractor"


@pytest.mark.parametrize("answer", ROWS)
async def test_busy_answers_in_a_row_release_the_run_and_never_charge_the_breaker(
    answer: Answer,
    settings: Settings,
    redis: Any,
    redis_url: str,
    sim: FarmSimulator,
    tmp_path: Path,
) -> None:
    ctx = FaultContext(
        settings=settings, redis=redis, redis_url=redis_url, sim=sim, tmp_path=tmp_path
    )
    target, target_id = extraction_target(sim, answer.service)
    routes = routes_toml(
        memory_extraction=route(target, **answer.budgets),
        embedding=route(farm_target("embedder")),
    )
    pipe = await pipeline(ctx, routes, capacity_wait_seconds=0.1)
    store = breakers(ctx, pipe.settings)
    sim.set_fault(answer.service, answer.fault)
    try:
        run_id = await enqueue(ctx, 500)
        for index in range(IN_A_ROW):
            assert await pipe.tick(f"busy-{index}") == "deferred", index
            assert_released(await run_of(ctx, run_id), attempts=0, releases=index + 1)
        view = await store.view(target_id)
        assert (view.circuit, view.consecutive_failures, view.window_calls) == (
            Circuit.CLOSED,
            0,
            0,
        )
        assert sim.submits(answer.service) >= IN_A_ROW
        assert EventType.CIRCUIT_OPENED not in await event_types(ctx)
    finally:
        await close(pipe)


@pytest.mark.parametrize("service", ["llm-a", "direct"])
async def test_a_503_that_names_its_pause_cools_the_target_and_is_never_charged(
    service: str,
    settings: Settings,
    redis: Any,
    redis_url: str,
    sim: FarmSimulator,
    tmp_path: Path,
) -> None:
    """``503 Service Unavailable`` with ``Retry-After: 30``: the target cools for the
    pause (fleet-wide, within ``MEMORY_RETRY_AFTER_MAX_SECONDS``), so six ticks in a row
    ask it once: the first releases the run (0 attempts), the next ones leave it queued
    while the route's only target cools; the breaker is never charged."""
    ctx = FaultContext(
        settings=settings, redis=redis, redis_url=redis_url, sim=sim, tmp_path=tmp_path
    )
    target, target_id = extraction_target(sim, service)
    routes = routes_toml(
        memory_extraction=route(target, **AT_ONCE), embedding=route(farm_target("embedder"))
    )
    pipe = await pipeline(ctx, routes, capacity_wait_seconds=0.1)
    store = breakers(ctx, pipe.settings)
    kind = FaultKind.SUBMIT_STATUS if service == "llm-a" else FaultKind.UPSTREAM_STATUS
    sim.set_fault(
        service, Fault(kind, status_code=503, message="Service Unavailable", retry_after="30")
    )
    try:
        run_id = await enqueue(ctx, 501)
        for index in range(IN_A_ROW):
            # released, or not claimed at all while its only target cools (the route gate)
            assert await pipe.tick(f"paused-{index}") == "deferred", index
            run = await run_of(ctx, run_id)
            assert (run.status, run.attempts, run.releases) == (RunStatus.QUEUED, 0, 1), run
            assert run.error_log == []
        assert sim.submits(service) == 1  # cooling: no call reaches it for the pause
        view = await store.view(target_id)
        assert (view.circuit, view.consecutive_failures, view.window_calls) == (
            Circuit.CLOSED,
            0,
            0,
        )
        types = await event_types(ctx)
        assert EventType.TARGET_COOLING in types
        assert EventType.CIRCUIT_OPENED not in types
    finally:
        await close(pipe)
