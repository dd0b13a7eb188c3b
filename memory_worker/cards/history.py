"""A card's history (§13) and memory as it stood at a past moment, the functional core.

**History.** Every script that changes a card appends an event to the card's history in
the same atomic call (``history_add`` in ``lua/helpers.lua``): the chat's ``history`` hash,
card id → its events, one JSON object a line (appended without decoding the others: a run
observing 50 cards with full histories costs its script ~1 ms more), each a flat object of
strings:

=========  ====================================================================
``k``      the kind (:class:`EventKind`)
``at``     when, epoch ms (the script's ``now``)
``via``    what made the change: ``run``, ``remember``, ``correct``, ``retract``,
           ``import``, ``maintenance``
``by``     the actor (``remember``/``correct``/``retract``/import's actor;
           ``worker`` for a run, ``maintenance`` for a fold or an expiry)
``run``    the run's id (a run's change)
``req``    the caller's request id (``request_id=`` of remember/correct/retract)
``card``   the other card (superseded by, supersedes, corrected by, merged into…)
=========  ====================================================================

No event holds text: a card's text is its own (masked by the card rules), a retraction's
reason stays on the card. A history keeps its first event (how the card began) and the
newest ``MEMORY_CARD_HISTORY_MAX_EVENTS - 1``. It goes with its card: a forget removes both.

The stored value is read across a trust boundary (anything may sit in Redis):
:func:`decode_events` never raises — a line that is not a well-formed event is skipped
(counted).

A card written before histories were kept, or imported (its history starts at the import),
lacks the events of what its own fields record; :func:`card_history` adds them, marked
``derived``: its creation (``created_at``, its first run or who asserted it) and its end
(``retracted_at`` with its status: superseded, retracted, merged, expired).

**As of.** :func:`live_as_of` — the memory at a moment ``T``: a card created at or before
``T`` and not yet retired at ``T`` (superseded, corrected, retracted, merged or expired:
``retracted_at`` later than ``T``, or still live), not past its expiry at ``T``. This is
when the *memory* held a fact, not when the fact was true (``valid_from``/``valid_until``,
what ``since``/``until`` ask). A card's text rewritten since ``T`` is read as it is now.
Pure: no Redis, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict

from memory_worker.cards.codec import from_ms, to_ms
from memory_worker.cards.model import Card, CardStatus


class EventKind(StrEnum):
    """What happened to a card."""

    #: It began: by a run, ``remember``, ``correct`` (``card`` = the card it corrects).
    CREATED = "created"
    #: A run or ``remember`` stated its fact again.
    OBSERVED = "observed"
    #: A newer card (``card``) superseded it.
    SUPERSEDED = "superseded"
    #: It superseded an older card (``card``).
    SUPERSEDES = "supersedes"
    #: ``correct`` replaced it by the card ``card``.
    CORRECTED = "corrected"
    #: ``retract`` withdrew it.
    RETRACTED = "retracted"
    #: An import wrote it into this chat.
    IMPORTED = "imported"
    #: It was folded into the card ``card`` (a run's merge, or maintenance).
    MERGED = "merged"
    #: The card ``card`` was folded into it.
    ABSORBED = "absorbed"
    #: Its fact text was rewritten (a run's update, a maintenance merge).
    REWRITTEN = "rewritten"
    #: Its time to live passed.
    EXPIRED = "expired"


class CardEvent(BaseModel):
    """One event of a card's history (see the module doc)."""

    model_config = ConfigDict(frozen=True)

    kind: EventKind
    at: datetime
    #: What made the change (``run``, ``remember``, ``correct``, ``retract``, ``import``,
    #: ``maintenance``; ``''`` for a derived event of unknown cause).
    via: str = ""
    actor: str | None = None
    run_id: str | None = None
    request_id: str | None = None
    #: The other card of the event (its id in the same chat).
    card_id: str | None = None
    #: Read from the card's own fields, not recorded when it happened (see the module doc).
    derived: bool = False


_KINDS = frozenset(k.value for k in EventKind)
#: Longest string of an event's fields read back (the writers bound theirs far below).
_FIELD_MAX = 1000
_TEXT_FIELDS = {
    "via": "via",
    "by": "actor",
    "run": "run_id",
    "req": "request_id",
    "card": "card_id",
}


def decode_event(entry: object) -> CardEvent | None:
    """One stored event, or None when it is not one (a wrong shape, kind or time)."""
    if not isinstance(entry, dict):
        return None
    kind, at = entry.get("k"), entry.get("at")
    if not isinstance(kind, str) or kind not in _KINDS or not isinstance(at, str):
        return None
    if not at.isdigit() or len(at) > 15:
        return None
    values: dict[str, Any] = {}
    for key, attr in _TEXT_FIELDS.items():
        value = entry.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str) or len(value) > _FIELD_MAX:
            return None
        values[attr] = value
    try:
        return CardEvent(kind=EventKind(kind), at=from_ms(at), **values)
    except (ValueError, OverflowError, OSError):
        return None


def decode_events(raw: bytes | str | None) -> tuple[list[CardEvent], int]:
    """A stored history: its well-formed events in stored order, and how many lines were
    skipped (not JSON, not an event). Never raises."""
    if raw is None:
        return [], 0
    data = raw.encode(errors="surrogatepass") if isinstance(raw, str) else bytes(raw)
    events: list[CardEvent] = []
    skipped = 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            event = decode_event(orjson.loads(line))
        except orjson.JSONDecodeError:
            event = None
        if event is None:
            skipped += 1
        else:
            events.append(event)
    return events, skipped


def event_stored(event: CardEvent) -> dict[str, str]:
    """An event as a script stores it (short keys, blank fields left out)."""
    stored = {"k": event.kind.value, "at": to_ms(event.at)}
    for key, attr in _TEXT_FIELDS.items():
        value = getattr(event, attr)
        if value:
            stored[key] = value
    return stored


def encode_events(entries: Iterable[dict[str, str]]) -> bytes:
    """Stored events as a script writes them: one JSON object a line."""
    return b"".join(orjson.dumps(entry) + b"\n" for entry in entries)


#: The event a retired card's status records, when its history holds none of them.
_ENDS = {
    CardStatus.SUPERSEDED: (EventKind.SUPERSEDED, EventKind.CORRECTED),
    CardStatus.RETRACTED: (EventKind.RETRACTED,),
    CardStatus.MERGED: (EventKind.MERGED,),
    CardStatus.EXPIRED: (EventKind.EXPIRED,),
}
_BEGINNINGS = (EventKind.CREATED,)


def card_history(card: Card, stored: Sequence[CardEvent]) -> list[CardEvent]:
    """The card's history, oldest first: the stored events, and (marked ``derived``) the
    beginning and the end its own fields record when the stored ones lack them."""
    events = list(stored)
    kinds = {e.kind for e in events}
    if not kinds & set(_BEGINNINGS):
        events.insert(0, _derived_creation(card))
    ends = _ENDS.get(card.status)
    if ends and not kinds & set(ends) and card.retracted_at is not None:
        other = card.superseded_by or card.merged_into
        events.append(
            CardEvent(
                kind=ends[0],
                at=card.retracted_at,
                actor=card.retracted_by if card.status is CardStatus.RETRACTED else None,
                card_id=other,
                derived=True,
            )
        )
    order = sorted(range(len(events)), key=lambda i: (events[i].at, i))
    return [events[i] for i in order]


def _derived_creation(card: Card) -> CardEvent:
    if card.corrects:
        via = "correct"
    elif card.first_run_id:
        via = "run"
    elif card.asserted_by:
        via = "remember"
    else:
        via = ""
    return CardEvent(
        kind=EventKind.CREATED,
        at=card.created_at,
        via=via,
        actor=card.asserted_by,
        run_id=card.first_run_id,
        card_id=card.corrects,
        derived=True,
    )


# --- as of a moment ---------------------------------------------------------------------------


def live_as_of(card: Card, moment: datetime) -> bool:
    """Whether the memory held ``card`` at ``moment`` (see the module doc)."""
    if card.created_at > moment:
        return False
    if not card.live and (card.retracted_at is None or card.retracted_at <= moment):
        return False
    return card.expires_at is None or card.expires_at > moment


def stored_live_as_of(data: dict[str, str], moment_ms: int) -> bool:
    """:func:`live_as_of` of a stored card's JSON fields (cheap: no :class:`Card` parse)."""
    try:
        if int(data.get("created") or 0) > moment_ms:
            return False
        if data.get("status") not in ("active", "competing"):
            ended = data.get("retracted")
            if not ended or int(ended) <= moment_ms:
                return False
        exp = data.get("exp")
        return not exp or int(exp) > moment_ms
    except ValueError:
        return False


def cards_as_of(cards: Iterable[Card], moment: datetime) -> list[Card]:
    """The cards the memory held at ``moment``, newest observation first."""
    held = [c for c in cards if live_as_of(c, moment)]
    held.sort(key=lambda c: (c.observed_at, int(c.id)), reverse=True)
    return held
