"""Every script that can write more than once asks the ACL first (§7 "Store faults": a
refused write changes nothing).

A script's writes are read from its text (:mod:`tests.support.lua_writes`): each write call it
can reach, its command and the KEYS entry it writes. A script with two or more (a write in a
loop counts twice) must call ``preflight{…}`` in its main chunk before its first write, and
declare exactly the (command, key) pairs it may write: every one it writes, none it never
writes (each extra check could refuse a call for nothing). A new script without one, or a new
write an old declaration misses, fails here.

The declaration also says what type each key must hold (``preflight_shapes.lua``: HSET a
hash, ZADD a zset…), which the preflight checks before the first write: a key declared under
commands that need two types is a declaration bug (no key could take both), caught here.
"""

from __future__ import annotations

import pytest

from tests.support.lua_scripts import all_scripts
from tests.support.lua_writes import (
    ANY_TYPE,
    EVERY_KEY,
    NEEDED_TYPES,
    WRITE_COMMANDS,
    read_writes,
    type_conflicts,
)

PREFLIGHT = "local function preflight(w) end\n"
#: Scripts whose writes are on branches of which one call takes one: each call writes once.
ONE_WRITE_A_CALL = {"cards/lua/cancel_mark": "drop (DEL) or mark (SET)"}


def _offences(name: str, text: str) -> list[str]:
    reading = read_writes(name, text)
    if reading.count < 2 or name in ONE_WRITE_A_CALL:
        return []
    if reading.declared is None:
        return [f"{name}: {reading.count} writes and no preflight"]
    found = []
    if "?" in {o for _, o in reading.pairs() | reading.declared}:
        found.append(f"{name}: a write or a declared entry whose key is not from KEYS")
    if not 0 <= reading.preflight_at < reading.first_write_at:
        found.append(f"{name}: the preflight comes after a write")
    for command, origin in sorted(reading.uncovered()):
        found.append(f"{name}: {command} on {origin} is not declared")
    for command, origin in sorted(reading.unused()):
        found.append(f"{name}: {command} on {origin} is declared and never written")
    for origin, kinds in sorted(type_conflicts(reading.declared).items()):
        found.append(f"{name}: {origin} is declared for a {' and a '.join(sorted(kinds))}")
    return found


@pytest.mark.parametrize(
    ("lua", "bad"),
    [
        ("redis.call('HSET', KEYS[1], 'a', 1)", False),  # one write: atomic by itself
        ("redis.call('HSET', KEYS[1], 'a', 1)\nredis.call('DEL', KEYS[2])", True),
        (
            "preflight({HSET = {KEYS[1]}, DEL = {KEYS[2]}})\n"
            "redis.call('HSET', KEYS[1], 'a', 1)\nredis.call('DEL', KEYS[2])",
            False,
        ),
        (  # a key missing
            "preflight({HSET = {KEYS[1]}})\n"
            "redis.call('HSET', KEYS[1], 'a', 1)\nredis.call('DEL', KEYS[2])",
            True,
        ),
        (  # the right key under the wrong command
            "preflight({HSET = {KEYS[1], KEYS[2]}})\n"
            "redis.call('HSET', KEYS[1], 'a', 1)\nredis.call('DEL', KEYS[2])",
            True,
        ),
        (  # a pair declared and never written
            "preflight({HSET = {KEYS[1]}, DEL = {KEYS[2], KEYS[3]}})\n"
            "redis.call('HSET', KEYS[1], 'a', 1)\nredis.call('DEL', KEYS[2])",
            True,
        ),
        (  # after the first write
            "redis.call('HSET', KEYS[1], 'a', 1)\n"
            "preflight({HSET = {KEYS[1]}, DEL = {KEYS[2]}})\nredis.call('DEL', KEYS[2])",
            True,
        ),
        (  # a loop's one write may run many times
            "for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end",
            True,
        ),
        ("preflight({DEL = {KEYS}})\nfor i = 1, #KEYS do redis.call('DEL', KEYS[i]) end", False),
        (  # writes through a helper and a local, found at the helper's call
            "local rk = KEYS[1]\nlocal function put(k, f) redis.call('HSET', k, f, 1) end\n"
            "preflight({HSET = {rk}})\nput(rk, 'a')\nput(KEYS[1], 'b')",
            False,
        ),
        (
            "local function put(k, f) redis.call('HSET', k, f, 1) end\n"
            "preflight({HSET = {KEYS[1]}})\nput(KEYS[1], 'a')\nput(KEYS[3], 'b')",
            True,
        ),
        (  # a helper called before the preflight writes before it
            "local function put(k) redis.call('HSET', k, 'f', 1) end\n"
            "put(KEYS[1])\npreflight({HSET = {KEYS[1]}})\nput(KEYS[1])",
            True,
        ),
        (  # a helper never called writes nothing
            "local function gone() redis.call('DEL', KEYS[9]) end\n"
            "preflight({HSET = {KEYS[1]}})\nredis.call('HSET', KEYS[1], 'a', 1)\n"
            "redis.call('HSET', KEYS[1], 'b', 1)",
            False,
        ),
        (  # both keys of a RENAME are written
            "preflight({RENAME = {KEYS[1]}})\nredis.call('RENAME', KEYS[1], KEYS[2])\n"
            "redis.call('RENAME', KEYS[2], KEYS[1])",
            True,
        ),
        (  # one key declared for a hash and a zset: no key can take both
            "preflight({HSET = {KEYS[1]}, ZADD = {KEYS[1]}})\n"
            "redis.call('HSET', KEYS[1], 'a', 1)\nredis.call('ZADD', KEYS[1], 1, 'a')",
            True,
        ),
        (  # through a local: the same key
            "local rk = KEYS[2]\npreflight({INCR = {rk}, RPUSH = {KEYS[2]}})\n"
            "redis.call('INCR', rk)\nredis.call('RPUSH', KEYS[2], 'a')",
            True,
        ),
        (  # a typed write and writes of any type on one key
            "preflight({HSET = {KEYS[1]}, DEL = {KEYS[1]}, PEXPIRE = {KEYS[1]}})\n"
            "redis.call('DEL', KEYS[1])\nredis.call('HSET', KEYS[1], 'a', 1)\n"
            "redis.call('PEXPIRE', KEYS[1], 5)",
            False,
        ),
        (  # KEYS itself (every key, for the ACL) implies no type
            "preflight({HDEL = {KEYS}, ZREM = {KEYS}})\n"
            "for i = 1, #KEYS do redis.call('HDEL', KEYS[i], 'a') end\n"
            "for i = 1, #KEYS do redis.call('ZREM', KEYS[i], 'a') end",
            False,
        ),
        (  # a key read while running: KEYS stands for all
            "local T = {}\nfor i = 2, #KEYS do T[i] = KEYS[i] end\n"
            "preflight({ZADD = {KEYS}})\nfor i = 2, #KEYS do redis.call('ZADD', T[i], 1, 'x') end",
            False,
        ),
    ],
)
def test_the_reader_tells_a_covering_preflight_from_a_missing_one(lua: str, bad: bool) -> None:
    assert bool(_offences("t", PREFLIGHT + lua)) is bad


def test_every_script_that_writes_more_than_once_asks_the_acl_first() -> None:
    offences = []
    checked = 0
    for name, text in sorted(all_scripts().items()):
        found = _offences(name, text)
        offences += found
        checked += read_writes(name, text).count >= 2
    assert offences == []
    assert checked >= 40  # the reader still sees the scripts' writes


def test_the_settlements_declare_their_writes() -> None:
    """The run store's settlements and the card write, by name: the reader sees them."""
    scripts = all_scripts()
    for name in (
        "memory_worker.runs.store._COMPLETE",
        "memory_worker.runs.store._RELEASE",
        "memory_worker.runs.store._FAIL",
        "cards/lua/apply",
        "cards/lua/import",
    ):
        reading = read_writes(name, scripts[name])
        assert reading.count >= 5, name
        assert reading.declared, name
        assert all(o.startswith(EVERY_KEY) for _, o in reading.declared), name


def test_every_write_command_needs_one_type_or_none() -> None:
    """A write command the preflight does not type is one that takes any key (a new typed
    command left out of ``PREFLIGHT_TYPES`` would go unchecked)."""
    assert set(NEEDED_TYPES) | ANY_TYPE == WRITE_COMMANDS
    assert not set(NEEDED_TYPES) & ANY_TYPE
    assert set(NEEDED_TYPES.values()) == {"hash", "zset", "set", "list", "string", "stream"}
    assert NEEDED_TYPES["HSET"] == "hash"
    assert NEEDED_TYPES["INCR"] == "string"
