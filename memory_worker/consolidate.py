"""One memory run end to end (§10): filter → batch → extract → validate → embed → one write.

:func:`consolidate_run` is called by the run pipeline with a claimed run. It
returns a :class:`ConsolidationResult` (counts only — no message or card
text) and, when the run was too big for its token budget, the continuation
run to enqueue.

Failure contract:

- Nothing reaches the card store before every LLM and embedding call of the
  run has succeeded: the run's whole output is written by ONE idempotent
  script at the very end (:meth:`CardStore.apply_run`).
- Every ``llm_client.errors`` exception of the extractor or the embedder
  propagates unchanged, so the pipeline can release (outage) or fail
  (timeout, protocol, …) the run by type. Unusable extractor output is a
  :class:`~llm_client.errors.DecodeError` (protocol error).
- An embedding call that times out (its own short task budget, rev 2) raises
  :class:`~memory_worker.runs.EmbedderTimeout`, which releases the run: the
  embedder is a side service and the extraction is simply redone.
- The related-card lookup is best effort: when it fails for any reason but
  the run's own deadline or a hung embedder (an embedder timeout: the run's
  cards could not be embedded later either, so no extraction call is spent)
  — an embedder outage included — the run goes on
  with recent cards only. During a farm-wide outage the extraction call is
  therefore always tried, so extraction's breaker learns (and the admins
  hear) that extraction is down too; the lookup alone never decides a run's
  fate (§6 rev 2). The worker gives the lookup its own embedder
  (``lookup_embedder``) that never probes an open embedding route, so a run
  spends at most the extraction probe while every target is down; an
  embedder-only outage costs one extraction per probe interval fleet-wide
  (the final embedding then releases the run).
- A run already applied (a crash after the write, before completion) is
  recognised up front and costs no LLM call.

The LLM and the embedder are injected callables (:class:`ChatCall`,
:class:`Embedder`); the worker backs them with the routed walker, tests
with scripted fakes.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog

from llm_client.errors import DeadlineExceeded, LLMError
from llm_client.routes import MEMORY_EXTRACTION
from memory_worker.batching import (
    MESSAGE_SHARE,
    PromptMessage,
    RunSlice,
    after_cursor,
    continuation_request,
    pack_batches,
    payload_tokens,
    select_slice,
)
from memory_worker.cards import (
    ApplyResult,
    Card,
    CardStore,
    EpisodeWrite,
    LinkWrite,
    NewCard,
    ResolutionWrite,
    RunWrites,
    visible_scope_keys,
)
from memory_worker.connections import retry_store_write
from memory_worker.deadlines import call_timeout, time_left
from memory_worker.extraction import ExtractionOutput, decode_extraction
from memory_worker.model_calls import ChatCall, Embedder, Vectors, embed_texts
from memory_worker.models import Message, RunRequest
from memory_worker.noise import filter_messages
from memory_worker.prompt import (
    build_extraction_request,
    existing_card_payload,
    extraction_payload,
    overhead_tokens,
)
from memory_worker.runs import EmbedderTimeout, is_outage
from memory_worker.secret_patterns import redact_secrets
from memory_worker.settings import Settings
from memory_worker.validation import (
    BatchFacts,
    Limits,
    RunCards,
    SourceMessage,
    validate_cards,
    validate_links,
    validate_resolutions,
)

log = structlog.get_logger(__name__)

#: Characters of run text used as the related-card query.
RELATED_QUERY_CHARS = 1000
#: Participants whose user cards go into the prompt, and cards per participant.
MAX_PARTICIPANTS = 20
CARDS_PER_PARTICIPANT = 20
SUMMARY_MAX_CHARS = 4000
MAX_TOPICS = 20
MAX_PARTICIPANT_NAMES = 50


@dataclass(frozen=True, slots=True)
class ConsolidationResult:
    """What one run did — counts and ids only, safe to log and to store on the run."""

    run_id: str
    chat_id: int
    thread_id: int
    messages_total: int = 0
    messages_covered: int = 0
    messages_extracted: int = 0
    noise_dropped: Mapping[str, int] = field(default_factory=dict)
    batches: int = 0
    llm_calls: int = 0
    embed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    existing_cards_shown: int = 0
    cards_inserted: int = 0
    cards_observed: int = 0
    cards_superseded: int = 0
    cards_competing: int = 0
    cards_rewritten: int = 0
    cards_merged: int = 0
    cards_reinforced: int = 0
    cards_demoted: int = 0
    resolutions_skipped: int = 0
    links_written: int = 0
    dropped_by_validation: Mapping[str, int] = field(default_factory=dict)
    malformed_items: int = 0
    salvaged_answers: int = 0
    episode_id: str | None = None
    already_applied: bool = False
    continuation: RunRequest | None = None

    @property
    def cards_updated(self) -> int:
        """Existing cards changed by the run (repeats, rewrites, reinforcements, demotions)."""
        return (
            self.cards_observed + self.cards_rewritten + self.cards_reinforced + self.cards_demoted
        )

    def summary(self) -> dict[str, Any]:
        """JSON-able counts (the continuation as its cursor only)."""
        data = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name != "continuation"
        }
        data["noise_dropped"] = dict(self.noise_dropped)
        data["dropped_by_validation"] = dict(self.dropped_by_validation)
        data["cards_updated"] = self.cards_updated
        cont = self.continuation
        data["continuation_cursor"] = (
            cont.cursor.model_dump(mode="json") if cont and cont.cursor else None
        )
        data["continuation_messages"] = len(cont.messages) if cont else 0
        return data


def _related_query(messages: Sequence[Message]) -> str:
    names = list(dict.fromkeys(m.sender_name for m in messages))
    text = " ".join(names) + "\n" + "\n".join(m.text for m in messages)
    return text[:RELATED_QUERY_CHARS]


@dataclass(slots=True)
class Usage:
    """Farm calls a run made and the tokens they cost."""

    llm_calls: int = 0
    embed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


async def _existing_context(
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
) -> list[tuple[str, Card]]:
    """Cards shown to the extractor, most relevant first, under aliases ``c1``, ``c2``…

    Related cards (embedding similarity of the run text, best effort), then
    the chat's (thread's) most recent cards, then each participant's user
    cards; deduplicated, at most ``existing_cards_max``.
    """
    authors = list(dict.fromkeys(m.user_id for m in kept))[:MAX_PARTICIPANTS]
    group_scopes = sorted(visible_scope_keys(request.thread_id))
    allowed = set(group_scopes) | {f"user:{u}" for u in authors}
    related: list[Card] = []
    if embedder is not None and settings.related_cards > 0:
        try:
            vectors, calls = await embed_texts(
                embedder,
                [_related_query(kept)],
                key=f"{key}:q",
                dimension=settings.embedding_dimension,
                deadline=deadline,
            )
            usage.embed_calls += calls
        except LLMError as exc:
            if isinstance(exc, DeadlineExceeded | EmbedderTimeout):
                raise  # the run's own deadline, or a hung embedder: its cards can't be embedded
            log.warning(
                "consolidation.related_lookup_failed",
                chat_id=request.chat_id,
                error=exc.kind,
                code=exc.code,
                outage=is_outage(exc),
            )
        else:
            found = await store.similar_cards(
                request.chat_id,
                vectors[0],
                settings.related_cards,
                scope_keys=allowed,
                now=now,
                model=vectors.model,
            )
            related = [card for card, _ in found]
    recent = await store.live_cards(
        request.chat_id, group_scopes, limit=settings.existing_cards_max
    )
    personal = await store.live_cards(
        request.chat_id, [f"user:{u}" for u in authors], limit=CARDS_PER_PARTICIPANT
    )
    chosen: dict[str, Card] = {}
    for card in [*related, *recent, *personal]:
        if len(chosen) >= settings.existing_cards_max:
            break
        if card.id not in chosen and card.visible_at(now):
            chosen[card.id] = card
    return [(f"c{i}", card) for i, card in enumerate(chosen.values(), start=1)]


def _fit_cards(
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


def _dedupe_casefold(values: Sequence[str], limit: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        folded = value.casefold()
        if folded not in seen:
            seen.add(folded)
            out.append(redact_secrets(value)[:200])
    return out[:limit]


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What a run covers, decided before any call: the slice, its batches, the rest."""

    prompt_version: str
    #: The run's messages after its cursor.
    messages: tuple[Message, ...]
    run_slice: RunSlice
    #: The rest of the run, to enqueue as its own run (None: the slice is all of it).
    continuation: RunRequest | None
    #: Noise filtered out of the slice, by reason.
    noise_dropped: Mapping[str, int]
    #: Tokens of prompt and framing on top of the messages.
    overhead_tokens: int
    batches: tuple[tuple[PromptMessage, ...], ...]

    def base_result(self, run_id: str, request: RunRequest) -> ConsolidationResult:
        """The result of the run before any call (all a run with nothing to extract says)."""
        return ConsolidationResult(
            run_id=run_id,
            chat_id=request.chat_id,
            thread_id=request.thread_id,
            messages_total=len(self.messages),
            messages_covered=len(self.run_slice.covered),
            messages_extracted=len(self.run_slice.kept),
            noise_dropped=dict(self.noise_dropped),
            continuation=self.continuation,
        )


def plan_run(request: RunRequest, settings: Settings) -> RunPlan:
    """The run's slice (within the token budget), its batches and its continuation (pure)."""
    version = request.prompt_version or settings.prompt_version
    messages = after_cursor(request.messages, request.cursor)
    noise = filter_messages(messages)
    overhead = overhead_tokens(version)
    message_budget = max(64, int((settings.max_input_tokens - overhead) * MESSAGE_SHARE))
    run_slice = select_slice(
        messages,
        {m.message_id for m in noise.kept},
        budget_tokens=message_budget,
        max_messages=settings.max_batch_messages,
    )
    covered_ids = {m.message_id for m in run_slice.covered}
    noise_counts = Counter(
        str(reason) for mid, reason in noise.dropped.items() if mid in covered_ids
    )
    batches = pack_batches(
        run_slice.kept, budget_tokens=message_budget, max_messages=settings.max_batch_messages
    )
    return RunPlan(
        prompt_version=version,
        messages=tuple(messages),
        run_slice=run_slice,
        continuation=continuation_request(request, run_slice),
        noise_dropped=dict(sorted(noise_counts.items())),
        overhead_tokens=overhead,
        batches=tuple(tuple(batch) for batch in batches),
    )


@dataclass(slots=True)
class RunOutputs:
    """What the run's batches produced so far: validated writes, episode facts, counts."""

    cards: RunCards = field(default_factory=RunCards)
    resolutions: list[ResolutionWrite] = field(default_factory=list)
    links: list[LinkWrite] = field(default_factory=list)
    #: Existing cards already resolved by an earlier batch (one decision per card).
    claimed: set[str] = field(default_factory=set)
    dropped: Counter[str] = field(default_factory=Counter)
    summaries: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    participants: list[str] = field(default_factory=list)
    malformed: int = 0
    salvaged: int = 0
    #: Aliases of the existing cards shown to any batch.
    shown: set[str] = field(default_factory=set)
    usage: Usage = field(default_factory=Usage)

    def add_batch(
        self,
        output: ExtractionOutput,
        facts: BatchFacts,
        shown: Sequence[tuple[str, Card]],
        limits: Limits,
    ) -> None:
        """Validate one batch's answer against what the run holds and keep what passes."""
        self.malformed += output.malformed
        self.salvaged += int(output.salvaged)
        indexes, card_drops = validate_cards(output.candidate_cards, facts, limits, self.cards)
        resolutions, res_drops = validate_resolutions(
            output.resolutions,
            existing=dict(shown),
            cards=self.cards.cards,
            batch_indexes=indexes,
            claimed=self.claimed,
            limits=limits,
        )
        links, link_drops = validate_links(output.links, self.cards.cards, indexes)
        self.resolutions.extend(resolutions)
        self.links.extend(links)
        self.dropped.update(card_drops)
        self.dropped.update(res_drops)
        self.dropped.update(link_drops)
        if output.episode_summary:
            self.summaries.append(output.episode_summary)
        self.topics.extend(output.topics)
        self.participants.extend(output.participants)

    def summary(self) -> str:
        """The episode summary: every batch's, secrets redacted, bounded."""
        return redact_secrets("\n\n".join(self.summaries))[:SUMMARY_MAX_CHARS]

    def result(
        self, base: ConsolidationResult, applied: ApplyResult, batches: int
    ) -> ConsolidationResult:
        """The run's result once its write was applied (or found already applied)."""
        return dataclasses.replace(
            base,
            batches=batches,
            llm_calls=self.usage.llm_calls,
            embed_calls=self.usage.embed_calls,
            prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens,
            existing_cards_shown=len(self.shown),
            cards_inserted=applied.inserted,
            cards_observed=applied.observed,
            cards_superseded=applied.superseded,
            cards_competing=applied.competing,
            cards_rewritten=applied.rewritten,
            cards_merged=applied.merged,
            cards_reinforced=applied.reinforced,
            cards_demoted=applied.demoted,
            resolutions_skipped=applied.skipped,
            links_written=applied.links,
            dropped_by_validation=dict(sorted(self.dropped.items())),
            malformed_items=self.malformed,
            salvaged_answers=self.salvaged,
            episode_id=base.run_id,
            already_applied=not applied.applied,
        )


@dataclass(frozen=True, slots=True)
class Embedded:
    """The run's writes with their vectors (``model`` None: unknown or no embedder)."""

    cards: list[NewCard]
    resolutions: list[ResolutionWrite]
    episode_vector: list[float] | None
    model: str | None


async def consolidate_run(
    run_id: str,
    request: RunRequest,
    *,
    store: CardStore,
    extractor: ChatCall,
    embedder: Embedder | None,
    settings: Settings,
    deadline: float | None = None,
    attempt: int = 0,
    now: datetime | None = None,
    lookup_embedder: Embedder | None = None,
) -> ConsolidationResult:
    """Consolidate one claimed run (see the module doc for the failure contract).

    ``lookup_embedder`` serves the related-card lookup (default: ``embedder``).

    ``deadline`` is a ``time.monotonic()`` instant bounding every call.
    Idempotency keys are ``<run>:a<attempt>:<nonce>:…`` with a fresh nonce per
    call: the farm answers a repeated key with the job it already ran, so a
    run retried after a failure — or released during an outage, which
    refunds its attempt — must never reuse a key and inherit the failed job.
    """
    moment = now or datetime.now(UTC)
    plan = plan_run(request, settings)
    base = plan.base_result(run_id, request)
    if not plan.run_slice.kept:
        log.info(
            "consolidation.nothing_to_extract",
            run_id=run_id,
            chat_id=request.chat_id,
            covered=len(plan.run_slice.covered),
        )
        return base
    if await store.has_applied(request.chat_id, run_id):
        log.info("consolidation.already_applied", run_id=run_id, chat_id=request.chat_id)
        return dataclasses.replace(base, already_applied=True, episode_id=run_id)

    key = f"{run_id}:a{attempt}:{uuid.uuid4().hex[:8]}"
    outputs = RunOutputs()
    context = await _existing_context(
        store,
        request,
        plan.run_slice.kept,
        embedder=lookup_embedder or embedder,
        settings=settings,
        key=key,
        deadline=deadline,
        now=moment,
        usage=outputs.usage,
    )
    for index, batch in enumerate(plan.batches):
        await _extract_batch(
            extractor,
            run_id,
            request,
            plan,
            index,
            batch,
            context,
            outputs,
            settings,
            key=key,
            deadline=deadline,
        )
    embedded = await _embed(embedder, outputs, settings, key=key, deadline=deadline)
    applied = await _apply(
        store, run_id, request, plan, outputs, embedded, settings, deadline=deadline, now=moment
    )
    result = outputs.result(base, applied, len(plan.batches))
    log.info(
        "consolidation.done",
        run_id=run_id,
        chat_id=request.chat_id,
        batches=result.batches,
        llm_calls=result.llm_calls,
        inserted=result.cards_inserted,
        observed=result.cards_observed,
        superseded=result.cards_superseded,
        dropped=sum(outputs.dropped.values()),
        continuation=plan.continuation is not None,
    )
    return result


async def _extract_batch(
    extractor: ChatCall,
    run_id: str,
    request: RunRequest,
    plan: RunPlan,
    index: int,
    batch: Sequence[PromptMessage],
    context: Sequence[tuple[str, Card]],
    outputs: RunOutputs,
    settings: Settings,
    *,
    key: str,
    deadline: float | None,
) -> None:
    """One extraction call: the batch with the existing cards that fit beside it."""
    batch_tokens = sum(piece.tokens for piece in batch)
    shown = _fit_cards(
        context,
        settings.max_input_tokens - plan.overhead_tokens - batch_tokens,
        request.range_end,
    )
    outputs.shown.update(alias for alias, _ in shown)
    answer = await extractor(
        build_extraction_request(
            extraction_payload(run_id, request, batch, shown),
            prompt_version=plan.prompt_version,
            settings=settings,
        ),
        workflow=MEMORY_EXTRACTION,
        idempotency_key=f"{key}:b{index}",
        timeout=call_timeout(deadline, MEMORY_EXTRACTION),
    )
    outputs.usage.llm_calls += 1
    outputs.usage.prompt_tokens += answer.prompt_tokens or 0
    outputs.usage.completion_tokens += answer.completion_tokens or 0
    output = decode_extraction(answer.content)
    outputs.add_batch(
        output, _batch_facts(request.thread_id, batch), shown, Limits.from_settings(settings)
    )


async def _embed(
    embedder: Embedder | None,
    outputs: RunOutputs,
    settings: Settings,
    *,
    key: str,
    deadline: float | None,
) -> Embedded:
    """Vectors for the new cards, the rewritten facts and the summary, in one pass."""
    cards = list(outputs.cards.cards)
    resolutions = list(outputs.resolutions)
    if embedder is None:
        return Embedded(cards, resolutions, None, None)
    summary = outputs.summary()
    rewrite_slots = [i for i, r in enumerate(resolutions) if r.new_fact_text]
    texts = [c.fact_text for c in cards]
    texts += [resolutions[i].new_fact_text or "" for i in rewrite_slots]
    texts += [summary] if summary else []
    vectors, calls = (
        await embed_texts(
            embedder,
            texts,
            key=f"{key}:emb",
            dimension=settings.embedding_dimension,
            deadline=deadline,
        )
        if texts
        else (Vectors(), 0)
    )
    outputs.usage.embed_calls += calls
    cards = [dataclasses.replace(c, embedding=v) for c, v in zip(cards, vectors, strict=False)]
    for slot, vector in zip(rewrite_slots, vectors[len(cards) :], strict=False):
        resolutions[slot] = dataclasses.replace(resolutions[slot], embedding=vector)
    return Embedded(cards, resolutions, vectors[-1] if summary else None, vectors.model)


async def _apply(
    store: CardStore,
    run_id: str,
    request: RunRequest,
    plan: RunPlan,
    outputs: RunOutputs,
    embedded: Embedded,
    settings: Settings,
    *,
    deadline: float | None,
    now: datetime,
) -> ApplyResult:
    """The run's one write (§7 rev 2: retried until Redis takes it, within the deadline)."""
    kept, covered = plan.run_slice.kept, plan.run_slice.covered
    writes = RunWrites(
        observed_at=max(m.sent_at for m in kept),
        cards=embedded.cards,
        resolutions=embedded.resolutions,
        links=outputs.links,
        episode=EpisodeWrite(
            summary=outputs.summary(),
            topics=_dedupe_casefold(outputs.topics, MAX_TOPICS),
            participants=_dedupe_casefold(outputs.participants, MAX_PARTICIPANT_NAMES),
            range_start=min(m.sent_at for m in covered),
            range_end=max(m.sent_at for m in covered),
            thread_id=request.thread_id,
            message_count=len(kept),
            embedding=embedded.episode_vector,
        ),
        embedding_model=embedded.model,
    )
    # A store error never discards a farm result that succeeded. The write is one
    # idempotent script, so it is retried until Redis takes it (bounded by the run's
    # deadline; then the store error releases the run, attempt refunded).
    return await retry_store_write(
        "cards",
        lambda: store.apply_run(request.chat_id, run_id, writes, now=now),
        cap=settings.store_retry_max_seconds,
        give_up_after=time_left(deadline, floor=0.0),
    )


def _batch_facts(thread_id: int, batch: Sequence[PromptMessage]) -> BatchFacts:
    return BatchFacts(
        thread_id=thread_id,
        messages={m.message_id: SourceMessage(m.user_id, m.sent_at) for m in batch},
    )
