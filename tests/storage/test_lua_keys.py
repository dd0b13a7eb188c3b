"""Every Lua script declares every key it touches in KEYS (§2).

The checker reads each script's text (the ``.lua`` files and the scripts inline in
Python modules), finds every ``redis.call``/``redis.pcall`` and resolves the expression
in each key position back through locals, tables and function parameters. A key is
declared when it resolves to ``KEYS[...]`` alone; one resolved through ``ARGV`` or a string
concatenation (``..``) is a key name built inside the script, which Redis Cluster cannot
route. No script is exempt, queue scripts included: one that acts on runs it
picks from a zset is given their keys by its caller and acts on no other run.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from llm_client._lua import PREFLIGHT_SHAPES
from memory_worker.cards import CardStore, NewCard, ResolutionOp, ResolutionWrite, RunWrites
from memory_worker.cards import Scope as CardScope
from memory_worker.keys import Keys
from tests.support.lua_scripts import (
    NO_KEY,
    Script,
    _balanced,
    _call_args,
    _closing,
    _key_args,
    _parse,
    _split_args,
    all_scripts,
    lua_files,
)


def _problem(script: Script, expr: str, seen: frozenset[str] = frozenset()) -> str | None:
    """Why ``expr`` (a key position) is not a declared key; None when it resolves to KEYS."""
    expr = expr.strip()
    while expr.startswith("(") and _balanced(expr, 0) == len(expr):
        expr = expr[1:-1].strip()
    if expr.startswith("KEYS[") and _closing(expr, 4) == len(expr) - 1:
        return None  # KEYS[i], whatever computes i (e.g. an index the plan names): declared
    if "ARGV" in expr:
        return f"built from ARGV: {expr}"
    if re.search(r"\.\.", expr):
        return f"built by concatenation: {expr}"
    m = re.fullmatch(r"(\w+)(\[.*\])?", expr)
    if not m:
        return f"unresolved key expression: {expr}"
    ident = m.group(1)
    if ident in seen:
        return None
    seen = seen | {ident}
    sources = list(script.defs.get(ident, []))
    for func, index in script.params.get(ident, []):
        for args in _call_args(script, func):
            if index < len(args):
                sources.append(args[index])
    if not sources:
        return f"unresolved key {ident}"
    for source in sources:
        inner = re.fullmatch(r"ELEM\((.*)\)", source)
        if inner:
            return f"key read from a value while running: {ident} in {inner.group(1)}"
        problem = _problem(script, source, seen)
        if problem:
            return problem
    return None


def problems(script: Script) -> list[str]:
    found = []
    for m in re.finditer(r"redis\.p?call\s*\(", script.text):
        start = m.end() - 1
        args = _split_args(script.text[start + 1 : _balanced(script.text, start) - 1])
        command = args[0].strip("'\"").upper() if args else ""
        if command in NO_KEY or len(args) < 2:
            continue
        for expr in _key_args(command, args[1:]):
            problem = _problem(script, expr)
            if problem:
                found.append(f"{script.name}: {command}: {problem}")
    return found


#: Lua's string functions: a key passed to one is a role read from the key's name.
STRING_FUNCS = r"string\.(?:match|gmatch|find|sub|gsub|byte|len|lower|upper|reverse|format)"


def _is_key(script: Script, expr: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``expr`` is a key of KEYS itself (or a local, table or parameter holding one);
    a value read from a key (``redis.call(…, KEYS[1])``) is not."""
    expr = expr.strip()
    while expr.startswith("(") and _balanced(expr, 0) == len(expr):
        expr = expr[1:-1].strip()
    if expr.startswith("KEYS[") or expr == "KEYS":
        return True
    m = re.fullmatch(r"(\w+)(\[.*\])?", expr)
    if not m or m.group(1) in seen:
        return False
    ident = m.group(1)
    sources = list(script.defs.get(ident, []))
    for func, index in script.params.get(ident, []):
        sources += [args[index] for args in _call_args(script, func) if index < len(args)]
    return any(_is_key(script, source, seen | {ident}) for source in sources)


def name_reads(script: Script) -> list[str]:
    """Every place a script takes a key's role from its name: a key of KEYS given to one of
    Lua's string functions, or one compared with ``==``/``~=`` (a role is a position)."""
    found = []
    for m in re.finditer(rf"(?<![\w.]){STRING_FUNCS}\s*\(", script.text):
        start = m.end() - 1
        args = _split_args(script.text[start + 1 : _balanced(script.text, start) - 1])
        if args and _is_key(script, args[0]):
            found.append(f"{script.name}: {m.group(0).rstrip('( ')} on a key's name: {args[0]}")
    for m in re.finditer(r"([\w\[\]+.#-]+)\s*(?:==|~=)|(?:==|~=)\s*([\w\[\]+.#-]+)", script.text):
        operand = m.group(1) or m.group(2)
        if operand and _is_key(script, operand):
            found.append(f"{script.name}: a key's name compared: {operand}")
    return found


def test_the_checker_sees_scripts_of_every_kind() -> None:
    scripts = all_scripts()
    for name, text in lua_files().items():  # every .lua file is in a checked script
        assert any(text in script for script in scripts.values()), name
    for name in ("apply", "fold", "expire", "refresh"):
        assert f"cards/lua/{name}" in scripts
    for name in ("runs.store._CLAIM", "paging.reports._DEDUP", "pipeline.ticks._SCHEDULE"):
        assert f"memory_worker.{name}" in scripts
    assert "llm_client._breaker.store._ACQUIRE" in scripts
    assert len(scripts) >= 30


@pytest.mark.parametrize(
    ("lua", "bad"),
    [
        ("redis.call('GET', KEYS[1])", False),
        ("local k = KEYS[2]\nredis.call('HSET', k, 'a', ARGV[1])", False),
        ("local T = {}\nfor i = 3, #KEYS do T[i] = KEYS[i] end\nredis.call('DEL', T[5])", False),
        ("redis.call('GET', ARGV[1])", True),
        ("redis.call('GET', ARGV[1] .. 'x')", True),
        ("redis.call('GET', KEYS[1] .. ':errors')", True),
        (
            "local base = ARGV[1]\nlocal function key(s) return base .. s end\n"
            "redis.call('HGET', key('dedup'), 'h')",
            True,
        ),
        ("local p = ARGV[1]\nlocal function f(k) redis.call('DEL', k) end\nf(p .. 'x')", True),
        ("local function f(k) redis.call('DEL', k) end\nf(KEYS[1])", False),
        (
            "for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do\n"
            "  redis.call('DEL', id)\nend",
            True,
        ),
        ("redis.call('DEL', KEYS[1], ARGV[1])", True),
        ("local it = cjson.decode(ARGV[1])\nredis.call('DEL', KEYS[tonumber(it[3])])", False),
        ("redis.call('DEL', KEYS[1] .. KEYS[2])", True),
        ("redis.call('ZINTERCARD', 2, KEYS[1], KEYS[3])", False),
        ("redis.call('ZINTERCARD', 2, KEYS[1], ARGV[1])", True),
        ("redis.call('ZINTERCARD', 1, KEYS[1], 'LIMIT', ARGV[1])", False),
        ("redis.call('ZUNIONSTORE', ARGV[1], 1, KEYS[1])", True),
        ("redis.call('ZUNIONSTORE', KEYS[2], 2, KEYS[1], 'x' .. ARGV[1])", True),
        ("redis.call('ZINTER', n, KEYS[1], ARGV[2])", True),
    ],
)
def test_the_checker_tells_declared_keys_from_built_ones(lua: str, bad: bool) -> None:
    assert bool(problems(_parse("t", lua))) is bad


def test_every_script_declares_its_keys() -> None:
    offenders = {}
    for name, text in sorted(all_scripts().items()):
        # the preflight's shape check reads the keys its caller declares (each one from KEYS:
        # tests/storage/test_lua_preflight.py), not keys of its own
        text = text.replace(PREFLIGHT_SHAPES, "")
        found = problems(_parse(name, text))
        if found:
            offenders[name] = found
    assert offenders == {}


@pytest.mark.parametrize(
    ("lua", "bad"),
    [
        ("local sk = string.match(KEYS[3], '}:active:(.*)$')", True),
        (
            "for i = 1, #KEYS do\n  if string.find(KEYS[i], ':episode:', 1, true) then end\nend",
            True,
        ),
        ("local k = KEYS[4]\nlocal run = string.match(k, 'episode:(.*)')", True),
        (
            "local function role(key) return key:sub(1, 3) end\nlocal s = string.sub(KEYS[2], 5)",
            True,
        ),
        ("if KEYS[5] == 'x' then return 1 end", True),
        ("local s = string.match(ARGV[1], '(%d+)')", False),
        ("local s = string.match(redis.call('GET', KEYS[1]) or '', '(%d+)')", False),
        (
            "local L = cjson.decode(ARGV[1])\nlocal A = {}\nA[L.scopes[1]] = KEYS[L.fixed + 1]",
            False,
        ),
        ("if #KEYS == 3 then return 1 end", False),
    ],
)
def test_the_checker_tells_roles_by_name_from_roles_by_position(lua: str, bad: bool) -> None:
    assert bool(name_reads(_parse("t", lua))) is bad


def test_every_script_takes_each_keys_role_from_its_position() -> None:
    """Not from a pattern on its name: a run id ``rX}:active:chat`` once made the import
    script take an episode hash for the chat scope's live index."""
    offenders = {}
    for name, text in sorted(all_scripts().items()):
        found = name_reads(_parse(name, text))
        if found:
            offenders[name] = found
    assert offenders == {}


async def test_a_run_id_that_spells_another_key_role_is_only_a_run_id(
    redis: object, key_prefix: str
) -> None:
    """apply with the run id ``rX}:active:chat``: its episode hash is its episode hash, the
    chat scope's live index stays the chat scope's (one ran into the other by name)."""
    from datetime import UTC, datetime

    from memory_worker.cards.writes import EpisodeWrite

    keys = Keys(prefix=key_prefix)
    now = datetime(2026, 3, 2, tzinfo=UTC)
    store = CardStore(redis, keys)  # type: ignore[arg-type]
    run = "rX}:active:chat"
    episode = EpisodeWrite("a talk", [], [], now, now, 0, 1)
    writes = RunWrites(now, [_card("the chat meets on Fridays", CardScope.CHAT)], episode=episode)
    done = await store.apply_run(7, run, writes, now=now)
    assert done.inserted == 1
    assert [c.fact_text for c in await store.visible_cards(7)] == ["the chat meets on Fridays"]
    assert [e.run_id for e in await store.episodes(7)] == [run]
    client: Any = redis
    assert await client.type(keys.chat(7, f"episode:{run}")) == b"hash"
    assert await client.type(keys.chat(7, "active:chat")) == b"zset"


def _card(fact: str, scope: CardScope, *, thread: int = 0, user: int | None = None) -> NewCard:
    from datetime import UTC, datetime

    at = datetime(2026, 3, 1, tzinfo=UTC)
    return NewCard(
        scope=scope,
        thread_id=thread,
        user_id=user,
        card_type="fact",
        subject="s",
        predicate="p",
        object="",
        fact_text=fact,
        confidence=0.7,
        salience=0.5,
        durability=None,
        source_message_ids=(1,),
        valid_from=at,
        observed_at=at,
        expires_at=None,
    )


async def test_a_store_that_never_saw_a_scope_retries_with_it(
    redis: object, key_prefix: str
) -> None:
    """A second process supersedes a thread card: its script asks for the thread's zset."""
    from datetime import UTC, datetime

    keys = Keys(prefix=key_prefix)
    now = datetime(2026, 3, 2, tzinfo=UTC)
    first, second = CardStore(redis, keys), CardStore(redis, keys)  # type: ignore[arg-type]
    old = await first.apply_run(
        7, "r1", RunWrites(now, [_card("a", CardScope.THREAD, thread=5)]), now=now
    )
    res = ResolutionWrite(old_card_id=old.card_ids[0], op=ResolutionOp.SUPERSEDE, new_index=0)
    result = await second.apply_run(
        7, "r2", RunWrites(now, [_card("b", CardScope.CHAT)], [res]), now=now
    )
    assert result.superseded == 1
    assert [c.fact_text for c in await second.visible_cards(7, thread_id=5)] == ["b"]
    assert await redis.zcard(keys.chat(7, "active:thread:5")) == 0  # type: ignore[attr-defined]
