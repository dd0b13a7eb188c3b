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

import socket
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, cast

from redis.exceptions import RedisError

from memory_worker.cards.corrections import (
    check_actor,
    check_fact,
    check_reason,
    correction_plan,
    parse_card_ref,
)
from memory_worker.errors import CardNotFound, CardNotLive, VectorSpaceMismatch
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
        merged or expired card.
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
        from memory_worker.cards.edits import correct_card

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


def _ref(card: object) -> tuple[int, str]:
    """(chat id, card id) of a card reference or a card."""
    from memory_worker.cards import Card

    if isinstance(card, Card):
        return card.chat_id, card.id
    return parse_card_ref(card)
