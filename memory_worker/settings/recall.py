"""How recall ranks (§16): the fusion of the cosine and BM25, and the time boost.

A base of :class:`~memory_worker.settings.model.Settings` (one model, every field at the
top level: ``MEMORY_RECALL_FUSION``…): these knobs are read together, by
:meth:`FusionParams.from_settings <memory_worker.cards.recall.fusion.FusionParams.from_settings>`,
and their defaults are what ``bench/meaning.py --tune`` chose on the long-conversation
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
