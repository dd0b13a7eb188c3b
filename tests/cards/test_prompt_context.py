"""The prompt context's core (§13): ranking, one card per fact, the token budget, the block.

Pure tables and properties over :mod:`memory_worker.cards.prompt_context`; the calls on a
real store are ``tests/cards/test_context.py``.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_worker.cards.prompt_context import (
    HEADER,
    HEADER_TOKENS,
    Entry,
    Weights,
    estimate_tokens,
    line,
    line_tokens,
    rank,
    relevance,
    render,
    select,
    visible,
    with_header,
)

DAY = 86_400_000
T = int(datetime(2026, 5, 1, tzinfo=UTC).timestamp() * 1000)


def entry(
    card_id: str, fact: str = "", *, sal: float = 0.5, conf: float = 0.5, age_days: float = 0
) -> Entry:
    seen = T - int(age_days * DAY)
    return Entry(card_id, fact or f"fact {card_id}", sal, conf, seen - DAY, seen)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("abc", 1),
        ("abcd", 2),
        ("ж", 1),  # 2 bytes
        ("жжж", 2),
        ("日本", 2),  # 3 bytes a character
        ("Alice likes green tea.", 8),
    ],
    ids=["empty", "three-ascii", "four-ascii", "cyrillic", "three-cyrillic", "cjk", "sentence"],
)
def test_the_token_estimate_is_a_third_of_the_utf8_bytes_rounded_up(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


@pytest.mark.parametrize(
    ("entries", "relevant", "order"),
    [
        ([entry("1", sal=0.2), entry("2", sal=0.9)], {}, ["2", "1"]),
        ([entry("1", conf=0.2), entry("2", conf=0.9)], {}, ["2", "1"]),
        ([entry("1", age_days=90), entry("2", age_days=0)], {}, ["2", "1"]),
        ([entry("1", sal=0.9), entry("2", sal=0.2)], {"2": 1.0}, ["2", "1"]),
        ([entry("1"), entry("2"), entry("3")], relevance(["3", "1"]), ["3", "1", "2"]),
        ([entry("1", age_days=1), entry("2", age_days=0)], {}, ["2", "1"]),
        ([entry("10"), entry("9")], {}, ["9", "10"]),
    ],
    ids=[
        "salience",
        "confidence",
        "recency",
        "relevance-beats-salience",
        "recall-order",
        "newer-first",
        "then-lower-id",
    ],
)
def test_rank(entries: list[Entry], relevant: dict[str, float], order: list[str]) -> None:
    assert [e.card_id for e in rank(entries, relevant, Weights())] == order


def test_recency_is_measured_from_the_newest_card_not_the_clock() -> None:
    """The same store ranks the same whenever it is asked: only ages between cards count."""
    cards = [entry("1", sal=0.6, age_days=40), entry("2", sal=0.3, age_days=0)]
    later = [Entry(e.card_id, e.fact, e.salience, e.confidence, e.valid_from_ms + 365 * DAY,
                   e.observed_ms + 365 * DAY) for e in cards]  # fmt: skip
    assert [e.card_id for e in rank(cards, {}, Weights())] == [
        e.card_id for e in rank(later, {}, Weights())
    ]


def test_relevance_is_one_over_the_recall_rank() -> None:
    assert relevance([]) == {}
    assert relevance(["7", "3", "9", "3"]) == {"7": 1.0, "3": 0.5, "9": pytest.approx(1 / 3)}


def test_one_card_per_fact_and_a_line_too_big_is_skipped_for_smaller_ones() -> None:
    ranked = [
        entry("1", "Alice lives in Lisbon."),
        entry("2", "alice lives in  LISBON"),  # the same fact, normalised
        entry("3", "x" * 300),
        entry("4", "Bob skis"),
    ]
    budget = sum(
        estimate_tokens(text + "\n") for text in (HEADER, line(ranked[0]), line(ranked[3]))
    )
    assert [e.card_id for e in select(ranked, budget)] == ["1", "4"]


def test_nothing_fits_nothing_is_rendered() -> None:
    assert select([entry("1")], 3) == []
    assert render([]) == ""


#: Three cards, best first, whose lines cost 13, 23 and 9 tokens; the header costs 27.
SMALL = [
    Entry("1", "Alice lives in Lisbon.", 0.5, 0.5, T, T),
    Entry("2", "Bob is a nurse at the city hospital.", 0.5, 0.5, T - 30 * DAY, T),
    Entry("3", "Mia skis.", 0.5, 0.5, T, T),
]

#: (first budget, last budget, header shown, cards in the block): every budget 1-100.
SMALL_BUDGETS = [
    (1, 8, False, []),
    (9, 12, False, ["3"]),  # the best line does not fit alone: the best one that does
    (13, 21, False, ["1"]),  # the best card alone: no room for the header beside it
    (22, 35, False, ["1", "3"]),
    (36, 39, False, ["1", "2"]),
    (40, 48, True, ["1"]),  # the header fits beside the best card: it is kept
    (49, 62, True, ["1", "3"]),
    (63, 71, True, ["1", "2"]),
    (72, 100, True, ["1", "2", "3"]),
]


def test_the_small_budget_table_covers_every_budget_from_1_to_100() -> None:
    assert [line_tokens(e) for e in SMALL] == [13, 23, 9]
    assert HEADER_TOKENS == 27
    covered = [b for first, last, _, _ in SMALL_BUDGETS for b in range(first, last + 1)]
    assert covered == list(range(1, 101))


@pytest.mark.parametrize("budget", range(1, 101))
def test_a_small_budget_keeps_the_best_fact_that_fits_and_drops_the_header_first(
    budget: int,
) -> None:
    ((_, _, header, ids),) = [r for r in SMALL_BUDGETS if r[0] <= budget <= r[1]]
    chosen = select(SMALL, budget)
    text = render(chosen, budget)
    assert [e.card_id for e in chosen] == ids
    assert with_header(chosen, budget) is header
    assert text.startswith(HEADER) is header
    assert estimate_tokens(text) <= budget
    assert text.splitlines()[: 1 if header else 0] == ([HEADER] if header else [])
    assert [t for t in text.splitlines() if t != HEADER] == [line(e) for e in chosen]


def test_the_block_keeps_each_fact_in_its_language_with_its_dates() -> None:
    cards = [
        Entry("1", "Мария любит кататься на велосипеде.", 0.5, 0.5, T - 30 * DAY, T),
        Entry("2", "アリスは緑茶が好きです", 0.5, 0.5, T, T + 3_600_000),
        Entry("3", "Alice\nskis", 0.5, 0.5, T, T),
    ]
    assert render(cards) == (
        f"{HEADER}\n"
        "- [2026-04-01 – 2026-05-01] Мария любит кататься на велосипеде.\n"
        "- [2026-05-01] アリスは緑茶が好きです\n"
        "- [2026-05-01] Alice skis\n"
    )


def test_visible_is_live_and_not_past_expiry() -> None:
    assert visible({"status": "active", "exp": ""}, T)
    assert visible({"status": "competing", "exp": str(T + 1)}, T)
    assert not visible({"status": "active", "exp": str(T)}, T)
    for status in ("superseded", "retracted", "merged", "expired"):
        assert not visible({"status": status, "exp": ""}, T)


facts = st.text(alphabet=st.sampled_from("abc жё日 .!"), min_size=1, max_size=60)
entries = st.lists(
    st.builds(
        Entry,
        card_id=st.integers(1, 500).map(str),
        fact=facts,
        salience=st.floats(0, 1),
        confidence=st.floats(0, 1),
        valid_from_ms=st.integers(T - 400 * DAY, T),
        observed_ms=st.integers(T, T + 400 * DAY),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(entries, st.integers(0, 400), st.randoms(use_true_random=False))
def test_the_context_fits_its_budget_and_does_not_depend_on_input_order(
    cards: list[Entry], budget: int, rnd: random.Random
) -> None:
    unique = list({e.card_id: e for e in cards}.values())
    relevant = relevance([e.card_id for e in unique[:5]])
    chosen = select(rank(unique, relevant, Weights()), budget)
    text = render(chosen, budget)
    assert estimate_tokens(text) <= budget
    shuffled = unique[:]
    rnd.shuffle(shuffled)
    assert select(rank(shuffled, relevant, Weights()), budget) == chosen
    assert len({" ".join(e.fact.split()).casefold() for e in chosen}) <= len(chosen)
    for e in chosen:
        assert " ".join(e.fact.split()) in text  # each fact as stored, whitespace aside


@settings(max_examples=300, deadline=None)
@given(entries, st.integers(1, 100))
def test_a_small_budget_holds_the_best_card_that_fits_first_and_never_overflows(
    cards: list[Entry], budget: int
) -> None:
    """Never over budget; never empty when the best card's line fits alone; the best card
    that fits alone is always the first line (the header is what gives way)."""
    ranked = rank(list({e.card_id: e for e in cards}.values()), {}, Weights())
    chosen = select(ranked, budget)
    text = render(chosen, budget)
    assert estimate_tokens(text) <= budget
    fitting = [e for e in ranked if line_tokens(e) <= budget]
    if ranked and line_tokens(ranked[0]) <= budget:
        assert chosen[0] == ranked[0]
    assert chosen[:1] == fitting[:1]
    assert bool(text) is bool(fitting)
    if chosen:
        lines = text.splitlines()
        assert lines[1 if with_header(chosen, budget) else 0] == line(chosen[0])


def test_the_documented_context_block_is_what_render_makes() -> None:
    """examples/bot/context-output.txt (shown on the bot's API page) is the real rendering."""
    from datetime import UTC, datetime
    from pathlib import Path

    from memory_worker.cards.prompt_context import Entry, render

    def ms(day: str) -> int:
        return int(datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp() * 1000)

    shown = [
        Entry("1", "Alice loves green tea.", 0.6, 0.8, ms("2026-11-02"), ms("2026-11-02")),
        Entry(
            "2", "Мария любит кататься на велосипеде.", 0.4, 0.7, ms("2026-10-01"), ms("2026-11-02")
        ),
    ]
    example = Path(__file__).parent.parent.parent / "examples" / "bot" / "context-output.txt"
    assert render(shown) == example.read_text(encoding="utf-8")


def test_the_documented_small_budget_block_is_what_render_makes() -> None:
    """examples/bot/context-small.txt (the bot's API page: ``max_tokens=14``) is the real
    rendering: the best card's line alone, no header."""
    from pathlib import Path

    seen = int(datetime(2026, 11, 2, tzinfo=UTC).timestamp() * 1000)
    cards = [
        Entry("1", "Alice loves green tea.", 0.6, 0.8, seen, seen),
        Entry("2", "Мария любит кататься на велосипеде.", 0.4, 0.7, seen, seen),
    ]
    example = Path(__file__).parent.parent.parent / "examples" / "bot" / "context-small.txt"
    chosen = select(cards, 14)
    assert render(chosen, 14) == example.read_text(encoding="utf-8")
