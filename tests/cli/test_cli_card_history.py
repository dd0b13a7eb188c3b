"""``memory-worker cards history REF`` (§13): a card's events, oldest first, as lines and as
one JSON document, from a subprocess run of the real CLI."""

from __future__ import annotations

import json

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.settings import Settings
from tests.support.card_history import CHAT, story
from tests.support.card_history import queue as queue  # the fixture
from tests.support.harness import cli


async def test_the_cli_prints_a_card_s_history(queue: MemoryQueue, settings: Settings) -> None:
    if queue.cards.redis is not queue.redis:
        pytest.skip("the CLI's cards on the cluster: tests/test_cli_cards.py")
    await story(queue)
    shown = cli(settings, "cards", "history", f"{CHAT}:3")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "Alice lives in Porto" in lines[1]
    assert "created" in lines[2]
    assert "run r3" in lines[2]
    assert "supersedes 1" in lines[3]
    assert "corrected 4" in lines[4]
    assert "by ops:ann request req-7" in lines[4]
    as_json = cli(settings, "cards", "history", f"{CHAT}:4", "--json")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert data["ref"] == f"{CHAT}:4"
    assert [(e["kind"], e["actor"], e["request_id"]) for e in data["events"]] == [
        ("created", "ops:ann", "req-7"),
        ("retracted", "ops:bob", "req-8"),
    ]
    missing = cli(settings, "cards", "history", f"{CHAT}:99")
    assert missing.returncode != 0
    assert "no card" in missing.stderr
