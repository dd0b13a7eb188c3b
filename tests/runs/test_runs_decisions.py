"""Pure run decisions: backoff, failure plans and the release-vs-fail table (§7)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.cluster import ClusterParser
from redis.exceptions import (
    BusyLoadingError,
    DataError,
    OutOfMemoryError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError

from llm_client import (
    AllCircuitsOpen,
    BackendUnavailable,
    CapacityUnavailable,
    CapacityWaitExpired,
    CapacityWaitTimeout,
    DeadlineExceeded,
    DecodeError,
    EmptyResponse,
    Exhausted,
    NoCandidates,
    RequestError,
    RequestTimeout,
    RouteUnavailable,
    TaskTimeout,
    Transport,
    UnknownStatus,
    Upstream,
)
from memory_worker.errors import ConsolidationError, EmbedderTimeout, LeaseLost, StoreError
from memory_worker.runs.policy import (
    Verdict,
    backoff_seconds,
    decide,
    outlived_budget,
    plan_failure,
)
from tests.support.replies import parsed_error


@pytest.mark.parametrize(
    ("attempts", "units"), [(0, 1), (1, 1), (2, 4), (3, 9), (4, 16), (7, 49), (8, 60), (50, 60)]
)
def test_backoff_is_attempts_squared_clamped(attempts: int, units: int) -> None:
    assert backoff_seconds(attempts, 60.0) == units * 60.0


@given(st.integers(min_value=0, max_value=10_000), st.floats(min_value=0.001, max_value=3600))
def test_backoff_always_within_unit_and_cap(attempts: int, unit: float) -> None:
    value = backoff_seconds(attempts, unit)
    assert unit <= value <= 60 * unit


def test_failure_plan_retires_at_max_attempts() -> None:
    plans = [plan_failure(a, max_attempts=5, unit=60, max_units=60, now_ms=0) for a in range(1, 6)]
    assert [p.retire for p in plans] == [False, False, False, False, True]
    assert [p.next_attempt_at_ms for p in plans[:4]] == [60_000, 240_000, 540_000, 960_000]


RELEASE = Verdict.RELEASE
FAIL = Verdict.FAIL

DECISION_TABLE = [
    pytest.param(
        BackendUnavailable("UPSTREAM_ERROR: dns", code="UPSTREAM_ERROR"),
        RELEASE,
        "provider_unavailable",
        id="unreachable",
    ),
    pytest.param(Transport("connection refused"), RELEASE, "provider_unavailable", id="transport"),
    pytest.param(
        RequestTimeout("poll timed out after 30s", seconds=30),
        RELEASE,
        "provider_unavailable",
        id="request-timeout",
    ),
    pytest.param(
        Upstream("upstream returned status 503: model loading", status_code=503),
        RELEASE,
        "capacity_unavailable",
        id="503-loading",
    ),
    pytest.param(
        Upstream("upstream returned status 503: server busy", status_code=503),
        RELEASE,
        "capacity_unavailable",
        id="503-busy",
    ),
    pytest.param(
        Upstream("submit: status 503: upstream unavailable", status_code=503),
        RELEASE,
        "provider_unavailable",
        id="503-upstream-unavailable",
    ),
    pytest.param(
        BackendUnavailable("UPSTREAM_ERROR: job cancelled", code="UPSTREAM_ERROR"),
        RELEASE,
        "provider_unavailable",
        id="cancelled-upstream-error",
    ),
    pytest.param(
        EmbedderTimeout("embedding timed out: job did not finish"),
        RELEASE,
        "provider_timeout",
        id="embedder-timeout",
    ),
    pytest.param(
        Upstream("upstream returned status 502: bad gateway", status_code=502),
        RELEASE,
        "provider_unavailable",
        id="502",
    ),
    pytest.param(
        CapacityUnavailable("status 429: no slots available"),
        RELEASE,
        "capacity_unavailable",
        id="capacity",
    ),
    pytest.param(
        CapacityWaitExpired("no capacity within 60s", seconds=60),
        RELEASE,
        "capacity_unavailable",
        id="capacity-wait",
    ),
    pytest.param(
        NoCandidates("none", workflow="memory_extraction"),
        RELEASE,
        "provider_unavailable",
        id="no-candidates",
    ),
    pytest.param(
        AllCircuitsOpen("open", workflow="memory_extraction"),
        RELEASE,
        "provider_unavailable",
        id="all-open",
    ),
    pytest.param(
        Exhausted("spent", workflow="embedding"), RELEASE, "provider_unavailable", id="exhausted"
    ),
    pytest.param(
        RouteUnavailable("none", workflow="embedding"),
        RELEASE,
        "provider_unavailable",
        id="route-unavailable",
    ),
    pytest.param(
        CapacityWaitTimeout("busy", workflow="embedding"),
        RELEASE,
        "capacity_unavailable",
        id="slot-wait",
    ),
    pytest.param(asyncio.CancelledError(), RELEASE, "shutdown", id="shutdown"),
    pytest.param(
        TaskTimeout("job did not finish", seconds=720), FAIL, "provider_timeout", id="task-timeout"
    ),
    pytest.param(
        Upstream("UPSTREAM_TIMEOUT: slow", code="UPSTREAM_TIMEOUT"),
        FAIL,
        "provider_timeout",
        id="upstream-timeout",
    ),
    pytest.param(
        DeadlineExceeded("cut", workflow="memory_extraction"),
        FAIL,
        "provider_timeout",
        id="deadline",
    ),
    pytest.param(
        DecodeError("decode memory extractor response: bad"),
        FAIL,
        "provider_protocol_error",
        id="decode",
    ),
    pytest.param(
        EmptyResponse("response body is empty"), FAIL, "provider_protocol_error", id="empty"
    ),
    pytest.param(UnknownStatus("weird"), FAIL, "provider_protocol_error", id="unknown-status"),
    pytest.param(Upstream("job failed"), FAIL, None, id="generic-upstream"),
    pytest.param(
        Upstream("upstream returned status 400: invalid schema", status_code=400),
        FAIL,
        None,
        id="400",
    ),
    pytest.param(
        Upstream("upstream returned status 429: rate limit", status_code=429),
        FAIL,
        "provider_overloaded",
        id="429",
    ),
    pytest.param(
        Upstream("upstream returned status 500: Internal Server Error", status_code=500),
        FAIL,
        "provider_error",
        id="500-provider-error",
    ),
    pytest.param(
        Upstream("submit: status 500: capacity exceeded", status_code=500),
        FAIL,
        "provider_error",
        id="500-capacity-is-provider-error",
    ),
    pytest.param(
        Upstream("upstream returned status 502: bad gateway: 500 inside", status_code=502),
        RELEASE,
        "provider_unavailable",
        id="502-not-provider-error",
    ),
    pytest.param(RequestError("bad request"), FAIL, None, id="request-error"),
    pytest.param(StoreError("card write failed"), RELEASE, "store_unavailable", id="store"),
    pytest.param(RedisConnectionError("redis went away"), RELEASE, "store_unavailable", id="redis"),
    # §7: an answer no retry heals — refused writes release (the store's fault), the rest fail
    pytest.param(
        OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
        RELEASE,
        "store_refused",
        id="store-oom",
    ),
    pytest.param(
        ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
        FAIL,
        None,
        id="store-wrongtype",
    ),
    pytest.param(
        ResponseError("increment or decrement would overflow"), FAIL, None, id="store-overflow"
    ),
    pytest.param(
        ResponseError("user_script:3: attempt to index a nil value script: on @user_script:3."),
        FAIL,
        None,
        id="store-script",
    ),
    pytest.param(DataError("Invalid input of type: 'NoneType'"), FAIL, None, id="client-data"),
    pytest.param(
        BusyLoadingError("Redis is loading the dataset in memory"),
        RELEASE,
        "store_unavailable",
        id="store-loading",
    ),
    pytest.param(
        parsed_error("TRYAGAIN Multiple keys request during rehashing of slot", ClusterParser),
        RELEASE,
        "store_unavailable",
        id="store-tryagain",
    ),
    pytest.param(ConsolidationError("bad data"), FAIL, None, id="consolidation"),
    pytest.param(RuntimeError("service unavailable"), FAIL, None, id="generic-exception"),
]


@pytest.mark.parametrize(("error", "verdict", "reason"), DECISION_TABLE)
def test_release_or_fail(error: BaseException, verdict: Verdict, reason: str | None) -> None:
    decision = decide(error)
    assert decision.verdict is verdict
    assert decision.reason == reason


def test_lost_lease_abandons() -> None:
    assert decide(LeaseLost("reclaimed")).verdict is Verdict.ABANDON


def test_store_answers_are_coded_by_their_type() -> None:
    """The error log's code of a store answer is our type's name (replay selects by it)."""
    assert decide(ResponseError("WRONGTYPE Operation")).code == "StoreDataCorrupt"
    assert decide(OutOfMemoryError("command not allowed")).code == "StoreWriteRefused"
    assert decide(ResponseError("user_script:1: boom")).code == "StoreScriptError"


def test_codes_prefer_farm_codes() -> None:
    assert decide(BackendUnavailable("x", code="SERVICE_DISABLED")).code == "SERVICE_DISABLED"
    assert decide(DecodeError("x")).code == "DecodeError"


# --- a tick that outlived its budget (§7: task_timeout) -------------------------------

OVERRUN_ROWS = [
    pytest.param(
        DeadlineExceeded("the caller's deadline ended the walk", workflow="memory_extraction"),
        False,
        True,
        id="run-deadline-cut-the-walk",
    ),
    pytest.param(
        DeadlineExceeded("the run's deadline passed", workflow="embedding"),
        True,
        True,
        id="no-time-left-for-the-next-call",
    ),
    pytest.param(TaskTimeout("job j: task budget", seconds=720), True, True, id="timeout-late"),
    pytest.param(
        TaskTimeout("job j: task budget", seconds=720), False, False, id="farm-timeout-in-time"
    ),
    pytest.param(
        Upstream("UPSTREAM_TIMEOUT: backend took too long"), True, True, id="upstream-timeout-late"
    ),
    pytest.param(BackendUnavailable("UPSTREAM_ERROR: dns"), True, False, id="outage-releases"),
    pytest.param(CapacityWaitExpired("queued", seconds=60), True, False, id="busy-releases"),
    pytest.param(EmbedderTimeout("embedding call timed out"), True, False, id="embedder-releases"),
    pytest.param(DecodeError("decode chat completion payload"), True, False, id="decode-late"),
    pytest.param(ValueError("bug"), True, False, id="bug-late"),
]


@pytest.mark.parametrize(("error", "deadline_passed", "outlived"), OVERRUN_ROWS)
def test_outlived_budget(error: BaseException, deadline_passed: bool, outlived: bool) -> None:
    assert outlived_budget(error, deadline_passed=deadline_passed) is outlived
