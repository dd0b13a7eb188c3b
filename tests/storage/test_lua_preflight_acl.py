"""An ACL that denies a script's later write refuses the whole call, nothing written (§7
"Store faults"), on a real Valkey with a real ACL user.

Each case denies the user exactly one (command, key) pair, the one of the script's last write
(root permissions: every key, every command but that one; a selector gives that command back
on every key but that one), and calls the script as the store does. The call raises
``NOPERM`` (the store's ``StoreWriteRefused("noperm")``) and every key of the deployment dumps
to the same bytes. The same script with its preflight taken out is called next, under the
same ACL: it is refused too, but only after it wrote (the keyspace changed), which is what
the preflight prevents. A hypothesis property denies any one pair a settlement may write.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.exceptions import ResponseError

from llm_client._lua import PREFLIGHT
from memory_worker.cards import CardStore, RunWrites
from memory_worker.cards.store import _script
from memory_worker.cards.transfer import read_snapshot, write_snapshot
from memory_worker.errors import StoreWriteRefused
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.runs.policy import FailurePlan
from memory_worker.runs.store import _COMPLETE, _FAIL, _RELEASE
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.storage.faults import store_answer
from tests.faults.rows_refusals import all_keys_but
from tests.support.cards import CHAT, T0, new
from tests.support.dumps import dump_all
from tests.support.factories import make_request

#: The preflight taken out: what every script was before it (the control).
NO_PREFLIGHT = "local function preflight(writes) end\n"
MODEL = "m16"
#: Arguments after the key that make a well-formed command for ``ACL DRYRUN``.
DRYRUN_ARGS: dict[str, tuple[str, ...]] = {"INCR": (), "DEL": (), "HDEL": ("f",), "ZREM": ("m",)}


@dataclass
class Acl:
    admin: Any
    user: Any  # a client logged in as the ACL user
    name: str
    password: str

    async def deny(self, command: str, key: str) -> None:
        """Deny the user ``command`` on ``key`` only (every other pair allowed)."""
        cmd = command.lower()
        selector = "(" + " ".join([*(f"~{p}" for p in all_keys_but([key])), f"+{cmd}"]) + ")"
        await self.admin.execute_command(
            "ACL", "SETUSER", self.name, "reset", "on", f">{self.password}", "~*", "&*"
        )
        await self.admin.execute_command("ACL", "SETUSER", self.name, "+@all", f"-{cmd}", selector)
        args = DRYRUN_ARGS.get(command, ("1", "1"))
        denied = await self.admin.execute_command("ACL", "DRYRUN", self.name, cmd, key, *args)
        other = await self.admin.execute_command("ACL", "DRYRUN", self.name, cmd, key + "~", *args)
        assert denied not in (b"OK", "OK"), denied
        assert other in (b"OK", "OK"), other

    async def allow_all(self) -> None:
        await self.admin.execute_command(
            "ACL", "SETUSER", self.name, "reset", "on", f">{self.password}", "~*", "&*", "+@all"
        )


@pytest.fixture
async def acl(private_valkey: EmbeddedValkey) -> AsyncIterator[Acl]:
    admin: Any = client_from_url(private_valkey.url)
    name, password = f"pf-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    found = Acl(admin, None, name, password)
    await found.allow_all()
    socket_path = private_valkey.url.rpartition("@")[2]
    found.user = client_from_url(f"unix://{name}:{password}@{socket_path}")
    try:
        yield found
    finally:
        await found.user.aclose()
        await admin.execute_command("ACL", "DELUSER", name)
        await admin.aclose()


@pytest.fixture
def run_settings(private_valkey: EmbeddedValkey, key_prefix: str, tmp_path: Path) -> Settings:
    return Settings(redis_url=private_valkey.url, key_prefix=key_prefix, data_dir=tmp_path / "v")


def _refused(error: BaseException) -> bool:
    answer = store_answer(error)
    return isinstance(answer, StoreWriteRefused) and answer.code == "noperm"


async def _refused_and_unchanged(acl: Acl, prefix: str, call: Callable[[], Awaitable[Any]]) -> bool:
    """Whether ``call`` is refused with NOPERM; asserts it; answers whether the keyspace
    stayed the same to the byte."""
    before = await dump_all(acl.admin, prefix)
    with pytest.raises(ResponseError) as refused:
        await call()
    assert _refused(refused.value), refused.value
    return await dump_all(acl.admin, prefix) == before


def _without_preflight(script_text: str) -> str:
    assert PREFLIGHT in script_text
    return script_text.replace(PREFLIGHT, NO_PREFLIGHT, 1)


# -- the run store's settlements ------------------------------------------------------------


async def _claimed(settings: Settings, admin: Any, chat: int) -> ClaimedRun:
    store = RunStore(admin, settings)
    await store.enqueue(make_request(chat))
    claim = await store.claim("w1")
    assert claim is not None
    return claim


def _settle(kind: str, store: RunStore, claim: ClaimedRun) -> Callable[[], Awaitable[Any]]:
    if kind == "complete":
        return lambda: store.complete(claim, {"cards": 0})
    if kind == "release":
        return lambda: store.release(claim, reason="shutdown")
    plan = FailurePlan(retire=False, next_attempt_at_ms=10**13)
    return lambda: store.fail(claim, plan, code="E", reason=None, message="boom")


#: Each settlement: its script, the attribute the store keeps it in, and its last write in the
#: path taken here (complete: the completed counter; release: back on the queue; fail: on
#: the retry schedule).
SETTLEMENTS: dict[str, tuple[str, str, str, Callable[[Keys], str]]] = {
    "complete": (_COMPLETE, "_complete", "HINCRBY", lambda k: k.counters),
    "release": (_RELEASE, "_release", "ZADD", lambda k: k.queued),
    "fail": (_FAIL, "_fail", "ZADD", lambda k: k.retry),
}


@pytest.mark.parametrize("kind", sorted(SETTLEMENTS))
async def test_a_settlement_denied_its_last_write_writes_nothing(
    acl: Acl, run_settings: Settings, kind: str
) -> None:
    script, attribute, command, key_of = SETTLEMENTS[kind]
    keys = Keys(run_settings.key_prefix)
    claim = await _claimed(run_settings, acl.admin, 51)
    store = RunStore(acl.user, run_settings)
    await acl.deny(command, key_of(keys))

    assert await _refused_and_unchanged(acl, keys.prefix, _settle(kind, store, claim))
    run = await RunStore(acl.admin, run_settings).get(claim.id)
    assert (run.status, run.attempts) == (RunStatus.PROCESSING, 1)

    # the control: without its preflight the same script half-applies under the same ACL
    setattr(store, attribute, acl.user.register_script(_without_preflight(script)))
    assert not await _refused_and_unchanged(acl, keys.prefix, _settle(kind, store, claim))

    await acl.allow_all()  # once the ACL allows it, the settlement lands (on a fresh run)
    claim = await _claimed(run_settings, acl.admin, 52)
    assert await _settle(kind, RunStore(acl.user, run_settings), claim)()


# -- the card store: a run's card write and an import ---------------------------------------


async def _apply(store: CardStore, run_id: str, fact: str, seed: int) -> None:
    writes = RunWrites(observed_at=T0, cards=[new(fact, seed=seed)], embedding_model=MODEL)
    await store.apply_run(CHAT, run_id, writes, now=T0)


async def test_a_card_write_denied_its_last_write_writes_nothing(acl: Acl, key_prefix: str) -> None:
    keys = Keys(key_prefix)
    await _apply(CardStore(acl.admin, keys), "r1", "Alice likes tea.", 1)  # a chat with cards
    store = CardStore(acl.user, keys)
    await acl.deny("INCR", keys.chat(CHAT, "vecver"))  # its vectors changed: the last write

    assert await _refused_and_unchanged(
        acl, key_prefix, lambda: _apply(store, "r2", "Alice skis in winter.", 2)
    )
    store._apply = acl.user.register_script(_without_preflight(_script("apply")))
    assert not await _refused_and_unchanged(
        acl, key_prefix, lambda: _apply(store, "r3", "Alice plays chess.", 3)
    )


async def test_an_import_denied_its_last_write_writes_nothing(acl: Acl, key_prefix: str) -> None:
    source = CardStore(acl.admin, Keys(key_prefix + "src:"))
    for i, fact in enumerate(["Alice likes tea.", "Alice skis.", "Alice plays chess."]):
        await _apply(source, f"r{i}", fact, i + 1)
    snap = await read_snapshot(source, CHAT, rounds=3)
    keys = Keys(key_prefix + "dst:")
    chats = keys.prefix + "chats"
    await acl.admin.sadd(chats, str(CHAT))  # the chat joins the sweeps' set before the script
    target = CardStore(acl.user, keys)
    await acl.deny("INCR", keys.chat(CHAT, "vecver"))

    def imported() -> Awaitable[Any]:
        return write_snapshot(target, snap, now=T0, chats_key=chats, chunk_items=50, replans=2)

    assert await _refused_and_unchanged(acl, key_prefix, imported)
    target._more["import"] = acl.user.register_script(_without_preflight(_script("import")))
    assert not await _refused_and_unchanged(acl, key_prefix, imported)


# -- any one pair a settlement may write ----------------------------------------------------

#: (command, key role) of every write complete and release declare (their preflights).
PAIRS = {
    "complete": [
        ("HINCRBY", lambda k: k.worker_completed),
        ("HINCRBY", lambda k: k.counters),
        ("DEL", lambda k, rid: k.run_extraction(rid)),
        ("ZREM", lambda k: k.by_status(RunStatus.PROCESSING.value)),
        ("ZREM", lambda k: k.leases),
        ("ZADD", lambda k: k.by_status(RunStatus.COMPLETED.value)),
        ("HSET", lambda k, rid: k.run(rid)),
        ("HDEL", lambda k, rid: k.run(rid)),
    ],
    "release": [
        ("ZREM", lambda k: k.leases),
        ("ZREM", lambda k: k.by_status(RunStatus.PROCESSING.value)),
        ("HSET", lambda k, rid: k.run(rid)),
        ("HINCRBY", lambda k, rid: k.run(rid)),
        ("HINCRBY", lambda k: k.counters),
        ("HINCRBY", lambda k: k.runs_hourly),
        ("ZADD", lambda k: k.queued),
        ("ZADD", lambda k: k.by_status(RunStatus.QUEUED.value)),
    ],
}
CASES = [(kind, command, role) for kind, pairs in PAIRS.items() for command, role in pairs]


def _key(role: Any, keys: Keys, run_id: str) -> str:
    return str(role(keys, run_id) if role.__code__.co_argcount == 2 else role(keys))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=st.sampled_from(CASES), chat=st.integers(1, 10**6))
async def test_any_one_denied_pair_of_a_settlement_leaves_the_keyspace_as_it_was(
    acl: Acl, run_settings: Settings, case: tuple[str, str, Any], chat: int
) -> None:
    kind, command, role = case
    # each example a deployment of its own (a released run of the last one is not claimed)
    run_settings = run_settings.model_copy(
        update={"key_prefix": f"{run_settings.key_prefix}{uuid.uuid4().hex[:6]}:"}
    )
    keys = Keys(run_settings.key_prefix)
    await acl.allow_all()
    claim = await _claimed(run_settings, acl.admin, chat)
    await acl.deny(command, _key(role, keys, claim.id))
    store = RunStore(acl.user, run_settings)
    assert await _refused_and_unchanged(acl, keys.prefix, _settle(kind, store, claim))
    await acl.allow_all()
    assert await _settle(kind, store, claim)()  # the same settlement lands once allowed
