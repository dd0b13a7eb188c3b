"""What the run store keeps for operators (§15): each run's release history, each route's
last farm error (masked), the attempt budget of a run's claim, and the worker registry's
facts for the workers page — all written by the scripts that already run, no extra trip."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from llm_client import (
    AllCircuitsOpen,
    BackendUnavailable,
    NoCandidates,
    Upstream,
)
from memory_worker.errors import EmbedderTimeout
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.runs.model import append_release
from memory_worker.runs.policy import (
    FailurePlan,
    ReleaseOrigin,
    release_origin,
)
from memory_worker.runs.workers import fleet_workers, heartbeat_info, worker_rows
from memory_worker.settings import Settings
from tests.support.factories import make_request

T0 = 1_800_000_000_000
WF, A, B = "memory_extraction", "farm/a", "farm/b"
KEY = f"sk-live-{uuid.uuid4().hex}{uuid.uuid4().hex[:8]}"
ECHO = f"canary-echo-{uuid.uuid4().hex[:6]} I keep my diary in Porto"


def _down(target: str | None = A, workflow: str | None = WF) -> BackendUnavailable:
    error = BackendUnavailable(
        f"UPSTREAM_ERROR: backend unreachable (key {KEY})", code="UPSTREAM_ERROR"
    )
    if workflow:
        error.note_origin(workflow, target)
    return error


def _quarantined() -> NoCandidates:
    error = NoCandidates("a target crashed", workflow=WF)
    error.__cause__ = _down(B)
    return error


def _embedder_timeout() -> EmbedderTimeout:
    error = EmbedderTimeout("embedding call timed out")
    error.__cause__ = _down("embedder/e", "embedding")
    return error


@pytest.mark.parametrize(
    ("error", "origin"),
    [
        pytest.param(
            _down(),
            ReleaseOrigin(
                WF, A, "UPSTREAM_ERROR", f"UPSTREAM_ERROR: backend unreachable (key {KEY})"
            ),
            id="an-attempts-answer",
        ),
        pytest.param(
            _quarantined(),
            ReleaseOrigin(
                WF, B, "UPSTREAM_ERROR", f"UPSTREAM_ERROR: backend unreachable (key {KEY})"
            ),
            id="routing-error-over-an-answer",
        ),
        pytest.param(
            AllCircuitsOpen("every target open", workflow=WF),
            ReleaseOrigin(WF, None, "AllCircuitsOpen", None),
            id="refused-before-any-attempt",
        ),
        pytest.param(
            _embedder_timeout(),
            ReleaseOrigin(
                "embedding",
                "embedder/e",
                "UPSTREAM_ERROR",
                f"UPSTREAM_ERROR: backend unreachable (key {KEY})",
            ),
            id="wrapped-by-the-consolidation",
        ),
        pytest.param(
            Upstream("HTTP 503", code="HTTP_503"),
            ReleaseOrigin(None, None, "HTTP_503", None),
            id="outside-any-walk",
        ),
        pytest.param(ConnectionError("x"), ReleaseOrigin(code="ConnectionError"), id="not-ours"),
    ],
)
def test_release_origin(error: BaseException, origin: ReleaseOrigin) -> None:
    assert release_origin(error) == origin


@hsettings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=40),
    st.integers(min_value=1, max_value=12),
)
def test_append_release_keeps_the_newest_entries_in_order(ats: list[int], keep: int) -> None:
    log = ""
    for at in ats:
        log = append_release(log, orjson.dumps({"at": at}).decode(), keep)
    kept = [orjson.loads(line)["at"] for line in log.split("\n") if line]
    assert kept == ats[-keep:]


@pytest.fixture
def store(redis: Any, settings: Settings) -> RunStore:
    return RunStore(redis, settings.model_copy(update={"release_log_max_entries": 3}))


async def test_release_history_is_bounded_and_agrees_with_the_twin(
    store: RunStore, redis: Any
) -> None:
    rid = (await store.enqueue(make_request(1), at_ms=T0)).run_id
    assert rid
    twin = ""
    reasons = ["provider_unavailable", "capacity_unavailable", "shutdown", "watchdog"]
    for i in range(7):
        claim = await store.claim("w", at_ms=T0 + i)
        assert claim is not None
        error = _down() if i % 2 == 0 else AllCircuitsOpen("open", workflow=WF)
        origin = release_origin(error)
        reason = reasons[i % len(reasons)]
        assert await store.release(claim, reason=reason, at_ms=T0 + 1000 * i, origin=origin)
        entry = orjson.dumps(
            {"at": T0 + 1000 * i, "reason": reason, "workflow": WF}
            | ({"target": A} if i % 2 == 0 else {})
            | {"code": origin.code}
        ).decode()
        twin = append_release(twin, entry, 3)
        stored = await redis.hget(Keys(store.settings.key_prefix).run(rid), "release_log")
        assert stored.decode() == twin
    run = await store.get(rid)
    assert run.releases == 7
    assert [(e.at.timestamp() * 1000, e.reason, e.target) for e in run.release_log] == [
        (T0 + 4000, "provider_unavailable", A),
        (T0 + 5000, "capacity_unavailable", None),
        (T0 + 6000, "shutdown", A),
    ]
    assert {e.workflow for e in run.release_log} == {WF}


async def test_a_stale_release_writes_no_history_and_no_route_error(store: RunStore) -> None:
    await store.enqueue(make_request(1), at_ms=T0)
    claim = await store.claim("w", at_ms=T0)
    assert claim is not None
    assert await store.release(claim, reason="provider_unavailable", at_ms=T0 + 1)
    assert not await store.release(
        claim, reason="provider_unavailable", at_ms=T0 + 2, origin=release_origin(_down())
    )
    assert len((await store.get(claim.id)).release_log) == 1
    assert await store.route_errors() == {}


async def test_the_route_keeps_the_farms_last_answer_masked(store: RunStore) -> None:
    """The farm's answer is kept per route, masked (no key, nothing the run's messages said);
    a release refused before any attempt (every breaker open) keeps the last real answer."""
    await store.enqueue(make_request(1, texts=[ECHO]), at_ms=T0)
    claim = await store.claim("w", at_ms=T0)
    assert claim is not None
    answer = _down()
    answer.message += f' (echo: "{ECHO}")'
    assert await store.release(
        claim, reason="provider_unavailable", at_ms=T0 + 5, origin=release_origin(answer)
    )
    errors = await store.route_errors()
    assert set(errors) == {WF}
    last = errors[WF]
    assert (last.target, last.code, last.reason) == (A, "UPSTREAM_ERROR", "provider_unavailable")
    assert last.message.startswith("UPSTREAM_ERROR: backend unreachable")
    assert KEY not in last.message
    assert ECHO not in last.message
    assert last.at.timestamp() * 1000 == T0 + 5
    claim = await store.claim("w", at_ms=T0 + 10)
    assert claim is not None
    refused = AllCircuitsOpen("open", workflow=WF)
    assert await store.release(
        claim, reason="provider_unavailable", at_ms=T0 + 20, origin=release_origin(refused)
    )
    assert (await store.route_errors())[WF] == last


async def test_a_failure_keeps_its_routes_answer_too(store: RunStore) -> None:
    await store.enqueue(make_request(1), at_ms=T0)
    claim = await store.claim("w", at_ms=T0)
    assert claim is not None
    crash = Upstream(f"HTTP 400: bad schema, token {KEY}", code="HTTP_400", status_code=400)
    crash.note_origin(WF, B)
    assert await store.fail(
        claim,
        FailurePlan(retire=False, next_attempt_at_ms=T0 + 60_000),
        code="HTTP_400",
        reason=None,
        message=str(crash),
        at_ms=T0 + 3,
        origin=release_origin(crash),
    )
    last = (await store.route_errors())[WF]
    assert (last.target, last.code, last.reason) == (B, "HTTP_400", None)
    assert KEY not in last.message


async def test_a_run_shows_the_budget_of_its_claim_not_the_readers(
    redis: Any, settings: Settings
) -> None:
    worker = RunStore(redis, settings.model_copy(update={"max_attempts": 7}))
    reader = RunStore(redis, settings.model_copy(update={"max_attempts": 2}))
    rid = (await worker.enqueue(make_request(1), at_ms=T0)).run_id
    assert rid
    assert (await reader.get(rid)).max_attempts is None  # not claimed: no budget yet
    assert await worker.claim("w", at_ms=T0)
    assert (await reader.get(rid)).max_attempts == 7


async def test_the_heartbeat_keeps_what_the_workers_page_shows(store: RunStore, redis: Any) -> None:
    keys = Keys(store.settings.key_prefix)
    info = heartbeat_info(prompt_version="v9", busy=1, host="box-1")
    await store.heartbeat("box-1:11:aa", ["r1"], concurrency=4, at_ms=T0, info=info)
    await store.heartbeat("box-2:12:bb", [], concurrency=2, at_ms=T0 - 10**6)  # no info: old
    ttl = store.heartbeat_ttl_ms
    rows = await fleet_workers(redis, keys, now_ms=T0 + 1, ttl_ms=ttl)
    assert [(r.id, r.alive, r.slots, r.busy, r.held, r.host, r.prompt_version) for r in rows] == [
        ("box-1:11:aa", True, 4, 1, 1, "box-1", "v9"),
        ("box-2:12:bb", False, 2, 0, 0, "box-2", "-"),
    ]
    assert rows[0].last_heartbeat_ms == T0
    await store.deregister("box-1:11:aa")
    assert not await redis.hexists(keys.worker_info, "box-1:11:aa")


def test_worker_rows_order_alive_first_then_newest() -> None:
    rows = worker_rows(
        {"a:1:x": 100.0, "b:2:y": 300.0, "c:3:z": 50.0},
        {"a:1:x": "2", "b:2:y": "bad"},
        {"b:2:y": "r1,r2"},
        {"a:1:x": "{not json"},
        now_ms=90,
        ttl_ms=30,
    )
    assert [(r.id, r.alive, r.slots, r.held, r.last_heartbeat_ms) for r in rows] == [
        ("b:2:y", True, 0, 2, 270),
        ("a:1:x", True, 2, 0, 70),
        ("c:3:z", False, 0, 0, 20),
    ]
