"""What a stored card and episode may hold (§10): one rule for every writer.

A run's validation (:mod:`memory_worker.consolidation.validation`), a correction
(:func:`memory_worker.cards.corrections.check_fact`) and an import
(:mod:`memory_worker.cards.export_format`) all ask these, so no writer keeps a copy:

- a card's **text** (:func:`text_problem`): Unicode text UTF-8 holds, a fact that is not blank, at most
  ``MEMORY_CARD_MAX_BYTES`` of UTF-8, subject/predicate/object at most
  :data:`FIELD_MAX_BYTES`, and no secret in any of the four
  (:func:`~memory_worker.privacy.masking.contains_secret`: a card never holds one, §14);
- its **type** is one of :data:`CARD_TYPES`; its **scores** (confidence, salience) are
  finite and in [0, 1] (:func:`score_problem`);
- an **episode**'s summary and labels are masked and bounded as a run writes them
  (:func:`episode_summary`, :func:`episode_labels`).

Pure: no Redis, no clock.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from memory_worker.privacy.masking import contains_secret, mask

CARD_TYPES = frozenset(
    {
        "preference",
        "identity",
        "project",
        "decision",
        "relationship",
        "recurring_topic",
        "joke",
        "warning",
        "technical_fact",
        "event",
    }
)
#: Longest subject, predicate and object kept (bytes of UTF-8).
FIELD_MAX_BYTES = 256
#: An episode's summary (characters), its topics and participant names (how many, and the
#: characters of each).
SUMMARY_MAX_CHARS = 4000
MAX_TOPICS = 20
MAX_PARTICIPANT_NAMES = 50
LABEL_MAX_CHARS = 200


def is_text(text: str) -> bool:
    """Whether ``text`` is Unicode text UTF-8 can hold (a Python str may carry a lone
    surrogate, which nothing stored or sent can)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def too_long(text: str, limit: int) -> bool:
    return len(text.encode()) > limit


def text_fault(
    fact: str, subject: str, predicate: str, obj: str, *, max_bytes: int
) -> tuple[str, str] | None:
    """The first field of a card's text that may not be stored, and why (``not_text``: a
    lone surrogate no UTF-8 holds, ``empty``, ``too_long``, ``secret``); None when all four
    may."""
    fields = (("fact_text", fact), ("subject", subject), ("predicate", predicate), ("object", obj))
    for name, text in fields:
        if not is_text(text):
            return name, "not_text"
    if not fact.strip():
        return "fact_text", "empty"
    for name, text in fields:
        if too_long(text, max_bytes if name == "fact_text" else FIELD_MAX_BYTES):
            return name, "too_long"
    for name, text in fields:
        if contains_secret(text):
            return name, "secret"
    return None


def text_problem(
    fact: str, subject: str, predicate: str, obj: str, *, max_bytes: int
) -> str | None:
    """Why a card's text may not be stored — ``not_text``, ``empty``, ``too_long`` or
    ``secret`` — or None."""
    fault = text_fault(fact, subject, predicate, obj, max_bytes=max_bytes)
    return None if fault is None else fault[1]


def score_problem(value: float) -> str | None:
    """A confidence or salience: a finite number from 0 to 1."""
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return "not a number from 0 to 1"
    return None


def episode_summary(text: str) -> str:
    """An episode's summary as stored: secrets masked, bounded."""
    return mask(text)[:SUMMARY_MAX_CHARS]


def episode_labels(values: Iterable[str], limit: int) -> list[str]:
    """An episode's topics or participant names as stored: one per case-folded value,
    masked, each bounded, at most ``limit``."""
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        folded = value.casefold()
        if folded not in seen:
            seen.add(folded)
            out.append(mask(value)[:LABEL_MAX_CHARS])
    return out[:limit]


#: The largest card id: the chat's counter (``seq``) is an ``INCR`` counter, and Lua reads
#: numbers as doubles, exact up to 2^53 − 1 — so a counter at the largest id still counts on.
CARD_ID_MAX = 2**53 - 1
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_RELATION = re.compile(r"[a-z][a-z_]{0,63}")
#: The most observations a card counts.
OBSERVATIONS_MAX = 2**31 - 1


def card_id_problem(value: str) -> str | None:
    """A card id: canonical decimal digits, from 1 to :data:`CARD_ID_MAX`."""
    if not value.isascii() or not value.isdigit() or value.startswith("0"):
        return "not a card id (decimal digits, no leading zero)"
    if len(value) > len(str(CARD_ID_MAX)) or int(value) > CARD_ID_MAX:
        return f"a card id from 1 to {CARD_ID_MAX}"
    return None


def run_id_problem(value: str) -> str | None:
    """A run id: 1 to 64 of ``A-Z a-z 0-9 _ . -`` (no ``{``, ``}``, ``:`` or space: it is
    part of a key name), starting with a letter or digit."""
    if _RUN_ID.fullmatch(value) is None:
        return "not a run id (1 to 64 letters, digits, '_', '.', '-')"
    return None


def relation_problem(value: str) -> str | None:
    """A link's relation: 1 to 64 lower-case letters and ``_`` (it is part of a field name)."""
    if _RELATION.fullmatch(value) is None:
        return "not a relation (1 to 64 of a-z and '_')"
    return None
