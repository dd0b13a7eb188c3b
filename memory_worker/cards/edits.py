"""Memory changed by hand (§10, §13), the Redis shell: ``lua/retract.lua``,
``lua/correct.lua`` and the withdrawn-fact check a correction passes before its write;
``lua/remember.lua`` and ``lua/fill_vectors.lua`` (the vectors remembered cards wait for).

Each is one atomic script on the chat's keys (every key in KEYS, one hash tag: standalone
and cluster alike); what they decide is :mod:`memory_worker.cards.corrections` and
:mod:`memory_worker.cards.remember`, whose twins the equivalence tests run beside them. The
bot's calls (``MemoryQueue.retract`` / ``correct`` / ``remember``) validate, embed and audit
around these.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import orjson

from llm_client import as_text
from memory_worker.cards import withdrawals
from memory_worker.cards.codec import card_from_json, lua_json, to_ms
from memory_worker.cards.corrections import CorrectionPlan, Outcome
from memory_worker.cards.remember import Filled, FillItem, Remembered, RememberPlan, fill_plan
from memory_worker.cards.vectors import quantize
from memory_worker.cards.withdrawn import Candidate, Statement, WithdrawnFact

if TYPE_CHECKING:
    from memory_worker.cards.model import Card
    from memory_worker.cards.store import CardStore


async def retract_card(
    store: CardStore,
    chat_id: int,
    card_id: str,
    *,
    actor: str,
    reason: str,
    now: datetime,
    request_id: str = "",
) -> Outcome:
    """Retract one card (not found: ``found`` false; already retracted: ``done`` false)."""
    card = await store.get_card(chat_id, card_id)
    if card is None:
        return Outcome(found=False)
    raw = await store.run_script(
        "retract",
        chat_id,
        [to_ms(now), card_id, actor, reason, request_id],
        scopes=[card.scope_key],
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


#: The chat keys of ``remember.lua`` beyond the fixed ones, in its KEYS order.
REMEMBER_KEYS = ("forgetting", "vecwait")


async def remember_card(
    store: CardStore,
    chat_id: int,
    plan: RememberPlan,
    *,
    embedding: Sequence[float] | None,
    now: datetime,
) -> Remembered:
    """Store (or observe again) a remembered fact in one script (see ``lua/remember.lua``)."""
    args: list[bytes | str] = [to_ms(now), lua_json(plan.as_json(vector=embedding is not None))]
    if embedding is not None:
        args.append(quantize(embedding))
    raw = await store.run_script(
        "remember", chat_id, args, scopes=[plan.card.scope_key], extra=REMEMBER_KEYS
    )
    return Remembered.from_reply(orjson.loads(raw))


async def waiting_cards(
    store: CardStore, chat_id: int, limit: int
) -> list[tuple[str, Card | None]]:
    """The first ``limit`` cards listed as waiting for a vector (``vecwait``, oldest first),
    by id, as stored now (None: gone, e.g. forgotten)."""
    ids = [
        as_text(i) for i in await store.redis.zrange(store.key(chat_id, "vecwait"), 0, limit - 1)
    ]
    found = await store.card_reader(chat_id)(ids)
    return [
        (card_id, None if raw is None else card_from_json(chat_id, raw))
        for card_id, raw in zip(ids, found, strict=True)
    ]


async def fill_vectors(
    store: CardStore, chat_id: int, items: Sequence[FillItem], *, model: str, now: datetime
) -> Filled:
    """Write the vectors of waiting cards (see ``lua/fill_vectors.lua``)."""
    if not items:
        return Filled()
    plan, blobs = fill_plan(items, model)
    raw = await store.run_script(
        "fill_vectors", chat_id, [to_ms(now), lua_json(plan), *blobs], extra=("vecwait",)
    )
    return Filled.from_reply(orjson.loads(raw))


async def waiting_counts(store: CardStore, chat_ids: Sequence[int]) -> dict[int, int]:
    """How many cards wait for a vector in each chat (those with none left out)."""
    pipe = store.redis.pipeline(transaction=False)
    for chat_id in chat_ids:
        pipe.zcard(store.key(chat_id, "vecwait"))
    counts = await pipe.execute()
    return {c: int(n) for c, n in zip(chat_ids, counts, strict=True) if int(n)}
