"""Single-card corrections (§10), the Redis shell: ``lua/retract.lua`` and ``lua/correct.lua``,
and the withdrawn-fact check a correction passes before its write.

Each is one atomic script on the chat's keys (every key in KEYS, one hash tag: standalone
and cluster alike); what they decide is :mod:`memory_worker.cards.corrections`, whose twins
the equivalence tests run beside them. The bot's calls (``MemoryQueue.retract`` /
``correct``) validate, embed and audit around these.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import orjson

from memory_worker.cards import withdrawals
from memory_worker.cards.codec import lua_json, to_ms
from memory_worker.cards.corrections import CorrectionPlan, Outcome
from memory_worker.cards.vectors import quantize
from memory_worker.cards.withdrawn import Candidate, Statement, WithdrawnFact

if TYPE_CHECKING:
    from memory_worker.cards.model import Card
    from memory_worker.cards.store import CardStore


async def retract_card(
    store: CardStore, chat_id: int, card_id: str, *, actor: str, reason: str, now: datetime
) -> Outcome:
    """Retract one card (not found: ``found`` false; already retracted: ``done`` false)."""
    card = await store.get_card(chat_id, card_id)
    if card is None:
        return Outcome(found=False)
    raw = await store.run_script(
        "retract", chat_id, [to_ms(now), card_id, actor, reason], scopes=[card.scope_key]
    )
    return Outcome.from_reply(orjson.loads(raw))


async def correct_card(
    store: CardStore,
    chat_id: int,
    card_id: str,
    plan: CorrectionPlan,
    *,
    embedding: Sequence[float] | None,
    sk: str,
    now: datetime,
) -> Outcome:
    """Supersede a live card by a corrected one (see ``lua/correct.lua``)."""
    args: list[bytes | str] = [to_ms(now), card_id]
    args.append(lua_json(plan.as_json(vector=embedding is not None)))
    if embedding is not None:
        args.append(quantize(embedding))
    raw = await store.run_script("correct", chat_id, args, scopes=[sk])
    return Outcome.from_reply(orjson.loads(raw))


async def correction_refused(
    store: CardStore,
    old: Card,
    plan: CorrectionPlan,
    *,
    embedding: Sequence[float] | None,
    now: datetime,
) -> WithdrawnFact | None:
    """The withdrawn fact a correction would bring back (§10: the same rule as a run's card
    write; a correction is asserted ``now``, so only a withdrawal stamped later refuses it)."""
    statement = Statement(old.subject, plan.object, plan.fact, old.user_id, plan.h)
    candidate = Candidate(statement, int(to_ms(now)), embedding)
    found = await withdrawals.check(
        await store.chat_vectors(old.chat_id),
        store.card_reader(old.chat_id),
        [candidate],
        plan.model or None,
        store.thresholds,
    )
    return found.refused[0]
