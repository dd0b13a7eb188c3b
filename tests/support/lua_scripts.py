"""Every Lua script as it is registered, and a small reader of its text.

The reader finds calls and their arguments, assignments and function parameters with
regular expressions and bracket matching (comments stripped): enough for the scripts'
own style, checked by ``tests/storage/test_lua_keys.py`` (every key from KEYS) and
``tests/storage/test_lua_preflight.py`` (every multi-write script checks its writes first).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from llm_client import lua_text

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("memory_worker", "llm_client")

# Commands whose every argument after the name is a key; for the rest only the first.
ALL_KEYS = {"DEL", "UNLINK", "EXISTS", "TOUCH", "MGET", "WATCH", "SINTER", "SUNION", "SDIFF"}
NO_KEY = {"TIME", "PING", "INFO", "ECHO"}
LUA_WORDS = {"local", "for", "if", "while", "return", "function", "in", "do", "then"}

# Commands whose first argument is a count of the keys after it (``ZINTERCARD 2 k1 k2``);
# the ``…STORE`` ones name their destination key first.
NUMKEYS = {"ZINTERCARD", "SINTERCARD", "ZINTER", "ZUNION", "ZDIFF", "LMPOP", "ZMPOP"}
NUMKEYS_STORE = {"ZINTERSTORE", "ZUNIONSTORE", "ZDIFFSTORE"}


@dataclass
class Script:
    name: str
    text: str
    defs: dict[str, list[str]] = field(default_factory=dict)  # name → assigned expressions
    #: param name → every (func, index) it is a parameter of (every caller's argument counts)
    params: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    funcs: dict[str, list[str]] = field(default_factory=dict)  # func → params


def _strip_comments(text: str) -> str:
    text = re.sub(r"--\[\[.*?\]\]", "", text, flags=re.S)
    return re.sub(r"--[^\n]*", "", text)


def _scan(text: str, start: int = 0) -> Iterator[tuple[int, str, int, bool]]:
    """(index, character, bracket depth after it, inside a string) from ``text[start]`` on."""
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        ch = text[i]
        in_string = bool(quote)
        if escaped:
            escaped = False
        elif quote:
            if ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote, in_string = ch, True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        yield i, ch, depth, in_string


def _balanced(text: str, start: int) -> int:
    """Index just past the parenthesis group opening at ``text[start]``."""
    for i, ch, depth, in_string in _scan(text, start):
        if not in_string and ch in ")]}" and depth == 0:
            return i + 1
    raise ValueError("unbalanced")


def _split_args(inner: str) -> list[str]:
    args, cur = [], ""
    for _, ch, depth, in_string in _scan(inner):
        if not in_string and ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        args.append(cur.strip())
    return args


def _parse(name: str, text: str) -> Script:
    text = _strip_comments(text)
    script = Script(name, text)
    for m in re.finditer(r"function\s+([\w.:]+)\s*\(([^)]*)\)", text):
        params = [p.strip() for p in m.group(2).split(",") if p.strip()]
        script.funcs[m.group(1)] = params
        for i, p in enumerate(params):
            script.params.setdefault(p, []).append((m.group(1), i))
    target = r"\w+(?:\[[^\]=]*\])?"
    assign = rf"(?<![\w.\]])({target}(?:\s*,\s*{target})*)\s*=(?!=)\s*(?=([^\n]+))"
    for m in re.finditer(assign, text):
        targets = [t.strip() for t in m.group(1).split(",")]
        rest = re.split(r"\s+(?:end|then|do|else)\b|;", m.group(2))[0]
        values = _split_args(rest)
        for i, target_text in enumerate(targets):
            base = re.sub(r"\[.*\]$", "", target_text)  # T[k] = v: every value of table T
            value = values[i] if i < len(values) else ""
            if base not in LUA_WORDS and value not in ("{}", "", "nil"):
                script.defs.setdefault(base, []).append(value)
    for m in re.finditer(r"for\s+(\w+)\s*,\s*(\w+)\s+in\s+ipairs\(([^\n]*)\)\s+do", text):
        script.defs.setdefault(m.group(2), []).append(f"ELEM({m.group(3)})")
    return script


def _call_args(script: Script, func: str) -> list[list[str]]:
    calls = []
    for m in re.finditer(rf"(?<![\w.]){re.escape(func)}\s*\(", script.text):
        if re.search(r"function\s+$", script.text[: m.start()]):
            continue
        start = m.end() - 1
        calls.append(_split_args(script.text[start + 1 : _balanced(script.text, start) - 1]))
    return calls


def _closing(text: str, start: int) -> int:
    """Index of the ``]`` closing the ``[`` at ``start`` (-1 when it never closes)."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def _key_args(command: str, args: list[str]) -> list[str]:
    """The arguments of ``command`` that name keys (a key count that is not a literal
    number takes every argument after it)."""
    if command in ALL_KEYS:
        return args
    if command in NUMKEYS_STORE:
        return args[:1] + _key_args("ZINTERCARD", args[1:])
    if command in NUMKEYS:
        count = args[0].strip()
        return args[1 : 1 + int(count)] if count.isdigit() else args[1:]
    return args[:1]


def lua_files() -> dict[str, str]:
    scripts = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.lua")):
            scripts[path.stem] = path.read_text(encoding="utf-8")
    return scripts


def card_scripts() -> dict[str, str]:
    """Card scripts as they run: helpers.lua in front of each."""
    folder = ROOT / "memory_worker" / "cards" / "lua"
    helpers = lua_text("memory_worker.cards", "helpers")
    return {
        f"cards/lua/{p.stem}": helpers + lua_text("memory_worker.cards", p.stem)
        for p in folder.glob("*.lua")
        if p.stem != "helpers"
    }


def inline_scripts() -> dict[str, str]:
    """Lua kept as module constants next to the Python that registers it."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            if "register_script(" not in source:
                continue
            module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
            for name in re.findall(r"register_script\((_[A-Z_]+)\)", source):
                found[f"{module.__name__}.{name}"] = getattr(module, name)
    return found


def all_scripts() -> dict[str, str]:
    """Every script as registered (fragments like ``set_status.lua`` inside their users)."""
    return {**inline_scripts(), **card_scripts()}
