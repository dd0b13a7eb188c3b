"""User story: chat slices become memory through the farm — and a farm outage writes nothing.

``consolidate_run`` and the merge pass drive real ``DiscoveryClient``s over
loopback HTTP against the farm simulator (its rule-based extractor and
hashed embedder), with a real Redis behind the card store.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from llm_client import BackendUnavailable, DecodeError
from memory_worker.cards import CardStatus, CardStore
from memory_worker.consolidation.consolidate import consolidate_run
from memory_worker.farmsim import Fault, FaultKind
from memory_worker.models import RunRequest
from memory_worker.settings import Settings
from memory_worker.upkeep.maintenance import merge_pass
from tests.support.cards import store as store  # the fixture
from tests.support.dumps import dump_chat
from tests.support.factories import Row, slice_request
from tests.support.farm import Farm

CHAT = -100777
ALICE, BOB, SPAMMER = 11, 12, 666


def slice_of(start: datetime, *rows: Row, **flags: Any) -> RunRequest:
    return slice_request(CHAT, start, rows, length=timedelta(days=1), first_minute=0, extra=flags)


async def consolidate(
    farm: Farm, store: CardStore, settings: Settings, run_id: str, request: RunRequest
) -> Any:
    return await consolidate_run(
        run_id,
        request,
        store=store,
        extractor=farm.extractor,
        embedder=farm.embedder,
        settings=settings,
        now=request.range_end,
    )


JAN = datetime(2026, 1, 10, 9, tzinfo=UTC)
APR = datetime(2026, 4, 10, 9, tzinfo=UTC)


async def test_chat_slices_become_memory_through_the_farm(
    farm: Farm, store: CardStore, settings: Settings
) -> None:
    first = slice_of(
        JAN,
        (1, ALICE, "Alice", "I live in Berlin"),
        (2, ALICE, "Alice", "I love sushi"),
        (3, BOB, "Bob", "I work at Acme"),
        (4, SPAMMER, "Promo", "I love helping people earn $500 per day, no experience, DM me"),
        (5, 900, "HelperBot", "I love answering questions"),
        **{"5": {"is_bot": True}},
    )
    result = await consolidate(farm, store, settings, "run-jan", first)
    assert result.noise_dropped == {"bot": 1, "spam": 1}
    assert result.cards_inserted == 3
    facts = {c.fact_text: c for c in await store.all_cards(CHAT)}
    assert not any("earn" in f or "answering" in f for f in facts)
    berlin = next(c for c in facts.values() if c.predicate == "lives_in")
    assert (berlin.user_id, berlin.scope.value, berlin.card_type) == (ALICE, "user", "identity")

    second = slice_of(
        APR,
        (10, ALICE, "Alice", "I moved to Lisbon"),
        (11, ALICE, "Alice", "I love sushi"),
        (12, ALICE, "Alice", "I love tea"),
        (13, ALICE, "Alice", "I love tea with milk"),
    )
    result = await consolidate(farm, store, settings, "run-apr", second)
    assert (result.cards_superseded, result.cards_reinforced) == (1, 1)
    cards = await store.all_cards(CHAT)
    old = next(c for c in cards if c.object == "Berlin")
    assert old.status == CardStatus.SUPERSEDED
    assert old.valid_until is not None
    lisbon = next(c for c in cards if c.object == "Lisbon")
    assert old.superseded_by == lisbon.id
    sushi = next(c for c in cards if c.object == "sushi")
    assert sushi.observation_count == 2
    visible = await store.visible_cards(CHAT, user_id=ALICE, now=APR + timedelta(days=1))
    assert "Berlin" not in {c.object for c in visible}
    near = await store.similar_cards(
        CHAT,
        (await farm.embedder(["Alice lives in Lisbon"], idempotency_key="q", timeout=5))[0],
        1,
        now=APR,
    )
    assert near[0][0].object == "Lisbon"

    merged = await merge_pass(
        store,
        farm.extractor,
        embedder=farm.embedder,
        settings=settings,
        now=APR + timedelta(days=1),
    )
    assert merged.groups_merged == 1
    live = [c for c in await store.all_cards(CHAT) if c.live and c.user_id == ALICE]
    tea = [c for c in live if "tea" in c.fact_text]
    assert len(tea) == 1
    assert tea[0].fact_text.endswith("tea with milk.")


async def test_a_farm_outage_writes_nothing_and_the_rerun_succeeds(
    farm: Farm, store: CardStore, settings: Settings
) -> None:
    await consolidate(
        farm, store, settings, "run-jan", slice_of(JAN, (1, ALICE, "Alice", "I live in Berlin"))
    )
    before = await dump_chat(store, CHAT)
    request = slice_of(APR, (10, ALICE, "Alice", "I moved to Lisbon"))
    outage = Fault(
        kind=FaultKind.JOB_FAILED,
        code="UPSTREAM_ERROR",
        message="[Errno -3] Temporary failure in name resolution",
    )
    farm.sim.set_fault(settings.extraction_service, outage)
    with pytest.raises(BackendUnavailable):
        await consolidate(farm, store, settings, "run-apr", request)
    assert await dump_chat(store, CHAT) == before
    farm.sim.clear_faults()
    farm.sim.set_fault(settings.embedder_service, outage)
    with pytest.raises(BackendUnavailable):
        await consolidate(farm, store, settings, "run-apr", request)
    assert await dump_chat(store, CHAT) == before
    farm.sim.set_fault(settings.extraction_service, Fault(kind=FaultKind.GARBAGE))
    farm.sim.clear_faults(settings.embedder_service)
    with pytest.raises(DecodeError):
        await consolidate(farm, store, settings, "run-apr", request)
    assert await dump_chat(store, CHAT) == before
    farm.sim.clear_faults()
    result = await consolidate(farm, store, settings, "run-apr", request)
    assert result.cards_superseded == 1
