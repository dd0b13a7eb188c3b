"""A retraction against the same messages processed again (§10, the evidence tier), on real
Valkey with vectors chosen by hand: one message taught two facts ("I live in Lisbon and
love green tea"), the tea was retracted; a run over that message again does not learn the
tea back whatever its wording, scope or language — at cosines the meaning tier alone lets
through — while the Lisbon fact from the same message is learned, the same tea from
another older message is decided by meaning alone, and a newer message teaches it again.
The chat's cards from that message (its siblings) are what tells the two facts apart: with
none seen, the higher threshold applies. A retraction landing between the check and the
write is honoured (the e5 figures are ``test_retraction_evidence.py``'s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from memory_worker.cards import Scope, withdrawals
from memory_worker.cards.edits import retract_card
from memory_worker.cards.store import CardStore
from memory_worker.cards.withdrawn import Thresholds
from memory_worker.keys import Keys
from tests.support.cards import ALICE, CHAT, DIM, T0, apply, new

RETRACTED_AT = T0 + timedelta(days=1)
AFTER = T0 + timedelta(days=2)
#: The message both facts came from, and another one sent before the retraction too.
MESSAGE, OTHER = 1, 2


def unit(*coords: float) -> list[float]:
    out = np.zeros(DIM)
    out[: len(coords)] = coords
    return [float(x) for x in out / np.linalg.norm(out)]


TEA = unit(1.0)
LISBON = unit(0.80, 0.0, 0.6)  # 0.80 from the tea, as e5 puts two facts about one person


def from_tea(cos: float, axis: int = 1) -> list[float]:
    """A unit vector at ``cos`` from :data:`TEA`, away from :data:`LISBON` (a tea restatement)."""
    coords = [0.0] * (axis + 1)
    coords[0], coords[axis] = cos, float(np.sqrt(1 - cos * cos))
    return unit(*coords)


def near_lisbon(cos: float) -> list[float]:
    """A unit vector at ``cos`` from :data:`LISBON` (a Lisbon restatement)."""
    away = np.asarray(unit(0.0, 0.0, 0.0, 1.0))
    out = cos * np.asarray(LISBON) + float(np.sqrt(1 - cos * cos)) * away
    return [float(x) for x in out]


@pytest.fixture
def store(redis: Any, key_prefix: str) -> CardStore:
    return CardStore(redis, Keys(key_prefix))


async def told(store: CardStore) -> str:
    """Message 1 taught the tea and Lisbon at T0; the tea was retracted a day later."""
    tea = new("Alice loves green tea.", obj="green tea", sources=(MESSAGE,), embedding=TEA)
    lisbon = new(
        "Alice lives in Lisbon.",
        predicate="lives_in",
        obj="Lisbon",
        sources=(MESSAGE,),
        embedding=LISBON,
    )
    result = await apply(store, "first", tea, lisbon)
    tea_id = result.card_ids[0]
    done = await retract_card(store, CHAT, tea_id, actor="ops", reason="", now=RETRACTED_AT)
    assert done.done
    return tea_id


def disguises(at: Any = T0, sources: Sequence[int] = (MESSAGE,)) -> list[Any]:
    """The tea as a model gives it again — below the meaning tier's thresholds (0.98 and
    0.93) — and the Lisbon fact, reworded and translated."""
    kw: dict[str, Any] = {"at": at, "sources": tuple(sources)}
    return [
        new("Alice is fond of green tea.", obj="green tea", embedding=from_tea(0.88), **kw),
        new(
            "Alice is a big tea drinker.",
            obj="tea",
            scope=Scope.CHAT,
            user=None,
            embedding=from_tea(0.86, axis=3),
            **kw,
        ),
        new(
            "Алиса любит зелёный чай.",
            subject="Алиса",
            obj="зелёный чай",
            embedding=from_tea(0.87, axis=4),
            **kw,
        ),
        new(
            "Alice wohnt in Lissabon.",
            predicate="wohnt in",
            obj="Lissabon",
            embedding=near_lisbon(0.97),
            **kw,
        ),
    ]


async def visible(store: CardStore) -> set[str]:
    return {c.fact_text for c in await store.visible_cards(CHAT, user_id=ALICE)}


async def test_the_same_message_again_does_not_teach_the_withdrawn_fact_in_any_disguise(
    store: CardStore,
) -> None:
    """The tea disguises from message 1 are refused and its Lisbon fact learned; the same
    disguises from another message sent before the retraction are decided by meaning alone
    (below its thresholds: learned); a message sent after it teaches the fact again."""
    await told(store)
    result = await apply(store, "replay", *disguises())
    assert (result.inserted, result.retracted) == (1, 3)
    assert await visible(store) == {"Alice lives in Lisbon.", "Alice wohnt in Lissabon."}
    other = await apply(store, "other", *disguises(sources=(OTHER,)))
    assert (other.inserted, other.retracted) == (3, 0)
    later = await apply(store, "later", *disguises(at=AFTER, sources=(MESSAGE, 7)))
    assert later.retracted == 0


async def test_without_its_siblings_the_higher_threshold_applies(
    store: CardStore, redis: Any, key_prefix: str
) -> None:
    """A store that looks for no sibling treats the message as one that taught only the
    withdrawn fact: the higher threshold (0.905) — the 0.86–0.88 restatements are learned,
    one at 0.92 is not."""
    await told(store)
    blind = CardStore(redis, Keys(key_prefix), thresholds=replace(Thresholds(), sibling_reads=0))
    result = await apply(blind, "replay", *disguises())
    assert (result.inserted, result.retracted) == (4, 0)
    closer = new("Alice drinks green tea.", obj="tea", sources=(MESSAGE,), embedding=from_tea(0.92))
    assert (await apply(blind, "closer", closer)).retracted == 1


async def test_a_retraction_landing_between_the_check_and_the_write_is_honoured(
    store: CardStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check ran before the retraction (nothing withdrawn then, the tea restatement
    free to go); the write script sees the withdrawn marks changed and sends the run back
    to check again, which refuses it by its evidence."""
    tea = new("Alice loves green tea.", obj="green tea", sources=(MESSAGE,), embedding=TEA)
    lisbon = new("Alice lives in Lisbon.", obj="Lisbon", sources=(MESSAGE,), embedding=LISBON)
    tea_id = (await apply(store, "first", tea, lisbon)).card_ids[0]
    real, calls = withdrawals.check, []

    async def check_then_retract(*args: Any, **kw: Any) -> withdrawals.Check:
        found = await real(*args, **kw)
        calls.append(found.marks)
        if len(calls) == 1:
            await retract_card(store, CHAT, tea_id, actor="ops", reason="", now=RETRACTED_AT)
        return found

    monkeypatch.setattr(withdrawals, "check", check_then_retract)
    fond = new("Alice is fond of green tea.", obj="green tea", sources=(MESSAGE,))
    result = await apply(store, "replay", replace(fond, embedding=from_tea(0.88)))
    assert calls == [0, 1]
    assert (result.inserted, result.retracted) == (0, 1)
