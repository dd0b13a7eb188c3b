"""Cards of one chat for the forget scripts (rows, trims, races), on standalone and cluster."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from memory_worker.cards.model import Scope
from memory_worker.cards.writes import NewCard

CHAT = 77


DIM = 8


AT = datetime(2026, 1, 1, tzinfo=UTC)


def new_card(i: int, rng: random.Random) -> NewCard:
    return NewCard(
        scope=Scope.USER if i % 4 == 0 else Scope.CHAT,
        thread_id=0,
        user_id=1 + i % 3,
        card_type="fact",
        subject=f"s{i}",
        predicate="p",
        object=f"o{i}",
        # text that looks like the fields the script reads by pattern must not fool it
        fact_text=f'fact {i} "row":"1" "h":"x" "updated":"5"' if i % 5 == 0 else f"fact {i}",
        confidence=0.5,
        salience=0.5,
        durability=None,
        source_message_ids=(i,),
        valid_from=AT,
        observed_at=AT + timedelta(seconds=i),
        expires_at=None,
        embedding=None if i % 7 == 3 else [rng.uniform(-1, 1) for _ in range(DIM)],
    )
