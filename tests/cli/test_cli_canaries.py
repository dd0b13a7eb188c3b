"""No message text, card text or secret in the command line's admin outputs (§11, §13),
canary-checked through the real CLI (``python -m memory_worker`` in a subprocess).

``runs show|list|cancel|replay`` print a run's status, error log and release history: a run
whose messages carry the canaries, failed on a farm 400 that quoted the whole prompt back,
then cancelled and replayed by id. ``cards history`` prints the card's own text once (its
header, as ``cards show`` does) and then its events: no event may carry another card's text
or a retraction's reason. Standard output and the JSON log lines on standard error are
searched; the console token in the environment is a canary too.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.farmsim import FarmSimulator
from memory_worker.models import RunRequest
from memory_worker.ops.sentry import report_failure
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from tests.support.canaries import (
    CARD_TEXT,
    CONSOLE_TOKEN,
    MESSAGE_TEXTS,
    PROMPT_REQUEST,
    REASON,
    SENDER,
    WF,
    echoing_models,
    leaks,
)
from tests.support.card_history import queue as queue  # the fixture
from tests.support.factories import request_dict
from tests.support.harness import cli
from tests.support.runner import tick_runner

CHAT = 6161
ENV = {"MEMORY_CONSOLE_TOKEN": CONSOLE_TOKEN, "MEMORY_LOG_LEVEL": "DEBUG"}


def admin_cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    """The command, run with the canary environment (it must succeed)."""
    done = cli(settings, *args, **ENV)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


async def test_runs_show_cancel_and_replay_print_no_text(
    redis: Any, settings: Settings, sim: FarmSimulator
) -> None:
    data = request_dict(CHAT, texts=MESSAGE_TEXTS)
    for message in data["messages"]:
        message["sender_name"] = SENDER
    store = RunStore(redis, settings)
    run_id = (await store.enqueue(RunRequest.model_validate(data))).run_id
    assert run_id is not None
    async with echoing_models(redis, settings, sim) as models:

        async def extracting(run: ClaimedRun, *, deadline: float) -> ProcessResult:
            await models.chat(PROMPT_REQUEST, workflow=WF, idempotency_key=run.id, timeout=10)
            raise AssertionError("the echoing farm answered")

        runner = tick_runner(
            settings=settings, redis=redis, processor=extracting, report_failure=report_failure
        )
        assert await runner.tick("job") == "failed"
    outputs = {
        "show": admin_cli(settings, "runs", "show", run_id),
        "show --json": admin_cli(settings, "runs", "show", run_id, "--json"),
        "list": admin_cli(settings, "runs", "list"),
        "list --json": admin_cli(settings, "runs", "list", "--json"),
        "cancel --dry-run": admin_cli(settings, "runs", "cancel", run_id, "--dry-run"),
        "cancel": admin_cli(settings, "runs", "cancel", run_id, "--yes", "--json"),
        "replay --dry-run": admin_cli(settings, "runs", "replay", run_id, "--dry-run"),
        "replay": admin_cli(settings, "runs", "replay", run_id, "--yes"),
        "show after": admin_cli(settings, "runs", "show", run_id, "--json"),
        "report": admin_cli(settings, "report"),
    }
    shown = json.loads(outputs["show after"].stdout)
    assert [e["kind"] for e in shown["error_log"]] == ["failure", "cancel", "replay"]
    assert "invalid request body" in shown["error_log"][0]["message"]  # the farm's answer, kept
    for name, done in outputs.items():
        assert leaks(done.stdout) == [], name
        assert leaks(done.stderr) == [], name


async def test_cards_history_events_carry_no_text(queue: MemoryQueue, settings: Settings) -> None:
    if queue.cards.redis is not queue.redis:
        pytest.skip("the CLI's cards on the cluster: tests/test_cli_cards.py")
    first = await queue.remember(CHAT, "Alice keeps goats", user_id=11, actor="ops:ann")
    corrected = await queue.correct(first, CARD_TEXT, actor="ops:ann", request_id="req-1")
    await queue.retract(corrected, actor="ops:bob", reason=REASON, request_id="req-2")

    lines = cli(settings, "cards", "history", first.ref, **ENV)
    assert lines.returncode == 0, lines.stderr
    _header, own_text, *events = lines.stdout.splitlines()
    assert "Alice keeps goats" in own_text  # the card's own text: shown, as `cards show` does
    assert any(f"corrected {corrected.id}" in line for line in events)
    assert leaks("\n".join(events) + lines.stderr) == []

    as_json = cli(settings, "cards", "history", corrected.ref, "--json", **ENV)
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert [e["kind"] for e in data["events"]] == ["created", "retracted"]
    assert data["events"][1]["request_id"] == "req-2"
    assert leaks(as_json.stdout + as_json.stderr) == []
