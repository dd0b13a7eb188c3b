"""The card store's side of forgetting (§14): a user's memory or a whole chat's leaves.

Reads are cursor scans (``HSCAN``/``ZRANGE`` pages), so planning never blocks the
server for long; the removal of a user's memory is ``lua/forget.lua``, one chunk
of ``MEMORY_FORGET_CHUNK_ITEMS`` cards (with their links, episodes and author
entries) a call, each call self-contained (indexes, dedup, the compacted vector
rows); the zeroed rows are then cut off the packed strings (``lua/forget_trim.lua``,
a compare-and-set). A chat's memory goes as ``UNLINK`` of its keys, a chunk a script
call (``lua/forget_unlink.lua``; the server frees big values in the background).
Every script names all its keys in KEYS, all of one chat (one hash tag, one slot), so
all of this works on a cluster too; the key scan visits every primary there. Kept across a chat forget:
the card id counter (``seq``), ``vecver``/``vecrw`` (bumped, so every reader's
cached matrix is rebuilt), the forget epoch (``forget``) and the forgets in progress
(``forgetting``: token → scope and start, so an export never reads a half-forgotten chat)
— numbers and ids, no content.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import orjson

from llm_client import as_text, lua_text
from memory_worker.keys import CHAT_SCRIPT_KEYS, Keys
from memory_worker.privacy.forget import (
    ForgetCounts,
    StoredCard,
    chunks,
    doomed_author_fields,
    doomed_cards,
    doomed_episodes,
    doomed_links,
    parse_authors,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from memory_worker.storage.connections import CardsRedis

_SCAN = 500
#: Chat keys a chat forget keeps (numbers and ids only: see the module doc).
KEPT_SUFFIXES = frozenset({"seq", "vecver", "vecrw", "forget", "forgetting"})
#: Times cards updated under the plan are planned again.
_REPLANS = 5
#: Life of the kept rows staged for the trim's swap (normally milliseconds; a copy left by a
#: process that died between the two calls must not outlive a later forget of those rows).
_STAGED_MS = 60_000


@dataclass(frozen=True)
class TrimCut:
    """The packed strings' kept bytes, read under ``vecver`` = ``version``."""

    version: str
    count: int
    rows: bytes
    mask: bytes


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

    def __init__(self, redis: CardsRedis, keys: Keys, *, chunk: int) -> None:
        self.redis = redis
        self.keys = keys
        self.chunk = chunk
        # typed for the plain client; a cluster's runs the same (EVALSHA routed by the keys'
        # one slot, SCRIPT LOAD on NOSCRIPT), as in memory_worker.cards.store
        registrar = cast("Redis", redis)
        self._forget = registrar.register_script(lua_text(__package__, "forget"))
        self._epoch = registrar.register_script(lua_text(__package__, "forget_epoch"))
        self._trim = registrar.register_script(lua_text(__package__, "forget_trim"))
        self._unlink_chunk = registrar.register_script(lua_text(__package__, "forget_unlink"))

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
        between (the next forget trims). Python reads and cuts the bytes, ``forget_trim.lua``
        swaps them in only if ``vecver`` is unchanged: copying megabytes inside a script
        blocks the server ~2.5 ms a MB (and a cluster has no ``WATCH``/``MULTI`` pipeline)."""
        cut = await self.read_trim(chat_id)
        return cut is None or await self.set_trim(chat_id, cut)

    async def read_trim(self, chat_id: int) -> TrimCut | None:
        """The kept bytes of the packed strings, or None when nothing is to cut."""
        k = self.key
        version = as_text(await self.redis.get(k(chat_id, "vecver")) or b"0")
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.llen(k(chat_id, "vecids"))
            pipe.hget(k(chat_id, "meta"), "dim")
            pipe.strlen(k(chat_id, "vec"))
            count, dim, size = await pipe.execute()
        count, dim = int(count), int(dim or 0)
        if dim == 0 or count == 0 or size <= count * dim:
            return None
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.getrange(k(chat_id, "vec"), 0, count * dim - 1)
            pipe.getrange(k(chat_id, "vecmask"), 0, count - 1)
            rows, mask = await pipe.execute()
        return TrimCut(version=version, count=count, rows=rows, mask=mask)

    async def set_trim(self, chat_id: int, cut: TrimCut) -> bool:
        """Store ``cut`` if the rows did not change since it was read (compare-and-set).

        The kept rows are staged under ``vecnext:<token>`` by a plain ``SET`` (its bytes arrive with
        the command: nothing blocks on them) and swapped in by ``forget_trim.lua`` with a
        ``RENAME``; a copy left by a process that died in between expires."""
        k = self.key
        staged = k(chat_id, f"vecnext:{secrets.token_hex(8)}")  # this call's own: never swapped
        await self.redis.set(staged, cut.rows, px=_STAGED_MS)
        keys = [k(chat_id, s) for s in ("vec", "vecmask", "vecver", "vecrw", "vecids")]
        return bool(await self._trim(keys=[*keys, staged], args=[cut.version, cut.count, cut.mask]))

    async def _apply(self, chat_id: int, part: UserPlan) -> tuple[ForgetCounts, list[str]]:
        k = self.key
        keys = [k(chat_id, s) for s in CHAT_SCRIPT_KEYS]  # forget.lua names them
        keys.append(k(chat_id, "vecwait"))  # remembered cards waiting for a vector
        cards: list[list[str]] = []
        for card in part.cards:
            keys.append(k(chat_id, f"active:{card.sk}"))
            cards.append([card.id, card.updated, str(len(keys)), card.sk])
        episodes: list[list[str]] = []
        for run_id in part.episodes:
            keys.append(k(chat_id, f"episode:{run_id}"))
            episodes.append([run_id, str(len(keys))])
        plan = {
            "cards": cards,
            "links": part.links,
            "episodes": episodes,
            "authors": part.authors,
            "vecwait": str(len(CHAT_SCRIPT_KEYS) + 1),
        }
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

    async def _unlink(self, chat_id: int, part: Sequence[str]) -> int:
        """Unlink ``part`` (one chat's keys) and bump the vector counters; how many existed."""
        keys = [self.key(chat_id, "vecver"), self.key(chat_id, "vecrw"), *part]
        return int(await self._unlink_chunk(keys=keys, args=[]))

    async def begin(self, chat_id: int, scope: str, now_ms: int) -> str:
        """Mark a forget of ``scope`` (``chat`` or ``user:<id>``) in progress (an export of
        the chat refuses meanwhile); the token :meth:`end` takes."""
        token = f"{scope}|{now_ms}|{secrets.token_hex(6)}"
        await self.redis.hset(self.key(chat_id, "forgetting"), token, str(now_ms))  # type: ignore[misc]
        return token

    async def end(self, chat_id: int, token: str) -> None:
        """The forget of ``token`` completed: its mark goes, with the marks of earlier
        forgets of the same scope that never completed (this one did their work)."""
        key = self.key(chat_id, "forgetting")
        scope, started = token.split("|")[0], int(token.split("|")[1])
        marks = [as_text(m) for m in await self.redis.hkeys(key)]  # type: ignore[misc]
        done = [m for m in marks if m.split("|")[0] == scope and int(m.split("|")[1]) <= started]
        await self.redis.hdel(key, *sorted({*done, token}))  # type: ignore[misc]

    async def raise_epoch(self, chat_id: int, epoch: int) -> int:
        """The chat's card-side forget epoch raised to ``epoch``: older writes are refused."""
        return int(await self._epoch(keys=[self.key(chat_id, "forget")], args=[epoch]))


def _parts(plan: UserPlan, size: int) -> list[UserPlan]:
    """``plan`` split into chunks of at most ``size`` items of each kind."""
    groups = [
        list(chunks(items, size)) for items in (plan.cards, plan.links, plan.episodes, plan.authors)
    ]
    count = max((len(g) for g in groups), default=0)
    return [
        UserPlan(
            *(list(g[i]) if i < len(g) else [] for g in groups)  # type: ignore[arg-type]
        )
        for i in range(count)
    ]
