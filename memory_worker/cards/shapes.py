"""The shape of a chat's memory keys, and which of them a store answer found misshapen (§7).

When Redis answers a chat's read or write with "this value is not what the code wrote"
(``WRONGTYPE``, a counter ``INCR`` cannot raise: :class:`~memory_worker.errors.StoreDataCorrupt`),
its reply names no key. :func:`misshapen` says which: each key's role (its name in
:data:`~memory_worker.keys.CHAT_SCRIPT_KEYS`, ``active:<scope>``, ``episode``), the Redis
type it holds and, for a counter, its value, checked against the types the card scripts
write (:data:`KEY_TYPES`). The answer names roles and types, never a stored value (the
values are chat text). :func:`read_shapes` is the shell: two round trips over one chat's
keys (one hash slot, so a cluster pipeline stays on one node).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llm_client import as_text
from memory_worker.keys import CHAT_SCRIPT_KEYS, Keys

#: The Redis types the card scripts write to each of a chat's fixed keys (a missing key,
#: ``none``, is always fine). ``runs`` was a set before applied runs had a time.
KEY_TYPES: Mapping[str, frozenset[str]] = {
    "cards": frozenset({"hash"}),
    "seq": frozenset({"string"}),
    "dedup": frozenset({"hash"}),
    "scopes": frozenset({"set"}),
    "expiry": frozenset({"zset"}),
    "runs": frozenset({"zset", "set"}),
    "links": frozenset({"hash"}),
    "episodes": frozenset({"zset"}),
    "vec": frozenset({"string"}),
    "vecids": frozenset({"list"}),
    "vecmask": frozenset({"string"}),
    "vecver": frozenset({"string"}),
    "vecrw": frozenset({"string"}),
    "meta": frozenset({"hash"}),
    "forget": frozenset({"string"}),
    "authors": frozenset({"hash"}),
    "retracted": frozenset({"hash"}),
    "history": frozenset({"hash"}),
}
#: A scope's live index (``active:<scope>``) and a run's episode (``episode:<run>``).
ACTIVE_TYPES = frozenset({"zset"})
EPISODE_TYPES = frozenset({"hash"})
#: The string keys the scripts ``INCR``: each must hold an integer INCR can raise.
COUNTERS = frozenset({"seq", "vecver", "vecrw", "forget"})

#: Redis' own integer syntax (``string2ll``): no sign on zero, no leading zeros, no spaces.
_INTEGER = re.compile(rb"0|-?[1-9][0-9]*")
INT64_MAX = 2**63 - 1


def incrementable(value: bytes) -> bool:
    """Whether ``INCR`` can raise a string holding ``value`` (a 64-bit integer below the top)."""
    if len(value) > 20 or not _INTEGER.fullmatch(value):
        return False
    return -(2**63) <= int(value) < INT64_MAX


@dataclass(frozen=True, slots=True)
class KeyShape:
    """One key as read: its role, the type Redis says it holds, and a counter's value."""

    role: str
    type: str
    value: bytes | None = None


def expected_types(role: str) -> frozenset[str]:
    if role.startswith("active:"):
        return ACTIVE_TYPES
    if role == "episode":
        return EPISODE_TYPES
    return KEY_TYPES.get(role, frozenset())


def misshapen(shapes: Iterable[KeyShape]) -> tuple[str, ...]:
    """What is wrong with each misshapen key, by role (empty: every key is as written)."""
    problems: list[str] = []
    for shape in shapes:
        wanted = expected_types(shape.role)
        if shape.type == "none" or not wanted:
            continue
        if shape.type not in wanted:
            problems.append(f"{shape.role} holds a {shape.type}, not a {'/'.join(sorted(wanted))}")
        elif shape.role in COUNTERS and not incrementable(shape.value or b"0"):
            problems.append(f"{shape.role} holds a counter INCR cannot raise")
    return tuple(problems)


def _replies(results: Sequence[Any]) -> list[Any]:
    """A pipeline's results with each error as None (a read of a misshapen key)."""
    return [None if isinstance(r, BaseException) else r for r in results]


async def read_shapes(
    redis: Any, keys: Keys, chat_id: int, *, episode: str | None = None
) -> list[KeyShape]:
    """Every fixed key of the chat, each scope's live index (from ``scopes``, when it is a
    set) and, given a run id, its ``episode`` hash: type, and each counter's value."""
    fixed = [keys.chat(chat_id, role) for role in CHAT_SCRIPT_KEYS]
    async with redis.pipeline(transaction=False) as pipe:
        for key in fixed:
            pipe.type(key)
        pipe.smembers(keys.chat(chat_id, "scopes"))
        for role in sorted(COUNTERS):
            pipe.get(keys.chat(chat_id, role))
        first = _replies(await pipe.execute(raise_on_error=False))
    types = [as_text(t) if t is not None else "none" for t in first[: len(fixed)]]
    scopes = sorted(as_text(s) for s in first[len(fixed)] or ())
    values = dict(zip(sorted(COUNTERS), first[len(fixed) + 1 :], strict=True))
    shapes = [
        KeyShape(role, kind, values.get(role) if kind == "string" else None)
        for role, kind in zip(CHAT_SCRIPT_KEYS, types, strict=True)
    ]
    more = {f"active:{sk}": keys.chat(chat_id, f"active:{sk}") for sk in scopes}
    if episode is not None:
        more["episode"] = keys.chat(chat_id, f"episode:{episode}")
    if more:
        async with redis.pipeline(transaction=False) as pipe:
            for key in more.values():
                pipe.type(key)
            kinds = _replies(await pipe.execute(raise_on_error=False))
        shapes += [
            KeyShape(role, as_text(k) if k is not None else "none")
            for role, k in zip(more, kinds, strict=True)
        ]
    return shapes
