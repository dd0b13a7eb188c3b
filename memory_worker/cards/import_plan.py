"""Importing an export (§13), the functional core: what ``lua/import.lua`` writes, and its twin.

An import restores a :class:`~memory_worker.cards.export_format.Snapshot` (already checked
whole: :func:`~memory_worker.cards.export_format.parse_export`) into its chat, keeping every
card id (so links, episodes, supersession chains and the next export stay the same). It is
idempotent: a card already there and equal to the file's is left alone. It refuses, writing
nothing (:class:`~memory_worker.errors.ImportConflict`), when the chat holds *other* memory
under the file's ids, a live card of the same fact under another id, or vectors of another
model or dimension — an import restores memory, it does not merge two — and when the chat
was forgotten (in part) after the file was exported
(:class:`~memory_worker.errors.ExportPredatesForget`: its forget epoch is older than the
chat's, §14). A live card that states a fact withdrawn after the card's newest message —
the chat's or the file's own, by hash, by meaning or by evidence, the rule of every card
write (:mod:`memory_worker.cards.withdrawn`) — is left out and counted, as a run's write
leaves it (:func:`refused_by_retractions`, the one step that decides it; the chat's
withdrawn facts near the file's cards and their siblings are read by the shell,
:func:`memory_worker.cards.withdrawals.gather`). Episodes, links and authorship are written
as the file has them (the same run's episode is the same episode). The retraction record
(§10) is rebuilt from the cards: a retracted card's fact as of its retraction, a fact
corrected by hand as of its correction; both cards' vector rows are marked withdrawn.

**A withdrawal during the import.** Each chunk's plan carries the withdrawn marks the chat
should hold when it lands (``wn``: those the plan's reads saw, and those the chunks before
it wrote); a chunk that finds another count (a retraction or correction landed since the
plan) writes nothing and answers ``{"withdrawn": n}``, and the shell plans the rest again
(the chunks written read as ``present``). The script's own check by hash stays, inside
each chunk.

**Chunks.** The plan is cut into script calls of at most ``MEMORY_IMPORT_CHUNK_ITEMS``
items (a card, an episode, a link, an authorship or retraction entry), each all-or-nothing
and checked before its first write, in this order: the retraction record, authorship, the
cards by id (each with its vector and indexes; the counter raised past every id of the file
in each call), episodes, links. A crash between two calls leaves the chunks before it, whole:
never a card without its indexes, its authors or the retractions that came before it. The
same file imported again completes it (the cards written read as ``present``).

:func:`plan_import` decides (from the file and a :class:`ChatView` of the chat);
:func:`import_twin` is the Python twin of the script, one chunk (equivalence:
``tests/cards/test_transfer_twin.py``). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

from memory_worker.cards.chat_state import ChatState, Write, blank, maxs, num
from memory_worker.cards.codec import card_stored, to_ms, unit
from memory_worker.cards.corrections import relearn_refused
from memory_worker.cards.export_format import Snapshot
from memory_worker.cards.history import encode_events, event_stored
from memory_worker.cards.model import LIVE_STATUSES, Card, CardStatus, Episode
from memory_worker.cards.withdrawn import (
    Candidate,
    Sibling,
    Statement,
    Thresholds,
    WithdrawnFact,
    refusals,
)
from memory_worker.cards.writes import VectorSpace
from memory_worker.errors import ExportPredatesForget, ImportConflict
from memory_worker.keys import HISTORY_MAX_EVENTS


@dataclass(frozen=True)
class ChatView:
    """What an import's plan reads of the target chat first: its cards under the file's ids
    (``existing``), who holds each of the file's live facts (``holders``: dedup hash → card
    id), its vector space, its retraction record (dedup hash → ms), its forget epoch, its
    withdrawn facts near the file's live cards and their siblings (the chat's cards from
    their messages), and the withdrawn marks those reads saw (None: none read)."""

    existing: Mapping[str, Card] = field(default_factory=dict)
    holders: Mapping[str, str] = field(default_factory=dict)
    space: VectorSpace | None = None
    retractions: Mapping[str, str] = field(default_factory=dict)
    epoch: int = 0
    withdrawn: Sequence[WithdrawnFact] = ()
    siblings: Sequence[Sibling] = ()
    marks: int | None = None


@dataclass(frozen=True)
class ImportChunk:
    """One import script call: its plan JSON, vectors, scopes and episode keys."""

    plan: dict[str, Any]
    blobs: list[bytes] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    episode_keys: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImportPlan:
    """An import: its chunks in the order they are written, and what it leaves out."""

    chat_id: int
    chunks: list[ImportChunk]
    new_cards: int
    present_cards: int
    #: The file's live cards the chat's retractions refuse (:func:`refused_by_retractions`).
    retracted: int
    #: The file's forget epoch (0: a file from before exports carried it).
    file_epoch: int = 0


def _same(a: Card, b: Card) -> bool:
    return a.model_dump(exclude={"has_embedding"}) == b.model_dump(exclude={"has_embedding"})


def episode_fields(ep: Episode) -> list[str]:
    """An episode's stored hash as apply writes it (field, value, …), its vector aside."""
    return [
        *("run", ep.run_id, "summary", ep.summary),
        *("topics", orjson.dumps(list(ep.topics)).decode()),
        *("participants", orjson.dumps(list(ep.participants)).decode()),
        *("start", to_ms(ep.range_start), "end", to_ms(ep.range_end)),
        *("thread", str(ep.thread_id), "messages", str(ep.message_count)),
        *("cards", ",".join(ep.card_ids), "created", to_ms(ep.created_at)),
    ]


def withdrawals_of(cards: Sequence[Card]) -> dict[str, str]:
    """Card id → when (ms) its fact was withdrawn: retracted, or corrected away by hand (the
    card that supersedes it says it ``corrects`` it)."""
    by_id = {c.id: c for c in cards}
    out: dict[str, str] = {}
    for c in cards:
        when = None
        if c.status is CardStatus.RETRACTED:
            when = c.retracted_at
        elif c.superseded_by is not None:
            newer = by_id.get(c.superseded_by)
            if newer is not None and newer.corrects == c.id:
                when = c.valid_until
        if when is not None:
            out[c.id] = to_ms(when)
    return out


def retraction_record(cards: list[Card]) -> dict[str, str]:
    """Dedup hash → when its fact was withdrawn: retracted, or corrected by hand."""
    by_id = {c.id: c for c in cards}
    record: dict[str, str] = {}
    for card_id, when in withdrawals_of(cards).items():
        h = by_id[card_id].dedup_hash
        record[h] = maxs(record.get(h), when) or ""
    return record


def unit_row(blob: bytes | None) -> list[float] | None:
    """A stored int8 vector as a unit vector (None: none, or all zero)."""
    if not blob:
        return None
    row = np.frombuffer(blob, dtype=np.int8).astype(np.float64)
    norm = float(np.linalg.norm(row))
    if norm == 0.0:
        return None
    out: list[float] = (row / norm).tolist()
    return out


def statement_of(card: Card) -> Statement:
    return Statement(card.subject, card.object, card.fact_text, card.user_id, card.dedup_hash)


def import_candidates(cards: Sequence[Card], vectors: Mapping[str, bytes]) -> list[Candidate]:
    """The file's live cards as the withdrawn-fact check sees them (in file order)."""
    return [
        Candidate(
            statement_of(c),
            int(to_ms(c.observed_at)),
            unit_row(vectors.get(c.id)),
            frozenset(c.source_message_ids),
            c.id,
        )
        for c in cards
        if c.status in LIVE_STATUSES
    ]


def file_siblings(cards: Sequence[Card], vectors: Mapping[str, bytes]) -> list[Sibling]:
    """The file's cards not withdrawn, with a vector: siblings of its cards from one message."""
    withdrawn = withdrawals_of(cards)
    out = []
    for c in cards:
        vector = unit_row(vectors.get(c.id))
        if c.id not in withdrawn and vector is not None:
            out.append(Sibling(c.id, frozenset(c.source_message_ids), vector))
    return out


def refused_by_retractions(
    cards: Sequence[Card],
    retractions: Mapping[str, str],
    *,
    vectors: Mapping[str, bytes] | None = None,
    withdrawn: Sequence[WithdrawnFact] = (),
    siblings: Sequence[Sibling] = (),
    thresholds: Thresholds = Thresholds(),
) -> frozenset[str]:
    """The ids of the live ``cards`` a withdrawal refuses (§10): their fact was withdrawn
    (retracted or corrected away) after the newest message they come from — the rule a
    run's write keeps. By hash: ``retractions``, the chat's retraction record and the
    file's own (dedup hash → when, ms;
    :func:`~memory_worker.cards.corrections.relearn_refused`). By meaning and by evidence
    (:func:`~memory_worker.cards.withdrawn.refusals`): the chat's ``withdrawn`` facts near
    these cards, with the chat's ``siblings`` of them (read by the shell) and the file's
    own; ``vectors``: the file's (card id → int8 row).

    The file's own withdrawn facts refuse by hash only, as they did in the chat the file
    comes from: a card that chat kept live beside a withdrawn one it restates was learned
    before the withdrawal, and restoring the chat keeps it."""
    rows = vectors or {}
    live = [c for c in cards if c.status in LIVE_STATUSES]
    by_hash = {
        c.id for c in live if relearn_refused(retractions.get(c.dedup_hash), to_ms(c.observed_at))
    }
    found = refusals(
        import_candidates(live, rows),
        withdrawn,
        thresholds,
        [*siblings, *file_siblings(cards, rows)],
    )
    return frozenset(by_hash | {c.id for c, f in zip(live, found, strict=True) if f is not None})


def plan_import(
    snap: Snapshot,
    chat: ChatView,
    *,
    chunk_items: int,
    thresholds: Thresholds = Thresholds(),
) -> ImportPlan:
    """What importing ``snap`` writes, chunk by chunk, given what the chat holds (``chat``);
    :class:`ImportConflict` (or :class:`ExportPredatesForget`) when it cannot restore it."""
    chat_id = snap.chat_id
    file_epoch = snap.forget_epoch or 0
    if file_epoch < chat.epoch:
        raise ExportPredatesForget(chat_id, file_epoch, chat.epoch)
    space = chat.space
    if (
        snap.card_vectors
        and space is not None
        and (space.dimension != snap.dimension or (space.model and space.model != snap.model))
    ):
        raise ImportConflict(
            f"chat {chat_id} holds {space.dimension}-d vectors of "
            f"{space.model or 'an unrecorded model'}; the file's are {snap.dimension}-d of "
            f"{snap.model}"
        )
    record = retraction_record(snap.cards)
    retractions = dict(chat.retractions)
    for h, when in record.items():
        retractions[h] = maxs(retractions.get(h), when) or ""
    refused = refused_by_retractions(
        snap.cards,
        retractions,
        vectors=snap.card_vectors,
        withdrawn=chat.withdrawn,
        siblings=chat.siblings,
        thresholds=thresholds,
    )
    units: list[tuple[str, Any]] = [("retracted", pair) for pair in sorted(record.items())]
    units += [("authors", (str(m), str(u))) for m, u in sorted(snap.authors.items())]
    units += [
        ("authors", (f"run:{r}", ",".join(map(str, sorted(us)))))
        for r, us in sorted(snap.runs.items())
    ]
    new, present = _card_units(snap, chat, refused)
    units += new + present
    units += [("episodes", ep) for ep in snap.episodes]
    units += [
        ("links", (f"{x.from_card_id}|{x.relation}|{x.to_card_id}", unit(x.confidence)))
        for x in snap.links
        if x.from_card_id not in refused and x.to_card_id not in refused
    ]
    base = {
        "epoch": str(chat.epoch),
        "seq": str(max((int(c.id) for c in snap.cards), default=0)),
        "model": snap.model or "",
        "dim": str(snap.dimension),
        "vectors": "1" if snap.card_vectors else "",
    }
    withdrawn = frozenset(withdrawals_of(snap.cards))
    chunks: list[ImportChunk] = []
    marks = chat.marks
    for i in range(0, max(len(units), 1), chunk_items):
        chunk = _chunk(snap, base, units[i : i + chunk_items], withdrawn, marks)
        chunks.append(chunk)
        if marks is not None:  # the withdrawn rows this chunk writes
            marks += sum(1 for e in chunk.plan["cards"] if e["wd"] and e["vec"])
    return ImportPlan(
        chat_id=chat_id,
        chunks=chunks,
        new_cards=len(new),
        present_cards=len(present),
        retracted=len(refused),
        file_epoch=file_epoch,
    )


def _chunk(
    snap: Snapshot,
    base: dict[str, str],
    units: list[tuple[str, Any]],
    withdrawn: frozenset[str],
    marks: int | None,
) -> ImportChunk:
    """One script call's plan: its share of the units, in their order, with its vectors;
    its cards whose fact is withdrawn flagged ``wd``, and the withdrawn marks the chat holds
    when it lands (``wn``, when the plan read them)."""
    plan: dict[str, Any] = base | {
        "retracted": [],
        "authors": [],
        "cards": [],
        "present": [],
        "episodes": [],
        "links": [],
    }
    blobs: list[bytes] = []
    for kind, item in units:
        if kind == "cards":
            card, entry = item
            entry = dict(entry)
            entry["wd"] = "1" if card.id in withdrawn else ""
            blob = snap.card_vectors.get(card.id)
            if blob is not None:
                blobs.append(blob)
                entry["vec"] = str(len(blobs))
            plan["cards"].append(entry)
        elif kind == "episodes":
            plan["episodes"].append(_episode_entry(snap, item, blobs))
        elif kind == "present":
            plan["present"].append(item)
        else:
            plan[kind].extend(item)
    if marks is not None:
        plan["wn"] = str(marks)
    return ImportChunk(
        plan=plan,
        blobs=blobs,
        scopes=sorted({e["c"]["sk"] for e in plan["cards"] if e["live"]}),
        episode_keys=[f"episode:{ep['run']}" for ep in plan["episodes"]],
    )


def _card_units(
    snap: Snapshot, chat: ChatView, refused: frozenset[str]
) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """The cards to write (``refused`` left out) and those already there, as plan units."""
    chat_id = snap.chat_id
    new: list[tuple[str, Any]] = []
    present: list[tuple[str, Any]] = []
    for card in snap.cards:
        have = chat.existing.get(card.id)
        if have is not None:
            if not _same(have, card):
                raise ImportConflict(f"chat {chat_id} holds another card {card.id} than the file's")
            present.append(("present", [card.id, to_ms(have.updated_at)]))
            continue
        if card.id in refused:
            continue
        live = card.status in LIVE_STATUSES
        holder = chat.holders.get(card.dedup_hash)
        if live and holder is not None and holder != card.id:
            raise ImportConflict(
                f"chat {chat_id}'s card {holder} already holds the fact of the file's card "
                f"{card.id}"
            )
        entry = {"c": card_stored(card), "live": "1" if live else "", "vec": ""}
        events = [event_stored(e) for e in snap.histories.get(card.id, [])]
        entry["hist"] = encode_events(events).decode()
        new.append(("cards", (card, entry)))
    return new, present


def _episode_entry(snap: Snapshot, ep: Episode, blobs: list[bytes]) -> dict[str, Any]:
    item: dict[str, Any] = {"run": ep.run_id, "fields": episode_fields(ep), "vec": ""}
    item["end"] = to_ms(ep.range_end)
    blob = snap.episode_vectors.get(ep.run_id)
    if blob is not None:
        blobs.append(blob)
        item["vec"] = str(len(blobs))
    return item


def import_twin(
    state: ChatState,
    plan: Mapping[str, Any],
    blobs: list[bytes],
    *,
    now: str,
    history_max: int = HISTORY_MAX_EVENTS,
) -> tuple[ChatState, dict[str, Any]]:
    """Twin of ``lua/import.lua``, one chunk (the state after, and the answer; the wrong-type
    checks aside: a :class:`ChatState` holds every key as its own type)."""
    s = state.copy()
    if s.forget > num(plan["epoch"]):
        return s, {"forgotten": True}
    marks = s.vecmask.count(b"\2")
    if not blank(plan.get("wn")) and marks != num(plan["wn"]):
        return s, {"withdrawn": marks}
    why = _conflict(s, plan)
    if why is not None:
        return s, {"conflict": why}
    cause = {"via": "import", "by": str(plan.get("by") or "")}
    write = Write(s, now, plan["model"], cause=cause, history_max=history_max)
    for h, when in zip(plan["retracted"][::2], plan["retracted"][1::2], strict=True):
        s.retracted[h] = maxs(s.retracted.get(h, ""), when) or ""
    for name, value in zip(plan["authors"][::2], plan["authors"][1::2], strict=True):
        s.authors[name] = value
    if num(plan["seq"]) > s.seq:
        s.seq = int(plan["seq"])
    vectors = cards = retracted = 0
    for e in plan["cards"]:
        card = dict(e["c"])
        if e["live"] == "1" and relearn_refused(s.retracted.get(card["h"]), card["obs_at"]):
            retracted += 1
            continue
        if e["vec"]:
            write.set_vector(card, blobs[int(e["vec"]) - 1])
            vectors += "row" in card
        if e.get("wd") == "1":
            write.withdraw(card)
        if e["live"] == "1":
            write.index_live(card)
        write.save(card)
        if e.get("hist"):
            s.history[card["id"]] = [orjson.loads(line) for line in e["hist"].splitlines()]
        write.history_add(card["id"], "imported")
        cards += 1
    for ep in plan["episodes"]:
        fields = s.episodes.setdefault(ep["run"], {})
        for i in range(0, len(ep["fields"]) - 1, 2):
            fields[ep["fields"][i]] = ep["fields"][i + 1].encode()
        if ep["vec"]:
            fields["emb"] = blobs[int(ep["vec"]) - 1]
        s.episode_index[ep["run"]] = num(ep["end"])
    for name, value in zip(plan["links"][::2], plan["links"][1::2], strict=True):
        s.links[name] = maxs(s.links.get(name, ""), value) or ""
    write.finish()
    answer = {
        "cards": cards,
        "present": len(plan["present"]),
        "episodes": len(plan["episodes"]),
        "vectors": vectors,
        "refused": write.refused,
        "retracted": retracted,
    }
    return s, answer


#: The largest string Redis stores (``proto-max-bulk-len``'s default): the packed vectors.
VEC_MAX_BYTES = 512 * 1024 * 1024


def _conflict(s: ChatState, plan: Mapping[str, Any]) -> str | None:
    for e in plan["cards"]:
        card_id = e["c"]["id"]
        if card_id in s.cards:
            return f"card {card_id} is already another card"
        holder = s.dedup.get(e["c"]["h"])
        if e["live"] == "1" and holder is not None and holder != card_id:
            return f"card {holder} already holds the fact of card {card_id}"
    for card_id, updated in plan["present"]:
        if s.cards.get(card_id, {}).get("updated") != updated:
            return f"card {card_id} changed"
    dim, model = int(num(s.meta.get("dim"))), s.meta.get("model", "")
    if (
        plan["vectors"] == "1"
        and dim
        and (dim != int(plan["dim"]) or model not in ("", plan["model"]))
    ):
        return "the chat holds vectors of another model or dimension"
    adds = sum(1 for e in plan["cards"] if e["vec"])
    if (len(s.vecids) + adds) * (dim or int(plan["dim"])) > VEC_MAX_BYTES:
        return "the chat's vectors would pass 512 MB"
    return None
