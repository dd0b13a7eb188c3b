"""The stored card schema is one table: every Card field has exactly one short key."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from memory_worker.cards import Card, Durability
from memory_worker.cards.codec import CARD_FIELDS, card_from_json, card_plan
from tests.support.cards import new as new_card


def test_every_card_field_has_one_short_key() -> None:
    read = [f.attr for f in CARD_FIELDS if f.attr is not None]
    assert len(read) == len(set(read))
    assert set(read) | {"chat_id"} == set(Card.model_fields)
    keys = [f.key for f in CARD_FIELDS]
    assert len(keys) == len(set(keys))


def test_a_planned_card_reads_back_as_written() -> None:
    moment = datetime(2026, 11, 2, 18, 5, tzinfo=UTC)
    new = new_card(
        "Alice likes green tea.",
        obj="green tea",
        user=7,
        thread=3,
        at=moment,
        conf=1.5,
        salience=0.25,
        sources=(5, 2, 5),
        seed=None,
    )
    plan = card_plan(new, 2)
    assert plan["conf"] == "1.0000"
    assert plan["src"] == "2,5"
    assert plan["exp"] == ""
    assert plan["vec"] == "2"
    # What the apply script adds before it stores the card:
    stored = {k: v for k, v in plan.items() if k not in {"vec", "sk"}}
    stored |= {"id": "9", "obs": "1", "status": "active", "created": "0", "updated": "0"}
    card = card_from_json(42, orjson.dumps(stored))
    assert (card.chat_id, card.user_id, card.thread_id) == (42, 7, 3)
    assert card.scope_key == "user:7" == plan["sk"]
    assert card.dedup_hash == new.dedup_hash
    assert card.source_message_ids == [2, 5]
    assert card.durability is Durability.LONG
    assert card.expires_at is None
    assert card.valid_from == moment
    assert not card.has_embedding
