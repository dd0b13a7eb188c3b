"""The card store's side of forgetting (§14): a user's memory or a whole chat's leaves.

Reads are cursor scans (``HSCAN``/``ZRANGE`` pages), so planning never blocks the
server for long; the removal of a user's memory is ``lua/forget.lua``, one chunk
of ``MEMORY_FORGET_CHUNK_ITEMS`` cards (with their links, episodes and author
entries) a call, each call self-contained (indexes, dedup, the compacted vector
rows). A chat's memory goes as ``UNLINK`` of its keys, a chunk a transaction
(the server frees big values in the background). Kept across a chat forget:
the card id counter (``seq``), ``vecver``/``vecrw`` (bumped, so every reader's
cached matrix is rebuilt) and the forget epoch (``forget``) — numbers, no content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

import orjson
from redis.exceptions import WatchError

from llm_client.redis_text import as_text
from memory_worker.forget import (
    ForgetCounts,
    StoredCard,
    chunks,
    doomed_author_fields,
    doomed_cards,
    doomed_episodes,
    doomed_links,
    parse_authors,
)
from memory_worker.keys import Keys

if TYPE_CHECKING:
    from redis.asyncio import Redis

_SCAN = 500
#: Chat keys a chat forget keeps (numbers only: see the module doc).
KEPT_SUFFIXES = frozenset({"seq", "vecver", "vecrw", "forget"})
#: Times cards updated under the plan are planned again.
_REPLANS = 5


@cache
def _lua(name: str) -> str:
    return resources.files(__package__).joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")


@dataclass
class UserPlan:
    """What forgetting one user removes from a chat's memory."""

    cards: list[StoredCard] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    episodes: list[str] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)

    @property
    def counts(self) -> ForgetCounts:
        return ForgetCounts(
            cards=len(self.cards),
            vectors=sum(1 for c in self.cards if c.has_row),
            episodes=len(self.episodes),
            links=len(self.links),
        )


class CardForget:
    """Plans and applies the card side of one forget."""

    def __init__(self, redis: Redis, keys: Keys, *, chunk: int) -> None:
        self.redis = redis
        self.keys = keys
        self.chunk = chunk
        self._forget = redis.register_script(_lua("forget"))
        self._epoch = redis.register_script(_lua("forget_epoch"))

    def key(self, chat_id: int, suffix: str) -> str:
        return self.keys.chat(chat_id, suffix)

    async def _hash(self, key: str) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        async for name, value in self.redis.hscan_iter(key, count=_SCAN):
            out[as_text(name)] = value
        return out

    async def plan_user(self, chat_id: int, user_id: int) -> UserPlan:
        cards = [
            StoredCard.from_json(v) for v in (await self._hash(self.key(chat_id, "cards"))).values()
        ]
        raw_authors = {
            k: as_text(v) for k, v in (await self._hash(self.key(chat_id, "authors"))).items()
        }
        messages, runs = parse_authors(raw_authors)
        gone = doomed_cards(cards, user_id, messages)
        link_fields = list(await self._hash(self.key(chat_id, "links")))
        episode_runs = [
            as_text(r) for r in await self.redis.zrange(self.key(chat_id, "episodes"), 0, -1)
        ]
        return UserPlan(
            cards=gone,
            links=doomed_links(link_fields, [c.id for c in gone]),
            episodes=doomed_episodes(episode_runs, runs, user_id),
            authors=doomed_author_fields(messages, runs, user_id),
        )

    async def forget_user(self, chat_id: int, user_id: int, plan: UserPlan) -> ForgetCounts:
        """Apply ``plan`` chunk by chunk (cards updated meanwhile are planned again)."""
        total = ForgetCounts()
        for _ in range(_REPLANS):
            raced: list[str] = []
            for part in _parts(plan, self.chunk):
                counts, again = await self._apply(chat_id, part)
                total += counts
                raced += again
            if not raced:
                break
            fresh = await self.plan_user(chat_id, user_id)
            plan = UserPlan(cards=[c for c in fresh.cards if c.id in set(raced)])
        if total.vectors:
            await self.trim_vectors(chat_id)
        return total

    async def trim_vectors(self, chat_id: int) -> bool:
        """Cut the zeroed rows off the end of the packed strings; False when a write came
        between (the next forget trims). A plain ``SET`` of the kept bytes under ``WATCH``:
        inside a script, copying megabytes would block the server for tens of ms."""
        k = self.key
        watched = [k(chat_id, "vecver"), k(chat_id, "vecids"), k(chat_id, "meta")]
        async with self.redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(*watched)
                count = await pipe.llen(k(chat_id, "vecids"))  # type: ignore[misc]
                dim = int(await pipe.hget(k(chat_id, "meta"), "dim") or 0)  # type: ignore[misc]
                size = await pipe.strlen(k(chat_id, "vec"))
                if dim == 0 or count == 0 or size <= count * dim:
                    return True
                rows = await pipe.getrange(k(chat_id, "vec"), 0, count * dim - 1)
                mask = await pipe.getrange(k(chat_id, "vecmask"), 0, count - 1)
                pipe.multi()  # type: ignore[no-untyped-call]
                pipe.set(k(chat_id, "vec"), rows)
                pipe.set(k(chat_id, "vecmask"), mask)
                pipe.incr(k(chat_id, "vecver"))
                pipe.incr(k(chat_id, "vecrw"))
                await pipe.execute()
            except WatchError:
                return False
        return True

    async def _apply(self, chat_id: int, part: UserPlan) -> tuple[ForgetCounts, list[str]]:
        k = self.key
        keys = [k(chat_id, s) for s in ("cards", "dedup", "expiry", "links", "vec", "vecids",
                                         "vecmask", "vecver", "vecrw", "meta", "episodes",
                                         "authors", "scopes")]  # fmt: skip
        cards: list[list[str]] = []
        for card in part.cards:
            keys.append(k(chat_id, f"active:{card.sk}"))
            cards.append([card.id, card.updated, str(len(keys)), card.sk])
        episodes: list[list[str]] = []
        for run_id in part.episodes:
            keys.append(k(chat_id, f"episode:{run_id}"))
            episodes.append([run_id, str(len(keys))])
        plan = {"cards": cards, "links": part.links, "episodes": episodes, "authors": part.authors}
        raw = await self._forget(keys=keys, args=[orjson.dumps(plan)])
        data = orjson.loads(raw)
        counts = ForgetCounts(
            cards=int(data["cards"]),
            vectors=int(data["vectors"]),
            episodes=int(data["episodes"]),
            links=int(data["links"]),
        )
        return counts, [str(r) for r in data.get("raced") or []]

    # --- a whole chat --------------------------------------------------------------------------

    async def chat_keys(self, chat_id: int) -> list[str]:
        """Every key of the chat's memory (a cursor scan by its hash tag)."""
        tag = self.keys.chat_tag(chat_id)
        pattern = "".join("\\" + ch if ch in "*?[]\\" else ch for ch in tag) + "*"
        return sorted({as_text(k) async for k in self.redis.scan_iter(match=pattern, count=1000)})

    async def chat_counts(self, chat_id: int) -> ForgetCounts:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hlen(self.key(chat_id, "cards"))
            pipe.llen(self.key(chat_id, "vecids"))
            pipe.zcard(self.key(chat_id, "episodes"))
            pipe.hlen(self.key(chat_id, "links"))
            cards, vectors, episodes, links = await pipe.execute()
        return ForgetCounts(cards=cards, vectors=vectors, episodes=episodes, links=links)

    async def forget_chat(self, chat_id: int) -> None:
        """Unlink every key of the chat's memory but the numbers :data:`KEPT_SUFFIXES` names."""
        base = self.key(chat_id, "")
        doomed = [k for k in await self.chat_keys(chat_id) if k[len(base) :] not in KEPT_SUFFIXES]
        for part in chunks(doomed, self.chunk):
            await self._unlink(chat_id, part)
        await self._unlink(chat_id, [])
        await self.redis.srem(self.keys.chats, str(chat_id))  # type: ignore[misc]

    async def _unlink(self, chat_id: int, part: Sequence[str]) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            if part:
                pipe.unlink(*part)
            pipe.incr(self.key(chat_id, "vecver"))
            pipe.incr(self.key(chat_id, "vecrw"))
            await pipe.execute()

    async def raise_epoch(self, chat_id: int, epoch: int) -> int:
        """The chat's card-side forget epoch raised to ``epoch``: older writes are refused."""
        return int(await self._epoch(keys=[self.key(chat_id, "forget")], args=[epoch]))


def _parts(plan: UserPlan, size: int) -> list[UserPlan]:
    """``plan`` split into chunks of at most ``size`` items of each kind."""
    groups = [list(chunks(items, size)) for items in
              (plan.cards, plan.links, plan.episodes, plan.authors)]  # fmt: skip
    count = max((len(g) for g in groups), default=0)
    return [
        UserPlan(
            *(list(g[i]) if i < len(g) else [] for g in groups)  # type: ignore[arg-type]
        )
        for i in range(count)
    ]
