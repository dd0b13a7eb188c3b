"""The card store (§10): one chat's long-term memory in Redis, written once per run.

What a card is lives in :mod:`memory_worker.cards.model`, its stored JSON
in :mod:`memory_worker.cards.codec`, vectors in
:mod:`memory_worker.cards.vectors`, the scripts in ``cards/lua/*.lua``.

Key layout (all under the chat's hash tag ``{P chat:<id>}``, built by
:meth:`Keys.chat`, so every script touches one cluster slot):

==============  ======  ==========================================================
``cards``       HASH    card id → card JSON (every value a string: ids never lose
                        digits to Lua's number formatting)
``seq``         STRING  card id counter
``dedup``       HASH    dedup hash → id of the *live* card holding it
``scopes``      SET     scope keys in use (``chat``, ``thread:<t>``, ``user:<u>``)
``active:<sk>`` ZSET    live cards of a scope; score = last observation (ms)
``expiry``      ZSET    live cards with an expiry; score = expires_at (ms)
``runs``        ZSET    ids of the runs already applied (idempotency); score = when.
                        Entries older than ``MEMORY_APPLIED_RUN_RETENTION_DAYS``
                        are pruned by maintenance (bounded growth)
``episode:<r>`` HASH    the episode of run ``r``; ``episodes`` ZSET by window end
``links``       HASH    ``from|relation|to`` → confidence
``vec``         STRING  packed int8 rows of unit vectors (``dim`` bytes a row)
``vecids``      LIST    ``<card id>|<scope key>`` per row
``vecmask``     STRING  one byte a row: 1 = searchable (live), 2 = a withdrawn fact's
                        (retracted or corrected away: matched by meaning, §10), 0 = neither
``vecver``      STRING  bumped on every change of the three above
``meta``        HASH    ``dim`` (bytes a row), ``model`` (id of the embedding model)
``retracted``   HASH    dedup hash → when (ms) its fact was retracted: not relearned
``vecwait``     ZSET    remembered cards waiting for their vector (a zero row, the
                        card marked ``vp``) → since when (ms); filled by maintenance
``history``     HASH    card id → its history (:mod:`memory_worker.cards.history`): its
                        events, a JSON object a line, written by the script that makes
                        each change, bounded by ``MEMORY_CARD_HISTORY_MAX_EVENTS``
==============  ======  ==========================================================

Vectors know their model (§16). The first vector stored in a chat fixes the
chat's vector space: its dimension and the id of the model that made it
(``RunWrites.embedding_model``, ``FoldGroup.embedding_model``). A later vector
of another dimension or another model is **refused** — the card is stored
without a row (``has_embedding`` false), the run is not failed, and the count
comes back as ``ApplyResult.vectors_refused`` (logged as
``cards.vectors_refused``). A writer that does not say its model ("unknown")
is accepted only while the chat has no model recorded (chats written before
models were recorded); the first write that names a model with the same
dimension adopts it for them. A query names its model too
(``similar_cards(..., model=)``): another model finds nothing (logged
``cards.vector_model_mismatch``), so results never mix two spaces.
:meth:`CardStore.vector_space` tells callers which space a chat uses.
Switching a chat to another model (re-embedding its live cards) is the
maintenance pass of :mod:`memory_worker.upkeep.reembed`; until it completes the chat
keeps its old model, whole.

Writes. :meth:`CardStore.apply_run` sends a run's whole output to ONE Lua
script. It is idempotent by run id (a rerun after a crash returns at once,
leaving the store byte-identical) and atomic per chat, so two workers
applying two runs of one chat at the same moment can never create a
duplicate: the dedup lookup and the insert happen inside one script.
Repeats (same dedup hash) raise the observation count, keep the highest
confidence/salience and widen the validity window; resolutions
(supersede, competing, update, merge, reinforce, demote) are applied after
the upserts and skipped — counted, never failed — when their target is no
longer live.

Reads. :meth:`CardStore.visible_cards` honours scope visibility;
:meth:`CardStore.similar_cards` is an exact cosine scan with numpy over a
per-chat matrix cached in the process and revalidated by ``vecver`` (one
``GET`` on the hot path, plus one ``HMGET`` of the winners); :meth:`CardStore.search`
fuses it with BM25 of the same rows' texts (:mod:`memory_worker.cards.search`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Iterable, Sequence
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import orjson

from llm_client import as_text, lua_text
from memory_worker.cards import search as hybrid
from memory_worker.cards import withdrawals
from memory_worker.cards.codec import (
    apply_result,
    card_from_json,
    episode_from_hash,
    lua_json,
    rewrite_plan,
    to_ms,
)
from memory_worker.cards.history import (
    CardEvent,
    card_history,
    cards_as_of,
    decode_events,
    stored_live_as_of,
)
from memory_worker.cards.model import Card, Episode, Link, visible_scope_keys
from memory_worker.cards.recall.connect import ConnectParams
from memory_worker.cards.recall.fusion import FusionParams
from memory_worker.cards.recall.ranking import RecallHit
from memory_worker.cards.recall.timing import Window
from memory_worker.cards.replication import ReplicaWait
from memory_worker.cards.shapes import misshapen, read_shapes
from memory_worker.cards.vectors import Matrix, MatrixReader, VectorBlobs, VectorCache
from memory_worker.cards.withdrawn import Thresholds
from memory_worker.cards.writes import (
    ApplyResult,
    FoldGroup,
    FoldResult,
    RunWrites,
    VectorSpace,
)
from memory_worker.errors import ForgottenWrite, RunCancelled, StoreError
from memory_worker.keys import HISTORY_MAX_EVENTS, Keys
from memory_worker.logs import get_logger

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

    from memory_worker.storage.connections import CardsRedis

log = get_logger(__name__)

#: Calls of one card script that may each find a scope the chat gained meanwhile.
_SCOPE_ROUNDS = 8
#: How long a cancelled run's card write stays refused (§13): a week, far beyond any tick's
#: budget, so a worker that held the run when it was cancelled can never write it.
CANCEL_MARK_TTL_MS = 7 * 86_400_000
#: Chats whose scope keys a store remembers (dropped all at once past it).
_SCOPE_CACHE_CHATS = 10_000


@cache
def _script(name: str, *, helpers: bool = True) -> str:
    """The text of ``lua/<name>.lua``, after the shared ``lua/helpers.lua`` unless told not."""
    text = lua_text(__package__, name)
    if helpers:
        text = lua_text(__package__, "helpers") + text
    return text


class CardStore:
    """One chat's memory in Redis: the run write, maintenance writes and the read API."""

    def __init__(
        self,
        redis: CardsRedis,
        keys: Keys,
        *,
        vector_cache_bytes: int = 256 * 1024 * 1024,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
        thresholds: Thresholds = Thresholds(),
        history_max: int = HISTORY_MAX_EVENTS,
    ) -> None:
        self._redis = redis
        #: Events of a card's history the scripts keep (``MEMORY_CARD_HISTORY_MAX_EVENTS``).
        self.history_max = history_max
        self._keys = keys
        #: When a new card states a withdrawn fact (§10, :mod:`memory_worker.cards.withdrawn`).
        self.thresholds = thresholds
        # a run's write waits for this many replicas (see memory_worker.cards.replication)
        self._wait = ReplicaWait(redis, wait_replicas, wait_timeout_ms)
        # redis-py types register_script for the plain client; a cluster's runs the same
        # (EVALSHA routed by the keys' one slot, SCRIPT LOAD on NOSCRIPT)
        registrar = cast("Redis", redis)
        self._apply = registrar.register_script(_script("apply"))
        self._expire = registrar.register_script(_script("expire"))
        self._fold = registrar.register_script(_script("fold"))
        self._cancel_mark = registrar.register_script(_script("cancel_mark", helpers=False))
        self._cache = VectorCache(max_bytes=vector_cache_bytes)
        self._vectors = MatrixReader(
            redis,
            self.key,
            registrar.register_script(_script("refresh", helpers=False)),
            self._cache,
        )
        self._scopes: dict[int, frozenset[str]] = {}
        self._more: dict[str, AsyncScript] = {}  # the other card scripts, registered on use

    @property
    def redis(self) -> CardsRedis:
        return self._redis

    def key(self, chat_id: int, suffix: str) -> str:
        return self._keys.chat(chat_id, suffix)

    async def _call(
        self,
        script: AsyncScript,
        chat_id: int,
        args: Sequence[Any],
        *,
        scopes: Iterable[str] = (),
        extra: Sequence[str] = (),
        wait: bool = False,
    ) -> Any:
        """Run a card script with every key it may touch in KEYS and their roles by position in
        ARGV[1] (:meth:`Keys.chat_script_layout`; see ``lua/helpers.lua``).

        The chat's scopes come from a per-process memory; a script that meets a scope not
        passed answers ``{"missing": [...]}`` before writing anything, and runs again with it.
        """
        known = self._scopes.get(chat_id, frozenset()) | frozenset(scopes)
        for _ in range(_SCOPE_ROUNDS):
            keys = self._keys.chat_script_keys(chat_id, known, extra)
            layout = self._keys.chat_script_layout(chat_id, known, history_max=self.history_max)
            argv = [layout, *args]
            if wait:  # a run's write: replicated before the run may complete
                raw = await self._wait.run(script, keys, argv)
            else:
                raw = await script(keys=keys, args=argv)
            if not (isinstance(raw, bytes) and raw.startswith(b'{"missing"')):
                if len(self._scopes) >= _SCOPE_CACHE_CHATS:
                    self._scopes.clear()
                self._scopes[chat_id] = known
                return raw
            known = known | frozenset(as_text(sk) for sk in orjson.loads(raw)["missing"])
        raise StoreError(f"chat {chat_id}: scopes kept changing under a card script")

    async def run_script(
        self,
        name: str,
        chat_id: int,
        args: Sequence[Any],
        *,
        scopes: Iterable[str] = (),
        extra: Sequence[str] = (),
    ) -> Any:
        """Run ``lua/<name>.lua`` (after the helpers) on one chat, with every key in KEYS."""
        script = self._more.get(name)
        if script is None:
            script = self._more[name] = cast("Redis", self._redis).register_script(_script(name))
        return await self._call(script, chat_id, args, scopes=scopes, extra=extra)

    async def misshapen(self, chat_id: int, *, run_id: str | None = None) -> tuple[str, ...]:
        """Which of the chat's keys (and ``run_id``'s episode) hold what no card script writes,
        by role (:mod:`memory_worker.cards.shapes`): where a ``StoreDataCorrupt`` answer is."""
        return misshapen(await read_shapes(self._redis, self._keys, chat_id, episode=run_id))

    # -- writes ----------------------------------------------------------------------------

    async def apply_run(
        self, chat_id: int, run_id: str, writes: RunWrites, *, now: datetime
    ) -> ApplyResult:
        """Store a run's output in one atomic, idempotent script (see the module doc); a card
        stating a fact withdrawn after its messages is not stored (§10, checked again when a
        withdrawal lands between :mod:`~memory_worker.cards.withdrawals` and the script)."""
        for _ in range(_SCOPE_ROUNDS):
            data = await self._apply_checked(chat_id, run_id, writes, now)
            if "withdrawn" not in data:
                return self._applied(chat_id, run_id, writes, data)
        raise StoreError(f"chat {chat_id}: retractions kept landing under a run's card write")

    async def _apply_checked(
        self, chat_id: int, run_id: str, writes: RunWrites, now: datetime
    ) -> dict[str, Any]:
        plan, vectors = await withdrawals.checked_plan(
            run_id,
            writes,
            await self.chat_vectors(chat_id),
            self.card_reader(chat_id),
            self.thresholds,
        )
        # the chat joins the sweeps' set beside the script, not a round trip before it; a failed
        # SADD raises even when the script landed (the retry lists it, finds the run applied)
        outcomes = await asyncio.gather(
            self._call(
                self._apply,
                chat_id,
                [to_ms(now), run_id, lua_json(plan), *vectors.blobs],
                scopes=[card.scope_key for card in writes.cards],
                extra=[f"episode:{run_id}", Keys.cancel_mark_suffix(run_id)],
                wait=True,
            ),
            cast("Awaitable[int]", self._redis.sadd(self._keys.chats, str(chat_id))),
            return_exceptions=True,
        )
        for outcome in outcomes:  # the script's error first
            if isinstance(outcome, BaseException):
                raise outcome
        data: dict[str, Any] = orjson.loads(cast("bytes", outcomes[0]))
        return data

    def _applied(
        self, chat_id: int, run_id: str, writes: RunWrites, data: dict[str, Any]
    ) -> ApplyResult:
        run_log = log.bind(chat_id=chat_id, run_id=run_id)
        if data.get("forgotten"):
            run_log.info("cards.run_write_forgotten")
            raise ForgottenWrite(chat_id, writes.forget_epoch or 0)
        if data.get("cancelled"):
            run_log.info("cards.run_write_cancelled")
            raise RunCancelled(run_id)
        if not data.get("applied"):
            run_log.info("cards.run_already_applied")
            return ApplyResult(applied=False)
        result = apply_result(data)
        if result.vectors_refused:
            run_log.warning(
                "cards.vectors_refused",
                model=writes.embedding_model,
                refused=result.vectors_refused,
            )
        run_log.info(
            "cards.run_applied",
            inserted=result.inserted,
            observed=result.observed,
            superseded=result.superseded,
            skipped=result.skipped,
            retracted=result.retracted,
        )
        return result

    async def expire(self, chat_id: int, *, now: datetime, limit: int = 1000) -> int:
        """Mark live cards past their TTL ``expired`` (kept, out of every live index)."""
        count = await self._call(self._expire, chat_id, [to_ms(now), limit])
        return int(count)

    async def fold_groups(
        self,
        chat_id: int,
        groups: Sequence[FoldGroup],
        *,
        now: datetime,
        demote_delta: float = 0.2,
        forget_epoch: int | None = None,
    ) -> FoldResult:
        """Apply maintenance folds atomically (targets no longer live are skipped).

        ``forget_epoch`` (:meth:`forget_epoch` before the cards were read) refuses the
        folds when a forget of the chat came since: a merged text may hold its facts.
        """
        if not groups:
            return FoldResult()
        vectors = VectorBlobs()
        plan_groups: list[dict[str, Any]] = []
        for group in groups:
            entry: dict[str, Any] = {
                "survivor": group.survivor_id or "",
                "absorbed": list(group.absorbed_ids),
                "demote": list(group.demote_ids),
                "stamp": list(group.stamp_ids),
                "model": group.embedding_model or "",
            }
            entry.update(
                rewrite_plan(group.new_fact_text, group.new_dedup_hash, group.embedding, vectors)
            )
            plan_groups.append(entry)
        fold_plan: dict[str, Any] = {"groups": plan_groups, "demote_delta": f"{demote_delta:.4f}"}
        if forget_epoch is not None:
            fold_plan["epoch"] = str(forget_epoch)
        raw = await self._call(
            self._fold, chat_id, [to_ms(now), lua_json(fold_plan), *vectors.blobs]
        )
        data = orjson.loads(raw)
        if data.get("forgotten"):
            log.info("cards.fold_forgotten", chat_id=chat_id)
            return FoldResult(forgotten=True)
        if int(data.get("refused") or 0):
            log.warning("cards.vectors_refused", chat_id=chat_id, refused=int(data["refused"]))
        return FoldResult(
            folded=int(data["folded"]),
            rewritten=int(data["rewritten"]),
            demoted=int(data["demoted"]),
            stamped=int(data["stamped"]),
        )

    # -- reads -----------------------------------------------------------------------------

    async def forget_epoch(self, chat_id: int) -> int:
        """The chat's forget epoch in the card store (§14; 0: never forgotten)."""
        return int(await self._redis.get(self.key(chat_id, "forget")) or 0)

    async def chat_ids(self) -> list[int]:
        """Every chat that has memory (for maintenance sweeps)."""
        members = await self._redis.smembers(self._keys.chats)  # type: ignore[misc]
        return sorted(int(m) for m in members)

    async def mark_cancelled(self, chat_id: int, run_id: str, *, now_ms: int) -> bool:
        """Refuse ``run_id``'s card write from now on (§13; ``lua/cancel_mark.lua``); False
        when its write landed before (nothing to refuse). The mark lives
        :data:`CANCEL_MARK_TTL_MS`, longer than any worker can hold a run."""
        answer = await self._cancel_mark(
            keys=[self.key(chat_id, "runs"), self.key(chat_id, Keys.cancel_mark_suffix(run_id))],
            args=[run_id, now_ms, CANCEL_MARK_TTL_MS, "mark"],
        )
        return as_text(answer) == "marked"

    async def drop_cancel_mark(self, chat_id: int, run_id: str) -> None:
        """Let ``run_id`` write again (a replay by id of a cancelled run, before it is
        claimable)."""
        await self._cancel_mark(
            keys=[self.key(chat_id, "runs"), self.key(chat_id, Keys.cancel_mark_suffix(run_id))],
            args=[run_id, 0, 0, "drop"],
        )

    async def has_applied(self, chat_id: int, run_id: str) -> bool:
        """One round trip: the key's type and the run's score read together (a SET, from
        before applied runs had a time, answers the ZSCORE with an error: then asked again)."""
        key = self.key(chat_id, "runs")
        pipe = self._redis.pipeline(transaction=False)
        pipe.type(key)
        pipe.zscore(key, run_id)
        kind, score = await pipe.execute(raise_on_error=False)
        if kind in (b"set", "set"):
            return bool(await self._redis.sismember(key, run_id))  # type: ignore[misc]
        if isinstance(score, Exception):
            raise score
        return score is not None

    async def prune_applied_runs(self, chat_id: int, *, before_ms: int) -> int:
        """Forget runs applied before ``before_ms`` (bounded growth); how many.

        Safe once no run can be applied twice that long apart: a run is applied
        at its completion, and only a crash between apply and completion makes a
        worker apply it again — within one lease, never days later.
        """
        key = self.key(chat_id, "runs")
        if await self._redis.type(key) in (b"set", "set"):
            return 0  # migrated (with a time) by its next apply
        return int(await self._redis.zremrangebyscore(key, "-inf", f"({before_ms}"))

    async def get_cards(self, chat_id: int, card_ids: Sequence[str]) -> list[Card]:
        """Cards by id, in the order given (unknown ids are left out)."""
        if not card_ids:
            return []
        raws = await self._redis.hmget(self.key(chat_id, "cards"), list(card_ids))  # type: ignore[misc]
        return [card_from_json(chat_id, raw) for raw in raws if raw is not None]

    async def get_card(self, chat_id: int, card_id: str) -> Card | None:
        cards = await self.get_cards(chat_id, [card_id])
        return cards[0] if cards else None

    async def all_cards(self, chat_id: int) -> list[Card]:
        """Every card of the chat, whatever its status, by id."""
        raws = await self._redis.hvals(self.key(chat_id, "cards"))  # type: ignore[misc]
        cards = [card_from_json(chat_id, raw) for raw in raws]
        return sorted(cards, key=lambda c: int(c.id))

    async def live_cards(
        self, chat_id: int, scope_keys: Iterable[str] | None = None, *, limit: int | None = None
    ) -> list[Card]:
        """Live (active/competing) cards of the given scopes (all when None), newest first."""
        if scope_keys is None:
            scope_keys = sorted(
                m.decode()
                for m in await self._redis.smembers(self.key(chat_id, "scopes"))  # type: ignore[misc]
            )
        return (await self.live_card_groups(chat_id, [(list(scope_keys), limit)]))[0]

    async def live_card_groups(
        self, chat_id: int, groups: Sequence[tuple[Sequence[str], int | None]]
    ) -> list[list[Card]]:
        """:meth:`live_cards` of several ``(scope keys, limit)`` groups in two round trips,
        not two per group: one pipeline of the scopes' ZSETs, one HMGET of every id."""
        pipe = self._redis.pipeline(transaction=False)
        for scope_keys, limit in groups:
            stop = -1 if limit is None else max(0, limit - 1)
            for sk in scope_keys:
                pipe.zrevrange(self.key(chat_id, f"active:{sk}"), 0, stop, withscores=True)
        replies = iter(await pipe.execute())
        id_groups: list[list[str]] = []
        for scope_keys, _ in groups:
            scored: list[tuple[float, str]] = []
            for _ in scope_keys:
                scored.extend((score, member.decode()) for member, score in next(replies))
            scored.sort(key=lambda item: (-item[0], int(item[1])))
            id_groups.append([card_id for _, card_id in scored])
        wanted = list(dict.fromkeys(card_id for ids in id_groups for card_id in ids))
        raws = await self._redis.hmget(self.key(chat_id, "cards"), wanted) if wanted else []  # type: ignore[misc]
        found = {
            card_id: card_from_json(chat_id, raw)
            for card_id, raw in zip(wanted, raws, strict=True)
            if raw is not None
        }
        return [[found[card_id] for card_id in ids if card_id in found] for ids in id_groups]

    async def visible_cards(
        self,
        chat_id: int,
        thread_id: int = 0,
        user_id: int | None = None,
        *,
        include_inactive: bool = False,
        now: datetime | None = None,
        limit: int | None = None,
        as_of: datetime | None = None,
    ) -> list[Card]:
        """Cards a reader in ``thread_id`` speaking for ``user_id`` may see, newest first.

        Chat cards; thread cards only of that thread; user cards only of that
        user. Superseded, merged and expired cards (also those past their
        TTL that maintenance has not archived yet) only with
        ``include_inactive``. ``as_of``: the cards the memory held at that moment
        (:func:`~memory_worker.cards.history.live_as_of`; every card of the chat is read).
        """
        allowed = visible_scope_keys(thread_id, user_id)
        if as_of is not None:
            cards = await self.cards_as_of(chat_id, as_of, allowed)
            return cards[:limit] if limit is not None else cards
        if include_inactive:
            cards = [c for c in await self.all_cards(chat_id) if c.scope_key in allowed]
            cards.sort(key=lambda c: (c.observed_at, int(c.id)), reverse=True)
            return cards[:limit] if limit is not None else cards
        moment = now or datetime.now(UTC)
        cards = await self.live_cards(chat_id, sorted(allowed))
        visible = [c for c in cards if c.visible_at(moment)]
        return visible[:limit] if limit is not None else visible

    async def cards_as_of(
        self, chat_id: int, moment: datetime, allowed: Iterable[str] | None = None
    ) -> list[Card]:
        """The cards of ``allowed`` scopes (every scope: None) the memory held at ``moment``,
        newest observation first: every stored card read, filtered on its JSON, then parsed."""
        scopes = None if allowed is None else frozenset(allowed)
        moment_ms = int(to_ms(moment))
        held: dict[str, Card] = {}  # by id: a scan may return a field twice
        async for card_id, raw in self._redis.hscan_iter(self.key(chat_id, "cards"), count=1000):
            data = orjson.loads(raw)
            if (scopes is None or data.get("sk") in scopes) and stored_live_as_of(data, moment_ms):
                held[as_text(card_id)] = card_from_json(chat_id, raw)
        return cards_as_of(held.values(), moment)

    async def history(self, chat_id: int, card_id: str) -> tuple[Card | None, list[CardEvent]]:
        """A card as stored now and its history, oldest first
        (:func:`~memory_worker.cards.history.card_history`); (None, []) for no such card.
        Entries of the stored history that are not events are skipped (logged, counted)."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.hget(self.key(chat_id, "cards"), card_id)
        pipe.hget(self.key(chat_id, "history"), card_id)
        raw, stored = await pipe.execute()
        if raw is None:
            return None, []
        card = card_from_json(chat_id, raw)
        events, skipped = decode_events(stored)
        if skipped:
            log.warning("cards.history_skipped", chat_id=chat_id, card_id=card_id, skipped=skipped)
        return card, card_history(card, events)

    async def similar_cards(
        self,
        chat_id: int,
        embedding: Sequence[float],
        k: int,
        *,
        thread_id: int | None = None,
        user_id: int | None = None,
        scope_keys: Iterable[str] | None = None,
        now: datetime | None = None,
        model: str | None = None,
        matrix: Matrix | None = None,
    ) -> list[tuple[Card, float]]:
        """The ``k`` live cards most similar (cosine) to ``embedding``, best first.

        With neither ``thread_id`` nor ``user_id`` every live card of the chat
        is a candidate; with either, only what :func:`visible_scope_keys`
        allows; ``scope_keys`` names the allowed scopes outright. ``model``
        names the model of ``embedding``: one other than the chat's finds
        nothing (so does another dimension), never a mix of two spaces.
        ``matrix``: the chat's vectors as :meth:`searchable_vectors` just read them.
        """
        if k <= 0:
            return []
        matrix = matrix or await self._vectors.read(chat_id)
        if not matrix.ids:
            return []
        if model is not None and matrix.model and model != matrix.model:
            log.warning(
                "cards.vector_model_mismatch",
                chat_id=chat_id,
                query_model=model,
                chat_model=matrix.model,
            )
            return []
        allowed: frozenset[str] | None = None
        if scope_keys is not None:
            allowed = frozenset(scope_keys)
        elif thread_id is not None or user_id is not None:
            allowed = visible_scope_keys(thread_id or 0, user_id)
        scores = matrix.scores(embedding, allowed)
        if scores is None:
            return []
        read = hybrid.hmget_reader(self._redis, self.key(chat_id, "cards"))
        moment = now or datetime.now(UTC)
        found = await hybrid.best_visible(chat_id, read, matrix, scores, k, moment)
        return [(card, float(scores[row])) for card, row in found]

    async def search(
        self,
        chat_id: int,
        text: str,
        embedding: Sequence[float] | None,
        k: int,
        *,
        scope_keys: Iterable[str] | None = None,
        window: Window | None = None,
        now: datetime | None = None,
        model: str | None = None,
        params: FusionParams = FusionParams(),
        matrix: Matrix | None = None,
        favour: hybrid.Favour | None = None,
        connect: ConnectParams | None = None,
        as_of: datetime | None = None,
    ) -> list[RecallHit]:
        """The ``k`` live cards best for ``text``: the cosine with ``embedding`` (None: none)
        fused with BM25 of ``text`` (``params``); ``scope_keys``, ``model`` as in
        :meth:`similar_cards`; ``window`` keeps the cards whose span meets it (exact); a
        time ``text`` names (relative to ``now``) lifts its cards by ``params.time_boost``;
        ``favour`` raises some cards' cosine (:class:`~memory_worker.cards.search.Favour`);
        ``connect``: the best hits lift the cards of their subject and episode, and a
        restatement goes after the other hits (:mod:`memory_worker.cards.recall.connect`).
        ``as_of``: the cards the memory held at that moment are searched, as it held them
        (:func:`~memory_worker.cards.history.live_as_of`; ``now`` is then ``as_of``): every
        card with a row is read to tell which.
        """
        if k <= 0:
            return []
        matrix = matrix or await self._vectors.read(chat_id)
        if not matrix.ids or (model is not None and matrix.model and model != matrix.model):
            return []  # another model's space: never compared
        read = hybrid.hmget_reader(self._redis, self.key(chat_id, "cards"))
        searched = matrix
        if as_of is not None:
            searched = matrix.held_view(await _rows_as_of(read, matrix, as_of))
            now = as_of
        return await hybrid.hybrid_search(
            chat_id,
            read,
            searched,
            hybrid.Query(text, embedding, window, params, favour, connect, as_of is not None),
            k,
            allowed=frozenset(scope_keys) if scope_keys is not None else None,
            now=now or datetime.now(UTC),
            cache=lambda: self._cache.put(chat_id, matrix),
        )

    def card_reader(self, chat_id: int) -> hybrid.ReadRaw:
        """Stored cards of the chat by id (one ``HMGET`` a call)."""
        return hybrid.hmget_reader(self._redis, self.key(chat_id, "cards"))

    async def chat_vectors(self, chat_id: int) -> Matrix:
        """The chat's vectors as they stand (pass them on as :meth:`similar_cards`' ``matrix``)."""
        return await self._vectors.read(chat_id)

    async def searchable_vectors(self, chat_id: int, scope_keys: Iterable[str]) -> Matrix | None:
        """The chat's vectors (the read :meth:`similar_cards` makes; pass them on as its
        ``matrix``) when a live card of ``scope_keys`` has one; None: no query could find
        anything, so a caller need not embed one."""
        matrix = await self._vectors.read(chat_id)
        return matrix if matrix.any_live(frozenset(scope_keys)) else None

    async def vector_space(self, chat_id: int) -> VectorSpace | None:
        """The model and dimension of the chat's vectors (None: no vector stored yet)."""
        matrix = await self._vectors.read(chat_id)
        if matrix.dim == 0:
            return None
        return VectorSpace(model=matrix.model or None, dimension=matrix.dim)

    async def episodes(self, chat_id: int, *, limit: int = 20) -> list[Episode]:
        """The latest episodes of the chat, newest window first."""
        run_ids = await self._redis.zrevrange(self.key(chat_id, "episodes"), 0, limit - 1)
        pipe = self._redis.pipeline(transaction=False)
        for run_id in run_ids:
            pipe.hgetall(self.key(chat_id, f"episode:{run_id.decode()}"))
        return [episode_from_hash(chat_id, raw) for raw in await pipe.execute() if raw]

    async def links(self, chat_id: int) -> list[Link]:
        raw = await self._redis.hgetall(self.key(chat_id, "links"))  # type: ignore[misc]
        links: list[Link] = []
        for field_name, value in raw.items():
            source, relation, target = field_name.decode().split("|")
            links.append(
                Link(
                    from_card_id=source,
                    relation=relation,
                    to_card_id=target,
                    confidence=float(value),
                )
            )
        return sorted(links, key=lambda link: (int(link.from_card_id), link.relation))

    async def chat_keys(self, chat_id: int) -> list[str]:
        """Every key of one chat's memory (tests compare them with DUMP; ops inspect them)."""
        pattern = _glob_escape(self._keys.chat_tag(chat_id)) + "*"
        found = [k.decode() async for k in self._redis.scan_iter(match=pattern, count=1000)]
        return sorted(found)


#: Cards one ``HMGET`` of an as-of search reads.
_AS_OF_READ = 1000


async def _rows_as_of(
    read: hybrid.ReadRaw, matrix: Matrix, moment: datetime
) -> np.ndarray[Any, Any]:
    """Which rows of ``matrix`` hold a card the memory held at ``moment``."""
    moment_ms = int(to_ms(moment))
    ids = matrix.ids[: matrix.count]
    held = np.zeros(len(ids), dtype=bool)
    for start in range(0, len(ids), _AS_OF_READ):
        raws = await read(ids[start : start + _AS_OF_READ])
        for offset, raw in enumerate(raws):
            if raw is not None and stored_live_as_of(orjson.loads(raw), moment_ms):
                held[start + offset] = True
    return held


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)
