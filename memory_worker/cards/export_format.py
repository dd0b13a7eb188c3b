"""Export files (§13): a chat's (or one user's) memory as JSON lines, and reading one back.

The file, one JSON object a line, each line ending in ``\\n``:

1. the **header** — ``{"format": "memory-worker-export", "version": 1, "chat_id",
   "user_id" (null: the whole chat), "exported_at", "counts": {"cards", "episodes",
   "links", "authors", "runs"}, "vectors": {"model", "dimension", "encoding": "int8"},
   "forget_epoch"}`` (the chat's forget epoch as read, §14; absent in older files);
2. one line a **card**, every status (active, competing, superseded, expired, merged,
   retracted), by id: ``{"kind": "card", …}`` with every field of
   :class:`~memory_worker.cards.Card` (provenance: ``source_message_ids``,
   ``observed_at``, ``valid_from``/``valid_until``, ``superseded_by``, ``merged_into``,
   ``retracted_by``, ``asserted_by``, ``corrects``, ``first_run_id``…), ``vector``:
   its row as stored — int8, the direction scaled so its largest component is ±127 —
   in base64 (null: none) — vectors are included so an import restores recall without
   re-embedding; their model is the header's —, and ``history``: its recorded events
   (:class:`~memory_worker.cards.CardEvent`, oldest first; absent in older files), but
   ``imported`` ones — an import records its own;
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
:class:`~memory_worker.errors.InvalidExport` naming the line and the field, never quoting a
value of the file — anything that is not a whole, valid export: a file over its size cap
(``MEMORY_IMPORT_MAX_BYTES``), a cut-off last line or missing lines (the header's counts),
bad JSON, an unknown kind or field, a card of another chat, a duplicate id, an id or run id
out of shape or range (card ids 1 to 2^53 − 1; run ids are part of key names: letters,
digits, ``_.-``), a time outside the run requests' range, a vector of the wrong size, a link
to a card not in the file, two live cards of one fact — and a card that breaks a rule every
stored card keeps (:func:`card_rule_fault`: the text rule of
:mod:`memory_worker.cards.rules` — size, no secret —, a known type, scores from 0 to 1,
the retraction's actor and reason rules). A card's dedup hash is computed from its text,
never taken from the file; episodes are masked and bounded as a run writes them. Pure: no
Redis, no clock.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    model_validator,
)

from memory_worker.cards.corrections import check_actor, check_reason, check_request_id
from memory_worker.cards.history import CardEvent, EventKind
from memory_worker.cards.model import Card, Episode, Link, Scope, dedup_hash
from memory_worker.cards.rules import (
    CARD_TYPES,
    FIELD_MAX_BYTES,
    MAX_PARTICIPANT_NAMES,
    MAX_TOPICS,
    OBSERVATIONS_MAX,
    card_id_problem,
    episode_labels,
    episode_summary,
    relation_problem,
    run_id_problem,
    text_fault,
)
from memory_worker.errors import ImportTooLarge, InvalidCorrection, InvalidExport
from memory_worker.models import INT64_MAX, Id, NonNegativeId, Text, Time
from memory_worker.privacy.forget import StoredCard, card_goes, doomed_episodes

FORMAT = "memory-worker-export"
VERSION = 1
ENCODING = "int8"
#: The most events of one card's history a file may hold (``MEMORY_CARD_HISTORY_MAX_EVENTS``'s
#: top).
HISTORY_EVENTS_MAX = 1000
#: The longest vector a file may hold (bytes: one int8 a dimension).
MAX_DIMENSION = 65_536


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
    #: The chat's forget epoch when it was read (§14): an import refuses a file older than
    #: a forget of its chat. None: a file written before exports carried it.
    forget_epoch: int | None = None
    #: card id → its recorded history, oldest first (``imported`` events left out).
    histories: dict[str, list[CardEvent]] = field(default_factory=dict)


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
        forget_epoch=snap.forget_epoch,
        histories={i: h for i, h in snap.histories.items() if i in ids},
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
            "forget_epoch": snap.forget_epoch,
        }
    )
    for card in cards:
        data = card.model_dump(mode="json", exclude={"has_embedding"})
        data["vector"] = _b64(snap.card_vectors.get(card.id))
        data["history"] = [
            e.model_dump(mode="json", exclude={"derived"})
            for e in snap.histories.get(card.id, [])
            if e.kind is not EventKind.IMPORTED
        ]
        yield _json({"kind": "card", **data})
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


def _checked(check: Callable[[str], str | None]) -> AfterValidator:
    def run(value: str) -> str:
        problem = check(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    return AfterValidator(run)


CardId = Annotated[str, Strict(), _checked(card_id_problem)]
RunId = Annotated[str, Strict(), _checked(run_id_problem)]
Relation = Annotated[str, Strict(), _checked(relation_problem)]
#: A confidence or salience: a finite number from 0 to 1.
Score = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Count = Annotated[int, Strict(), Field(ge=0, le=INT64_MAX)]
#: An actor or a reason as written on a card (checked by the rules of ``retract``).
Note = Annotated[Text, Field(max_length=4000)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


class _Counts(_Strict):
    cards: Count
    episodes: Count
    links: Count
    authors: Count
    runs: Count


class _Vectors(_Strict):
    model: Annotated[Text, Field(max_length=200)] | None
    dimension: Annotated[int, Strict(), Field(ge=0, le=MAX_DIMENSION)]
    encoding: Literal["int8"]


class _Header(_Strict):
    format: Literal["memory-worker-export"]
    version: Literal[1]
    chat_id: Id
    user_id: Id | None
    exported_at: Time
    counts: _Counts
    vectors: _Vectors
    forget_epoch: Count | None = None


def _request_id(value: str) -> str:
    try:
        return check_request_id(value)
    except InvalidCorrection as exc:
        raise ValueError(str(exc)) from None


def _event_actor(value: str) -> str:
    try:
        return check_actor(value)
    except InvalidCorrection as exc:
        raise ValueError(str(exc)) from None


class _EventLine(_Strict):
    """One event of a card's history in a file (the rules ``history_add``'s callers keep)."""

    kind: EventKind
    at: Time
    via: Literal["", "run", "remember", "correct", "retract", "import", "maintenance"] = ""
    actor: Annotated[Text, AfterValidator(_event_actor)] | None = None
    run_id: RunId | None = None
    request_id: Annotated[Text, AfterValidator(_request_id)] | None = None
    card_id: CardId | None = None


class _CardLine(Card):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["card"]
    vector: str | None = None
    history: Annotated[list[_EventLine], Field(max_length=HISTORY_EVENTS_MAX)] = Field(
        default_factory=list
    )
    id: CardId
    chat_id: Id
    thread_id: NonNegativeId = 0
    user_id: Id | None = None
    card_type: Text
    subject: Text
    predicate: Text
    object: Text
    fact_text: Text
    confidence: Score
    salience: Score
    observation_count: Annotated[int, Strict(), Field(ge=1, le=OBSERVATIONS_MAX)]
    valid_from: Time
    valid_until: Time | None = None
    observed_at: Time
    created_at: Time
    updated_at: Time
    expires_at: Time | None = None
    retracted_at: Time | None = None
    superseded_by: CardId | None = None
    merged_into: CardId | None = None
    conflict_group: CardId | None = None
    #: At least one, unless the card was asserted by hand (``remember`` cites no message).
    source_message_ids: list[NonNegativeId]
    dedup_hash: Annotated[Text, Field(max_length=128)]  # recomputed from the text
    last_merge_at: Time | None = None
    first_run_id: RunId | None = None
    retracted_by: Note | None = None
    retract_reason: Note | None = None
    asserted_by: Note | None = None
    corrects: CardId | None = None

    @model_validator(mode="after")
    def _cites_its_messages(self) -> _CardLine:
        if not self.source_message_ids and not self.asserted_by:
            raise ValueError("source_message_ids: a card not asserted by hand cites its messages")
        return self


class _EpisodeLine(Episode):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["episode"]
    vector: str | None = None
    run_id: RunId
    chat_id: Id
    thread_id: NonNegativeId
    summary: Text
    topics: list[Text]
    participants: list[Text]
    range_start: Time
    range_end: Time
    message_count: Count
    card_ids: list[CardId]
    created_at: Time


class _LinkLine(Link):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["link"]
    from_card_id: CardId
    relation: Relation
    to_card_id: CardId
    confidence: Score


class _AuthorLine(_Strict):
    kind: Literal["author"]
    message_id: NonNegativeId
    user_id: Id


class _RunLine(_Strict):
    kind: Literal["run"]
    run_id: RunId
    user_ids: list[Id]


_KINDS: dict[str, type[BaseModel]] = {
    "card": _CardLine,
    "episode": _EpisodeLine,
    "link": _LinkLine,
    "author": _AuthorLine,
    "run": _RunLine,
}


def _problem(exc: ValidationError) -> str:
    """The first error's field and message (pydantic's messages never quote the input)."""
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
    if not blob or len(blob) > MAX_DIMENSION:
        raise InvalidExport(where, f"vector: {len(blob)} bytes, not 1 to {MAX_DIMENSION}")
    return blob


def card_rule_fault(card: Card, card_max_bytes: int) -> tuple[str, str] | None:
    """The field of a card that breaks a rule every stored card keeps (§10: what a run's
    validation and ``correct`` refuse), and why; None when it keeps them all."""
    fault = text_fault(
        card.fact_text, card.subject, card.predicate, card.object, max_bytes=card_max_bytes
    )
    if fault is not None:
        name, why = fault
        return name, {
            "not_text": "not Unicode text",
            "empty": "empty",
            "too_long": f"over {card_max_bytes if name == 'fact_text' else FIELD_MAX_BYTES} bytes",
            "secret": "holds what looks like a secret: a card never does",
        }[why]
    if card.card_type not in CARD_TYPES:
        return "card_type", f"not a card type (one of {', '.join(sorted(CARD_TYPES))})"
    if card.scope is Scope.USER and card.user_id is None:
        return "user_id", "a user card names its user"
    if card.scope is Scope.THREAD and card.thread_id == 0:
        return "thread_id", "a thread card names its thread"
    for name, check in (
        ("retracted_by", check_actor),
        ("asserted_by", check_actor),
        ("retract_reason", check_reason),
    ):
        value = getattr(card, name)
        if value is not None:
            try:
                check(value)
            except InvalidCorrection as exc:
                return name, str(exc)
    return None


def parse_export(
    lines: Iterable[bytes],
    source: str = "export",
    *,
    max_bytes: int | None = None,
    card_max_bytes: int = 700,
) -> Snapshot:
    """A whole export file's lines → its :class:`Snapshot`, or :class:`InvalidExport` (one
    line, the file's line and field, never a value from it); over ``max_bytes``:
    :class:`ImportTooLarge`. Every card keeps the rules of :func:`card_rule_fault` and gets
    its dedup hash from its text; episodes are masked and bounded as a run writes them."""
    it = iter(enumerate(lines, start=1))
    first = next(it, None)
    if first is None:
        raise InvalidExport(f"{source}:1", "the file is empty: no header")
    size = len(first[1])
    if max_bytes is not None and size > max_bytes:
        raise ImportTooLarge(source, max_bytes)
    try:
        header = _Header.model_validate(_object(first[1], f"{source}:1"))
    except ValidationError as exc:
        raise InvalidExport(f"{source}:1", f"not an export header ({_problem(exc)})") from None
    snap = Snapshot(
        chat_id=header.chat_id,
        model=header.vectors.model,
        dimension=header.vectors.dimension,
        user_id=header.user_id,
        forget_epoch=header.forget_epoch,
    )
    seen = _Seen(card_max_bytes)
    for number, raw in it:
        size += len(raw)
        if max_bytes is not None and size > max_bytes:
            raise ImportTooLarge(source, max_bytes)
        _add(snap, _object(raw, f"{source}:{number}"), f"{source}:{number}", seen)
    _check_counts(snap, header.counts, source)
    return snap


@dataclass
class _Seen:
    """What the lines read so far hold: card ids, episodes' runs, live facts (hash → id)."""

    card_max_bytes: int
    cards: set[str] = field(default_factory=set)
    runs: set[str] = field(default_factory=set)
    facts: dict[str, str] = field(default_factory=dict)


def _add(snap: Snapshot, data: dict[str, Any], where: str, seen: _Seen) -> None:
    model = _KINDS.get(data["kind"]) if isinstance(data.get("kind"), str) else None
    if model is None:
        raise InvalidExport(where, f"kind: not one of {', '.join(_KINDS)}")
    try:
        line = model.model_validate(data)
    except ValidationError as exc:
        raise InvalidExport(where, f"{data['kind']}: {_problem(exc)}") from None
    if isinstance(line, _CardLine):
        _add_card(snap, line, where, seen)
    elif isinstance(line, _EpisodeLine):
        if line.chat_id != snap.chat_id or line.run_id in seen.runs:
            raise InvalidExport(where, "episode: of another chat, or its run's second")
        seen.runs.add(line.run_id)
        blob = _vector(line.vector, where, None)
        fields = line.model_dump(exclude={"kind", "vector"}) | {"has_embedding": blob is not None}
        fields["summary"] = episode_summary(line.summary)
        fields["topics"] = episode_labels(line.topics, MAX_TOPICS)
        fields["participants"] = episode_labels(line.participants, MAX_PARTICIPANT_NAMES)
        snap.episodes.append(Episode.model_validate(fields))
        if blob is not None:
            snap.episode_vectors[line.run_id] = blob
    elif isinstance(line, _LinkLine):
        if line.from_card_id not in seen.cards or line.to_card_id not in seen.cards:
            raise InvalidExport(where, "link: to a card the file does not hold")
        snap.links.append(Link.model_validate(line.model_dump(exclude={"kind"})))
    elif isinstance(line, _AuthorLine):
        snap.authors[line.message_id] = line.user_id
    elif isinstance(line, _RunLine):
        snap.runs[line.run_id] = list(line.user_ids)


def _add_card(snap: Snapshot, line: _CardLine, where: str, seen: _Seen) -> None:
    if line.chat_id != snap.chat_id:
        raise InvalidExport(where, f"card: chat_id: a card of another chat than {snap.chat_id}")
    if snap.cards and int(line.id) <= int(snap.cards[-1].id):
        raise InvalidExport(where, f"card {line.id}: cards come once each, by id")
    fault = card_rule_fault(line, seen.card_max_bytes)
    if fault is not None:
        raise InvalidExport(where, f"card {line.id}: {fault[0]}: {fault[1]}")
    blob = _vector(line.vector, where, snap.dimension or None)
    fields = line.model_dump(exclude={"kind", "vector", "history"})
    fields["has_embedding"] = blob is not None
    fields["dedup_hash"] = dedup_hash(
        line.scope_key, line.subject, line.predicate, line.object, line.fact_text
    )
    card = Card.model_validate(fields)
    if card.live:
        other = seen.facts.setdefault(card.dedup_hash, card.id)
        if other != card.id:
            raise InvalidExport(where, f"card {card.id}: the same fact as card {other}, both live")
    seen.cards.add(card.id)
    snap.cards.append(card)
    if blob is not None:
        snap.card_vectors[card.id] = blob
    if line.history:
        snap.histories[card.id] = [CardEvent(**e.model_dump()) for e in line.history]


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
