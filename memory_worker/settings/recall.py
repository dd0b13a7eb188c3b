"""How recall ranks (§16): the fusion of the cosine and BM25, the time boost, and the
connection of the best hits to the cards tied to them.

A base of :class:`~memory_worker.settings.model.Settings` (one model, every field at the
top level: ``MEMORY_RECALL_FUSION``…): these knobs are read together, by
:meth:`FusionParams.from_settings <memory_worker.cards.recall.fusion.FusionParams.from_settings>`
and :meth:`ConnectParams.from_settings
<memory_worker.cards.recall.connect.ConnectParams.from_settings>`, and their defaults are what ``bench/meaning.py --tune`` chose on the long-conversation
suite's dev split.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memory_worker.settings.types import SecretSafeSettings


class RecallSettings(SecretSafeSettings):
    """The recall ranking's settings (fields of :class:`Settings`)."""

    recall_fusion: Literal["relative", "rrf", "convex", "dense"] = Field(
        "relative",
        description="How recall and the related-card lookup fuse the dense (cosine) and the "
        "lexical (BM25) ranking (§16): `relative` a weighted sum of the min-max scaled cosine "
        "and the share of the question a card's words match, `rrf` reciprocal-rank fusion, "
        "`convex` a weighted sum of min-max scaled scores, `dense` the cosine alone. Chosen "
        "on the long-conversation suite's dev split (`bench/meaning.py --tune`).",
    )
    recall_rrf_k: float = Field(
        60.0, gt=0, le=10_000, description="Rank offset of the reciprocal-rank fusion (`rrf`)."
    )
    recall_lexical_weight: float = Field(
        0.3,
        ge=0,
        le=10,
        description="Weight of the lexical ranking: its part (0-1) in `relative` and "
        "`convex`, its share's factor in `rrf`.",
    )
    recall_bm25_b: float = Field(
        0.0,
        ge=0,
        le=1,
        description="BM25's length normalisation in recall (0 = none, 1 = full): chat cards "
        'are short, and with it "Maria: lol" outranks Maria\'s facts for any question '
        "naming her.",
    )
    recall_time_boost: float = Field(
        0.25,
        ge=0,
        le=10,
        description="Share by which recall raises the fused score of cards inside a time the "
        'question names ("last week", "in May", "в мае"); 0 = off.',
    )
    recall_seeds: int = Field(
        5,
        ge=0,
        le=100,
        description="How many of recall()'s best hits lift the cards tied to them — the same "
        "subject, the same episode — before the final ranking (§16); 0 = off, the fused "
        "ranking alone. The related-card lookup does not connect.",
    )
    recall_subject_spread: float = Field(
        0.2,
        ge=0,
        le=10,
        description="Share of a best hit's score that recall() adds to every card of the same "
        "subject (the largest such lift a card gets); 0 = off.",
    )
    recall_episode_spread: float = Field(
        0.1,
        ge=0,
        le=10,
        description="Share of a best hit's score that recall() adds to every card first written "
        "by the same run (its episode: a link only joins cards of one run); 0 = off.",
    )
    recall_restatement_cosine: float = Field(
        0.95,
        ge=0,
        le=2,
        description="Cosine from which a recall() hit is a restatement of a better hit of the "
        "same subject and goes after the other hits; above 1 = off.",
    )
