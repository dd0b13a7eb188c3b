"""An import is a write like any other (§13), on real Valkey (the queue's server and the cluster).

The attacks that once worked, each refused or made harmless:

- a card over ``MEMORY_CARD_MAX_BYTES``, holding a password or a card number, with a
  confidence of ``1e300``, of an unknown type or scope, an id past what ``INCR`` reaches, a
  run id that spells another key's role: one :class:`InvalidExport` naming the line and the
  field, never a value of the file (a canary), and no key of the chat written;
- a dedup hash taken from the file: the stored one is computed from the text;
- a retracted fact under a new card id: left out (counted), never shown;
- an older backup imported after a forget: refused whole (:class:`ExportPredatesForget`);
- a key of the chat holding the wrong type, which once failed the script after it had
  written cards: refused before the first write (:class:`ChatKeyCorrupt`, the key's role);
- a big file: written in chunks of ``MEMORY_IMPORT_CHUNK_ITEMS``; a crash between two leaves
  whole chunks, and importing the file again completes it, as if it had run once;
- a file over ``MEMORY_IMPORT_MAX_BYTES``: refused before it is read whole (the CLI: exit 2,
  one line).
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import orjson
import pytest

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore, RunWrites, dedup_hash
from memory_worker.cards.export_format import Snapshot
from memory_worker.cards.import_plan import refused_by_retractions
from memory_worker.cards.rules import CARD_ID_MAX
from memory_worker.cards.writes import EpisodeWrite, LinkWrite
from memory_worker.errors import (
    ChatKeyCorrupt,
    ExportPredatesForget,
    ImportTooLarge,
    InvalidExport,
)
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle, close_cards_client
from tests.support.cards import ALICE, BOB, CHAT, T0, new
from tests.support.chat_state import read_state
from tests.support.harness import cli

CANARY = "Zelvorine"
MODEL = "m16"


@pytest.fixture
async def queues(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str
) -> AsyncIterator[tuple[MemoryQueue, MemoryQueue]]:
    """Two deployments on the same servers (key prefixes apart): the source and a target."""
    on_cluster = cards_redis is not redis
    made = []
    for suffix in ("", "b:"):
        s = settings.model_copy(
            update={
                "cards_url": cards_url if on_cluster else None,
                "key_prefix": settings.key_prefix + suffix,
                "forget_rewrite_aof": False,
            }
        )
        q = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
        q.clock = lambda: (T0 + timedelta(days=10)).timestamp()
        made.append(q)
    try:
        yield made[0], made[1]
    finally:
        for q in made:
            await close_cards_client(q.cards.redis, redis)


@pytest.fixture
def on_one_server(settings: Settings, redis: Any) -> tuple[MemoryQueue, MemoryQueue]:
    """The same two deployments on the queue's server alone (what is checked before any
    write does not depend on the topology)."""
    made = []
    for suffix in ("", "b:"):
        s = settings.model_copy(update={"key_prefix": settings.key_prefix + suffix})
        made.append(MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s))
    return made[0], made[1]


async def small_chat(q: MemoryQueue, *, run: str = "r1", n: int = 3) -> None:
    cards = [new(f"Alice likes tea number {i}", seed=i, sources=(i,)) for i in range(1, n + 1)]
    cards.append(new("Bob skis", subject="Bob", user=BOB, seed=50, sources=(90,)))
    episode = EpisodeWrite("A talk", ["tea"], ["Alice"], T0, T0 + timedelta(hours=1), 0, n)
    writes = RunWrites(
        observed_at=T0,
        cards=cards,
        links=[LinkWrite(0, 1, "related", 0.7)],
        episode=episode,
        embedding_model=MODEL,
        authors=[*((i, ALICE) for i in range(1, n + 1)), (90, BOB)],
    )
    await q.cards.apply_run(CHAT, run, writes, now=T0)


async def dump(store: CardStore, chat_id: int = CHAT) -> dict[str, bytes]:
    """Every key of the chat, byte for byte."""
    client: Any = store.redis
    return {k: await client.dump(k) for k in await store.chat_keys(chat_id)}


def line_of(lines: list[bytes], kind: str, nth: int = 0) -> int:
    return [i for i, x in enumerate(lines) if orjson.loads(x).get("kind") == kind][nth]


def edit(lines: list[bytes], i: int, **change: Any) -> list[bytes]:
    """Line ``i`` with ``change`` (stdlib JSON: an integer past 64 bits stays one)."""
    data = orjson.loads(lines[i]) | change
    return [*lines[:i], json.dumps(data).encode() + b"\n", *lines[i + 1 :]]


HOSTILE: dict[str, tuple[str, dict[str, Any], str]] = {
    "200-kb-card": ("card", {"fact_text": CANARY + "a" * 200_000}, "fact_text: over 700 bytes"),
    "password": ("card", {"fact_text": f"{CANARY} password: hunter2xyz"}, "fact_text: holds"),
    "card-number": ("card", {"object": f"{CANARY} 4111 1111 1111 1111"}, "object: holds"),
    "secret-reason": ("card", {"retract_reason": f"{CANARY} token=ghp_" + "a" * 36}, "reason"),
    "confidence-1e300": ("card", {"confidence": 1e300}, "confidence: Input should be less"),
    "salience-negative": ("card", {"salience": -0.5}, "salience: Input should be greater"),
    "unknown-scope": ("card", {"scope": CANARY}, "scope: Input should be"),
    "unknown-type": ("card", {"card_type": CANARY}, "card_type: not a card type"),
    "user-card-without-user": ("card", {"user_id": None}, "user_id: a user card names"),
    "id-past-incr": ("card", {"id": "99999999999999999999"}, "id: Value error, a card id from"),
    "id-not-digits": ("card", {"id": CANARY}, "id: Value error, not a card id"),
    "id-beyond-lua": ("card", {"id": str(CARD_ID_MAX + 1)}, "id: Value error, a card id from"),
    "huge-user-id": ("card", {"user_id": 2**70}, "user_id: Input should be a valid integer"),
    "year-9999": ("card", {"observed_at": "9999-01-01T00:00:00Z"}, "observed_at: Value error"),
    "run-id-spells-a-key": ("episode", {"run_id": "rX}:active:chat"}, "run_id: Value error"),
    "first-run-id": ("card", {"first_run_id": f"{CANARY} }}:x"}, "first_run_id: Value error"),
    "relation-with-a-bar": ("link", {"relation": "a|b"}, "relation: Value error"),
    "no-sources": ("card", {"source_message_ids": []}, "source_message_ids: a card not asserted"),
    "history-unknown-kind": (
        "card",
        {"history": [{"kind": CANARY, "at": "2026-03-01T12:00:00Z"}]},
        "history.0.kind: Input should be",
    ),
    "history-secret-request": (
        "card",
        {
            "history": [
                {
                    "kind": "created",
                    "at": "2026-03-01T12:00:00Z",
                    "request_id": f"{CANARY} token=ghp_" + "a" * 36,
                }
            ]
        },
        "history.0.request_id: Value error",
    ),
    "history-run-spells-a-key": (
        "card",
        {
            "history": [
                {"kind": "created", "at": "2026-03-01T12:00:00Z", "run_id": "rX}:active:chat"}
            ]
        },
        "history.0.run_id: Value error",
    ),
    "history-extra-field": (
        "card",
        {"history": [{"kind": "created", "at": "2026-03-01T12:00:00Z", "derived": True}]},
        "history.0.derived: Extra inputs",
    ),
    "history-too-long": (
        "card",
        {"history": [{"kind": "observed", "at": "2026-03-01T12:00:00Z"}] * 1001},
        "history: List should have at most 1000",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
async def test_a_card_the_rules_refuse_is_refused_by_line_and_field_and_nothing_is_written(
    on_one_server: tuple[MemoryQueue, MemoryQueue], case: str
) -> None:
    source, target = on_one_server
    await small_chat(source)
    lines = list((await source.export(CHAT)).lines())
    kind, change, message = HOSTILE[case]
    at = line_of(lines, kind)
    with pytest.raises(InvalidExport, match=message) as caught:
        await target.import_export(io.BytesIO(b"".join(edit(lines, at, **change))), source="f")
    text = str(caught.value)
    assert text.startswith(f"f:{at + 1}: ")
    for secret in (CANARY, "hunter2", "4111"):
        assert secret not in text
    assert "\n" not in text
    assert await target.cards.chat_keys(CHAT) == []


async def test_the_dedup_hash_is_computed_from_the_text_never_taken_from_the_file(
    queues: tuple[MemoryQueue, MemoryQueue],
) -> None:
    source, target = queues
    await small_chat(source)
    lines = list((await source.export(CHAT)).lines())
    at = line_of(lines, "card")
    await target.import_export(edit(lines, at, dedup_hash="0" * 32))
    for card in await target.cards.all_cards(CHAT):
        assert card.dedup_hash == dedup_hash(
            card.scope_key, card.subject, card.predicate, card.object, card.fact_text
        )


async def test_a_retracted_fact_under_a_new_card_id_is_left_out(
    queues: tuple[MemoryQueue, MemoryQueue],
) -> None:
    """The chat retracted card 1's fact; the file brings the same fact as card 70."""
    q, _ = queues
    await small_chat(q)
    lines = list((await q.export(CHAT)).lines())
    await q.retract(f"{CHAT}:1", actor="ops", reason="Alice asked")
    renamed = edit(lines, line_of(lines, "card"), id="70")
    link = line_of(renamed, "link")  # its link to card 2 goes with it
    renamed = [*renamed[:link], *renamed[link + 1 :]]
    header = orjson.loads(renamed[0])
    header["counts"]["links"] -= 1
    renamed = [orjson.dumps(header) + b"\n", *sorted(renamed[1:], key=_file_order)]
    done = await q.import_export(renamed)
    assert done["retracted"] == 1
    facts = {c.fact_text for c in await q.visible_cards(CHAT, user_id=ALICE)}
    assert "Alice likes tea number 1" not in facts
    assert await q.cards.get_card(CHAT, "70") is None


def _file_order(line: bytes) -> tuple[int, int]:
    data = orjson.loads(line)
    order = ["card", "episode", "link", "author", "run"].index(data["kind"])
    return order, int(data["id"]) if data["kind"] == "card" else 0


def test_refused_by_retractions_is_the_rule_a_runs_write_keeps() -> None:
    """Live cards whose fact was withdrawn after their newest message; no other."""
    old = new("Alice likes tea", seed=None, at=T0)
    cards = []
    for i, status in enumerate(["active", "competing", "retracted", "active"], start=1):
        cards.append(_stored(old, str(i), status))
    retracted_at = str(int((T0 + timedelta(hours=1)).timestamp() * 1000))
    earlier = str(int((T0 - timedelta(hours=1)).timestamp() * 1000))
    h = cards[0].dedup_hash
    assert refused_by_retractions(cards, {h: retracted_at}) == {"1", "2", "4"}
    assert refused_by_retractions(cards, {h: earlier}) == frozenset()
    assert refused_by_retractions(cards, {}) == frozenset()


def _stored(card: Any, card_id: str, status: str) -> Any:
    from memory_worker.cards import Card

    return Card(
        id=card_id,
        chat_id=CHAT,
        scope=card.scope,
        user_id=card.user_id,
        card_type=card.card_type,
        subject=card.subject,
        predicate=card.predicate,
        object=card.object,
        fact_text=card.fact_text,
        confidence=0.5,
        salience=0.5,
        observation_count=1,
        status=status,
        valid_from=card.valid_from,
        observed_at=card.observed_at,
        created_at=card.observed_at,
        updated_at=card.observed_at,
        source_message_ids=list(card.source_message_ids),
        dedup_hash=card.dedup_hash,
    )


async def test_an_older_backup_imported_after_a_forget_is_refused_whole(
    queues: tuple[MemoryQueue, MemoryQueue],
) -> None:
    """A backup, then Alice's card retracted and Alice forgotten (which takes her cards and
    their retraction records): the backup would bring all of it back."""
    q, _ = queues
    await small_chat(q)
    backup = list((await q.export(CHAT)).lines())
    await q.retract(f"{CHAT}:1", actor="ops", reason="no")
    await q.forget(CHAT, ALICE)
    before = await dump(q.cards)
    with pytest.raises(ExportPredatesForget, match="export it again; nothing was imported"):
        await q.import_export(backup)
    assert await dump(q.cards) == before
    assert {c.fact_text for c in await q.visible_cards(CHAT, user_id=ALICE)} == set()
    fresh = list((await q.export(CHAT)).lines())  # exported after the forget: restores
    assert orjson.loads(fresh[0])["forget_epoch"] >= 1
    assert (await q.import_export(fresh))["present"] == 1


#: Keys the import writes after its cards (once it failed there, cards written), planted
#: with a value of the wrong type.
PLANTED = {
    "episodes": ("episodes", "set"),
    "links": ("links", "set"),
    "authors": ("authors", "set"),
    "retracted": ("retracted", "set"),
    "vecver": ("vecver", "text"),
    "episode": ("episode:r1", "set"),
}


@pytest.mark.parametrize("role", sorted(PLANTED))
async def test_a_key_of_the_wrong_type_refuses_before_the_first_write(
    queues: tuple[MemoryQueue, MemoryQueue], role: str
) -> None:
    source, target = queues
    await small_chat(source)
    lines = list((await source.export(CHAT)).lines())
    suffix, how = PLANTED[role]
    client: Any = target.cards.redis
    key = target.cards.key(CHAT, suffix)
    if how == "set":
        await client.sadd(key, "planted")
    else:
        await client.set(key, "not a number")
    before = await dump(target.cards)
    with pytest.raises(ChatKeyCorrupt, match=f"chat {CHAT}'s {role} key") as caught:
        await target.import_export(lines)
    assert caught.value.role == role
    assert await dump(target.cards) == before


async def test_a_big_file_goes_in_bounded_chunks_and_a_crash_midway_resumes(
    queues: tuple[MemoryQueue, MemoryQueue], cards_redis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 cards, chunks of 7 items: every call writes at most 7; a crash after the 12th call
    (authorship fills the first 9) leaves whole chunks — every card written has its indexes
    and its messages' authors; importing the file again completes it, and the chat is then
    the chat a single import makes."""
    source, target = queues
    await small_chat(source, n=60)
    lines = list((await source.export(CHAT)).lines())
    for q in queues:
        q.settings = q.settings.model_copy(update={"import_chunk_items": 7})
    calls: list[int] = []
    plain = CardStore.run_script

    async def counted(self: CardStore, name: str, chat_id: int, args: Any, **kw: Any) -> Any:
        if name == "import":
            plan = orjson.loads(args[1])
            items = [len(plan[k]) for k in ("cards", "present", "episodes")]
            items += [len(plan[k]) // 2 for k in ("retracted", "authors", "links")]
            calls.append(sum(items))
            if crash and len(calls) > 12:
                raise ConnectionError("the importing process died")
        return await plain(self, name, chat_id, args, **kw)

    monkeypatch.setattr(CardStore, "run_script", counted)
    crash = True
    with pytest.raises(ConnectionError):
        await target.import_export(lines)
    assert len(calls) == 13
    assert max(calls) <= 7
    state = await read_state(cards_redis, target.keys, CHAT)
    for card_id, card in state.cards.items():  # whole chunks: each card fully indexed
        assert state.dedup[card["h"]] == card_id
        assert card_id in state.active[card["sk"]]
        assert all(m in state.authors for m in card["src"].split(","))
    assert 0 < len(state.cards) < 61

    crash = False
    calls.clear()
    done = await target.import_export(lines)
    assert done["present"] == len(state.cards)
    assert max(calls) <= 7
    once = source.settings.model_copy(update={"key_prefix": source.settings.key_prefix + "c:"})
    single = MemoryQueue(RedisHandle(source.redis, ""), once)
    single.clock = target.clock
    try:
        await single.import_export(lines)
        resumed = await read_state(cards_redis, target.keys, CHAT)
        fresh = await read_state(cards_redis, single.keys, CHAT)
        resumed.vecver = fresh.vecver = 0  # bumped once a chunk with vectors
        assert resumed == fresh
    finally:
        await close_cards_client(single.cards.redis, source.redis)


async def test_a_file_over_the_size_cap_is_refused_before_it_is_read_whole(
    queues: tuple[MemoryQueue, MemoryQueue],
) -> None:
    source, target = queues
    await small_chat(source)
    lines = list((await source.export(CHAT)).lines())
    target.settings = target.settings.model_copy(update={"import_max_bytes": 1024 * 1024})
    read: list[int] = []

    def stream() -> Any:
        yield lines[0]
        for i in range(10_000):
            read.append(i)
            author = orjson.dumps({"kind": "author", "message_id": i, "user_id": 1})
            yield author + b" " * 4096 + b"\n"

    with pytest.raises(ImportTooLarge, match=r"over 1048576 bytes \(MEMORY_IMPORT_MAX_BYTES\)"):
        await target.import_export(stream(), source="big")
    assert len(read) < 300  # stopped at the cap, not at the end
    assert await target.cards.chat_keys(CHAT) == []


async def test_the_cli_refuses_a_bad_or_too_big_file_in_one_line_and_exit_2(
    settings: Settings, on_one_server: tuple[MemoryQueue, MemoryQueue], tmp_path: Any
) -> None:
    source, target = on_one_server
    await small_chat(source)
    lines = list((await source.export(CHAT)).lines())
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(edit(lines, 1, fact_text=f"{CANARY} password: hunter2xyz")))
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"".join(lines) + b"x" * (1024 * 1024))
    elsewhere = settings.model_copy(update={"key_prefix": target.settings.key_prefix})
    for path, says in ((bad, ":2: card 1: fact_text: holds"), (big, "over 1048576 bytes")):
        done = cli(elsewhere, "import", str(path), MEMORY_IMPORT_MAX_BYTES="1048576")
        assert done.returncode == 2, done.stderr
        last = done.stderr.strip().splitlines()
        assert last[-1].startswith("error: ")
        assert says in last[-1]
        assert CANARY not in done.stderr + done.stdout
        assert "hunter2" not in done.stderr
    assert await target.cards.chat_keys(CHAT) == []


def test_a_snapshot_carries_the_forget_epoch_into_the_header() -> None:
    from datetime import UTC, datetime

    from memory_worker.cards.export_format import export_lines, parse_export

    lines = list(export_lines(Snapshot(chat_id=5, forget_epoch=3), exported_at=datetime.now(UTC)))
    assert orjson.loads(lines[0])["forget_epoch"] == 3
    assert parse_export(lines).forget_epoch == 3
    header = orjson.loads(lines[0])
    del header["forget_epoch"]  # a file from before exports carried it
    assert parse_export([orjson.dumps(header) + b"\n"]).forget_epoch is None


def test_two_live_cards_of_one_fact_are_refused() -> None:
    from datetime import UTC, datetime

    from memory_worker.cards.export_format import export_lines, parse_export

    one = _stored(new("Alice likes tea", seed=None), "1", "active")
    two = one.model_copy(update={"id": "2", "fact_text": "alice LIKES tea."})
    snap = Snapshot(chat_id=CHAT, cards=[one, two])
    with pytest.raises(InvalidExport, match=r":3: card 2: the same fact as card 1, both live"):
        parse_export(list(export_lines(snap, exported_at=datetime.now(UTC))))
