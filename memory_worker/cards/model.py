"""The card model (§10): what one durable fact, one episode and one link are.

A **card** is one durable fact (scope chat|thread|user, type,
subject/predicate/object, fact text, confidence, salience, observation
count, validity window, durability/expiry, provenance). Cards are never
deleted: a superseded fact keeps its text with ``valid_until`` and
``superseded_by``; an expired, merged or retracted card keeps its row with its
status. Card ids count per chat: :attr:`Card.ref` (``<chat>:<id>``) names one
across chats.
An **episode** summarises one run. **Links** are typed edges between cards
made by the same run.

Also here: scope keys and visibility, and the dedup identity of a fact
(:func:`normalise`, :func:`dedup_hash`). Pure: no Redis, no clock.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Scope(StrEnum):
    CHAT = "chat"
    THREAD = "thread"
    USER = "user"


class CardStatus(StrEnum):
    ACTIVE = "active"
    COMPETING = "competing"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    MERGED = "merged"
    #: Withdrawn by an operator or the bot (``retract``): kept, never shown or recalled.
    RETRACTED = "retracted"


LIVE_STATUSES = frozenset({CardStatus.ACTIVE, CardStatus.COMPETING})


class Durability(StrEnum):
    PERMANENT = "permanent"
    LONG = "long"
    SHORT = "short"
    EPHEMERAL = "ephemeral"


class Card(BaseModel):
    """One memory card as the bot reads it."""

    model_config = ConfigDict(frozen=True)

    id: str
    chat_id: int
    scope: Scope
    thread_id: int = 0
    user_id: int | None = None
    card_type: str
    subject: str
    predicate: str
    object: str
    fact_text: str
    confidence: float
    salience: float
    observation_count: int
    status: CardStatus
    durability: Durability | None = None
    valid_from: datetime
    valid_until: datetime | None = None
    observed_at: datetime
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    retracted_at: datetime | None = None
    superseded_by: str | None = None
    merged_into: str | None = None
    conflict_group: str | None = None
    source_message_ids: list[int]
    dedup_hash: str
    has_embedding: bool = False
    last_merge_at: datetime | None = None
    first_run_id: str | None = None
    #: Who retracted the card (``retract``'s actor) and why.
    retracted_by: str | None = None
    retract_reason: str | None = None
    #: Who asserted this card by hand (``correct``'s actor: operator provenance) and
    #: the id of the card it corrected (which it superseded).
    asserted_by: str | None = None
    corrects: str | None = None

    @property
    def ref(self) -> str:
        """The card's reference across chats, ``<chat id>:<card id>`` (ids are per chat)."""
        return card_ref(self.chat_id, self.id)

    @property
    def scope_key(self) -> str:
        return scope_key(self.scope, self.thread_id, self.user_id)

    @property
    def live(self) -> bool:
        return self.status in LIVE_STATUSES

    def visible_at(self, now: datetime) -> bool:
        """Live and not past its expiry (maintenance may not have run yet)."""
        return self.live and (self.expires_at is None or self.expires_at > now)


class Episode(BaseModel):
    """What one run was about."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    chat_id: int
    thread_id: int
    summary: str
    topics: list[str]
    participants: list[str]
    range_start: datetime
    range_end: datetime
    message_count: int
    card_ids: list[str]
    created_at: datetime
    has_embedding: bool = False


class Link(BaseModel):
    model_config = ConfigDict(frozen=True)

    from_card_id: str
    relation: str
    to_card_id: str
    confidence: float


def card_ref(chat_id: int, card_id: str) -> str:
    """``<chat id>:<card id>``: a card named across chats (see :func:`parse_card_ref`)."""
    return f"{chat_id}:{card_id}"


def scope_key(scope: Scope | str, thread_id: int, user_id: int | None) -> str:
    """The scope a card lives in: ``chat``, ``thread:<t>`` or ``user:<u>``."""
    if scope == Scope.USER:
        return f"user:{user_id}"
    if scope == Scope.THREAD:
        return f"thread:{thread_id}"
    return "chat"


def visible_scope_keys(thread_id: int = 0, user_id: int | None = None) -> frozenset[str]:
    """What a reader in ``thread_id`` (0 = none), speaking for ``user_id``, may see.

    Chat cards everywhere in the chat; thread cards only in their thread; user
    cards only for that user (in this chat).
    """
    keys = {"chat"}
    if thread_id:
        keys.add(f"thread:{thread_id}")
    if user_id is not None:
        keys.add(f"user:{user_id}")
    return frozenset(keys)


_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Text as dedup compares it: NFKC, case-folded, single spaces, no trailing punctuation."""
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return folded.rstrip(" .!?;,…").strip()


def dedup_hash(sk: str, subject: str, predicate: str, obj: str, fact_text: str) -> str:
    """Identity of a fact within a chat: scope + normalised subject/predicate/object/fact."""
    parts = [sk, normalise(subject), normalise(predicate), normalise(obj), normalise(fact_text)]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]
