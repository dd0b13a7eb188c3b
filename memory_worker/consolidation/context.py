"""The existing cards a run shows the extractor, and the farm usage a run counts.

:func:`existing_context` picks them, most relevant first, under aliases
``c1``, ``c2``…: cards related to the run text (embedding similarity, best
effort — see the failure contract in :mod:`memory_worker.consolidation.consolidate`), then
the chat's (thread's) most recent cards, then each participant's user cards.
The related lookup is skipped, with no embedding call, when no live card of the
allowed scopes has a vector yet (:meth:`CardStore.searchable_vectors`).
The related lookup is the hybrid search of ``recall()`` (the cosine fused
with BM25, :meth:`CardStore.search`) and favours the run's authors (a
:class:`~memory_worker.cards.search.Favour` adds ``related_author_boost`` to
their cards' cosine; :func:`rank_related` is the same rule on a dense-only
list): e5 ranks topic over name, so "Finn: I moved to Galway" could rank
other people's cards about moving above Finn's own "Finn lives in Dublin" —
the card the update needs. When the query cannot be embedded (not the run's
deadline, not a hung or busy embedder: :func:`lookup_failure_ends_run`), the lookup
ranks by the words alone.
:func:`fit_cards` keeps the prefix that fits a batch's token budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from llm_client import CapacityUnavailable, CapacityWaitTimeout, DeadlineExceeded, LLMError
from memory_worker.cards import Card, CardStore, visible_scope_keys
from memory_worker.cards.recall.fusion import FusionParams
from memory_worker.cards.search import Favour
from memory_worker.cards.vectors import Matrix
from memory_worker.consolidation.batching import payload_tokens
from memory_worker.consolidation.model_calls import Embedder, embed_texts
from memory_worker.consolidation.prompt import existing_card_payload
from memory_worker.errors import EmbedderTimeout
from memory_worker.logs import get_logger
from memory_worker.models import Message, RunRequest
from memory_worker.runs.policy import is_outage
from memory_worker.settings import Settings

log = get_logger(__name__)

#: Characters of run text used as the related-card query.
RELATED_QUERY_CHARS = 1000
#: Participants whose user cards go into the prompt, and cards per participant.
MAX_PARTICIPANTS = 20
CARDS_PER_PARTICIPANT = 20


@dataclass(slots=True)
class Usage:
    """Farm calls a run made and the tokens they cost."""

    llm_calls: int = 0
    embed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    words = sorted({n.strip().casefold() for n in names if n.strip()}, key=len, reverse=True)
    if not words:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in words) + r")(?!\w)")


def rank_related(
    found: Sequence[tuple[Card, float]],
    *,
    author_ids: Collection[int],
    author_names: Iterable[str],
    boost: float,
    k: int,
) -> list[Card]:
    """The ``k`` best of ``found`` (card, cosine) once cards about an author gain ``boost``.

    A card is about an author when it is that author's user card, or its subject or
    fact text names them (a whole word, any case). Ties keep the cosine order.
    """
    pattern = _names_pattern(author_names)

    def about_author(card: Card) -> bool:
        if card.user_id is not None and card.user_id in author_ids:
            return True
        if pattern is None:
            return False
        return bool(pattern.search(card.subject.casefold() + "\n" + card.fact_text.casefold()))

    scored = [
        (score + (boost if boost and about_author(card) else 0.0), -rank, card)
        for rank, (card, score) in enumerate(found)
    ]
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [card for _, _, card in scored[:k]]


def _related_query(messages: Sequence[Message]) -> str:
    names = list(dict.fromkeys(m.sender_name for m in messages))
    text = " ".join(names) + "\n" + "\n".join(m.text for m in messages)
    return text[:RELATED_QUERY_CHARS]


class ContextReads:
    """The card reads :func:`existing_context` needs, started at once and awaited later.

    The chat's (thread's) recent cards and the participants' user cards, and — when
    the run has a lookup embedder — the chat's vectors. Started before the run knows
    it will make any call (:func:`~memory_worker.consolidation.consolidate.consolidate_run` asks the
    store whether the run was already applied meanwhile); :meth:`close` drops what was
    not consumed.
    """

    def __init__(
        self,
        store: CardStore,
        request: RunRequest,
        kept: Sequence[Message],
        settings: Settings,
        *,
        lookup: bool,
    ) -> None:
        authors = list(dict.fromkeys(m.user_id for m in kept))[:MAX_PARTICIPANTS]
        group_scopes = sorted(visible_scope_keys(request.thread_id))
        self.allowed = sorted(set(group_scopes) | {f"user:{u}" for u in authors})
        self.latest = asyncio.ensure_future(
            store.live_card_groups(
                request.chat_id,
                [
                    (group_scopes, settings.existing_cards_max),
                    ([f"user:{u}" for u in authors], CARDS_PER_PARTICIPANT),
                ],
            )
        )
        self.vectors: asyncio.Future[Matrix | None] | None = None
        if lookup and settings.related_cards > 0:
            self.vectors = asyncio.ensure_future(
                store.searchable_vectors(request.chat_id, self.allowed)
            )

    async def close(self) -> None:
        """Cancel the reads still running and consume every outcome."""
        for task in (self.latest, self.vectors):
            if task is None:
                continue
            if not task.done():
                task.cancel()
            with contextlib.suppress(BaseException):
                await task


async def existing_context(
    store: CardStore,
    request: RunRequest,
    kept: Sequence[Message],
    *,
    embedder: Embedder | None,
    settings: Settings,
    key: str,
    deadline: float | None,
    now: datetime,
    usage: Usage,
    reads: ContextReads | None = None,
) -> list[tuple[str, Card]]:
    """Cards shown to the extractor, most relevant first, under aliases ``c1``, ``c2``…

    Related cards (embedding similarity of the run text, best effort), then
    the chat's (thread's) most recent cards, then each participant's user
    cards; deduplicated, at most ``existing_cards_max``. ``reads``: the card reads
    already started (:class:`ContextReads`, with ``lookup`` set when ``embedder``
    is given); else they start here.
    """
    # the recent and participants' cards are read while the related lookup reads the
    # chat's vectors and embeds its query: neither needs the other, and the read adds
    # nothing to the slot's time
    if reads is None:
        reads = ContextReads(store, request, kept, settings, lookup=embedder is not None)
    related: list[Card] = []
    try:
        if embedder is not None and reads.vectors is not None:
            related = await _related_cards(
                store,
                request,
                kept,
                embedder,
                reads.vectors,
                reads.allowed,
                settings,
                key,
                deadline,
                now,
                usage,
            )
        recent, personal = await reads.latest
    finally:
        await reads.close()  # the lookup raised (the run's deadline, a hung embedder)
    chosen: dict[str, Card] = {}
    for card in [*related, *recent, *personal]:
        if len(chosen) >= settings.existing_cards_max:
            break
        if card.id not in chosen and card.visible_at(now):
            chosen[card.id] = card
    return [(f"c{i}", card) for i, card in enumerate(chosen.values(), start=1)]


def fit_cards(
    context: Sequence[tuple[str, Card]], budget: int, reference: datetime
) -> list[tuple[str, Card]]:
    """The longest prefix of ``context`` whose prompt form fits ``budget`` tokens."""
    shown: list[tuple[str, Card]] = []
    used = 0
    for alias, card in context:
        cost = payload_tokens(existing_card_payload(alias, card, reference)) + 1
        if used + cost > budget:
            break
        shown.append((alias, card))
        used += cost
    return shown


def lookup_failure_ends_run(error: LLMError) -> bool:
    """Whether the related lookup's failure ends the run before its extraction is spent
    (pure, by type; else the lookup goes on by the words alone).

    It does when the run's cards could not be embedded after the extraction either, so an
    extraction spent now would be made without the related cards and then wait, or be
    redone: the run's own deadline (``DeadlineExceeded``, which fails the run), a hung
    embedder (``EmbedderTimeout``) and a busy one — the lookup's walk ended on busy answers
    (``CapacityWaitTimeout``, ``CoolingDown``; a hung embedder's retry hop that meets a job
    still queued ends so too) or a capacity answer (``CapacityUnavailable``). All but the
    deadline release the run with its attempt refunded (§7). (A walk that ends on a 429 or
    a 503 that named its pause ends as ``CapacityWaitTimeout``; outside a walk such an
    answer is not typed busy and the lookup goes on.)

    An outage (no target reachable, every breaker open) and any other failure do not: the
    run goes on to its extraction, which during a farm-wide outage probes (and trips, and
    pages) the extraction route too (§6) — the lookup alone never decides a run's fate in
    an outage.
    """
    return isinstance(
        error, DeadlineExceeded | EmbedderTimeout | CapacityWaitTimeout | CapacityUnavailable
    )


async def _related_cards(
    store: CardStore,
    request: RunRequest,
    kept: Sequence[Message],
    embedder: Embedder,
    vectors_read: Awaitable[Matrix | None],
    allowed: Sequence[str],
    settings: Settings,
    key: str,
    deadline: float | None,
    now: datetime,
    usage: Usage,
) -> list[Card]:
    """Cards related to the run text (hybrid, the authors favoured); best effort: when the
    query cannot be embedded the words alone rank, but the run's own deadline, a hung
    embedder and a busy one propagate (:func:`lookup_failure_ends_run`). No query is embedded when no live card of the allowed scopes has
    a vector (``vectors_read``: nothing to relate to, e.g. a chat's first run); else the
    search reuses the vectors read."""
    matrix = await vectors_read
    if matrix is None:
        return []
    query = _related_query(kept)
    vector: list[float] | None = None
    model: str | None = None
    try:
        vectors, calls = await embed_texts(
            embedder,
            [query],
            key=f"{key}:q",
            dimension=settings.embedding_dimension,
            deadline=deadline,
            contacts=settings.redact_contacts,
        )
        usage.embed_calls += calls
        vector, model = vectors[0], vectors.model
    except LLMError as exc:
        if lookup_failure_ends_run(exc):
            raise  # before the extraction is spent (see lookup_failure_ends_run)
        log.warning(
            "consolidation.related_lookup_failed",
            chat_id=request.chat_id,
            error=exc.kind,
            code=exc.code,
            outage=is_outage(exc),
        )  # the lookup goes on by the words alone
    hits = await store.search(
        request.chat_id,
        query,
        vector,
        settings.related_cards,
        scope_keys=allowed,
        now=now,
        model=model,
        params=FusionParams.from_settings(settings),
        matrix=matrix,
        favour=_authors(kept, settings.related_author_boost),
    )
    return [hit.card for hit in hits]


def _authors(kept: Sequence[Message], boost: float) -> Favour:
    """The run's authors, favoured: their user cards and the cards naming them."""
    return Favour(
        scopes=frozenset(f"user:{m.user_id}" for m in kept),
        names=tuple(dict.fromkeys(m.sender_name for m in kept)),
        boost=boost,
    )
