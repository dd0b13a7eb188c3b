"""Switching a chat's embedding model (§16): the re-embedding pass.

Two hashed "models" of the same dimension whose spaces are unrelated (the new one
is a fixed signed permutation of the old one), so a mixed answer would show as
scores that match neither model.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from arq.connections import ArqRedis

from memory_worker.api import MemoryQueue
from memory_worker.cards import (
    CardStore,
    ResolutionOp,
    ResolutionWrite,
    RunWrites,
    Scope,
    VectorSpace,
    dedup_hash,
)
from memory_worker.cards.corrections import correction_plan
from memory_worker.cards.edits import correct_card, retract_card
from memory_worker.cards.recall import RecallHit
from memory_worker.consolidation.model_calls import Vectors
from memory_worker.errors import VectorSpaceMismatch
from memory_worker.keys import Keys
from memory_worker.ops.metrics import read_sample, sample_metrics
from memory_worker.settings import Settings
from memory_worker.upkeep.reembed import (
    LOST_RACE,
    ChatResult,
    Reembedder,
    Target,
    parse_progress,
    reembed_pass,
)
from tests.support.cards import T0, new
from tests.support.clock import ManualClock
from tests.support.model_fakes import hash_vector
from tests.support.replies import answer, answer_bytes
from tests.support.routes import farm_target, local_target, route, write_routes

CHAT = 4242
DIM = 32
OLD, NEW = "old-model", "new-model"
_RNG = np.random.default_rng(7)
_PERM = _RNG.permutation(DIM)
_SIGN = _RNG.choice([-1.0, 1.0], size=DIM)


def old_vec(text: str, dim: int = DIM) -> list[float]:
    return hash_vector(text, dim)


def new_vec(text: str, dim: int = DIM) -> list[float]:
    base = np.asarray(hash_vector(text, dim))
    if dim != DIM:
        return [float(x) for x in -base[::-1]]
    return [float(x) for x in base[_PERM] * _SIGN]


VEC = {OLD: old_vec, NEW: new_vec}


@dataclasses.dataclass
class ModelEmbedder:
    """An embedder that names its model; counts the texts it embedded."""

    model: str
    dim: int = DIM
    texts: list[str] = dataclasses.field(default_factory=list)
    #: Called with the call's number (1-based) before answering: a write racing the step.
    hook: Callable[[int], Awaitable[None]] | None = None
    calls: int = 0

    async def __call__(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        self.calls += 1
        if self.hook is not None:
            await self.hook(self.calls)
        self.texts.extend(texts)
        return Vectors([VEC[self.model](t, self.dim) for t in texts], model=self.model)


def fact(i: int) -> str:
    return f"fact {i}: person {i % 97} keeps item {i * 7919 % 1013} in box {i % 13}"


def card(text: str, model: str | None, *, subject: str, dim: int = DIM) -> Any:
    vector = None if model is None else VEC[model](text, dim)
    return dataclasses.replace(
        new(text, scope=Scope.CHAT, user=None, seed=None, subject=subject), embedding=vector
    )


async def seed_chat(store: CardStore, count: int, *, model: str = OLD, dim: int = DIM) -> None:
    for start in range(0, count, 200):
        cards = [card(fact(i), model, subject=f"s{i}", dim=dim) for i in range(start, start + 200)]
        await store.apply_run(
            CHAT,
            f"seed-{start}",
            RunWrites(observed_at=T0, cards=cards[: count - start], embedding_model=model),
            now=T0,
        )


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"reembed_batch_cards": 50, "reembed_pause_seconds": 0.0})


@pytest.fixture
def store(redis: Any, key_prefix: str) -> CardStore:
    return CardStore(redis, Keys(key_prefix))


def reembedder(store: CardStore, settings: Settings, embedder: ModelEmbedder, **kw: Any) -> Any:
    target = Target(embedder.model, embedder.dim)
    progress = Keys(settings.key_prefix).reembed_progress
    return Reembedder(store, embedder, target, settings, progress_key=progress, **kw)


def consistent(hits: Sequence[tuple[Any, float]], query: str, model: str) -> bool:
    """Every hit's cosine is that of ``query`` and the card's text in ``model``'s space.

    (A seeded card rewritten during the pass by a run of the new model keeps its old
    row in the old space until the switch — a refused vector — so its seeded text counts.)
    """
    q = np.asarray(VEC[model](query))
    for found in hits:
        hit, score = found  # a RecallHit's score is fused: compare its cosine
        if isinstance(found, RecallHit):
            assert found.dense is not None
            score = found.dense
        texts = [hit.fact_text] + ([fact(int(hit.id) - 1)] if int(hit.id) <= 1000 else [])
        if all(abs(float(q @ np.asarray(VEC[model](t))) - score) > 0.05 for t in texts):
            return False
    return True


class ModelWalker:
    """recall()'s walker, answering with one model's vectors."""

    def __init__(self, model: str) -> None:
        self.model = model
        target = SimpleNamespace(model=model)
        self.routes = SimpleNamespace(get=lambda _: SimpleNamespace(eligible=(target,)))

    async def embed(self, workflow: str, texts: Sequence[str], **_: Any) -> Any:
        value = SimpleNamespace(embeddings=[VEC[self.model](t) for t in texts])
        return SimpleNamespace(value=value, target=SimpleNamespace(model=self.model))


# --- the acceptance test ----------------------------------------------------------------------


async def test_switch_of_1000_cards_never_answers_mixed_and_keeps_writes(
    store: CardStore, settings: Settings
) -> None:
    await seed_chat(store, 1000)
    bot = await MemoryQueue.connect(
        settings=settings.model_copy(update={"embedding_dimension": DIM})
    )
    walkers = {m: ModelWalker(m) for m in (OLD, NEW)}
    observed: list[str] = []  # per poll, which model's answer was served: OLD / NEW
    finished = asyncio.Event()

    async def poll() -> None:
        i = 0
        while not finished.is_set():
            i += 1
            query = fact(i * 37 % 1000)
            for model in (OLD, NEW):
                hits = await bot.cards.similar_cards(CHAT, VEC[model](query), 5, model=model)
                if hits:
                    assert consistent(hits, query, model), (model, hits)
                    observed.append(model)
                bot.recall_walker = walkers[model]  # type: ignore[assignment]
                recalled: list[RecallHit]
                try:
                    recalled = await bot.recall(CHAT, query, k=5)
                except VectorSpaceMismatch:
                    recalled = []
                if recalled:
                    assert consistent(recalled, query, model), (model, recalled)
                    observed.append(model)
            await asyncio.sleep(0)

    written: list[str] = []

    async def write(call: int) -> None:
        """A run of the new model while step ``call`` embeds: new cards, and a rewrite of a
        card the pass has visited already (id 1 + 60 per call) — and of one it is embedding."""
        if (call % 3 or call > 18) and call != 20:  # call 20: the last step's (cards past it)
            return
        n = call // 3 if call != 20 else 7
        fresh = [card(f"fresh {n}.{j}", NEW, subject=f"f{n}.{j}") for j in range(3)]
        rewrites = []
        for target in (1 + 60 * (n - 1), min(50 * (call - 1) + 2, 999)):
            text = f"rewritten fact {target}"
            rewrites.append(
                ResolutionWrite(
                    old_card_id=str(target),
                    op=ResolutionOp.UPDATE,
                    new_fact_text=text,
                    new_dedup_hash=dedup_hash("chat", f"r{target}", "likes", "", text),
                    embedding=new_vec(text),
                )
            )
            written.append(text)
        writes = RunWrites(observed_at=T0, cards=fresh, resolutions=rewrites, embedding_model=NEW)
        await store.apply_run(CHAT, f"during-{call}", writes, now=T0)
        written.extend(c.fact_text for c in fresh)

    async def switch() -> ChatResult:
        embedder = ModelEmbedder(NEW, hook=write)
        worker = reembedder(store, settings, embedder, sleep=lambda _: asyncio.sleep(0.002))
        try:
            return await worker.chat(CHAT)  # type: ignore[no-any-return]
        finally:
            finished.set()

    poller = asyncio.create_task(poll())
    result = await switch()
    await poller
    bot.recall_walker = None
    await bot.close()

    assert result.state == "switched"
    assert await store.vector_space(CHAT) == VectorSpace(model=NEW, dimension=DIM)
    # answers were served from one space at a time: old ones, then new ones, never back
    assert OLD in observed
    first_new = observed.index(NEW) if NEW in observed else len(observed)
    assert OLD not in observed[first_new:]
    # every live card, written during the pass or not, is found by its text in the new space
    live = await store.live_cards(CHAT)
    assert len(written) == 7 * 5  # writes at calls 3, 6, … 18 and 20: all during the pass
    assert len(live) == 1000 + 21
    assert set(written) <= {c.fact_text for c in live}
    for c in live:
        hits = await store.similar_cards(CHAT, new_vec(c.fact_text), 3, model=NEW)
        assert any(h.id == c.id and score > 0.97 for h, score in hits), c.fact_text
    assert await store.similar_cards(CHAT, old_vec(fact(1)), 3, model=OLD) == []
    assert not await store.redis.exists(store.key(CHAT, "rebuild"), store.key(CHAT, "nvech"))


# --- resumable, paced, visible -----------------------------------------------------------------


class StepClock(ManualClock):
    """A monotonic clock that advances one second per step (each pause)."""

    async def sleep(self, _: float) -> None:
        self.advance(1.0)


async def test_a_stopped_pass_resumes_at_its_cursor(
    store: CardStore, redis: ArqRedis, settings: Settings
) -> None:
    await seed_chat(store, 300)
    clock = StepClock()
    first = ModelEmbedder(NEW)
    worker = reembedder(store, settings, first, sleep=clock.sleep, clock=clock)
    paused = await worker.chat(CHAT, until=2.0)  # two steps of 50, then out of budget
    assert (paused.state, paused.steps, paused.embedded) == ("paused", 2, 100)
    assert await store.vector_space(CHAT) == VectorSpace(model=OLD, dimension=DIM)
    progress = await answer_bytes(
        store.redis.hget(Keys(settings.key_prefix).reembed_progress, str(CHAT))
    )
    assert progress is not None
    assert parse_progress(progress) == (100, 300)
    gauges = {
        m.name: m.samples[0].value
        for m in sample_metrics(await read_sample(redis, settings))
        if m.name.startswith("memory_worker_reembed")
    }
    assert gauges == {
        "memory_worker_reembed_chats": 1,
        "memory_worker_reembed_cards_done": 100,
        "memory_worker_reembed_cards_planned": 300,
    }

    second = ModelEmbedder(NEW)  # another worker, after the first one died
    resumed = await reembedder(store, settings, second).chat(CHAT)
    assert resumed.state == "switched"
    assert len(first.texts) + len(second.texts) == 300  # nothing embedded twice
    assert set(second.texts) == {fact(i) for i in range(100, 300)}
    assert not await answer(
        store.redis.hexists(Keys(settings.key_prefix).reembed_progress, str(CHAT))
    )


async def test_a_step_that_lost_the_race_moves_nothing(
    store: CardStore, settings: Settings
) -> None:
    await seed_chat(store, 100)
    worker = reembedder(store, settings, ModelEmbedder(NEW))
    clock = StepClock()
    worker.clock, worker._sleep = clock, clock.sleep
    await worker.chat(CHAT, until=1.0)  # cursor at 50
    # a second worker that read cursor 0 before the first one's step landed
    done = await worker._embed_step(CHAT, ["1", "2"], 0, 2)
    assert done == LOST_RACE
    assert await answer_bytes(store.redis.hget(store.key(CHAT, "rebuild"), "cursor")) == b"50"


async def test_a_worker_that_lost_a_race_goes_on_from_the_winners_cursor(
    store: CardStore, settings: Settings
) -> None:
    await seed_chat(store, 100)
    clock = StepClock()
    slow = ModelEmbedder(NEW)
    loser = reembedder(store, settings, slow, sleep=clock.sleep, clock=clock)
    winner = reembedder(store, settings, ModelEmbedder(NEW))

    async def overtaken(call: int) -> None:
        if call == 1:  # while the loser embeds ids 1-50, another worker does two steps
            clock = StepClock()
            winner.clock, winner._sleep = clock, clock.sleep
            await winner.chat(CHAT, until=2.0)

    slow.hook = overtaken
    result = await loser.chat(CHAT)
    assert result.state == "switched"
    assert len(slow.texts) == 50  # its one lost step: the winner did 1-100, it the switch
    assert await store.vector_space(CHAT) == VectorSpace(model=NEW, dimension=DIM)


async def test_a_model_change_mid_pass_restarts_it(store: CardStore, settings: Settings) -> None:
    await seed_chat(store, 100)
    clock = StepClock()
    await reembedder(store, settings, ModelEmbedder(NEW), sleep=clock.sleep, clock=clock).chat(
        CHAT, until=1.0
    )
    wide = ModelEmbedder(NEW + "-wide", dim=48)
    VEC[wide.model] = new_vec
    try:
        result = await reembedder(store, settings, wide).chat(CHAT)
    finally:
        del VEC[wide.model]
    assert result.state == "switched"
    assert len(wide.texts) == 100
    assert await store.vector_space(CHAT) == VectorSpace(model=wide.model, dimension=48)
    hits = await store.similar_cards(CHAT, new_vec(fact(3), 48), 1, model=wide.model)
    assert hits[0][0].fact_text == fact(3)


async def test_an_embedder_answering_another_model_writes_nothing(
    store: CardStore, settings: Settings
) -> None:
    await seed_chat(store, 60)
    wrong = ModelEmbedder(OLD)  # the route failed over to a target of another model
    worker = reembedder(store, settings, ModelEmbedder(NEW))
    worker.embedder = wrong
    assert (await worker.chat(CHAT)).state == "refused"
    assert await answer_bytes(store.redis.hget(store.key(CHAT, "rebuild"), "cursor")) == b"0"
    assert await store.vector_space(CHAT) == VectorSpace(model=OLD, dimension=DIM)


async def test_a_card_that_had_no_vector_gets_one(store: CardStore, settings: Settings) -> None:
    await seed_chat(store, 10)
    bare = RunWrites(observed_at=T0, cards=[card("no vector here", None, subject="bare")])
    await store.apply_run(CHAT, "bare", bare, now=T0)
    assert await reembedder(store, settings, ModelEmbedder(NEW)).chat(CHAT) == ChatResult(
        CHAT, "switched", 11, 1
    )
    hits = await store.similar_cards(CHAT, new_vec("no vector here"), 1, model=NEW)
    assert hits[0][0].fact_text == "no vector here"
    assert hits[0][0].has_embedding


async def test_withdrawn_facts_are_embedded_in_the_new_space_too(
    store: CardStore, settings: Settings
) -> None:
    """A retracted card and a corrected-away one keep being matched by meaning after the
    switch: their rows are embedded with the new model, so a run of the new model restating
    one from older messages is refused (left as zero rows they would match nothing)."""
    await seed_chat(store, 10)
    later = T0 + timedelta(hours=1)
    assert (await retract_card(store, CHAT, "3", actor="o", reason="", now=later)).done
    old = await store.get_card(CHAT, "5")
    assert old is not None
    plan = correction_plan(old.scope_key, "s4", "likes", "corrected", actor="o", model=OLD)
    done = await correct_card(
        store, CHAT, "5", plan, embedding=old_vec("corrected"), sk=old.scope_key, now=later
    )
    assert done.created
    embedder = ModelEmbedder(NEW)
    assert (await reembedder(store, settings, embedder).chat(CHAT)).state == "switched"
    assert {fact(2), fact(4)} <= set(embedder.texts)
    matrix = await store.chat_vectors(CHAT)
    assert matrix.model == NEW
    assert matrix.withdrawn_marks == 2
    assert sorted(matrix.ids[int(r)] for r in np.flatnonzero(matrix.withdrawn)) == ["3", "5"]
    for card_id, text in (("3", fact(2)), ("5", fact(4))):
        reworded = dataclasses.replace(
            card(f"{text}, said again", NEW, subject=f"s{int(card_id) - 1}"),
            embedding=new_vec(text),
        )
        writes = RunWrites(observed_at=T0, cards=[reworded], embedding_model=NEW)
        result = await store.apply_run(CHAT, f"again-{card_id}", writes, now=later)
        assert (result.inserted, result.retracted) == (0, 1)


async def test_chats_already_current_or_without_vectors_are_left_alone(
    store: CardStore, settings: Settings
) -> None:
    await seed_chat(store, 10, model=NEW)
    await store.apply_run(CHAT + 1, "r", RunWrites(T0, [card("x", None, subject="x")]), now=T0)
    embedder = ModelEmbedder(NEW)
    worker = reembedder(store, settings, embedder)
    assert await reembed_pass(worker, budget_seconds=60) == []
    assert (await worker.chat(CHAT)).state == "current"
    assert (await worker.chat(CHAT + 1)).state == "empty"
    assert embedder.texts == []


async def test_the_pass_moves_every_chat_of_another_space(
    store: CardStore, settings: Settings
) -> None:
    await seed_chat(store, 30)
    await store.apply_run(
        CHAT + 1, "r", RunWrites(T0, [card("y", OLD, subject="y")], embedding_model=OLD), now=T0
    )
    results = await reembed_pass(reembedder(store, settings, ModelEmbedder(NEW)), budget_seconds=60)
    assert sorted((r.chat_id, r.state) for r in results) == [
        (CHAT, "switched"),
        (CHAT + 1, "switched"),
    ]


# --- random interleavings ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
async def test_random_writes_during_a_switch_end_in_one_complete_space(
    store: CardStore, settings: Settings, seed: int
) -> None:
    """Runs of either model (inserts, rewrites, supersessions, merges) race the steps at
    random; afterwards every live card is found by its current text in the new space."""
    import random

    rng = random.Random(seed)
    await seed_chat(store, 60)
    settings = settings.model_copy(update={"reembed_batch_cards": rng.choice([1, 4, 7, 25])})
    runs = 0

    async def race(call: int) -> None:
        nonlocal runs
        for _ in range(rng.choice([0, 0, 1, 2])):
            runs += 1
            live = await store.live_cards(CHAT)
            model = rng.choice([OLD, NEW])
            a, b = rng.sample(live, 2)
            text = f"random {runs} {rng.random():.6f}"
            op = rng.choice([ResolutionOp.UPDATE, ResolutionOp.SUPERSEDE, ResolutionOp.MERGE])
            fresh = [card(f"new {runs}", model, subject=f"n{runs}")]
            res = ResolutionWrite(
                old_card_id=a.id,
                op=op,
                new_index=0 if op is ResolutionOp.SUPERSEDE else None,
                into_card_id=b.id if op is ResolutionOp.MERGE else None,
                new_fact_text=None if op is ResolutionOp.SUPERSEDE else text,
                new_dedup_hash=dedup_hash("chat", f"x{runs}", "likes", "", text),
                embedding=None if op is ResolutionOp.SUPERSEDE else VEC[model](text),
            )
            writes = RunWrites(T0, fresh, resolutions=[res], embedding_model=model)
            await store.apply_run(CHAT, f"race-{runs}", writes, now=T0)

    result = await reembedder(store, settings, ModelEmbedder(NEW, hook=race)).chat(CHAT)
    assert result.state == "switched"
    assert runs > 0
    assert await store.vector_space(CHAT) == VectorSpace(model=NEW, dimension=DIM)
    for c in await store.live_cards(CHAT):
        hits = await store.similar_cards(CHAT, new_vec(c.fact_text), 3, model=NEW)
        assert any(h.id == c.id and score > 0.97 for h, score in hits), (seed, c.fact_text)


# --- end to end: the operator switches the route to the local e5 model ------------------------


async def test_switching_the_route_to_e5_reembeds_chats_in_maintenance(
    settings: Settings, store: CardStore, redis: ArqRedis, tmp_path: Any
) -> None:
    from memory_worker.wiring import build_tick_runner

    await store.apply_run(
        CHAT,
        "farm-era",
        RunWrites(
            T0,
            [
                card(t, OLD, subject=str(i))
                for i, t in enumerate(["Alice likes green tea", "Bob works as a nurse"])
            ],
            embedding_model=OLD,
        ),
        now=T0,
    )
    routes = write_routes(
        tmp_path,
        embedding=route(local_target()),
        memory_extraction=route(farm_target("llm", "m", endpoint="chat")),
    )
    s = settings.model_copy(update={"routes_file": routes, "embedding_dimension": 384})
    pipeline = await build_tick_runner(s, redis)  # the client the store wraps
    try:
        assert pipeline.maintenance is not None
        assert "reembed=switched:1" in await pipeline.maintenance()
    finally:
        for close in pipeline.closers:
            await close()
    e5 = "multilingual-e5-small"
    assert await store.vector_space(CHAT) == VectorSpace(model=e5, dimension=384)
    async with await MemoryQueue.connect(settings=s) as bot:
        hits = await bot.recall(CHAT, "What does Alice drink?", k=1)
    assert hits[0][0].fact_text == "Alice likes green tea"


async def test_a_worker_whose_pass_was_finished_by_another_says_current(
    store: CardStore, settings: Settings
) -> None:
    await seed_chat(store, 60)
    slow = ModelEmbedder(NEW)
    loser = reembedder(store, settings, slow)
    winner = reembedder(store, settings, ModelEmbedder(NEW))

    async def overtaken(call: int) -> None:
        if call == 1:
            assert (await winner.chat(CHAT)).state == "switched"

    slow.hook = overtaken
    assert (await loser.chat(CHAT)).state == "current"


async def test_a_card_no_step_can_write_stops_the_pass_instead_of_spinning(
    store: CardStore, settings: Settings
) -> None:
    await seed_chat(store, 5)
    # an index pointing at a card that is not live (damaged state): the switch keeps naming it
    await answer(store.redis.hset(store.key(CHAT, "dedup"), "ghost-hash", "999"))
    worker = reembedder(store, settings, ModelEmbedder(NEW))
    assert (await worker.chat(CHAT)).state == "refused"
    assert await store.vector_space(CHAT) == VectorSpace(model=OLD, dimension=DIM)
