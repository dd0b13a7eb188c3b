"""A retraction means the fact, not the string (§10), on real Valkey with vectors chosen by
hand: a card that states a withdrawn fact in other words, another scope or another language
is not learned again from messages sent before the withdrawal — through a run's write, also
when the retraction lands between the check and the write — while a newer message, another
value or another person's card is; a correction withdraws the old fact the same way; a
forget erases the withdrawn rows (the e5 figures are ``test_retraction_pairs.py``'s).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from memory_worker.cards import Scope, withdrawals
from memory_worker.cards.corrections import correction_plan
from memory_worker.cards.edits import correct_card, correction_refused, retract_card
from memory_worker.cards.forget import CardForget
from memory_worker.cards.store import CardStore
from memory_worker.keys import Keys
from tests.support.cards import ALICE, BOB, CHAT, DIM, T0, apply, new

RETRACTED_AT = T0 + timedelta(days=1)
BEFORE, AFTER = T0 + timedelta(hours=2), T0 + timedelta(days=2)
BASE = [1.0] + [0.0] * (DIM - 1)


@pytest.fixture
def store(redis: Any, key_prefix: str) -> CardStore:
    return CardStore(redis, Keys(key_prefix))


def toward(cos: float, axis: int = 1) -> list[float]:
    """A unit vector at exactly ``cos`` from :data:`BASE` (another ``axis``: another one)."""
    out = [0.0] * DIM
    out[0], out[axis] = cos, float(np.sqrt(1 - cos * cos))
    return out


async def retracted(store: CardStore, fact: str = "Alice likes green tea.", **kw: Any) -> str:
    """A card learned at T0, retracted a day later; its id."""
    result = await apply(store, "seed", new(fact, obj="green tea", embedding=BASE, **kw))
    (card_id,) = result.card_ids
    done = await retract_card(store, CHAT, card_id, actor="ops", reason="", now=RETRACTED_AT)
    assert done.done
    return card_id


async def learned(
    store: CardStore, run: str, fact: str, vector: Sequence[float], **kw: Any
) -> bool:
    """Whether a run whose message was sent at ``at`` (default: before the retraction)
    stores ``fact`` (stated with ``vector``); another message than the withdrawn card's
    (the meaning tier; the same message is the evidence tier's, ``test_retraction_evidence``)."""
    kw.setdefault("at", BEFORE)
    kw.setdefault("sources", (2,))
    kw.setdefault("obj", "")
    result = await apply(store, run, new(fact, embedding=vector, **kw))
    facts = {c.fact_text for c in await store.visible_cards(CHAT, user_id=ALICE)}
    assert (fact in facts) == (result.inserted == 1) == (result.retracted == 0)
    return fact in facts


@pytest.mark.parametrize(
    ("fact", "cos", "card"),
    [
        pytest.param("Alice enjoys drinking green tea.", 0.95, {"obj": "green tea"}, id="reworded"),
        pytest.param(
            "Alice is a fan of green tea.",
            0.95,
            {"obj": "green tea", "scope": Scope.CHAT, "user": None},
            id="rescoped-to-the-chat",
        ),
        pytest.param(
            "Алиса любит зелёный чай.",
            0.985,
            {"obj": "зелёный чай", "subject": "Алиса"},
            id="translated",
        ),
        pytest.param("Alice likes green tea.", 1.0, {"obj": "green tea"}, id="word-for-word"),
    ],
)
async def test_a_withdrawn_fact_in_other_words_is_not_learned_from_older_messages(
    store: CardStore, fact: str, cos: float, card: dict[str, Any]
) -> None:
    await retracted(store)
    assert not await learned(store, "old", fact, toward(cos), **card)
    assert await learned(store, "new", fact, toward(cos), at=AFTER, **card)


@pytest.mark.parametrize(
    ("fact", "cos", "card"),
    [
        pytest.param("Alice likes black coffee.", 0.95, {"obj": "black coffee"}, id="value"),
        pytest.param(
            "Bob enjoys green tea.",
            0.99,
            {"obj": "green tea", "subject": "Bob", "user": BOB},
            id="another-user",
        ),
        pytest.param(
            "Bob enjoys green tea.",
            0.99,
            {"obj": "green tea", "subject": "Bob", "scope": Scope.CHAT, "user": None},
            id="another-name",
        ),
        pytest.param("Alice grows tea.", 0.92, {"obj": "tea"}, id="far"),
    ],
)
async def test_a_different_fact_from_older_messages_is_still_learned(
    store: CardStore, fact: str, cos: float, card: dict[str, Any]
) -> None:
    await retracted(store)
    older = new(fact, at=BEFORE, embedding=toward(cos), sources=(2,), **card)
    result = await apply(store, "old", older)
    assert (result.inserted, result.retracted) == (1, 0)


async def test_a_retraction_landing_between_the_check_and_the_write_is_honoured(
    store: CardStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check ran before the retraction (nothing withdrawn then); the write script sees
    the chat's withdrawn marks changed and sends the run back to check again."""
    result = await apply(store, "seed", new("Alice likes green tea.", embedding=BASE))
    (card_id,) = result.card_ids
    real, calls = withdrawals.check, []

    async def check_then_retract(*args: Any, **kw: Any) -> withdrawals.Check:
        found = await real(*args, **kw)
        calls.append(found.marks)
        if len(calls) == 1:
            await retract_card(store, CHAT, card_id, actor="ops", reason="", now=RETRACTED_AT)
        return found

    monkeypatch.setattr(withdrawals, "check", check_then_retract)
    reworded = new("Alice enjoys green tea.", at=BEFORE, embedding=toward(0.97))
    result = await apply(store, "old", reworded)
    assert calls == [0, 1]
    assert (result.inserted, result.retracted) == (0, 1)


async def test_a_correction_withdraws_the_old_fact_by_meaning(store: CardStore) -> None:
    seed = new("Alice lives in Lisbon.", predicate="lives_in", obj="Lisbon", embedding=BASE)
    (card_id,) = (await apply(store, "seed", seed)).card_ids
    old = await store.get_card(CHAT, card_id)
    assert old is not None
    plan = correction_plan(
        old.scope_key, old.subject, old.predicate, "Alice lives in Porto.", actor="ops", model=""
    )
    porto = toward(0.9, axis=2)
    assert await correction_refused(store, old, plan, embedding=porto, now=RETRACTED_AT) is None
    done = await correct_card(
        store, CHAT, card_id, plan, embedding=porto, sk=old.scope_key, now=RETRACTED_AT
    )
    assert done.created
    reworded = new("Alice resides in Lisbon.", obj="Lisbon", at=BEFORE, embedding=toward(0.95))
    result = await apply(store, "old", reworded)
    assert (result.inserted, result.retracted) == (0, 1)


async def test_a_correction_withdrawn_later_than_its_time_is_refused(store: CardStore) -> None:
    """A correction is asserted at its own time: only a withdrawal stamped after it (clocks
    apart) refuses it — the rule of every card write."""
    await retracted(store)
    (live_id,) = (await apply(store, "other", new("Alice skis.", embedding=toward(0.1)))).card_ids
    old = await store.get_card(CHAT, live_id)
    assert old is not None
    plan = correction_plan(
        old.scope_key, "Alice", "likes", "Alice enjoys green tea.", actor="ops", model=""
    )
    near = toward(0.97)
    found = await correction_refused(store, old, plan, embedding=near, now=BEFORE)
    assert found is not None
    assert await correction_refused(store, old, plan, embedding=near, now=AFTER) is None


async def test_a_forget_erases_the_withdrawn_rows(
    store: CardStore, redis: Any, key_prefix: str
) -> None:
    await retracted(store)
    assert (await store.chat_vectors(CHAT)).withdrawn_marks == 1
    forget = CardForget(redis, Keys(key_prefix), chunk=10)
    await forget.forget_user(CHAT, ALICE, await forget.plan_user(CHAT, ALICE))
    matrix = await store.chat_vectors(CHAT)
    assert (matrix.withdrawn_marks, matrix.count) == (0, 0)
    assert await learned(store, "old", "Alice enjoys green tea.", toward(0.97), obj="green tea")
