"""Switching a chat's embedding model (§16): the re-embedding pass.

A chat's vectors know their model (:mod:`memory_worker.cards`); once the
embedding route serves another model, a run's vectors are refused by the
chat and a query of the new model finds nothing there. This pass re-embeds
the chat's live cards — and its withdrawn ones (retracted or corrected away, §10: their
rows are what a restatement by meaning is matched against; left behind they would match
nothing in the new space) — with the new model and then switches the chat over:

- **Beside, not over.** New rows go to ``nvec`` (same row numbers as ``vec``)
  and ``nvech`` (card id → dedup hash of the text embedded); readers keep
  using the old matrix, whole, until the switch.
- **Paced.** ``MEMORY_REEMBED_BATCH_CARDS`` cards a step, a pause of
  ``MEMORY_REEMBED_PAUSE_SECONDS`` between steps, at most
  ``MEMORY_REEMBED_BUDGET_SECONDS`` per maintenance call.
- **Resumable.** The cursor (the last card id visited) lives in the chat's
  ``rebuild`` hash; a step names the cursor it expects, so a killed worker's
  successor resumes where the last step landed and two workers never both
  advance it.
- **One switch.** ``reembed_switch.lua`` checks, atomically, that every card
  id up to the chat's ``seq`` was visited and that every live card has a new
  row of its *current* text (``dedup`` against ``nvech``); then it renames
  ``nvec`` over ``vec``, records the new model and dimension, and bumps
  ``vecrw``/``vecver`` so every reader reloads. A write during the pass (a
  new card, a rewritten fact, a fold) is therefore never lost: a new card
  gets an id past the cursor, a rewrite changes its dedup hash; the switch
  names such cards and the pass embeds them before trying again.
- **Withdrawn facts too.** A step embeds the visited cards whose row is marked withdrawn
  (``vecmask`` byte 2) beside the live ones; a card withdrawn after its visit was live
  then and has its new row already. The switch checks the live cards only: a withdrawn
  card whose vector the embedder left empty keeps a zero row (its hash still refuses).
- **Visible.** Per chat ``done/total`` in the fleet hash
  ``reembed:progress`` (the metrics' ``memory_worker_reembed_*`` gauges).

The same maintenance call first gives remembered cards that wait for a vector (stored
while the embedder was down, :mod:`memory_worker.cards.remember`) their vector:
:func:`fill_waiting`, a batch of each chat's waiting cards a call, in chats of the route's
space (a chat of another space is switched first, its waiting cards with it).

Decisions (which ids a step visits, which cards it embeds, what the switch's
answer means) are pure functions below; the rest is the shell.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, cast

import orjson

from llm_client import LLMError, as_text, lua_text
from memory_worker.cards import Card, CardStore
from memory_worker.cards.codec import card_from_json
from memory_worker.cards.vectors import quantize
from memory_worker.consolidation.model_calls import Embedder, embed_texts
from memory_worker.logs import get_logger
from memory_worker.settings import Settings

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from llm_client import RoutesConfig

log = get_logger(__name__)

#: The chat keys ``reembed_switch.lua`` takes, in its KEYS order.
SWITCH_KEYS = (
    "rebuild",
    "seq",
    "dedup",
    "nvech",
    "nvec",
    "vec",
    "vecids",
    "meta",
    "vecrw",
    "vecver",
)

#: Stale card ids one switch attempt names at most (the rest come with the next attempt).
SWITCH_STALE_MAX = 512
#: What a step answers when the pass moved before it landed (nothing was written).
LOST_RACE = -1


@dataclass(frozen=True, slots=True)
class Target:
    """The vector space a pass moves chats to."""

    model: str
    dimension: int


@dataclass(frozen=True, slots=True)
class ChatResult:
    """What one call did for one chat.

    ``state``: ``switched`` (the chat now uses the target), ``current`` (it
    already did), ``empty`` (no vector yet: its first write fixes the space),
    ``paused`` (budget spent; the next call resumes), ``refused`` (the
    embedder answered another model or failed; the next call retries).
    """

    chat_id: int
    state: str
    embedded: int = 0
    steps: int = 0


# --- pure decisions ----------------------------------------------------------------------------


def step_ids(cursor: int, seq: int, batch: int) -> list[int]:
    """The card ids a step visits: the next ``batch`` ids after ``cursor``, up to ``seq``."""
    return list(range(cursor + 1, min(seq, cursor + max(batch, 1)) + 1))


#: A row's ``vecmask`` byte when its fact is withdrawn (see :mod:`memory_worker.cards.store`).
WITHDRAWN_MASK = b"\x02"


def to_embed(cards: Sequence[Card], withdrawn: Collection[str] = ()) -> list[Card]:
    """The cards of a step that get a new vector: the live ones and the ``withdrawn`` ones
    (ids whose row is marked withdrawn); other retired ones stay unsearchable."""
    return [c for c in cards if c.live or c.id in withdrawn]


def step_key(chat_id: int, model: str, cards: Sequence[Card], job: str = "reembed") -> str:
    """The embedding call's idempotency key: these texts of these cards (a redo of a
    rewritten card is another call, never the farm's cached answer for its old text)."""
    digest = hashlib.blake2b(digest_size=12)
    for c in cards:
        digest.update(f"{c.id}:{c.dedup_hash};".encode())
    return f"{job}:{chat_id}:{model}:{digest.hexdigest()}"


def step_action(
    card: Mapping[str, str] | None,
    embedded_hash: str,
    blob_len: int,
    dim: int,
    old_dim: int,
    mask: bytes = b"",
) -> str:
    """The step script's decision for one card (its pure twin; ``mask``: its row's
    ``vecmask`` byte): 'skip' (gone, neither live nor withdrawn with a row, its text changed
    since it was read, a vector of the wrong size, or no old space), 'grow' (live without a
    row: it gets one) or 'write'."""
    if card is None or blob_len != dim or old_dim <= 0 or card.get("h") != embedded_hash:
        return "skip"
    if card.get("status") in ("active", "competing"):
        return "grow" if not card.get("row") else "write"
    return "write" if card.get("row") and mask == WITHDRAWN_MASK else "skip"


def switch_check(
    *,
    pass_model: str | None,
    model: str,
    cursor: int,
    seq: int,
    dedup: Mapping[str, str],
    embedded: Mapping[str, str],
) -> tuple[str, set[str]]:
    """The switch script's decision (its pure twin): 'gone' (no pass for ``model``),
    'behind' (ids past the cursor), 'stale' with the live cards (``dedup``: hash → id)
    lacking a row of their current text (``embedded``: id → hash), or 'switched'."""
    if pass_model != model:
        return "gone", set()
    if cursor < seq:
        return "behind", set()
    stale = {card_id for h, card_id in dedup.items() if embedded.get(card_id) != h}
    return ("stale", stale) if stale else ("switched", set())


def switch_answer(reply: Sequence[object]) -> tuple[str, list[str]]:
    """The switch script's reply as (state, stale card ids)."""
    state = as_text(reply[0]) if reply else "gone"
    rest = [as_text(x) for x in reply[1:]] if state == "stale" else []
    return state, rest


def progress_value(done: int, total: int) -> str:
    return f"{done}/{total}"


def parse_progress(raw: bytes | str) -> tuple[int, int]:
    """``done/total`` of the progress hash (malformed: 0/0)."""
    done, _, total = as_text(raw).partition("/")
    try:
        return int(done), int(total)
    except ValueError:
        return 0, 0


def route_target(routes: RoutesConfig, workflow: str, dimension: int) -> Target | None:
    """The space of a route's first eligible target (None: no route or no target)."""
    route = routes.get(workflow)
    if route is None or not route.eligible:
        return None
    return Target(model=route.eligible[0].model, dimension=dimension)


# --- the shell ---------------------------------------------------------------------------------


class Reembedder:
    """Re-embeds chats into one target space (see the module doc)."""

    def __init__(
        self,
        store: CardStore,
        embedder: Embedder,
        target: Target,
        settings: Settings,
        *,
        progress_key: str,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.embedder, self.target, self.settings = store, embedder, target, settings
        self.redis = store.redis
        self.progress_key = progress_key
        self._sleep, self.clock = sleep, clock
        # typed for the plain client; a cluster's runs the same (one chat: one slot)
        registrar = cast("Redis", self.redis)
        self._start = registrar.register_script(lua_text("memory_worker.cards", "reembed_start"))
        self._step = registrar.register_script(lua_text("memory_worker.cards", "reembed_step"))
        self._switch = registrar.register_script(lua_text("memory_worker.cards", "reembed_switch"))

    def _k(self, chat_id: int, *suffixes: str) -> list[str]:
        return [self.store.key(chat_id, s) for s in suffixes]

    async def chat(self, chat_id: int, *, until: float | None = None) -> ChatResult:
        """Move one chat to the target space, stopping (resumably) at ``until`` (monotonic)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hlen(self.store.key(chat_id, "dedup"))
        pipe.get(self.store.key(chat_id, "vecmask"))
        live, mask = await pipe.execute()
        total = int(live) + (mask or b"").count(WITHDRAWN_MASK)
        reply = await self._start(
            keys=self._k(chat_id, "rebuild", "meta", "nvec", "nvech"),
            args=[self.target.model, self.target.dimension, int(time.time() * 1000), total],
        )
        state, cursor = as_text(reply[0]), int(reply[1])
        if state in ("current", "empty"):
            await self.redis.hdel(self.progress_key, str(chat_id))  # type: ignore[misc]
            return ChatResult(chat_id, state)
        log.info("reembed.chat", chat_id=chat_id, state=state, model=self.target.model)
        embedded = steps = fruitless = 0
        while until is None or self.clock() < until:
            seq = int(await self.redis.get(self.store.key(chat_id, "seq")) or 0)
            ids = step_ids(cursor, seq, self.settings.reembed_batch_cards)
            if ids:
                done = await self._embed_step(chat_id, [str(i) for i in ids], cursor, ids[-1])
                if done is None:
                    return ChatResult(chat_id, "refused", embedded, steps)
                if done == LOST_RACE:  # another worker's step landed first: go on from its cursor
                    now_at = await self.redis.hget(self.store.key(chat_id, "rebuild"), "cursor")  # type: ignore[misc]
                    if now_at is None:  # that pass ended (switched, or restarted elsewhere)
                        return await self.chat(chat_id, until=until)
                    cursor = int(now_at)
                    continue
                embedded, steps, cursor = embedded + done, steps + 1, ids[-1]
                await self._report(chat_id, total)
                await self._sleep(self.settings.reembed_pause_seconds)
                continue
            outcome = await self._try_switch(chat_id)
            if outcome == "switched":
                await self.redis.hdel(self.progress_key, str(chat_id))  # type: ignore[misc]
                log.info("reembed.switched", chat_id=chat_id, model=self.target.model)
                return ChatResult(chat_id, "switched", embedded, steps)
            if outcome == "refused":
                return ChatResult(chat_id, "refused", embedded, steps)
            if outcome == "gone":  # another pass took over (another target): leave it
                return ChatResult(chat_id, "refused", embedded, steps)
            fruitless = fruitless + 1 if outcome == "redone:0" else 0
            if fruitless >= 3:  # named cards that no step can write: report, don't spin
                log.error("reembed.stuck", chat_id=chat_id)
                return ChatResult(chat_id, "refused", embedded, steps)
            steps += 1
        return ChatResult(chat_id, "paused", embedded, steps)

    async def _try_switch(self, chat_id: int) -> str:
        """One switch attempt: 'switched', 'behind' (ids to visit), 'redone:<n>', 'refused', 'gone'."""
        reply = await self._switch(
            keys=self._k(chat_id, *SWITCH_KEYS),
            args=[self.target.model, SWITCH_STALE_MAX],
        )
        state, stale = switch_answer(reply)
        if state != "stale":
            return state
        log.info("reembed.stale_cards", chat_id=chat_id, cards=len(stale))
        done = await self._embed_step(chat_id, stale, None, None)
        if done == LOST_RACE:
            return "gone"
        return "refused" if done is None else f"redone:{done}"

    async def _embed_step(
        self, chat_id: int, ids: Sequence[str], cursor: int | None, after: int | None
    ) -> int | None:
        """Embed the live cards among ``ids`` and write their new rows; how many were written.

        None: nothing embedded (the embedder failed or answered another model);
        :data:`LOST_RACE`: the pass moved meanwhile (another worker's step, or
        another target's pass) and nothing was written. ``cursor`` None is a
        redo (cards the switch named): the cursor stays.
        """
        cards = await self._to_embed(chat_id, ids)
        blobs: list[bytes] = []
        items: list[list[str]] = []
        if cards:
            try:
                vectors, _ = await embed_texts(
                    self.embedder,
                    [c.fact_text for c in cards],
                    key=step_key(chat_id, self.target.model, cards),
                    dimension=self.target.dimension,
                    deadline=None,
                    contacts=self.settings.redact_contacts,
                )
            except LLMError as exc:
                log.warning("reembed.embed_failed", chat_id=chat_id, error=exc.kind, code=exc.code)
                return None
            if vectors.model != self.target.model:
                log.warning(
                    "reembed.model_refused", chat_id=chat_id, answered=vectors.model or "unknown"
                )
                return None
            for card, vector in zip(cards, vectors, strict=True):
                if vector:  # empty: another model mid-answer; the switch names the card again
                    items.append([card.id, card.dedup_hash])
                    blobs.append(quantize(vector))
        reply = await self._step(
            keys=self._k(
                chat_id,
                "rebuild",
                "cards",
                "vec",
                "vecids",
                "vecmask",
                "vecver",
                "meta",
                "nvec",
                "nvech",
            ),
            args=[
                self.target.model,
                "" if cursor is None else str(cursor),
                "" if after is None else str(after),
                orjson.dumps(items),
                *blobs,
            ],
        )
        if as_text(reply[0]) == "stale":
            return LOST_RACE
        return int(reply[1])

    async def _to_embed(self, chat_id: int, ids: Sequence[str]) -> list[Card]:
        """The cards among ``ids`` a step embeds: live, or withdrawn (their rows' mask bytes
        read, one ``GETRANGE`` each, only for retired cards with a row)."""
        raws = [r for r in await self.store.card_reader(chat_id)(ids) if r is not None]
        cards = [card_from_json(chat_id, raw) for raw in raws]
        rows = [orjson.loads(raw).get("row") for raw in raws]
        retired = [(c.id, int(r)) for c, r in zip(cards, rows, strict=True) if not c.live and r]
        withdrawn: set[str] = set()
        if retired:
            pipe = self.redis.pipeline(transaction=False)
            for _, row in retired:
                pipe.getrange(self.store.key(chat_id, "vecmask"), row, row)
            masks = await pipe.execute()
            withdrawn = {i for (i, _), m in zip(retired, masks, strict=True) if m == WITHDRAWN_MASK}
        return to_embed(cards, withdrawn)

    async def _report(self, chat_id: int, total: int) -> None:
        done = await self.redis.hget(self.store.key(chat_id, "rebuild"), "done")  # type: ignore[misc]
        await self.redis.hset(  # type: ignore[misc]
            self.progress_key, str(chat_id), progress_value(int(done or 0), total)
        )


# --- the vectors remembered cards wait for ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FillResult:
    """What one :func:`fill_waiting` call did: cards given their vector, list entries that
    no longer waited, chats it visited; ``stopped``: the embedder failed (the next call
    tries again)."""

    filled: int = 0
    dropped: int = 0
    chats: int = 0
    stopped: bool = False


async def fill_waiting(
    store: CardStore,
    embedder: Embedder,
    target: Target,
    settings: Settings,
    *,
    now: datetime,
    until: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> FillResult:
    """Give remembered cards waiting for a vector (:mod:`memory_worker.cards.remember`) their
    vector, ``MEMORY_REEMBED_BATCH_CARDS`` a step, until ``until`` (monotonic).

    Chats whose vectors are of another space than ``target`` are left to the model switch
    (:class:`Reembedder`): it gives their cards rows in the new space, and the next call
    clears their marks. An embedder failure stops the call (nothing written for that step).
    """
    from memory_worker.cards.edits import fill_vectors, waiting_cards, waiting_counts
    from memory_worker.cards.remember import FillItem, to_fill

    filled = dropped = chats = 0
    for chat_id in await waiting_counts(store, await store.chat_ids()):
        if until is not None and clock() >= until:
            break
        space = await store.vector_space(chat_id)
        if space is not None and (
            (space.model is not None and space.model != target.model)
            or space.dimension != target.dimension
        ):
            continue  # the model switch first
        chats += 1
        listed = await waiting_cards(store, chat_id, settings.reembed_batch_cards)
        cards = to_fill(c for _, c in listed if c is not None)
        vectors: dict[str, bytes] = {}
        if cards:
            try:
                answer, _ = await embed_texts(
                    embedder,
                    [c.fact_text for c in cards],
                    key=step_key(chat_id, target.model, cards, job="fill"),
                    dimension=target.dimension,
                    deadline=None,
                    contacts=settings.redact_contacts,
                )
            except LLMError as exc:
                log.warning("reembed.fill_failed", chat_id=chat_id, error=exc.kind, code=exc.code)
                return FillResult(filled, dropped, chats, stopped=True)
            if answer.model is not None and answer.model != target.model:
                log.warning("reembed.fill_model_refused", chat_id=chat_id)
                return FillResult(filled, dropped, chats, stopped=True)
            vectors = {c.id: quantize(v) for c, v in zip(cards, answer, strict=True) if v}
        hashes = {c.id: c.dedup_hash for c in cards}
        items = [
            FillItem(card_id, hashes.get(card_id, ""), vectors.get(card_id))
            for card_id, _ in listed
        ]
        done = await fill_vectors(store, chat_id, items, model=target.model, now=now)
        filled, dropped = filled + done.filled, dropped + done.dropped
        if done.filled or done.dropped:
            log.info("reembed.filled", chat_id=chat_id, filled=done.filled, dropped=done.dropped)
    return FillResult(filled, dropped, chats)


async def chats_to_switch(store: CardStore, target: Target) -> list[int]:
    """Chats whose vectors are of another space than ``target`` (chats without any: none)."""
    chat_ids = await store.chat_ids()
    pipe = store.redis.pipeline(transaction=False)
    for chat_id in chat_ids:
        pipe.hmget(store.key(chat_id, "meta"), ["model", "dim"])
    found: list[int] = []
    for chat_id, (model, dim) in zip(chat_ids, await pipe.execute(), strict=True):
        if (
            dim is not None
            and int(dim)
            and (as_text(model or b""), int(dim))
            != (
                target.model,
                target.dimension,
            )
        ):
            found.append(chat_id)
    return found


async def reembed_pass(reembedder: Reembedder, *, budget_seconds: float) -> list[ChatResult]:
    """Work through the chats of another space within ``budget_seconds`` (resumed next call)."""
    until = reembedder.clock() + budget_seconds
    results: list[ChatResult] = []
    for chat_id in await chats_to_switch(reembedder.store, reembedder.target):
        if reembedder.clock() >= until:
            break
        result = await reembedder.chat(chat_id, until=until)
        results.append(result)
        if result.state == "refused":
            break  # the embedder is not serving the target: the next call tries again
    return results
