"""The bot's import path for recall's pure ranking: ``from memory_worker.recall import
rank_cards``. Recall lives inside the card store (:mod:`memory_worker.cards.recall`, the only
store it ranks); this module re-exports its public names so a bot's import keeps working.
``memory_worker.rank_cards`` is the same function.
"""

from memory_worker.cards.recall import (
    BM25,
    ConnectParams,
    FusionParams,
    LexicalIndex,
    RecallHit,
    RecallResult,
    Window,
    card_in_window,
    card_span,
    card_text,
    fuse,
    named_window,
    rank_cards,
    terms,
)

__all__ = [
    "BM25",
    "ConnectParams",
    "FusionParams",
    "LexicalIndex",
    "RecallHit",
    "RecallResult",
    "Window",
    "card_in_window",
    "card_span",
    "card_text",
    "fuse",
    "named_window",
    "rank_cards",
    "terms",
]
