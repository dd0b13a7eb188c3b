"""Recall that connects facts (§16): the best hits lift the cards of their subject and
episode, restatements go last — the pure steps in tables and with hypothesis, then the
card store's search on real Valkey (visibility, k, determinism, the index's ties)."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.exceptions import ConnectionError as RedisConnectionError

from memory_worker.cards import Card, CardStatus, CardStore, NewCard, Scope
from memory_worker.cards.forget import CardForget, UserPlan
from memory_worker.cards.recall import (
    ConnectParams,
    FusionParams,
    Ties,
    Window,
    connect,
    rank_cards,
)
from memory_worker.cards.recall.connect import NONE, restatements_last, spread, top_rows
from memory_worker.keys import Keys
from memory_worker.privacy.forget import StoredCard
from memory_worker.settings import Settings
from tests.support.cards import CHAT, DIM, T0, apply, new
from tests.support.cards import store as store  # the fixture

INF = -math.inf
ON = ConnectParams(seeds=5, subject=0.2, episode=0.1, restatement=0.95)
OFF = ConnectParams(seeds=0, subject=0.2, episode=0.1, restatement=2.0)


def codes(*values: int) -> np.ndarray[Any, Any]:
    return np.asarray(values, dtype=np.int64)


# --- spread ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "seeds", "subjects", "episodes", "params", "expected"),
    [
        # the seed's subject lifted by 0.2 × its score; the seed itself not
        ([1.0, 0.5, 0.6], [0], [0, 0, 1], [NONE] * 3, ON, [1.0, 0.7, 0.6]),
        # the largest lift, not the sum: two seeds of one subject
        ([1.0, 0.8, 0.5], [0, 1], [0, 0, 0], [NONE] * 3, ON, [1.16, 1.0, 0.7]),
        # the episode by 0.1 × the seed's score; the larger of subject and episode
        ([1.0, 0.5, 0.5], [0], [0, 1, 0], [3, 3, 3], ON, [1.0, 0.6, 0.7]),
        # a row outside the candidates stays out, whatever it is tied to
        ([1.0, INF, 0.5], [0], [0, 0, 0], [NONE] * 3, ON, [1.0, INF, 0.7]),
        # no subject, no episode: tied to nothing (NONE never matches NONE)
        ([1.0, 0.5], [0], [NONE, NONE], [NONE, NONE], ON, [1.0, 0.5]),
        # a seed scored at or below zero lifts nothing
        ([0.0, -0.5], [0], [0, 0], [NONE, NONE], ON, [0.0, -0.5]),
        # only the first params.seeds seeds count
        ([1.0, 0.9, 0.5], [0, 1], [0, 1, 1], [NONE] * 3, replace(ON, seeds=1), [1.0, 0.9, 0.5]),
        # off: the scores as they were
        ([1.0, 0.5, 0.6], [0], [0, 0, 1], [NONE] * 3, OFF, [1.0, 0.5, 0.6]),
    ],
    ids=[
        "subject",
        "largest-lift",
        "episode",
        "out-stays-out",
        "untied",
        "no-worth",
        "seed-count",
        "off",
    ],
)
def test_spread(
    scores: list[float],
    seeds: list[int],
    subjects: list[int],
    episodes: list[int],
    params: ConnectParams,
    expected: list[float],
) -> None:
    lifted = spread(np.asarray(scores), seeds, codes(*subjects), codes(*episodes), params)
    assert lifted.tolist() == pytest.approx(expected)


# --- restatements ----------------------------------------------------------------------------


def units(*angles: float) -> np.ndarray[Any, Any]:
    """Unit vectors in the plane at ``angles`` (degrees): cos of two is cos of their gap."""
    radians = np.radians(angles)
    return np.stack([np.cos(radians), np.sin(radians)], axis=1)


@pytest.mark.parametrize(
    ("rows", "subjects", "angles", "threshold", "expected"),
    [
        # row 1 restates row 0 (same subject, 5°): after row 2
        ([0, 1, 2], [0, 0, 1], [0, 5, 60], 0.95, [0, 2, 1]),
        # the same words from another subject are another fact
        ([0, 1, 2], [0, 1, 1], [0, 5, 60], 0.95, [0, 1, 2]),
        # 30° apart (cos 0.87): two facts of one subject
        ([0, 1, 2], [0, 0, 1], [0, 30, 60], 0.95, [0, 1, 2]),
        # a restatement is compared with the kept rows only; order within each group kept
        ([0, 1, 2, 3], [0, 0, 0, 1], [0, 3, 6, 90], 0.997, [0, 2, 3, 1]),
        # no subject: never a restatement
        ([0, 1], [NONE, NONE], [0, 0], 0.95, [0, 1]),
        # above 1: off
        ([0, 1, 2], [0, 0, 1], [0, 0, 60], 1.5, [0, 1, 2]),
    ],
    ids=["restated", "other-subject", "distinct", "kept-only", "untied", "off"],
)
def test_restatements_last(
    rows: list[int],
    subjects: list[int],
    angles: list[float],
    threshold: float,
    expected: list[int],
) -> None:
    assert restatements_last(rows, codes(*subjects), units(*angles), threshold) == expected


def test_without_vectors_nothing_is_a_restatement() -> None:
    assert restatements_last([2, 0, 1], codes(0, 0, 0), None, 0.5) == [2, 0, 1]


# --- connect: the whole re-ranking -----------------------------------------------------------


def test_a_bridge_fact_brings_its_subjects_other_fact_into_the_k() -> None:
    """ "Where does the person who works as a nurse live?": the job card is the best hit;
    the same person's home card, below two other people's homes, comes into the k."""
    scores = np.asarray([0.9, 0.6, 0.55, 0.5, 0.1])  # job(Maria), home(Chloe), home(Ethan),
    subjects = codes(0, 1, 2, 0, 1)  # home(Maria), chit-chat(Chloe)
    episodes = codes(NONE, NONE, NONE, NONE, NONE)
    assert connect(scores, subjects, episodes, None, OFF, 2) == [0, 1]
    assert connect(scores, subjects, episodes, None, ON, 2) == [0, 3]


def test_a_restated_fact_leaves_its_place_to_the_next_fact() -> None:
    scores = np.asarray([0.9, 0.85, 0.5])
    vectors = units(0, 2, 70)
    assert connect(scores, codes(0, 0, 1), codes(NONE, NONE, NONE), vectors, OFF, 2) == [0, 1]
    assert connect(scores, codes(0, 0, 1), codes(NONE, NONE, NONE), vectors, ON, 2) == [0, 2]


@st.composite
def rankings(draw: st.DrawFn) -> tuple[Any, ...]:
    size = draw(st.integers(0, 40))
    finite = st.floats(-2.0, 2.0, allow_nan=False)
    scores = draw(st.lists(st.one_of(finite, st.just(INF)), min_size=size, max_size=size))
    subjects = draw(st.lists(st.integers(NONE, 4), min_size=size, max_size=size))
    episodes = draw(st.lists(st.integers(NONE, 4), min_size=size, max_size=size))
    raw = draw(
        st.lists(
            st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=3),
            min_size=size,
            max_size=size,
        )
    )
    vectors = np.asarray(raw, dtype=np.float64).reshape(size, 3)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = np.where(norms > 0, vectors / np.where(norms > 0, norms, 1), 0.0)
    params = ConnectParams(
        seeds=draw(st.integers(0, 8)),
        subject=draw(st.floats(0, 2, allow_nan=False)),
        episode=draw(st.floats(0, 2, allow_nan=False)),
        restatement=draw(st.floats(-1, 2, allow_nan=False)),
    )
    k = draw(st.integers(0, 12))
    return np.asarray(scores), codes(*subjects), codes(*episodes), vectors, params, k


@settings(max_examples=150, deadline=None)
@given(rankings())
def test_connect_returns_at_most_k_distinct_candidates_deterministically(
    case: tuple[Any, ...],
) -> None:
    scores, subjects, episodes, vectors, params, k = case
    got = connect(scores, subjects, episodes, vectors, params, k)
    candidates = {int(i) for i in np.flatnonzero(np.isfinite(scores))}
    assert set(got) <= candidates  # never a row the caller may not see
    assert len(got) == len(set(got)) == min(k, len(candidates))
    again = connect(scores.copy(), subjects.copy(), episodes.copy(), vectors.copy(), params, k)
    assert got == again


@settings(max_examples=100, deadline=None)
@given(rankings())
def test_connect_off_is_the_plain_ranking(case: tuple[Any, ...]) -> None:
    scores, subjects, episodes, vectors, params, k = case
    off = replace(params, seeds=0, restatement=2.0)
    assert connect(scores, subjects, episodes, vectors, off, k) == top_rows(scores, k)


@settings(max_examples=100, deadline=None)
@given(rankings())
def test_spread_only_ever_raises_candidates(case: tuple[Any, ...]) -> None:
    scores, subjects, episodes, _, params, _ = case
    seeds = top_rows(scores, params.seeds)
    lifted = spread(scores, seeds, subjects, episodes, params)
    finite = np.isfinite(scores)
    assert np.array_equal(np.isfinite(lifted), finite)
    assert np.all(lifted[finite] >= scores[finite])


# --- ties and settings -----------------------------------------------------------------------


def test_ties_code_subjects_and_episodes_case_folded_and_blank_as_none() -> None:
    ties = Ties()
    for subject, episode in [
        ("Maria", "run-1"),
        ("MARIA", "run-2"),
        ("", None),
        ("Мария", "run-1"),
    ]:
        ties.add(subject, episode)
    subjects, episodes = ties.arrays()
    assert ties.count == 4
    assert subjects[0] == subjects[1] != subjects[3]
    assert subjects[2] == NONE
    assert episodes[2] == NONE
    assert episodes[0] == episodes[3] != episodes[1]
    ties.add("Maria", "run-2")  # a later row: the arrays follow
    subjects, episodes = ties.arrays()
    assert subjects[4] == subjects[0]
    assert episodes[4] == episodes[1]


def test_the_settings_name_the_connection() -> None:
    settings_ = Settings(
        recall_seeds=3,
        recall_subject_spread=0.4,
        recall_episode_spread=0.0,
        recall_restatement_cosine=1.5,
    )
    assert ConnectParams.from_settings(settings_) == ConnectParams(3, 0.4, 0.0, 1.5)
    assert ConnectParams.from_settings(Settings()) == ConnectParams()


# --- the card store ----------------------------------------------------------------------------


def toward(cosine: float, axis: int) -> list[float]:
    """A unit vector at ``cosine`` to the query (axis 0), the rest along ``axis``."""
    vector = [0.0] * DIM
    vector[0], vector[axis] = cosine, math.sqrt(1 - cosine * cosine)
    return vector


QUERY = toward(1.0, 1)
DENSE = FusionParams(method="dense", time_boost=0.0)


def card(text: str, subject: str, cosine: float, axis: int, **kw: Any) -> NewCard:
    return new(
        text,
        subject=subject,
        scope=kw.pop("scope", Scope.CHAT),
        embedding=toward(cosine, axis),
        sources=(axis,),
        **kw,
    )


async def apart(store: CardStore, *cards: NewCard) -> None:
    """Each card written by a run of its own (an episode each)."""
    for card_ in cards:
        await apply(store, f"run-{card_.fact_text}", card_)


async def found(store: CardStore, k: int, connect: ConnectParams | None, **kw: Any) -> list[str]:
    hits = await store.search(
        CHAT, "zzz", QUERY, k, now=kw.pop("now", T0), params=DENSE, connect=connect, **kw
    )
    return [hit.card.fact_text for hit in hits]


async def test_the_store_connects_a_bridge_fact_to_its_subjects_other_fact(
    store: CardStore,
) -> None:
    await apart(
        store,
        card("Maria works as a nurse", "Maria", 0.95, 1),
        card("Chloe lives in Leeds", "Chloe", 0.6, 2),
        card("Ethan lives in York", "Ethan", 0.55, 3),
        card("Maria lives in Porto", "Maria", 0.5, 4),
        card("Chloe is tired", "Chloe", 0.1, 5),
    )
    assert await found(store, 2, None) == ["Maria works as a nurse", "Chloe lives in Leeds"]
    assert await found(store, 2, ON) == ["Maria works as a nurse", "Maria lives in Porto"]
    # a card written after the index was built carries its subject too
    await apart(store, card("Maria has a cat", "Maria", 0.45, 6))
    assert "Maria has a cat" in await found(store, 3, ON)
    assert "Maria has a cat" not in await found(store, 3, None)


async def test_the_store_never_connects_to_a_card_the_reader_may_not_see(
    store: CardStore,
) -> None:
    """Another user's card, an expired card and a card outside the asked time share the
    best hit's subject and would be lifted above the others: none is ever returned."""
    later = T0 + timedelta(days=40)
    await apart(
        store,
        card("Maria works as a nurse", "Maria", 0.95, 1),
        card("Chloe lives in Leeds", "Chloe", 0.6, 2),
        card("Maria's diary", "Maria", 0.58, 3, scope=Scope.USER, user=8),
        card("Maria is at the airport", "Maria", 0.57, 4, expires=T0 + timedelta(hours=1)),
        card("Maria lives in Porto", "Maria", 0.56, 5, at=later),
        card("Ethan lives in York", "Ethan", 0.3, 6),
    )
    now = later + timedelta(days=1)
    reader = {"chat", "user:7"}
    window = Window(None, later)
    first = await found(store, 4, ON, now=now, scope_keys=reader, window=window)
    assert first == [
        "Maria works as a nurse",
        "Chloe lives in Leeds",
        "Ethan lives in York",
    ]  # fewer than k: everything visible, nothing else
    assert await found(store, 4, ON, now=now, scope_keys=reader, window=window) == first
    # seen by its user, the diary is lifted by the bridge; the expired card never is
    mine = await found(store, 2, ON, now=now, scope_keys={"chat", "user:8"})
    assert mine == ["Maria works as a nurse", "Maria's diary"]
    for k in range(1, 7):
        assert len(await found(store, k, ON, now=now)) == min(k, 5)


async def test_the_store_puts_a_restated_fact_after_the_next_fact(store: CardStore) -> None:
    await apart(
        store,
        card("Maria lives in Porto", "Maria", 0.9, 1),
        new(
            "Maria: I live in Porto now",
            subject="Maria",
            scope=Scope.CHAT,
            embedding=[0.88, 0.45, 0.1] + [0.0] * (DIM - 3),
            sources=(2,),
        ),
        card("Chloe lives in Leeds", "Chloe", 0.5, 3),
    )
    plain = replace(ON, seeds=0)
    assert await found(store, 2, replace(plain, restatement=2.0)) == [
        "Maria lives in Porto",
        "Maria: I live in Porto now",
    ]
    assert await found(store, 2, plain) == ["Maria lives in Porto", "Chloe lives in Leeds"]


async def test_the_store_lifts_the_cards_of_the_best_hits_episode(store: CardStore) -> None:
    await apply(
        store,
        "evening",
        card("Maria works as a nurse", "Maria", 0.95, 1),
        card("Grace booked the table", "Grace", 0.5, 2),
    )
    await apart(store, card("Chloe lives in Leeds", "Chloe", 0.54, 3))
    assert await found(store, 2, None) == ["Maria works as a nurse", "Chloe lives in Leeds"]
    assert await found(store, 2, ON) == ["Maria works as a nurse", "Grace booked the table"]
    assert await found(store, 2, replace(ON, episode=0.0)) == [
        "Maria works as a nurse",
        "Chloe lives in Leeds",
    ]


# --- rank_cards: the same connection over cards a caller holds ----------------------------------


def held(card_id: str, text: str, subject: str, run: str) -> Card:
    return Card(
        id=card_id,
        chat_id=1,
        scope=Scope.CHAT,
        card_type="fact",
        subject=subject,
        predicate="",
        object="",
        fact_text=text,
        confidence=0.8,
        salience=0.5,
        observation_count=1,
        status=CardStatus.ACTIVE,
        valid_from=T0,
        observed_at=T0,
        created_at=T0,
        updated_at=T0,
        source_message_ids=[int(card_id)],
        dedup_hash=card_id,
        first_run_id=run,
    )


def test_rank_cards_connects_like_recall() -> None:
    cards = [
        held("1", "works as a nurse", "Maria", "r1"),
        held("2", "lives in Leeds", "Chloe", "r2"),
        held("3", "lives in Porto", "Maria", "r3"),
        held("4", "lives in Porto!", "Maria", "r4"),
    ]
    vectors = [toward(0.95, 1), toward(0.6, 2), toward(0.5, 3), toward(0.5, 3)]

    def ids(k: int, connect: ConnectParams | None) -> list[str]:
        hits = rank_cards(
            "zzz",
            cards,
            k=k,
            query_vector=QUERY,
            card_vectors=vectors,
            params=DENSE,
            connect=connect,
        )
        return [hit.card.id for hit in hits]

    assert ids(2, None) == ["1", "2"]
    assert ids(2, ON) == ["1", "3"]
    assert ids(3, ON) == ["1", "3", "2"]  # card 4 restates card 3: after the others


# --- faults: rows compacted away, a read that fails ------------------------------------------------


async def test_ties_stay_row_for_row_with_the_cards_through_a_forget_compaction(
    store: CardStore, cards_redis: Any, key_prefix: str
) -> None:
    people = ["Maria", "Chloe", "Ethan"]
    for i in range(24):
        await apply(store, f"r{i}", card(f"card {i}", people[i % 3], 0.1 + i / 100, 1 + i % 15))
    assert len(await found(store, 5, ON)) == 5  # the index and its ties are built
    keys = Keys(key_prefix)
    gone = sorted(random.Random(3).sample([str(i) for i in range(1, 25)], 9))
    raws = await cards_redis.hmget(keys.chat(CHAT, "cards"), gone)
    await CardForget(cards_redis, keys, chunk=4).forget_user(
        CHAT, 0, UserPlan(cards=[StoredCard.from_json(r) for r in raws])
    )
    await found(store, 5, ON)
    matrix = store._cache.get(CHAT)
    assert matrix is not None
    subjects, episodes = matrix.lexicon.ties.arrays()
    assert matrix.count == matrix.lexicon.ties.count == 15
    cards = await store.get_cards(CHAT, matrix.ids)
    for row, stored in enumerate(cards):  # the same code exactly for the same subject / run
        for other, also in enumerate(cards):
            assert (subjects[row] == subjects[other]) == (stored.subject == also.subject)
            assert (episodes[row] == episodes[other]) == (stored.first_run_id == also.first_run_id)


async def test_a_failed_read_of_the_winners_leaves_the_next_search_whole(
    store: CardStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await apart(
        store,
        card("Maria works as a nurse", "Maria", 0.95, 1),
        card("Chloe lives in Leeds", "Chloe", 0.6, 2),
        card("Maria lives in Porto", "Maria", 0.5, 3),
    )
    await apply(
        store, "chat", *[card(f"Ethan: lol {i}", "Ethan", 0.2 - i / 100, 4 + i) for i in range(12)]
    )
    await found(store, 2, None)  # the index is built: the next reads are the winners'
    real = store.redis.hmget
    calls = 0

    async def failing(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:  # the pool's read (rows the seeds' read did not cover), after the seeds'
            raise RedisConnectionError("connection reset while reading the winners")
        return await real(*args, **kwargs)  # type: ignore[misc]

    monkeypatch.setattr(store.redis, "hmget", failing)
    with pytest.raises(RedisConnectionError):
        await found(store, 2, replace(ON, restatement=2.0, seeds=1))
    assert await found(store, 2, ON) == ["Maria works as a nurse", "Maria lives in Porto"]
