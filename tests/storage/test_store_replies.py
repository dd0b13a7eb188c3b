"""Redis error replies (§7 "Store faults"): the one table, and what a store write does with each.

The table's rows are whole replies as servers sent them: captured from Valkey 9.1 (the
embedded server) and Redis 7.0 by provoking each one, and Redis 6's script wrapper as it
prints in published output; replies that cannot be provoked on one server here (a
cluster's ``TRYAGAIN``/``CLUSTERDOWN``, ``LOADING``, ``BUSY``) are the server source's text.
Each row also goes through redis-py's own parsers (which cut some codes off into exception
types) and back through the edge (:func:`store_answer`), and the live tests provoke each
class on a real server and count the attempts a store write makes.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis._parsers.base import BaseParser
from redis.asyncio.cluster import ClusterParser
from redis.exceptions import BusyLoadingError, OutOfMemoryError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError

from memory_worker.errors import (
    StoreDataCorrupt,
    StoreReplyError,
    StoreScriptError,
    StoreWriteRefused,
)
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.runs.policy import plan_failure
from memory_worker.settings import Settings
from memory_worker.storage.connections import retry_store_write
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.storage.faults import (
    is_store_outage,
    is_transient_fault,
    reply_text,
    store_answer,
)
from memory_worker.storage.replies import CODES, PHRASES, Reply, ReplyClass, classify_reply
from tests.support.factories import make_request
from tests.support.replies import parsed_error

T, R, C, S, U = (
    ReplyClass.TRANSIENT,
    ReplyClass.REFUSED,
    ReplyClass.CORRUPT,
    ReplyClass.SCRIPT,
    ReplyClass.UNKNOWN,
)
VK_SUFFIX = " script: on @user_script:1."  # Valkey 9.1
R7_SUFFIX = " script: 219bb33e7c6773035c720850383aa2ebb63d9904, on @user_script:1."  # Redis 7.0
R6_WRAPPER = "ERR Error running script (call to f_8727c9c34a61783916ca488b366c475cb3a446cc): @user_script:1: "
MISCONF_VK = (
    "MISCONF Valkey is configured to save RDB snapshots, but it's currently unable to persist "
    "to disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Valkey logs for details about the "
    "RDB error."
)
OOM = "OOM command not allowed when used memory > 'maxmemory'."
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"

REPLIES = [
    # corrupt data: a plain command's reply, inside a script (Valkey, Redis 7), Redis 6's wrapper
    pytest.param(WRONGTYPE, C, "wrongtype", id="wrongtype"),
    pytest.param(WRONGTYPE + VK_SUFFIX, C, "wrongtype", id="wrongtype-script-valkey"),
    pytest.param(WRONGTYPE + R7_SUFFIX, C, "wrongtype", id="wrongtype-script-redis7"),
    pytest.param(R6_WRAPPER + WRONGTYPE, C, "wrongtype", id="wrongtype-script-redis6"),
    pytest.param("ERR increment or decrement would overflow", C, "overflow", id="overflow"),
    pytest.param(
        "ERR increment or decrement would overflow" + R7_SUFFIX, C, "overflow", id="overflow-script"
    ),
    pytest.param("ERR value is not an integer or out of range", C, "not_integer", id="not-integer"),
    pytest.param(
        "ERR value is not an integer or out of range" + VK_SUFFIX,
        C,
        "not_integer",
        id="not-integer-script",
    ),
    pytest.param("ERR hash value is not an integer", C, "not_integer", id="hash-not-integer"),
    pytest.param("ERR value is not a valid float", C, "not_float", id="not-float"),
    pytest.param(
        "ERR value is not a valid float" + VK_SUFFIX, C, "not_float", id="zadd-not-float-script"
    ),
    # the store refuses writes
    pytest.param(OOM, R, "oom", id="oom"),
    pytest.param(OOM + VK_SUFFIX, R, "oom", id="oom-script-valkey"),
    pytest.param(OOM + R7_SUFFIX, R, "oom", id="oom-script-redis7"),
    pytest.param(MISCONF_VK, R, "misconf", id="misconf"),
    pytest.param(MISCONF_VK + VK_SUFFIX, R, "misconf", id="misconf-script"),
    pytest.param("NOREPLICAS Not enough good replicas to write.", R, "noreplicas", id="noreplicas"),
    pytest.param(
        "NOREPLICAS Not enough good replicas to write." + R7_SUFFIX,
        R,
        "noreplicas",
        id="noreplicas-script",
    ),
    pytest.param(
        "NOPERM this user has no permissions to access one of the keys used as arguments",
        R,
        "noperm",
        id="noperm",
    ),
    pytest.param(
        "ERR ACL failure in script: User settle has no permissions to run the 'hincrby' command"
        + VK_SUFFIX,
        R,
        "noperm",
        id="noperm-command-in-script-valkey",
    ),
    # a script's own error
    pytest.param(
        "ERR user_script:1: attempt to index local 't' (a nil value)" + VK_SUFFIX,
        S,
        "script",
        id="script-runtime-valkey",
    ),
    pytest.param(
        "ERR user_script:1: attempt to index local 't' (a nil value) script: "
        "e62b17c4a64e9b74a6f9be57909ea9e2d0e66784, on @user_script:1.",
        S,
        "script",
        id="script-runtime-redis7",
    ),
    pytest.param(
        "ERR user_script:1: Expected object key string but found T_END at character 2" + VK_SUFFIX,
        S,
        "script",
        id="script-cjson",
    ),
    pytest.param(
        "ERR user_script:1: Script attempted to access nonexistent global variable 'f'" + VK_SUFFIX,
        S,
        "script",
        id="script-global",
    ),
    pytest.param(
        "ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'",
        S,
        "script",
        id="script-compile",
    ),
    pytest.param(
        R6_WRAPPER + "user_script:1: attempt to compare nil with number",
        S,
        "script",
        id="script-runtime-redis6",
    ),
    # transient: heals by itself
    pytest.param("READONLY You can't write against a read only replica.", T, "readonly", id="ro"),
    pytest.param(
        "READONLY You can't write against a read only replica." + R7_SUFFIX,
        T,
        "readonly",
        id="readonly-script",
    ),
    pytest.param("NOSCRIPT No matching script.", T, "noscript", id="noscript"),
    pytest.param("LOADING Redis is loading the dataset in memory", T, "loading", id="loading"),
    pytest.param(
        "TRYAGAIN Multiple keys request during rehashing of slot", T, "tryagain", id="tryagain"
    ),
    pytest.param("CLUSTERDOWN The cluster is down", T, "clusterdown", id="clusterdown"),
    pytest.param("CLUSTERDOWN Hash slot not served", T, "clusterdown", id="slot-not-served"),
    pytest.param(
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        T,
        "masterdown",
        id="masterdown",
    ),
    pytest.param(
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.",
        T,
        "busy",
        id="busy",
    ),
    # nobody here has seen it: not retried
    pytest.param(
        "ERR unknown command 'NOSUCHCMD', with args beginning with: ", U, "unknown", id="unknown"
    ),
    pytest.param("boom", U, "unknown", id="error-reply-of-a-script"),
    pytest.param("EXECABORT Transaction discarded because of previous errors.", U, "unknown"),
]


@pytest.mark.parametrize(("reply", "kind", "code"), REPLIES)
def test_each_real_reply_has_its_class(reply: str, kind: ReplyClass, code: str) -> None:
    assert classify_reply(reply) == Reply(kind, code)


@pytest.mark.parametrize("parser", [BaseParser, ClusterParser], ids=["plain", "cluster"])
@pytest.mark.parametrize(("reply", "kind", "code"), REPLIES)
def test_the_edge_types_what_redis_py_raised_as_the_table_says(
    parser: type[BaseParser], reply: str, kind: ReplyClass, code: str
) -> None:
    """redis-py cuts some codes off into its own exception types; the edge puts them back."""
    error = parsed_error(reply, parser)
    if not isinstance(error, ResponseError):  # LOADING: redis-py raises a ConnectionError
        assert (kind, is_transient_fault(error), store_answer(error)) == (T, True, None)
        return
    assert classify_reply(reply_text(error)) == Reply(kind, code)
    answer = store_answer(error)
    expected = {
        T: None,
        R: StoreWriteRefused,
        C: StoreDataCorrupt,
        S: StoreScriptError,
        U: StoreReplyError,
    }[kind]
    if expected is None:
        assert answer is None
        assert is_transient_fault(error)
        return
    assert type(answer) is expected
    assert answer is not None
    assert answer.code == code
    assert answer.__cause__ is error
    assert not is_transient_fault(error)
    assert is_store_outage(error) is (kind is R)
    assert reply not in str(answer)  # the reply's text is never carried (chat text may be in it)


def test_connection_loss_and_timeouts_are_transient() -> None:
    for error in (
        RedisConnectionError("Connection closed by server."),
        BusyLoadingError("Redis is loading the dataset in memory"),
        TimeoutError("Timeout reading from socket"),
    ):
        assert store_answer(error) is None
    assert is_transient_fault(RedisConnectionError("Connection closed by server."))


SUFFIXES = st.one_of(
    st.just(""),
    st.builds(
        lambda sha, line: f" script: {sha}, on @user_script:{line}.",
        st.text("0123456789abcdef", min_size=40, max_size=40),
        st.integers(1, 999),
    ),
    st.integers(1, 999).map(lambda line: f" script: on @user_script:{line}."),
)
KNOWN = [p.values[0] for p in REPLIES]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(KNOWN), SUFFIXES, st.integers(1, 999))
def test_a_reply_met_inside_a_script_classifies_as_the_reply(
    reply: str, suffix: str, line: int
) -> None:
    """Any server's script wrapping (Redis 7/Valkey suffix, Redis 6 wrapper) changes nothing."""
    if reply.startswith(("ERR Error", "ERR user_script")) or reply == "boom":
        return  # a script's own error and a script's own reply are not wrappable replies
    expected = classify_reply(reply)
    assert classify_reply(reply + suffix) == expected
    wrapper = f"ERR Error running script (call to f_{'a' * 40}): @user_script:{line}: "
    assert classify_reply(wrapper + reply) == expected


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300))
def test_any_text_classifies_and_an_unknown_first_word_is_never_retried(text: str) -> None:
    reply = classify_reply(text)
    first = text.strip().partition(" ")[0].lstrip("-")
    known = first in CODES or first == "ERR" or "user_script" in text or "script" in text
    known = known or any(text.strip().startswith(p) for p, _ in PHRASES)
    if not known:
        assert reply.kind is ReplyClass.UNKNOWN
    error = parsed_error(text) if text else ResponseError(text)
    assert store_answer(error) is None or not is_transient_fault(error)


# --- against a real server: each class provoked, and what a store write does with it -----------


class Attempts:
    """A write that runs ``command`` and counts its attempts."""

    def __init__(self, command: Any) -> None:
        self.command = command
        self.calls = 0

    async def __call__(self) -> Any:
        self.calls += 1
        return await self.command()


async def test_a_wrong_type_key_is_corrupt_data_and_not_retried(
    redis: Any, key_prefix: str
) -> None:
    key = f"{key_prefix}planted"
    await redis.rpush(key, "x")
    write = Attempts(lambda: redis.eval("return redis.call('HSET', KEYS[1], 'f', 1)", 1, key))
    with pytest.raises(StoreDataCorrupt) as raised:
        await retry_store_write("cards", write, cap=0.01)
    assert (raised.value.code, write.calls) == ("wrongtype", 1)


@pytest.mark.parametrize(
    ("value", "code"), [(str(2**63 - 1), "overflow"), ("99999999999999999999", "not_integer")]
)
async def test_a_counter_incr_cannot_raise_is_corrupt_data(
    redis: Any, key_prefix: str, value: str, code: str
) -> None:
    key = f"{key_prefix}seq"
    await redis.set(key, value)
    write = Attempts(lambda: redis.eval("return redis.call('INCR', KEYS[1])", 1, key))
    with pytest.raises(StoreDataCorrupt) as raised:
        await retry_store_write("cards", write, cap=0.01)
    assert (raised.value.code, write.calls) == (code, 1)


@pytest.mark.parametrize(
    "script", ["local t = nil; return t.x", "return cjson.decode('{')", "return ("]
)
async def test_a_scripts_own_error_is_not_retried(redis: Any, script: str) -> None:
    write = Attempts(lambda: redis.eval(script, 0))
    with pytest.raises(StoreScriptError):
        await retry_store_write("cards", write, cap=0.01)
    assert write.calls == 1


async def test_an_oom_store_refuses_and_the_write_is_not_retried(admin: Any) -> None:
    await admin.config_set("maxmemory", "1")  # noeviction: every growing write is refused
    write = Attempts(lambda: admin.set("bounded-retries:oom", "x"))
    with pytest.raises(StoreWriteRefused) as raised:
        await retry_store_write("cards", write, cap=0.01)
    assert (raised.value.code, write.calls) == ("oom", 1)


async def test_a_transient_fault_is_retried_until_the_write_lands() -> None:
    faults = [BusyLoadingError("Redis is loading the dataset in memory")] * 2

    async def command() -> str:
        if faults:
            raise faults.pop()
        return "landed"

    write = Attempts(command)
    assert await retry_store_write("cards", write, cap=0.01) == "landed"
    assert write.calls == 3


async def test_an_oom_store_takes_a_release_and_a_failure_but_refuses_a_claim(
    private_valkey: EmbeddedValkey, admin: Any, tmp_path: Path
) -> None:
    """Redis refuses only a script's first growing write: release.lua and fail.lua write the
    lease's ZREM first, so a run whose write the store refused still goes back (or fails)
    while claim.lua, which grows memory first, moves nothing."""
    settings = Settings(
        redis_url=private_valkey.url, key_prefix=f"oom{uuid.uuid4().hex[:6]}:", data_dir=tmp_path
    )
    store = RunStore(admin, settings)
    ids = [(await store.enqueue(make_request(900 + i, hour=i))).run_id for i in range(3)]
    first, second = await store.claim("w1"), await store.claim("w1")
    assert first is not None
    assert second is not None
    await admin.config_set("maxmemory", "1")  # noeviction: every growing write is refused
    with pytest.raises(OutOfMemoryError):
        await store.claim("w1")
    assert await store.release(first, reason="store_refused")
    plan = plan_failure(second.attempts, max_attempts=5, unit=60, max_units=60, now_ms=0)
    assert await store.fail(second, plan, code="StoreDataCorrupt", reason=None, message="m")
    await admin.config_set("maxmemory", "0")
    runs = {run.id: run for run in await store.get_many([i or "" for i in ids])}
    assert (runs[first.id].status, runs[first.id].attempts) == (RunStatus.QUEUED, 0)
    assert (runs[second.id].status, runs[second.id].attempts) == (RunStatus.FAILED, 1)
    assert [e.code for e in runs[second.id].error_log] == ["StoreDataCorrupt"]
    (third,) = [run for run in runs.values() if run.id not in {first.id, second.id}]
    assert (third.status, third.attempts) == (
        RunStatus.QUEUED,
        0,
    )  # the refused claim moved nothing
