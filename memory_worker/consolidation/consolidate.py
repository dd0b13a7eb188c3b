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
  embedder is a side service.
- The farm is never paid twice for one extraction (§7): once every extraction call
  succeeded, the validated result is kept with the run (``kept``,
  :mod:`~memory_worker.consolidation.kept`) before the embedding, and the run's next
  attempt — after an embedding or card-write failure, released or failed — takes it and goes
  straight to the embedding and the card write, unless its prompt version, slice or forget
  epoch changed or it expired.
- The related-card lookup is best effort: when it fails for any reason but
  the run's own deadline, a hung embedder (an embedder timeout) or a busy one
  (the lookup's walk ended on busy answers, as a hung embedder's retry hop that
  meets a job still queued does: ``CapacityWaitTimeout``) — the run's cards could
  not be embedded later either, so no extraction call is spent and the run is
  released (:func:`~memory_worker.consolidation.context.lookup_failure_ends_run`)
  — an embedder outage included — the run goes on
  with recent cards only. During a farm-wide outage the extraction call is
  therefore always tried, so extraction's breaker learns (and the admins
  hear) that extraction is down too; the lookup alone never decides a run's
  fate (§6). The worker gives the lookup its own embedder
  (``lookup_embedder``) that never probes an open embedding route, so a run
  spends at most the extraction probe while every target is down; an
  embedder-only outage costs each run one extraction: its later attempts reuse it (the
  final embedding releases the run until the embedder answers).
- A chat with no live card vector in the run's scopes (every chat's first
  run) has nothing to relate to: the lookup makes no embedding call at all.
  Extraction then is the run's first farm call, so it still probes; a hung
  embedder shows at the cards' embedding instead, which releases the run
  after its extraction (kept for the rerun, as after any embedder timeout).
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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from redis.exceptions import RedisError

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
from memory_worker.consolidation.kept import (
    ExtractionCounts,
    KeptExtraction,
    slice_digest,
    stale_reason,
)
from memory_worker.consolidation.kept import decode as decode_kept
from memory_worker.consolidation.kept import encode as encode_kept
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
from memory_worker.runs import ExtractionSlot
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
    #: The extraction was kept by an earlier attempt (§7): no farm call extracted it now; the
    #: extraction's counts (calls, tokens, drops) are those of that attempt.
    extraction_reused: bool = False
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
    #: What the extraction is made of (:func:`~memory_worker.consolidation.kept.slice_digest`):
    #: a kept extraction of another slice does not serve this one.
    digest: str = ""

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
    batches = tuple(
        tuple(batch)
        for batch in pack_batches(
            run_slice.kept, budget_tokens=message_budget, max_messages=settings.max_batch_messages
        )
    )
    digest = slice_digest(
        request, run_slice.kept, run_slice.covered, batches, Limits.from_settings(settings)
    )
    return RunPlan(
        prompt_version=version,
        messages=tuple(messages),
        run_slice=run_slice,
        continuation=continuation_request(request, run_slice),
        noise_dropped=dict(sorted(noise_counts.items())),
        overhead_tokens=overhead,
        batches=batches,
        digest=digest,
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

    def kept(self, plan: RunPlan, *, forget_epoch: int, at_ms: int) -> KeptExtraction:
        """The run's validated extraction as the card write takes it (and as it is kept for
        the run's next attempts, §7)."""
        return KeptExtraction(
            prompt_version=plan.prompt_version,
            slice_digest=plan.digest,
            forget_epoch=forget_epoch,
            kept_at_ms=at_ms,
            cards=tuple(self.cards.cards),
            resolutions=tuple(self.resolutions),
            links=tuple(self.links),
            summary=self.summary(),
            topics=tuple(episode_labels(self.topics, MAX_TOPICS)),
            participants=tuple(episode_labels(self.participants, MAX_PARTICIPANT_NAMES)),
            counts=ExtractionCounts(
                batches=len(plan.batches),
                llm_calls=self.usage.llm_calls,
                prompt_tokens=self.usage.prompt_tokens,
                completion_tokens=self.usage.completion_tokens,
                existing_cards_shown=len(self.shown),
                malformed_items=self.malformed,
                salvaged_answers=self.salvaged,
                dropped_by_validation=dict(sorted(self.dropped.items())),
            ),
        )


def run_result(
    base: ConsolidationResult,
    record: KeptExtraction,
    applied: ApplyResult,
    *,
    embed_calls: int,
    reused: bool,
) -> ConsolidationResult:
    """The run's result once its write was applied (or found already applied)."""
    counts = record.counts
    return dataclasses.replace(
        base,
        batches=counts.batches,
        llm_calls=counts.llm_calls,
        embed_calls=embed_calls,
        prompt_tokens=counts.prompt_tokens,
        completion_tokens=counts.completion_tokens,
        existing_cards_shown=counts.existing_cards_shown,
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
        dropped_by_validation=dict(counts.dropped_by_validation),
        malformed_items=counts.malformed_items,
        salvaged_answers=counts.salvaged_answers,
        episode_id=base.run_id,
        already_applied=not applied.applied,
        extraction_reused=reused,
    )


@dataclass(frozen=True, slots=True)
class Embedded:
    """The run's writes with their vectors (``model`` None: unknown or no embedder)."""

    cards: list[NewCard]
    resolutions: list[ResolutionWrite]
    episode_vector: list[float] | None
    model: str | None
    #: Embedding calls made for them.
    calls: int = 0


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
    kept: ExtractionSlot | None = None,
    checkpoint: Callable[[], Awaitable[None]] | None = None,
) -> ConsolidationResult:
    """Consolidate one claimed run (see the module doc for the failure contract).

    ``lookup_embedder`` serves the related-card lookup (default: ``embedder``).
    ``forget_epoch`` is the chat's forget epoch at the run's claim: the card write
    raises :class:`~memory_worker.errors.ForgottenWrite` when a forget came after (§14).
    ``kept``: where the run keeps its validated extraction between attempts (§7) — an
    earlier attempt's that still holds is used instead of the farm; a new one is kept
    before the embedding (None: nothing is kept or read, e.g. maintenance and tests).
    ``checkpoint`` is awaited before the embedding and before the card write: it raises
    :class:`~memory_worker.errors.RunCancelled` when an operator cancelled the run (§13).

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
    record = await _earlier_extraction(run, kept)
    reused, lookup_calls = record is not None, 0
    if record is None:
        lookup = lookup_embedder or embedder
        reads = await _reads_unless_applied(store, run_id, request, plan, settings, lookup)
        if reads is None:  # applied already (a crash after its write): no call
            return dataclasses.replace(base, already_applied=True, episode_id=run_id)
        outputs = RunOutputs()
        context = await _context(run, store, lookup, outputs, reads)
        for index, batch in enumerate(plan.batches):
            await _extract_batch(run, extractor, index, batch, context, outputs)
        record = outputs.kept(plan, forget_epoch=run.epoch, at_ms=run.now_ms)
        lookup_calls = outputs.usage.embed_calls
        await _keep(run, kept, record)
    elif await _applied(store, run_id, request):
        return dataclasses.replace(base, already_applied=True, episode_id=run_id)
    if checkpoint is not None:
        await checkpoint()
    embedded = await _embed(run, embedder, record)
    if checkpoint is not None:
        await checkpoint()
    applied = await _apply(run, store, record, embedded)
    result = run_result(
        base,
        record,
        applied,
        embed_calls=lookup_calls + embedded.calls,
        reused=reused,
    )
    _log_done(run, result)
    return result


async def _earlier_extraction(run: _Attempt, kept: ExtractionSlot | None) -> KeptExtraction | None:
    """An earlier attempt's kept extraction that still serves this one (§7), else None.

    A run's first claim (one attempt, never released) had no earlier attempt: no read."""
    if kept is None or (kept.claim.attempts <= 1 and kept.claim.releases == 0):
        return None
    raw = await kept.load()
    if raw is None:
        return None
    record = decode_kept(raw, card_max_bytes=run.settings.card_max_bytes)
    if record is None:
        log.warning("consolidation.kept_extraction_unreadable", run_id=run.run_id)
        return None
    stale = stale_reason(
        record,
        prompt_version=run.plan.prompt_version,
        digest=run.plan.digest,
        forget_epoch=run.epoch,
        now_ms=run.now_ms,
        ttl_ms=int(run.settings.extraction_keep_seconds * 1000),
    )
    if stale is not None:
        log.info("consolidation.kept_extraction_stale", run_id=run.run_id, reason=stale.value)
        return None
    log.info(
        "consolidation.kept_extraction_reused",
        run_id=run.run_id,
        chat_id=run.request.chat_id,
        cards=len(record.cards),
        llm_calls_saved=record.counts.llm_calls,
    )
    return record


async def _keep(run: _Attempt, kept: ExtractionSlot | None, record: KeptExtraction) -> None:
    """Keep the extraction for the run's next attempts (best effort: the store refusing or
    being away never costs this attempt its farm result, §7)."""
    if kept is None:
        return
    try:
        stored = await kept.save(encode_kept(record))
    except RedisError as exc:  # away, or refusing writes (OOM…): the attempt goes on
        log.warning(
            "consolidation.extraction_not_kept", run_id=run.run_id, error=type(exc).__name__
        )
        return
    if not stored:  # the lease moved on, or a forget came after the claim
        log.info("consolidation.extraction_not_kept", run_id=run.run_id, error="refused")


async def _applied(store: CardStore, run_id: str, request: RunRequest) -> bool:
    """The run's write already landed (a crash after it, before the completion)."""
    if await store.has_applied(request.chat_id, run_id):
        log.info("consolidation.already_applied", run_id=run_id, chat_id=request.chat_id)
        return True
    return False


def _log_done(run: _Attempt, result: ConsolidationResult) -> None:
    log.info(
        "consolidation.done",
        run_id=run.run_id,
        chat_id=run.request.chat_id,
        batches=result.batches,
        llm_calls=result.llm_calls,
        inserted=result.cards_inserted,
        observed=result.cards_observed,
        superseded=result.cards_superseded,
        dropped=sum(result.dropped_by_validation.values()),
        reused=result.extraction_reused,
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

    @property
    def epoch(self) -> int:
        """The forget epoch the attempt was claimed under (0: unfenced)."""
        return self.forget_epoch or 0

    @property
    def now_ms(self) -> int:
        return int(self.now.timestamp() * 1000)


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


async def _embed(run: _Attempt, embedder: Embedder | None, record: KeptExtraction) -> Embedded:
    """Vectors for the new cards, the rewritten facts and the summary, in one pass."""
    cards = list(record.cards)
    resolutions = list(record.resolutions)
    if embedder is None:
        return Embedded(cards, resolutions, None, None)
    summary = record.summary
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
    cards = [dataclasses.replace(c, embedding=v) for c, v in zip(cards, vectors, strict=False)]
    for slot, vector in zip(rewrite_slots, vectors[len(cards) :], strict=False):
        resolutions[slot] = dataclasses.replace(resolutions[slot], embedding=vector)
    return Embedded(cards, resolutions, vectors[-1] if summary else None, vectors.model, calls)


async def _apply(
    run: _Attempt, store: CardStore, record: KeptExtraction, embedded: Embedded
) -> ApplyResult:
    """The run's one write (§7: retried until Redis takes it, within the deadline)."""
    kept, covered = run.plan.run_slice.kept, run.plan.run_slice.covered
    writes = RunWrites(
        observed_at=max(m.sent_at for m in kept),
        cards=embedded.cards,
        resolutions=embedded.resolutions,
        links=record.links,
        episode=EpisodeWrite(
            summary=record.summary,
            topics=record.topics,
            participants=record.participants,
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
