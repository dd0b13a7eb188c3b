"""The Python twins of the card store's Lua scripts, for the script-equivalence suites.

A twin acts on a :class:`ChatState` — the keys a script touches, each as the value Redis holds
(a stored card is its dict of strings) — through :class:`Write`, whose methods are the twins of
``lua/helpers.lua``'s shared writes (``retire``, ``withdraw``, ``index_live``, ``set_vector``,
``record_retraction``, ``history_add``, ``create_card``, ``observe_again``). Each script's twin
(:func:`retract_twin`, :func:`correct_twin`, :func:`remember_twin`, :func:`fill_twin`,
:func:`import_twin`) is a pure function the equivalence tests run beside the real script with
the same random sequences. They live with the tests: the package ships only the scripts and
the pure plans both sides share (:mod:`memory_worker.cards.import_plan`,
:mod:`memory_worker.cards.remember`, :mod:`memory_worker.cards.corrections`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from memory_worker.cards.chat_state import blank, exp_merge, is_live, maxs, mins, num, union
from memory_worker.cards.codec import card_plan
from memory_worker.cards.corrections import CorrectionPlan, Outcome, relearn_refused
from memory_worker.cards.remember import Filled, FillItem, Remembered, RememberPlan
from memory_worker.keys import HISTORY_MAX_EVENTS

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
#: What a correction keeps of the card it corrects (``correct.lua`` copies the same).
_KEPT = (
    "scope",
    "sk",
    "thread",
    "user",
    "type",
    "subject",
    "predicate",
    "sal",
    "dur",
    "exp",
    "src",
)
#: The largest string Redis stores (``proto-max-bulk-len``'s default): the packed vectors.
VEC_MAX_BYTES = 512 * 1024 * 1024


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


def remember_twin(
    state: ChatState,
    plan: RememberPlan,
    blob: bytes | None,
    *,
    now: str,
    history_max: int = HISTORY_MAX_EVENTS,
) -> tuple[ChatState, Remembered]:
    """Twin of ``lua/remember.lua`` (the state after, and the answer)."""
    state = state.copy()
    n = card_plan(plan.card, None)
    for token in state.forgetting:
        if token.split("|")[0] in ("chat", n["sk"]):
            return state, Remembered(forgetting=True)
    if state.forget > num(str(plan.epoch)):
        return state, Remembered(forgotten=True)
    write = Write(state, now)
    card = state.cards.get(state.dedup.get(n["h"], ""))
    if not is_live(card) and plan.known is not None:
        known = state.cards.get(plan.known[0]) or {}
        if is_live(known) and known.get("h") == plan.known[1] and known.get("sk") == n["sk"]:
            card = known
    created = False
    if card is not None and is_live(card):
        write.observe_again(card, n)
    else:
        card = write.create_card(n)
        card["op_by"] = plan.actor
        created = True
    if (blank(card.get("row")) or card.get("vp")) and blob is not None:
        write.model = plan.model
        write.set_vector(card, blob)
    if blank(card.get("row")):
        write.model = ""
        dim = int(num(state.meta.get("dim"))) or plan.dim
        write.set_vector(card, bytes(dim), own=True)
        if not blank(card.get("row")):
            card["vp"] = "1"
    if card.get("vp"):
        state.vecwait.setdefault(card["id"], num(now))
    else:
        state.vecwait.pop(card["id"], None)
    write.index_live(card)
    write.save(card)
    write.cause = {"via": "remember", "by": plan.actor, "req": plan.request_id}
    write.history_max = max(2, history_max)
    write.history_add(card["id"], "created" if created else "observed")
    state.retracted.pop(n["h"], None)
    write.finish()
    return state, Remembered(
        card_id=card["id"],
        created=created,
        pending=card.get("vp") == "1",
        refused=write.refused,
    )


def fill_twin(
    state: ChatState, items: Sequence[FillItem], model: str, *, now: str
) -> tuple[ChatState, Filled]:
    """Twin of ``lua/fill_vectors.lua`` (the state after, and the answer)."""
    state = state.copy()
    write = Write(state, now, model)
    filled = dropped = kept = 0
    for item in items:
        card = state.cards.get(item.card_id)
        if card is None or not is_live(card) or not card.get("vp"):
            state.vecwait.pop(item.card_id, None)
            dropped += 1
        elif card.get("h") == item.h and item.vector:
            write.set_vector(card, item.vector)
            if card.get("vp"):
                kept += 1
            else:
                write.save(card)
                state.vecwait.pop(item.card_id, None)
                filled += 1
        else:
            kept += 1
    write.finish()
    return state, Filled(filled=filled, dropped=dropped, kept=kept, refused=write.refused)


def retract_twin(
    state: ChatState,
    card_id: str,
    *,
    actor: str,
    reason: str,
    now: str,
    request_id: str = "",
    history_max: int = HISTORY_MAX_EVENTS,
) -> tuple[ChatState, Outcome]:
    """Twin of ``lua/retract.lua`` (the state after, and the answer)."""
    state = state.copy()
    card = state.cards.get(card_id)
    if card is None:
        return state, Outcome(found=False)
    was = card["status"]
    if was == "retracted":
        return state, Outcome(found=True, status=was, card_id=card["id"])
    cause = {"via": "retract", "by": actor, "req": request_id}
    write = Write(state, now, cause=cause, history_max=history_max)
    write.retire(card, "retracted")
    write.withdraw(card)
    card["ret_by"], card["ret_why"] = actor, reason
    write.save(card)
    write.history_add(card["id"], "retracted")
    write.record_retraction(card.get("h"))
    write.finish()
    return state, Outcome(found=True, done=True, status=was, card_id=card["id"])


def correct_twin(
    state: ChatState,
    card_id: str,
    plan: CorrectionPlan,
    blob: bytes | None,
    *,
    now: str,
    history_max: int = HISTORY_MAX_EVENTS,
) -> tuple[ChatState, Outcome]:
    """Twin of ``lua/correct.lua`` (the state after, and the answer)."""
    state = state.copy()
    old = state.cards.get(card_id)
    if old is None:
        return state, Outcome(found=False)
    if not is_live(old):
        return state, Outcome(found=True, status=old["status"])
    if plan.h == old.get("h"):
        return state, Outcome(found=True, status=old["status"], card_id=old["id"])
    cause = {"via": "correct", "by": plan.actor, "req": plan.request_id}
    write = Write(state, now, plan.model, cause=cause, history_max=history_max)
    holder = state.cards.get(state.dedup.get(plan.h, ""))
    created = False
    if not is_live(holder):
        state.seq += 1
        new = {"id": str(state.seq), "object": plan.object, "fact": plan.fact}
        new |= {k: old[k] for k in _KEPT if k in old}
        new |= dict.fromkeys(("vf", "obs_at", "created", "updated"), now)
        new |= {"conf": "1.0000", "obs": "1", "status": "active", "h": plan.h}
        new |= {"op_by": plan.actor, "corrects": old["id"]}
        if blob is not None:
            write.set_vector(new, blob)
        write.index_live(new)
        write.save(new)
        holder, created = new, True
        write.history_add(new["id"], "created", old["id"])
    else:
        assert holder is not None
        write.history_add(holder["id"], "supersedes", old["id"])
    write.retire(old, "superseded")
    write.withdraw(old)
    old["vu"], old["sup_by"] = now, holder["id"]
    write.save(old)
    write.history_add(old["id"], "corrected", holder["id"])
    state.retracted.pop(plan.h, None)
    write.record_retraction(old.get("h"))
    write.finish()
    return state, Outcome(
        found=True,
        done=True,
        status="active",
        card_id=holder["id"],
        created=created,
        refused=write.refused,
    )
