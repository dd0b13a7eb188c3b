"""One memory run end to end (§10): filter → batch → extract → validate → embed → one write.

:func:`consolidate_run` is called by the run pipeline with a claimed run. It
returns a :class:`ConsolidationResult` (counts only — no message or card
text) and, when the run was too big for its token budget, the continuation
run to enqueue.

Failure contract:

- Nothing reaches the card store before every LLM and embedding call of the
  run has succeeded: the run's whole output is written by ONE idempotent
  script at the very end (:meth:`CardStore.apply_run`).
- Every ``llm_client._errors`` exception of the extractor or the embedder
  propagates unchanged, so the pipeline can release (outage) or fail
  (timeout, protocol, …) the run by type. Unusable extractor output is a
  :class:`~llm_client._errors.DecodeError` (protocol error).
- An embedding call that times out (its own short task budget, §3) raises
  :class:`~memory_worker.runs.policy.EmbedderTimeout`, which releases the run: the
  embedder is a side service and the extraction is simply redone.
- The related-card lookup is best effort: when it fails for any reason but
  the run's own deadline or a hung embedder (an embedder timeout: the run's
  cards could not be embedded later either, so no extraction call is spent)
  — an embedder outage included — the run goes on
  with recent cards only. During a farm-wide outage the extraction call is
  therefore always tried, so extraction's breaker learns (and the admins
  hear) that extraction is down too; the lookup alone never decides a run's
  fate (§6). The worker gives the lookup its own embedder
  (``lookup_embedder``) that never probes an open embedding route, so a run
  spends at most the extraction probe while every target is down; an
  embedder-only outage costs one extraction per probe interval fleet-wide
  (the final embedding then releases the run).
- A chat with no live card vector in the run's scopes (every chat's first
  run) has nothing to relate to: the lookup makes no embedding call at all.
  Extraction then is the run's first farm call, so it still probes; a hung
  embedder shows at the cards' embedding instead, which releases the run
  after its extraction (redone on the rerun, as any embedder timeout's).
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

from llm_client import MEMORY_EXTRACTION
from memory_worker.cards import (
    ApplyResult,
    Card,
    CardStore,
    EpisodeWrite,
    LinkWrite,
    NewCard,
    ResolutionWrite,
    RunWrites,
)
from memory_worker.cards.rules import (
    MAX_PARTICIPANT_NAMES,
    MAX_TOPICS,
    episode_labels,
    episode_summary,
)
from memory_worker.consolidation.batching import (
    MESSAGE_SHARE,
    PromptMessage,
    RunSlice,
    after_cursor,
    continuation_request,
    pack_batches,
    select_slice,
)
from memory_worker.consolidation.context import ContextReads, Usage, existing_context, fit_cards
from memory_worker.consolidation.extraction import ExtractionOutput, decode_extraction
from memory_worker.consolidation.model_calls import ChatCall, Embedder, Vectors, embed_texts
from memory_worker.consolidation.noise import filter_messages
from memory_worker.consolidation.prompt import (
    build_extraction_request,
    extraction_payload,
    overhead_tokens,
)
from memory_worker.consolidation.validation import (
    BatchFacts,
    Limits,
    RunCards,
    SourceMessage,
    validate_cards,
    validate_links,
    validate_resolutions,
)
from memory_worker.deadlines import call_timeout, time_left
from memory_worker.logs import get_logger
from memory_worker.models import Message, RunRequest
from memory_worker.settings import Settings
from memory_worker.storage.connections import retry_store_write

log = get_logger(__name__)


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
    #: New cards not stored: their fact was retracted after every message they cite (§10).
    cards_retracted: int = 0
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
        return episode_summary("\n\n".join(self.summaries))

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
            cards_retracted=applied.retracted,
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
    forget_epoch: int | None = None,
) -> ConsolidationResult:
    """Consolidate one claimed run (see the module doc for the failure contract).

    ``lookup_embedder`` serves the related-card lookup (default: ``embedder``).
    ``forget_epoch`` is the chat's forget epoch at the run's claim: the card write
    raises :class:`~memory_worker.errors.ForgottenWrite` when a forget came after (§14).

    ``deadline`` is a ``time.monotonic()`` instant bounding every call.
    Idempotency keys are ``<run>:a<attempt>:<nonce>:…`` with a fresh nonce per
    call: the farm answers a repeated key with the job it already ran, so a
    run retried after a failure — or released during an outage, which
    refunds its attempt — must never reuse a key and inherit the failed job.
    """
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
    lookup = lookup_embedder or embedder
    reads = await _reads_unless_applied(store, run_id, request, plan, settings, lookup)
    if reads is None:  # applied already (a crash after its write): no call
        return dataclasses.replace(base, already_applied=True, episode_id=run_id)

    run = _Attempt(
        run_id=run_id,
        request=request,
        plan=plan,
        settings=settings,
        key=f"{run_id}:a{attempt}:{uuid.uuid4().hex[:8]}",
        deadline=deadline,
        now=now or datetime.now(UTC),
        forget_epoch=forget_epoch,
    )
    outputs = RunOutputs()
    context = await _context(run, store, lookup, outputs, reads)
    for index, batch in enumerate(plan.batches):
        await _extract_batch(run, extractor, index, batch, context, outputs)
    embedded = await _embed(run, embedder, outputs)
    applied = await _apply(run, store, outputs, embedded)
    result = outputs.result(base, applied, len(plan.batches))
    _log_done(run, result, outputs)
    return result


def _log_done(run: _Attempt, result: ConsolidationResult, outputs: RunOutputs) -> None:
    log.info(
        "consolidation.done",
        run_id=run.run_id,
        chat_id=run.request.chat_id,
        batches=result.batches,
        llm_calls=result.llm_calls,
        inserted=result.cards_inserted,
        observed=result.cards_observed,
        superseded=result.cards_superseded,
        dropped=sum(outputs.dropped.values()),
        continuation=run.plan.continuation is not None,
    )


async def _reads_unless_applied(
    store: CardStore,
    run_id: str,
    request: RunRequest,
    plan: RunPlan,
    settings: Settings,
    lookup: Embedder | None,
) -> ContextReads | None:
    """The context's card reads, started with the already-applied check rather than a round
    trip after it; None (the reads dropped unused) when the run was applied (a crash after
    its write)."""
    reads = ContextReads(store, request, plan.run_slice.kept, settings, lookup=lookup is not None)
    applied: bool | None = None
    try:
        applied = await store.has_applied(request.chat_id, run_id)
    finally:
        if applied is not False:  # applied, or the check raised: the reads go unused
            await reads.close()
    if applied:
        log.info("consolidation.already_applied", run_id=run_id, chat_id=request.chat_id)
        return None
    return reads


@dataclass(frozen=True, slots=True)
class _Attempt:
    """One attempt at a run: what every step of it needs."""

    run_id: str
    request: RunRequest
    plan: RunPlan
    settings: Settings
    #: Prefix of every idempotency key of this attempt (fresh nonce: see consolidate_run).
    key: str
    deadline: float | None
    now: datetime
    forget_epoch: int | None = None


async def _context(
    run: _Attempt,
    store: CardStore,
    embedder: Embedder | None,
    outputs: RunOutputs,
    reads: ContextReads,
) -> list[tuple[str, Card]]:
    """The existing cards shown beside every batch of the run (:func:`existing_context`)."""
    return await existing_context(
        store,
        run.request,
        run.plan.run_slice.kept,
        embedder=embedder,
        settings=run.settings,
        key=run.key,
        deadline=run.deadline,
        now=run.now,
        usage=outputs.usage,
        reads=reads,
    )


async def _extract_batch(
    run: _Attempt,
    extractor: ChatCall,
    index: int,
    batch: Sequence[PromptMessage],
    context: Sequence[tuple[str, Card]],
    outputs: RunOutputs,
) -> None:
    """One extraction call: the batch with the existing cards that fit beside it."""
    settings, request = run.settings, run.request
    batch_tokens = sum(piece.tokens for piece in batch)
    shown = fit_cards(
        context,
        settings.max_input_tokens - run.plan.overhead_tokens - batch_tokens,
        request.range_end,
    )
    outputs.shown.update(alias for alias, _ in shown)
    answer = await extractor(
        build_extraction_request(
            extraction_payload(run.run_id, request, batch, shown),
            prompt_version=run.plan.prompt_version,
            settings=settings,
        ),
        workflow=MEMORY_EXTRACTION,
        idempotency_key=f"{run.key}:b{index}",
        timeout=call_timeout(run.deadline, MEMORY_EXTRACTION),
    )
    outputs.usage.llm_calls += 1
    outputs.usage.prompt_tokens += answer.prompt_tokens or 0
    outputs.usage.completion_tokens += answer.completion_tokens or 0
    output = decode_extraction(answer.content)
    outputs.add_batch(
        output, _batch_facts(request.thread_id, batch), shown, Limits.from_settings(settings)
    )


async def _embed(run: _Attempt, embedder: Embedder | None, outputs: RunOutputs) -> Embedded:
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
            key=f"{run.key}:emb",
            dimension=run.settings.embedding_dimension,
            deadline=run.deadline,
            contacts=run.settings.redact_contacts,
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
    run: _Attempt, store: CardStore, outputs: RunOutputs, embedded: Embedded
) -> ApplyResult:
    """The run's one write (§7: retried until Redis takes it, within the deadline)."""
    kept, covered = run.plan.run_slice.kept, run.plan.run_slice.covered
    writes = RunWrites(
        observed_at=max(m.sent_at for m in kept),
        cards=embedded.cards,
        resolutions=embedded.resolutions,
        links=outputs.links,
        episode=EpisodeWrite(
            summary=outputs.summary(),
            topics=episode_labels(outputs.topics, MAX_TOPICS),
            participants=episode_labels(outputs.participants, MAX_PARTICIPANT_NAMES),
            range_start=min(m.sent_at for m in covered),
            range_end=max(m.sent_at for m in covered),
            thread_id=run.request.thread_id,
            message_count=len(kept),
            embedding=embedded.episode_vector,
        ),
        embedding_model=embedded.model,
        authors=sorted({(m.message_id, m.user_id) for m in covered}),
        forget_epoch=run.forget_epoch,
    )
    # A store error never discards a farm result that succeeded. The write is one
    # idempotent script, so it is retried until Redis takes it (bounded by the run's
    # deadline; then the store error releases the run, attempt refunded).
    return await retry_store_write(
        "cards",
        lambda: store.apply_run(run.request.chat_id, run.run_id, writes, now=run.now),
        cap=run.settings.store_retry_max_seconds,
        give_up_after=time_left(run.deadline, floor=0.0),
    )


def _batch_facts(thread_id: int, batch: Sequence[PromptMessage]) -> BatchFacts:
    return BatchFacts(
        thread_id=thread_id,
        messages={m.message_id: SourceMessage(m.user_id, m.sent_at) for m in batch},
    )
