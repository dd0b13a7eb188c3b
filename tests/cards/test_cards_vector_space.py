"""Vectors know their model (§16): a chat's vector space is fixed by its first vector."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from memory_worker.cards import CardStore, FoldGroup, ResolutionOp, ResolutionWrite, VectorSpace
from memory_worker.consolidation.consolidate import ConsolidationResult, consolidate_run
from memory_worker.consolidation.model_calls import Vectors
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from tests.consolidation.test_consolidate import ALICE, answer, card, make_request
from tests.consolidation.test_consolidate import CHAT as CCHAT
from tests.consolidation.test_consolidate import DIM as CDIM
from tests.consolidation.test_consolidate import settings as settings  # the fixture
from tests.support.cards import CHAT, DIM, T0, new, vec, writes
from tests.support.cards import store as store  # the fixture
from tests.support.logs import capture_logs
from tests.support.model_fakes import HashEmbedder, ScriptedExtractor

E5 = "multilingual-e5-small"
FARM = "embedder"


async def test_first_vector_records_model_and_dimension(store: CardStore) -> None:
    assert await store.vector_space(CHAT) is None
    await store.apply_run(CHAT, "r1", writes(new("tea"), embedding_model=E5), now=T0)
    assert await store.vector_space(CHAT) == VectorSpace(model=E5, dimension=DIM)


async def test_a_write_of_another_model_is_refused_not_mixed(store: CardStore) -> None:
    await store.apply_run(CHAT, "r1", writes(new("tea", seed=1), embedding_model=E5), now=T0)
    with capture_logs() as logs:
        result = await store.apply_run(
            CHAT, "r2", writes(new("coffee", seed=2), embedding_model=FARM), now=T0
        )
    assert result.inserted == 1
    assert result.vectors_refused == 1
    coffee = await store.get_card(CHAT, result.card_ids[0])
    assert coffee is not None
    assert not coffee.has_embedding  # stored, without a row
    refused = [e for e in logs if e["event"] == "cards.vectors_refused"]
    assert refused
    assert refused[0]["model"] == FARM
    assert "coffee" not in str(refused)
    # the farm's exact vector finds only the e5 card: nothing of the other model got in
    found = await store.similar_cards(CHAT, vec(2), 5)
    assert [c.fact_text for c, _ in found] == ["tea"]
    assert await store.vector_space(CHAT) == VectorSpace(model=E5, dimension=DIM)


async def test_a_write_of_another_dimension_is_refused(store: CardStore) -> None:
    await store.apply_run(CHAT, "r1", writes(new("tea"), embedding_model=E5), now=T0)
    wider = dataclasses.replace(new("coffee", seed=None), embedding=[0.1] * (DIM * 2))
    result = await store.apply_run(CHAT, "r2", writes(wider, embedding_model=E5), now=T0)
    assert result.vectors_refused == 1


async def test_an_unknown_writer_is_refused_once_a_model_is_recorded(store: CardStore) -> None:
    await store.apply_run(CHAT, "r1", writes(new("tea", seed=1), embedding_model=E5), now=T0)
    result = await store.apply_run(CHAT, "r2", writes(new("coffee", seed=2)), now=T0)
    assert result.vectors_refused == 1


async def test_a_chat_without_a_model_adopts_the_first_named_one(store: CardStore) -> None:
    # written before models were recorded (no embedding_model): dimension only
    await store.apply_run(CHAT, "r1", writes(new("tea", seed=1)), now=T0)
    assert await store.vector_space(CHAT) == VectorSpace(model=None, dimension=DIM)
    await store.apply_run(CHAT, "r2", writes(new("coffee", seed=2), embedding_model=FARM), now=T0)
    assert await store.vector_space(CHAT) == VectorSpace(model=FARM, dimension=DIM)
    result = await store.apply_run(
        CHAT, "r3", writes(new("juice", seed=3), embedding_model=E5), now=T0
    )
    assert result.vectors_refused == 1


async def test_a_query_of_another_model_finds_nothing(store: CardStore) -> None:
    await store.apply_run(CHAT, "r1", writes(new("tea", seed=1), embedding_model=E5), now=T0)
    assert [c.fact_text for c, _ in await store.similar_cards(CHAT, vec(1), 3, model=E5)] == ["tea"]
    with capture_logs() as logs:
        assert await store.similar_cards(CHAT, vec(1), 3, model=FARM) == []
    assert any(e["event"] == "cards.vector_model_mismatch" for e in logs)
    # another dimension finds nothing either, whatever the model
    assert await store.similar_cards(CHAT, list(np.ones(DIM + 1)), 3, model=E5) == []


async def test_a_cached_matrix_learns_the_model(cards_redis: Any, key_prefix: str) -> None:
    redis = cards_redis
    store = CardStore(redis, Keys(key_prefix))
    await store.apply_run(CHAT, "r1", writes(new("tea", seed=1)), now=T0)
    assert await store.vector_space(CHAT) == VectorSpace(model=None, dimension=DIM)
    # the adoption arrives through the delta refresh of the cached matrix
    await store.apply_run(CHAT, "r2", writes(new("coffee", seed=2), embedding_model=E5), now=T0)
    assert await store.vector_space(CHAT) == VectorSpace(model=E5, dimension=DIM)
    assert await store.similar_cards(CHAT, vec(2), 3, model=FARM) == []


async def rewrite_by_fold(
    store: CardStore, survivor: str, text: str, embedding: list[float], model: str
) -> None:
    """A maintenance fold that absorbs nothing and rewrites ``survivor`` with ``model``'s vector."""
    fold = FoldGroup(
        survivor_id=survivor,
        new_fact_text=text,
        new_dedup_hash=f"h-{text}",
        embedding=embedding,
        embedding_model=model,
    )
    await store.fold_groups(CHAT, [fold], now=T0)


async def test_rewrites_and_folds_follow_the_same_rule(store: CardStore) -> None:
    first = await store.apply_run(
        CHAT, "r1", writes(new("tea", seed=1), new("coffee", seed=2), embedding_model=E5), now=T0
    )
    tea, coffee = first.card_ids
    update = ResolutionWrite(
        old_card_id=tea,
        op=ResolutionOp.UPDATE,
        new_fact_text="green tea",
        new_dedup_hash="h-green",
        embedding=vec(9),
    )
    result = await store.apply_run(
        CHAT, "r2", writes(resolutions=[update], embedding_model=FARM), now=T0
    )
    assert result.rewritten == 1
    assert result.vectors_refused == 1
    # the old e5 row stays: the rewritten card is still found by its e5 vector
    found = await store.similar_cards(CHAT, vec(1), 1, model=E5)
    assert found[0][0].fact_text == "green tea"
    await rewrite_by_fold(store, coffee, "strong coffee", vec(8), FARM)
    found = await store.similar_cards(CHAT, vec(8), 2, model=E5)
    assert all(c.fact_text != "strong coffee" or score < 0.99 for c, score in found)
    await rewrite_by_fold(store, coffee, "black coffee", vec(7), E5)
    best = (await store.similar_cards(CHAT, vec(7), 1, model=E5))[0]
    assert best[0].fact_text == "black coffee"
    assert best[1] > 0.99


# --- through a consolidation run --------------------------------------------------------------


class ModelEmbedder(HashEmbedder):
    """A hash embedder that names its model (as the routed one does)."""

    model: str = E5

    async def __call__(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        rows = await super().__call__(texts, idempotency_key=idempotency_key, timeout=timeout)
        return Vectors(rows, model=self.model)


async def alice_says(
    store: CardStore, settings: Settings, embedder: ModelEmbedder, n: int, text: str, fact: str
) -> ConsolidationResult:
    """Run ``run-<n>``: Alice's message ``n`` says ``text``, the extractor answers ``fact``."""
    return await consolidate_run(
        f"run-{n}",
        make_request((n, ALICE, text)),
        store=store,
        extractor=ScriptedExtractor([answer(card(fact, n))]),
        embedder=embedder,
        settings=settings,
    )


async def test_a_run_records_its_model_and_refuses_another(
    store: CardStore, settings: Settings
) -> None:
    passages = ModelEmbedder(CDIM)
    await alice_says(store, settings, passages, 1, "I love green tea", "Alice loves green tea.")
    assert await store.vector_space(CCHAT) == VectorSpace(model=E5, dimension=CDIM)
    # a new chat: no related-card query, the card (and the episode) only
    assert [texts[0] for texts in passages.calls] == ["Alice loves green tea."]

    farm = ModelEmbedder(CDIM)
    farm.model = FARM
    result = await alice_says(
        store, settings, farm, 2, "I drink coffee too", "Alice drinks coffee."
    )
    assert result.cards_inserted == 1
    assert "I drink coffee too" in farm.calls[0][0]  # the lookup (finds nothing: another model)
    cards = {c.fact_text: c for c in await store.all_cards(CCHAT)}
    assert cards["Alice loves green tea."].has_embedding
    assert not cards["Alice drinks coffee."].has_embedding  # refused: another model
    assert await store.vector_space(CCHAT) == VectorSpace(model=E5, dimension=CDIM)


async def test_a_failover_mid_run_never_mixes_two_models_in_one_write() -> None:
    """embed_texts keeps the first chunk's model; vectors of a later chunk by another model
    are left empty (their cards are stored without a row)."""
    from memory_worker.consolidation.model_calls import EMBED_CHUNK, embed_texts

    answers = iter([E5, FARM])

    class Failover(HashEmbedder):
        async def __call__(
            self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
        ) -> list[list[float]]:
            rows = await super().__call__(texts, idempotency_key=idempotency_key, timeout=timeout)
            return Vectors(rows, model=next(answers))

    texts = [f"fact {i}" for i in range(EMBED_CHUNK + 3)]
    vectors, calls = await embed_texts(
        Failover(CDIM), texts, key="k", dimension=CDIM, deadline=None, contacts=False
    )
    assert calls == 2
    assert vectors.model == E5
    assert all(len(v) == CDIM for v in vectors[:EMBED_CHUNK])
    assert vectors[EMBED_CHUNK:] == [[], [], []]


@pytest.mark.parametrize(
    ("component", "accepted"),
    [
        pytest.param(float("nan"), False, id="nan"),
        pytest.param(float("inf"), False, id="inf"),
        pytest.param(float("-inf"), False, id="minus-inf"),
        pytest.param(1.5e308, True, id="huge-but-finite"),  # the components' sum overflows
        pytest.param(0.25, True, id="plain"),
    ],
)
async def test_an_embedding_with_a_non_finite_component_is_a_decode_error(
    component: float, accepted: bool
) -> None:
    """A vector carrying NaN or ±inf is the embedder's protocol error, never stored."""
    from llm_client import DecodeError
    from memory_worker.consolidation.model_calls import embed_texts

    async def embedder(
        texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        return [[1.5e308] * (CDIM - 1) + [component] for _ in texts]

    call = embed_texts(embedder, ["a fact"], key="k", dimension=CDIM, deadline=None, contacts=False)
    if accepted:
        vectors, _ = await call
        assert vectors[0][-1] == component
    else:
        with pytest.raises(DecodeError, match="embedding response"):
            await call


async def test_one_write_fixes_the_space_with_its_first_vector_and_refuses_a_wider_one(
    store: CardStore,
) -> None:
    """A new chat's first write: its first vector fixes the space, and a card of another
    width later in the same write is refused (the script keeps the space it just wrote)."""
    wider = dataclasses.replace(new("coffee", seed=None), embedding=[0.1] * (DIM * 2))
    result = await store.apply_run(
        CHAT, "r1", writes(new("tea"), wider, new("juice", seed=3), embedding_model=E5), now=T0
    )
    assert result.inserted == 3
    assert result.vectors_refused == 1
    assert await store.vector_space(CHAT) == VectorSpace(model=E5, dimension=DIM)
    found = await store.similar_cards(CHAT, vec(3), 5)
    assert {c.fact_text for c, _ in found} == {"tea", "juice"}
