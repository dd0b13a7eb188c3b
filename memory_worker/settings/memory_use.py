"""How the bot uses memory (§13): the prompt context's ranking and budget, remembered facts,
exports and imports.

A base of :class:`~memory_worker.settings.model.Settings` (one model, every field at the
top level: ``MEMORY_CONTEXT_MAX_TOKENS``…): these knobs are read together by
:meth:`Weights.from_settings <memory_worker.cards.prompt_context.Weights.from_settings>`
and the export reader.
"""

from __future__ import annotations

from pydantic import Field

from memory_worker.settings.types import SecretSafeSettings


class MemoryUseSettings(SecretSafeSettings):
    """The prompt context's and the export's settings (fields of :class:`Settings`)."""

    context_max_tokens: int = Field(
        16_000,
        ge=1,
        le=1_000_000,
        description="Largest max_tokens MemoryQueue.context accepts; more raises QueryTooLarge.",
    )
    context_recent_cards: int = Field(
        250,
        ge=1,
        le=100_000,
        description="Most recently observed live cards of each scope (the chat's, the "
        "user's) MemoryQueue.context ranks, besides recall's answer to its query.",
    )
    context_query_cards: int = Field(
        40,
        ge=1,
        le=1000,
        description="Cards MemoryQueue.context asks recall for when given a query (at most "
        "MEMORY_QUERY_MAX_K); their rank is the relevance it weighs.",
    )
    context_relevance_weight: float = Field(
        0.55, ge=0, le=1, description="Weight of a card's recall rank in a context with a query."
    )
    context_salience_weight: float = Field(
        0.2, ge=0, le=1, description="Weight of a card's salience in the context's ranking."
    )
    context_confidence_weight: float = Field(
        0.1, ge=0, le=1, description="Weight of a card's confidence in the context's ranking."
    )
    context_recency_weight: float = Field(
        0.15,
        ge=0,
        le=1,
        description="Weight of how recently a card was last observed (against the newest "
        "card, so the ranking depends on the store alone).",
    )
    context_recency_half_life_days: float = Field(
        30.0,
        gt=0,
        le=36_500,
        description="Age (behind the newest card) at which a card's recency counts half.",
    )
    remember_salience: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Salience of a card MemoryQueue.remember stores (the bot was told it "
        "outright; a run's cards get theirs from the model). A known fact keeps the higher.",
    )
    card_history_max_events: int = Field(
        32,
        ge=2,
        le=1000,
        description="Events of one card's history kept (MemoryQueue.history): the first, how "
        "the card began, and the newest; older ones in between are dropped as new ones come.",
    )
    export_read_rounds: int = Field(
        5,
        ge=1,
        le=100,
        description="Reads an export makes of a chat that changes under it (a run's write "
        "between its first and last read) before it gives up.",
    )
    import_max_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024 * 1024,
        le=1024 * 1024 * 1024,
        description="Largest export file an import reads (bytes); a larger one is refused "
        "(ImportTooLarge, CLI exit 2) before anything is written.",
    )
    import_chunk_items: int = Field(
        200,
        ge=1,
        le=10_000,
        description="Cards (or episodes, links, authorship and retraction entries) one import "
        "script call writes: each call blocks Redis for a few milliseconds (§13).",
    )
    import_replans: int = Field(
        8,
        ge=0,
        le=100,
        description="Times an import plans its remaining chunks again when a retraction or "
        "correction lands while it writes (§10, §13); past it the import stops, resumable.",
    )
