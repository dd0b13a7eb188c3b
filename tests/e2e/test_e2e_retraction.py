"""End-to-end (§10): a retraction means the fact, against a model that rephrases it.

User story: "Brian said 'I live in Lisbon and I like green tea and jasmine tea'; the bot
learned both facts, and an operator retracted the tea. The same message is processed again
(an overlapping window) by a model that restates every fact reworded, in the chat's scope,
in German, Spanish and Russian, and split in two — none of the tea comes back, every
disguise of Lisbon is learned, and a message sent after the retraction teaches the tea
again."

A real worker process, real Valkey, the farm simulator with the local e5 embedder playing an
adversarial model (the ``adversarial`` fault, all its moves). What the adversary makes of
each card is computed from its own rules (:func:`memory_worker.farmsim.adversary.disguise`),
so every disguise is asserted, not the ones a threshold happens to catch: a restatement
from the withdrawn card's own message is refused by its evidence (the tier's figures:
``tests/cards/test_retraction_evidence.py``).

The same disguises from *another* message sent before the retraction (Brian said it twice)
are decided by meaning alone: the reworded, re-scoped, split, German and Spanish ones are
refused (two languages are asked a lower cosine; ``tests/cards/test_retraction_pairs.py``)
and every disguise of Lisbon is learned; the Russian one comes back (e5-small puts it 0.88
from the withdrawn card), asserted as a strict expected failure.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.farmsim.adversary import MOVES, disguise
from memory_worker.models import RunRequest
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle
from tests.support.factories import Row, slice_request
from tests.support.harness import Fleet, completed_run

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("meaning")]

CHAT, BRIAN = 4242, 100
EARLY = datetime(2020, 6, 1, tzinfo=UTC)
RETRACTED_AT = datetime(2021, 1, 1, tzinfo=UTC)
TOLD = "I live in Lisbon and I like green tea and jasmine tea"
TEA = re.compile(r"\btea\b|\btee\b|\bté\b|чай", re.IGNORECASE)
LISBON = re.compile(r"lisbon|lissabon|lisboa|лиссабон", re.IGNORECASE)


def said(mid: int, text: str) -> Row:
    return (mid, BRIAN, "Brian", text)


async def run(q: MemoryQueue, request: RunRequest) -> None:
    result = await q.enqueue(request)
    assert result.run_id is not None
    await completed_run(lambda: q.get_run(result.run_id or ""), timeout=120)


async def known(q: MemoryQueue) -> list[str]:
    """What the bot now knows in the chat: Brian's cards and the chat's."""
    return [c.fact_text for c in await q.visible_cards(CHAT, user_id=BRIAN)]


def disguises(card: Any) -> set[str]:
    """The fact texts the adversary makes of a learned card (every move)."""
    proposed = {
        "scope": "user",
        "user_id": BRIAN,
        "subject": card.subject,
        "predicate": card.predicate,
        "object": card.object,
        "fact_text": card.fact_text,
    }
    return {v["fact_text"] for v in disguise(proposed, MOVES)}


async def learned_and_retracted(q: MemoryQueue, sim: FarmSimulator) -> tuple[Any, Any]:
    """Brian's message learned (the Lisbon card, the tea card); the tea retracted at T."""
    await run(q, slice_request(CHAT, EARLY, [said(1, TOLD)]))
    cards = await q.visible_cards(CHAT, user_id=BRIAN)
    (lisbon,) = [c for c in cards if LISBON.search(c.fact_text)]
    (tea,) = [c for c in cards if TEA.search(c.fact_text)]
    assert tea.source_message_ids == lisbon.source_message_ids == [1]
    await q.retract(tea.ref, actor="ops:ann", reason="not true")
    sim.set_fault("*", Fault(FaultKind.ADVERSARIAL))  # every move
    return lisbon, tea


@pytest.fixture
async def queue(settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path) -> Any:
    fleet = Fleet(settings, tmp_path, env_overrides={"discovery_base_url": sim.base_url})
    q = MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), settings)
    q.clock = RETRACTED_AT.timestamp
    try:
        fleet.start(1)
        yield q
    finally:
        fleet.stop_all()


async def test_a_retracted_fact_does_not_come_back_when_its_message_is_processed_again(
    queue: MemoryQueue, sim: FarmSimulator
) -> None:
    q = queue
    lisbon, tea = await learned_and_retracted(q, sim)
    tea_disguises, lisbon_disguises = disguises(tea), disguises(lisbon)
    # reworded, re-scoped, in de/es/ru, and (the tea: a list) split in two
    assert len(tea_disguises) == 7
    assert len(lisbon_disguises) == 5

    # the same message (id 1, sent at the same minute) in an overlapping window
    window = slice_request(
        CHAT,
        EARLY - timedelta(hours=1),
        [said(1, TOLD)],
        length=timedelta(hours=3),
        first_minute=61,
    )
    await run(q, window)
    now_known = set(await known(q))
    assert not tea_disguises & now_known, sorted(tea_disguises & now_known)
    assert not [f for f in now_known if TEA.search(f)], now_known
    assert lisbon_disguises <= now_known, sorted(lisbon_disguises - now_known)

    # a message sent after the retraction teaches the fact again
    sim.set_fault("*", Fault(FaultKind.ADVERSARIAL, code="rescope"))
    later = RETRACTED_AT + timedelta(days=1)
    await run(q, slice_request(CHAT, later, [said(6, "I like green tea and jasmine tea")]))
    assert tea.fact_text in await known(q)


async def told_again(q: MemoryQueue, sim: FarmSimulator) -> tuple[set[str], set[str], set[str]]:
    """Brian said it again, in another message, before the retraction: the tea's disguises,
    Lisbon's, and what the bot then knows."""
    lisbon, tea = await learned_and_retracted(q, sim)
    await run(q, slice_request(CHAT, EARLY + timedelta(days=1), [said(5, TOLD)]))
    return disguises(tea), disguises(lisbon), set(await known(q))


def in_russian(texts: set[str]) -> set[str]:
    return {t for t in texts if re.search("[а-яё]", t, re.IGNORECASE)}


async def test_a_retracted_fact_does_not_come_back_from_another_older_message(
    queue: MemoryQueue, sim: FarmSimulator
) -> None:
    """Reworded, re-scoped, split, in German and in Spanish: refused by meaning alone (the
    Russian restatement is the next test's); every disguise of Lisbon is learned."""
    tea_disguises, lisbon_disguises, now_known = await told_again(queue, sim)
    assert len(tea_disguises - in_russian(tea_disguises)) == 6
    came_back = (tea_disguises - in_russian(tea_disguises)) & now_known
    assert not came_back, sorted(came_back)
    assert lisbon_disguises <= now_known, sorted(lisbon_disguises - now_known)


@pytest.mark.xfail(
    strict=True,
    reason="another message than the withdrawn card's is decided by meaning alone: with "
    "e5-small the Russian restatement of the tea lies 0.88 from it, below the 0.915 asked "
    "of two languages, and names its values in words no transliteration meets "
    "(жасминовый / jasmine)",
)
async def test_a_retracted_fact_does_not_come_back_in_russian_from_another_older_message(
    queue: MemoryQueue, sim: FarmSimulator
) -> None:
    tea_disguises, _, now_known = await told_again(queue, sim)
    assert in_russian(tea_disguises)
    assert not tea_disguises & now_known, sorted(tea_disguises & now_known)
