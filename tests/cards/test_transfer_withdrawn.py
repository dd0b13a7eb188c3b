"""An import obeys the chat's withdrawals as a run does (§10, §13), on real Valkey with
vectors chosen by hand:

- a file's card stating a fact the chat withdrew, reworded and from another older message,
  is left out and counted (the meaning tier); one from the withdrawn card's own message, at
  a cosine only the evidence tier refuses, too — while that message's other fact is
  imported;
- a corrected-away card is imported withdrawn, as a retracted one is: its row is marked, so
  a later run restating it by meaning from older messages is refused; the restored chat
  shows what the source showed;
- a retraction landing between two chunks of an import is honoured: the rest is planned
  again and the restatement left out; withdrawals that keep landing stop it after
  ``replans`` plans, nothing written, resumable.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest

from memory_worker.cards import CardStore, RunWrites
from memory_worker.cards.corrections import correction_plan
from memory_worker.cards.edits import correct_card, retract_card
from memory_worker.cards.transfer import read_snapshot, write_snapshot
from memory_worker.cards.writes import NewCard
from memory_worker.errors import StoreError
from memory_worker.keys import Keys
from tests.support.cards import ALICE, CHAT, DIM, T0, new

MODEL = "m16"
RETRACTED_AT = T0 + timedelta(days=1)
NOW = T0 + timedelta(days=3)


def unit(*coords: float) -> list[float]:
    out = np.zeros(DIM)
    out[: len(coords)] = coords
    return [float(x) for x in out / np.linalg.norm(out)]


TEA = unit(1.0)
LISBON = unit(0.8, 0.0, 0.6)
SKI = unit(0.0, 0.0, 0.0, 0.0, 1.0)


def tea_at(cos: float, axis: int = 1) -> list[float]:
    coords = [0.0] * (axis + 1)
    coords[0], coords[axis] = cos, float(np.sqrt(1 - cos * cos))
    return unit(*coords)


def lisbon_at(cos: float) -> list[float]:
    away = np.asarray(unit(0.0, 0.0, 0.0, 1.0))
    return [float(x) for x in cos * np.asarray(LISBON) + float(np.sqrt(1 - cos * cos)) * away]


@pytest.fixture
def stores(redis: Any, key_prefix: str) -> tuple[CardStore, CardStore]:
    """A source deployment and a target (key prefixes apart, the same server)."""
    return CardStore(redis, Keys(key_prefix)), CardStore(redis, Keys(key_prefix + "t:"))


async def run(store: CardStore, run_id: str, *cards: NewCard, at: datetime = T0) -> list[str]:
    writes = RunWrites(observed_at=at, cards=list(cards), embedding_model=MODEL)
    return list((await store.apply_run(CHAT, run_id, writes, now=at)).card_ids)


def tea(**kw: Any) -> NewCard:
    return new("Alice loves green tea.", obj="green tea", sources=(1,), embedding=TEA, **kw)


def lisbon(**kw: Any) -> NewCard:
    kw.setdefault("sources", (1,))
    kw.setdefault("embedding", LISBON)
    return new("Alice lives in Lisbon.", predicate="lives_in", obj="Lisbon", **kw)


async def retracted_tea(target: CardStore) -> None:
    """The target learned the tea and Lisbon from message 1, then retracted the tea."""
    tea_id, _ = await run(target, "first", tea(), lisbon())
    assert (await retract_card(target, CHAT, tea_id, actor="o", reason="", now=RETRACTED_AT)).done


async def file_of(source: CardStore, redis: Any, *cards: NewCard) -> Any:
    """An export of ``cards`` under ids the target does not use (from 101)."""
    await redis.set(source.key(CHAT, "seq"), 100)
    await run(source, "elsewhere", *cards)
    return await read_snapshot(source, CHAT, rounds=3)


async def restore(target: CardStore, snap: Any, chunk_items: int = 50) -> dict[str, int]:
    return await write_snapshot(
        target, snap, now=NOW, chats_key="x", chunk_items=chunk_items, replans=8
    )


async def facts(store: CardStore) -> set[str]:
    return {c.fact_text for c in await store.visible_cards(CHAT, user_id=ALICE)}


async def test_a_files_card_stating_a_withdrawn_fact_by_meaning_or_evidence_is_left_out(
    stores: tuple[CardStore, CardStore], redis: Any
) -> None:
    source, target = stores
    await retracted_tea(target)
    snap = await file_of(
        source,
        redis,
        # another message, reworded: the meaning tier (0.95 >= 0.93, the value named)
        new("Alice adores green tea.", obj="green tea", sources=(5,), embedding=tea_at(0.95)),
        # the tea's own message, translated, 0.87 from it: only the evidence tier refuses it
        new(
            "Алиса любит зелёный чай.",
            subject="Алиса",
            obj="зелёный чай",
            sources=(1,),
            embedding=tea_at(0.87, axis=3),
        ),
        # that message's other fact, translated: imported
        new("Alice wohnt in Lissabon.", obj="Lissabon", sources=(1,), embedding=lisbon_at(0.97)),
        new("Alice skis.", obj="skiing", sources=(6,), embedding=SKI),
    )
    done = await restore(target, snap)
    assert (done["cards"], done["retracted"]) == (2, 2)
    assert await facts(target) == {
        "Alice lives in Lisbon.",
        "Alice wohnt in Lissabon.",
        "Alice skis.",
    }


async def test_a_corrected_away_card_is_imported_withdrawn(
    stores: tuple[CardStore, CardStore],
) -> None:
    source, target = stores
    (card_id,) = await run(source, "first", lisbon())
    old = await source.get_card(CHAT, card_id)
    assert old is not None
    plan = correction_plan(
        old.scope_key, old.subject, old.predicate, "Alice lives in Porto.", actor="o", model=MODEL
    )
    porto = unit(0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    assert (
        await correct_card(
            source, CHAT, card_id, plan, embedding=porto, sk=old.scope_key, now=RETRACTED_AT
        )
    ).created
    snap = await read_snapshot(source, CHAT, rounds=3)
    await restore(target, snap)
    assert await facts(target) == await facts(source) == {"Alice lives in Porto."}
    matrix = await target.chat_vectors(CHAT)
    assert matrix.withdrawn_marks == 1
    assert matrix.ids[int(np.flatnonzero(matrix.withdrawn)[0])] == card_id
    # so an older message restating the old fact by meaning is refused in the target
    again = replace(
        lisbon(sources=(9,), embedding=lisbon_at(0.95), at=T0 + timedelta(hours=1)),
        fact_text="Alice resides in Lisbon.",
    )
    writes = RunWrites(observed_at=T0, cards=[again], embedding_model=MODEL)
    result = await target.apply_run(CHAT, "old", writes, now=NOW)
    assert (result.inserted, result.retracted) == (0, 1)


async def test_a_retraction_between_two_chunks_is_honoured(
    stores: tuple[CardStore, CardStore], redis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan ran with the tea live (its restatement free to go); the tea is retracted
    once the first chunk lands; the next chunk finds the withdrawn marks moved, writes
    nothing, and the rest is planned again: the restatement is left out."""
    source, target = stores
    tea_id, _ = await run(target, "first", tea(), lisbon())
    snap = await file_of(
        source,
        redis,
        new("Alice skis.", obj="skiing", sources=(6,), embedding=SKI),
        new("Alice adores green tea.", obj="green tea", sources=(5,), embedding=tea_at(0.95)),
    )
    real, calls = target.run_script, []

    async def retract_after_the_first_chunk(name: str, *args: Any, **kw: Any) -> Any:
        answer = await real(name, *args, **kw)
        calls.append(answer)
        if name == "import" and len(calls) == 1:
            await retract_card(target, CHAT, tea_id, actor="o", reason="", now=RETRACTED_AT)
        return answer

    monkeypatch.setattr(target, "run_script", retract_after_the_first_chunk)
    done = await restore(target, snap, chunk_items=1)
    assert any(b'"withdrawn"' in answer for answer in calls)
    assert (done["retracted"], done["cards"]) == (1, 1)
    assert await facts(target) == {"Alice lives in Lisbon.", "Alice skis."}


async def test_withdrawals_that_keep_landing_stop_the_import_resumably(
    stores: tuple[CardStore, CardStore], redis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every chunk finds the withdrawn marks moved: the import plans again ``replans``
    times, then stops with a typed error having written nothing; importing again (the
    withdrawals settled) completes it."""
    source, target = stores
    await run(target, "first", tea(), lisbon())
    snap = await file_of(source, redis, new("Alice skis.", obj="skiing", sources=(6,)))
    real, imports = target.run_script, []

    async def always_moved(name: str, *args: Any, **kw: Any) -> Any:
        if name == "import":
            imports.append(name)
            # a withdrawal's mark, and the version bump every change of the mask makes
            await redis.setrange(target.key(CHAT, "vecmask"), 4096 + len(imports), b"\x02")
            await redis.incr(target.key(CHAT, "vecver"))
        return await real(name, *args, **kw)

    monkeypatch.setattr(target, "run_script", always_moved)
    with pytest.raises(StoreError, match="import again"):
        await write_snapshot(target, snap, now=NOW, chats_key="x", chunk_items=50, replans=2)
    assert len(imports) == 3
    assert await target.get_card(CHAT, "101") is None
    monkeypatch.setattr(target, "run_script", real)
    assert (await restore(target, snap))["cards"] == 1
