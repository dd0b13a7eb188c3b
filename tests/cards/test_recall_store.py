"""Hybrid search on the card store (§16), on real Valkey — standalone and the cluster.

The lexical index lives in the process beside each chat's cached vectors and must change
exactly when they do: a write appends rows, a supersede, an expiry or a forget changes who
is live, a rewritten text or a re-embedding or a forget's compaction rewrites rows. Each
test writes through the real scripts, searches once (the index is built and cached), writes
again and searches again through the same store.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from memory_worker.cards import (
    CardStore,
    NewCard,
    ResolutionOp,
    ResolutionWrite,
    RunWrites,
    Scope,
    dedup_hash,
)
from memory_worker.cards.forget import CardForget, UserPlan
from memory_worker.cards.recall import FusionParams, Window
from memory_worker.consolidation.model_calls import Vectors
from memory_worker.keys import Keys
from memory_worker.privacy.forget import StoredCard
from memory_worker.settings import Settings
from memory_worker.upkeep.reembed import Reembedder, Target
from tests.support.cards import CHAT, DIM, T0, apply, new, vec
from tests.support.cards import store as store  # the fixture

DAY = timedelta(days=1)


def chat_card(text: str, *, seed: int = 1, at: Any = T0, subject: str = "", **kw: Any) -> NewCard:
    return new(text, scope=Scope.CHAT, user=None, seed=seed, at=at, subject=subject, **kw)


async def words(store: CardStore, text: str, k: int = 5, **kw: Any) -> list[str]:
    """The fact texts a lexical-only search finds, best first."""
    hits = await store.search(CHAT, text, None, k, now=kw.pop("now", T0), **kw)
    return [hit.card.fact_text for hit in hits]


def cached_rows(store: CardStore) -> tuple[int, int]:
    """(matrix rows, indexed rows) of the chat as the store caches them."""
    matrix = store._cache.get(CHAT)
    assert matrix is not None
    return matrix.count, matrix.lexicon.count


async def test_lexical_and_hybrid_search_find_words_stems_and_names_in_two_scripts(
    store: CardStore,
) -> None:
    await apply(
        store,
        "r1",
        chat_card("Мария живёт в Казани", seed=1),
        chat_card("Bob works as a nurse", seed=2),
        chat_card("Jonas wohnt in Leipzig", seed=3),
    )
    assert (await words(store, "Where does Maria live?"))[0] == "Мария живёт в Казани"
    assert await words(store, "Кем работает Боб?") == ["Bob works as a nurse"]  # skeleton
    assert await words(store, "zebra") == []
    rrf = FusionParams(method="rrf", lexical_weight=1.0)
    hits = await store.search(CHAT, "Where does Jonas live?", vec(2), 3, now=T0, params=rrf)
    assert hits[0].card.fact_text == "Jonas wohnt in Leipzig"  # the words outvote the cosine
    assert hits[0].lexical > 0
    assert hits[0].dense is not None
    card, score = hits[0]
    assert card.observed_at == T0
    assert score == hits[0].score
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    dense_only = await store.search(
        CHAT, "Where does Jonas live?", vec(2), 1, now=T0, params=FusionParams(method="dense")
    )
    assert dense_only[0].card.fact_text == "Bob works as a nurse"  # vec(2) is Bob's own row
    assert cached_rows(store) == (3, 3)


async def test_a_new_run_extends_the_index_row_for_row(store: CardStore) -> None:
    await apply(store, "r1", chat_card("Alice likes green tea", seed=1))
    assert await words(store, "espresso") == []
    matrix = store._cache.get(CHAT)
    await apply(store, "r2", chat_card("Bob drinks espresso", seed=2))
    assert await words(store, "espresso") == ["Bob drinks espresso"]
    assert store._cache.get(CHAT) is matrix  # refreshed in place: only the new row was read
    assert cached_rows(store) == (2, 2)


async def test_supersede_and_expiry_take_cards_out_of_both_rankings(store: CardStore) -> None:
    await apply(
        store,
        "r1",
        chat_card("Alice lives in Lisbon", seed=1),
        chat_card("Alice eats cherries this week", seed=2, expires=T0 + 2 * DAY),
    )
    assert await words(store, "Lisbon cherries") != []
    moved = chat_card("Alice lives in Porto", seed=3)
    await store.apply_run(
        CHAT,
        "r2",
        RunWrites(
            observed_at=T0,
            cards=[moved],
            resolutions=[ResolutionWrite("1", ResolutionOp.SUPERSEDE, new_index=0)],
        ),
        now=T0,
    )
    found = await words(store, "Where does Alice live?")
    assert found[0] == "Alice lives in Porto"
    assert "Alice lives in Lisbon" not in found
    later = T0 + 3 * DAY
    assert await words(store, "cherries", now=later) == []  # past expiry: never shown
    assert await store.expire(CHAT, now=later) == 1
    assert await words(store, "cherries", now=later) == []
    for embedding in (vec(2), None):
        hits = await store.search(CHAT, "cherries Lisbon", embedding, 5, now=later)
        assert [h.card.fact_text for h in hits] in ([], ["Alice lives in Porto"])


async def test_a_rewritten_text_is_reindexed_even_without_a_new_vector(store: CardStore) -> None:
    await apply(store, "r1", chat_card("Alice likes green tea", seed=1, subject="Alice"))
    assert await words(store, "tea") == ["Alice likes green tea"]
    text = "Alice likes black coffee"
    update = ResolutionWrite(
        "1",
        ResolutionOp.UPDATE,
        new_fact_text=text,
        new_dedup_hash=dedup_hash("chat", "Alice", "likes", "", text),
    )
    await store.apply_run(
        CHAT, "r2", RunWrites(observed_at=T0, cards=[], resolutions=[update]), now=T0
    )
    assert await words(store, "coffee") == [text]
    assert await words(store, "tea") == []


async def test_forget_compaction_keeps_rows_and_texts_aligned(
    store: CardStore, cards_redis: Any, key_prefix: str
) -> None:
    rng = random.Random(5)
    cards = [chat_card(f"card {i} keeps item{i} in a box", seed=i) for i in range(30)]
    await apply(store, "r1", *cards)
    assert await words(store, "item7") == ["card 7 keeps item7 in a box"]
    keys = Keys(key_prefix)
    gone = sorted(rng.sample([str(i) for i in range(1, 31)], 10))
    raws = await cards_redis.hmget(keys.chat(CHAT, "cards"), gone)
    await CardForget(cards_redis, keys, chunk=4).forget_user(
        CHAT, 0, UserPlan(cards=[StoredCard.from_json(r) for r in raws])
    )
    for i in range(30):
        found = await words(store, f"item{i}", k=1)
        expected = [] if str(i + 1) in gone else [f"card {i} keeps item{i} in a box"]
        assert found == expected, i
    assert cached_rows(store) == (20, 20)


@dataclasses.dataclass
class _Model:
    model: str

    async def __call__(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> Vectors:
        return Vectors([vec(len(t)) for t in texts], model=self.model)


async def test_a_reembedding_switch_rebuilds_the_index(
    store: CardStore, settings: Settings, key_prefix: str
) -> None:
    writes = RunWrites(
        observed_at=T0,
        cards=[chat_card("Alice likes tea", seed=1), chat_card("Bob likes jazz", seed=2)],
        embedding_model="old",
    )
    await store.apply_run(CHAT, "r1", writes, now=T0)
    assert await words(store, "jazz", model="old") == ["Bob likes jazz"]
    before = store._cache.get(CHAT)
    fast = settings.model_copy(update={"reembed_pause_seconds": 0.0})
    reembed = Reembedder(
        store,
        _Model("new"),
        Target("new", DIM),
        fast,
        progress_key=Keys(key_prefix).reembed_progress,
    )
    assert (await reembed.chat(CHAT)).state == "switched"
    assert await words(store, "jazz", model="old") == []  # the old space is gone
    assert await words(store, "jazz", model="new") == ["Bob likes jazz"]
    assert store._cache.get(CHAT) is not before  # rebuilt whole, the index with it
    assert cached_rows(store) == (2, 2)


async def test_since_until_is_exact_even_for_a_card_observed_again(store: CardStore) -> None:
    await apply(
        store,
        "r1",
        chat_card("Maria went to Lisbon", seed=1, at=T0),
        chat_card("Maria went to Kyoto", seed=2, at=T0 + 60 * DAY),
    )
    may = Window(T0 + 50 * DAY, T0 + 70 * DAY)
    now = T0 + 90 * DAY
    assert await words(store, "Maria went", window=may, now=now) == ["Maria went to Kyoto"]
    # Lisbon said again inside the window: its row is unchanged, its span grew
    await apply(store, "r2", chat_card("Maria went to Lisbon", seed=1, at=T0 + 55 * DAY))
    found = await words(store, "Maria went", window=may, now=now)
    assert sorted(found) == ["Maria went to Kyoto", "Maria went to Lisbon"]
    assert await words(store, "Maria", window=Window(None, T0 - DAY), now=now) == []
    hits = await store.search(CHAT, "Maria", vec(1), 5, window=Window(T0 + DAY, None), now=now)
    assert {h.card.fact_text for h in hits} == {"Maria went to Kyoto", "Maria went to Lisbon"}


async def test_a_narrow_window_widens_the_read_until_it_has_k(store: CardStore) -> None:
    cards = [chat_card(f"note {i} about tea", seed=i, at=T0 + i * DAY) for i in range(60)]
    await apply(store, "r1", *cards)
    window = Window(T0 + 3 * DAY, T0 + 5 * DAY)
    found = await words(store, "tea", k=5, window=window, now=T0 + 90 * DAY)
    assert sorted(found) == ["note 3 about tea", "note 4 about tea"]


async def test_concurrent_searches_of_a_cold_chat_index_each_row_once(store: CardStore) -> None:
    await apply(store, "r1", *[chat_card(f"fact {i} item{i}", seed=i) for i in range(50)])
    fresh = CardStore(store.redis, store._keys)
    results = await asyncio.gather(*(words(fresh, f"item{i}", k=1) for i in range(8)))
    assert results == [[f"fact {i} item{i}"] for i in range(8)]
    assert cached_rows(fresh) == (50, 50)


async def test_scopes_limit_both_rankings(store: CardStore) -> None:
    await apply(
        store,
        "r1",
        new("Alice is allergic to peanuts", seed=1),  # Alice's user card
        chat_card("Bob is allergic to cats", seed=2),
    )
    chat_only = await store.search(CHAT, "allergic", None, 5, scope_keys=["chat"], now=T0)
    assert [h.card.fact_text for h in chat_only] == ["Bob is allergic to cats"]
    hybrid = await store.search(CHAT, "allergic", vec(1), 5, scope_keys=["chat"], now=T0)
    assert [h.card.fact_text for h in hybrid] == ["Bob is allergic to cats"]


@pytest.mark.parametrize("k", [0, -1])
async def test_nothing_to_find(store: CardStore, k: int) -> None:
    assert await store.search(CHAT, "tea", vec(1), k) == []
    assert await store.search(CHAT, "tea", vec(1), 3) == []  # no card yet
    await apply(store, "r1", chat_card("Alice likes tea", seed=1), embedding_model="m")
    assert await store.search(CHAT, "tea", [1.0, 2.0], 3, now=T0) == []  # another dimension
    assert await store.search(CHAT, "tea", vec(1), 3, now=T0, model="other") == []


async def test_a_failed_text_read_leaves_the_index_whole_for_the_next_search(
    store: CardStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await apply(store, "r1", *[chat_card(f"fact {i} item{i}", seed=i) for i in range(10)])
    await store.similar_cards(CHAT, vec(1), 1)  # the vectors are cached, the texts not yet
    real = store.redis.hmget
    calls = 0

    async def failing(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RedisConnectionError("connection reset while reading the texts")
        return await real(*args, **kwargs)  # type: ignore[misc]

    monkeypatch.setattr(store.redis, "hmget", failing)
    with pytest.raises(RedisConnectionError):
        await words(store, "item3")
    assert cached_rows(store) == (10, 0)  # nothing half-indexed
    assert await words(store, "item3") == ["fact 3 item3"]
    assert cached_rows(store) == (10, 10)


async def test_rows_appended_while_a_search_reads_texts_wait_for_the_next_search(
    store: CardStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await apply(store, "r1", *[chat_card(f"fact {i} item{i}", seed=i) for i in range(5)])
    await store.similar_cards(CHAT, vec(1), 1)  # cached vectors, no texts yet
    writer = CardStore(store.redis, store._keys)
    real = store.redis.hmget
    raced = False

    async def racing(*args: Any, **kwargs: Any) -> Any:
        nonlocal raced
        if not raced:  # another run lands and a concurrent search refreshes the same matrix
            raced = True
            await writer.apply_run(
                CHAT, "r2", RunWrites(observed_at=T0, cards=[chat_card("late item9")]), now=T0
            )
            await store.similar_cards(CHAT, vec(1), 1)
        return await real(*args, **kwargs)  # type: ignore[misc]

    monkeypatch.setattr(store.redis, "hmget", racing)
    for embedding in (vec(3), None):
        hits = await store.search(CHAT, "item3 item9", embedding, 3, now=T0)
        assert hits[0].card.fact_text == "fact 3 item3"
    assert cached_rows(store) == (6, 6)
    assert "late item9" in await words(store, "item9")
