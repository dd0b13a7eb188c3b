"""What every fault-matrix scenario gets: isolated settings, a Redis client, a farm simulator."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from memory_worker.cards import CardStore, RunWrites, Scope
from memory_worker.farmsim import FarmSimulator
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from tests.support.cards import new
from tests.support.factories import BASE
from tests.support.harness import Fleet


@dataclass
class FaultContext:
    #: Settings on the shared test server with a key prefix of this test's own.
    settings: Settings
    #: A client on that server (keys under the prefix are deleted afterwards).
    redis: Any
    redis_url: str
    #: A healthy farm simulator on a free loopback port.
    sim: FarmSimulator
    tmp_path: Path


Scenario = Callable[[FaultContext], Awaitable[None]]


async def seed_card_vector(ctx: FaultContext, chat_id: int) -> None:
    """A chat card with a vector: the chat's runs make the related-card lookup (a chat
    without one has nothing to relate to and embeds no query)."""
    at = BASE - timedelta(days=3)
    card = new("The group meets weekly.", scope=Scope.CHAT, at=at, sources=(99,))
    card = replace(card, embedding=[1.0] * ctx.settings.embedding_dimension)
    store = CardStore(ctx.redis, Keys(ctx.settings.key_prefix))
    await store.apply_run(
        chat_id, f"seed-{chat_id}", RunWrites(observed_at=at, cards=[card]), now=at
    )


def delivered_pages(fleet: Fleet) -> list[dict[str, Any]]:
    """Pages delivered to the log channel (no Telegram/webhook configured in the matrix)."""
    lines = "\n".join(w.log() for w in fleet.workers).splitlines()
    return [
        json.loads(line)
        for line in lines
        if line.startswith("{") and '"admin.page_not_configured"' in line
    ]
