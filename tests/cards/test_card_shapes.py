"""Which of a chat's keys a "corrupt data" answer found misshapen (§7; ``cards/shapes.py``).

The table of key types is checked against what the card scripts really write (a chat with
cards, an expiring card, a link, an episode, authors, vectors, a retraction and a forget
epoch, on a plain server and on the cluster); each key planted with a wrong type, and each
counter at a value ``INCR`` cannot raise, is named by its role and nothing else is; and
:func:`incrementable` agrees with a real server's ``INCR`` on arbitrary values.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.exceptions import ResponseError

from memory_worker.cards import CardStore, Scope
from memory_worker.cards.edits import retract_card
from memory_worker.cards.forget import CardForget
from memory_worker.cards.shapes import (
    COUNTERS,
    KEY_TYPES,
    KeyShape,
    incrementable,
    misshapen,
    read_shapes,
)
from memory_worker.cards.writes import EpisodeWrite, LinkWrite
from memory_worker.keys import CHAT_SCRIPT_KEYS, Keys
from tests.support.cards import CHAT, T0, new, writes
from tests.support.cards import store as store  # the card-store fixture

RUN = "r-shapes"


def test_every_fixed_key_of_a_chat_has_its_types() -> None:
    assert set(KEY_TYPES) == set(CHAT_SCRIPT_KEYS)
    assert all(KEY_TYPES[role] == frozenset({"string"}) for role in COUNTERS)


@pytest.mark.parametrize(
    ("shapes", "problems"),
    [
        pytest.param([KeyShape("cards", "none")], (), id="missing-is-fine"),
        pytest.param([KeyShape("cards", "hash")], (), id="as-written"),
        pytest.param(
            [KeyShape("cards", "string")], ("cards holds a string, not a hash",), id="wrong-type"
        ),
        pytest.param([KeyShape("runs", "set")], (), id="runs-legacy-set"),
        pytest.param(
            [KeyShape("seq", "string", str(2**63 - 1).encode())],
            ("seq holds a counter INCR cannot raise",),
            id="counter-at-the-top",
        ),
        pytest.param(
            [KeyShape("vecver", "string", b"12abc")],
            ("vecver holds a counter INCR cannot raise",),
            id="counter-not-a-number",
        ),
        pytest.param([KeyShape("seq", "string", b"41")], (), id="counter-fine"),
        pytest.param(
            [KeyShape("active:user:11", "hash"), KeyShape("episode", "zset")],
            ("active:user:11 holds a hash, not a zset", "episode holds a zset, not a hash"),
            id="scope-and-episode",
        ),
        pytest.param([KeyShape("acl-probe", "list")], (), id="no-role-no-judgement"),
    ],
)
def test_misshapen(shapes: list[KeyShape], problems: tuple[str, ...]) -> None:
    assert misshapen(shapes) == problems


async def _a_full_chat(store: CardStore, cards_redis: Any, keys: Keys) -> None:
    """A chat holding every kind of key the card scripts write."""
    user_card = new("Alice likes tea.", sources=(1,), seed=1)
    chat_card = new(
        "The group meets on Fridays.",
        scope=Scope.CHAT,
        subject="group",
        sources=(2,),
        seed=2,
        expires=T0 + timedelta(days=3),
    )
    gone = new("Alice likes coffee.", sources=(3,), seed=3)  # retracted below
    episode = EpisodeWrite("They talked.", ["tea"], ["Alice"], T0, T0, 0, 2, embedding=None)
    await store.apply_run(
        CHAT,
        RUN,
        writes(
            user_card,
            chat_card,
            gone,
            links=[LinkWrite(0, 1, "related", 0.5)],
            episode=episode,
            authors=[(1, 11), (2, 12)],
            embedding_model="m",
        ),
        now=T0,
    )
    outcome = await retract_card(store, CHAT, "3", actor="ops", reason="wrong", now=T0)
    assert outcome.done
    await CardForget(cards_redis, keys, chunk=4).raise_epoch(CHAT, 1)


async def test_what_the_scripts_write_is_what_the_table_says(
    store: CardStore, cards_redis: Any, key_prefix: str
) -> None:
    keys = Keys(key_prefix)
    await _a_full_chat(store, cards_redis, keys)
    shapes = await read_shapes(cards_redis, keys, CHAT, episode=RUN)
    present = {s.role: s.type for s in shapes if s.type != "none"}
    assert {"cards", "seq", "dedup", "scopes", "expiry", "runs", "links", "episodes"} <= set(
        present
    )
    assert {"vec", "vecids", "vecver", "meta", "forget", "authors", "retracted"} <= set(present)
    assert {"episode", "active:chat", "active:user:11"} <= set(present), present
    assert misshapen(shapes) == ()
    assert await store.misshapen(CHAT, run_id=RUN) == ()


WRONG = {"hash": "string", "string": "list", "set": "hash", "zset": "set", "list": "zset"}


async def _plant(redis: Any, key: str, kind: str) -> None:
    await redis.delete(key)
    if kind == "string":
        await redis.set(key, "canary-4471 Alice's door code")
    elif kind == "list":
        await redis.rpush(key, "x")
    elif kind == "hash":
        await redis.hset(key, "f", "x")
    elif kind == "set":
        await redis.sadd(key, "x")
    else:
        await redis.zadd(key, {"x": 1})


@pytest.mark.parametrize("role", [*CHAT_SCRIPT_KEYS, "active:chat", "episode"])
async def test_each_key_planted_with_a_wrong_type_is_named_by_its_role(
    store: CardStore, cards_redis: Any, key_prefix: str, role: str
) -> None:
    keys = Keys(key_prefix)
    await _a_full_chat(store, cards_redis, keys)
    wanted = "hash" if role == "episode" else "zset" if role == "active:chat" else None
    kind = WRONG[wanted or sorted(KEY_TYPES[role])[0]]
    suffix = f"episode:{RUN}" if role == "episode" else role
    await _plant(cards_redis, keys.chat(CHAT, suffix), kind)
    problems = await store.misshapen(CHAT, run_id=RUN)
    if role == "scopes":  # its scopes' indexes are not read then: the set names itself
        assert problems == (f"scopes holds a {kind}, not a set",)
        return
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{role} holds a {kind}, not a ")
    assert "canary" not in problems[0]


@pytest.mark.parametrize("role", sorted(COUNTERS))
@pytest.mark.parametrize("value", [str(2**63 - 1), "99999999999999999999", "3.5", " 7"])
async def test_a_counter_incr_cannot_raise_is_named(
    store: CardStore, cards_redis: Any, key_prefix: str, role: str, value: str
) -> None:
    keys = Keys(key_prefix)
    await _a_full_chat(store, cards_redis, keys)
    await cards_redis.set(keys.chat(CHAT, role), value)
    assert await store.misshapen(CHAT) == (f"{role} holds a counter INCR cannot raise",)


VALUES = st.one_of(
    st.integers(-(2**64), 2**64).map(lambda n: str(n).encode()),
    st.sampled_from([b"0", b"-0", b"00", b"01", b"+1", b" 1", b"1 ", b"", b"9223372036854775806"]),
    st.binary(max_size=24),
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=VALUES)
async def test_incrementable_agrees_with_a_real_incr(
    redis: Any, key_prefix: str, value: bytes
) -> None:
    key = f"{key_prefix}counter"
    await redis.set(key, value)
    try:
        await redis.incr(key)
        raised = False
    except ResponseError:
        raised = True
    assert incrementable(value) is not raised, value
