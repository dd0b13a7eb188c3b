"""CLI contract (§13): enqueue, runs list/show with --json, clear errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from tests.support.factories import request_dict
from tests.support.harness import cli


async def test_enqueue_jsonl_then_list_and_show(
    settings: Settings, redis: Any, tmp_path: Path
) -> None:
    path = tmp_path / "runs.jsonl"
    lines = [request_dict(1), request_dict(2, hour=3), request_dict(1)]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    done = cli(settings, "enqueue", str(path), "--json")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert [r["status"] for r in results] == ["enqueued", "enqueued", "duplicate"]
    assert results[2]["run_id"] == results[0]["run_id"]

    listed = cli(settings, "runs", "list", "--status", "queued", "--json")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert {r["id"] for r in runs} == {results[0]["run_id"], results[1]["run_id"]}
    required = {
        "id", "status", "attempts", "releases", "error_log", "chat_id", "thread_id",
        "range_start", "range_end", "created_at", "updated_at", "next_attempt_at", "retired",
    }  # fmt: skip
    assert required <= set(runs[0])

    shown = cli(settings, "runs", "show", results[1]["run_id"], "--json")
    assert shown.returncode == 0, shown.stderr
    run = json.loads(shown.stdout)
    assert run["chat_id"] == 2
    assert run["status"] == "queued"
    assert run["error_log"] == []


async def test_invalid_input_exits_nonzero_and_stores_nothing(
    settings: Settings, redis: Any, tmp_path: Path
) -> None:
    good = json.dumps(request_dict(1))
    bad_json = "{not json"
    bad_field = json.dumps(request_dict(2) | {"range_end": "2020-01-01T00:00:00Z"})
    done = cli(settings, "enqueue", "-", stdin="\n".join([good, bad_json, bad_field]) + "\n")
    assert done.returncode == 2
    assert "line 2: not valid JSON" in done.stderr
    assert "line 3" in done.stderr
    assert "range_end must be after range_start" in done.stderr
    store = RunStore(redis, settings)
    assert sum((await store.counts()).values()) == 0  # the valid line was not stored either
    missing = cli(settings, "runs", "show", "r-nope")
    assert missing.returncode == 2
    assert "run not found" in missing.stderr


async def test_list_reports_retired_runs(settings: Settings, redis: Any) -> None:
    store = RunStore(redis, settings.model_copy(update={"max_attempts": 1}))
    from memory_worker.models import RunRequest
    from memory_worker.runs.policy import plan_failure

    await store.enqueue(RunRequest.model_validate(request_dict(5)))
    claim = await store.claim("w")
    assert claim is not None
    await store.fail(
        claim,
        plan_failure(1, max_attempts=1, unit=60, max_units=60, now_ms=0),
        code="UPSTREAM_TIMEOUT",
        reason="provider_timeout",
        message="slow",
    )
    listed = cli(settings, "runs", "list", "--status", RunStatus.FAILED.value, "--json")
    (run,) = json.loads(listed.stdout)
    assert run["retired"] is True
    assert run["error_log"][0]["code"] == "UPSTREAM_TIMEOUT"
