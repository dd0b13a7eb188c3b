"""Consolidation served by the routed walker: the production chat call, embedders and processor.

:class:`RoutedModels` backs the consolidation's :class:`ChatCall` and
:class:`Embedder` protocols with the routed walker (breakers, failover, routing
events) and counts each routed success in the attempt metrics;
:class:`ConsolidationProcessor` is the production ``RunProcessor`` — a claimed run
consolidated (:func:`consolidate_run`) through those calls. Tests plug in their own
calls and processors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from llm_client import EMBEDDING, AttemptCounter, ChatResult, LLMError, Walker
from memory_worker.cards import CardStore
from memory_worker.consolidation.consolidate import consolidate_run
from memory_worker.consolidation.model_calls import ChatCall, Embedder, Vectors
from memory_worker.deadlines import deadline_after
from memory_worker.errors import StoreDataCorrupt
from memory_worker.logs import get_logger
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.privacy.masking import forget_echoes
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from memory_worker.storage.faults import store_answer

log = get_logger(__name__)


def _strings(value: object) -> Iterator[str]:
    """Every string of a request a farm may echo that is the chat's: its messages, senders'
    names and known cards — not the system prompt (our own instructions: a farm's error
    sharing their words is no echo of the chat)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        if value.get("role") == "system":
            return
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


class RoutedModels:
    """The consolidation's chat call and embedder, served by the routed walker."""

    def __init__(self, walker: Walker, attempts: AttemptCounter, settings: Settings) -> None:
        self.walker = walker
        self.attempts = attempts
        self.settings = settings
        self.context: Mapping[str, str] = {}

    async def chat(
        self,
        request: Mapping[str, Any],
        *,
        workflow: str,
        idempotency_key: str,
        timeout: float | None,
    ) -> ChatResult:
        try:
            routed = await self.walker.chat(
                workflow,
                request,
                deadline=deadline_after(timeout),
                idempotency_key=idempotency_key,
                context=self.context,
            )
        except LLMError as exc:
            forget_echoes(exc, list(_strings(request)))
            raise
        if not routed.counted:
            await self._success(routed.target.id)
        return routed.value

    async def embed(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        return await self._embed(texts, idempotency_key=idempotency_key, timeout=timeout)

    async def lookup_embed(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        """An optional embedding (the related-card lookup): closed targets only, no probe."""
        return await self._embed(
            texts, idempotency_key=idempotency_key, timeout=timeout, probes=False
        )

    async def _embed(
        self,
        texts: Sequence[str],
        *,
        idempotency_key: str,
        timeout: float | None,
        probes: bool = True,
    ) -> list[list[float]]:
        # Cards, summaries and the related-card lookup's run text: passages (no task).
        try:
            routed = await self.walker.embed(
                EMBEDDING,
                texts,
                dimension=self.settings.embedding_dimension,
                deadline=deadline_after(timeout),
                idempotency_key=idempotency_key,
                context=self.context,
                probes=probes,
            )
        except LLMError as exc:
            forget_echoes(exc, texts)
            raise
        if not routed.counted:  # the breaker record counted it otherwise
            await self._success(routed.target.id)
        # §16: the vectors carry the model that made them (the card store never mixes two)
        return Vectors(routed.value.embeddings, model=routed.target.model)

    async def _success(self, target: str) -> None:
        try:  # metrics are bookkeeping: they never fail a run (§7 "Store faults")
            await self.attempts.record_success(target)
        except Exception as exc:
            self.walker.bookkeeping_failed("attempt_counter", exc, target=target)

    @property
    def has_embedding_route(self) -> bool:
        return self.walker.routes.get(EMBEDDING) is not None

    def extractor(self, context: Mapping[str, str]) -> ChatCall:
        scoped = RoutedModels(self.walker, self.attempts, self.settings)
        scoped.context = context
        return scoped.chat

    def embedder(self, context: Mapping[str, str]) -> Embedder | None:
        if not self.has_embedding_route:
            return None
        scoped = RoutedModels(self.walker, self.attempts, self.settings)
        scoped.context = context
        return scoped.embed

    def lookup_embedder(self, context: Mapping[str, str]) -> Embedder | None:
        """The related-card lookup's embedder: it never probes an open embedding route, so
        during an outage the run's extraction call is the one that probes (§6)."""
        if not self.has_embedding_route:
            return None
        scoped = RoutedModels(self.walker, self.attempts, self.settings)
        scoped.context = context
        return scoped.lookup_embed


class ConsolidationProcessor:
    """A claimed run → consolidated memory (``consolidate_run``) through the walker; with
    ``runs``, each run keeps its validated extraction between attempts (§7)."""

    def __init__(
        self,
        models: RoutedModels,
        cards: CardStore,
        settings: Settings,
        runs: RunStore | None = None,
    ) -> None:
        self.models = models
        self.cards = cards
        self.settings = settings
        self.runs = runs

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        context = {"run_id": run.id, "chat_id": str(run.request.chat_id)}
        try:
            result = await consolidate_run(
                run.id,
                run.request,
                store=self.cards,
                extractor=self.models.extractor(context),
                embedder=self.models.embedder(context),
                lookup_embedder=self.models.lookup_embedder(context),
                settings=self.settings,
                deadline=deadline,
                attempt=run.attempts,
                forget_epoch=run.forget_epoch,
                kept=self.runs.extraction_slot(run) if self.runs is not None else None,
                checkpoint=partial(self.runs.checkpoint, run) if self.runs is not None else None,
            )
        except Exception as exc:
            answer = store_answer(exc)
            if isinstance(answer, StoreDataCorrupt) and answer.chat_id is None:
                raise await self._located(answer, run) from exc
            raise
        continuations = [result.continuation] if result.continuation is not None else []
        return ProcessResult(summary=result.summary(), continuations=continuations)

    async def _located(self, answer: StoreDataCorrupt, run: ClaimedRun) -> StoreDataCorrupt:
        """``answer`` naming the run's chat and the keys of its memory that are misshapen
        (§7: corrupt data fails the run, and says where)."""
        try:
            problems = await self.cards.misshapen(run.request.chat_id, run_id=run.id)
        except Exception as exc:  # the diagnosis is best effort: the answer stands
            log.warning("cards.misshapen_unread", error=type(exc).__name__)
            problems = ()
        else:
            problems = problems or ("no key of the chat's memory is misshapen now",)
        return answer.located(run.request.chat_id, problems)
