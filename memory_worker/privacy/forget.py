"""Forgetting (§14), the functional core: what goes when a user or a chat is forgotten.

Pure decisions on plain data, no Redis (the shell is :mod:`memory_worker.upkeep.forgetter`,
the scripts ``cards/lua/forget*.lua`` and ``runs/lua/forget_messages.lua``).

Forgetting **a user in a chat** removes

- every card *about* them (scope ``user:<id>``) or citing **only** their
  messages — live or not (superseded, merged and expired history included) —
  with its vector row (the packed matrix is compacted), dedup entry and links;
- every episode of a run they wrote in;
- their messages inside runs not yet completed (queued, processing, failed, cancelled,
  retired, skipped): the other people's messages stay and are still processed;
  a run left with no message is skipped as ``forgotten``.

Forgetting **a chat** removes all of its memory and every run's messages; runs
not yet completed are skipped as ``forgotten``.

Who wrote a message is known from the card store's ``authors`` hash (message id →
user id, and ``run:<id>`` → the run's authors), written by each run's card
write. A card citing a message of unknown author is kept (memory written before
authors were recorded: only user-scope cards go for it).

The fence against resurrection is the per-chat **forget epoch**: see
:mod:`memory_worker.upkeep.forgetter`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import asdict, astuple, dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

import orjson

from memory_worker.errors import ForgetInputError

T = TypeVar("T")

#: Statuses of a run whose messages are still stored (completion drops them; a cancelled run
#: keeps them for a replay by id, §13, so a forget strips them too).
OPEN_STATUSES = frozenset({"queued", "processing", "failed", "skipped", "cancelled"})
#: Statuses a forget moves to ``skipped`` (reason ``forgotten``).
SKIPPABLE_STATUSES = frozenset({"queued", "processing", "failed", "cancelled"})
FORGOTTEN = "forgotten"


# --- the request -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ForgetScope:
    """A chat, or one user in it."""

    chat_id: int
    user_id: int | None = None

    @property
    def kind(self) -> str:
        return "chat" if self.user_id is None else "user"


def parse_scope(chat: object, user: object) -> ForgetScope:
    """The scope of a CLI/API request, or :class:`ForgetInputError` with one clear line."""
    if chat is None or (isinstance(chat, str) and not chat.strip()):
        if user is not None:
            raise ForgetInputError("--user needs --chat: a user is forgotten within one chat")
        raise ForgetInputError("--chat is required")
    chat_id = _integer(chat, "--chat")
    user_id = None if user is None else _integer(user, "--user")
    return ForgetScope(chat_id, user_id)


#: Every id the store keeps is a signed 64-bit int (``memory_worker.models.Id``).
_ID_RANGE = range(-(2**63), 2**63)


def _integer(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ForgetInputError(f"{name} must be an integer id")
    if isinstance(value, int):
        number = value
    else:
        try:
            number = int(value.strip())
        except ValueError:
            raise ForgetInputError(f"{name} must be an integer id, got {value!r}") from None
    if number not in _ID_RANGE:
        raise ForgetInputError(f"{name} must be a signed 64-bit integer id, got {number}")
    return number


# --- the answer --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ForgetCounts:
    """What went (or, in a dry run, would go)."""

    cards: int = 0
    vectors: int = 0
    episodes: int = 0
    links: int = 0
    runs: int = 0
    messages: int = 0

    def __add__(self, other: ForgetCounts) -> ForgetCounts:
        return ForgetCounts(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """One forget: its scope, counts, and the audit facts (no content)."""

    chat_id: int
    user_id: int | None
    dry_run: bool
    counts: ForgetCounts
    actor: str = "api"
    host: str = ""
    at_ms: int = 0
    epoch: int = 0

    @property
    def scope(self) -> str:
        return "chat" if self.user_id is None else "user"

    @property
    def cards(self) -> int:
        return self.counts.cards

    @property
    def vectors(self) -> int:
        return self.counts.vectors

    @property
    def episodes(self) -> int:
        return self.counts.episodes

    @property
    def links(self) -> int:
        return self.counts.links

    @property
    def runs(self) -> int:
        return self.counts.runs

    @property
    def messages(self) -> int:
        return self.counts.messages

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "chat_id": self.chat_id,
            "user_id": self.user_id,
            "scope": self.scope,
            "dry_run": self.dry_run,
            "actor": self.actor,
            "host": self.host,
            "at_ms": self.at_ms,
            "epoch": self.epoch,
        }
        data.update(asdict(self.counts))
        return data


# --- cards, links, episodes --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredCard:
    """What the plan needs of a stored card (read from its JSON: no text kept)."""

    id: str
    sk: str
    sources: tuple[int, ...]
    updated: str
    has_row: bool

    @classmethod
    def from_json(cls, raw: bytes | str) -> StoredCard:
        data = orjson.loads(raw)
        sources = tuple(int(s) for s in str(data.get("src") or "").split(",") if s)
        return cls(
            id=str(data["id"]),
            sk=str(data.get("sk") or ""),
            sources=sources,
            updated=str(data.get("updated") or ""),
            has_row=bool(data.get("row")),
        )


def card_goes(card: StoredCard, user_id: int, authors: Mapping[int, int]) -> bool:
    """A card about ``user_id`` (their scope) or citing only messages they wrote."""
    if card.sk == f"user:{user_id}":
        return True
    return bool(card.sources) and all(authors.get(m) == user_id for m in card.sources)


def doomed_cards(
    cards: Iterable[StoredCard], user_id: int, authors: Mapping[int, int]
) -> list[StoredCard]:
    """The cards forgetting ``user_id`` removes, by id."""
    gone = [c for c in cards if card_goes(c, user_id, authors)]
    return sorted(gone, key=lambda c: int(c.id) if c.id.isdigit() else 0)


def doomed_links(fields: Iterable[str], card_ids: Iterable[str]) -> list[str]:
    """Link fields (``from|relation|to``) with an end among ``card_ids``."""
    ids = set(card_ids)
    out = []
    for name in fields:
        source, _, rest = name.partition("|")
        target = rest.rpartition("|")[2]
        if source in ids or target in ids:
            out.append(name)
    return sorted(out)


def parse_authors(raw: Mapping[str, str]) -> tuple[dict[int, int], dict[str, frozenset[int]]]:
    """The ``authors`` hash → (message id → user id, run id → its authors)."""
    messages: dict[int, int] = {}
    runs: dict[str, frozenset[int]] = {}
    for name, value in raw.items():
        if name.startswith("run:"):
            runs[name[4:]] = frozenset(int(u) for u in value.split(",") if u)
        elif name.lstrip("-").isdigit() and value.lstrip("-").isdigit():
            messages[int(name)] = int(value)
    return messages, runs


def doomed_episodes(
    episode_runs: Iterable[str], run_authors: Mapping[str, frozenset[int]], user_id: int
) -> list[str]:
    """Runs whose episode goes: the user wrote in the run."""
    return sorted(r for r in episode_runs if user_id in run_authors.get(r, frozenset()))


def doomed_author_fields(
    messages: Mapping[int, int], runs: Mapping[str, frozenset[int]], user_id: int
) -> list[str]:
    """``authors`` fields naming the user's messages, and the runs they wrote in."""
    fields = [str(m) for m, u in messages.items() if u == user_id]
    fields += [f"run:{r}" for r, users in runs.items() if user_id in users]
    return sorted(fields)


def author_fields(
    run_id: str, messages: Iterable[tuple[int, int]], cited: Set[int] | None = None
) -> list[str]:
    """The ``authors`` entries a run's card write records (a flat field/value list).

    ``message id → user id`` for the messages its cards cite (all when ``cited`` is None:
    only cited ones can decide a card's fate, so the hash grows with the cards, not with
    the chat), and ``run:<id>`` → every author of the run (its episode's people).
    """
    flat: list[str] = []
    users: set[int] = set()
    for message_id, user_id in messages:
        if cited is None or message_id in cited:
            flat += [str(message_id), str(user_id)]
        users.add(user_id)
    if users:
        flat += [f"run:{run_id}", ",".join(str(u) for u in sorted(users))]
    return flat


# --- runs --------------------------------------------------------------------------------------


class RunAction(StrEnum):
    STRIP = "strip"  # the user's messages leave; the run stays as it is
    SKIP = "skip"  # every message leaves; a run not yet completed becomes skipped


@dataclass(frozen=True, slots=True)
class RunChange:
    """What a forget does to one run (``messages`` b"" = the field is deleted)."""

    run_id: str
    status: str
    prompt_version: str
    action: RunAction
    messages: bytes
    message_count: int
    removed: int
    #: sha1 (hex) of the stored messages the change was planned from ('' = none stored).
    expected: str = ""


def sha1_hex(data: bytes | None) -> str:
    return hashlib.sha1(data).hexdigest() if data else ""


def plan_run(run_id: str, fields: Mapping[str, bytes], user_id: int | None) -> RunChange | None:
    """The change forgetting ``user_id`` (None: the whole chat) makes to one run, if any."""
    status = (fields.get("status") or b"").decode()
    raw = fields.get("messages")
    if status not in OPEN_STATUSES:
        return None  # completed runs no longer hold messages
    pv = (fields.get("prompt_version") or b"").decode()
    messages: list[dict[str, Any]] = orjson.loads(raw) if raw else []
    expected = sha1_hex(raw)
    if user_id is None:
        if raw is None and status == "skipped":
            return None
        return RunChange(run_id, status, pv, RunAction.SKIP, b"", 0, len(messages), expected)
    kept = [m for m in messages if m.get("user_id") != user_id]
    return _change(run_id, status, pv, messages, kept, expected)


def plan_restrict(run_id: str, fields: Mapping[str, bytes], allowed: Set[int]) -> RunChange | None:
    """Keep only the messages ``allowed`` (by id) in one run — a continuation enqueued
    while a forget stripped its parent keeps just what the parent still holds."""
    status = (fields.get("status") or b"").decode()
    raw = fields.get("messages")
    if status not in OPEN_STATUSES or raw is None:
        return None
    messages: list[dict[str, Any]] = orjson.loads(raw)
    kept = [m for m in messages if m.get("message_id") in allowed]
    pv = (fields.get("prompt_version") or b"").decode()
    return _change(run_id, status, pv, messages, kept, sha1_hex(raw))


def _change(
    run_id: str,
    status: str,
    pv: str,
    messages: Sequence[Mapping[str, Any]],
    kept: Sequence[Mapping[str, Any]],
    expected: str,
) -> RunChange | None:
    removed = len(messages) - len(kept)
    if removed == 0:
        return None
    if not kept:
        return RunChange(run_id, status, pv, RunAction.SKIP, b"", 0, removed, expected)
    return RunChange(
        run_id, status, pv, RunAction.STRIP, orjson.dumps(kept), len(kept), removed, expected
    )


# --- chunking ----------------------------------------------------------------------------------


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """``items`` in slices of at most ``size`` (at least one item each)."""
    step = max(1, size)
    for start in range(0, len(items), step):
        yield items[start : start + step]


# --- the vector compaction (Python twin of cards/lua/forget.lua's row removal) ------------------


@dataclass
class PackedRows:
    """A chat's packed vectors as plain data: row bytes, ``id|scope`` entries, mask, card rows."""

    dim: int
    vec: bytes
    entries: list[str]
    mask: bytes
    rows: dict[str, int] = field(default_factory=dict)

    def remove(self, card_id: str) -> bool:
        """Swap-remove the card's row: the last row moves into the hole; False when it had none."""
        p = self.rows.pop(card_id, None)
        last = len(self.entries) - 1
        if p is None or p > last:
            return False
        dim = self.dim
        if p < last:
            entry = self.entries[last]
            moved = entry.partition("|")[0]
            vec = bytearray(self.vec)
            vec[p * dim : (p + 1) * dim] = vec[last * dim : (last + 1) * dim]
            mask = bytearray(self.mask)
            mask[p] = mask[last]
            self.vec, self.mask = bytes(vec), bytes(mask)
            self.entries[p] = entry
            self.rows[moved] = p
        self.entries.pop()
        self.vec = self.vec[: len(self.entries) * dim]
        self.mask = self.mask[: len(self.entries)]
        return True


@dataclass(frozen=True)
class PackedStrings:
    """The strings and counters the trim and unlink scripts change, as plain data."""

    vec: bytes = b""
    mask: bytes = b""
    rows: int = 0  # LLEN of the ``id|scope`` list
    version: int = 0  # ``vecver``
    rewrites: int = 0  # ``vecrw``


def trim_set(
    state: PackedStrings, version: str, rows: int, vec: bytes, mask: bytes
) -> tuple[PackedStrings, bool]:
    """Twin of ``cards/lua/forget_trim.lua``: store the cut bytes only if nothing moved."""
    if str(state.version) != version or state.rows != rows:
        return state, False
    cut = PackedStrings(vec, mask, state.rows, state.version + 1, state.rewrites + 1)
    return cut, True


def unlink_chunk(
    existing: Set[str], counters: tuple[int, int], doomed: Sequence[str]
) -> tuple[set[str], tuple[int, int], int]:
    """Twin of ``cards/lua/forget_unlink.lua``: the keys left, ``(vecver, vecrw)`` bumped
    (every reader's cached matrix is rebuilt), how many of ``doomed`` existed."""
    gone = len(set(doomed) & existing)
    return set(existing) - set(doomed), (counters[0] + 1, counters[1] + 1), gone
