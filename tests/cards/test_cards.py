"""The card store against a real server: one atomic, idempotent script per run; the read API."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from memory_worker.cards import (
    CardStatus,
    CardStore,
    EpisodeWrite,
    FoldGroup,
    LinkWrite,
    ResolutionOp,
    ResolutionWrite,
    Scope,
    dedup_hash,
    quantize,
    visible_scope_keys,
)
from memory_worker.keys import Keys
from tests.support.cards import ALICE, BIG_USER, BOB, CHAT, DIM, T0, apply, new, vec, writes
from tests.support.cards import store as store  # the fixture
from tests.support.dumps import dump_chat
from tests.support.logs import capture_logs


def update(
    card_id: str, text: str, *, user: int = ALICE, predicate: str = "likes", **more: Any
) -> ResolutionWrite:
    """An UPDATE of ``user``'s card ``card_id`` ("Alice <predicate>") to ``text``, with its new hash."""
    digest = dedup_hash(f"user:{user}", "Alice", predicate, "", text)
    return ResolutionWrite(
        card_id, ResolutionOp.UPDATE, new_fact_text=text, new_dedup_hash=digest, **more
    )


async def test_insert_then_repeat_raises_observations(store: CardStore) -> None:
    first = await apply(store, "r1", new("Alice likes tea.", conf=0.6))
    assert (first.applied, first.inserted, first.card_ids) == (True, 1, ("1",))
    later = T0 + timedelta(days=3)
    repeat = new(
        "  alice LIKES tea ", conf=0.9, at=later, sources=(7, 1), expires=later + timedelta(days=2)
    )
    second = await store.apply_run(CHAT, "r2", writes(repeat), now=later)
    assert (second.inserted, second.observed, second.card_ids) == (0, 1, ("1",))
    (card,) = await store.all_cards(CHAT)
    assert card.fact_text == "Alice likes tea."
    assert card.observation_count == 2
    assert card.confidence == pytest.approx(0.9)
    assert (card.valid_from, card.observed_at) == (T0, later)
    assert card.source_message_ids == [1, 7]
    assert card.expires_at is None, "the durable observation wins"
    assert card.first_run_id == "r1"


async def test_rerun_of_an_applied_run_changes_no_byte(store: CardStore) -> None:
    plan = writes(
        new("Alice likes tea."),
        new("Bob is vegetarian.", subject="Bob", predicate="diet", user=BOB, seed=2),
        links=[LinkWrite(0, 1, "same_topic", 0.5)],
        episode=EpisodeWrite("Food talk.", ["food"], ["Alice"], T0, T0, 0, 2, vec(3)),
    )
    assert (await store.apply_run(CHAT, "run-x", plan, now=T0)).applied
    before = await dump_chat(store, CHAT)
    again = await store.apply_run(CHAT, "run-x", plan, now=T0 + timedelta(hours=1))
    assert not again.applied
    assert await dump_chat(store, CHAT) == before
    assert await store.has_applied(CHAT, "run-x")


async def test_concurrent_runs_of_one_chat_never_duplicate(
    cards_url: str, key_prefix: str, open_client: Callable[[str], Any]
) -> None:
    clients = [open_client(cards_url) for _ in range(4)]
    stores = [CardStore(c, Keys(key_prefix)) for c in clients]
    shared = new("Alice likes tea.")
    results = await asyncio.gather(
        *(
            stores[i % 4].apply_run(
                CHAT,
                f"run-{i}",
                writes(shared, new(f"fact {i}", predicate=f"p{i}", seed=i)),
                now=T0,
            )
            for i in range(24)
        )
    )
    assert sum(r.inserted for r in results) == 1 + 24
    cards = await stores[0].all_cards(CHAT)
    tea = [c for c in cards if c.fact_text == "Alice likes tea."]
    assert len(tea) == 1
    assert tea[0].observation_count == 24
    assert len({c.dedup_hash for c in cards}) == len(cards) == 25


async def test_supersede_keeps_the_old_card_with_a_validity_end(store: CardStore) -> None:
    await apply(store, "r1", new("Alice lives in Berlin.", predicate="lives_in"))
    moved = T0 + timedelta(days=90)
    result = await store.apply_run(
        CHAT,
        "r2",
        writes(
            new("Alice lives in Lisbon.", predicate="lives_in", at=moved, seed=5),
            resolutions=[ResolutionWrite("1", ResolutionOp.SUPERSEDE, new_index=0)],
        ),
        now=moved,
    )
    assert result.superseded == 1
    old, current = await store.all_cards(CHAT)
    assert old.status == CardStatus.SUPERSEDED
    assert (old.valid_until, old.superseded_by, old.retracted_at) == (moved, current.id, moved)
    assert current.status == CardStatus.ACTIVE
    assert [c.id for c in await store.visible_cards(CHAT, user_id=ALICE, now=moved)] == ["2"]
    everything = await store.visible_cards(CHAT, user_id=ALICE, include_inactive=True)
    assert {c.id for c in everything} == {"1", "2"}
    hits = await store.similar_cards(CHAT, vec(1), 5, now=moved)
    assert [c.id for c, _ in hits] == ["2"], "superseded cards leave the vector search"
    # the old fact stated again later is a new card, not a resurrection
    back = T0 + timedelta(days=200)
    again = await store.apply_run(
        CHAT, "r3", writes(new("Alice lives in Berlin.", predicate="lives_in", at=back)), now=back
    )
    assert again.inserted == 1


async def test_competing_cards_share_a_conflict_group(store: CardStore) -> None:
    await apply(store, "r1", new("Deploys are on Tuesday.", scope=Scope.CHAT))
    await apply(
        store,
        "r2",
        new("Deploys are on Wednesday.", scope=Scope.CHAT, seed=4),
        resolutions=[ResolutionWrite("1", ResolutionOp.COMPETING, new_index=0)],
    )
    cards = await store.visible_cards(CHAT, now=T0)
    assert {c.status for c in cards} == {CardStatus.COMPETING}
    assert {c.conflict_group for c in cards} == {"1"}


async def test_update_rewrites_text_and_moves_the_dedup_key(store: CardStore) -> None:
    await apply(store, "r1", new("Bob works at a bank.", user=BOB))
    text = "Bob works at Nordea in the risk team."
    rewrite = update("1", text, user=BOB, embedding=vec(9))
    result = await apply(store, "r2", resolutions=[rewrite])
    assert result.rewritten == 1
    (card,) = await store.all_cards(CHAT)
    assert (card.id, card.fact_text, card.dedup_hash, card.observation_count) == (
        "1",
        text,
        dedup_hash(f"user:{BOB}", "Alice", "likes", "", text),
        2,
    )
    same = await apply(store, "r3", new(text, user=BOB))
    assert (same.inserted, same.observed) == (0, 1)
    old_text = await apply(store, "r4", new("Bob works at a bank.", user=BOB))
    assert old_text.inserted == 1


async def test_update_onto_an_existing_text_folds_into_its_holder(store: CardStore) -> None:
    await apply(store, "r1", new("Alice likes tea."), new("Alice likes green tea.", seed=2))
    await apply(store, "r2", resolutions=[update("1", "Alice likes green tea.")])
    first, second = await store.all_cards(CHAT)
    assert (first.status, first.merged_into) == (CardStatus.MERGED, "2")
    assert second.observation_count == 3


async def test_merge_reinforce_demote_and_skips(store: CardStore) -> None:
    await apply(
        store,
        "r1",
        new("Kate plays guitar.", sources=(1,), conf=0.9),
        new("Kate is in The Lemons.", predicate="member_of", sources=(2,), seed=2, conf=0.6),
        new(
            "Kate drinks tea.",
            predicate="drinks",
            seed=3,
            conf=0.95,
            expires=T0 + timedelta(days=2),
        ),
        new("Kate is 30.", predicate="age", seed=4, conf=0.1),
    )
    result = await apply(
        store,
        "r2",
        resolutions=[
            ResolutionWrite("1", ResolutionOp.MERGE, into_card_id="2"),
            ResolutionWrite("3", ResolutionOp.REINFORCE),
            ResolutionWrite("4", ResolutionOp.DEMOTE),
            ResolutionWrite("1", ResolutionOp.REINFORCE),  # merged away by now: skipped
            ResolutionWrite("99", ResolutionOp.DEMOTE),  # unknown: skipped
        ],
    )
    assert (result.merged, result.reinforced, result.demoted, result.skipped) == (1, 1, 1, 2)
    merged, survivor, tea, age = await store.all_cards(CHAT)
    assert (merged.status, merged.merged_into) == (CardStatus.MERGED, "2")
    assert survivor.observation_count == 2
    assert survivor.confidence == pytest.approx(0.9)
    assert survivor.source_message_ids == [1, 2]
    assert tea.confidence == pytest.approx(1.0)
    assert tea.observation_count == 2
    assert tea.expires_at is None, "a reinforced card no longer expires"
    assert age.confidence == pytest.approx(0.0)


async def test_links_and_episodes(store: CardStore) -> None:
    await apply(
        store,
        "r1",
        new("A.", predicate="a"),
        new("B.", predicate="b", seed=2),
        links=[LinkWrite(0, 1, "supports", 0.8), LinkWrite(0, 0, "supports", 0.8)],
        episode=EpisodeWrite(
            "Summary.", ["x", "y"], ["Alice"], T0, T0 + timedelta(hours=1), 0, 4, vec(7)
        ),
    )
    links = await store.links(CHAT)
    assert [(lk.from_card_id, lk.relation, lk.to_card_id, lk.confidence) for lk in links] == [
        ("1", "supports", "2", 0.8)
    ]
    (episode,) = await store.episodes(CHAT)
    assert (episode.run_id, episode.summary, episode.topics, episode.card_ids) == (
        "r1",
        "Summary.",
        ["x", "y"],
        ["1", "2"],
    )
    assert episode.has_embedding
    assert episode.message_count == 4


async def test_visibility_by_scope(store: CardStore) -> None:
    await apply(
        store,
        "r1",
        new("chat fact", scope=Scope.CHAT, predicate="c"),
        new("thread 7 fact", scope=Scope.THREAD, thread=7, predicate="t7"),
        new("thread 8 fact", scope=Scope.THREAD, thread=8, predicate="t8"),
        new("alice fact", predicate="ua"),
        new("bob fact", user=BOB, predicate="ub"),
        new("big user fact", user=BIG_USER, predicate="big"),
        new("stale", scope=Scope.CHAT, predicate="s", expires=T0 + timedelta(days=1)),
    )

    async def facts(thread: int, user: int | None, at: datetime = T0) -> set[str]:
        return {c.fact_text for c in await store.visible_cards(CHAT, thread, user, now=at)}

    assert await facts(0, None) == {"chat fact", "stale"}
    assert await facts(7, None) == {"chat fact", "stale", "thread 7 fact"}
    assert await facts(0, ALICE) == {"chat fact", "stale", "alice fact"}
    assert await facts(8, BOB) == {"chat fact", "stale", "thread 8 fact", "bob fact"}
    assert await facts(0, BIG_USER) == {"chat fact", "stale", "big user fact"}
    assert await facts(0, None, T0 + timedelta(days=2)) == {"chat fact"}, "past TTL is hidden"
    assert visible_scope_keys(7, ALICE) == {"chat", "thread:7", f"user:{ALICE}"}


async def test_similar_cards_rank_by_cosine_and_follow_writes(store: CardStore) -> None:
    cards = [new(f"fact {i}", predicate=f"p{i}", seed=100 + i) for i in range(40)]
    cards.append(new("thread fact", scope=Scope.THREAD, thread=3, predicate="t", seed=999))
    await apply(store, "r1", *cards)
    query = vec(105)
    hits = await store.similar_cards(CHAT, query, 5, now=T0)
    assert hits[0][0].fact_text == "fact 5"
    assert hits[0][1] == pytest.approx(1.0, abs=0.01)
    matrix = np.array([vec(100 + i) for i in range(40)])
    exact = matrix @ np.array(query) / np.linalg.norm(matrix, axis=1) / np.linalg.norm(query)
    for card, score in hits:
        assert score == pytest.approx(exact[int(card.id) - 1], abs=0.02)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert await store.similar_cards(CHAT, vec(999), 1, thread_id=0, now=T0) == []  # no chat cards
    assert await store.similar_cards(CHAT, vec(999), 1, user_id=ALICE, now=T0) != []
    only_thread = await store.similar_cards(CHAT, vec(999), 3, scope_keys=["thread:3"], now=T0)
    assert [c.fact_text for c, _ in only_thread] == ["thread fact"]
    none = await store.similar_cards(CHAT, vec(999), 3, thread_id=0, user_id=BOB, now=T0)
    assert "thread fact" not in {c.fact_text for c, _ in none}
    # a write bumps the version: the cached matrix is not served stale
    await apply(
        store,
        "r2",
        new("replacement", predicate="p5", seed=5),
        resolutions=[ResolutionWrite("6", ResolutionOp.SUPERSEDE, new_index=0)],
    )
    after = await store.similar_cards(CHAT, query, 5, now=T0)
    assert "fact 5" not in {c.fact_text for c, _ in after}
    assert await store.similar_cards(CHAT, [0.0] * DIM, 3, now=T0) == []
    assert await store.similar_cards(CHAT, [1.0] * (DIM + 1), 3, now=T0) == []


async def test_expiry_and_folds(store: CardStore) -> None:
    await apply(
        store,
        "r1",
        new("sick today", predicate="status", expires=T0 + timedelta(days=2)),
        new("A is here.", predicate="x1", seed=2, sources=(1,)),
        new("A is here", predicate="x2", seed=3, sources=(2,)),
        new("durable", predicate="d", seed=4),
    )
    assert await store.expire(CHAT, now=T0 + timedelta(days=1)) == 0
    assert await store.expire(CHAT, now=T0 + timedelta(days=3)) == 1
    sick = await store.get_card(CHAT, "1")
    assert sick is not None
    assert sick.status == CardStatus.EXPIRED
    assert await store.similar_cards(CHAT, vec(1), 4, now=T0)
    assert all(c.id != "1" for c, _ in await store.similar_cards(CHAT, vec(1), 4, now=T0))
    folded = await store.fold_groups(
        CHAT,
        [
            FoldGroup(survivor_id="2", absorbed_ids=["3", "1"]),
            FoldGroup(survivor_id=None, demote_ids=["4"], stamp_ids=["2", "3", "4"]),
        ],
        now=T0,
        demote_delta=0.2,
    )
    assert (folded.folded, folded.demoted, folded.stamped) == (1, 1, 3)
    survivor = await store.get_card(CHAT, "2")
    assert survivor is not None
    assert (survivor.observation_count, survivor.source_message_ids) == (2, [1, 2])
    assert survivor.last_merge_at == T0
    durable = await store.get_card(CHAT, "4")
    assert durable is not None
    assert durable.confidence == pytest.approx(0.5)


async def test_every_key_of_a_chat_carries_its_hash_tag(store: CardStore, key_prefix: str) -> None:
    await apply(
        store,
        "r1",
        new("x", expires=T0 + timedelta(days=1)),
        episode=EpisodeWrite("s", [], [], T0, T0, 0, 1, vec(1)),
    )
    keys = await store.chat_keys(CHAT)
    tag = "{" + f"{key_prefix}chat:{CHAT}" + "}"
    assert len(keys) >= 10
    assert all(k.startswith(tag + ":") for k in keys)
    assert await store.chat_ids() == [CHAT]


async def test_searchable_vectors_answer_only_for_a_live_vector_of_the_scopes_asked(
    store: CardStore,
) -> None:
    """What the related-card lookup asks before it embeds a query (None: nothing to find)."""
    assert await store.searchable_vectors(CHAT, ["chat", f"user:{ALICE}"]) is None  # no chat yet
    await apply(
        store,
        "r1",
        new("no vector", predicate="n", seed=None),
        new("sick today", predicate="s", expires=T0 + timedelta(days=1)),
    )
    found = await store.searchable_vectors(CHAT, ["chat", f"user:{ALICE}"])
    assert found is not None
    assert [
        c.fact_text for c, _ in await store.similar_cards(CHAT, vec(1), 2, now=T0, matrix=found)
    ] == ["sick today"]
    assert await store.searchable_vectors(CHAT, ["chat", f"user:{BOB}"]) is None  # other scopes
    assert await store.expire(CHAT, now=T0 + timedelta(days=2)) == 1
    assert await store.searchable_vectors(CHAT, ["chat", f"user:{ALICE}"]) is None  # not live


async def test_a_write_whose_chat_listing_failed_raises_and_its_retry_lists_the_chat(
    store: CardStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweeps' SADD goes out beside the write script: a failed SADD raises even though
    the script landed, so the caller's retry lists the chat (and finds the run applied)."""

    async def refused(*args: Any) -> int:
        raise RedisConnectionError("chats set unreachable")

    monkeypatch.setattr(store.redis, "sadd", refused)
    with pytest.raises(RedisConnectionError):
        await apply(store, "r1", new("x"))
    monkeypatch.undo()
    assert len(await store.all_cards(CHAT)) == 1  # the script landed meanwhile
    assert await store.chat_ids() == []
    again = await apply(store, "r1", new("x"))
    assert not again.applied
    assert await store.chat_ids() == [CHAT]


async def test_large_ids_keep_every_digit(store: CardStore) -> None:
    await apply(store, "r1", new("big", user=BIG_USER, sources=(2**53 - 1,)))
    (card,) = await store.all_cards(CHAT)
    assert card.user_id == BIG_USER
    assert card.source_message_ids == [2**53 - 1]


async def test_logs_carry_ids_not_text(store: CardStore) -> None:
    secret_text = "Alice's very private fact"
    with capture_logs() as logs:
        await apply(store, "r1", new(secret_text))
        await apply(store, "r1", new(secret_text))
    assert logs
    assert secret_text not in repr(logs)


def test_quantize_keeps_direction() -> None:
    v = np.random.default_rng(3).normal(size=512)
    q = np.frombuffer(quantize(v.tolist()), dtype=np.int8).astype(float)
    cosine = float(q @ v / np.linalg.norm(q) / np.linalg.norm(v))
    assert cosine > 0.999
    assert quantize([0.0, 0.0]) == b"\x00\x00"
    assert len(quantize(v.tolist())) == 512


def test_dedup_hash_is_scope_and_wording_sensitive() -> None:
    base = dedup_hash("chat", "Alice", "likes", "tea", "Alice likes tea.")
    assert dedup_hash("chat", " alice ", "LIKES", "Tea", "alice likes tea") == base
    assert dedup_hash("user:1", "Alice", "likes", "tea", "Alice likes tea.") != base
    assert dedup_hash("chat", "Alice", "likes", "tea", "Alice likes green tea.") != base
    card = new("x")
    assert dataclasses.replace(card, fact_text="X!").dedup_hash == card.dedup_hash


async def test_the_cached_matrix_follows_appends_status_changes_and_rewrites(
    cards_redis: Any, key_prefix: str
) -> None:
    redis = cards_redis
    reader, writer = CardStore(redis, Keys(key_prefix)), CardStore(redis, Keys(key_prefix))
    queries = [vec(500 + i) for i in range(6)]

    async def same_as_a_fresh_reader() -> None:
        fresh = CardStore(redis, Keys(key_prefix))
        for query in queries:
            cached = await reader.similar_cards(CHAT, query, 8, now=T0)
            exact = await fresh.similar_cards(CHAT, query, 8, now=T0)
            assert [(c.id, round(s, 5)) for c, s in cached] == [
                (c.id, round(s, 5)) for c, s in exact
            ]

    await apply(writer, "r1", *(new(f"f{i}", predicate=f"p{i}", seed=i) for i in range(30)))
    await same_as_a_fresh_reader()
    await apply(  # appends and a status change
        writer,
        "r2",
        *(new(f"g{i}", predicate=f"q{i}", seed=100 + i) for i in range(300)),
        resolutions=[ResolutionWrite("3", ResolutionOp.SUPERSEDE, new_index=0)],
    )
    await same_as_a_fresh_reader()
    rewrite = update("5", "rewritten", predicate="p4", embedding=queries[0])
    await apply(writer, "r3", resolutions=[rewrite])  # a row rewrite invalidates the cached rows
    top = await reader.similar_cards(CHAT, queries[0], 1, now=T0)
    assert [c.fact_text for c, _ in top] == ["rewritten"]
    await same_as_a_fresh_reader()
    results = await asyncio.gather(*(reader.similar_cards(CHAT, q, 5, now=T0) for q in queries * 3))
    assert all(len(r) == 5 for r in results)
