"""A chat's card keys as plain data, and the Python twins of ``lua/helpers.lua``'s writes.

The operator scripts (``retract.lua``, ``correct.lua``, ``remember.lua``, ``fill.lua``,
``import.lua``) are built from the helpers every card script shares: :func:`retire`,
:func:`withdraw`, :func:`index_live`, :func:`set_vector`, :func:`record_retraction`,
:func:`history_add`, :func:`create_card`, :func:`observe_again` (the last two also make a run's new and
observed cards in ``apply.lua``). Their twins here act on a :class:`ChatState` — the keys those
scripts touch, each as the value Redis holds (a stored card is its dict of strings) — so
each script's twin (:mod:`memory_worker.cards.corrections`,
:mod:`memory_worker.cards.export_format`) is a pure function that the equivalence tests
run beside the real script. Pure: no Redis, no clock.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from memory_worker.keys import HISTORY_MAX_EVENTS


def num(value: str | None) -> float:
    """Lua's ``tonumber(s) or 0``."""
    try:
        return float(value) if value else 0.0
    except ValueError:
        return 0.0


def blank(value: str | None) -> bool:
    return value is None or value == ""


def maxs(a: str | None, b: str | None) -> str | None:
    """The larger of two numeric strings (a blank one loses), as ``helpers.lua`` keeps it."""
    if blank(a):
        return b
    if blank(b):
        return a
    return a if num(a) >= num(b) else b


def mins(a: str | None, b: str | None) -> str | None:
    """The smaller of two numeric strings (a blank one loses), as ``helpers.lua`` keeps it."""
    if blank(a):
        return b
    if blank(b):
        return a
    return a if num(a) <= num(b) else b


def exp_merge(a: str | None, b: str | None) -> str:
    """Expiry of two facts as one: the durable one wins ('' = never expires)."""
    if blank(a) or blank(b):
        return ""
    return maxs(a, b) or ""


def union(a: str | None, b: str | None) -> str:
    """Two comma lists of message ids as one, numerically sorted, the last 64 kept."""
    seen: dict[str, None] = {}
    for s in f"{a or ''},{b or ''}".split(","):
        if s:
            seen.setdefault(s)
    return ",".join(sorted(seen, key=num)[-64:])


def is_live(card: dict[str, str] | None) -> bool:
    return card is not None and card.get("status") in ("active", "competing")


#: What ``create_card`` copies of a write's fact (the plan's keys of a card).
_CREATED = (
    "scope",
    "sk",
    "thread",
    "user",
    "type",
    "subject",
    "predicate",
    "object",
    "fact",
    "conf",
    "sal",
    "dur",
    "vf",
    "obs_at",
    "exp",
    "src",
    "h",
)


@dataclass
class ChatState:
    """The keys of one chat's memory the operator scripts read and write, as values."""

    cards: dict[str, dict[str, str]] = field(default_factory=dict)
    seq: int = 0
    dedup: dict[str, str] = field(default_factory=dict)
    scopes: set[str] = field(default_factory=set)
    #: ``active:<sk>`` zsets: scope key → card id → score (an empty zset does not exist).
    active: dict[str, dict[str, float]] = field(default_factory=dict)
    expiry: dict[str, float] = field(default_factory=dict)
    retracted: dict[str, str] = field(default_factory=dict)
    vecids: list[str] = field(default_factory=list)
    vec: bytes = b""
    vecmask: bytes = b""
    vecver: int = 0
    vecrw: int = 0
    meta: dict[str, str] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    authors: dict[str, str] = field(default_factory=dict)
    #: ``episode:<run>`` hashes and the ``episodes`` zset (run id → window end).
    episodes: dict[str, dict[str, bytes]] = field(default_factory=dict)
    episode_index: dict[str, float] = field(default_factory=dict)
    #: The chat's forget epoch (§14; read by the writes a forget fences).
    forget: int = 0
    #: The forgets of the chat in progress (``forgetting``: token → start), whose tokens
    #: begin with the scope forgotten (``chat`` or ``user:<id>``).
    forgetting: dict[str, str] = field(default_factory=dict)
    #: ``vecwait``: remembered cards waiting for a vector (card id → since, ms).
    vecwait: dict[str, float] = field(default_factory=dict)
    #: ``history``: card id → its events (each a dict of strings, as decoded from the JSON
    #: lines stored; :mod:`memory_worker.cards.history`).
    history: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    def copy(self) -> ChatState:
        return copy.deepcopy(self)


class Write:
    """One script call's writes on a state (the helpers' shared locals: ``now``, the model,
    whether the vectors changed, how many were refused)."""

    def __init__(
        self,
        state: ChatState,
        now: str,
        model: str = "",
        *,
        cause: dict[str, str] | None = None,
        history_max: int = HISTORY_MAX_EVENTS,
    ) -> None:
        self.state = state
        self.now = now
        self.model = model
        self.vec_changed = False
        self.refused = 0
        #: What caused this write's changes (the script's ``cause``: via, by, run, req).
        self.cause = dict(cause or {})
        self.history_max = max(2, history_max)

    def history_add(self, card_id: str, kind: str, other: str | None = None) -> None:
        """Twin of ``history_add``: an event appended to the card's history (its first and
        newest ``history_max - 1`` kept)."""
        event = {"k": kind, "at": self.now}
        event |= {k: v for k, v in self.cause.items() if not blank(v)}
        if not blank(other):
            assert other is not None
            event["card"] = other
        events = [*self.state.history.get(card_id, []), event]
        if len(events) > self.history_max:
            events = [events[0], *events[len(events) - self.history_max + 1 :]]
        self.state.history[card_id] = events

    def save(self, card: dict[str, str]) -> None:
        self.state.cards[card["id"]] = card

    def zrem_active(self, sk: str, card_id: str) -> None:
        members = self.state.active.get(sk)
        if members is not None:
            members.pop(card_id, None)
            if not members:
                del self.state.active[sk]

    def set_mask(self, row: int, flag: bytes) -> None:
        mask = bytearray(self.state.vecmask)
        if len(mask) <= row:
            mask.extend(bytes(row + 1 - len(mask)))
        mask[row : row + 1] = flag
        self.state.vecmask = bytes(mask)

    def create_card(self, n: dict[str, str]) -> dict[str, str]:
        """Twin of ``create_card``: a new live card of the fact ``n``, the chat's next id."""
        self.state.seq += 1
        card = {k: n[k] for k in _CREATED if k in n}
        card |= {"id": str(self.state.seq), "obs": "1", "status": "active"}
        card |= {"created": self.now, "updated": self.now}
        return card

    def observe_again(self, card: dict[str, str], n: dict[str, str]) -> None:
        """Twin of ``observe_again``: a live card observed again by a write of its fact."""
        for key, keep in (("conf", maxs), ("sal", maxs), ("vf", mins), ("obs_at", maxs)):
            value = keep(card.get(key), n.get(key))
            if value is None:
                card.pop(key, None)
            else:
                card[key] = value
        card["obs"] = str(int(num(card.get("obs")) + 1))
        card["exp"] = exp_merge(card.get("exp"), n.get("exp"))
        card["src"] = union(card.get("src"), n.get("src"))
        card["updated"] = self.now

    def retire(self, card: dict[str, str], status: str) -> None:
        """Twin of ``retire``: out of every live index, a final status, stamped ``now``."""
        s = self.state
        self.zrem_active(card["sk"], card["id"])
        if s.dedup.get(card.get("h", "")) == card["id"]:
            del s.dedup[card["h"]]
        s.expiry.pop(card["id"], None)
        if not blank(card.get("row")):
            self.set_mask(int(num(card["row"])), b"\0")
            self.vec_changed = True
        card["status"] = status
        card["retracted"] = self.now
        card["updated"] = self.now

    def withdraw(self, card: dict[str, str]) -> None:
        """Twin of ``withdraw``: a withdrawn fact's row is marked 2 (matched by meaning)."""
        if not blank(card.get("row")):
            self.set_mask(int(num(card["row"])), b"\2")

    def index_live(self, card: dict[str, str]) -> None:
        """Twin of ``index_live``."""
        s = self.state
        s.active.setdefault(card["sk"], {})[card["id"]] = num(card.get("obs_at"))
        s.scopes.add(card["sk"])
        s.dedup[card["h"]] = card["id"]
        if blank(card.get("exp")):
            s.expiry.pop(card["id"], None)
        else:
            s.expiry[card["id"]] = num(card["exp"])

    def record_retraction(self, h: str | None) -> None:
        """Twin of ``record_retraction``."""
        if blank(h):
            return
        assert h is not None
        self.state.retracted[h] = maxs(self.state.retracted.get(h, ""), self.now) or ""

    def set_vector(self, card: dict[str, str], blob: bytes | None, own: bool = False) -> None:
        """Twin of ``set_vector``: the chat's first vector fixes its space; another
        dimension or model is refused (counted)."""
        if not blob:
            return
        s = self.state
        dim = int(num(s.meta.get("dim")))
        if dim == 0:
            dim = len(blob)
            s.meta["dim"] = str(dim)
            if self.model:
                s.meta["model"] = self.model
        if len(blob) != dim:
            self.refused += 1
            return
        if not own:
            have = s.meta.get("model", "")
            if have == "":
                if self.model:
                    s.meta["model"] = self.model
            elif have != self.model:
                self.refused += 1
                return
        if blank(card.get("row")):
            s.vecids.append(f"{card['id']}|{card['sk']}")
            card["row"] = str(len(s.vecids) - 1)
        else:
            s.vecrw += 1
        row = int(card["row"])
        vec = bytearray(s.vec)
        if len(vec) < (row + 1) * dim:
            vec.extend(bytes((row + 1) * dim - len(vec)))
        vec[row * dim : (row + 1) * dim] = blob
        s.vec = bytes(vec)
        flag = b"\2" if card.get("status") == "retracted" else b"\0"
        self.set_mask(row, b"\1" if is_live(card) else flag)
        if not own:
            card.pop("vp", None)
        self.vec_changed = True

    def finish(self) -> None:
        """``if vec_changed then INCR VECVER``."""
        if self.vec_changed:
            self.state.vecver += 1
