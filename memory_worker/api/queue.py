"""The bot's API (§13): enqueue runs, read them back, read memory.

::

    from memory_worker import MemoryQueue

    q = await MemoryQueue.connect()            # REDIS_URL (else RedisNotConfigured)
    result = await q.enqueue({"chat_id": 42, ...})
    result.status                              # enqueued | duplicate | queue_full | daily_cap
    run = await q.get_run(result.run_id)
    cards = await q.visible_cards(42, thread_id=0, user_id=7)
    gone = await q.forget(42, user_id=7)       # §14: counts of what went (dry_run=True: none)
    near = await q.similar_cards(42, embedding, k=5)
    hits = await q.recall(42, "what does Alice drink?", k=5, user_id=7)  # hybrid, §16
    hits[0].card.observed_at                   # a RecallHit; unpacks as (card, score)
    memory = await q.context(42, user_id=7, query="drinks?", max_tokens=800)  # memory.text
    await q.retract("42:7", actor="ops", reason="wrong")  # or q.correct("42:7", "…", actor=)
    data = await q.export(42, user_id=7)       # every card, episode, link: data.lines()
    await q.close()

Enqueue validates first (``InvalidRunRequest`` lists every problem and
nothing is stored), applies the caps atomically, and wakes the pipeline
unless it is already running or deferred for an outage. ``enqueue_many`` is
all-or-nothing for validation (§7): every request is parsed and
size-checked before the first one is stored. (The caps still answer per run:
``queue_full`` for the tail of a batch is an answer, not an error.)

``connect`` needs a server: ``redis_url`` or ``REDIS_URL``; without either it
raises :class:`~memory_worker.errors.RedisNotConfigured` unless the caller asks
for the embedded Valkey of ``MEMORY_DATA_DIR`` (``embedded=True``, as the CLI
and the demo do) — a bot started from another directory would otherwise get a
server of its own whose runs no worker ever sees (§13).

Every memory call checks its arguments first (:mod:`memory_worker.api.query_args`):
a non-int id, a vector of the wrong size, a recall text or ``k`` over its bound
raise the :class:`~memory_worker.errors.InvalidQuery` errors before any read.
The library logs through stdlib ``logging`` under ``memory_worker.*`` and never
writes to stdout.

``connect`` also checks the server once (:mod:`memory_worker.storage.checks`): an
evicting ``maxmemory-policy`` or a user without script permission is refused
with a typed error here, not discovered later as lost runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from memory_worker.api.memory_ops import MemoryOps
from memory_worker.api.query_args import (
    check_embedding,
    check_id,
    check_k,
    check_optional_id,
    check_query_text,
    check_window,
)
from memory_worker.deadlines import deadline_after
from memory_worker.errors import InvalidRunRequest, RedisNotConfigured, VectorSpaceMismatch
from memory_worker.keys import Keys
from memory_worker.models import Run, RunRequest, RunStatus, parse_run_request
from memory_worker.pipeline.ticks import Mode, TickPlan, TickQueue
from memory_worker.runs import EnqueueResult, EnqueueStatus, RunStore
from memory_worker.settings import Settings, get_settings
from memory_worker.storage.checks import check_redis
from memory_worker.storage.connections import (
    RedisHandle,
    cards_client,
    close_cards_client,
    open_redis,
)

if TYPE_CHECKING:
    from llm_client import Walker
    from memory_worker.cards import Card, CardStore, VectorSpace
    from memory_worker.cards.recall import RecallHit
    from memory_worker.privacy.forget import ForgetResult
    from memory_worker.wiring import Routing


class MemoryQueue(MemoryOps):
    """A connection to the memory store for the bot process (the memory calls beyond
    reading — context, retract, correct, export, import — are :class:`MemoryOps`')."""

    def __init__(self, handle: RedisHandle, settings: Settings) -> None:
        self._handle = handle
        self.settings = settings
        self.redis = handle.client
        self.keys = Keys(settings.key_prefix)
        self.store = RunStore(self.redis, settings)
        self._ticks = TickQueue(self.redis, self.keys)
        self._cards: CardStore | None = None

    @property
    def cards(self) -> CardStore:
        """The card store (one per queue: it caches each chat's vectors by version)."""
        if self._cards is None:
            from memory_worker.cards import CardStore
            from memory_worker.cards.withdrawn import Thresholds

            # MEMORY_CARDS_URL (e.g. a cluster), else the queue's own client
            self._cards = CardStore(
                cards_client(self.settings, self.redis),
                self.keys,
                thresholds=Thresholds.from_settings(self.settings),
            )
        return self._cards

    @classmethod
    async def connect(
        cls,
        redis_url: str | None = None,
        *,
        embedded: bool = False,
        settings: Settings | None = None,
    ) -> MemoryQueue:
        """Connect to ``redis_url`` (None → ``REDIS_URL``).

        With neither, :class:`~memory_worker.errors.RedisNotConfigured` unless
        ``embedded``: then the embedded Valkey of ``MEMORY_DATA_DIR`` (started or reused).
        """
        settings = settings or get_settings()
        if redis_url is not None:
            settings = settings.model_copy(update={"redis_url": redis_url})
        if not settings.redis_url and not embedded:
            raise RedisNotConfigured()
        handle = await open_redis(settings)
        try:
            await check_redis(handle.client, role="bot", keys=Keys(settings.key_prefix))
        except BaseException:
            await handle.close(stop_embedded=False)
            raise
        return cls(handle, settings)

    async def close(self) -> None:
        # leave an embedded server running: workers in other processes may share it
        await self._close_recall()
        if self._cards is not None:
            await close_cards_client(self._cards.redis, self.redis)
        await self._handle.close(stop_embedded=False)

    async def __aenter__(self) -> MemoryQueue:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- runs -----------------------------------------------------------------------------------
    async def enqueue(self, request: RunRequest | dict[str, Any] | bytes | str) -> EnqueueResult:
        """Validate and store one run; wakes the pipeline when a run was added."""
        if not isinstance(request, RunRequest):
            request = parse_run_request(request)
        result = await self.store.enqueue(request)
        if result.status is EnqueueStatus.ENQUEUED:
            await self.wake()
        return result

    async def enqueue_many(
        self,
        requests: Sequence[RunRequest | dict[str, Any] | bytes | str],
        *,
        labels: Sequence[str] | None = None,
    ) -> list[EnqueueResult]:
        """Validate all first (nothing stored if any is invalid), then enqueue in order.

        ``labels`` name the requests in the error's problems (default ``item 1``…).
        """
        parsed = self.validate_many(requests, labels)
        results = [await self.store.enqueue(r) for r in parsed]
        if any(r.status is EnqueueStatus.ENQUEUED for r in results):
            await self.wake()
        return results

    def validate_many(
        self,
        requests: Sequence[RunRequest | dict[str, Any] | bytes | str],
        labels: Sequence[str] | None = None,
    ) -> list[RunRequest]:
        """Every request parsed and within the size limits, or one error listing every problem.

        ``labels`` name the requests in the problems (default ``item 1``, ``item 2``…).
        """
        parsed: list[RunRequest] = []
        problems: list[str] = []
        for i, raw in enumerate(requests):
            where = labels[i] if labels is not None else f"item {i + 1}"
            try:
                request = raw if isinstance(raw, RunRequest) else parse_run_request(raw)
                self.store.check_limits(request, request.messages_json())
            except InvalidRunRequest as exc:
                problems.extend(f"{where}: {p}" for p in exc.problems)
            else:
                parsed.append(request)
        if problems:
            raise InvalidRunRequest(problems)
        return parsed

    async def wake(self) -> None:
        """Start a tick unless one is pending or running (an outage's probe counts)."""
        with contextlib.suppress(RedisError):  # else the workers' safety net notices the run
            await self._ticks.schedule(TickPlan(Mode.IF_IDLE, base=1), target=1)

    async def get_run(self, run_id: str) -> Run:
        return await self.store.get(run_id)

    async def list_runs(self, status: RunStatus | None = None, limit: int = 100) -> list[Run]:
        return await self.store.list_runs(status, limit)

    # --- forgetting (§14) -------------------------------------------------------------------------
    async def forget(
        self,
        chat_id: int,
        user_id: int | None = None,
        *,
        dry_run: bool = False,
        actor: str = "api",
    ) -> ForgetResult:
        """Erase a user's memory in a chat, or the whole chat's (see :mod:`memory_worker.upkeep.forgetter`).

        ``dry_run`` counts what would go and writes nothing. An unknown chat raises
        :class:`~memory_worker.errors.ForgetInputError`.
        """
        from memory_worker.privacy.forget import parse_scope
        from memory_worker.upkeep.forgetter import Forgetter

        scope = parse_scope(check_id("chat_id", chat_id), check_optional_id("user_id", user_id))
        forgetter = Forgetter(self.redis, self.settings, cards_redis=self.cards.redis)
        return await forgetter.forget(scope, dry_run=dry_run, actor=actor)

    # --- memory ---------------------------------------------------------------------------------
    async def visible_cards(
        self, chat_id: int, thread_id: int = 0, user_id: int | None = None
    ) -> list[Card]:
        """Active cards visible in a chat (and thread, and to a user)."""
        check_id("chat_id", chat_id)
        check_id("thread_id", thread_id)
        check_optional_id("user_id", user_id)
        return await self.cards.visible_cards(chat_id, thread_id=thread_id, user_id=user_id)

    async def similar_cards(
        self, chat_id: int, embedding: Sequence[float], k: int = 10, *, model: str | None = None
    ) -> list[tuple[Card, float]]:
        """The ``k`` active cards of the chat most similar to ``embedding`` (cosine).

        ``model`` names the model of ``embedding``: a chat whose vectors were made
        by another model answers ``[]`` (§16: two vector spaces are never compared).
        ``embedding`` must have the chat's dimension (``MEMORY_EMBEDDING_DIMENSION``
        for a chat without vectors): else :class:`~memory_worker.errors.EmbeddingSizeMismatch`.
        """
        check_id("chat_id", chat_id)
        k = check_k(k, self.settings.query_max_k)
        matrix = await self.cards.chat_vectors(chat_id)
        query = check_embedding(chat_id, embedding, matrix.dim or self.settings.embedding_dimension)
        if k == 0:
            return []
        return await self.cards.similar_cards(chat_id, query, k, model=model, matrix=matrix)

    # --- recall by text (§16) ---------------------------------------------------------------
    #: The routed walker recall() embeds queries with (built on first use; tests may set it).
    recall_walker: Walker | None = None
    _recall_routing: Routing | None = None

    async def recall(
        self,
        chat_id: int,
        text: str,
        k: int = 5,
        user_id: int | None = None,
        *,
        thread_id: int = 0,
        since: datetime | None = None,
        until: datetime | None = None,
        now: datetime | None = None,
    ) -> list[RecallHit]:
        """The ``k`` cards visible to ``user_id`` (in ``thread_id``) most related to ``text``.

        ``text`` is embedded as a retrieval query (e5's ``query:`` prefix) on the
        ``embedding`` route — the same targets, breakers and typed errors as the
        workers' calls, within ``MEMORY_RECALL_TIMEOUT_SECONDS`` — and the chat's
        cards are ranked by the cosine with it fused with BM25 of ``text`` over
        their texts (``MEMORY_RECALL_FUSION``; :meth:`CardStore.search
        <memory_worker.cards.CardStore.search>`). ``since``/``until`` (aware
        datetimes) keep the cards whose time span — ``valid_from`` to the last
        observation, or ``valid_until`` when later — meets ``[since, until)``.
        ``now`` (default: the clock) is when expiry is judged and what "last
        week" in ``text`` is relative to. A chat without vectors answers ``[]``
        without an embedding call. The query is embedded only by the route's
        targets of the chat's model (during a model switch a route that still
        lists the old model's target keeps recall serving); with none,
        :class:`~memory_worker.errors.VectorSpaceMismatch` is raised rather than
        comparing two spaces. Routing failures raise the ``llm_client`` errors
        (``RouteUnavailable``, ``AllCircuitsOpen``, …). Best first, as
        :class:`~memory_worker.cards.recall.RecallHit` — it unpacks as ``(card, score)``
        and carries the card's ``observed_at``/``valid_from``.
        """
        from memory_worker.cards import visible_scope_keys
        from memory_worker.cards.recall import FusionParams

        check_id("chat_id", chat_id)
        check_id("thread_id", thread_id)
        check_optional_id("user_id", user_id)
        text = check_query_text(text, self.settings.recall_max_query_chars)
        window = check_window(since, until)
        if check_k(k, self.settings.query_max_k) == 0:
            return []
        space = await self.cards.vector_space(chat_id)
        if space is None:
            return []
        embedding, model = await self._embed_query(chat_id, text, space)
        return await self.cards.search(
            chat_id,
            text,
            embedding,
            k,
            scope_keys=visible_scope_keys(thread_id, user_id),
            window=window,
            now=now,
            model=model,
            params=FusionParams.from_settings(self.settings),
        )

    async def _embed_query(
        self, chat_id: int, text: str, space: VectorSpace
    ) -> tuple[list[float], str]:
        """``text`` as a retrieval query in the chat's vector space, and the model that made it.

        Raises :class:`~memory_worker.errors.VectorSpaceMismatch` before any call when
        no target of the route serves the chat's model, and after one whose vector is
        of another model or dimension.
        """
        from llm_client import EMBEDDING, QUERY_TASK
        from memory_worker.privacy.masking import mask

        walker = self._recall_walker()
        route = walker.routes.get(EMBEDDING)
        if route is not None and space.model is not None:
            served = [t.model for t in route.eligible]
            if served and space.model not in served:  # no target of its model: no call spent
                raise VectorSpaceMismatch(
                    chat_id,
                    chat_model=space.model,
                    query_model=served[0] if served else "",
                    dimension=space.dimension,
                )
        routed = await walker.embed(
            EMBEDDING,
            [mask(text, contacts=self.settings.redact_contacts)],
            dimension=space.dimension if space.model else self.settings.embedding_dimension,
            task_description=QUERY_TASK,
            deadline=deadline_after(self.settings.recall_timeout_seconds),
            context={"chat_id": str(chat_id), "job": "recall"},
            model=space.model,
        )
        model = routed.target.model
        if (space.model is not None and space.model != model) or (
            len(routed.value.embeddings[0]) != space.dimension
        ):
            raise VectorSpaceMismatch(
                chat_id, chat_model=space.model, query_model=model, dimension=space.dimension
            )
        return routed.value.embeddings[0], model

    def _recall_walker(self) -> Walker:
        """The routed walker of the embedding route: the worker's walker, built by the one
        factory (:func:`memory_worker.wiring.build_routing`) from the same settings."""
        from memory_worker.wiring import build_routing

        if self.recall_walker is None:
            self._recall_routing = build_routing(self.settings, self.redis, require_secrets=False)
            self.recall_walker = self._recall_routing.walker
        return self.recall_walker

    async def _close_recall(self) -> None:
        from llm_client import ClientFactory

        routing, self._recall_routing = self._recall_routing, None
        walker, self.recall_walker = self.recall_walker, None
        if routing is not None:
            await routing.aclose()
        elif walker is not None and isinstance(walker.transports, ClientFactory):
            await walker.transports.aclose()
