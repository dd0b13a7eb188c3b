"""Masking (§14), end to end: every family of secret is masked in what reaches the
farm — the extraction prompt, the embedder (related-card queries and the cards of a run) and the
bot's ``recall()`` queries — and none is stored as a card.

One secret of every kind of the masking corpus (``tests/data/masking/train.jsonl``: labelled
passwords in ten languages, PINs, every provider token family, URL credentials, config and
JSON fields, ``Authorization`` headers, private keys, card numbers with any separator) is put
in a run's messages, consolidated against the loopback farm simulator, and searched for in
every body the simulator received; the same texts are then sent as ``recall()`` queries
through the embedding route to the simulator.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore, Durability, NewCard, RunWrites, Scope
from memory_worker.consolidation.consolidate import consolidate_run
from memory_worker.farmsim import FarmSimulator
from memory_worker.keys import Keys
from memory_worker.privacy.masking import REDACTED
from memory_worker.settings import Settings
from tests.support.factories import slice_request
from tests.support.farm import Farm, everything_sent, farm_for
from tests.support.routes import FARM_EMBEDDER, route, write_routes

CORPUS = Path(__file__).parent.parent / "data" / "masking" / "train.jsonl"
CHAT = -100777
DAY = datetime(2026, 4, 6, 9, tzinfo=UTC)


def one_of_each_kind() -> list[dict[str, Any]]:
    """The first corpus secret of every kind (token families count as kinds), round the
    languages so each language gives some."""
    rows = [orjson.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    chosen: dict[str, dict[str, Any]] = {}
    for row in sorted((r for r in rows if r["kind"] == "secret"), key=lambda r: r["id"][3:]):
        chosen.setdefault(row["category"], row)
    for lang in ("en", "ru", "de", "es", "fr", "uk", "pt", "it", "pl", "zh"):
        for kind in ("password", "pin"):
            row = next(r for r in rows if r["lang"] == lang and r["category"] == kind)
            chosen.setdefault(f"{kind}-{lang}", row)
    return list(chosen.values())


ROWS = one_of_each_kind()


def forms(value: str) -> list[str]:
    """A value as it may appear in a body: as typed, and JSON-escaped."""
    return [value, orjson.dumps(value).decode()[1:-1]]


def assert_no_value(text: str) -> None:
    for row in ROWS:
        for value in row["secrets"]:
            for form in forms(value):
                assert form not in text, (row["id"], row["category"], value)


@pytest.fixture
async def farm(settings: Settings) -> AsyncIterator[Farm]:
    async with farm_for(settings, embedder="hashed") as f:
        yield f


async def seed_card(store: CardStore, dimension: int) -> None:
    """A card with a vector, so the run's related-card lookup embeds the run's text."""
    at = DAY - timedelta(days=3)
    card = NewCard(
        scope=Scope.CHAT,
        thread_id=0,
        user_id=None,
        card_type="preference",
        subject="team",
        predicate="likes",
        object="tea",
        fact_text="The team likes tea",
        confidence=0.9,
        salience=0.5,
        durability=Durability.LONG,
        source_message_ids=(9999,),
        valid_from=at,
        observed_at=at,
        expires_at=None,
        embedding=[1.0] * dimension,
    )
    await store.apply_run(CHAT, "old", RunWrites(observed_at=at, cards=[card]), now=at)


def test_the_sample_covers_every_family() -> None:
    kinds = {row["category"] for row in ROWS}
    families = {k for k in kinds if k.startswith("token:")}
    assert len(families) >= 18  # every provider family of the corpus
    assert {"card_number", "url_credential", "config", "auth_header", "private_key"} <= kinds
    assert len({row["lang"] for row in ROWS if row["category"] == "password"}) >= 10


async def test_no_secret_reaches_the_farm_or_the_embedder_or_a_card(
    farm: Farm, redis: Any, settings: Settings
) -> None:
    store = CardStore(redis, Keys(settings.key_prefix))
    await seed_card(store, settings.embedding_dimension)
    messages = [(i + 1, 31 + i % 3, f"user{i % 3}", row["text"]) for i, row in enumerate(ROWS)]
    messages.append((len(ROWS) + 1, 31, "user0", "I live in Lisbon and work at Acme"))
    request = slice_request(CHAT, DAY, messages, length=timedelta(days=1), first_minute=0)
    result = await consolidate_run(
        "run-families",
        request,
        store=store,
        extractor=farm.extractor,
        embedder=farm.embedder,
        settings=settings,
        now=DAY + timedelta(days=1),
    )
    assert result.llm_calls >= 1
    sent = everything_sent(farm.sim)
    embedded = everything_sent(farm.sim, settings.embedder_service)
    assert embedded, "the embedder was asked"
    assert_no_value(sent)
    assert REDACTED in sent
    assert "[card number]" in sent
    assert "I live in Lisbon and work at Acme" in sent  # ordinary text arrives as written
    cards = [c.fact_text for c in await store.all_cards(CHAT)]
    for fact in cards:
        assert REDACTED not in fact
        assert_no_value(fact)


@pytest.mark.slow  # every family's queries through the farm: started first, no tail
async def test_recall_queries_reach_the_embedder_masked(
    settings: Settings, tmp_path: Path, sim: FarmSimulator
) -> None:
    routes = write_routes(tmp_path, embedding=route(FARM_EMBEDDER))
    local = settings.model_copy(update={"routes_file": routes, "discovery_base_url": sim.base_url})
    async with await MemoryQueue.connect(settings=local) as q:
        store = q.cards
        at = DAY
        card = NewCard(
            scope=Scope.CHAT,
            thread_id=0,
            user_id=None,
            card_type="preference",
            subject="team",
            predicate="likes",
            object="tea",
            fact_text="The team likes tea",
            confidence=0.9,
            salience=0.5,
            durability=Durability.LONG,
            source_message_ids=(1,),
            valid_from=at,
            observed_at=at,
            expires_at=None,
            embedding=[1.0] * local.embedding_dimension,
        )
        writes = RunWrites(observed_at=at, cards=[card], embedding_model="embedder")
        await store.apply_run(CHAT, "seed", writes, now=at)
        for row in ROWS:
            await q.recall(CHAT, row["text"], k=1)
    queries = everything_sent(sim)
    assert len(sim.received()) == len(ROWS)
    assert_no_value(queries)
    assert REDACTED in queries
