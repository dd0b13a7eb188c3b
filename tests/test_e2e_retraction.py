"""End-to-end (§10): a retraction means the fact, against a model that rephrases it.

User story: "an operator retracts what the bot learned about Brian; the farm's model, run
again over Brian's older messages, restates it reworded, in the chat's scope, in German and
Spanish, and split in two — none of it comes back, while another fact from those messages is
learned, and a newer message restating it is learned too."

A real worker process, real Valkey, the farm simulator with the local e5 embedder playing an
adversarial model (the ``adversarial`` fault). The disguises asserted here are ones the
default thresholds catch for these facts; how often each kind of disguise is caught in
general is the retraction pairs' figure (``tests/test_retraction_pairs.py``: a Russian
translation of these two facts, for one, comes back).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.models import RunRequest
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle
from tests.support.factories import Row, slice_request
from tests.support.harness import Fleet, completed_run

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("meaning")]

CHAT, BRIAN = 4242, 100
RETRACTED_AT = datetime(2021, 1, 1, tzinfo=UTC)
LISBON = re.compile(r"lisbon|lissabon|lisboa|лиссабон", re.IGNORECASE)
TEA = re.compile(r"\btea\b|\btee\b|\bté\b|чай", re.IGNORECASE)
BAKERY = re.compile(r"bakery|bäckerei|panadería", re.IGNORECASE)


def said(mid: int, text: str) -> Row:
    return (mid, BRIAN, "Brian", text)


async def run(q: MemoryQueue, request: RunRequest) -> None:
    result = await q.enqueue(request)
    assert result.run_id is not None
    await completed_run(lambda: q.get_run(result.run_id or ""), timeout=120)


async def facts(q: MemoryQueue) -> list[str]:
    """What the bot now knows in the chat, Brian's cards and the chat's."""
    return [c.fact_text for c in await q.visible_cards(CHAT, user_id=BRIAN)]


async def test_a_retracted_fact_does_not_come_back_from_a_model_that_rephrases_it(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    fleet = Fleet(settings, tmp_path, env_overrides={"discovery_base_url": sim.base_url})
    q = MemoryQueue(RedisHandle(redis, reveal(settings.redis_url) or ""), settings)
    q.clock = RETRACTED_AT.timestamp
    try:
        fleet.start(1)
        early = datetime(2020, 6, 1, tzinfo=UTC)
        told = [said(1, "I like green tea and jasmine tea"), said(2, "I live in Lisbon")]
        await run(q, slice_request(CHAT, early, told))
        learned = await q.visible_cards(CHAT, user_id=BRIAN)
        assert len(learned) == 2
        assert all(LISBON.search(c.fact_text) or TEA.search(c.fact_text) for c in learned)
        for card in learned:
            await q.retract(card.ref, actor="ops:ann", reason="not true")

        # the model restates both facts from older messages, in every disguise asked for
        sim.set_fault(
            "*", Fault(FaultKind.ADVERSARIAL, code="reword,rescope,translate:de,translate:es")
        )
        again = [said(3, "I live in Lisbon"), said(4, "I work at a bakery")]
        await run(q, slice_request(CHAT, early + timedelta(days=1), again))
        sim.set_fault("*", Fault(FaultKind.ADVERSARIAL, code="reword,rescope,split"))
        await run(
            q,
            slice_request(
                CHAT, early + timedelta(days=2), [said(5, "I like green tea and jasmine tea")]
            ),
        )
        now_known = await facts(q)
        assert not [f for f in now_known if LISBON.search(f) or TEA.search(f)], now_known
        bakery = [f for f in now_known if BAKERY.search(f)]
        assert len(bakery) >= 4, now_known  # the other fact, in each of its disguises

        # a message sent after the retraction teaches the fact again
        sim.set_fault("*", Fault(FaultKind.ADVERSARIAL, code="rescope"))
        later = RETRACTED_AT + timedelta(days=1)
        await run(q, slice_request(CHAT, later, [said(6, "I live in Lisbon")]))
        assert "Brian lives in Lisbon." in await facts(q)
    finally:
        fleet.stop_all()
