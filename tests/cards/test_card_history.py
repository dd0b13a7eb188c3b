"""A card's history and as-of reads (§13) on real Valkey, with the real e5
embedder on the local route.

``MemoryQueue.history`` answers one event per change, oldest first, with its time, actor and
the run or request that caused it, across a run's supersede, ``correct``, ``retract``,
``remember`` and an import; a forget (the user's, the chat's) erases it with the card.
``visible_cards``/``recall``/``context`` with ``as_of`` read the memory as it stood at a
moment: a superseded or retracted card that was held then is found, one made later is not.
The console's card page and ``memory-worker cards history`` show the same events
(``tests/console/test_console_card_history.py``, ``tests/cli/test_cli_card_history.py``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from memory_worker.api import MemoryQueue
from memory_worker.cards import EventKind
from memory_worker.cards.codec import to_ms
from memory_worker.errors import CardNotFound, InvalidCorrection, InvalidInput
from memory_worker.settings import Settings
from memory_worker.storage.connections import RedisHandle
from tests.support.card_history import (
    ALICE,
    CHAT,
    SECOND,
    T1,
    T2,
    T3,
    T4,
    T5,
    T6,
    T7,
    at,
    e5_settings,
    lives,
    run,
    shape,
    story,
)
from tests.support.card_history import queue as queue  # the fixture
from tests.support.cards import T0
from tests.support.console import make_client as make_client  # the fixture
from tests.support.logs import capture_logs


async def test_history_across_a_supersede_a_correction_a_retraction_and_remember(
    queue: MemoryQueue,
) -> None:
    await story(queue)
    ids = {c.fact_text: c.id for c in await queue.cards.all_cards(CHAT)}
    lisbon, porto, braga = ids["Alice lives in Lisbon"], ids["Alice lives in Porto"], ids["Alice lives in Braga"]  # fmt: skip
    veg = ids["Alice is vegetarian"]
    assert shape(await queue.history(f"{CHAT}:{lisbon}")) == [
        ("created", T1, "run", "worker", "r1", None, False),
        ("observed", T2, "run", "worker", "r2", None, False),
        ("superseded", T3, "run", "worker", "r3", porto, False),
    ]
    assert shape(await queue.history(f"{CHAT}:{porto}")) == [
        ("created", T3, "run", "worker", "r3", None, False),
        ("supersedes", T3, "run", "worker", "r3", lisbon, False),
        ("corrected", T4, "correct", "ops:ann", "req-7", braga, False),
    ]
    card = await queue._card(CHAT, braga)
    assert shape(await queue.history(card)) == [  # a Card works as well as its ref
        ("created", T4, "correct", "ops:ann", "req-7", porto, False),
        ("retracted", T5, "retract", "ops:bob", "req-8", None, False),
    ]
    assert shape(await queue.history(f"{CHAT}:{veg}")) == [
        ("created", T6, "remember", "bot:1", "req-9", None, False),
        ("observed", T7, "remember", "bot:1", "req-10", None, False),
    ]
    # no event holds a reason or any text but ids
    assert "not sure" not in str(await queue.history(card))
    with pytest.raises(CardNotFound):
        await queue.history(f"{CHAT}:999")
    with pytest.raises(InvalidCorrection):
        await queue.retract(f"{CHAT}:5", actor="ops", reason="r", request_id="x" * 201)
    with pytest.raises(InvalidCorrection):
        await queue.retract(f"{CHAT}:5", actor="ops", reason="r", request_id="a\nb")


async def test_a_history_keeps_its_first_event_and_the_newest(
    settings: Settings, redis: Any, tmp_path: Path
) -> None:
    s = e5_settings(settings, tmp_path, card_history_max_events=3)
    async with MemoryQueue(RedisHandle(redis, ""), s) as q:
        for i in range(6):
            at(q, T0 + i * SECOND)
            card = await q.remember(CHAT, "Alice skis", actor="bot", request_id=f"q{i}")
        events = await q.history(card)
    assert [(e.kind.value, e.request_id) for e in events] == [
        ("created", "q0"),
        ("observed", "q4"),
        ("observed", "q5"),
    ]


async def test_an_imported_card_keeps_its_history_and_says_when_it_came(
    queue: MemoryQueue, settings: Settings, redis: Any, tmp_path: Path
) -> None:
    await story(queue)
    lines = list((await queue.export(CHAT)).lines())
    ids = {c.fact_text: c.id for c in await queue.cards.all_cards(CHAT)}
    lisbon, porto, braga = (ids[f"Alice lives in {c}"] for c in ("Lisbon", "Porto", "Braga"))
    want = {ref: shape(await queue.history(f"{CHAT}:{ref}")) for ref in ids.values()}
    when = T7 + timedelta(days=1)
    imported = ("imported", when, "import", "ops:imp", None, None, False)
    other = e5_settings(settings, tmp_path, key_prefix=settings.key_prefix + "b:")
    async with MemoryQueue(RedisHandle(redis, ""), other) as target:
        at(target, when)
        await target.import_export(lines, actor="ops:imp")
        for ref, events in want.items():  # every event the file carried, then the import's
            assert shape(await target.history(f"{CHAT}:{ref}")) == [*events, imported]
        assert [e[0] for e in want[lisbon]] == ["created", "observed", "superseded"]
        # the import keeps what the memory held when: as of T4 + 1 s, Braga was live
        then = await target.visible_cards(CHAT, user_id=ALICE, as_of=T4 + SECOND)
        assert [c.fact_text for c in then] == ["Alice lives in Braga", "Bob works as a nurse"]
        again = list((await target.export(CHAT)).lines())
        assert again[1:] == lines[1:]  # an export leaves the import's own events out

    # a file from before exports carried histories: the cards' fields tell their story
    old = [lines[0], *(_without_history(line) for line in lines[1:])]
    third = e5_settings(settings, tmp_path, key_prefix=settings.key_prefix + "c:")
    async with MemoryQueue(RedisHandle(redis, ""), third) as target:
        at(target, when)
        await target.import_export(old, actor="ops:imp")
        assert shape(await target.history(f"{CHAT}:{lisbon}")) == [
            ("created", T1, "run", None, "r1", None, True),
            ("superseded", T3, "", None, None, porto, True),
            imported,
        ]
        assert shape(await target.history(f"{CHAT}:{braga}")) == [
            ("created", T4, "correct", "ops:ann", None, porto, True),
            ("retracted", T5, "", "ops:bob", None, None, True),
            imported,
        ]


def _without_history(line: bytes) -> bytes:
    data = orjson.loads(line)
    data.pop("history", None)
    return orjson.dumps(data) + b"\n"


async def test_forget_erases_a_card_s_history_with_it(queue: MemoryQueue) -> None:
    await story(queue)
    store = queue.cards
    key = store.key(CHAT, "history")
    alices = [c.id for c in await store.all_cards(CHAT) if c.user_id == ALICE]
    assert len(alices) == 4
    assert await store.redis.hlen(key) == 5  # type: ignore[misc]
    await queue.forget(CHAT, user_id=ALICE)
    assert sorted(k.decode() for k in await store.redis.hkeys(key)) == ["2"]  # type: ignore[misc]
    for card_id in alices:
        with pytest.raises(CardNotFound):
            await queue.history(f"{CHAT}:{card_id}")
    assert [e.kind for e in await queue.history(f"{CHAT}:2")] == [EventKind.CREATED]
    await queue.forget(CHAT)
    assert await store.redis.exists(key) == 0
    with pytest.raises(CardNotFound):
        await queue.history(f"{CHAT}:2")


async def test_as_of_reads_the_memory_as_it_stood_around_a_supersede_and_a_retraction(
    queue: MemoryQueue,
) -> None:
    await story(queue)

    async def facts(moment: datetime) -> list[str]:
        held = await queue.visible_cards(CHAT, user_id=ALICE, as_of=moment)
        return [c.fact_text for c in held if c.user_id == ALICE]

    assert await facts(T1 - SECOND) == []
    assert await facts(T3 - SECOND) == ["Alice lives in Lisbon"]  # superseded since
    assert await facts(T3) == ["Alice lives in Porto"]
    assert await facts(T5 - SECOND) == ["Alice lives in Braga"]  # retracted since
    assert await facts(T5) == []
    assert await facts(T7) == ["Alice is vegetarian"]
    now = await queue.visible_cards(CHAT, user_id=ALICE)
    assert await queue.visible_cards(CHAT, user_id=ALICE, as_of=queue._now()) == now
    assert [c.fact_text for c in await queue.visible_cards(CHAT, as_of=T3)] == [
        "Bob works as a nurse"  # Alice's cards are hers: as_of keeps the scopes
    ]

    question = "Where does Alice live?"

    async def recalled(moment: datetime) -> list[str]:
        hits = await queue.recall(CHAT, question, k=2, user_id=ALICE, as_of=moment)
        return [h.card.fact_text for h in hits]

    assert (await recalled(T3 - SECOND))[0] == "Alice lives in Lisbon"
    assert (await recalled(T4 + SECOND))[0] == "Alice lives in Braga"
    assert "Alice lives in Braga" not in await recalled(T5 + SECOND)
    assert await recalled(T1 - SECOND) == []
    assert all("lives in" not in f for f in await recalled(T7))  # none live now

    then = await queue.context(CHAT, user_id=ALICE, query=question, as_of=T3 - SECOND)
    assert {c.fact_text for c in then.cards} == {"Alice lives in Lisbon", "Bob works as a nurse"}
    assert "Lisbon" in then.text
    quiet = await queue.context(CHAT, user_id=ALICE, as_of=T4 + SECOND)
    assert "Alice lives in Braga" in [c.fact_text for c in quiet.cards]
    assert "Braga" not in (await queue.context(CHAT, user_id=ALICE, query=question)).text

    naive = datetime(2026, 3, 1, 12)
    for call in (
        queue.visible_cards(CHAT, as_of=naive),
        queue.recall(CHAT, question, as_of=naive),
        queue.context(CHAT, as_of=naive),
        queue.visible_cards(CHAT, as_of="2026-03-01"),  # type: ignore[arg-type]
    ):
        with pytest.raises(InvalidInput, match="as_of"):
            await call


async def test_garbage_in_a_stored_history_is_skipped_and_the_next_event_starts_it_again(
    queue: MemoryQueue,
) -> None:
    await run(queue, "r1", T1, lives("Lisbon", T1))
    store, ref = queue.cards, f"{CHAT}:1"
    key = store.key(CHAT, "history")
    await store.redis.hset(key, "1", b'{"k": "created", "at": "1000"}\n7\n{"k": "bogus"}\n')  # type: ignore[misc,arg-type]
    with capture_logs() as logs:
        events = await queue.history(ref)
    assert [(e.kind.value, to_ms(e.at), e.derived) for e in events] == [("created", "1000", False)]
    assert [e["skipped"] for e in logs if e["event"] == "cards.history_skipped"] == [2]
    await store.redis.hset(key, "1", b"\xff not a history")  # type: ignore[misc,arg-type]
    assert shape(await queue.history(ref)) == [("created", T1, "run", None, "r1", None, True)]
    at(queue, T2)
    await queue.retract(ref, actor="ops", reason="r")  # the script starts the history again
    assert shape(await queue.history(ref)) == [
        ("created", T1, "run", None, "r1", None, True),
        ("retracted", T2, "retract", "ops", None, None, False),
    ]
