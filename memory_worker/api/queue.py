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
    hits.degraded                              # True: the farm was down, ranked by words alone
    memory = await q.context(42, user_id=7, query="drinks?", max_tokens=800)  # memory.text
    await q.retract("42:7", actor="ops", reason="wrong")  # or q.correct("42:7", "…", actor=)
    events = await q.history("42:7")           # how a card changed: time, actor, run/request
    then = await q.visible_cards(42, as_of=last_monday)  # memory as it stood then
    card = await q.remember(42, "Alice is vegetarian", user_id=7, actor="bot")  # no farm call
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

Every public method stands behind the bot's edge (:mod:`memory_worker.api.edge`): what it
raises is ``memory_worker``'s own tree (a Redis failure as a ``StoreError``, redis-py's error
its ``__cause__``), and after :meth:`~MemoryQueue.close` every call raises
:class:`~memory_worker.errors.QueueClosed`. The blocking twin for bots without asyncio is
:class:`~memory_worker.api.sync.SyncMemoryQueue`.

The memory calls beyond reading decide in pure modules; this class reads, writes and
audits:

- ``context`` — :mod:`memory_worker.cards.prompt_context` ranks, deduplicates, budgets and
  renders; with a query it asks :meth:`MemoryQueue.recall` (its public answer, best first)
  for relevance.
- ``retract`` / ``correct`` — :mod:`memory_worker.cards.corrections` (the decisions) and
  :mod:`memory_worker.cards.edits` (one script each).
- ``remember`` — :mod:`memory_worker.cards.remember` (the card, the decisions) and
  :mod:`memory_worker.cards.edits` (its script).
- ``export`` / ``import_export`` — :mod:`memory_worker.cards.export_format` (the file) and
  :mod:`memory_worker.cards.transfer` (the reads and the one import script per chat).

Every change leaves an audit event on the audit stream (where forget's go): kind, chat,
card ids, actor, host, time — ids and counts, never card text or a reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from llm_client import as_text
from memory_worker.api.edge import bot_edge, embedding_edge
from memory_worker.api.query_args import (
    check_as_of,
    check_embedding,
    check_id,
    check_k,
    check_optional_id,
    check_query_text,
    check_window,
)
from memory_worker.cards.corrections import (
    check_actor,
    check_fact,
    check_reason,
    check_request_id,
    correction_plan,
    parse_card_ref,
)
from memory_worker.cards.export_format import MemoryExport
from memory_worker.cards.prompt_context import MemoryContext
from memory_worker.deadlines import deadline_after
from memory_worker.errors import (
    CardNotFound,
    CardNotLive,
    EmbeddingUnavailable,
    ForgetPending,
    InvalidCorrection,
    InvalidRunRequest,
    RedisNotConfigured,
    VectorSpaceMismatch,
)
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.models import Run, RunRequest, RunStatus, parse_run_request
from memory_worker.pipeline.ticks import Mode, TickPlan
from memory_worker.runs import EnqueueResult, EnqueueStatus
from memory_worker.settings import Settings, get_settings
from memory_worker.storage.checks import check_redis
from memory_worker.storage.connections import (
    RedisHandle,
    close_cards_client,
    open_redis,
)

if TYPE_CHECKING:
    from llm_client import Walker
    from memory_worker.cards import Card, CardStore, NewCard, VectorSpace
    from memory_worker.cards.history import CardEvent
    from memory_worker.cards.recall import RecallResult
    from memory_worker.privacy.forget import ForgetResult
    from memory_worker.wiring import Routing

log = get_logger(__name__)

#: Script calls of one remember that may each meet a forget landing in between.
_REMEMBER_ROUNDS = 3
#: The chat's best hits for a remembered fact searched for a card of the same words.
_SAME_WORDS_HITS = 8


@bot_edge
class MemoryQueue:
    """A connection to the memory store for the bot process: runs, forgetting, memory
    reads, recall, a prompt-ready context, single-card corrections, export and import."""

    #: The wall clock (seconds): when a retraction or correction happens (tests set it).
    clock: Callable[[], float] = staticmethod(time.time)

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def __init__(
        self, handle: RedisHandle, settings: Settings, *, cards: CardStore | None = None
    ) -> None:
        """A queue over ``handle``; ``cards``: a card store the caller already holds (the
        console's), else the bot's, built on first use."""
        self._handle = handle
        self.settings = settings
        self.redis = handle.client
        self.keys = Keys(settings.key_prefix)
        from memory_worker.wiring import run_store, tick_queue  # the root, not the worker stack

        self.store = run_store(self.redis, settings)
        self._ticks = tick_queue(self.redis, settings)
        self._cards = cards
        self._own_cards = cards is None
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called: every call after it raises
        :class:`~memory_worker.errors.QueueClosed`."""
        return self._closed

    @property
    def cards(self) -> CardStore:
        """The card store (one per queue: it caches each chat's vectors by version)."""
        if self._cards is None:
            from memory_worker.wiring import bot_card_store

            self._cards = bot_card_store(self.settings, self.redis)
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
        """Close the connections (again: nothing); every later call raises
        :class:`~memory_worker.errors.QueueClosed`."""
        if self._closed:
            return
        self._closed = True
        # leave an embedded server running: workers in other processes may share it
        await self._close_recall()
        if self._cards is not None and self._own_cards:
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
        from memory_worker.wiring import forgetter

        scope = parse_scope(check_id("chat_id", chat_id), check_optional_id("user_id", user_id))
        steps = forgetter(self.redis, self.settings, self.cards.redis)
        return await steps.forget(scope, dry_run=dry_run, actor=actor)

    # --- memory ---------------------------------------------------------------------------------
    async def visible_cards(
        self,
        chat_id: int,
        thread_id: int = 0,
        user_id: int | None = None,
        *,
        as_of: datetime | None = None,
    ) -> list[Card]:
        """Active cards visible in a chat (and thread, and to a user).

        ``as_of`` (an aware datetime): the memory as it stood at that moment — the cards
        created by then and not yet superseded, corrected, retracted, merged or expired at
        it, whatever became of them since (see :mod:`memory_worker.cards.history`). Not
        when a fact was true: that is ``recall``'s ``since``/``until``.
        """
        check_id("chat_id", chat_id)
        check_id("thread_id", thread_id)
        check_optional_id("user_id", user_id)
        moment = check_as_of(as_of)
        return await self.cards.visible_cards(
            chat_id, thread_id=thread_id, user_id=user_id, as_of=moment
        )

    async def history(self, card: str | Card) -> list[CardEvent]:
        """A card's history, oldest first: one :class:`~memory_worker.cards.CardEvent` per
        change — created (by a run, ``remember``, ``correct``), observed again, superseded
        by or superseding, corrected, retracted, imported, merged, rewritten, expired — each
        with its time, actor and the run id or request id that caused it (no message text).
        ``card`` is its :attr:`~memory_worker.cards.Card.ref` or the card. A forgotten card
        has no history: :class:`~memory_worker.errors.CardNotFound`. See
        :mod:`memory_worker.cards.history`."""
        chat_id, local_id = _ref(card)
        found, events = await self.cards.history(chat_id, local_id)
        if found is None:
            raise CardNotFound(f"{chat_id}:{local_id}")
        return events

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
        as_of: datetime | None = None,
    ) -> RecallResult:
        """The ``k`` cards visible to ``user_id`` (in ``thread_id``) most related to ``text``.

        ``text`` is embedded as a retrieval query (e5's ``query:`` prefix) on the
        ``embedding`` route — the same targets, breakers and typed errors as the
        workers' calls, within ``MEMORY_RECALL_TIMEOUT_SECONDS`` — and the chat's
        cards are ranked by the cosine with it fused with BM25 of ``text`` over
        their texts (``MEMORY_RECALL_FUSION``; :meth:`CardStore.search
        <memory_worker.cards.CardStore.search>`); the best hits then lift the cards of
        their subject and episode, and a restatement of a better hit goes after the others
        (``MEMORY_RECALL_SEEDS``…; :mod:`memory_worker.cards.recall.connect`). ``since``/``until`` (aware
        datetimes) keep the cards whose time span — ``valid_from`` to the last
        observation, or ``valid_until`` when later — meets ``[since, until)``.
        ``now`` (default: the clock) is when expiry is judged and what "last
        week" in ``text`` is relative to. A chat without vectors answers ``[]``
        without an embedding call. The query is embedded only by the route's
        targets of the chat's model (during a model switch a route that still
        lists the old model's target keeps recall serving); with none,
        :class:`~memory_worker.errors.VectorSpaceMismatch` is raised rather than
        comparing two spaces. When the embedding route cannot answer (the farm down, breakers
        open, no route, the timeout, the embedder raising) recall does not fail: the cards are
        ranked by the words of ``text`` alone and the answer is marked ``degraded``, its
        ``degraded_error`` the :class:`~memory_worker.errors.EmbeddingUnavailable` (the
        embedder's error its ``__cause__``); counted in ``memory_worker_reads_degraded_total``
        and logged (``recall.degraded``: ids and types, never the text). Best first, as a
        :class:`~memory_worker.cards.recall.RecallResult` (a ``list``) of
        :class:`~memory_worker.cards.recall.RecallHit` — each unpacks as ``(card, score)``
        and carries the card's ``observed_at``/``valid_from``.

        ``as_of`` (an aware datetime): recall from the memory as it stood at that moment
        (:meth:`visible_cards`' ``as_of``) — what the bot could have recalled then; ``now``
        is then ``as_of``. ``since``/``until`` still ask when a fact was true.
        """
        return await self._recall(
            chat_id,
            text,
            k,
            user_id,
            thread_id=thread_id,
            since=since,
            until=until,
            now=now,
            call="recall",
            as_of=as_of,
        )

    async def _recall(
        self,
        chat_id: int,
        text: str,
        k: int,
        user_id: int | None,
        *,
        thread_id: int = 0,
        since: datetime | None = None,
        until: datetime | None = None,
        now: datetime | None = None,
        call: str,
        as_of: datetime | None = None,
    ) -> RecallResult:
        """:meth:`recall` for ``call`` (``recall``, ``context``: what a degraded read counts as)."""
        from memory_worker.cards import visible_scope_keys
        from memory_worker.cards.recall import ConnectParams, FusionParams, RecallResult

        check_id("chat_id", chat_id)
        check_id("thread_id", thread_id)
        check_optional_id("user_id", user_id)
        text = check_query_text(text, self.settings.recall_max_query_chars)
        window = check_window(since, until)
        moment = check_as_of(as_of)
        if check_k(k, self.settings.query_max_k) == 0:
            return RecallResult()
        space = await self.cards.vector_space(chat_id)
        if space is None:
            return RecallResult()
        embedding: list[float] | None = None
        model: str | None = None
        degraded: EmbeddingUnavailable | None = None
        try:
            embedding, model = await self._embed_query(chat_id, text, space)
        except EmbeddingUnavailable as exc:  # a dependency's outage degrades a read
            degraded = exc
            await self._degraded(call, exc)
        hits = await self.cards.search(
            chat_id,
            text,
            embedding,
            k,
            scope_keys=visible_scope_keys(thread_id, user_id),
            window=window,
            now=now,
            model=model,
            params=FusionParams.from_settings(self.settings),
            connect=ConnectParams.from_settings(self.settings),
            as_of=moment,
        )
        return RecallResult(hits, degraded_error=degraded)

    async def _degraded(self, call: str, error: EmbeddingUnavailable) -> None:
        """Count and log a read answered from the words alone (ids and types, no text)."""
        log.warning(
            "recall.degraded",
            call=call,
            chat_id=error.chat_id,
            kind=error.kind,
            reason=error.reason,
        )
        with contextlib.suppress(RedisError):  # best effort: the read goes on
            await self.redis.hincrby(self.keys.counters, f"degraded:{call}", 1)  # type: ignore[misc]

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

        with embedding_edge("recall", chat_id):
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
        masked = mask(text, contacts=self.settings.redact_contacts)
        with embedding_edge("recall", chat_id, sent=[text, masked]):
            routed = await walker.embed(
                EMBEDDING,
                [masked],
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

    # --- a prompt-ready context (§13) ------------------------------------------------------------

    async def context(
        self,
        chat_id: int,
        *,
        user_id: int | None = None,
        query: str | None = None,
        max_tokens: int = 800,
        as_of: datetime | None = None,
    ) -> MemoryContext:
        """Memory ready to put in a bot's prompt: the user's own cards and the chat's, ranked
        by relevance to ``query`` (1 / its rank in :meth:`recall`'s answer, when given), salience, confidence
        and recency, one per fact, within ``max_tokens`` (estimated: one token per 3 bytes
        of UTF-8), rendered as a dated block that keeps each fact's language: the best card
        whose line fits ``max_tokens`` always comes first, under the header when the header
        fits beside it, alone when it does not. The same store
        gives the same context. Candidates: the ``MEMORY_CONTEXT_RECENT_CARDS`` most recently
        observed live cards of each scope, and recall's ``MEMORY_CONTEXT_QUERY_CARDS`` best.
        See :mod:`memory_worker.cards.prompt_context`. When the embedding route cannot
        embed ``query``, relevance comes from its words alone and the context is marked
        ``degraded`` (as :meth:`recall`'s answer is); without a query nothing is embedded.
        ``as_of`` (an aware datetime): the context the memory as it stood at that moment
        gives (:meth:`visible_cards`' ``as_of``): what the bot was shown then, from the
        cards it held then.
        """
        from memory_worker.cards import card_from_json, visible_scope_keys
        from memory_worker.cards.prompt_context import (
            Entry,
            Weights,
            estimate_tokens,
            rank,
            relevance,
            render,
            select,
        )

        check_id("chat_id", chat_id)
        check_optional_id("user_id", user_id)
        budget = check_k(max_tokens, self.settings.context_max_tokens, name="max_tokens")
        if query is not None:
            query = check_query_text(query, self.settings.recall_max_query_chars)
        moment = check_as_of(as_of)
        scopes = sorted(visible_scope_keys(0, user_id))
        k = min(self.settings.context_query_cards, self.settings.query_max_k)
        limit = self.settings.context_recent_cards
        recent, hits = await asyncio.gather(
            self._recent(chat_id, scopes, limit)
            if moment is None
            else self._recent_as_of(chat_id, scopes, limit, moment),
            self._recall(chat_id, query, k, user_id, call="context", as_of=moment)
            if query and budget
            else _none(),
        )
        cards = {card.id: card for card, _ in hits}
        entries = [Entry.from_card(card) for card in cards.values()]
        entries += [Entry.from_stored(data) for card_id, data in recent if card_id not in cards]
        related = relevance([card.id for card, _ in hits])
        ranked = rank(entries, related, Weights.from_settings(self.settings))
        chosen = select(ranked, budget)
        raw = dict(recent)
        shown = [
            cards[e.card_id] if e.card_id in cards else card_from_json(chat_id, raw[e.card_id].raw)
            for e in chosen
        ]
        text = render(chosen, budget)
        return MemoryContext(
            text=text,
            cards=shown,
            tokens=estimate_tokens(text),
            degraded_error=hits.degraded_error,
        )

    async def _recent(
        self, chat_id: int, scopes: Sequence[str], limit: int
    ) -> list[tuple[str, _Stored]]:
        """The ``limit`` most recently observed live cards of each scope, visible now, as
        stored (parsed to a :class:`Card` only once chosen: that costs ~20x the JSON)."""
        import orjson

        from memory_worker.cards.prompt_context import visible

        store = self.cards
        pipe = store.redis.pipeline(transaction=False)
        for sk in scopes:
            pipe.zrevrange(store.key(chat_id, f"active:{sk}"), 0, limit - 1)
        ids = list(dict.fromkeys(as_text(m) for members in await pipe.execute() for m in members))
        if not ids:
            return []
        raws = await store.redis.hmget(store.key(chat_id, "cards"), ids)  # type: ignore[misc]
        now_ms = int(self.clock() * 1000)
        found = []
        for card_id, raw in zip(ids, raws, strict=True):
            if raw is not None:
                data = _Stored(orjson.loads(raw), raw)
                if visible(data, now_ms):
                    found.append((card_id, data))
        return found

    async def _recent_as_of(
        self, chat_id: int, scopes: Sequence[str], limit: int, moment: datetime
    ) -> list[tuple[str, _Stored]]:
        """:meth:`_recent` of the memory as it stood at ``moment``: the ``limit`` most
        recently observed cards of each scope it held then."""
        import orjson

        from memory_worker.cards import to_ms
        from memory_worker.cards.history import stored_live_as_of

        store = self.cards
        moment_ms = int(to_ms(moment))
        by_scope: dict[str, dict[str, tuple[int, int, str, _Stored]]] = {sk: {} for sk in scopes}
        key = store.key(chat_id, "cards")
        async for field, raw in store.redis.hscan_iter(key, count=1000):
            data = orjson.loads(raw)
            held = by_scope.get(data.get("sk", ""))
            if held is not None and stored_live_as_of(data, moment_ms):
                card_id = as_text(field)  # by id: a scan may return a field twice
                obs = int(data.get("obs_at") or 0)
                held[card_id] = (obs, int(card_id), card_id, _Stored(data, raw))
        found: dict[str, _Stored] = {}
        for sk in scopes:
            for _, _, card_id, data in sorted(by_scope[sk].values(), reverse=True)[:limit]:
                found.setdefault(card_id, data)
        return list(found.items())

    # --- single-card corrections (§10) --------------------------------------------------------

    async def retract(
        self,
        card_id: str | Card,
        *,
        actor: str,
        reason: str,
        request_id: str | None = None,
    ) -> Card:
        """Withdraw a card: kept with status ``retracted`` (``retracted_by``, the reason),
        never shown, recalled or put in a context again; a run of messages sent before now
        does not learn its fact again, a newer message restating it does. ``card_id`` is
        the card's :attr:`~memory_worker.cards.Card.ref` (``"<chat id>:<card id>"``) or the
        card. Retracting a retracted card changes nothing. Answers the card as stored now.
        ``request_id``: the caller's id of the request, kept in the card's history event.
        """
        chat_id, local_id = _ref(card_id)
        actor, reason = check_actor(actor), check_reason(reason)
        request = check_request_id(request_id)
        from memory_worker.cards.edits import retract_card

        outcome = await retract_card(
            self.cards,
            chat_id,
            local_id,
            actor=actor,
            reason=reason,
            now=self._now(),
            request_id=request,
        )
        if not outcome.found:
            raise CardNotFound(f"{chat_id}:{local_id}")
        if outcome.done:
            await self._audit("retract", chat_id, actor, card_id=local_id, status=outcome.status)
        return await self._card(chat_id, local_id)

    async def correct(
        self,
        card_id: str | Card,
        fact_text: str,
        *,
        actor: str,
        request_id: str | None = None,
    ) -> Card:
        """Replace a live card's fact: a new card holding ``fact_text`` as written (never
        translated), asserted by ``actor`` (``asserted_by``, ``corrects``), supersedes it;
        the old one is kept with its validity end. When a live card already holds that fact
        it supersedes the old one instead. Answers the card that now holds the fact.

        The new card is embedded on the ``embedding`` route in the chat's vector space (a
        chat without vectors: none); an embedding failure raises
        :class:`~memory_worker.errors.EmbeddingUnavailable` and writes nothing.
        Raises :class:`~memory_worker.errors.CardNotLive` for a superseded, retracted,
        merged or expired card. The corrected fact passes the check of every card write
        (§10, :mod:`memory_worker.cards.withdrawn`): asserted now, it is refused
        (:class:`~memory_worker.errors.InvalidCorrection`) only by a withdrawal stamped later.
        """
        chat_id, local_id = _ref(card_id)
        actor = check_actor(actor)
        request = check_request_id(request_id)
        fact = check_fact(fact_text, self.settings.card_max_bytes)
        old = await self.cards.get_card(chat_id, local_id)
        if old is None:
            raise CardNotFound(f"{chat_id}:{local_id}")
        if not old.live:
            raise CardNotLive(old.ref, old.status.value)
        space = await self.cards.vector_space(chat_id)
        embedding, model = (
            (None, "") if space is None else await self._embed_fact(chat_id, fact, space)
        )
        plan = correction_plan(
            old.scope_key,
            old.subject,
            old.predicate,
            fact,
            actor=actor,
            model=model,
            request_id=request,
        )
        from memory_worker.cards.edits import correct_card, correction_refused

        withdrawn = await correction_refused(
            self.cards, old, plan, embedding=embedding, now=self._now()
        )
        if withdrawn is not None:
            raise InvalidCorrection(
                f"card {chat_id}:{withdrawn.card_id} withdrew this fact after this correction's "
                "time (§10)"
            )
        outcome = await correct_card(
            self.cards,
            chat_id,
            local_id,
            plan,
            embedding=embedding,
            sk=old.scope_key,
            now=self._now(),
        )
        if not outcome.found:
            raise CardNotFound(old.ref)
        if not outcome.card_id:  # retracted or superseded meanwhile
            raise CardNotLive(old.ref, outcome.status)
        if outcome.done:
            await self._audit(
                "correct", chat_id, actor, card_id=local_id, new_card_id=outcome.card_id
            )
        return await self._card(chat_id, outcome.card_id)

    # --- remembering a fact the bot knows (§13) ---------------------------------------------

    async def remember(
        self,
        chat_id: int,
        fact_text: str,
        *,
        user_id: int | None = None,
        thread_id: int = 0,
        actor: str,
        valid_from: datetime | None = None,
        request_id: str | None = None,
    ) -> Card:
        """Store a fact the bot already knows, now, with no run and no farm call: a card of
        the user's scope (``user_id``), else the thread's, else the chat's, asserted by
        ``actor``, holding ``fact_text`` as written, true from ``valid_from`` (an aware time
        up to now; default now). See :mod:`memory_worker.cards.remember`.

        The fact passes the rule of every card (non-blank, at most ``MEMORY_CARD_MAX_BYTES``,
        no secret: else :class:`~memory_worker.errors.InvalidCorrection`, nothing written).
        A live card of the same words in that scope is observed again and answered instead
        of a new one. A retracted fact is remembered again (the bot's word is newer). The
        fact is embedded on the ``embedding`` route (masked) in the chat's vector space;
        when that fails the card is stored anyway, without a vector — ``has_embedding``
        false, found by its words — until the maintenance pass embeds it. A forget of its
        scope in progress raises :class:`~memory_worker.errors.ForgetPending`. Audited
        like ``correct`` (ids, never the text). Answers the card holding the fact.
        ``request_id``: the caller's id of the request, kept in the card's history event.
        """
        from memory_worker.cards.edits import remember_card
        from memory_worker.cards.remember import (
            RememberPlan,
            check_valid_from,
            remembered_card,
        )

        check_id("chat_id", chat_id)
        check_id("thread_id", thread_id)
        check_optional_id("user_id", user_id)
        actor = check_actor(actor)
        request = check_request_id(request_id)
        fact = check_fact(fact_text, self.settings.card_max_bytes)
        now = self._now()
        card = remembered_card(
            fact,
            user_id=user_id,
            thread_id=thread_id,
            valid_from=check_valid_from(valid_from, now),
            now=now,
            salience=self.settings.remember_salience,
        )
        epoch = await self.cards.forget_epoch(chat_id)
        embedding, model = await self._remembered_vector(chat_id, fact)
        known = await self._same_words(chat_id, card, embedding, model)
        # the chat joins the maintenance sweeps' set (its waiting vectors are filled there)
        await self.cards.redis.sadd(self.keys.chats, str(chat_id))  # type: ignore[misc]
        for _ in range(_REMEMBER_ROUNDS):
            plan = RememberPlan(
                card,
                actor,
                epoch,
                dim=self.settings.embedding_dimension,
                model=model,
                known=None if known is None else (known.id, known.dedup_hash),
                request_id=request,
            )
            done = await remember_card(self.cards, chat_id, plan, embedding=embedding, now=now)
            if done.forgetting:
                raise ForgetPending(chat_id, refused=f"nothing is remembered in {card.scope_key}")
            if not done.forgotten:
                break
            # a forget came and went since the epoch was read: the calls overlapped, this
            # one lands after it (nothing it sends was read from the memory forgotten)
            epoch = await self.cards.forget_epoch(chat_id)
        else:
            raise ForgetPending(chat_id, refused=f"nothing is remembered in {card.scope_key}")
        if done.refused:
            log.warning("cards.vectors_refused", chat_id=chat_id, refused=done.refused)
        await self._audit(
            "remember",
            chat_id,
            actor,
            card_id=done.card_id,
            outcome="created" if done.created else "observed",
            vector="waiting" if done.pending else "stored",
        )
        return await self._card(chat_id, done.card_id)

    async def _remembered_vector(self, chat_id: int, fact: str) -> tuple[list[float] | None, str]:
        """``fact`` as a passage in the chat's vector space (a chat without one: the route's
        model, ``MEMORY_EMBEDDING_DIMENSION``), or (None, '') when the embedder cannot make
        it now — the card then waits for its vector. A routes file that cannot load raises."""
        from memory_worker.cards import VectorSpace

        space = await self.cards.vector_space(chat_id) or VectorSpace(
            model=None, dimension=self.settings.embedding_dimension
        )
        try:
            return await self._embed_passage(chat_id, fact, space, "remember")
        except (EmbeddingUnavailable, VectorSpaceMismatch) as exc:
            log.warning("cards.remember_unembedded", chat_id=chat_id, error=type(exc).__name__)
            return None, ""

    async def _same_words(
        self, chat_id: int, card: NewCard, embedding: Sequence[float] | None, model: str
    ) -> Card | None:
        """A live card of ``card``'s scope holding its words, among the chat's best hits for
        them (by words, and by meaning when ``embedding``): what remembering it observes."""
        from memory_worker.cards.recall import FusionParams
        from memory_worker.cards.remember import same_words

        hits = await self.cards.search(
            chat_id,
            card.fact_text,
            embedding,
            _SAME_WORDS_HITS,
            scope_keys=[card.scope_key],
            now=card.observed_at,
            model=model or None,
            params=FusionParams.from_settings(self.settings),
        )
        return same_words(card, [hit.card for hit in hits])

    # --- export and import (§13) -----------------------------------------------------------------

    async def export(
        self, chat_id: int, user_id: int | None = None, *, actor: str = "api"
    ) -> MemoryExport:
        """A chat's memory (or what a user is entitled to receive about themselves: what
        forgetting them would remove) as data: every card of every status with its
        provenance and vector, every episode, link and authorship entry. ``.lines()`` is the
        export file (see :mod:`memory_worker.cards.export_format`). It is the memory at one
        moment: a forget in progress raises :class:`~memory_worker.errors.ForgetPending`
        rather than read a half-forgotten chat. An unknown chat gives an empty export.
        """
        from memory_worker.cards.export_format import for_user
        from memory_worker.cards.transfer import read_snapshot

        check_id("chat_id", chat_id)
        check_optional_id("user_id", user_id)
        actor = check_actor(actor)
        snap = await read_snapshot(self.cards, chat_id, rounds=self.settings.export_read_rounds)
        if user_id is not None:
            snap = for_user(snap, user_id)
        done = MemoryExport(snap, self._now())
        scope = {} if user_id is None else {"user_id": user_id}
        await self._audit("export", chat_id, actor, **scope, **done.counts)
        return done

    async def import_export(
        self, lines: Iterable[bytes], *, source: str = "export", actor: str = "api"
    ) -> dict[str, int]:
        """Restore an export (its lines, e.g. an open file) into its chat — any deployment,
        standalone or cluster — as a write like any other. The whole file is checked first:
        :class:`~memory_worker.errors.InvalidExport` names the bad line and field (a card
        over ``MEMORY_CARD_MAX_BYTES`` or holding a secret, an id out of range…; a file over
        ``MEMORY_IMPORT_MAX_BYTES``: :class:`~memory_worker.errors.ImportTooLarge`) and
        nothing is written. Then it is written in chunks of ``MEMORY_IMPORT_CHUNK_ITEMS``
        (:mod:`memory_worker.cards.import_plan`); again the same file changes nothing, and
        completes one that stopped midway. A chat holding other memory under its ids raises
        :class:`~memory_worker.errors.ImportConflict`; one forgotten (in part) since the
        export, :class:`~memory_worker.errors.ExportPredatesForget`. A live card stating a
        fact withdrawn after its messages — by hash, meaning or evidence, the chat's or the
        file's own — is left out (``retracted``), also when the withdrawal lands during the
        import. Answers the counts written.
        """
        from memory_worker.cards.export_format import parse_export
        from memory_worker.cards.transfer import write_snapshot

        actor = check_actor(actor)
        snap = parse_export(
            lines,
            source,
            max_bytes=self.settings.import_max_bytes,
            card_max_bytes=self.settings.card_max_bytes,
        )
        done = await write_snapshot(
            self.cards,
            snap,
            now=self._now(),
            chats_key=self.keys.chats,
            chunk_items=self.settings.import_chunk_items,
            replans=self.settings.import_replans,
            actor=actor,
        )
        await self._audit("import", snap.chat_id, actor, **done)
        return done

    async def _card(self, chat_id: int, card_id: str) -> Card:
        card = await self.cards.get_card(chat_id, card_id)
        if card is None:  # forgotten meanwhile
            raise CardNotFound(f"{chat_id}:{card_id}")
        return card

    async def _embed_fact(
        self, chat_id: int, fact: str, space: VectorSpace
    ) -> tuple[list[float], str]:
        """``fact`` as a passage (a card's text) in the chat's vector space, and its model."""
        return await self._embed_passage(chat_id, fact, space, "correct")

    async def _embed_passage(
        self, chat_id: int, fact: str, space: VectorSpace, call: str
    ) -> tuple[list[float], str]:
        """``fact`` as a passage in the chat's vector space for ``call``, and its model."""
        from llm_client import EMBEDDING
        from memory_worker.deadlines import deadline_after
        from memory_worker.privacy.masking import mask

        masked = mask(fact, contacts=self.settings.redact_contacts)
        with embedding_edge(call, chat_id, sent=[fact, masked]):
            routed = await self._recall_walker().embed(
                EMBEDDING,
                [masked],
                dimension=space.dimension,
                deadline=deadline_after(self.settings.recall_timeout_seconds),
                context={"job": call},
                model=space.model,
            )
        vector, model = routed.value.embeddings[0], routed.target.model
        if (space.model is not None and space.model != model) or len(vector) != space.dimension:
            raise VectorSpaceMismatch(
                chat_id, chat_model=space.model, query_model=model, dimension=space.dimension
            )
        return vector, model

    async def _audit(self, kind: str, chat_id: int, actor: str, **fields: object) -> None:
        """An audit event (ids and counts; best effort: the change itself is done)."""
        event: dict[Any, Any] = {
            "type": kind,
            "chat_id": str(chat_id),
            "actor": actor,
            "host": socket.gethostname(),
            "at_ms": str(int(self.clock() * 1000)),
        }
        event.update({k: str(v) for k, v in fields.items()})
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.xadd(
                    self.keys.audit,
                    event,
                    maxlen=self.settings.audit_maxlen,
                    approximate=True,
                )
                pipe.hincrby(self.keys.counters, f"cards:{kind}", 1)
                await pipe.execute()
        except RedisError as exc:
            log.warning("cards.audit_failed", kind=kind, error=type(exc).__name__)
        log.info(f"cards.{kind}", **{k: v for k, v in event.items() if k != "host"})


class _Stored(dict[str, str]):
    """A stored card's fields, with the JSON they came from."""

    def __init__(self, data: dict[str, str], raw: bytes) -> None:
        super().__init__(data)
        self.raw = raw


async def _none() -> RecallResult:
    from memory_worker.cards.recall import RecallResult

    return RecallResult()


def _ref(card: object) -> tuple[int, str]:
    """(chat id, card id) of a card reference or a card."""
    from memory_worker.cards import Card

    if isinstance(card, Card):
        return card.chat_id, card.id
    return parse_card_ref(card)
