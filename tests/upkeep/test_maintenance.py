"""Maintenance (§10): expiry, exact-duplicate collapse, the merge pass with cooldown and deferral."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from llm_client import MEMORY_MERGE, BackendUnavailable, DecodeError
from memory_worker.cards import (
    Card,
    CardStatus,
    CardStore,
    Durability,
    NewCard,
    RunWrites,
    Scope,
    dedup_hash,
)
from memory_worker.consolidation.extraction import MergeCluster, MergeOutput
from memory_worker.consolidation.validation import Limits
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from memory_worker.upkeep.maintenance import (
    MergeGroup,
    collapse_duplicates,
    duplicate_groups,
    expire_cards,
    merge_groups,
    merge_pass,
    merge_plan,
)
from tests.support.cards import store as store  # the fixture
from tests.support.cards import stored
from tests.support.model_fakes import HashEmbedder, ScriptedExtractor, hash_vector
from tests.support.replies import answer

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
CHAT = 77
DIM = 32
KATE, LEO = 21, 22


def new(
    fact: str,
    predicate: str,
    *,
    subject: str = "Kate",
    user: int = KATE,
    scope: Scope = Scope.USER,
    salience: float = 0.5,
    expires: datetime | None = None,
) -> NewCard:
    return NewCard(
        scope=scope,
        thread_id=0,
        user_id=user if scope == Scope.USER else None,
        card_type="preference",
        subject=subject,
        predicate=predicate,
        object="",
        fact_text=fact,
        confidence=0.7,
        salience=salience,
        durability=Durability.LONG,
        source_message_ids=(1,),
        valid_from=T0,
        observed_at=T0,
        expires_at=expires,
        embedding=hash_vector(fact, DIM),
    )


@pytest.fixture
def settings(redis_url: str, key_prefix: str) -> Settings:
    return Settings(
        redis_url=redis_url, key_prefix=key_prefix, embedding_dimension=DIM, merge_min_cards=3
    )


async def seed(store: CardStore, *cards: NewCard, run_id: str = "seed", chat: int = CHAT) -> None:
    await store.apply_run(chat, run_id, RunWrites(observed_at=T0, cards=list(cards)), now=T0)


KATE_CARDS = (
    new("Kate plays guitar.", "plays", salience=0.4),
    new("Kate plays the guitar.", "plays_instrument", salience=0.7),
    new("Kate is a guitarist in The Lemons.", "member_of", salience=0.6),
    new("Kate is 31 years old.", "age", salience=0.2),
)


async def test_expiry_archives_cards_past_their_ttl_in_every_chat(store: CardStore) -> None:
    await seed(store, new("short one", "s", expires=T0 + timedelta(days=2)), new("kept", "k"))
    await seed(store, new("other chat", "o", expires=T0 + timedelta(days=1)), chat=CHAT + 1)
    assert await expire_cards(store, now=T0 + timedelta(days=1, hours=1)) == 1
    assert await expire_cards(store, now=T0 + timedelta(days=3), batch=1) == 1
    cards = await store.all_cards(CHAT)
    assert [c.status for c in cards] == [CardStatus.EXPIRED, CardStatus.ACTIVE]
    assert cards[0].retracted_at == T0 + timedelta(days=3)
    assert await expire_cards(store, now=T0 + timedelta(days=30)) == 0


def x_card(card_id: str, fact: str, **fields: Any) -> Card:
    """A stored card of this suite's chat: type "x", half confidence, no sources, all at T0."""
    return stored(card_id, fact, chat=CHAT, card_type="x", conf=0.5, at=T0, sources=(), **fields)


def test_duplicate_groups_are_per_scope_and_text() -> None:
    def card(card_id: str, fact: str, sk_user: int | None, status: str = "active") -> Card:
        return x_card(
            card_id, fact, user=sk_user, subject="s", predicate=card_id, status=CardStatus(status)
        )

    groups = duplicate_groups(
        [
            card("3", "Kate plays guitar.", KATE),
            card("1", "kate plays guitar", KATE),
            card("2", "Kate plays guitar.", LEO),
            card("4", "Kate plays guitar!", KATE, status="superseded"),
            card("5", "Kate plays guitar", None),
        ]
    )
    assert [(g.survivor_id, list(g.absorbed_ids)) for g in groups] == [("1", ["3"])]


async def test_collapse_folds_exact_duplicates_into_the_oldest(store: CardStore) -> None:
    await seed(
        store,
        new("Kate plays guitar.", "plays"),
        new("kate plays guitar", "guitar"),
        new("Kate plays guitar.", "plays", user=LEO, subject="Leo"),
    )
    assert await collapse_duplicates(store, now=T0) == 1
    first, second, leo = await store.all_cards(CHAT)
    assert (first.status, first.observation_count) == (CardStatus.ACTIVE, 2)
    assert (second.status, second.merged_into) == (CardStatus.MERGED, "1")
    assert leo.status == CardStatus.ACTIVE
    assert await collapse_duplicates(store, now=T0) == 0


def test_merge_groups_need_enough_unreviewed_active_cards() -> None:
    def card(
        card_id: str, subject: str, reviewed: datetime | None = None, status: str = "active"
    ) -> Card:
        return x_card(
            card_id,
            card_id,
            user=KATE,
            subject=subject,
            predicate=card_id,
            salience=int(card_id) / 10,
            status=CardStatus(status),
            last_merge_at=reviewed,
        )

    cards = [
        card("1", "Kate"),
        card("2", "kate "),
        card("3", "KATE", reviewed=T0 - timedelta(hours=1)),
        card("4", "Kate", status="competing"),
        card("5", "Leo"),
        card("6", "Leo"),
        card("7", "Leo"),
        card("8", ""),
        card("9", ""),
        card("10", ""),
    ]
    groups = merge_groups(CHAT, cards, now=T0, min_cards=3, cooldown=timedelta(hours=72))
    assert [(g.subject, [c.id for c in g.cards]) for g in groups] == [("Leo", ["7", "6", "5"])]
    later = merge_groups(
        CHAT, cards, now=T0 + timedelta(days=4), min_cards=3, cooldown=timedelta(hours=72)
    )
    assert sorted(g.subject for g in later) == ["Kate", "Leo"]
    kate = next(g for g in later if g.subject == "Kate")
    assert [c.id for c in kate.cards] == ["2", "1", "3"], "never reviewed first, then salience"


def test_merge_plan_validates_the_answer() -> None:
    def card(card_id: str) -> Card:
        return x_card(
            card_id, f"fact {card_id}", user=KATE, subject="Kate", predicate=f"p{card_id}"
        )

    group = MergeGroup(CHAT, f"user:{KATE}", "Kate", tuple(card(str(i)) for i in range(1, 6)))
    output = MergeOutput(
        clusters=(
            MergeCluster(survivor_id="1", absorbed_ids=["2", "2", "99"], merged_fact_text="merged"),
            MergeCluster(survivor_id="2", absorbed_ids=["3"], merged_fact_text="again 2"),
            MergeCluster(survivor_id="3", absorbed_ids=["4"], merged_fact_text=""),
            MergeCluster(survivor_id="3", absorbed_ids=["4"], merged_fact_text="password: hunter2"),
            MergeCluster(survivor_id="77", absorbed_ids=["4"], merged_fact_text="x"),
        ),
        demote_ids=("5", "1", "404"),
    )
    folds, rejected = merge_plan(group, output, Limits())
    assert rejected == 5
    first, last = folds
    assert (first.survivor_id, list(first.absorbed_ids), first.new_fact_text) == (
        "1",
        ["2"],
        "merged",
    )
    assert first.new_dedup_hash == dedup_hash(f"user:{KATE}", "Kate", "p1", "", "merged")
    assert list(last.demote_ids) == ["5"]
    assert sorted(last.stamp_ids) == ["1", "2", "3", "4", "5"]


def merge_answer(
    survivor: str, absorbed: list[str], text: str, demote: list[str]
) -> dict[str, Any]:
    return {
        "clusters": [{"survivor_id": survivor, "absorbed_ids": absorbed, "merged_fact_text": text}],
        "demote_ids": demote,
        "keep_ids": [],
    }


async def test_merge_pass_folds_rewrites_demotes_and_respects_the_cooldown(
    store: CardStore, settings: Settings
) -> None:
    await seed(store, *KATE_CARDS, new("Leo likes jazz.", "likes", subject="Leo", user=LEO))
    merger = ScriptedExtractor(
        [merge_answer("2", ["1", "3"], "Kate plays the guitar in The Lemons.", ["4"])]
    )
    embedder = HashEmbedder(DIM)
    result = await merge_pass(store, merger, embedder=embedder, settings=settings, now=T0)
    assert (result.groups_merged, result.folded, result.rewritten, result.demoted) == (1, 2, 1, 1)
    assert merger.workflows == [MEMORY_MERGE]
    payload = merger.payloads[0]
    assert payload["task"] == "memory_merge"
    assert [c["id"] for c in payload["cards"]] == ["2", "3", "1", "4"]
    assert embedder.calls == [["Kate plays the guitar in The Lemons."]]
    cards = {c.id: c for c in await store.all_cards(CHAT)}
    assert cards["2"].fact_text == "Kate plays the guitar in The Lemons."
    assert cards["2"].observation_count == 3
    assert cards["2"].has_embedding
    assert cards["1"].status == cards["3"].status == CardStatus.MERGED
    assert cards["4"].confidence == pytest.approx(0.5)
    assert cards["5"].last_merge_at is None, "another user's card is never in Kate's group"
    again = await merge_pass(
        store,
        ScriptedExtractor([]),
        embedder=embedder,
        settings=settings,
        now=T0 + timedelta(hours=1),
    )
    assert again.groups_due == 0


async def test_a_failing_group_is_stamped_not_retried_every_tick(
    store: CardStore, settings: Settings
) -> None:
    await seed(store, *KATE_CARDS)
    merger = ScriptedExtractor([{"raw": "I cannot merge these."}])
    result = await merge_pass(store, merger, embedder=None, settings=settings, now=T0)
    assert (result.groups_failed, result.failures) == (1, {DecodeError.__name__: 1})
    assert all(c.last_merge_at == T0 for c in await store.all_cards(CHAT))
    assert all(c.status == CardStatus.ACTIVE for c in await store.all_cards(CHAT))
    later = await merge_pass(
        store, ScriptedExtractor([]), embedder=None, settings=settings, now=T0 + timedelta(hours=2)
    )
    assert later.groups_due == 0


async def test_an_outage_defers_the_pass_without_stamping(
    store: CardStore, settings: Settings
) -> None:
    await seed(store, *KATE_CARDS)
    await seed(
        store,
        *(new(f"Leo fact {i}.", f"p{i}", subject="Leo", user=LEO) for i in range(3)),
        run_id="seed-leo",
    )
    merger = ScriptedExtractor([BackendUnavailable("UPSTREAM_ERROR: down")])
    result = await merge_pass(store, merger, embedder=None, settings=settings, now=T0)
    assert result.deferred
    assert len(merger.payloads) == 1, "one call per tick during an outage"
    assert all(c.last_merge_at is None for c in await store.all_cards(CHAT))
    healed = ScriptedExtractor(
        [
            merge_answer("2", ["1"], "Kate plays guitar.", []),
            merge_answer("5", ["6"], "Leo fact.", []),
        ]
    )
    result = await merge_pass(store, healed, embedder=None, settings=settings, now=T0)
    assert (result.groups_merged, result.deferred) == (2, False)


# --- bounded growth (fault-matrix row 23) ----------------------------------------------------------


async def test_bound_growth_applies_every_retention(
    store: CardStore, redis: Any, settings: Settings
) -> None:
    from memory_worker.runs import RunStore
    from memory_worker.runs.policy import plan_failure
    from memory_worker.upkeep.maintenance import bound_growth
    from memory_worker.wiring import replay_store
    from tests.support.factories import make_request

    s = settings.model_copy(update={"max_attempts": 1})
    runs = RunStore(redis, s)
    keys = Keys(s.key_prefix)
    t0 = int(T0.timestamp() * 1000)
    day = 86_400_000
    # a completed run, a retired run
    done = (await runs.enqueue(make_request(1), at_ms=t0)).run_id
    gone = (await runs.enqueue(make_request(2), at_ms=t0)).run_id
    first = await runs.claim("w", at_ms=t0)
    second = await runs.claim("w", at_ms=t0)
    assert first is not None
    assert second is not None
    by_id = {first.id: first, second.id: second}
    await runs.complete(by_id[done or ""], {}, at_ms=t0)
    plan = plan_failure(1, max_attempts=1, unit=60, max_units=60, now_ms=t0)
    await runs.fail(by_id[gone or ""], plan, code="X", reason=None, message="x", at_ms=t0)
    # an applied run in a chat's record, a live and a dead worker
    await seed(store, new("Kate plays guitar.", "plays"), run_id=done or "")
    await redis.zadd(keys.workers, {"dead": t0 - 3_600_000, "alive": t0 + 20 * day + 60_000})
    await redis.hset(keys.worker_concurrency, mapping={"dead": "2", "alive": "2"})
    await redis.hset(keys.worker_runs, mapping={"dead": "r-dead", "alive": "r-alive"})

    # day 20: completed run pruned (its key still a duplicate), messages of the retired
    # one kept (30 days), applied record kept (30 days), dead worker gone
    now = datetime.fromtimestamp((t0 + 20 * day) / 1000, tz=UTC)
    first_pass = await bound_growth(replay_store(redis, s, runs), store, s, now=now)
    assert first_pass.store.runs == 1
    assert first_pass.store.workers == 1
    assert await redis.zrange(keys.workers, 0, -1) == [b"alive"]
    assert await redis.hkeys(keys.worker_concurrency) == [b"alive"]
    listed = await redis.hkeys(keys.worker_runs)  # the dead one's listed runs go too
    assert b"dead" not in listed
    assert b"alive" in listed
    assert (await runs.enqueue(make_request(1), at_ms=t0 + 20 * day)).status.value == "duplicate"
    assert await redis.hexists(keys.run(gone or ""), "messages")
    assert await store.has_applied(CHAT, done or "")

    # day 31: the retired run keeps its record and error log but not its messages
    now = datetime.fromtimestamp((t0 + 31 * day) / 1000, tz=UTC)
    second_pass = await bound_growth(replay_store(redis, s, runs), store, s, now=now)
    assert second_pass.store.retired_messages == 1
    assert second_pass.applied_runs == 1
    assert not await store.has_applied(CHAT, done or "")
    retired = await runs.get(gone or "")
    assert retired.retired
    assert [e.code for e in retired.error_log] == ["X"]
    assert not await redis.hexists(keys.run(gone or ""), "messages")
    assert (
        await bound_growth(replay_store(redis, s, runs), store, s, now=now)
    ).store.retired_messages == 0

    # day 91: the natural key of the pruned run is forgotten; the slice is new again
    now = datetime.fromtimestamp((t0 + 91 * day) / 1000, tz=UTC)
    assert (
        await bound_growth(replay_store(redis, s, runs), store, s, now=now)
    ).store.natural_keys == 1
    again = await runs.enqueue(make_request(1), at_ms=t0 + 91 * day)
    assert again.status.value == "enqueued"
    # and the new run's key is not dropped by the old tombstone
    assert (
        await bound_growth(replay_store(redis, s, runs), store, s, now=now)
    ).store.natural_keys == 0
    assert (
        await redis.hget(keys.natural_keys, make_request(1).natural_key(""))
        == (again.run_id or "").encode()
    )


async def test_applied_runs_written_as_a_set_are_migrated(store: CardStore) -> None:
    redis = store.redis
    key = store.key(CHAT, "runs")
    await answer(redis.sadd(key, "old-run"))
    assert await store.has_applied(CHAT, "old-run")
    await seed(store, new("Kate plays guitar.", "plays"), run_id="new-run")
    assert await redis.type(key) == b"zset"
    assert await store.has_applied(CHAT, "old-run")
    assert await store.has_applied(CHAT, "new-run")
    replay = await store.apply_run(
        CHAT, "old-run", RunWrites(observed_at=T0, cards=[new("x", "y")]), now=T0
    )
    assert not replay.applied


async def test_bound_growth_backfills_the_chat_index_a_pass_at_a_time(
    store: CardStore, redis: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_worker.runs import RunStore, chat_index
    from memory_worker.runs.forget import RunForget
    from memory_worker.upkeep.maintenance import bound_growth
    from memory_worker.wiring import replay_store
    from tests.support.factories import make_request

    s = settings.model_copy(update={"chat_index_backfill_runs": 2})
    runs = RunStore(redis, s)
    keys = Keys(s.key_prefix)
    t0 = int(T0.timestamp() * 1000)
    ids = [(await runs.enqueue(make_request(1, hour=i), at_ms=t0 + i)).run_id for i in range(5)]
    await redis.delete(keys.chat_runs(1))  # written before the index existed
    monkeypatch.setattr(chat_index, "_PAGE", 2)
    now = datetime.fromtimestamp(t0 / 1000, tz=UTC)
    added = [
        (await bound_growth(replay_store(redis, s, runs), store, s, now=now)).chat_indexed
        for _ in range(2)
    ]
    assert added == [2, 2]
    assert not await redis.exists(keys.chat_runs_built)  # the end not seen yet
    assert await RunForget(redis, keys, chunk=10).index.runs(1) is None
    assert (
        await bound_growth(replay_store(redis, s, runs), store, s, now=now)
    ).chat_indexed == 1  # and the end
    assert await redis.exists(keys.chat_runs_built)
    assert (await bound_growth(replay_store(redis, s, runs), store, s, now=now)).chat_indexed == 0
    assert await RunForget(redis, keys, chunk=10).index.runs(1) == ids
