"""Token budgets, run slices and continuations (§10): every message is covered exactly once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_worker.consolidation.batching import (
    after_cursor,
    continuation_request,
    estimate_tokens,
    message_tokens,
    pack_batches,
    select_slice,
    split_text,
)
from memory_worker.consolidation.noise import filter_messages, noise_reason
from memory_worker.models import Cursor, Message, RunRequest

START = datetime(2026, 3, 1, tzinfo=UTC)


def msg(mid: int, text: str, minute: int | None = None, **flags: bool) -> Message:
    return Message(
        message_id=mid,
        user_id=1,
        sender_name="A",
        text=text,
        sent_at=START + timedelta(minutes=mid if minute is None else minute),
        **flags,
    )


def request(messages: list[Message], cursor: Cursor | None = None) -> RunRequest:
    return RunRequest(
        chat_id=5,
        range_start=START,
        range_end=START + timedelta(days=1),
        messages=messages,
        cursor=cursor,
    )


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("", 1, 1),
        ("abcd" * 100, 100, 100),
        ("привет " * 100, 300, 400),
        ("日本語のテキスト" * 10, 80, 80),
    ],
    ids=["empty", "ascii", "cyrillic", "cjk"],
)
def test_estimate_tokens(text: str, low: int, high: int) -> None:
    assert low <= estimate_tokens(text) <= high


def test_cyrillic_costs_more_than_ascii_of_same_length() -> None:
    assert estimate_tokens("а" * 400) > estimate_tokens("a" * 400)


def test_after_cursor_orders_by_time_then_id_and_skips_covered() -> None:
    messages = [msg(3, "c", 1), msg(1, "a", 1), msg(2, "b", 0), msg(4, "d", 2)]
    assert [m.message_id for m in after_cursor(messages, None)] == [2, 1, 3, 4]
    cursor = Cursor(after_sent_at=START + timedelta(minutes=1), after_message_id=1)
    assert [m.message_id for m in after_cursor(messages, cursor)] == [3, 4]


def test_select_slice_stops_at_budget_and_noise_is_free() -> None:
    messages = [msg(1, "a" * 200), msg(2, "", is_bot=True), msg(3, "b" * 200), msg(4, "c" * 200)]
    kept = {1, 3, 4}
    per = message_tokens(messages[0])
    cut = select_slice(messages, kept, budget_tokens=2 * per, max_messages=100)
    assert [m.message_id for m in cut.covered] == [1, 2, 3]
    assert [m.message_id for m in cut.kept] == [1, 3]
    assert [m.message_id for m in cut.rest] == [4]


def test_select_slice_message_cap() -> None:
    messages = [msg(i, "x") for i in range(1, 8)]
    cut = select_slice(messages, set(range(1, 8)), budget_tokens=10_000, max_messages=3)
    assert [m.message_id for m in cut.covered] == [1, 2, 3]
    assert len(cut.rest) == 4


def test_a_tail_of_noise_is_covered_without_a_continuation() -> None:
    messages = [msg(1, "a"), msg(2, "b"), msg(3, "", is_bot=True), msg(4, "fwd", is_forward=True)]
    cut = select_slice(messages, {1, 2}, budget_tokens=10_000, max_messages=2)
    assert [m.message_id for m in cut.covered] == [1, 2, 3, 4]
    assert cut.rest == ()
    assert continuation_request(request(messages), cut) is None


def test_an_oversized_first_message_is_taken_alone() -> None:
    messages = [msg(1, "word " * 2000), msg(2, "short")]
    cut = select_slice(messages, {1, 2}, budget_tokens=100, max_messages=10)
    assert [m.message_id for m in cut.kept] == [1]
    batches = pack_batches(cut.kept, budget_tokens=100, max_messages=10)
    assert len(batches) > 1
    assert all(sum(p.tokens for p in batch) <= 100 for batch in batches)
    assert "".join(p.text for b in batches for p in b) == messages[0].text
    parts = [p.part for b in batches for p in b]
    assert parts[0] == f"1/{len(parts)}"
    assert parts[-1] == f"{len(parts)}/{len(parts)}"


def test_continuation_keeps_the_window_and_moves_the_cursor() -> None:
    messages = [msg(i, f"message {i}") for i in range(1, 6)]
    original = request(messages)
    cut = select_slice(messages, set(range(1, 6)), budget_tokens=10_000, max_messages=2)
    cont = continuation_request(original, cut)
    assert cont is not None
    assert (cont.range_start, cont.range_end, cont.chat_id) == (
        original.range_start,
        original.range_end,
        original.chat_id,
    )
    assert cont.cursor == Cursor(after_sent_at=messages[1].sent_at, after_message_id=2)
    assert [m.message_id for m in cont.messages] == [3, 4, 5]
    assert cont.natural_key("v1") != original.natural_key("v1")


@given(
    texts=st.lists(
        st.one_of(
            st.text(min_size=0, max_size=300),
            st.just("Remote job, $300 a day, no experience, DM me"),
        ),
        min_size=1,
        max_size=30,
    ),
    bots=st.lists(st.booleans(), min_size=30, max_size=30),
    minutes=st.lists(st.integers(0, 5), min_size=30, max_size=30),
    budget=st.integers(40, 400),
    cap=st.integers(1, 6),
)
@settings(max_examples=150, deadline=None)
def test_continuation_chain_covers_every_message_exactly_once(
    texts: list[str], bots: list[bool], minutes: list[int], budget: int, cap: int
) -> None:
    messages = [msg(i + 1, text, minutes[i], is_bot=bots[i]) for i, text in enumerate(texts)]
    current: RunRequest | None = request(messages)
    covered: list[int] = []
    runs = 0
    while current is not None:
        runs += 1
        assert runs <= len(messages) + 1
        pending = after_cursor(current.messages, current.cursor)
        kept = {m.message_id for m in filter_messages(pending).kept}
        cut = select_slice(pending, kept, budget_tokens=budget, max_messages=cap)
        assert cut.kept or not kept
        covered += [m.message_id for m in cut.covered]
        for batch in pack_batches(cut.kept, budget_tokens=budget, max_messages=cap):
            assert len(batch) <= cap
            assert sum(p.tokens for p in batch) <= budget or len(batch) == 1
        current = continuation_request(current, cut)
        if current is not None:  # a continuation never holds noise alone
            assert any(noise_reason(m) is None for m in current.messages)
    assert sorted(covered) == sorted(m.message_id for m in messages)
    assert len(covered) == len(set(covered))


@given(text=st.text(min_size=1, max_size=3000), budget=st.integers(1, 200))
@settings(max_examples=150, deadline=None)
def test_split_text_round_trips_within_budget(text: str, budget: int) -> None:
    parts = split_text(text, budget)
    assert "".join(parts) == text
    assert all(part for part in parts)
    assert all(estimate_tokens(part) <= budget or len(part) == 1 for part in parts)
