"""Which of the extractor's proposals may become memory (§10). Pure functions, no I/O.

A candidate card is **dropped** (and counted by reason) when it

- has no fact text (``empty``) or is too long (``too_long``: fact text over
  ``card_max_bytes``, subject/predicate/object over 256 bytes);
- carries a secret (``secret``: anything :func:`memory_worker.privacy.masking.contains_secret`
  finds — tokens, keys, labelled passwords in every language the masking module
  reads, URL credentials, card numbers — a ``[redacted]`` placeholder left where
  the farm was shown a masked secret, or words about a credential);
- cites no message of its batch (``no_source``);
- is a user card without a user (``no_user``) or claims a user who wrote none
  of the cited messages (``wrong_user``) — what Bob says about Alice is not
  Alice's own profile.

Kept cards are normalised: common invented types map onto ours (``profile`` →
``identity``…), other unknown types become ``preference``; chat-bound
types (event, decision, joke, recurring_topic, relationship) are forced to
chat/thread scope; a thread run maps chat → thread and a non-thread run maps
thread → chat; durability sets the expiry (ephemeral and short tiers, and
events without a tier, expire; long and permanent don't), counted from the
latest cited message — the message time, never the wall clock.

Resolutions may only name cards the prompt showed (by alias), one resolution
per card; links only join this batch's own new cards.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory_worker.cards import (
    Card,
    Durability,
    LinkWrite,
    NewCard,
    ResolutionOp,
    ResolutionWrite,
    Scope,
    dedup_hash,
    normalise,
)
from memory_worker.cards.rules import CARD_TYPES, text_problem, too_long
from memory_worker.consolidation.extraction import CandidateCard, LinkCandidate, ResolutionCandidate
from memory_worker.privacy.masking import contains_secret
from memory_worker.settings import Settings

#: Types models commonly invent, mapped onto ours; anything else unknown → preference.
CARD_TYPE_ALIASES: Mapping[str, str] = {
    "profile": "identity",
    "personal": "identity",
    "health": "warning",
    "fact": "technical_fact",
    "technical": "technical_fact",
    "plan": "project",
    "meeting": "event",
    "topic": "recurring_topic",
}
CHAT_BOUND_TYPES = frozenset({"event", "decision", "joke", "recurring_topic", "relationship"})
RELATIONS = frozenset(
    {"supports", "contradicts", "same_topic", "supersedes", "mentions_same_entity"}
)
DECISION_ALIASES: Mapping[str, ResolutionOp] = {
    **{op.value: op for op in ResolutionOp},
    "supersedes": ResolutionOp.SUPERSEDE,
    "replace": ResolutionOp.SUPERSEDE,
    "contradict": ResolutionOp.COMPETING,
    "conflict": ResolutionOp.COMPETING,
    "rewrite": ResolutionOp.UPDATE,
    "reinforces": ResolutionOp.REINFORCE,
    "confirm": ResolutionOp.REINFORCE,
    "duplicate": ResolutionOp.REINFORCE,
    "downgrade": ResolutionOp.DEMOTE,
}
_DURABILITIES = frozenset(d.value for d in Durability)

# --- limits and batch facts ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limits:
    card_max_bytes: int = 700
    ephemeral_ttl: timedelta = timedelta(days=2)
    short_ttl: timedelta = timedelta(days=14)

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            card_max_bytes=settings.card_max_bytes,
            ephemeral_ttl=timedelta(days=settings.ephemeral_ttl_days),
            short_ttl=timedelta(days=settings.short_ttl_days),
        )

    def expiry(
        self, durability: Durability | None, card_type: str, observed_at: datetime
    ) -> datetime | None:
        if durability == Durability.EPHEMERAL:
            return observed_at + self.ephemeral_ttl
        if durability == Durability.SHORT or (durability is None and card_type == "event"):
            return observed_at + self.short_ttl
        return None


@dataclass(frozen=True, slots=True)
class SourceMessage:
    user_id: int
    sent_at: datetime


@dataclass(frozen=True, slots=True)
class BatchFacts:
    """What validation needs to know about one batch: its thread and its messages."""

    thread_id: int
    messages: Mapping[int, SourceMessage]


# --- cards -----------------------------------------------------------------------------------


def validate_card(candidate: CandidateCard, batch: BatchFacts, limits: Limits) -> NewCard | str:
    """The card to store, or the reason it is dropped."""
    fact = candidate.fact_text
    problem = text_problem(
        fact,
        candidate.subject,
        candidate.predicate,
        candidate.object,
        max_bytes=limits.card_max_bytes,
    )
    if problem is not None:
        return problem
    sources = sorted({mid for mid in candidate.source_message_ids if mid in batch.messages})
    if not sources:
        return "no_source"
    card_type = CARD_TYPE_ALIASES.get(candidate.card_type, candidate.card_type)
    if card_type not in CARD_TYPES:
        card_type = "preference"
    scope = {"user": Scope.USER, "thread": Scope.THREAD}.get(candidate.scope, Scope.CHAT)
    if card_type in CHAT_BOUND_TYPES and scope == Scope.USER:
        scope = Scope.CHAT
    user_id: int | None = None
    if scope == Scope.USER:
        if candidate.user_id is None:
            return "no_user"
        if all(batch.messages[mid].user_id != candidate.user_id for mid in sources):
            return "wrong_user"
        user_id = candidate.user_id
    elif batch.thread_id:
        scope = Scope.THREAD
    else:
        scope = Scope.CHAT
    durability = Durability(candidate.durability) if candidate.durability in _DURABILITIES else None
    times = [batch.messages[mid].sent_at for mid in sources]
    observed_at = max(times)
    return NewCard(
        scope=scope,
        thread_id=batch.thread_id if scope == Scope.THREAD else 0,
        user_id=user_id,
        card_type=card_type,
        subject=candidate.subject,
        predicate=candidate.predicate,
        object=candidate.object,
        fact_text=fact,
        confidence=candidate.confidence,
        salience=candidate.salience,
        durability=durability,
        source_message_ids=tuple(sources),
        valid_from=min(times),
        observed_at=observed_at,
        expires_at=limits.expiry(durability, card_type, observed_at),
    )


def _merge_expiry(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return None
    return max(a, b)


@dataclass
class RunCards:
    """A run's validated cards, one per dedup hash (repeats inside a run fold together)."""

    cards: list[NewCard] = field(default_factory=list)
    _by_hash: dict[str, int] = field(default_factory=dict)

    def add(self, card: NewCard) -> int:
        """Add ``card`` (or fold it into its twin) and return its index."""
        digest = card.dedup_hash
        index = self._by_hash.get(digest)
        if index is None:
            self._by_hash[digest] = len(self.cards)
            self.cards.append(card)
            return len(self.cards) - 1
        twin = self.cards[index]
        self.cards[index] = dataclasses.replace(
            twin,
            confidence=max(twin.confidence, card.confidence),
            salience=max(twin.salience, card.salience),
            source_message_ids=tuple(
                sorted(set(twin.source_message_ids) | set(card.source_message_ids))
            ),
            valid_from=min(twin.valid_from, card.valid_from),
            observed_at=max(twin.observed_at, card.observed_at),
            expires_at=_merge_expiry(twin.expires_at, card.expires_at),
        )
        return index


def validate_cards(
    candidates: Iterable[CandidateCard], batch: BatchFacts, limits: Limits, into: RunCards
) -> tuple[list[int], Counter[str]]:
    """Validate a batch's candidates into ``into``; their indexes and the drop counts."""
    indexes: list[int] = []
    dropped: Counter[str] = Counter()
    for candidate in candidates:
        outcome = validate_card(candidate, batch, limits)
        if isinstance(outcome, str):
            dropped[outcome] += 1
        else:
            index = into.add(outcome)
            if index not in indexes:
                indexes.append(index)
    return indexes, dropped


# --- resolutions and links -----------------------------------------------------------------------


def _match_new_card(
    text: str | None, old: Card | None, cards: Sequence[NewCard], batch_indexes: Sequence[int]
) -> int | None:
    """The batch's new card a resolution refers to: by text, by subject+predicate, or the only one."""
    if text:
        wanted = normalise(text)
        for index in batch_indexes:
            if normalise(cards[index].fact_text) == wanted:
                return index
    if old is not None:
        same = [
            index
            for index in batch_indexes
            if normalise(cards[index].subject) == normalise(old.subject)
            and normalise(cards[index].predicate) == normalise(old.predicate)
        ]
        if len(same) == 1:
            return same[0]
    if len(batch_indexes) == 1:
        return batch_indexes[0]
    return None


def _text_ok(text: str | None, limits: Limits) -> bool:
    return (
        bool(text)
        and not too_long(text or "", limits.card_max_bytes)
        and not contains_secret(text or "")
    )


def validate_resolutions(
    candidates: Iterable[ResolutionCandidate],
    *,
    existing: Mapping[str, Card],
    cards: Sequence[NewCard],
    batch_indexes: Sequence[int],
    claimed: set[str],
    limits: Limits,
) -> tuple[list[ResolutionWrite], Counter[str]]:
    """Resolutions that name shown cards, one per card (``claimed`` carries across batches)."""
    writes: list[ResolutionWrite] = []
    dropped: Counter[str] = Counter()
    for candidate in candidates:
        old = existing.get(candidate.old_card_id)
        op = DECISION_ALIASES.get(candidate.decision)
        if old is None:
            dropped["unknown_card"] += 1
            continue
        if op is None:
            dropped["unknown_decision"] += 1
            continue
        if old.id in claimed:
            dropped["duplicate_resolution"] += 1
            continue
        text = candidate.new_fact_text
        if text is not None and not _text_ok(text, limits):
            dropped["bad_text"] += 1
            continue
        write: ResolutionWrite | None = None
        if op in (ResolutionOp.SUPERSEDE, ResolutionOp.COMPETING):
            index = _match_new_card(text, old, cards, batch_indexes)
            if index is not None and cards[index].dedup_hash != old.dedup_hash:
                write = ResolutionWrite(old.id, op, new_index=index)
        elif op == ResolutionOp.UPDATE:
            if text and normalise(text) != normalise(old.fact_text):
                write = ResolutionWrite(
                    old.id,
                    op,
                    new_fact_text=text,
                    new_dedup_hash=dedup_hash(
                        old.scope_key, old.subject, old.predicate, old.object, text
                    ),
                )
        elif op == ResolutionOp.MERGE:
            write = _merge_write(candidate, old, existing, cards, batch_indexes, text)
        else:
            write = ResolutionWrite(old.id, op)
        if write is None:
            dropped["unmatched"] += 1
            continue
        claimed.add(old.id)
        writes.append(write)
    return writes, dropped


def _merge_write(
    candidate: ResolutionCandidate,
    old: Card,
    existing: Mapping[str, Card],
    cards: Sequence[NewCard],
    batch_indexes: Sequence[int],
    text: str | None,
) -> ResolutionWrite | None:
    if candidate.into_card_id:
        into = existing.get(candidate.into_card_id)
        if into is None or into.id == old.id:
            return None
        new_hash = (
            dedup_hash(into.scope_key, into.subject, into.predicate, into.object, text)
            if text
            else None
        )
        return ResolutionWrite(
            old.id,
            ResolutionOp.MERGE,
            into_card_id=into.id,
            new_fact_text=text,
            new_dedup_hash=new_hash,
        )
    index = _match_new_card(text, old, cards, batch_indexes)
    if index is None:
        return None
    survivor = cards[index]
    if text and normalise(text) == normalise(survivor.fact_text):
        text = None
    new_hash = (
        dedup_hash(survivor.scope_key, survivor.subject, survivor.predicate, survivor.object, text)
        if text
        else None
    )
    return ResolutionWrite(
        old.id, ResolutionOp.MERGE, new_index=index, new_fact_text=text, new_dedup_hash=new_hash
    )


def validate_links(
    candidates: Iterable[LinkCandidate], cards: Sequence[NewCard], batch_indexes: Sequence[int]
) -> tuple[list[LinkWrite], Counter[str]]:
    """Links between this batch's new cards, matched by normalised fact text."""
    by_text = {normalise(cards[i].fact_text): i for i in batch_indexes}
    writes: list[LinkWrite] = []
    seen: set[tuple[int, str, int]] = set()
    dropped: Counter[str] = Counter()
    for link in candidates:
        if link.relation not in RELATIONS:
            dropped["unknown_relation"] += 1
            continue
        source = by_text.get(normalise(link.from_fact_text))
        target = by_text.get(normalise(link.to_fact_text))
        if source is None or target is None or source == target:
            dropped["unmatched_link"] += 1
            continue
        key = (source, link.relation, target)
        if key in seen:
            continue
        seen.add(key)
        writes.append(LinkWrite(source, target, link.relation, link.confidence))
    return writes, dropped
