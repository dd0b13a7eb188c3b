"""Export and import (§13), the Redis shell: a chat's memory read whole, and written back.

**Reading** (:func:`read_snapshot`) is one pipeline of the chat's keys (cards, vectors,
episodes, links, authors) between two reads of its markers: the forget epoch, ``vecver``
and the forgets in progress (``forgetting``, :meth:`CardForget.begin
<memory_worker.cards.forget.CardForget.begin>`). A forget in progress refuses the export
(:class:`~memory_worker.errors.ForgetPending`); markers that moved during the read (a forget
began, vectors changed) read again, ``MEMORY_EXPORT_READ_ROUNDS`` times at most. So an
export is the chat's memory at one moment: from before a forget began (with what it then
removed) or after it completed — never read during one, never a half-forgotten mix.

**Writing** (:func:`write_snapshot`) is ``lua/import.lua`` calls in chunks (every key in
KEYS, one hash tag: standalone and cluster alike), planned by
:mod:`memory_worker.cards.import_plan` from what the chat holds — beside the keys it checks,
its withdrawn facts near the file's live cards and their siblings
(:func:`memory_worker.cards.withdrawals.gather`), so a card stating a withdrawn fact by
meaning is left out as a run's would be. A chunk that finds the chat's withdrawn marks
moved since the plan (a retraction landed) writes nothing, and the rest is planned again,
``MEMORY_IMPORT_REPLANS`` times at most.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from llm_client import as_text
from memory_worker.cards import withdrawals
from memory_worker.cards.codec import card_from_json, episode_from_hash, lua_json, to_ms
from memory_worker.cards.export_format import Snapshot
from memory_worker.cards.history import decode_events
from memory_worker.cards.import_plan import ChatView, ImportPlan, import_candidates, plan_import
from memory_worker.cards.model import LIVE_STATUSES, Card, Link
from memory_worker.errors import (
    ChatKeyCorrupt,
    ExportPredatesForget,
    ForgetPending,
    ImportConflict,
    StoreError,
)
from memory_worker.privacy.forget import parse_authors

if TYPE_CHECKING:
    from datetime import datetime

    from memory_worker.cards.store import CardStore


async def _markers(store: CardStore, chat_id: int) -> tuple[int, bytes, bytes]:
    pipe = store.redis.pipeline(transaction=False)
    pipe.hlen(store.key(chat_id, "forgetting"))
    pipe.get(store.key(chat_id, "forget"))
    pipe.get(store.key(chat_id, "vecver"))
    pending, epoch, version = await pipe.execute()
    return int(pending), epoch or b"0", version or b"0"


async def read_snapshot(store: CardStore, chat_id: int, *, rounds: int) -> Snapshot:
    """The chat's whole memory at one moment (see the module doc)."""
    for _ in range(rounds):
        before = await _markers(store, chat_id)
        if before[0]:
            raise ForgetPending(chat_id)
        snap = await _read(store, chat_id)
        after = await _markers(store, chat_id)
        if after[0]:
            raise ForgetPending(chat_id)
        if after == before:
            snap.forget_epoch = int(after[1])
            return snap
    raise StoreError(f"chat {chat_id}'s memory kept changing while it was read; try again")


async def _read(store: CardStore, chat_id: int) -> Snapshot:
    k = store.key
    pipe = store.redis.pipeline(transaction=False)
    pipe.hgetall(k(chat_id, "cards"))
    pipe.hget(k(chat_id, "meta"), "dim")
    pipe.hget(k(chat_id, "meta"), "model")
    pipe.get(k(chat_id, "vec"))
    pipe.hgetall(k(chat_id, "links"))
    pipe.hgetall(k(chat_id, "authors"))
    pipe.zrange(k(chat_id, "episodes"), 0, -1)
    pipe.hgetall(k(chat_id, "history"))
    raw_cards, dim, model, vec, raw_links, raw_authors, runs, raw_history = await pipe.execute()
    dim = int(dim or 0)
    snap = Snapshot(chat_id=chat_id, model=as_text(model) if model else None, dimension=dim)
    for raw in raw_cards.values():
        card = card_from_json(chat_id, raw)
        row = orjson.loads(raw).get("row")
        if row and dim:
            blob = (vec or b"")[int(row) * dim : (int(row) + 1) * dim]
            if len(blob) == dim:
                snap.card_vectors[card.id] = blob
        snap.cards.append(card.model_copy(update={"has_embedding": card.id in snap.card_vectors}))
    ids = {c.id for c in snap.cards}
    for card_id, raw in raw_history.items():
        events, _ = decode_events(raw)  # a line not an event is not exported
        if events and as_text(card_id) in ids:
            snap.histories[as_text(card_id)] = events
    for name, value in raw_links.items():
        source, relation, target = as_text(name).split("|")
        if source in ids and target in ids:  # a link to a forgotten card is not exported
            snap.links.append(
                Link(
                    from_card_id=source,
                    relation=relation,
                    to_card_id=target,
                    confidence=float(value),
                )
            )
    messages, run_authors = parse_authors({as_text(f): as_text(v) for f, v in raw_authors.items()})
    snap.authors = messages
    snap.runs = {r: sorted(users) for r, users in run_authors.items()}
    pipe = store.redis.pipeline(transaction=False)
    for run in runs:
        pipe.hgetall(k(chat_id, f"episode:{as_text(run)}"))
    for raw in await pipe.execute():
        if raw:
            ep = episode_from_hash(chat_id, raw)
            snap.episodes.append(ep)
            if b"emb" in raw:
                snap.episode_vectors[ep.run_id] = raw[b"emb"]
    return snap


#: The type of each key the plan reads (another: refused as corrupt, before any read).
_READ_TYPES = {"cards": "hash", "dedup": "hash", "retracted": "hash", "meta": "hash"}


async def _check_types(store: CardStore, chat_id: int) -> int:
    """The chat's forget epoch, once every key the plan reads holds its type
    (:class:`ChatKeyCorrupt` names the first that does not)."""
    pipe = store.redis.pipeline(transaction=False)
    for suffix in _READ_TYPES:
        pipe.type(store.key(chat_id, suffix))
    pipe.get(store.key(chat_id, "forget"))
    *types, epoch = await pipe.execute()
    for (suffix, want), have in zip(_READ_TYPES.items(), types, strict=True):
        if as_text(have) not in ("none", want):
            raise ChatKeyCorrupt(chat_id, suffix)
    text = as_text(epoch or b"0")
    if not text.isascii() or not text.isdigit():
        raise ChatKeyCorrupt(chat_id, "forget")
    return int(text)


async def _chat_view(store: CardStore, snap: Snapshot, *, chunk: int) -> ChatView:
    """What the plan reads of the chat: its cards under the file's ids, the holders of the
    file's live facts, its vector space, its retraction record for the file's facts and its
    forget epoch (each read in commands of ``chunk`` fields: none blocks the server long)."""
    chat_id = snap.chat_id
    epoch = await _check_types(store, chat_id)
    ids = [c.id for c in snap.cards]
    existing: dict[str, Card] = {}
    for i in range(0, len(ids), chunk):
        existing.update((c.id, c) for c in await store.get_cards(chat_id, ids[i : i + chunk]))
    hashes = sorted({c.dedup_hash for c in snap.cards})
    live = {c.dedup_hash for c in snap.cards if c.status in LIVE_STATUSES}
    holders: dict[str, str] = {}
    retractions: dict[str, str] = {}
    for i in range(0, len(hashes), chunk):
        part = hashes[i : i + chunk]
        pipe = store.redis.pipeline(transaction=False)
        pipe.hmget(store.key(chat_id, "dedup"), part)
        pipe.hmget(store.key(chat_id, "retracted"), part)
        held, withdrawn = await pipe.execute()
        holders.update((h, as_text(v)) for h, v in zip(part, held, strict=True) if v and h in live)
        retractions.update((h, as_text(v)) for h, v in zip(part, withdrawn, strict=True) if v)
    meaning = await _meaning_reads(store, snap)
    return ChatView(
        existing=existing,
        holders=holders,
        space=await store.vector_space(chat_id),
        retractions=retractions,
        epoch=epoch,
        withdrawn=meaning.facts if meaning else (),
        siblings=meaning.siblings if meaning else (),
        marks=meaning.marks if meaning else None,
    )


async def _meaning_reads(store: CardStore, snap: Snapshot) -> withdrawals.Gathered | None:
    """The chat's withdrawn facts near the file's live cards and their siblings, and the
    withdrawn marks seen (None: the chat's vectors are of another space — the plan refuses
    such a file when it has vectors —, or the file has none: the hash alone decides)."""
    matrix = await store.chat_vectors(snap.chat_id)
    if not snap.card_vectors or not withdrawals.comparable(matrix, snap.model):
        return None
    candidates = import_candidates(snap.cards, snap.card_vectors)
    read = store.card_reader(snap.chat_id)
    return await withdrawals.gather(matrix, read, candidates, store.thresholds)


async def write_snapshot(
    store: CardStore,
    snap: Snapshot,
    *,
    now: datetime,
    chats_key: str,
    chunk_items: int,
    replans: int,
    actor: str = "",
) -> dict[str, int]:
    """Import ``snap`` into its chat, a chunk of ``chunk_items`` a script call (see
    :mod:`memory_worker.cards.import_plan`: nothing written on a refusal found before the
    first call; whole chunks, resumable by importing again, after a crash or a race); the
    chat joins the maintenance sweeps' set (``chats_key``) first. A withdrawal landing
    during the import plans the rest again, ``replans`` times at most (then
    :class:`StoreError`; importing again resumes)."""
    chat_id = snap.chat_id
    earlier = {"cards": 0, "vectors": 0, "refused": 0, "chunks": 0}  # of passes cut short
    for _ in range(replans + 1):
        view = await _chat_view(store, snap, chunk=chunk_items)
        plan = plan_import(snap, view, chunk_items=chunk_items, thresholds=store.thresholds)
        if plan.new_cards:
            await store.redis.sadd(chats_key, str(chat_id))  # type: ignore[misc]
        done = await _write_chunks(store, plan, now, actor)
        if "withdrawn" not in done:
            for name, value in earlier.items():
                done[name] += value
            done["present"] -= earlier["cards"]  # this pass found them written
            return done
        for name in earlier:
            earlier[name] += done[name]
    raise StoreError(f"chat {chat_id}: retractions kept landing during the import; import again")


async def _write_chunks(
    store: CardStore, plan: ImportPlan, now: datetime, actor: str
) -> dict[str, int]:
    """The plan's chunks in order, each card's ``imported`` history event by ``actor``; stops
    at one that finds a withdrawal since the plan (``withdrawn`` in the answer)."""
    chat_id = plan.chat_id
    done = {"cards": 0, "present": 0, "episodes": 0, "vectors": 0, "refused": 0}
    done["retracted"] = plan.retracted
    done["chunks"] = 0
    for number, chunk in enumerate(plan.chunks):
        raw = await store.run_script(
            "import",
            chat_id,
            [to_ms(now), lua_json(chunk.plan | {"by": actor}), *chunk.blobs],
            scopes=chunk.scopes,
            extra=chunk.episode_keys,
        )
        data: dict[str, Any] = orjson.loads(raw)
        if "withdrawn" in data:
            done["withdrawn"] = 1
            return done
        _refusal(chat_id, data, plan, number)
        for name, value in data.items():
            done[name] += int(value)
        done["chunks"] += 1
    return done


def _refusal(chat_id: int, data: dict[str, Any], plan: ImportPlan, number: int) -> None:
    """Raise what a chunk's refusal means (``number`` chunks were written before it)."""
    written = f"{number} of {len(plan.chunks)} chunks were written before it" if number else ""
    if "conflict" in data:
        raise ImportConflict(
            f"chat {chat_id}: {data['conflict']}; {written or 'nothing was imported'}"
        )
    if "forgotten" in data:
        raise ExportPredatesForget(chat_id, plan.file_epoch, None, written=number)
    if "corrupt" in data:
        raise ChatKeyCorrupt(chat_id, str(data["corrupt"]))
