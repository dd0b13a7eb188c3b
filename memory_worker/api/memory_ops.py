"""The bot's memory calls beyond reading (§13): a prompt-ready context, single-card
corrections, export and import. :class:`MemoryOps` is a base of
:class:`~memory_worker.api.MemoryQueue`; the decisions live in pure modules:

- ``context`` — :mod:`memory_worker.cards.prompt_context` ranks, deduplicates, budgets and
  renders; with a query it asks :meth:`MemoryQueue.recall` (its public answer, best first)
  for relevance.
- ``retract`` / ``correct`` — :mod:`memory_worker.cards.corrections` (the decisions) and
  :mod:`memory_worker.cards.edits` (one script each).
- ``export`` / ``import_export`` — :mod:`memory_worker.cards.export_format` (the file) and
  :mod:`memory_worker.cards.transfer` (the reads and the one import script per chat).

Every change leaves an audit event on the audit stream (where forget's go): kind, chat,
card ids, actor, host, time — ids and counts, never card text or a reason.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, cast

from redis.exceptions import RedisError

from llm_client import as_text
from memory_worker.api.query_args import check_id, check_k, check_optional_id, check_query_text
from memory_worker.cards.corrections import (
    check_actor,
    check_fact,
    check_reason,
    correction_plan,
    parse_card_ref,
)
from memory_worker.cards.export_format import MemoryExport
from memory_worker.cards.prompt_context import MemoryContext
from memory_worker.errors import (
    CardNotFound,
    CardNotLive,
    InvalidCorrection,
    VectorSpaceMismatch,
)
from memory_worker.ops.logs import get_logger

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from llm_client import Walker
    from memory_worker.cards import Card, CardStore, VectorSpace
    from memory_worker.keys import Keys
    from memory_worker.settings import Settings

log = get_logger(__name__)


class _Queue(Protocol):
    """What :class:`MemoryOps` uses of :class:`~memory_worker.api.MemoryQueue`."""

    redis: Redis
    keys: Keys
    settings: Settings

    @property
    def cards(self) -> CardStore: ...

    def _recall_walker(self) -> Walker: ...

    async def recall(
        self, chat_id: int, text: str, k: int = 5, user_id: int | None = None
    ) -> Sequence[tuple[Card, float]]: ...


class MemoryOps:
    """Context, corrections, export and import (see the module doc): a base of
    :class:`~memory_worker.api.MemoryQueue`, whose connection (:class:`_Queue`) it uses."""

    #: The wall clock (seconds): when a retraction or correction happens (tests set it).
    clock: Callable[[], float] = staticmethod(time.time)

    @property
    def _q(self) -> _Queue:
        return cast("_Queue", self)

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    # --- a prompt-ready context (§13) ------------------------------------------------------------

    async def context(
        self,
        chat_id: int,
        *,
        user_id: int | None = None,
        query: str | None = None,
        max_tokens: int = 800,
    ) -> MemoryContext:
        """Memory ready to put in a bot's prompt: the user's own cards and the chat's, ranked
        by relevance to ``query`` (1 / its rank in :meth:`recall`'s answer, when given), salience, confidence
        and recency, one per fact, within ``max_tokens`` (estimated: one token per 3 bytes
        of UTF-8), rendered as a dated block that keeps each fact's language. The same store
        gives the same context. Candidates: the ``MEMORY_CONTEXT_RECENT_CARDS`` most recently
        observed live cards of each scope, and recall's ``MEMORY_CONTEXT_QUERY_CARDS`` best.
        See :mod:`memory_worker.cards.prompt_context`; a query's recall raises as
        :meth:`recall` does.
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

        q = self._q
        check_id("chat_id", chat_id)
        check_optional_id("user_id", user_id)
        budget = check_k(max_tokens, q.settings.context_max_tokens, name="max_tokens")
        if query is not None:
            query = check_query_text(query, q.settings.recall_max_query_chars)
        scopes = sorted(visible_scope_keys(0, user_id))
        k = min(q.settings.context_query_cards, q.settings.query_max_k)
        recent, hits = await asyncio.gather(
            self._recent(chat_id, scopes, q.settings.context_recent_cards),
            q.recall(chat_id, query, k=k, user_id=user_id) if query and budget else _none(),
        )
        cards = {card.id: card for card, _ in hits}
        entries = [Entry.from_card(card) for card in cards.values()]
        entries += [Entry.from_stored(data) for card_id, data in recent if card_id not in cards]
        related = relevance([card.id for card, _ in hits])
        ranked = rank(entries, related, Weights.from_settings(q.settings))
        chosen = select(ranked, budget)
        raw = dict(recent)
        shown = [
            cards[e.card_id] if e.card_id in cards else card_from_json(chat_id, raw[e.card_id].raw)
            for e in chosen
        ]
        text = render(chosen)
        return MemoryContext(text=text, cards=shown, tokens=estimate_tokens(text))

    async def _recent(
        self, chat_id: int, scopes: Sequence[str], limit: int
    ) -> list[tuple[str, _Stored]]:
        """The ``limit`` most recently observed live cards of each scope, visible now, as
        stored (parsed to a :class:`Card` only once chosen: that costs ~20x the JSON)."""
        import orjson

        from memory_worker.cards.prompt_context import visible

        store = self._q.cards
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

    # --- single-card corrections (§10) --------------------------------------------------------

    async def retract(self, card_id: str | Card, *, actor: str, reason: str) -> Card:
        """Withdraw a card: kept with status ``retracted`` (``retracted_by``, the reason),
        never shown, recalled or put in a context again; a run of messages sent before now
        does not learn its fact again, a newer message restating it does. ``card_id`` is
        the card's :attr:`~memory_worker.cards.Card.ref` (``"<chat id>:<card id>"``) or the
        card. Retracting a retracted card changes nothing. Answers the card as stored now.
        """
        chat_id, local_id = _ref(card_id)
        actor, reason = check_actor(actor), check_reason(reason)
        from memory_worker.cards.edits import retract_card

        outcome = await retract_card(
            self._q.cards, chat_id, local_id, actor=actor, reason=reason, now=self._now()
        )
        if not outcome.found:
            raise CardNotFound(f"{chat_id}:{local_id}")
        if outcome.done:
            await self._audit("retract", chat_id, actor, card_id=local_id, status=outcome.status)
        return await self._card(chat_id, local_id)

    async def correct(self, card_id: str | Card, fact_text: str, *, actor: str) -> Card:
        """Replace a live card's fact: a new card holding ``fact_text`` as written (never
        translated), asserted by ``actor`` (``asserted_by``, ``corrects``), supersedes it;
        the old one is kept with its validity end. When a live card already holds that fact
        it supersedes the old one instead. Answers the card that now holds the fact.

        The new card is embedded on the ``embedding`` route in the chat's vector space (a
        chat without vectors: none); an embedding failure raises and writes nothing.
        Raises :class:`~memory_worker.errors.CardNotLive` for a superseded, retracted,
        merged or expired card. The corrected fact passes the check of every card write
        (§10, :mod:`memory_worker.cards.withdrawn`): asserted now, it is refused
        (:class:`~memory_worker.errors.InvalidCorrection`) only by a withdrawal stamped later.
        """
        chat_id, local_id = _ref(card_id)
        actor = check_actor(actor)
        fact = check_fact(fact_text, self._q.settings.card_max_bytes)
        old = await self._q.cards.get_card(chat_id, local_id)
        if old is None:
            raise CardNotFound(f"{chat_id}:{local_id}")
        if not old.live:
            raise CardNotLive(old.ref, old.status.value)
        space = await self._q.cards.vector_space(chat_id)
        embedding, model = (
            (None, "") if space is None else await self._embed_fact(chat_id, fact, space)
        )
        plan = correction_plan(
            old.scope_key, old.subject, old.predicate, fact, actor=actor, model=model
        )
        from memory_worker.cards.edits import correct_card, correction_refused

        withdrawn = await correction_refused(
            self._q.cards, old, plan, embedding=embedding, now=self._now()
        )
        if withdrawn is not None:
            raise InvalidCorrection(
                f"card {chat_id}:{withdrawn.card_id} withdrew this fact after this correction's "
                "time (§10)"
            )
        outcome = await correct_card(
            self._q.cards,
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

        q = self._q
        check_id("chat_id", chat_id)
        check_optional_id("user_id", user_id)
        actor = check_actor(actor)
        snap = await read_snapshot(q.cards, chat_id, rounds=q.settings.export_read_rounds)
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

        q = self._q
        actor = check_actor(actor)
        snap = parse_export(
            lines,
            source,
            max_bytes=q.settings.import_max_bytes,
            card_max_bytes=q.settings.card_max_bytes,
        )
        done = await write_snapshot(
            q.cards,
            snap,
            now=self._now(),
            chats_key=q.keys.chats,
            chunk_items=q.settings.import_chunk_items,
            replans=q.settings.import_replans,
        )
        await self._audit("import", snap.chat_id, actor, **done)
        return done

    async def _card(self, chat_id: int, card_id: str) -> Card:
        card = await self._q.cards.get_card(chat_id, card_id)
        if card is None:  # forgotten meanwhile
            raise CardNotFound(f"{chat_id}:{card_id}")
        return card

    async def _embed_fact(
        self, chat_id: int, fact: str, space: VectorSpace
    ) -> tuple[list[float], str]:
        """``fact`` as a passage (a card's text) in the chat's vector space, and its model."""
        from llm_client import EMBEDDING
        from memory_worker.deadlines import deadline_after
        from memory_worker.privacy.masking import mask

        routed = await self._q._recall_walker().embed(
            EMBEDDING,
            [mask(fact, contacts=self._q.settings.redact_contacts)],
            dimension=space.dimension,
            deadline=deadline_after(self._q.settings.recall_timeout_seconds),
            context={"job": "correct"},
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
            async with self._q.redis.pipeline(transaction=False) as pipe:
                pipe.xadd(
                    self._q.keys.audit,
                    event,
                    maxlen=self._q.settings.audit_maxlen,
                    approximate=True,
                )
                pipe.hincrby(self._q.keys.counters, f"cards:{kind}", 1)
                await pipe.execute()
        except RedisError as exc:
            log.warning("cards.audit_failed", kind=kind, error=type(exc).__name__)
        log.info(f"cards.{kind}", **{k: v for k, v in event.items() if k != "host"})


class _Stored(dict[str, str]):
    """A stored card's fields, with the JSON they came from."""

    def __init__(self, data: dict[str, str], raw: bytes) -> None:
        super().__init__(data)
        self.raw = raw


async def _none() -> list[tuple[Card, float]]:
    return []


def _ref(card: object) -> tuple[int, str]:
    """(chat id, card id) of a card reference or a card."""
    from memory_worker.cards import Card

    if isinstance(card, Card):
        return card.chat_id, card.id
    return parse_card_ref(card)
