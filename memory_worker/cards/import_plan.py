"""Importing an export (§13), the functional core: what ``lua/import.lua`` writes, and its twin.

An import restores a :class:`~memory_worker.cards.export_format.Snapshot` into its chat,
keeping every card id (so links, episodes, supersession chains and the next export stay
the same). It is idempotent: a card already there and equal to the file's is left alone.
It refuses, writing nothing (:class:`~memory_worker.errors.ImportConflict`), when the chat
holds *other* memory under the file's ids, a live card of the same fact under another id, or
vectors of another model or dimension — an import restores memory, it does not merge two.
Episodes, links and authorship are written as the file has them (the same run's episode is
the same episode). The retraction record (§10) is rebuilt from the cards: a retracted card's
fact as of its retraction, a fact corrected by hand as of its correction.

:func:`plan_import` decides (from the file and what the chat holds under its ids);
:func:`import_twin` is the Python twin of the script (equivalence:
``tests/test_transfer_twin.py``). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from memory_worker.cards.chat_state import ChatState, Write, maxs, num
from memory_worker.cards.codec import card_stored, to_ms, unit
from memory_worker.cards.export_format import Snapshot
from memory_worker.cards.model import LIVE_STATUSES, Card, CardStatus, Episode
from memory_worker.cards.writes import VectorSpace
from memory_worker.errors import ImportConflict


@dataclass(frozen=True)
class ImportPlan:
    """One import script call: its plan JSON, vectors, scopes and episode keys."""

    chat_id: int
    plan: dict[str, Any]
    blobs: list[bytes] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    episode_keys: list[str] = field(default_factory=list)

    @property
    def new_cards(self) -> int:
        return len(self.plan["cards"])

    @property
    def present_cards(self) -> int:
        return len(self.plan["present"])


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


def retraction_record(cards: list[Card]) -> dict[str, str]:
    """Dedup hash → when its fact was withdrawn: retracted, or corrected by hand."""
    by_id = {c.id: c for c in cards}
    record: dict[str, str] = {}
    for c in cards:
        when = None
        if c.status is CardStatus.RETRACTED:
            when = c.retracted_at
        elif c.superseded_by is not None:
            newer = by_id.get(c.superseded_by)
            if newer is not None and newer.corrects == c.id:
                when = c.valid_until
        if when is not None:
            record[c.dedup_hash] = maxs(record.get(c.dedup_hash), to_ms(when)) or ""
    return record


def plan_import(
    snap: Snapshot,
    existing: Mapping[str, Card],
    holders: Mapping[str, str],
    space: VectorSpace | None,
) -> ImportPlan:
    """What importing ``snap`` writes, given the chat's cards under the file's ids
    (``existing``), who holds each live card's fact (``holders``: dedup hash → card id)
    and the chat's vector space; :class:`ImportConflict` when it cannot restore it."""
    chat = snap.chat_id
    if (
        snap.card_vectors
        and space is not None
        and (space.dimension != snap.dimension or (space.model and space.model != snap.model))
    ):
        raise ImportConflict(
            f"chat {chat} holds {space.dimension}-d vectors of "
            f"{space.model or 'an unrecorded model'}; the file's are {snap.dimension}-d of "
            f"{snap.model}"
        )
    blobs: list[bytes] = []
    cards, present = _card_entries(snap, existing, holders, blobs)
    plan = {
        "cards": cards,
        "present": present,
        "episodes": _episode_entries(snap, blobs),
        "links": _flat(
            (f"{x.from_card_id}|{x.relation}|{x.to_card_id}", unit(x.confidence))
            for x in snap.links
        ),
        "authors": _flat(
            [(str(m), str(u)) for m, u in sorted(snap.authors.items())]
            + [(f"run:{r}", ",".join(map(str, sorted(us)))) for r, us in sorted(snap.runs.items())]
        ),
        "retracted": _flat(sorted(retraction_record(snap.cards).items())),
        "seq": str(max((int(c.id) for c in snap.cards), default=0)),
        "model": snap.model or "",
        "dim": str(snap.dimension),
        "vectors": "1" if snap.card_vectors else "",
    }
    return ImportPlan(
        chat_id=chat,
        plan=plan,
        blobs=blobs,
        scopes=sorted({c["c"]["sk"] for c in cards if c["live"]}),
        episode_keys=[f"episode:{ep.run_id}" for ep in snap.episodes],
    )


def _card_entries(
    snap: Snapshot, existing: Mapping[str, Card], holders: Mapping[str, str], blobs: list[bytes]
) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """The cards to write (their vectors appended to ``blobs``) and those already there."""
    chat = snap.chat_id
    cards: list[dict[str, Any]] = []
    present: list[list[str]] = []
    for card in snap.cards:
        have = existing.get(card.id)
        if have is not None:
            if not _same(have, card):
                raise ImportConflict(f"chat {chat} holds another card {card.id} than the file's")
            present.append([card.id, to_ms(have.updated_at)])
            continue
        live = card.status in LIVE_STATUSES
        holder = holders.get(card.dedup_hash)
        if live and holder is not None and holder != card.id:
            raise ImportConflict(
                f"chat {chat}'s card {holder} already holds the fact of the file's card {card.id}"
            )
        entry: dict[str, Any] = {"c": card_stored(card), "live": "1" if live else "", "vec": ""}
        blob = snap.card_vectors.get(card.id)
        if blob is not None:
            blobs.append(blob)
            entry["vec"] = str(len(blobs))
        cards.append(entry)
    return cards, present


def _episode_entries(snap: Snapshot, blobs: list[bytes]) -> list[dict[str, Any]]:
    episodes = []
    for ep in snap.episodes:
        item: dict[str, Any] = {"run": ep.run_id, "fields": episode_fields(ep), "vec": ""}
        item["end"] = to_ms(ep.range_end)
        blob = snap.episode_vectors.get(ep.run_id)
        if blob is not None:
            blobs.append(blob)
            item["vec"] = str(len(blobs))
        episodes.append(item)
    return episodes


def _flat(pairs: Any) -> list[str]:
    return [value for pair in pairs for value in pair]


def import_twin(
    state: ChatState, plan: Mapping[str, Any], blobs: list[bytes], *, now: str
) -> tuple[ChatState, dict[str, Any]]:
    """Twin of ``lua/import.lua`` (the state after, and the answer)."""
    s = state.copy()
    why = _conflict(s, plan)
    if why is not None:
        return s, {"conflict": why}
    write = Write(s, now, plan["model"])
    vectors = 0
    for e in plan["cards"]:
        card = dict(e["c"])
        if e["vec"]:
            write.set_vector(card, blobs[int(e["vec"]) - 1])
            vectors += "row" in card
        if e["live"] == "1":
            write.index_live(card)
        write.save(card)
    if num(plan["seq"]) > s.seq:
        s.seq = int(plan["seq"])
    for ep in plan["episodes"]:
        fields = s.episodes.setdefault(ep["run"], {})
        for i in range(0, len(ep["fields"]) - 1, 2):
            fields[ep["fields"][i]] = ep["fields"][i + 1].encode()
        if ep["vec"]:
            fields["emb"] = blobs[int(ep["vec"]) - 1]
        s.episode_index[ep["run"]] = num(ep["end"])
    for name, value in zip(plan["links"][::2], plan["links"][1::2], strict=True):
        s.links[name] = maxs(s.links.get(name, ""), value) or ""
    for name, value in zip(plan["authors"][::2], plan["authors"][1::2], strict=True):
        s.authors[name] = value
    for h, when in zip(plan["retracted"][::2], plan["retracted"][1::2], strict=True):
        s.retracted[h] = maxs(s.retracted.get(h, ""), when) or ""
    write.finish()
    answer = {
        "cards": len(plan["cards"]),
        "present": len(plan["present"]),
        "episodes": len(plan["episodes"]),
        "vectors": vectors,
        "refused": write.refused,
    }
    return s, answer


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
    return None
