"""Recall (§16): ranking a chat's cards for a text — dense and lexical, fused, in time.

- :mod:`~memory_worker.cards.recall.tokens`: words to index terms (folding, Snowball stems per
  language, a light Ukrainian stemmer, a script-free skeleton so "Мария" finds "Maria").
- :mod:`~memory_worker.cards.recall.bm25`: :class:`LexicalIndex`, BM25 over rows that mirror a
  chat's vector matrix, statistics over the rows a query may see.
- :mod:`~memory_worker.cards.recall.fusion`: reciprocal-rank and convex fusion, the time boost.
- :mod:`~memory_worker.cards.recall.timing`: a card's time span, the ``since``/``until`` window,
  the time a question names ("last week", "в мае").
- :mod:`~memory_worker.cards.recall.connect`: the best hits lift the cards tied to them (the
  same subject, the same episode), restatements go last (:class:`ConnectParams`).
- :mod:`~memory_worker.cards.recall.ranking`: :class:`RecallHit`, :class:`RecallResult` (recall's
  answer, marked ``degraded`` when ranked by the words alone) and :func:`rank_cards`, the
  same ranking over a list of cards a caller already holds.

All pure. The card store's side (the index kept beside each chat's cached vectors, the
read of the winners) is :mod:`memory_worker.cards.search`.
"""

from memory_worker.cards.recall.bm25 import BM25, LexicalIndex
from memory_worker.cards.recall.connect import ConnectParams, Ties, connect
from memory_worker.cards.recall.fusion import FusionParams, fuse
from memory_worker.cards.recall.ranking import RecallHit, RecallResult, card_text, rank_cards
from memory_worker.cards.recall.timing import Window, card_in_window, card_span, named_window
from memory_worker.cards.recall.tokens import terms

__all__ = [
    "BM25",
    "ConnectParams",
    "FusionParams",
    "LexicalIndex",
    "RecallHit",
    "RecallResult",
    "Ties",
    "Window",
    "card_in_window",
    "card_span",
    "card_text",
    "connect",
    "fuse",
    "named_window",
    "rank_cards",
    "terms",
]
