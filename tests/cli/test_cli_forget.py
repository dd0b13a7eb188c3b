"""`memory-worker forget` (§14): bad input is one line and exit 2, the y/N question, --json, audit.

Subprocess runs of the real CLI against the test's Redis and key prefix.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from tests.support.dumps import dump_all
from tests.support.forget import (
    ALICE,
    BOB,
    CANARY,
    CHAT,
    JAN,
    deployment_bytes,
    two_users,
)
from tests.support.harness import cli

NO_AOF = {"MEMORY_FORGET_REWRITE_AOF": "0"}


@pytest.fixture
async def one_run(settings: Settings, redis: Any) -> RunStore:
    store = RunStore(redis, settings)
    await store.enqueue(two_users(JAN, 1))
    return store


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--chat", "abc"], "error: --chat must be an integer id, got 'abc'"),
        (["--user", "21"], "error: --user needs --chat: a user is forgotten within one chat"),
        ([], "error: --chat is required"),
        (
            ["--chat", "424242"],
            "error: chat 424242 is unknown: no run and no memory of it is stored",
        ),
        (["--chat", str(CHAT), "--user", "x1"], "error: --user must be an integer id, got 'x1'"),
    ],
    ids=["chat-not-an-id", "user-without-chat", "no-chat", "unknown-chat", "user-not-an-id"],
)
async def test_bad_input_is_one_line_exit_2_and_changes_nothing(
    settings: Settings, redis: Any, one_run: RunStore, key_prefix: str, args: list[str], line: str
) -> None:
    before = await dump_all(redis, key_prefix)
    done = cli(settings, "forget", *args, "--yes", **NO_AOF)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == line
    assert done.stdout == ""
    assert await dump_all(redis, key_prefix) == before


async def test_without_yes_it_shows_the_counts_and_no_changes_nothing(
    settings: Settings, redis: Any, one_run: RunStore, key_prefix: str
) -> None:
    before = await dump_all(redis, key_prefix)
    refused = cli(
        settings, "forget", "--chat", str(CHAT), "--user", str(ALICE), stdin="n\n", **NO_AOF
    )
    assert refused.returncode == 1
    assert "would forget user 21 in chat -100555" in refused.stderr
    assert "2 message(s) in 1 run(s)" in refused.stderr
    assert "aborted: nothing was changed" in refused.stderr
    assert await dump_all(redis, key_prefix) == before

    dry = cli(settings, "forget", "--chat", str(CHAT), "--dry-run", "--json", **NO_AOF)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["messages"] == 3
    assert await dump_all(redis, key_prefix) == before

    agreed = cli(
        settings, "forget", "--chat", str(CHAT), "--user", str(ALICE), stdin="y\n", **NO_AOF
    )
    assert agreed.returncode == 0, agreed.stderr
    assert "Forgot user 21 in chat -100555" in agreed.stdout
    text = await deployment_bytes(redis, key_prefix)
    assert CANARY[ALICE].encode() not in text
    assert CANARY[BOB].encode() in text


async def test_each_forget_leaves_an_audit_event_the_report_shows_and_metrics_count(
    settings: Settings, redis: Any, one_run: RunStore
) -> None:
    done = cli(settings, "forget", "--chat", str(CHAT), "--yes", "--json", **NO_AOF)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["scope"], result["actor"], result["messages"]) == ("chat", "cli", 3)

    report = cli(settings, "report", "--json")
    assert report.returncode == 0, report.stderr
    (event,) = json.loads(report.stdout)["audit"]
    assert event["type"] == "forget"
    assert event["actor"] == "cli"
    assert event["host"]
    assert (event["chat_id"], event["scope"], event["messages"]) == (str(CHAT), "chat", "3")
    assert CANARY[ALICE] not in report.stdout
    assert CANARY[BOB] not in report.stdout
    shown = cli(settings, "report")
    assert "forget" in shown.stdout
    assert "cli" in shown.stdout
    counters = await redis.hgetall(Keys(settings.key_prefix).counters)
    assert counters[b"forgets:chat"] == b"1"


def test_forgets_are_a_metric_family_by_scope() -> None:
    from memory_worker.ops.fleet_counters import counter_metrics

    families = {f.name: f for f in counter_metrics({"forgets:user": 2, "forgets:chat": 1})}
    samples = {s.labels["scope"]: s.value for s in families["memory_worker_forgets"].samples}
    assert samples == {"user": 2, "chat": 1}
