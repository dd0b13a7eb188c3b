"""Import files nobody here wrote (§13): hypothesis edits a valid export line by line — ids,
run ids, text sizes, confidences, scopes, hash fields, times, unicode, whole lines dropped,
repeated or replaced by junk — and imports it on a real Valkey into a chat that is empty,
already holds the file, or retracted the fact of the file's card 1 after its message.

Whatever the file, the import either raises one of the tree's typed errors and leaves every
key of the chat as it was (compared with DUMP), or succeeds and every card the chat then
holds keeps the card rules, checked here from the stored JSON by a plain reference (not the
import's own checks): size, no secret, scores in [0, 1], a known scope and type, a dedup hash
that is the hash of its text, an id ``INCR`` and Lua both hold; every key of the chat is one
a script may name; a retracted fact is not live again from an older message. Never another
exception. ``max_examples=200`` (about 8 s; a fifth to a quarter import).
"""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

import orjson
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from llm_client import as_text
from memory_worker.api import MemoryQueue
from memory_worker.cards import Card, CardStatus, Episode, Link, Scope, dedup_hash
from memory_worker.cards.export_format import Snapshot, export_lines
from memory_worker.errors import MemoryWorkerError
from memory_worker.keys import CHAT_SCRIPT_KEYS
from memory_worker.privacy.masking import contains_secret
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle

CHAT = -100777
T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
TYPES = {"preference", "identity", "project", "decision", "relationship", "recurring_topic"}
TYPES |= {"joke", "warning", "technical_fact", "event"}
LARGEST_ID = 2**53 - 1
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _card(card_id: str, fact: str, **kw: Any) -> Card:
    fields: dict[str, Any] = {
        "id": card_id,
        "chat_id": CHAT,
        "scope": Scope.USER,
        "user_id": 11,
        "card_type": "preference",
        "subject": "Alice",
        "predicate": "likes",
        "object": "",
        "fact_text": fact,
        "confidence": 0.7,
        "salience": 0.5,
        "observation_count": 1,
        "status": CardStatus.ACTIVE,
        "valid_from": T0,
        "observed_at": T0,
        "created_at": T0,
        "updated_at": T0,
        "source_message_ids": [int(card_id)],
        "first_run_id": "r1",
    } | kw
    sk = Card(**fields, dedup_hash="").scope_key
    h = dedup_hash(sk, fields["subject"], fields["predicate"], fields["object"], fact)
    return Card(**fields, dedup_hash=h)


def base_lines() -> list[bytes]:
    later = T0 + timedelta(days=1)
    cards = [
        _card("1", "Alice likes green tea"),
        _card("2", "The chat meets on Fridays", scope=Scope.CHAT, user_id=None),
        _card("3", "Alice lives in Lisbon", status=CardStatus.SUPERSEDED, superseded_by="4"),
        _card("4", "Alice lives in Porto", observed_at=later, source_message_ids=[4]),
        _card(
            "5",
            "Bob skis",
            subject="Bob",
            user_id=12,
            status=CardStatus.RETRACTED,
            retracted_at=later,
            retracted_by="ops",
            retract_reason="asked",
        ),
        _card("6", "Thread cards exist", scope=Scope.THREAD, user_id=None, thread_id=9),
    ]
    snap = Snapshot(
        chat_id=CHAT,
        cards=cards,
        card_vectors={c.id: bytes([int(c.id)] * 16) for c in cards[:4]},
        episodes=[
            Episode(
                run_id="r1",
                chat_id=CHAT,
                thread_id=0,
                summary="A talk",
                topics=["tea"],
                participants=["Alice"],
                range_start=T0,
                range_end=later,
                message_count=4,
                card_ids=["1", "2", "3", "4"],
                created_at=later,
            )
        ],
        episode_vectors={"r1": bytes(16)},
        links=[Link(from_card_id="1", relation="related", to_card_id="2", confidence=0.7)],
        authors={1: 11, 2: 11, 3: 11, 4: 11, 5: 12, 6: 11},
        runs={"r1": [11, 12]},
        model="m16",
        dimension=16,
        forget_epoch=0,
    )
    return list(export_lines(snap, exported_at=later))


BASE = base_lines()
FACT_1 = orjson.loads(BASE[1])["dedup_hash"]
RETRACTED_MS = int((T0 + timedelta(days=5)).timestamp() * 1000)
FIELDS = {
    "card": [
        "id", "chat_id", "scope", "thread_id", "user_id", "card_type", "subject", "predicate",
        "object", "fact_text", "confidence", "salience", "observation_count", "status",
        "durability", "valid_from", "observed_at", "expires_at", "superseded_by",
        "merged_into", "conflict_group", "source_message_ids", "dedup_hash", "first_run_id",
        "retracted_by", "retract_reason", "asserted_by", "corrects", "vector", "kind",
    ],
    "episode": [
        "run_id", "chat_id", "thread_id", "summary", "topics", "participants", "range_start",
        "range_end", "message_count", "card_ids", "vector",
    ],
    "link": ["from_card_id", "relation", "to_card_id", "confidence"],
    "author": ["message_id", "user_id"],
    "run": ["run_id", "user_ids"],
    "header": ["chat_id", "user_id", "version", "forget_epoch", "counts", "vectors"],
}  # fmt: skip
KINDS = [orjson.loads(x).get("kind", "header") for x in BASE]

ints = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 7, 12, 2**53 - 1, 2**53, 2**63 - 1, 2**63, 2**64, CHAT]),
)
texts = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "}:active:chat",
            "rX}:active:chat",
            "a:b",
            "{x}",
            "run-2",
            "7",
            "007",
            "99999999999999999999",
            "9007199254740992",
            "password: hunter2xyz",
            "4111 1111 1111 1111",
            "ghp_" + "a" * 36,
            "\u200bpassword\u200b: x",
            "ｐａｓｓｗｏｒｄ: hunter2xyz",
            "chat",
            "thread",
            "user",
            "galaxy",
            "event",
            "9999-01-01T00:00:00Z",
            "2026-03-01T12:00:00",
            "2026-03-02T00:00:00+05:00",
            "AAAAAAAAAAAAAAAAAAAAAA==",
            "",
            " ",
            "active",
            "retracted",
            "related",
            "a|b",
        ]
    ),
    st.integers(0, 1500).map(lambda n: "é" * n),
)
floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1e300, -1.0, 1.5])
)
values = st.one_of(
    ints,
    texts,
    floats,
    st.none(),
    st.booleans(),
    st.lists(ints, max_size=3),
    st.lists(texts, max_size=3),
    st.dictionaries(texts, ints, max_size=2),
)


card_ids = st.one_of(
    st.integers(1, 12).map(str),
    st.integers(1, 2**64).map(str),
    st.sampled_from(["007", "0", "-1", "99999999999999999999", str(2**53), str(2**53 - 1)]),
    st.text(max_size=5),
)
run_ids = st.one_of(
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,10}", fullmatch=True),
    st.sampled_from(["}:active:chat", "rX}:active:chat", "a:b", "{x}", " r", ""]),
)
prose = st.one_of(
    st.text(min_size=1, max_size=60),
    st.integers(0, 1500).map(lambda n: "é" * n),
    st.sampled_from(["password: hunter2xyz", "pays with 4111 1111 1111 1111", "Alice skis"]),
)
moments = st.one_of(
    st.datetimes(
        min_value=datetime(1960, 1, 1), max_value=datetime(2300, 1, 1), timezones=st.just(UTC)
    ).map(lambda d: d.isoformat()),
    st.sampled_from(["9999-01-01T00:00:00Z", "2026-03-01T12:00:00", "yesterday"]),
)
small_ints = st.one_of(st.integers(-5, 20), st.sampled_from([2**53, 2**63, 2**64, CHAT]))
TYPED: dict[str, Any] = {
    **dict.fromkeys(["id", "superseded_by", "merged_into", "conflict_group", "corrects"], card_ids),
    **dict.fromkeys(["from_card_id", "to_card_id"], card_ids),
    **dict.fromkeys(["run_id", "first_run_id"], run_ids),
    **dict.fromkeys(
        ["subject", "predicate", "object", "fact_text", "summary", "retract_reason"], prose
    ),
    **dict.fromkeys(["retracted_by", "asserted_by"], prose),
    **dict.fromkeys(["confidence", "salience"], st.one_of(st.floats(-2, 2), floats)),
    "scope": st.sampled_from(["chat", "thread", "user", "galaxy"]),
    "card_type": st.sampled_from([*sorted(TYPES), "fact", "galaxy"]),
    "status": st.sampled_from([*(x.value for x in CardStatus), "gone"]),
    "relation": st.sampled_from(["related", "supports", "a|b", "Same Topic", ""]),
    **dict.fromkeys(
        ["chat_id", "thread_id", "user_id", "message_id", "observation_count"], small_ints
    ),
    **dict.fromkeys(["message_count", "forget_epoch"], small_ints),
    **dict.fromkeys(
        ["valid_from", "observed_at", "expires_at", "range_start", "range_end"], moments
    ),
    "dedup_hash": st.text(alphabet="0123456789abcdef", max_size=40),
    "vector": st.binary(max_size=20).map(lambda b: base64.b64encode(b).decode()),
    "source_message_ids": st.lists(small_ints, max_size=4),
    "card_ids": st.lists(card_ids, max_size=3),
    "user_ids": st.lists(small_ints, max_size=3),
    **dict.fromkeys(["topics", "participants"], st.lists(prose, max_size=30)),
}


@st.composite
def edits(draw: st.DrawFn) -> tuple[list[tuple[Any, ...]], bool, str]:
    """1 to 3 changes to the base file (a value of the field's own type, mostly), whether the
    header's counts are made to match the lines, and the chat's state before the import."""
    changes: list[tuple[Any, ...]] = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3]))):
        i = draw(st.integers(0, len(BASE) - 1))
        what = draw(st.sampled_from(["set"] * 16 + ["drop", "repeat", "junk", "unset"]))
        if what in ("set", "unset"):
            name = draw(st.sampled_from(FIELDS[KINDS[i]]))
            typed = TYPED.get(name)
            value = draw(typed if typed is not None and draw(st.integers(0, 9)) else values)
            changes.append((what, i, name, value))
        elif what == "junk":
            changes.append(("junk", i, draw(st.binary(max_size=40))))
        else:
            changes.append((what, i))
    state = draw(st.sampled_from(["empty", "empty", "holds-it", "retracted-fact"]))
    return changes, draw(st.booleans()), state


def apply_edits(changes: list[tuple[Any, ...]], recount: bool) -> list[bytes]:
    lines: list[bytes | None] = list(BASE)
    extra: list[bytes] = []
    for change in changes:
        i = change[1]
        if lines[i] is None:
            continue
        if change[0] in ("set", "unset"):
            try:
                data = orjson.loads(lines[i] or b"")
            except orjson.JSONDecodeError:
                continue  # a line already made junk
            if change[0] == "unset":
                data.pop(change[2], None)
            else:
                data[change[2]] = change[3]
            lines[i] = json.dumps(data, ensure_ascii=i % 2 == 0).encode() + b"\n"
        elif change[0] == "junk":
            lines[i] = change[2] + b"\n"
        elif change[0] == "drop":
            lines[i] = None
        else:
            extra.append(lines[i] or b"")
    out = [x for x in lines if x is not None] + extra
    if recount and out and out[0] == BASE[0]:
        header = orjson.loads(out[0])
        kinds = [KINDS[BASE.index(x)] if x in BASE else "" for x in out[1:]]
        for name, kind in (("cards", "card"), ("episodes", "episode"), ("links", "link")):
            header["counts"][name] = kinds.count(kind)
        out[0] = orjson.dumps(header) + b"\n"
    return out


async def dump(q: MemoryQueue) -> dict[str, bytes]:
    client: Any = q.cards.redis
    return {k: await client.dump(k) for k in await q.cards.chat_keys(CHAT)}


def check_stored_card(card_id: str, c: dict[str, str]) -> None:
    """The card rules, from the stored JSON (short keys), by a plain reference."""
    assert card_id.isdigit()
    assert 1 <= int(card_id) <= LARGEST_ID
    assert c["fact"].strip()
    assert len(c["fact"].encode()) <= 700
    for name in ("subject", "predicate", "object"):
        assert len(c[name].encode()) <= 256
    for name in ("fact", "subject", "predicate", "object"):
        assert not contains_secret(c[name]), name
    assert 0.0 <= float(c["conf"]) <= 1.0
    assert 0.0 <= float(c["sal"]) <= 1.0
    assert c["type"] in TYPES
    assert c["status"] in {s.value for s in CardStatus}
    scope, thread, user = c["scope"], int(c.get("thread", "0")), c.get("user")
    assert scope in ("chat", "thread", "user")
    if scope == "thread":
        assert thread > 0
        assert c["sk"] == f"thread:{thread}"
    elif scope == "user":
        assert user is not None
        assert c["sk"] == f"user:{int(user)}"
    else:
        assert c["sk"] == "chat"
    assert c["h"] == dedup_hash(c["sk"], c["subject"], c["predicate"], c["object"], c["fact"])
    if c.get("run"):
        assert RUN_ID.fullmatch(c["run"])


async def check_chat(q: MemoryQueue) -> None:
    client: Any = q.cards.redis
    cards = {as_text(k): orjson.loads(v) for k, v in (await client.hgetall(q.cards.key(CHAT, "cards"))).items()}  # fmt: skip
    for card_id, stored in cards.items():
        check_stored_card(card_id, stored)
    seq = int(await client.get(q.cards.key(CHAT, "seq")) or 0)
    assert max((int(i) for i in cards), default=0) <= seq <= LARGEST_ID
    tag = q.keys.chat_tag(CHAT) + ":"
    for key in await q.cards.chat_keys(CHAT):
        suffix = key[len(tag) :]
        if suffix.startswith("active:"):
            assert re.fullmatch(r"chat|thread:[1-9]\d*|user:-?\d+", suffix[7:]), suffix
        elif suffix.startswith("episode:"):
            assert RUN_ID.fullmatch(suffix[8:]), suffix
            assert as_text(await client.type(key)) == "hash"
        else:
            assert suffix in CHAT_SCRIPT_KEYS, suffix


counter = count()


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=edits())
async def test_any_import_file_is_a_typed_error_with_nothing_written_or_cards_that_keep_the_rules(
    settings: Settings, redis: Any, case: tuple[list[tuple[Any, ...]], bool, str]
) -> None:
    changes, recount, before = case
    s = settings.model_copy(update={"key_prefix": f"{settings.key_prefix}h{next(counter)}:"})
    q = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
    q.clock = lambda: (T0 + timedelta(days=10)).timestamp()
    if before == "holds-it":
        await q.import_export(BASE)
    client: Any = q.cards.redis
    if before == "retracted-fact":  # the chat withdrew card 1's fact after its message
        await client.hset(q.cards.key(CHAT, "retracted"), FACT_1, str(RETRACTED_MS))
    keys_before = await dump(q)
    refused: MemoryWorkerError | None = None
    try:
        await q.import_export(apply_edits(changes, recount), source="f")
    except MemoryWorkerError as exc:
        refused = exc
    event(type(refused).__name__ if refused else "imported")
    if refused is not None:
        assert "\n" not in str(refused)
        assert "hunter2" not in str(refused)
        assert await dump(q) == keys_before
    await check_chat(q)
    if before == "retracted-fact":  # never live again from a message older than that
        holder = await client.hget(q.cards.key(CHAT, "dedup"), FACT_1)
        if holder is not None:
            raw = await client.hget(q.cards.key(CHAT, "cards"), holder)
            assert int(orjson.loads(raw)["obs_at"]) >= RETRACTED_MS
