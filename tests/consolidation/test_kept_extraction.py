"""A run's kept extraction (§7), the pure parts and the keep script.

- what invalidates a kept extraction, as a table (:func:`stale_reason`), and what the
  slice digest changes with;
- the record's bytes: every record the pipeline can make survives a round trip, and any
  stored value — arbitrary bytes, or a record with one field changed to anything — decodes
  to None or to a record whose every card the card store may keep (hypothesis);
- ``runs/lua/keep_extraction.lua`` against its Python twin over random sequences of keeps,
  lease changes and forgets, on a real Valkey.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_worker.cards import LinkWrite, NewCard, ResolutionWrite
from memory_worker.cards.model import Durability, Scope
from memory_worker.cards.rules import MAX_TOPICS, text_problem
from memory_worker.cards.writes import ResolutionOp
from memory_worker.consolidation.consolidate import plan_run
from memory_worker.consolidation.kept import (
    ExtractionCounts,
    KeptExtraction,
    Staleness,
    decode,
    encode,
    stale_reason,
)
from memory_worker.keys import Keys
from memory_worker.models import Cursor
from memory_worker.runs import RunStore
from memory_worker.runs.model import keep_extraction
from memory_worker.settings import Settings
from tests.support.factories import make_request

MAX_BYTES = 700
COUNT_FIELDS = (
    "batches",
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "existing_cards_shown",
    "malformed_items",
    "salvaged_answers",
)
T0 = 1_800_000_000_000
TTL = 60_000

WORD = st.text("abcdefghij", min_size=1, max_size=12)
DIGITS = st.text("0123456789", min_size=1, max_size=6)
PHRASE = st.lists(WORD, min_size=1, max_size=5).map(" ".join)
SCORE = st.floats(min_value=0, max_value=1, allow_nan=False)
WHEN = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)


@st.composite
def cards(draw: st.DrawFn) -> NewCard:
    at = draw(WHEN)
    return NewCard(
        scope=draw(st.sampled_from(Scope)),
        thread_id=draw(st.integers(0, 2**40)),
        user_id=draw(st.none() | st.integers(-(2**40), 2**40)),
        card_type=draw(WORD),
        subject=draw(PHRASE),
        predicate=draw(WORD),
        object=draw(PHRASE),
        fact_text=draw(PHRASE),
        confidence=draw(SCORE),
        salience=draw(SCORE),
        durability=draw(st.none() | st.sampled_from(Durability)),
        source_message_ids=tuple(draw(st.lists(st.integers(0, 2**40), max_size=4))),
        valid_from=at,
        observed_at=at,
        expires_at=draw(st.none() | st.just(at + timedelta(days=2))),
    )


@st.composite
def records(draw: st.DrawFn) -> KeptExtraction:
    made = tuple(draw(st.lists(cards(), max_size=4)))
    index = st.none() | st.integers(0, len(made) - 1) if made else st.none()
    resolutions = draw(
        st.lists(
            st.builds(
                ResolutionWrite,
                old_card_id=DIGITS,
                op=st.sampled_from(ResolutionOp),
                new_index=index,
                into_card_id=st.none() | DIGITS,
                new_fact_text=st.none() | PHRASE,
                new_dedup_hash=st.none() | st.text("0123456789abcdef", min_size=8, max_size=8),
            ),
            max_size=3,
        )
    )
    links = (
        draw(
            st.lists(
                st.builds(
                    LinkWrite,
                    st.integers(0, len(made) - 1),
                    st.integers(0, len(made) - 1),
                    WORD,
                    SCORE,
                ),
                max_size=3,
            )
        )
        if made
        else []
    )
    return KeptExtraction(
        prompt_version=draw(st.sampled_from(["memory_v1", "memory_v2"])),
        slice_digest=draw(st.text("0123456789abcdef", min_size=64, max_size=64)),
        forget_epoch=draw(st.integers(0, 2**40)),
        kept_at_ms=draw(st.integers(0, 2**50)),
        cards=made,
        resolutions=tuple(resolutions),
        links=tuple(links),
        summary=draw(st.just("") | PHRASE),
        topics=tuple(draw(st.lists(WORD, max_size=MAX_TOPICS, unique=True))),
        participants=tuple(draw(st.lists(WORD, max_size=3, unique=True))),
        counts=ExtractionCounts(
            **dict(zip(COUNT_FIELDS, draw(st.tuples(*[st.integers(0, 2**31)] * 7)), strict=True)),
            dropped_by_validation=draw(st.dictionaries(WORD, st.integers(0, 100), max_size=3)),
        ),
    )


# --- what invalidates it ---------------------------------------------------------------------

FRESH = KeptExtraction("memory_v1", "a" * 64, forget_epoch=3, kept_at_ms=T0)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({}, None),
        ({"prompt_version": "memory_v2"}, Staleness.PROMPT_VERSION),
        ({"digest": "b" * 64}, Staleness.SLICE),
        ({"forget_epoch": 4}, Staleness.FORGET_EPOCH),
        ({"now_ms": T0 + TTL - 1}, None),
        ({"now_ms": T0 + TTL}, Staleness.EXPIRED),
        ({"now_ms": T0 - 1}, Staleness.EXPIRED),  # kept "in the future": a clock moved back
        ({"prompt_version": "memory_v2", "forget_epoch": 4}, Staleness.PROMPT_VERSION),
    ],
    ids=[
        "fresh",
        "another-prompt-version",
        "another-slice",
        "a-forget-since",
        "last-ms-of-ttl",
        "ttl-over",
        "from-the-future",
        "first-reason-wins",
    ],
)
def test_what_invalidates_a_kept_extraction(
    change: dict[str, Any], expected: Staleness | None
) -> None:
    asked: dict[str, Any] = {
        "prompt_version": "memory_v1",
        "digest": "a" * 64,
        "forget_epoch": 3,
        "now_ms": T0 + 1,
        "ttl_ms": TTL,
    } | change
    assert stale_reason(FRESH, **asked) is expected


def _digest(base: Settings, **changes: Any) -> str:
    request = make_request(5, texts=["I live in Lisbon", "I love green tea", "see you"])
    if changes.get("drop_message"):
        request = request.model_copy(update={"messages": request.messages[:-1]})
    if changes.get("later_window"):
        end = request.range_end + timedelta(minutes=1)
        request = request.model_copy(update={"range_end": end})
    if changes.get("cursor"):
        cursor = Cursor(after_sent_at=request.range_start, after_message_id=0)
        request = request.model_copy(update={"cursor": cursor})
    if changes.get("edited"):
        first = request.messages[0].model_copy(update={"text": "I live in Porto"})
        request = request.model_copy(update={"messages": [first, *request.messages[1:]]})
    return plan_run(request, base.model_copy(update=changes.get("tuned", {}))).digest


@pytest.mark.parametrize(
    "change",
    [
        {"drop_message": True},
        {"later_window": True},
        {"cursor": True},
        {"edited": True},
        {"tuned": {"max_batch_messages": 1}},  # other batches
        {"tuned": {"card_max_bytes": 100}},  # other validation limits
        {"tuned": {"short_ttl_days": 7.0}},
    ],
    ids=["a-message-less", "another-window", "a-cursor", "an-edited-text", "other-batches",
         "another-card-limit", "another-expiry"],
)  # fmt: skip
def test_the_slice_digest_changes_with_what_the_extraction_is_made_of(
    settings: Settings, change: dict[str, Any]
) -> None:
    assert _digest(settings) == _digest(settings)
    assert _digest(settings, **change) != _digest(settings)


def test_the_slice_digest_ignores_the_prompt_version_and_settings_that_do_not_shape_it(
    settings: Settings,
) -> None:
    """The prompt version is checked on its own (its own reason); the embedder is not part of
    the extraction at all."""
    assert _digest(settings, tuned={"embedding_dimension": 384}) == _digest(settings)


# --- the bytes -------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(records())
def test_every_record_the_pipeline_makes_survives_its_bytes(record: KeptExtraction) -> None:
    """100 examples."""
    assert decode(encode(record), card_max_bytes=MAX_BYTES) == record


def _json_values() -> st.SearchStrategy[Any]:
    leaves = (
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**63 - 1)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20)
        | st.sampled_from(["password: hunter2-Zq9!x", "sk-" + "A1b2" * 12, "", "2026-01-01"])
    )
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=12,
    )


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*path, i))
    return found


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _set(value[head], rest, new)
    return copy


def _cards_ok(record: KeptExtraction) -> bool:
    return all(
        text_problem(c.fact_text, c.subject, c.predicate, c.object, max_bytes=MAX_BYTES) is None
        and 0 <= c.confidence <= 1
        and 0 <= c.salience <= 1
        for c in record.cards
    ) and all(
        r.new_fact_text is None or text_problem(r.new_fact_text, "-", "-", "-", max_bytes=MAX_BYTES)
        is None
        for r in record.resolutions
    ) and all(
        0 <= x.from_index < len(record.cards) and 0 <= x.to_index < len(record.cards)
        for x in record.links
    )  # fmt: skip


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records(), st.data())
def test_a_stored_value_with_any_field_changed_decodes_to_none_or_a_keepable_record(
    record: KeptExtraction, data: st.DataObject
) -> None:
    """A stored value is a trust boundary (another version wrote it, a hand edit, a bad
    restore): decoding never raises, and what it answers holds only cards the card store
    may keep, indexes inside the record, and its summary masked. 120 examples."""
    stored = orjson.loads(encode(record))
    path = data.draw(st.sampled_from(_paths(stored)))
    changed = _set(stored, path, data.draw(_json_values()))
    decoded = decode(orjson.dumps(changed), card_max_bytes=MAX_BYTES)
    assert decoded is None or _cards_ok(decoded)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300))
def test_arbitrary_bytes_decode_to_none(raw: bytes | str) -> None:
    """200 examples."""
    assert decode(raw, card_max_bytes=MAX_BYTES) is None


@pytest.mark.parametrize(
    "secret", ["password: hunter2-Zq9!x", "my token is ghp_" + "a1B2c3D4e5" * 4]
)
def test_a_stored_card_holding_a_secret_is_not_used(secret: str) -> None:
    card = NewCard(
        Scope.CHAT, 0, None, "fact", "alice", "said", "it", "Alice said hi",
        0.5, 0.5, None, (1,), datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC),
        None,
    )  # fmt: skip
    record = replace(FRESH, cards=(card,))
    assert decode(encode(record), card_max_bytes=MAX_BYTES) == record
    tampered = replace(record, cards=(replace(card, fact_text=f"Alice said {secret}"),))
    assert decode(encode(tampered), card_max_bytes=MAX_BYTES) is None


def test_a_record_of_another_format_is_not_used() -> None:
    stored = orjson.loads(encode(FRESH))
    assert decode(orjson.dumps(stored), card_max_bytes=MAX_BYTES) == FRESH
    assert decode(orjson.dumps(stored | {"format": 2}), card_max_bytes=MAX_BYTES) is None


# --- the keep script and its twin ------------------------------------------------------------


async def test_the_keep_script_agrees_with_its_twin_over_random_sequences(
    settings: Settings, redis: Any
) -> None:
    """40 seeded sequences of 25 steps: keeps under either token and epoch, the lease moving
    to another owner or the run leaving ``processing``, forgets bumping the epoch; after each
    step the kept value is what the twin says."""
    store = RunStore(redis, settings.model_copy(update={"extraction_keep_seconds": 600}))
    keys = Keys(settings.key_prefix)
    run_id, chat = "r-twin", "77"
    for seed in range(40):
        rng = random.Random(seed)
        token, status, epoch = "t0", "processing", 0
        kept: bytes | None = None
        await redis.delete(keys.run_extraction(run_id), keys.forget_epochs)
        await redis.hset(keys.run(run_id), mapping={"lease_token": token, "status": status})
        for step in range(25):
            move = rng.choice(["keep", "keep", "keep", "lease", "status", "forget"])
            if move == "lease":
                token = rng.choice(["t0", "t1"])
                await redis.hset(keys.run(run_id), "lease_token", token)
            elif move == "status":
                status = rng.choice(["processing", "queued", "completed"])
                await redis.hset(keys.run(run_id), "status", status)
            elif move == "forget":
                epoch = int(await redis.hincrby(keys.forget_epochs, chat, 1))
            else:
                mine, claimed_under = rng.choice(["t0", "t1"]), rng.choice([epoch, epoch - 1])
                value = f"{seed}:{step}".encode()
                twin = keep_extraction(
                    lease_token=token,
                    status=status,
                    epoch_now=epoch,
                    token=mine,
                    epoch=claimed_under,
                )
                done = await store._keep_extraction(
                    keys=[keys.run(run_id), keys.forget_epochs, keys.run_extraction(run_id)],
                    args=[mine, chat, claimed_under, value, 600_000],
                )
                assert bool(int(done)) is twin, (seed, step)
                kept = value if twin else kept
            assert await redis.get(keys.run_extraction(run_id)) == kept, (seed, step)
    ttl = await redis.pttl(keys.run_extraction(run_id))
    assert kept is None or 0 < ttl <= 600_000
