"""The bot's API (§13): enqueue runs, read them back, read memory.

::

    from memory_worker import MemoryQueue

    q = await MemoryQueue.connect()            # REDIS_URL, or the embedded Valkey
    result = await q.enqueue({"chat_id": 42, ...})
    result.status                              # enqueued | duplicate | queue_full | daily_cap
    run = await q.get_run(result.run_id)
    cards = await q.visible_cards(42, thread_id=0, user_id=7)
    gone = await q.forget(42, user_id=7)       # §14: counts of what went (dry_run=True: none)
    near = await q.similar_cards(42, embedding, k=5)
    hits = await q.recall(42, "what does Alice drink?", k=5, user_id=7)
    await q.close()

Enqueue validates first (``InvalidRunRequest`` lists every problem and
nothing is stored), applies the caps atomically, and wakes the pipeline
unless it is already running or deferred for an outage. ``enqueue_many`` is
all-or-nothing for validation (§7 rev 2): every request is parsed and
size-checked before the first one is stored. (The caps still answer per run:
``queue_full`` for the tail of a batch is an answer, not an error.)

``connect`` checks the server once (:mod:`memory_worker.redis_checks`): an
evicting ``maxmemory-policy`` or a user without script permission is refused
with a typed error here, not discovered later as lost runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from memory_worker.connections import (
    RedisHandle,
    cards_client,
    close_cards_client,
    open_redis,
)
from memory_worker.deadlines import deadline_after
from memory_worker.errors import InvalidRunRequest, VectorSpaceMismatch
from memory_worker.keys import Keys
from memory_worker.models import Run, RunRequest, RunStatus, parse_run_request
from memory_worker.redis_checks import check_redis
from memory_worker.run_store import EnqueueResult, EnqueueStatus, RunStore
from memory_worker.settings import Settings, get_settings
from memory_worker.ticks import Mode, TickPlan, TickQueue

if TYPE_CHECKING:
    from llm_client.routing import Walker
    from memory_worker.cards import Card, CardStore, VectorSpace
    from memory_worker.forget import ForgetResult


class MemoryQueue:
    """A connection to the memory store for the bot process."""

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

            # MEMORY_CARDS_URL (e.g. a cluster), else the queue's own client
            self._cards = CardStore(cards_client(self.settings, self.redis), self.keys)
        return self._cards

    @classmethod
    async def connect(
        cls, redis_url: str | None = None, *, settings: Settings | None = None
    ) -> MemoryQueue:
        """Connect to ``redis_url`` (None → ``REDIS_URL`` or the embedded Valkey)."""
        settings = settings or get_settings()
        if redis_url is not None:
            settings = settings.model_copy(update={"redis_url": redis_url})
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
        """Erase a user's memory in a chat, or the whole chat's (see :mod:`memory_worker.forgetter`).

        ``dry_run`` counts what would go and writes nothing. An unknown chat raises
        :class:`~memory_worker.errors.ForgetInputError`.
        """
        from memory_worker.forget import parse_scope
        from memory_worker.forgetter import Forgetter

        scope = parse_scope(chat_id, user_id)
        forgetter = Forgetter(self.redis, self.settings, cards_redis=self.cards.redis)
        return await forgetter.forget(scope, dry_run=dry_run, actor=actor)

    # --- memory ---------------------------------------------------------------------------------
    async def visible_cards(
        self, chat_id: int, thread_id: int = 0, user_id: int | None = None
    ) -> list[Card]:
        """Active cards visible in a chat (and thread, and to a user)."""
        return await self.cards.visible_cards(chat_id, thread_id=thread_id, user_id=user_id)

    async def similar_cards(
        self, chat_id: int, embedding: Sequence[float], k: int = 10, *, model: str | None = None
    ) -> list[tuple[Card, float]]:
        """The ``k`` active cards of the chat most similar to ``embedding`` (cosine).

        ``model`` names the model of ``embedding``: a chat whose vectors were made
        by another model answers ``[]`` (§16: two vector spaces are never compared).
        """
        return await self.cards.similar_cards(chat_id, embedding, k, model=model)

    # --- recall by text (§16) ---------------------------------------------------------------
    #: The routed walker recall() embeds queries with (built on first use; tests may set it).
    recall_walker: Walker | None = None

    async def recall(
        self,
        chat_id: int,
        text: str,
        k: int = 5,
        user_id: int | None = None,
        *,
        thread_id: int = 0,
    ) -> list[tuple[Card, float]]:
        """The ``k`` cards visible to ``user_id`` (in ``thread_id``) most related to ``text``.

        ``text`` is embedded as a retrieval query (e5's ``query:`` prefix) on the
        ``embedding`` route — the same targets, breakers and typed errors as the
        workers' calls, within ``MEMORY_RECALL_TIMEOUT_SECONDS`` — and compared
        with the chat's card vectors. A chat without vectors answers ``[]``
        without an embedding call. The query is embedded only by the route's
        targets of the chat's model (during a model switch a route that still
        lists the old model's target keeps recall serving); with none,
        :class:`~memory_worker.errors.VectorSpaceMismatch` is raised rather than
        comparing two spaces. Routing failures raise the
        ``llm_client`` errors (``RouteUnavailable``, ``AllCircuitsOpen``, …).
        Best first, as ``(card, cosine)``.
        """
        from memory_worker.cards import visible_scope_keys

        if not text.strip():
            raise ValueError("recall needs a non-empty text")
        if k <= 0:
            return []
        space = await self.cards.vector_space(chat_id)
        if space is None:
            return []
        embedding, model = await self._embed_query(chat_id, text, space)
        return await self.cards.similar_cards(
            chat_id,
            embedding,
            k,
            scope_keys=visible_scope_keys(thread_id, user_id),
            model=model,
        )

    async def _embed_query(
        self, chat_id: int, text: str, space: VectorSpace
    ) -> tuple[list[float], str]:
        """``text`` as a retrieval query in the chat's vector space, and the model that made it.

        Raises :class:`~memory_worker.errors.VectorSpaceMismatch` before any call when
        no target of the route serves the chat's model, and after one whose vector is
        of another model or dimension.
        """
        from llm_client.local_embed import QUERY_TASK
        from llm_client.routes import EMBEDDING
        from memory_worker.secret_patterns import mask_for_farm

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
            [mask_for_farm(text, contacts=self.settings.redact_contacts)],
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
        """The routed walker of the embedding route (the worker's breakers and event log)."""
        from llm_client.breaker_store import BreakerStore
        from llm_client.clients import ClientFactory
        from llm_client.events import RedisEventLog
        from llm_client.routes import EMBEDDING, load_routes
        from llm_client.routing import Walker
        from llm_client.walk import WalkerConfig

        if self.recall_walker is None:
            settings = self.settings
            routes = load_routes(
                settings.routes_file, settings.route_defaults(), require_secrets=False
            )
            self.recall_walker = Walker(
                routes,
                BreakerStore(self.redis, self.keys, settings.breaker_config()),
                RedisEventLog(self.redis, self.keys, maxlen=settings.routing_events_maxlen),
                ClientFactory(
                    settings.client_config(),
                    embed_config=settings.client_config(workflow=EMBEDDING),
                    local_concurrency=settings.local_embed_concurrency,
                    local_threads=settings.local_embed_threads,
                ),
                WalkerConfig(probe_interval_seconds=settings.consolidation_backend_retry_interval),
            )
        return self.recall_walker

    async def _close_recall(self) -> None:
        from llm_client.clients import ClientFactory

        walker, self.recall_walker = self.recall_walker, None
        if walker is not None and isinstance(walker.transports, ClientFactory):
            await walker.transports.aclose()
