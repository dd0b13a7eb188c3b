"""The card store (§10): a chat's long-term memory — cards, episodes, links — in Redis.

- :mod:`~memory_worker.cards.model`: what a card, an episode and a link are; scopes,
  visibility, normalisation and the dedup hash (pure).
- :mod:`~memory_worker.cards.rules`: what any stored card and episode may hold — the text
  rule (size, no secret), types, scores, id shapes — one rule for a run's validation,
  ``correct`` and an import (pure).
- :mod:`~memory_worker.cards.writes`: what a run or a maintenance fold writes, and what
  the write did (plain data).
- :mod:`~memory_worker.cards.codec`: the stored short-key JSON schema (one table for
  both directions) and the plans the scripts read.
- :mod:`~memory_worker.cards.vectors`: int8 quantisation, the per-chat matrix, its cache and
  its read from Redis (one refresh script, or a consistent snapshot).
- :mod:`~memory_worker.cards.search`: the hybrid search's store side — each chat's lexical
  index beside its cached vectors, and the read of the winners (§16).
- :mod:`~memory_worker.cards.recall`: ranking cards for a text, pure — terms, BM25, the
  fusion with the cosine, time windows, the best hits connected to their subject and
  episode, :func:`rank_cards` (recall ranks only cards).
- :mod:`~memory_worker.cards.store`: :class:`CardStore`, the Redis shell (key layout in
  its docstring); its Lua scripts are ``lua/*.lua``, loaded with ``importlib.resources``.

- :mod:`~memory_worker.cards.replication`: a run's card write waits for a replica.
- :mod:`~memory_worker.cards.shapes`: the Redis type of each key of a chat's memory, and
  which keys a "corrupt data" answer found misshapen (by role, never a value).
- :mod:`~memory_worker.cards.forget`: the card store's side of forgetting (§14).
- :mod:`~memory_worker.cards.corrections`: retracting and correcting one card (pure: card
  references, checks and plans of ``lua/retract.lua`` and ``lua/correct.lua``);
  :mod:`~memory_worker.cards.remember`: a fact the bot knows stored now, and the vectors such
  cards wait for (pure: the card and the plans of ``lua/remember.lua`` and
  ``lua/fill_vectors.lua``); :mod:`~memory_worker.cards.edits` runs those scripts;
  :mod:`~memory_worker.cards.chat_state`: the values of a chat's card hashes as those
  scripts read them (their Python twins are the tests': ``tests/support/lua_twins.py``).
- :mod:`~memory_worker.cards.export_format`: the export file (JSON lines: the header, cards,
  episodes, links, authorship), a user's share of it, and reading one back whole (pure);
  :mod:`~memory_worker.cards.import_plan`: what an import writes through
  ``lua/import.lua``, chunk by chunk (pure); :mod:`~memory_worker.cards.transfer`: the
  reads of an export and the import's chunked script calls.
- :mod:`~memory_worker.cards.withdrawn`: whether a card about to be written states a
  withdrawn fact — retracted or corrected away — by hash, by meaning or by evidence (its
  own message processed again) (pure); :mod:`~memory_worker.cards.language`: the language a
  card is written in, guessed from its few words, which that check asks (pure);
  :mod:`~memory_worker.cards.withdrawals`: the reads behind that check (the withdrawn facts
  near the cards, their siblings).
- :mod:`~memory_worker.cards.history`: a card's history (the events each card script
  records), decoded whatever Redis holds, and the memory as it stood at a past moment (pure).
- :mod:`~memory_worker.cards.prompt_context`: memory ready for a bot's prompt — rank,
  one card per fact, the token budget, the dated block (pure).

Everything callers use is re-exported here: ``from memory_worker.cards import CardStore``.
"""

from memory_worker.cards.codec import card_from_json, from_ms, to_ms
from memory_worker.cards.history import CardEvent, EventKind
from memory_worker.cards.model import (
    LIVE_STATUSES,
    Card,
    CardStatus,
    Durability,
    Episode,
    Link,
    Scope,
    dedup_hash,
    normalise,
    scope_key,
    visible_scope_keys,
)
from memory_worker.cards.store import CardStore
from memory_worker.cards.vectors import quantize
from memory_worker.cards.writes import (
    ApplyResult,
    EpisodeWrite,
    FoldGroup,
    FoldResult,
    LinkWrite,
    NewCard,
    ResolutionOp,
    ResolutionWrite,
    RunWrites,
    VectorSpace,
)

__all__ = [
    "LIVE_STATUSES",
    "ApplyResult",
    "Card",
    "CardEvent",
    "CardStatus",
    "CardStore",
    "Durability",
    "Episode",
    "EpisodeWrite",
    "EventKind",
    "FoldGroup",
    "FoldResult",
    "Link",
    "LinkWrite",
    "NewCard",
    "ResolutionOp",
    "ResolutionWrite",
    "RunWrites",
    "Scope",
    "VectorSpace",
    "card_from_json",
    "dedup_hash",
    "from_ms",
    "normalise",
    "quantize",
    "scope_key",
    "to_ms",
    "visible_scope_keys",
]
