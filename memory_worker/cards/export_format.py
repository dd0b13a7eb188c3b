"""Export files (§13): a chat's (or one user's) memory as JSON lines, and reading one back.

The file, one JSON object a line, each line ending in ``\\n``:

1. the **header** — ``{"format": "memory-worker-export", "version": 1, "chat_id",
   "user_id" (null: the whole chat), "exported_at", "counts": {"cards", "episodes",
   "links", "authors", "runs"}, "vectors": {"model", "dimension", "encoding": "int8"}}``;
2. one line a **card**, every status (active, competing, superseded, expired, merged,
   retracted), by id: ``{"kind": "card", …}`` with every field of
   :class:`~memory_worker.cards.Card` (provenance: ``source_message_ids``,
   ``observed_at``, ``valid_from``/``valid_until``, ``superseded_by``, ``merged_into``,
   ``retracted_by``, ``asserted_by``, ``corrects``, ``first_run_id``…) and ``vector``:
   its row as stored — int8, the direction scaled so its largest component is ±127 —
   in base64 (null: none). Vectors are included so an import restores recall without
   re-embedding; their model is the header's;
3. one line an **episode** (by window end): ``{"kind": "episode", …}`` with its vector;
4. one line a **link** between two exported cards: ``{"kind": "link", …}``;
5. who wrote the cited messages — ``{"kind": "author", "message_id", "user_id"}`` — and
   each run's authors — ``{"kind": "run", "run_id", "user_ids"}`` — which forgetting a
   user needs after an import (§14).

A **user's** export is what forgetting them would remove (:func:`for_user`, the rule of
:mod:`memory_worker.privacy.forget`): their cards and the cards citing only their messages,
the episodes of the runs they wrote in, the links between those cards, their messages'
authorship. Everything is in a fixed order, so the same memory gives the same lines (the
header's ``exported_at`` aside).

:func:`parse_export` reads a whole file before anything is written, and refuses — with one
:class:`~memory_worker.errors.InvalidExport` naming the line — anything that is not a whole,
valid export: a cut-off last line or missing lines (the header's counts), bad JSON, an
unknown kind or field, a card of another chat, a duplicate id, a vector of the wrong size,
a link to a card not in the file. Pure: no Redis, no clock.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from memory_worker.cards.model import Card, Episode, Link
from memory_worker.errors import InvalidExport
from memory_worker.privacy.forget import StoredCard, card_goes, doomed_episodes

FORMAT = "memory-worker-export"
VERSION = 1
ENCODING = "int8"


@dataclass
class Snapshot:
    """One chat's memory as plain data (what an export holds, what an import writes)."""

    chat_id: int
    cards: list[Card] = field(default_factory=list)
    #: card id → its vector row (int8 bytes); episode run id → its vector.
    card_vectors: dict[str, bytes] = field(default_factory=dict)
    episodes: list[Episode] = field(default_factory=list)
    episode_vectors: dict[str, bytes] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    #: message id → author; run id → the run's authors.
    authors: dict[int, int] = field(default_factory=dict)
    runs: dict[str, list[int]] = field(default_factory=dict)
    model: str | None = None
    dimension: int = 0
    user_id: int | None = None


def for_user(snap: Snapshot, user_id: int) -> Snapshot:
    """What a user is given: what forgetting them would remove (see the module doc)."""
    kept = [
        c
        for c in snap.cards
        if card_goes(
            StoredCard(c.id, c.scope_key, tuple(c.source_message_ids), "", False),
            user_id,
            snap.authors,
        )
    ]
    ids = {c.id for c in kept}
    runs = {r: frozenset(users) for r, users in snap.runs.items()}
    episode_runs = set(doomed_episodes([e.run_id for e in snap.episodes], runs, user_id))
    return Snapshot(
        chat_id=snap.chat_id,
        cards=kept,
        card_vectors={i: v for i, v in snap.card_vectors.items() if i in ids},
        episodes=[e for e in snap.episodes if e.run_id in episode_runs],
        episode_vectors={r: v for r, v in snap.episode_vectors.items() if r in episode_runs},
        links=[x for x in snap.links if x.from_card_id in ids and x.to_card_id in ids],
        authors={m: u for m, u in snap.authors.items() if u == user_id},
        runs={
            r: [user_id]
            for r in sorted(episode_runs | {r for r, us in runs.items() if user_id in us})
        },
        model=snap.model,
        dimension=snap.dimension,
        user_id=user_id,
    )


@dataclass(frozen=True)
class MemoryExport:
    """A chat's (or a user's) memory as data, as of ``exported_at``: :meth:`lines` are the
    export file (``memory-worker export`` writes them)."""

    snapshot: Snapshot
    exported_at: datetime

    @property
    def chat_id(self) -> int:
        return self.snapshot.chat_id

    @property
    def user_id(self) -> int | None:
        return self.snapshot.user_id

    @property
    def counts(self) -> dict[str, int]:
        s = self.snapshot
        return {
            "cards": len(s.cards),
            "episodes": len(s.episodes),
            "links": len(s.links),
            "authors": len(s.authors),
            "runs": len(s.runs),
        }

    def lines(self) -> Iterator[bytes]:
        return export_lines(self.snapshot, exported_at=self.exported_at)


# --- writing ---------------------------------------------------------------------------------


def _b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode()


def _json(value: Any) -> bytes:
    return orjson.dumps(value) + b"\n"


def export_lines(snap: Snapshot, *, exported_at: datetime) -> Iterator[bytes]:
    """The file's lines (each ending in ``\\n``), header first, in the fixed order."""
    cards = sorted(snap.cards, key=lambda c: int(c.id))
    episodes = sorted(snap.episodes, key=lambda e: (e.range_end, e.run_id))
    links = sorted(snap.links, key=lambda x: (int(x.from_card_id), x.relation, int(x.to_card_id)))
    yield _json(
        {
            "format": FORMAT,
            "version": VERSION,
            "chat_id": snap.chat_id,
            "user_id": snap.user_id,
            "exported_at": exported_at.isoformat().replace("+00:00", "Z"),
            "counts": {
                "cards": len(cards),
                "episodes": len(episodes),
                "links": len(links),
                "authors": len(snap.authors),
                "runs": len(snap.runs),
            },
            "vectors": {"model": snap.model, "dimension": snap.dimension, "encoding": ENCODING},
        }
    )
    for card in cards:
        data = card.model_dump(mode="json", exclude={"has_embedding"})
        yield _json({"kind": "card", **data, "vector": _b64(snap.card_vectors.get(card.id))})
    for ep in episodes:
        data = ep.model_dump(mode="json", exclude={"has_embedding"})
        yield _json(
            {"kind": "episode", **data, "vector": _b64(snap.episode_vectors.get(ep.run_id))}
        )
    for link in links:
        yield _json({"kind": "link", **link.model_dump(mode="json")})
    for message_id, user_id in sorted(snap.authors.items()):
        yield _json({"kind": "author", "message_id": message_id, "user_id": user_id})
    for run_id, user_ids in sorted(snap.runs.items()):
        yield _json({"kind": "run", "run_id": run_id, "user_ids": sorted(user_ids)})


# --- reading ---------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


class _Counts(_Strict):
    cards: int
    episodes: int
    links: int
    authors: int
    runs: int


class _Vectors(_Strict):
    model: str | None
    dimension: int
    encoding: Literal["int8"]


class _Header(_Strict):
    format: Literal["memory-worker-export"]
    version: Literal[1]
    chat_id: int
    user_id: int | None
    exported_at: datetime
    counts: _Counts
    vectors: _Vectors


class _CardLine(Card):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["card"]
    vector: str | None = None


class _EpisodeLine(Episode):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["episode"]
    vector: str | None = None


class _LinkLine(Link):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["link"]


class _AuthorLine(_Strict):
    kind: Literal["author"]
    message_id: int
    user_id: int


class _RunLine(_Strict):
    kind: Literal["run"]
    run_id: str
    user_ids: list[int]


_KINDS: dict[str, type[BaseModel]] = {
    "card": _CardLine,
    "episode": _EpisodeLine,
    "link": _LinkLine,
    "author": _AuthorLine,
    "run": _RunLine,
}


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "line"
    return f"{where}: {first['msg']}"


def _object(raw: bytes, where: str) -> dict[str, Any]:
    if not raw.endswith(b"\n"):
        raise InvalidExport(where, "no line end: the file is cut short")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidExport(where, "not a JSON object (the file is damaged)") from None
    if not isinstance(data, dict):
        raise InvalidExport(where, "not a JSON object")
    return data


def _vector(text: str | None, where: str, size: int | None) -> bytes | None:
    if text is None:
        return None
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidExport(where, "vector: not base64") from None
    if size is not None and len(blob) != size:
        raise InvalidExport(where, f"vector: {len(blob)} bytes, the header says {size}")
    return blob


def _aware(model: BaseModel, where: str) -> None:
    for name, value in model:
        if isinstance(value, datetime) and value.tzinfo is None:
            raise InvalidExport(where, f"{name}: a time without a UTC offset")


def parse_export(lines: Iterable[bytes], source: str = "export") -> Snapshot:
    """A whole export file's lines → its :class:`Snapshot`, or :class:`InvalidExport`."""
    it = iter(enumerate(lines, start=1))
    first = next(it, None)
    if first is None:
        raise InvalidExport(f"{source}:1", "the file is empty: no header")
    try:
        header = _Header.model_validate(_object(first[1], f"{source}:1"))
    except ValidationError as exc:
        raise InvalidExport(f"{source}:1", f"not an export header ({_problem(exc)})") from None
    _aware(header, f"{source}:1")
    dim = header.vectors.dimension
    snap = Snapshot(
        chat_id=header.chat_id,
        model=header.vectors.model,
        dimension=dim,
        user_id=header.user_id,
    )
    seen: set[str] = set()  # card ids, then "episode:" + run id
    for number, raw in it:
        _add(snap, _object(raw, f"{source}:{number}"), f"{source}:{number}", seen)
    _check_counts(snap, header.counts, source)
    return snap


def _add(snap: Snapshot, data: dict[str, Any], where: str, seen: set[str]) -> None:
    model = _KINDS.get(str(data.get("kind")))
    if model is None:
        raise InvalidExport(where, f"unknown kind {str(data.get('kind'))[:40]!r}")
    try:
        line = model.model_validate(data)
    except ValidationError as exc:
        raise InvalidExport(where, f"{data['kind']}: {_problem(exc)}") from None
    _aware(line, where)
    if isinstance(line, _CardLine):
        if line.chat_id != snap.chat_id:
            raise InvalidExport(where, f"a card of chat {line.chat_id}, not {snap.chat_id}")
        if not line.id.isdigit() or str(int(line.id)) != line.id:
            raise InvalidExport(where, f"card id {line.id[:20]!r}: not a card id")
        if snap.cards and int(line.id) <= int(snap.cards[-1].id):
            raise InvalidExport(where, f"card {line.id}: cards come once each, by id")
        blob = _vector(line.vector, where, snap.dimension or None)
        seen.add(line.id)
        card = Card.model_validate(
            line.model_dump(exclude={"kind", "vector"}) | {"has_embedding": blob is not None}
        )
        snap.cards.append(card)
        if blob is not None:
            snap.card_vectors[card.id] = blob
    elif isinstance(line, _EpisodeLine):
        if line.chat_id != snap.chat_id or f"episode:{line.run_id}" in seen:
            raise InvalidExport(where, f"episode {line.run_id[:40]!r}: another chat's or a repeat")
        seen.add(f"episode:{line.run_id}")
        blob = _vector(line.vector, where, None)
        snap.episodes.append(
            Episode.model_validate(
                line.model_dump(exclude={"kind", "vector"}) | {"has_embedding": blob is not None}
            )
        )
        if blob is not None:
            snap.episode_vectors[line.run_id] = blob
    elif isinstance(line, _LinkLine):
        if line.from_card_id not in seen or line.to_card_id not in seen:
            raise InvalidExport(where, "a link to a card the file does not hold")
        snap.links.append(Link.model_validate(line.model_dump(exclude={"kind"})))
    elif isinstance(line, _AuthorLine):
        snap.authors[line.message_id] = line.user_id
    elif isinstance(line, _RunLine):
        snap.runs[line.run_id] = list(line.user_ids)


def _check_counts(snap: Snapshot, counts: _Counts, source: str) -> None:
    have = {
        "cards": len(snap.cards),
        "episodes": len(snap.episodes),
        "links": len(snap.links),
        "authors": len(snap.authors),
        "runs": len(snap.runs),
    }
    for name, want in counts.model_dump().items():
        if have[name] != want:
            raise InvalidExport(
                source, f"{have[name]} {name} where the header says {want}: the file is cut short"
            )
