"""The values of a chat's card hashes as the card scripts read them (pure).

``lua/helpers.lua`` reads a stored number as ``tonumber`` does, an empty field as absent, and
merges two cards' bounds, expiries and lists the way these helpers do: :func:`num`,
:func:`blank`, :func:`maxs`/:func:`mins`, :func:`exp_merge`, :func:`union`, :func:`is_live`.
The plans that decide what a script writes use them, and so do the scripts' Python twins,
which live with the tests (``tests/support/lua_twins.py``) and are run beside the real
scripts by the equivalence suites.
"""

from __future__ import annotations


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
