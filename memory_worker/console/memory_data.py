"""The console's memory page as plain data: a chat's cards with their superseded history, now
or as the memory stood at a past moment.

The only console data that reads card text; the console calls it only when
``MEMORY_CONSOLE_SHOW_MEMORY`` is on. :func:`superseded_chains` and
:func:`card_matches` are pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from redis.asyncio import Redis

from llm_client import as_text
from memory_worker.cards import Card, CardStore, Episode
from memory_worker.cards.history import live_as_of
from memory_worker.console.runs_data import RunFilter, RunRow, runs_page
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from memory_worker.storage.connections import CardsRedis


@dataclass(frozen=True, slots=True)
class CardEntry:
    card: Card
    #: Older facts this card replaced, newest first (the superseded history).
    history: list[Card] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Memory:
    chat_id: int
    scopes: dict[str, list[CardEntry]]
    inactive: list[Card]
    episodes: list[Episode]
    query: str
    total_cards: int
    runs: list[RunRow]
    #: The moment the page shows the memory as it stood at (None: now).
    as_of: datetime | None = None


def card_matches(card: Card, query: str) -> bool:
    """Case-insensitive text search over a card's fact, subject, predicate and object."""
    if not query:
        return True
    needle = query.casefold()
    return any(
        needle in part.casefold()
        for part in (card.fact_text, card.subject, card.predicate, card.object)
    )


def superseded_chains(cards: Iterable[Card]) -> dict[str, list[Card]]:
    """Card id → the cards it superseded, transitively, newest replacement first."""
    by_replacement: dict[str, list[Card]] = {}
    for card in cards:
        if card.superseded_by:
            by_replacement.setdefault(card.superseded_by, []).append(card)
    chains: dict[str, list[Card]] = {}

    def walk(card_id: str, seen: set[str]) -> list[Card]:
        out: list[Card] = []
        for older in sorted(
            by_replacement.get(card_id, []), key=lambda c: c.valid_from, reverse=True
        ):
            if older.id in seen:
                continue
            seen.add(older.id)
            out.append(older)
            out.extend(walk(older.id, seen))
        return out

    for card_id in by_replacement:
        chains[card_id] = walk(card_id, {card_id})
    return chains


def _scope_order(sk: str) -> tuple[int, str]:
    return ({"chat": 0}.get(sk.split(":")[0], 1 if sk.startswith("thread") else 2), sk)


async def memory_data(
    redis: Redis,
    settings: Settings,
    chat_id: int,
    *,
    query: str = "",
    episodes: int = 20,
    now: datetime | None = None,
    card_store: CardStore,
    as_of: datetime | None = None,
) -> Memory:
    """A chat's cards (from ``card_store``) by scope with their superseded history, its
    episodes and recent runs (from ``redis``). ``as_of``: the cards shown live are those
    the memory held at that moment (:func:`~memory_worker.cards.history.live_as_of`), and
    none is listed as not visible."""
    store = card_store
    cards = await store.all_cards(chat_id)
    moment = now or datetime.now(UTC)
    chains = superseded_chains(cards)
    scopes: dict[str, list[CardEntry]] = {}
    inactive: list[Card] = []
    for card in sorted(cards, key=lambda c: (c.observed_at, int(c.id)), reverse=True):
        hit = card_matches(card, query) or any(
            card_matches(old, query) for old in chains.get(card.id, [])
        )
        if not hit:
            continue
        if live_as_of(card, as_of) if as_of is not None else card.visible_at(moment):
            scopes.setdefault(card.scope_key, []).append(CardEntry(card, chains.get(card.id, [])))
        elif not card.superseded_by and as_of is None:
            inactive.append(card)
    ordered = {sk: scopes[sk] for sk in sorted(scopes, key=_scope_order)}
    found_episodes = await store.episodes(chat_id, limit=episodes)
    if query:
        needle = query.casefold()
        found_episodes = [
            e
            for e in found_episodes
            if needle in e.summary.casefold() or any(needle in t.casefold() for t in e.topics)
        ]
    runs = await runs_page(redis, settings, RunFilter(chat_id=chat_id), page_size=10, budget=500)
    return Memory(
        chat_id=chat_id,
        scopes=ordered,
        inactive=inactive,
        episodes=found_episodes,
        query=query,
        total_cards=len(cards),
        runs=runs.rows,
        as_of=as_of,
    )


def parse_as_of(text: str) -> datetime | None:
    """The page's ``as_of`` field: an ISO 8601 time, UTC when it names no zone (the console
    shows UTC); None when blank; ValueError when it is not a time."""
    text = text.strip()
    if not text:
        return None
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def chat_list(redis: CardsRedis, settings: Settings, limit: int = 100) -> list[int]:
    """Up to ``limit`` chats that have memory (one SSCAN page, sorted)."""
    keys = Keys(settings.key_prefix)
    _, members = await redis.sscan(keys.chats, 0, count=limit)
    return sorted(int(as_text(m)) for m in members)[:limit]
