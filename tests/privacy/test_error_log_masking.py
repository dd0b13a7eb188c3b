"""The run error log (§14): farm error text is stored and shown masked.

A farm that fails a job with an error echoing the run's message text, carrying an
``sk-live-…`` key and a URL with a token: end to end through a real worker process,
real Valkey and the farm simulator, the run's error log keeps the code, the reason and
a masked, bounded message — in Redis itself, in ``runs show`` and ``runs show --json``,
and on the console's ``/runs/ID`` page with ``MEMORY_CONSOLE_SHOW_MEMORY`` off and on.
An entry an older version wrote unmasked is shown masked too, and a farm's own error
code is masked and bounded like its message.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.privacy.masking import ECHO, FILTERED
from memory_worker.runs import RunStore, now_ms
from memory_worker.runs.model import CODE_MAX_CHARS
from memory_worker.runs.policy import plan_failure
from memory_worker.settings import Settings
from tests.support.console import MakeClient
from tests.support.console import make_client as make_client  # the fixture
from tests.support.factories import make_request
from tests.support.forget import deployment_bytes
from tests.support.harness import Fleet, cli, eventually

MESSAGE = f"canary-echo-{uuid.uuid4().hex[:6]} I am allergic to peanuts and hazelnuts"
KEY = f"sk-live-{uuid.uuid4().hex}{uuid.uuid4().hex[:8]}"
QUERY_TOKEN = f"querycanary{uuid.uuid4().hex[:10]}"
FARM_ERROR = (
    f'validation failed: message text "{MESSAGE}" was rejected by the safety filter; '
    f"the key {KEY} is not valid for this model; "
    f"see https://farm.example/v1/jobs?token={QUERY_TOKEN}&page=2 "
) + "padding " * 200  # a long answer: the stored message is bounded
CANARIES = [MESSAGE, "allergic to peanuts", "hazelnuts", KEY, KEY[8:], QUERY_TOKEN]


def assert_clean(text: str, where: str) -> None:
    for canary in CANARIES:
        assert canary not in text, (where, canary)


@pytest.fixture
def fleet(settings: Settings, sim: FarmSimulator, tmp_path: Path) -> Any:
    fleet = Fleet(settings, tmp_path, env_overrides={"discovery_base_url": sim.base_url})
    yield fleet
    fleet.stop_all()


@pytest.mark.slow
async def test_a_farm_error_is_stored_and_shown_masked_end_to_end(
    settings: Settings,
    redis: Any,
    sim: FarmSimulator,
    fleet: Fleet,
    make_client: MakeClient,
) -> None:
    store = RunStore(redis, settings)
    rid = (await store.enqueue(make_request(4242, texts=[MESSAGE, "see you on Friday"]))).run_id
    assert rid
    sim.set_fault(
        "*", Fault(kind=FaultKind.JOB_FAILED, code="INVALID_ARGUMENT", message=FARM_ERROR)
    )
    fleet.start(1)

    async def failed() -> bool:
        return bool((await store.get(rid)).error_log)

    await eventually(failed, timeout=30)
    fleet.stop_all()
    assert sim.received(), "the farm was asked"

    # in Redis itself: the entry was masked before it was written
    raw = b"\n".join(await redis.lrange(Keys(settings.key_prefix).run_errors(rid), 0, -1))
    assert_clean(raw.decode(), "redis error log")
    entry = orjson.loads(raw.split(b"\n")[0])
    assert entry["code"] == "INVALID_ARGUMENT"
    assert entry["reason"] is None  # not retryable: "validation failed"
    assert len(entry["message"]) <= settings.error_message_max_chars
    assert entry["message"].startswith("INVALID_ARGUMENT: validation failed: message text")
    assert ECHO in entry["message"]
    assert FILTERED in entry["message"]
    assert KEY.encode() not in await deployment_bytes(redis, settings.key_prefix)

    # the CLI, as a table and as JSON
    shown = cli(settings, "runs", "show", rid)
    as_json = cli(settings, "runs", "show", rid, "--json")
    for result in (shown, as_json):
        assert result.returncode == 0, result.stderr
        assert_clean(result.stdout + result.stderr, "runs show")
        assert "INVALID_ARGUMENT" in result.stdout
    assert orjson.loads(as_json.stdout)["error_log"][0]["message"] == entry["message"]

    # the console's run page, memory shown or not
    for show_memory in (False, True):
        client = await make_client(settings.model_copy(update={"console_show_memory": show_memory}))
        page = await client.get(f"/runs/{rid}")
        assert page.status == 200
        body = await page.text()
        assert_clean(body, f"/runs/ID show_memory={show_memory}")
        assert "INVALID_ARGUMENT" in body


async def test_an_entry_written_unmasked_by_an_older_version_is_shown_masked(
    settings: Settings, redis: Any, make_client: MakeClient
) -> None:
    store = RunStore(redis, settings)
    rid = (await store.enqueue(make_request(4343, texts=[MESSAGE]))).run_id
    assert rid
    legacy = {
        "attempt": 1,
        "failed_at": datetime(2026, 1, 2, tzinfo=UTC).isoformat(),
        "code": "UPSTREAM_ERROR",
        "reason": None,
        "message": f"backend said: key {KEY}, retry with token={QUERY_TOKEN}",
        "kind": "failure",
    }
    await redis.rpush(Keys(settings.key_prefix).run_errors(rid), orjson.dumps(legacy))
    (entry,) = (await store.get(rid)).error_log
    assert KEY not in entry.message
    assert QUERY_TOKEN not in entry.message
    assert entry.message.startswith("backend said: key ")
    result = cli(settings, "runs", "show", rid, "--json")
    assert result.returncode == 0, result.stderr
    assert KEY not in result.stdout
    client = await make_client(settings.model_copy(update={"console_show_memory": False}))
    assert KEY not in await (await client.get(f"/runs/{rid}")).text()


async def test_a_farm_code_is_masked_and_bounded_and_echoes_are_removed(
    settings: Settings, redis: Any
) -> None:
    store = RunStore(redis, settings)
    rid = (await store.enqueue(make_request(4444, texts=[MESSAGE]))).run_id
    assert rid
    claim = await store.claim("w-test")
    assert claim is not None
    assert claim.id == rid
    s = settings
    plan = plan_failure(
        claim.attempts,
        max_attempts=s.max_attempts,
        unit=s.backoff_unit_seconds,
        max_units=s.backoff_max_units,
        now_ms=now_ms(),
    )
    code = f"{KEY}-" + "X" * 200
    assert await store.fail(claim, plan, code=code, reason=None, message=f"echo: {MESSAGE}")
    (entry,) = (await store.get(rid)).error_log
    assert len(entry.code) <= CODE_MAX_CHARS
    assert KEY not in entry.code
    assert entry.message == f"echo: {ECHO}"
