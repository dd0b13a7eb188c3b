"""Card builders shared by the card suites: a fixed time, a chat, small vectors, stored cards,
and the card-store fixture."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from memory_worker.cards import Card, CardStatus, Durability, NewCard, RunWrites, Scope
from memory_worker.cards.store import CardStore
from memory_worker.cards.writes import ApplyResult
from memory_worker.keys import Keys

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
CHAT = -1001234567890
ALICE, BOB = 11, 12
DIM = 16
BIG_USER = 2**52 + 7


@pytest.fixture
def store(cards_redis: Any, key_prefix: str) -> CardStore:
    """A card store on ``cards_redis`` (the session's server, then its cluster), under the
    test's key prefix. A fixture: import it as ``store as store``."""
    return CardStore(cards_redis, Keys(key_prefix))


def vec(seed: int) -> list[float]:
    return [float(x) for x in np.random.default_rng(seed).normal(size=DIM)]


def said(
    fact: str,
    subject: str,
    predicate: str,
    obj: str,
    card_type: str,
    conf: float,
    salience: float,
) -> dict[str, Any]:
    """What a card says: the fields a planned (:class:`NewCard`) and a stored card share."""
    return {
        "card_type": card_type,
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        "fact_text": fact,
        "confidence": conf,
        "salience": salience,
    }


def new(
    fact: str,
    *,
    subject: str = "Alice",
    predicate: str = "likes",
    obj: str = "",
    scope: Scope = Scope.USER,
    user: int | None = ALICE,
    thread: int = 0,
    at: datetime = T0,
    conf: float = 0.7,
    salience: float = 0.5,
    expires: datetime | None = None,
    sources: tuple[int, ...] = (1,),
    seed: int | None = 1,
    card_type: str = "preference",
    embedding: Sequence[float] | None = None,
) -> NewCard:
    """A planned card; its vector is ``embedding`` when given, else ``vec(seed)`` (None: none)."""
    if embedding is None and seed is not None:
        embedding = vec(seed)
    return NewCard(
        scope=scope,
        thread_id=thread,
        user_id=user if scope == Scope.USER else None,
        **said(fact, subject, predicate, obj, card_type, conf, salience),
        durability=Durability.LONG,
        source_message_ids=sources,
        valid_from=at,
        observed_at=at,
        expires_at=expires,
        embedding=embedding,
    )


def writes(*cards: NewCard, **kw: Any) -> RunWrites:
    return RunWrites(observed_at=T0, cards=list(cards), **kw)


async def apply(store: CardStore, run_id: str, *cards: NewCard, **kw: Any) -> ApplyResult:
    """Apply ``writes(*cards, **kw)`` to the test chat as run ``run_id``, at T0."""
    return await store.apply_run(CHAT, run_id, writes(*cards, **kw), now=T0)


def stored(
    card_id: str,
    fact: str,
    *,
    chat: int = CHAT,
    user: int | None = ALICE,
    subject: str = "Alice",
    predicate: str = "likes",
    obj: str = "",
    card_type: str = "fact",
    conf: float = 0.8,
    salience: float = 0.5,
    status: CardStatus = CardStatus.ACTIVE,
    at: datetime = T0,
    sources: tuple[int, ...] = (1,),
    dedup: str | None = None,
    **more: Any,
) -> Card:
    """A card as the store reads it back: a user's when ``user`` is set, else the chat's.

    Seen once, created, observed and valid from ``at``; its dedup hash is its id unless
    ``dedup`` is given. ``more``: any other :class:`Card` field (``durability``, ...).
    """
    return Card(
        id=card_id,
        chat_id=chat,
        scope=Scope.USER if user is not None else Scope.CHAT,
        user_id=user,
        **said(fact, subject, predicate, obj, card_type, conf, salience),
        observation_count=1,
        status=status,
        **dict.fromkeys(("valid_from", "observed_at", "created_at", "updated_at"), at),
        source_message_ids=list(sources),
        dedup_hash=card_id if dedup is None else dedup,
        **more,
    )
