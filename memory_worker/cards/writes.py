"""What a run or a maintenance pass writes to the card store, and what the write did.

:class:`RunWrites` (new cards, resolutions of existing cards, links, the
episode) goes to :meth:`CardStore.apply_run` in one atomic script;
:class:`FoldGroup` to :meth:`CardStore.fold_groups`. Plain frozen data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from memory_worker.cards.model import Durability, Scope, dedup_hash, scope_key


class ResolutionOp(StrEnum):
    SUPERSEDE = "supersede"
    COMPETING = "competing"
    UPDATE = "update"
    MERGE = "merge"
    REINFORCE = "reinforce"
    DEMOTE = "demote"


@dataclass(frozen=True, slots=True)
class NewCard:
    """A validated card a run wants stored (upserted by its dedup hash)."""

    scope: Scope
    thread_id: int
    user_id: int | None
    card_type: str
    subject: str
    predicate: str
    object: str
    fact_text: str
    confidence: float
    salience: float
    durability: Durability | None
    source_message_ids: tuple[int, ...]
    valid_from: datetime
    observed_at: datetime
    expires_at: datetime | None
    embedding: Sequence[float] | None = None

    @property
    def scope_key(self) -> str:
        return scope_key(self.scope, self.thread_id, self.user_id)

    @property
    def dedup_hash(self) -> str:
        return dedup_hash(self.scope_key, self.subject, self.predicate, self.object, self.fact_text)


@dataclass(frozen=True, slots=True)
class ResolutionWrite:
    """A decision about an existing card.

    ``new_index`` points into :attr:`RunWrites.cards` (the card that
    supersedes / competes / absorbs); ``into_card_id`` names an existing
    survivor for ``merge``; ``new_fact_text`` (with its ``new_dedup_hash``
    and ``embedding``) rewrites the target of ``update`` or the survivor of
    ``merge``.
    """

    old_card_id: str
    op: ResolutionOp
    new_index: int | None = None
    into_card_id: str | None = None
    new_fact_text: str | None = None
    new_dedup_hash: str | None = None
    embedding: Sequence[float] | None = None


@dataclass(frozen=True, slots=True)
class LinkWrite:
    from_index: int
    to_index: int
    relation: str
    confidence: float


@dataclass(frozen=True, slots=True)
class EpisodeWrite:
    summary: str
    topics: Sequence[str]
    participants: Sequence[str]
    range_start: datetime
    range_end: datetime
    thread_id: int
    message_count: int
    embedding: Sequence[float] | None = None


@dataclass(frozen=True, slots=True)
class RunWrites:
    """Everything one run stores, applied at once by :meth:`CardStore.apply_run`."""

    observed_at: datetime
    cards: Sequence[NewCard] = ()
    resolutions: Sequence[ResolutionWrite] = ()
    links: Sequence[LinkWrite] = ()
    episode: EpisodeWrite | None = None
    #: Id of the model that made every vector of this write (None: unknown, see the module doc).
    embedding_model: str | None = None
    #: (message id, author user id) of the run's messages: forgetting a user needs them (§14).
    authors: Sequence[tuple[int, int]] = ()
    #: The chat's forget epoch at the run's claim; a later forget refuses the write (None: no
    #: fence, e.g. maintenance and tests).
    forget_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What :meth:`CardStore.apply_run` did (all zero when the run was already applied)."""

    applied: bool
    inserted: int = 0
    observed: int = 0
    superseded: int = 0
    competing: int = 0
    rewritten: int = 0
    merged: int = 0
    reinforced: int = 0
    demoted: int = 0
    skipped: int = 0
    links: int = 0
    episodes: int = 0
    card_ids: tuple[str, ...] = ()
    #: Vectors not stored: another model or dimension than the chat's (see the module doc).
    vectors_refused: int = 0
    #: New cards not stored: their fact was retracted after every message they cite (§10).
    retracted: int = 0


@dataclass(frozen=True, slots=True)
class FoldGroup:
    """A maintenance fold: ``absorbed`` into ``survivor``, optional rewrite, demotions, stamps."""

    survivor_id: str | None
    absorbed_ids: Sequence[str] = ()
    new_fact_text: str | None = None
    new_dedup_hash: str | None = None
    embedding: Sequence[float] | None = None
    demote_ids: Sequence[str] = ()
    stamp_ids: Sequence[str] = ()
    #: Id of the model that made ``embedding`` (None: unknown).
    embedding_model: str | None = None


@dataclass(frozen=True, slots=True)
class VectorSpace:
    """The embedding model and dimension a chat's vectors were made with."""

    model: str | None
    dimension: int


@dataclass(frozen=True, slots=True)
class FoldResult:
    folded: int = 0
    rewritten: int = 0
    demoted: int = 0
    stamped: int = 0
    #: Refused: the chat was forgotten (in part) since the cards were read (§14).
    forgotten: bool = False
