"""The withdrawn-fact decision (§10, :mod:`memory_worker.cards.withdrawn`), pure: tables for
who a card is about and whether it names a value, the time rule, and hypothesis over
arbitrary statements and vectors (what a model or an import file may hand over)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_worker.cards.withdrawn import (
    Candidate,
    Statement,
    Thresholds,
    WithdrawnFact,
    meaning_threshold,
    refusals,
    refused_by,
    same_subject,
    shares_value,
    similar_word,
    translated,
)

ALICE = Statement("Alice", "green tea", "Alice likes green tea.", 1, "h-alice-tea")


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        pytest.param(ALICE, Statement("Alice", "", "", 1), True, id="same-user"),
        pytest.param(ALICE, Statement("Alice", "", "", 2), False, id="two-alices"),
        pytest.param(ALICE, Statement("Alice", "", "", None), True, id="rescoped-same-name"),
        pytest.param(ALICE, Statement("Алиса", "", "", None), True, id="name-in-cyrillic"),
        pytest.param(ALICE, Statement("Bob", "", "", None), False, id="another-name"),
        pytest.param(
            Statement("Brian", "", "", 1), Statement("Брайан", "", "", None), True, id="brian"
        ),
        pytest.param(ALICE, Statement("", "", "", None), True, id="no-subject-named"),
        pytest.param(
            Statement("Мария", "", "", None), Statement("Maria", "", "", None), True, id="maria"
        ),
    ],
)
def test_same_subject(a: Statement, b: Statement, same: bool) -> None:
    assert same_subject(a, b) is same
    assert same_subject(b, a) is same


@pytest.mark.parametrize(
    ("new", "shares"),
    [
        pytest.param(Statement("Alice", "green tea", "Alice enjoys green tea."), True, id="kept"),
        pytest.param(Statement("Alice", "", "Alice drinks green tea daily."), True, id="no-obj"),
        pytest.param(Statement("Alice", "black coffee", "Alice likes black coffee."), False),
        pytest.param(Statement("Alice", "", "Alice owns a shop."), False, id="other"),
        pytest.param(
            Statement("Алиса", "зелёный чай", "Алиса любит зелёный чай."), False, id="translated"
        ),
    ],
)
def test_shares_value(new: Statement, shares: bool) -> None:
    assert shares_value(ALICE, new) is shares


@pytest.mark.parametrize(
    ("a", "b", "similar"),
    [
        ("lisbon", "lissabon", True),
        ("lisbon", "lisboa", True),
        ("guitarra", "guitarrista", True),
        ("piano", "pianiste", False),  # too short a common beginning, too many edits
        ("lisbon", "porto", False),
        ("tea", "tee", False),  # short words must be equal
        ("chelsea", "arsenal", False),
    ],
)
def test_similar_word(a: str, b: str, similar: bool) -> None:
    assert similar_word(a, b) is similar


ZOE = Statement("Zoé", "photographie", "Zoé est passionnée de photographie.", 5)


@pytest.mark.parametrize(
    ("new", "shares"),
    [
        pytest.param(
            Statement("Зоэ", "фотография", "Зоэ увлекается фотографией."), True, id="skeletons"
        ),
        pytest.param(
            Statement("Zoé", "photography", "Zoé loves photography."), True, id="a-cognate"
        ),
        pytest.param(Statement("Зоэ", "гончарное дело", "Зоэ увлекается гончарным делом."), False),
        pytest.param(Statement("Zoé", "", "Zoé adore Zoé."), False, id="only-the-subject"),
    ],
)
def test_shares_value_across_scripts_and_spellings(new: Statement, shares: bool) -> None:
    assert shares_value(ZOE, new) is shares
    assert shares_value(new, ZOE) is shares


T = Thresholds(plain=0.99, shared=0.94, cross=0.075)


@pytest.mark.parametrize(
    ("new", "threshold"),
    [
        pytest.param(Statement("Alice", "", "Alice owns a bakery."), 0.99, id="plain"),
        pytest.param(Statement("Alice", "", "Alice enjoys green tea."), 0.94, id="shared"),
        pytest.param(Statement("Алиса", "", "Алиса любит зелёный чай."), 0.915, id="cross"),
        pytest.param(Statement("Alice", "", "Alice mag grünen Tee."), 0.915, id="cross-latin"),
        pytest.param(Statement("Alice", "", "Alice bebe té verde."), 0.915, id="cross-es"),
        pytest.param(Statement("Alice", "", "Alice aime le thé vert."), 0.915, id="cross-fr"),
        pytest.param(
            Statement("Алиса", "green tea", "Алиса любит green tea."),
            0.865,
            id="cross-shared",
        ),
        pytest.param(
            Statement("Alice", "", "Alice conduce un Toyota."), 0.99, id="language-not-given-away"
        ),
    ],
)
def test_meaning_threshold(new: Statement, threshold: float) -> None:
    assert meaning_threshold(ALICE, new, T) == pytest.approx(threshold)


def test_a_translation_is_refused_from_a_lower_cosine_than_a_value_update() -> None:
    """At one cosine, e5's typical translation (0.93), a Russian card is refused and an
    English one naming another value is learned."""
    cos = 0.93
    vector = [cos, math.sqrt(1 - cos * cos)]
    russian = Statement("Алиса", "зелёный чай", "Алиса любит зелёный чай.", 1)
    update = Statement("Alice", "black coffee", "Alice likes black coffee.", 1)
    assert translated(ALICE, russian)
    assert not translated(ALICE, update)
    assert refused_by(Candidate(russian, 10, vector), [fact(1000)], Thresholds()) is not None
    assert refused_by(Candidate(update, 10, vector), [fact(1000)], Thresholds()) is None
    no_offset = Thresholds(cross=0.0)
    assert refused_by(Candidate(russian, 10, vector), [fact(1000)], no_offset) is None


def fact(at_ms: int, vector: list[float] | None = None) -> WithdrawnFact:
    return WithdrawnFact("7", at_ms, ALICE, vector if vector is not None else [1.0, 0.0])


@pytest.mark.parametrize(
    ("seen_ms", "refused"),
    [(999, True), (1000, False), (1001, False)],
    ids=["sent-before", "sent-at", "sent-after"],
)
def test_only_messages_sent_before_the_withdrawal_are_refused(seen_ms: int, refused: bool) -> None:
    candidate = Candidate(Statement("Alice", "", "Alice enjoys green tea."), seen_ms, [1.0, 0.0])
    assert (refused_by(candidate, [fact(1000)], Thresholds()) is not None) is refused


def test_the_same_hash_is_refused_without_vectors() -> None:
    candidate = Candidate(Statement("X", "", "", None, ALICE.dedup_hash), 10, None)
    assert refused_by(candidate, [fact(1000, [])], Thresholds()) is not None


texts = st.text(max_size=40)
vectors = st.one_of(
    st.none(),
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=0, max_size=6),
)
statements = st.builds(
    Statement,
    texts,
    texts,
    texts,
    st.one_of(st.none(), st.integers(-(2**63), 2**63)),
    st.sampled_from(["", "h1", "h2"]),
)


@settings(max_examples=300, deadline=None)
@given(
    new=statements,
    old=statements,
    new_vec=vectors,
    old_vec=vectors,
    seen=st.integers(0, 10),
    at=st.integers(0, 10),
    plain=st.floats(0, 1),
    shared=st.floats(0, 1),
)
def test_any_input_gives_a_decision_by_the_rule(
    new: Statement,
    old: Statement,
    new_vec: list[float] | None,
    old_vec: list[float] | None,
    seen: int,
    at: int,
    plain: float,
    shared: float,
) -> None:
    """Whatever a model, a stored value or a file holds: no exception; a refusal only for a
    message older than the withdrawal; a stricter threshold never refuses more."""
    candidate = Candidate(new, seen, new_vec)
    facts = [WithdrawnFact("1", at, old, old_vec)]
    loose, strict = Thresholds(plain, shared), Thresholds(min(1.0, plain + 0.1), shared)
    (found,) = refusals([candidate], facts, loose)
    if found is not None:
        assert seen < at
    if refused_by(candidate, facts, strict) is not None:
        assert found is not None


@settings(max_examples=200, deadline=None)
@given(
    vector=st.lists(st.floats(-1, 1), min_size=2, max_size=8).filter(
        lambda v: math.fsum(x * x for x in v) > 1e-6
    ),
    fact_text=texts,
)
def test_the_same_vector_about_the_same_user_is_always_refused(
    vector: list[float], fact_text: str
) -> None:
    old = Statement("Alice", "", "Alice likes green tea.", 1)
    new = Statement("Alice", "", fact_text, 1)
    facts = [WithdrawnFact("1", 100, old, vector)]
    assert refused_by(Candidate(new, 99, vector), facts, Thresholds()) is not None
    assert refused_by(Candidate(new, 100, vector), facts, Thresholds()) is None


@settings(max_examples=300, deadline=None)
@given(
    new=statements,
    old=statements,
    new_vec=vectors,
    old_vec=vectors,
    cross=st.floats(0, 0.5),
    more=st.floats(0, 0.5),
)
def test_a_larger_offset_for_two_languages_never_refuses_less(
    new: Statement,
    old: Statement,
    new_vec: list[float] | None,
    old_vec: list[float] | None,
    cross: float,
    more: float,
) -> None:
    """Whatever the cards' texts (any script, any mix): the offset only ever lowers the
    threshold, and only for two cards in two languages."""
    candidate = Candidate(new, 1, new_vec)
    facts = [WithdrawnFact("1", 2, old, old_vec)]
    base = Thresholds(cross=cross)
    lower = Thresholds(cross=cross + more)
    assert meaning_threshold(old, new, lower) <= meaning_threshold(old, new, base)
    if not translated(old, new):
        assert meaning_threshold(old, new, lower) == meaning_threshold(old, new, base)
    if refused_by(candidate, facts, base) is not None:
        assert refused_by(candidate, facts, lower) is not None
