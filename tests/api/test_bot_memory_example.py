"""The bot-API page's "Memory the bot can use" example runs (§13): a context in a prompt,
recall within a time window, a correction, a remembered fact and an export, in a subprocess against the test's Redis, the real e5
embedder on the local route, and a chat the test stored first."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from llm_client import ClientConfig, LocalEmbedClient
from memory_worker.cards import CardStore, RunWrites, Scope
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from tests.support.cards import new
from tests.support.routes import local_target, route, write_routes

PAGE = Path(__file__).resolve().parents[2] / "docs" / "bot-api.md"
E5 = "multilingual-e5-small"
SEEN = datetime(2026, 11, 2, 18, 5, tzinfo=UTC)
FACTS = [
    ("Alice loves green tea.", Scope.USER, 0.6),
    ("Alice lives in Lisbon.", Scope.USER, 0.8),
    ("Мария любит кататься на велосипеде.", Scope.CHAT, 0.4),
]


EXAMPLE = PAGE.parent.parent / "examples" / "bot" / "memory.py"


def example() -> str:
    """examples/bot/memory.py, which the page shows (tests/test_examples.py checks that)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    assert text in PAGE.read_text(encoding="utf-8")
    return text


async def seed_chat(redis: Any, key_prefix: str) -> CardStore:
    """Chat 42 as the example expects it: :data:`FACTS` with their e5 vectors."""
    client = LocalEmbedClient(E5, ClientConfig(base_url=""))
    vectors = (await client.embed([f for f, _, _ in FACTS], dimension=384)).embeddings
    await client.aclose()
    cards = [
        dataclasses.replace(
            new(fact, scope=scope, user=7, salience=sal, subject=str(i), at=SEEN, seed=None),
            embedding=vector,
        )
        for i, ((fact, scope, sal), vector) in enumerate(zip(FACTS, vectors, strict=True))
    ]
    store = CardStore(redis, Keys(key_prefix))
    writes = RunWrites(observed_at=SEEN, cards=cards, embedding_model=E5)
    await store.apply_run(42, "r1", writes, now=SEEN)
    return store


async def check_output(out: str, store: CardStore, folder: Path) -> None:
    """What the example printed, the export it wrote into ``folder``, the cards it changed."""
    first, found, fixed, remembered, exported = out.splitlines()
    assert first.endswith("tokens: - [2026-11-02] Alice loves green tea.")
    assert found == "42:2 2026-11-02 Alice lives in Lisbon."
    assert fixed == "corrected: Alice lives in Porto replaces 2"
    assert remembered == "remembered: 42:5 bot:chat-42 True"  # embedded at once, on e5
    # her two (the chat's is not hers), the correction, the remembered fact
    assert exported == "exported 4 cards; True"
    header = orjson.loads((folder / "user-7.jsonl").read_bytes().splitlines()[0])
    assert (header["chat_id"], header["user_id"]) == (42, 7)
    live = await store.visible_cards(42, user_id=7)
    assert "Alice lives in Porto" in [c.fact_text for c in live]
    assert "Alice is vegetarian" in [c.fact_text for c in live]


async def test_the_memory_example_runs(settings: Settings, redis: Any, tmp_path: Path) -> None:
    store = await seed_chat(redis, settings.key_prefix)

    script = tmp_path / "memory_example.py"
    script.write_text(example())
    env = os.environ | {
        "REDIS_URL": reveal(settings.redis_url) or "",
        "MEMORY_KEY_PREFIX": settings.key_prefix,
        "MEMORY_ROUTES_FILE": str(write_routes(tmp_path, embedding=route(local_target()))),
        "MEMORY_EMBEDDING_DIMENSION": "384",
        "MEMORY_LOG_FORMAT": "json",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        env=env,
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    await check_output(out.decode(), store, tmp_path)
