"""The production pipeline with a local embedding route (§16): extraction on the farm simulator,
embeddings in-process; the chat records e5 and the bot recalls by text through the same route."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore, VectorSpace
from memory_worker.farmsim import FarmSimulator
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.wiring import build_tick_runner
from tests.support.factories import make_request
from tests.support.routes import farm_target, local_target, route, routes_toml

ROUTES = routes_toml(
    memory_extraction=route(farm_target("llm-openai")),
    embedding=route(local_target()),
    memory_merge=route(farm_target("llm-openai")),
)


async def test_a_run_embeds_locally_and_recall_finds_its_card(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text(ROUTES)
    local = settings.model_copy(
        update={
            "routes_file": routes,
            "discovery_base_url": sim.base_url,
            "embedding_dimension": 384,
            "job_poll_seconds": 0.02,
        }
    )
    chat = 4711
    texts = ["I love green tea", "I live in Lisbon", "we decided to meet on Friday"]
    run_id = (await RunStore(redis, local).enqueue(make_request(chat, texts=texts))).run_id
    assert run_id
    pipeline = await build_tick_runner(local, redis)
    try:
        assert await pipeline.tick("t1") == "completed"
    finally:
        for close in pipeline.closers:
            await close()
    run = await RunStore(redis, local).get(run_id)
    assert run.status is RunStatus.COMPLETED
    assert sim.submits("embedder") == 0  # nothing went to the farm's embedder
    assert sim.submits("llm-openai") >= 1

    store = CardStore(redis, Keys(local.key_prefix))
    assert await store.vector_space(chat) == VectorSpace(
        model="multilingual-e5-small", dimension=384
    )
    cards = await store.all_cards(chat)
    assert cards
    assert all(card.has_embedding for card in cards)
    tea = next(c for c in cards if "tea" in c.fact_text.casefold())

    q = await MemoryQueue.connect(settings=local)
    try:
        user = tea.user_id
        hits = await q.recall(chat, "What does this person like to drink?", k=1, user_id=user)
    finally:
        await q.close()
    assert [c.id for c, _ in hits] == [tea.id]
