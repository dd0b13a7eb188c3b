"""What a Lua script writes, read from its text: each write's command and the KEYS entry it
writes (resolved back through locals, tables and function parameters), and what its
``preflight{…}`` declares (``llm_client/lua/preflight.lua``).

A write counts when the script can reach it: in the script's main chunk, or in a named
function the main chunk calls (directly or through other functions). A write inside a loop
counts twice (it may run more than once). Function bodies are found by Lua's block words
(``function``/``if``/``do``/``repeat`` open, ``end``/``until`` close) once comments and string
contents are blanked out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from llm_client._lua import PREFLIGHT_SHAPES
from tests.support.lua_scripts import (
    ALL_KEYS,
    Script,
    _balanced,
    _call_args,
    _parse,
    _split_args,
)

#: Every command a script may write with (the scripts' own, and their kin a new one may use).
WRITE_COMMANDS = frozenset(
    {
        *("SET", "SETNX", "SETEX", "PSETEX", "SETRANGE", "APPEND", "GETDEL", "GETSET"),
        *("INCR", "INCRBY", "INCRBYFLOAT", "DECR", "DECRBY"),
        *("HSET", "HSETNX", "HMSET", "HDEL", "HINCRBY", "HINCRBYFLOAT"),
        *("ZADD", "ZREM", "ZINCRBY", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK", "ZREMRANGEBYLEX"),
        *("ZPOPMIN", "ZPOPMAX", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZRANGESTORE"),
        *("SADD", "SREM", "SPOP", "SMOVE", "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"),
        *("RPUSH", "LPUSH", "RPUSHX", "LPUSHX", "RPOP", "LPOP", "LSET", "LTRIM", "LREM"),
        *("LINSERT", "LMOVE", "RPOPLPUSH", "XADD", "XTRIM", "XDEL", "XACK", "XGROUP"),
        *("DEL", "UNLINK", "RENAME", "RENAMENX", "COPY", "RESTORE", "MOVE"),
        *("EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT", "PERSIST", "PFADD", "SETBIT"),
    }
)
#: Writes that name two keys (source, destination): both are written.
TWO_KEYS = frozenset({"RENAME", "RENAMENX", "SMOVE", "LMOVE", "RPOPLPUSH", "COPY"})
#: A declared entry that resolves to this covers every key of KEYS.
EVERY_KEY = "KEYS"

_OPEN = {"function", "if", "do", "repeat"}
_CLOSE = {"end", "until"}


@dataclass
class Write:
    command: str
    origins: frozenset[str]  # the KEYS expressions its key resolves to
    at: int  # position in the script's text
    in_loop: bool


@dataclass
class Reading:
    """A script's reachable writes and what its preflight declares."""

    name: str
    writes: list[Write] = field(default_factory=list)
    #: (command, origin) pairs its ``preflight{…}`` checks; None when it has none
    declared: set[tuple[str, str]] | None = None
    preflight_at: int = -1  # where the main chunk calls preflight (-1: never)
    first_write_at: int = -1  # where the main chunk first writes, or calls what writes

    @property
    def count(self) -> int:
        """Write calls, one in a loop counted twice."""
        return sum(2 if w.in_loop else 1 for w in self.writes)

    def pairs(self) -> set[tuple[str, str]]:
        return {(w.command, o) for w in self.writes for o in w.origins}

    def uncovered(self) -> set[tuple[str, str]]:
        declared = self.declared or set()
        return {
            (c, o)
            for c, o in self.pairs()
            if (c, o) not in declared and (c, EVERY_KEY) not in declared
        }

    def unused(self) -> set[tuple[str, str]]:
        """Declared pairs the script never writes (each one a check that may refuse for
        nothing)."""
        pairs = self.pairs()
        commands = {c for c, _ in pairs}
        return {
            (c, o)
            for c, o in self.declared or set()
            if (c, o) not in pairs and not (o == EVERY_KEY and c in commands)
        }


def _blank_strings(text: str) -> str:
    """``text`` with every string literal's content replaced by spaces (same positions)."""
    out, quote, escaped = [], "", False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
                out.append(ch)
                continue
            out.append(" " if ch != "\n" else ch)
            continue
        if ch in "'\"":
            quote = ch
        out.append(ch)
    return "".join(out)


@dataclass
class _Block:
    kind: str  # 'function', 'loop' or 'block'
    name: str  # a named function's name ('' otherwise)
    start: int


def _structure(text: str) -> tuple[dict[str, tuple[int, int]], list[tuple[int, int]]]:
    """Named functions' (start, end) spans and every loop body's span."""
    funcs: dict[str, tuple[int, int]] = {}
    loops: list[tuple[int, int]] = []
    stack: list[_Block] = []
    pending_loop = False
    for m in re.finditer(r"\b(function|if|do|repeat|end|until|for|while)\b", text):
        word = m.group(1)
        if word in ("for", "while"):
            pending_loop = True
        elif word == "function":
            named = re.match(r"\s*([\w.:]+)\s*\(", text[m.end() :])
            stack.append(_Block("function", named.group(1) if named else "", m.start()))
        elif word == "do":
            stack.append(_Block("loop" if pending_loop else "block", "", m.start()))
            pending_loop = False
        elif word == "repeat":
            stack.append(_Block("loop", "", m.start()))
        elif word == "if":
            stack.append(_Block("block", "", m.start()))
        elif word in _CLOSE:
            block = stack.pop()
            if block.kind == "function" and block.name:
                funcs[block.name] = (block.start, m.end())
            elif block.kind == "loop":
                loops.append((block.start, m.end()))
    assert not stack, "unbalanced Lua blocks"
    return funcs, loops


def origins(script: Script, expr: str, seen: frozenset[str] = frozenset()) -> frozenset[str]:
    """The ``KEYS[…]`` expressions (or ``KEYS`` itself) that ``expr`` resolves to."""
    expr = expr.strip()
    while expr.startswith("(") and _balanced(expr, 0) == len(expr):
        expr = expr[1:-1].strip()
    if expr == EVERY_KEY or re.fullmatch(r"KEYS\[.*\]", expr):
        return frozenset({re.sub(r"\s+", " ", expr)})
    m = re.fullmatch(r"(\w+)(\[.*\])?", expr)
    if not m or m.group(1) in seen:
        return frozenset()
    ident = m.group(1)
    sources = list(script.defs.get(ident, []))
    for func, index in script.params.get(ident, []):
        sources += [args[index] for args in _call_args(script, func) if index < len(args)]
    found: frozenset[str] = frozenset()
    for source in sources:
        found |= origins(script, source, seen | {ident})
    return found


def _write_keys(command: str, args: list[str]) -> list[str]:
    if command in ALL_KEYS:
        return args
    if command in TWO_KEYS:
        return args[:2]
    return args[:1]


def _calls(text: str, start: int, end: int, names: set[str]) -> list[tuple[int, str]]:
    """(position, name) of each call of one of ``names`` in ``text[start:end]``."""
    found = []
    for m in re.finditer(r"(?<![\w.:])([\w.:]+)\s*\(", text[start:end]):
        before = text[max(0, start + m.start() - 12) : start + m.start()]
        if m.group(1) in names and not re.search(r"function\s+$", before):
            found.append((start + m.start(), m.group(1)))
    return found


def read_writes(name: str, source: str) -> Reading:
    """What script ``source`` can write, and what it declares it writes."""
    script = _parse(name, source)
    text = _blank_strings(script.text)
    funcs, loops = _structure(text)

    def owner(pos: int) -> str:
        best, size = "", len(text) + 1
        for fname, (a, b) in funcs.items():
            if a <= pos < b and b - a < size:
                best, size = fname, b - a
        return best

    writes_in: dict[str, list[Write]] = {}
    for m in re.finditer(r"redis\.p?call\s*\(", script.text):
        start = m.end() - 1
        args = _split_args(script.text[start + 1 : _balanced(script.text, start) - 1])
        command = args[0].strip("'\"").upper() if args else ""
        if command not in WRITE_COMMANDS:
            continue
        found: frozenset[str] = frozenset()
        for expr in _write_keys(command, args[1:]):
            found |= origins(script, expr)
        in_loop = any(a <= m.start() < b for a, b in loops)
        writes_in.setdefault(owner(m.start()), []).append(
            Write(command, found or frozenset({"?"}), m.start(), in_loop)
        )

    names = set(funcs)
    callees = {f: {n for _, n in _calls(text, a, b, names)} - {f} for f, (a, b) in funcs.items()}

    def main_calls() -> list[tuple[int, str]]:
        return [(p, n) for p, n in _calls(text, 0, len(text), names) if owner(p) == ""]

    reach: set[str] = set()
    todo = [n for _, n in main_calls()]
    while todo:
        f = todo.pop()
        if f not in reach:
            reach.add(f)
            todo += callees.get(f, set())

    def writes_of(f: str, seen: frozenset[str] = frozenset()) -> bool:
        return bool(writes_in.get(f)) or any(
            writes_of(g, seen | {f}) for g in callees.get(f, set()) - seen
        )

    reading = Reading(name)
    sites = [(p, n) for p, n in _calls(text, 0, len(text), names) if owner(p) in reach | {""}]
    for f in ["", *sorted(reach)]:
        # a function called from two places, or from a loop, may write more than once
        called = [p for p, n in sites if n == f]
        again = len(called) > 1 or any(a <= p < b for p in called for a, b in loops)
        for w in writes_in.get(f, []):
            reading.writes.append(Write(w.command, w.origins, w.at, w.in_loop or again))
    firsts = [w.at for w in writes_in.get("", [])]
    firsts += [p for p, n in main_calls() if n != "preflight" and writes_of(n)]
    reading.first_write_at = min(firsts, default=-1)

    for p, n in main_calls():
        if n != "preflight":
            continue
        reading.preflight_at = p if reading.preflight_at < 0 else reading.preflight_at
        open_at = script.text.index("(", p)
        # the declaration, then (optional) the legacy types: key -> a type older versions wrote
        table = _split_args(script.text[open_at + 1 : _balanced(script.text, open_at) - 1])[0]
        reading.declared = reading.declared or set()
        for entry in _split_args(table.strip()[1:-1]):
            command, _, keys = entry.partition("=")
            for expr in _split_args(keys.strip()[1:-1]):
                for origin in origins(script, expr) or {"?"}:
                    reading.declared.add((command.strip().upper(), origin))
    return reading


def _needed_types() -> dict[str, str]:
    """command → the one type its key must hold, read from ``preflight_shapes.lua``'s
    ``PREFLIGHT_TYPES`` (the string the preflight looks commands up in: one source)."""
    table = re.search(r"local PREFLIGHT_TYPES = \[\[(.*?)\]\]", PREFLIGHT_SHAPES, re.S)
    assert table is not None
    return dict(re.findall(r"(\w+)=(\w+)", table.group(1)))


#: command → the type its key must hold (missing: a command that takes a key of any type).
NEEDED_TYPES = _needed_types()
#: Writes that take a key of any type (they replace, remove or only time it): no type needed.
ANY_TYPE = frozenset(
    {
        *("SET", "SETNX", "SETEX", "PSETEX", "DEL", "UNLINK", "RENAME", "RENAMENX", "COPY"),
        *("RESTORE", "MOVE", "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT", "PERSIST"),
        *("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZRANGESTORE"),
        *("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"),
    }
)


def type_conflicts(declared: set[tuple[str, str]]) -> dict[str, set[str]]:
    """Declared keys (KEYS origins) whose commands need two different types: a declaration
    bug (no key can take both). ``KEYS`` itself (every key, declared for the ACL) implies no
    type and is left out, as the preflight leaves it out."""
    types: dict[str, set[str]] = {}
    for command, origin in declared:
        if origin != EVERY_KEY and command in NEEDED_TYPES:
            types.setdefault(origin, set()).add(NEEDED_TYPES[command])
    return {origin: kinds for origin, kinds in types.items() if len(kinds) > 1}
