"""A key of the wrong type, or a counter ``INCR`` cannot raise, refuses the whole script call
before its first write (§7 "Store faults"), on a real Valkey.

The preflight (``llm_client/lua/preflight_shapes.lua``) infers from each script's declared
writes the type every key must hold (HSET a hash, ZADD a zset…) and which keys are ``INCR``
counters, and checks them before the first write, raising the server's own reply. Each case
plants a wrong-type key in the role of a script's last write (the one that, unchecked, meets
it after the others landed), calls the script as the store does, and asserts the reply is
classified as ``StoreDataCorrupt`` (naming the key's role where the store reports roles) and
that every key of the deployment dumps to the same bytes. The same script with its preflight
taken out is the control: it fails too, but only after writing. Hypothesis properties plant
the wrong type on any one key a settlement writes, and hold the preflight's integer check to
the server's own ``INCR``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.exceptions import ResponseError

from llm_client import with_preflight
from memory_worker.cards import CardStore, RunWrites
from memory_worker.cards.store import _script
from memory_worker.cards.transfer import read_snapshot, write_snapshot
from memory_worker.errors import ChatKeyCorrupt, StoreDataCorrupt
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.runs.store import _CLAIM, _COMPLETE, _FAIL, _RELEASE
from memory_worker.settings import Settings
from memory_worker.storage.faults import store_answer
from tests.storage.test_lua_preflight_acl import MODEL, PAIRS, _key, _settle, _without_preflight
from tests.support.cards import CHAT, T0, new
from tests.support.dumps import dump_all
from tests.support.factories import make_request
from tests.support.lua_writes import NEEDED_TYPES

INT64_MAX = 2**63 - 1


async def plant(redis: Any, key: str, needed: str) -> None:
    """``key`` replaced by a value of a type other than ``needed``."""
    await redis.delete(key)
    if needed == "string":
        await redis.rpush(key, "planted")
    else:
        await redis.set(key, "planted")


def _corrupt(error: BaseException, code: str) -> StoreDataCorrupt:
    answer = store_answer(error)
    assert isinstance(answer, StoreDataCorrupt), (answer, error)
    assert answer.code == code, (answer.code, error)
    return answer


async def _refused(
    redis: Any, prefix: str, call: Callable[[], Awaitable[Any]], code: str = "wrongtype"
) -> bool:
    """Whether ``call`` is refused as corrupt data (``code``), asserted; answers whether the
    keyspace stayed the same to the byte."""
    before = await dump_all(redis, prefix)
    with pytest.raises(ResponseError) as refused:
        await call()
    _corrupt(refused.value, code)
    return await dump_all(redis, prefix) == before


def _deployment(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"key_prefix": f"{settings.key_prefix}{uuid.uuid4().hex[:6]}:"}
    )


async def _claimed(settings: Settings, redis: Any, chat: int) -> ClaimedRun:
    store = RunStore(redis, settings)
    await store.enqueue(make_request(chat))
    claim = await store.claim("w1")
    assert claim is not None
    return claim


# -- the run store's settlements and claim ---------------------------------------------------

#: Each settlement: its script, the attribute the store keeps it in, and the key of its last
#: write in the path taken here with the type it needs (as in the ACL test).
SETTLEMENTS: dict[str, tuple[str, str, Callable[[Keys], str], str]] = {
    "complete": (_COMPLETE, "_complete", lambda k: k.counters, "hash"),
    "release": (_RELEASE, "_release", lambda k: k.queued, "zset"),
    "fail": (_FAIL, "_fail", lambda k: k.retry, "zset"),
}


@pytest.mark.parametrize("kind", sorted(SETTLEMENTS))
async def test_a_settlement_meeting_a_wrong_type_last_writes_nothing(
    redis: Any, settings: Settings, kind: str
) -> None:
    script, attribute, key_of, needed = SETTLEMENTS[kind]
    keys = Keys(settings.key_prefix)
    claim = await _claimed(settings, redis, 61)
    await plant(redis, key_of(keys), needed)
    store = RunStore(redis, settings)

    assert await _refused(redis, keys.prefix, _settle(kind, store, claim))
    run = await store.get(claim.id)
    assert (run.status, run.attempts) == (RunStatus.PROCESSING, 1)

    # the control: without its preflight the same script half-applies
    setattr(store, attribute, redis.register_script(_without_preflight(script)))
    assert not await _refused(redis, keys.prefix, _settle(kind, store, claim))


async def test_a_claim_meeting_a_wrong_type_last_writes_nothing(
    redis: Any, settings: Settings
) -> None:
    keys = Keys(settings.key_prefix)
    store = RunStore(redis, settings)
    await store.enqueue(make_request(62))
    await plant(redis, keys.counters, "hash")  # a claim counts itself last (claimed:queued)

    assert await _refused(redis, keys.prefix, lambda: store.claim("w1"))
    store._claim = redis.register_script(_without_preflight(_CLAIM))
    assert not await _refused(redis, keys.prefix, lambda: store.claim("w1"))


# -- the card store: a run's card write and an import ----------------------------------------


async def _apply(store: CardStore, run_id: str, fact: str, seed: int) -> None:
    writes = RunWrites(observed_at=T0, cards=[new(fact, seed=seed)], embedding_model=MODEL)
    await store.apply_run(CHAT, run_id, writes, now=T0)


@pytest.mark.parametrize(
    ("role", "value", "code", "problem"),
    [
        ("history", None, "wrongtype", "history holds a string, not a hash"),
        ("expiry", None, "wrongtype", "expiry holds a string, not a zset"),
        ("vecver", str(INT64_MAX), "overflow", "vecver holds a counter INCR cannot raise"),
    ],
)
async def test_a_card_write_meeting_corrupt_data_writes_nothing(
    redis: Any, key_prefix: str, role: str, value: str | None, code: str, problem: str
) -> None:
    """Keys the card write writes after its card (``history``, ``expiry``) and its last write
    (``INCR`` of ``vecver``: its vectors changed), each planted: refused before any write."""
    keys = Keys(key_prefix)
    store = CardStore(redis, keys)
    await _apply(store, "r1", "Alice likes tea.", 1)  # a chat with cards
    key = keys.chat(CHAT, role)
    if value is None:
        await plant(redis, key, "hash" if role == "history" else "zset")
    else:
        await redis.set(key, value)

    assert await _refused(
        redis, key_prefix, lambda: _apply(store, "r2", "Alice skis in winter.", 2), code
    )
    # the store's own diagnosis names the role, as the pipeline reports it
    assert problem in await store.misshapen(CHAT, run_id="r2")

    store._apply = redis.register_script(_without_preflight(_script("apply")))
    assert not await _refused(
        redis, key_prefix, lambda: _apply(store, "r3", "Alice skis in winter.", 3), code
    )


async def test_a_chats_applied_runs_as_an_older_set_are_converted_not_refused(
    redis: Any, key_prefix: str
) -> None:
    """``runs`` was a set before applied runs had a time: the card write names that older
    type to its preflight (``{[RUNS] = 'set'}``) and converts it; without the name the same
    key would be refused as the wrong type."""
    keys = Keys(key_prefix)
    store = CardStore(redis, keys)
    await redis.sadd(keys.chat(CHAT, "runs"), "old-run")
    await redis.sadd(keys.prefix + "chats", str(CHAT))  # the sweeps' set, before the script
    legacy = "  {[RUNS] = 'set'})"
    assert legacy in _script("apply")
    strict = CardStore(redis, keys)
    strict._apply = redis.register_script(_script("apply").replace(legacy, "  nil)", 1))
    assert await _refused(redis, key_prefix, lambda: _apply(strict, "r1", "Alice likes tea.", 1))

    await _apply(store, "r1", "Alice likes tea.", 1)
    assert await redis.type(keys.chat(CHAT, "runs")) == b"zset"
    assert set(await redis.zrange(keys.chat(CHAT, "runs"), 0, -1)) == {b"old-run", b"r1"}


async def test_an_import_chunk_meeting_a_wrong_type_writes_nothing(
    redis: Any, key_prefix: str
) -> None:
    """An import checks each key's type itself first (naming the role: ``ChatKeyCorrupt``);
    the preflight stands behind it. A scope's live index planted as a hash: refused, the
    role named, nothing written, with or without the preflight."""
    source = CardStore(redis, Keys(key_prefix + "src:"))
    for i, fact in enumerate(["Alice likes tea.", "Alice skis.", "Alice plays chess."]):
        await _apply(source, f"r{i}", fact, i + 1)
    snap = await read_snapshot(source, CHAT, rounds=3)
    keys = Keys(key_prefix + "dst:")
    chats = keys.prefix + "chats"
    await redis.sadd(chats, str(CHAT))
    target = CardStore(redis, keys)
    active = [k for k in await source.chat_keys(CHAT) if ":active:" in k]
    assert active
    await plant(redis, keys.chat(CHAT, "active:" + active[-1].partition(":active:")[2]), "zset")

    for shipped in (True, False):
        if not shipped:
            target._more["import"] = redis.register_script(_without_preflight(_script("import")))
        before = await dump_all(redis, keys.prefix)
        with pytest.raises(ChatKeyCorrupt) as refused:
            await write_snapshot(target, snap, now=T0, chats_key=chats, chunk_items=50, replans=2)
        assert refused.value.role == "active"
        assert await dump_all(redis, keys.prefix) == before


# -- any one key a settlement writes ---------------------------------------------------------

#: Each typed write a settlement declares (a DEL takes any type: nothing to plant).
CASES = [
    (kind, command, role)
    for kind, pairs in PAIRS.items()
    for command, role in pairs
    if command in NEEDED_TYPES
]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=st.sampled_from(CASES), chat=st.integers(1, 10**6))
async def test_any_one_wrong_type_key_of_a_settlement_leaves_the_keyspace_as_it_was(
    redis: Any, settings: Settings, case: tuple[str, str, Any], chat: int
) -> None:
    kind, command, role = case
    run_settings = _deployment(settings)  # each example a deployment of its own
    keys = Keys(run_settings.key_prefix)
    claim = await _claimed(run_settings, redis, chat)
    await plant(redis, _key(role, keys, claim.id), NEEDED_TYPES[command])
    store = RunStore(redis, run_settings)
    assert await _refused(redis, keys.prefix, _settle(kind, store, claim))


# -- the integer check is INCR's own ---------------------------------------------------------

_PROBE = with_preflight(
    "preflight({INCR = {KEYS[1]}, HSET = {KEYS[2]}})\n"
    "redis.call('HSET', KEYS[2], 'written', 1)\n"
    "return redis.call('INCR', KEYS[1])"
)
_PLAIN = "return redis.call('INCR', KEYS[1])"
_TOP = str(INT64_MAX)
VALUES = st.one_of(
    st.integers(-(2**64), 2**64).map(str),
    st.sampled_from(["0", "-0", "007", "+1", " 1", "1 ", "", "1e3", "0x10", _TOP, "-" + _TOP]),
    st.sampled_from([str(INT64_MAX - 1), str(-(2**63)), str(-(2**63) - 1), str(2**63)]),
    st.text(alphabet="-+0123456789 .e", max_size=21),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(value=VALUES)
async def test_the_preflight_refuses_a_counter_exactly_when_incr_would(
    redis: Any, key_prefix: str, value: str
) -> None:
    counter, other, plain = (f"{{{key_prefix}}}:{n}" for n in ("c", "h", "p"))
    await redis.delete(counter, other, plain)
    await redis.set(counter, value)
    await redis.set(plain, value)
    try:
        expected: Any = await redis.eval(_PLAIN, 1, plain)
    except ResponseError as exc:
        expected = str(exc).partition(" script:")[0]
    try:
        got: Any = await redis.eval(_PROBE, 2, counter, other)
    except ResponseError as exc:
        got = str(exc).partition(" script:")[0]
        assert await redis.exists(other) == 0  # refused before the first write
    assert got == expected, value
