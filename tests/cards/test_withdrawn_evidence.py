"""The evidence tier of the withdrawn-fact decision (§10, :func:`evidence_states`), pure: a
table of what a card from the withdrawn card's own message is decided by (the evidence
threshold, its siblings, the margin, the subject, the time rule), and hypothesis over
arbitrary statements, vectors, message ids and siblings (what a model or a file may hand
over): no exception, only older messages refused, the evidence tier only ever adds
refusals, stricter thresholds never refuse more, a sibling's own restatement is left to
hash and meaning.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_worker.cards.withdrawn import (
    Candidate,
    Sibling,
    Statement,
    Thresholds,
    WithdrawnFact,
    evidence_states,
    refusals,
)

T = Thresholds()
TEA = Statement("Alice", "green tea", "Alice likes green tea.", 1, "h-tea")
#: The withdrawn card's vector, and where its message's other fact (Lisbon) sits.
W = [1.0, 0.0, 0.0]
MESSAGE = frozenset({1})


def toward(cos: float, other: list[float] | None = None) -> list[float]:
    """A unit vector at ``cos`` from :data:`W`, in the plane of W and ``other`` (default e2)."""
    axis = other or [0.0, 1.0, 0.0]
    sin = math.sqrt(max(0.0, 1 - cos * cos))
    return [cos * a + sin * b for a, b in zip(W, axis, strict=True)]


def withdrawn(sources: frozenset[int] = MESSAGE) -> WithdrawnFact:
    return WithdrawnFact("7", 100, TEA, W, sources)


def card(
    vector: list[float] | None,
    *,
    sources: frozenset[int] = MESSAGE,
    seen: int = 10,
    user: int | None = 1,
    subject: str = "Alice",
) -> Candidate:
    statement = Statement(subject, "", "Алиса пьёт чай.", user, "h-new")
    return Candidate(statement, seen, vector, sources)


LISBON = toward(0.80, [0.0, 0.0, 1.0])  # the sibling: 0.80 from the tea card


def beside(vector: list[float], cos: float) -> list[float]:
    """A unit vector at ``cos`` from ``vector`` (a unit vector of the W–e2 plane), toward e3."""
    sin = math.sqrt(max(0.0, 1 - cos * cos))
    return [cos * v + sin * e for v, e in zip(vector, [0.0, 0.0, 1.0], strict=True)]


def near_lisbon(cos_w: float) -> list[float]:
    """A candidate ``cos_w`` from W, much closer to :data:`LISBON` (a Lisbon restatement)."""
    return toward(cos_w, [0.0, 0.0, 1.0])


@pytest.mark.parametrize(
    ("candidate", "siblings", "refused"),
    [
        pytest.param(card(toward(0.91)), [], True, id="same-message-no-sibling-above"),
        pytest.param(card(toward(0.90)), [], False, id="same-message-no-sibling-below"),
        pytest.param(
            card(toward(0.91), sources=frozenset({2})), [], False, id="another-message-meaning"
        ),
        pytest.param(
            card(toward(0.91), sources=frozenset({1, 2})), [], True, id="one-shared-message"
        ),
        pytest.param(
            card(toward(0.85)),
            [Sibling("8", MESSAGE, LISBON)],
            True,
            id="closer-to-the-withdrawn-than-to-the-sibling",
        ),
        pytest.param(
            card(toward(0.81)),
            [Sibling("8", MESSAGE, LISBON)],
            False,
            id="below-the-sibling-threshold",
        ),
        pytest.param(
            card(near_lisbon(0.80)),
            [Sibling("8", MESSAGE, LISBON)],
            False,
            id="the-sibling-restated",
        ),
        pytest.param(
            card(toward(0.85)),
            [Sibling("8", MESSAGE, beside(toward(0.85), 0.84))],
            False,
            id="within-the-margin",
        ),
        pytest.param(
            card(toward(0.85)),
            [Sibling("8", MESSAGE, beside(toward(0.85), 0.82))],
            True,
            id="beyond-the-margin",
        ),
        pytest.param(
            card(toward(0.85)),
            [Sibling("8", frozenset({3}), LISBON)],
            False,
            id="a-sibling-of-another-message-is-none",
        ),
        pytest.param(
            card(toward(0.91)), [Sibling("7", MESSAGE, toward(0.99))], True, id="itself-is-none"
        ),
        pytest.param(card(toward(0.95), user=2), [], False, id="another-user"),
        pytest.param(
            card(toward(0.95), user=None, subject="Bob"), [], False, id="another-name-rescoped"
        ),
        pytest.param(
            card(toward(0.95), user=None, subject="Алиса"), [], True, id="rescoped-translated"
        ),
        pytest.param(card(toward(0.95), seen=100), [], False, id="sent-at-the-withdrawal"),
        pytest.param(card(None), [], False, id="no-vector"),
        pytest.param(card(toward(0.91), sources=frozenset()), [], False, id="no-message"),
    ],
)
def test_a_card_from_the_withdrawn_cards_message(
    candidate: Candidate, siblings: list[Sibling], refused: bool
) -> None:
    (found,) = refusals([candidate], [withdrawn()], T, siblings)
    assert (found is not None) is refused


def test_the_defaults_leave_room_between_the_tiers() -> None:
    """The evidence tier asks less than meaning, and less again when siblings are known."""
    assert T.sibling < T.evidence < T.shared < T.plain
    assert T.floor == T.sibling
    assert 0 <= T.margin < 0.1


def test_the_evidence_tier_alone_decides_nothing_for_another_message() -> None:
    other = card(toward(0.999), sources=frozenset({9}))
    assert not evidence_states(other, withdrawn(), T)
    assert evidence_states(replace(other, sources=MESSAGE), withdrawn(), T)


texts = st.text(max_size=30)
ids = st.frozensets(st.integers(0, 4), max_size=3)
unit3 = st.lists(st.floats(-1, 1), min_size=3, max_size=3)
vectors = st.one_of(
    st.none(),
    unit3,
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=4),
)
statements = st.builds(
    Statement,
    texts,
    texts,
    texts,
    st.one_of(st.none(), st.integers(0, 3)),
    st.sampled_from(["", "h1", "h2"]),
)
candidates = st.builds(Candidate, statements, st.integers(0, 10), vectors, ids)
facts = st.builds(
    WithdrawnFact, st.sampled_from(["1", "2"]), st.integers(0, 10), statements, vectors, ids
)
siblings = st.builds(Sibling, st.sampled_from(["1", "3", "4"]), ids, unit3)
thresholds = st.builds(
    Thresholds,
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(-0.1, 0.1),
)


@settings(max_examples=300, deadline=None)
@given(
    cands=st.lists(candidates, max_size=4),
    withdrawn_facts=st.lists(facts, max_size=3),
    sibs=st.lists(siblings, max_size=3),
    t=thresholds,
)
def test_any_input_gives_a_decision_by_the_rule(
    cands: list[Candidate],
    withdrawn_facts: list[WithdrawnFact],
    sibs: list[Sibling],
    t: Thresholds,
) -> None:
    """Whatever a model, a stored value or a file holds: no exception; a refusal only for a
    message older than the withdrawal; the evidence tier only adds refusals (a card from no
    withdrawn card's message is decided as before); higher evidence thresholds never refuse
    more."""
    found = refusals(cands, withdrawn_facts, t, sibs)
    bare = refusals([replace(c, sources=frozenset()) for c in cands], withdrawn_facts, t, sibs)
    strict = replace(t, evidence=min(1.0, t.evidence + 0.05), sibling=min(1.0, t.sibling + 0.05))
    stricter = refusals(cands, withdrawn_facts, strict, sibs)
    for c, got, without, tighter in zip(cands, found, bare, stricter, strict=True):
        if got is not None:
            assert c.seen_ms < got.at_ms
        if without is not None:
            assert got is not None
        if tighter is not None:
            assert got is not None


@settings(max_examples=200, deadline=None)
@given(
    vector=unit3.filter(lambda v: math.fsum(x * x for x in v) > 1e-3),
    fact_vector=unit3.filter(lambda v: math.fsum(x * x for x in v) > 1e-3),
    fact_text=texts,
)
def test_a_siblings_own_restatement_is_left_to_hash_and_meaning(
    vector: list[float], fact_vector: list[float], fact_text: str
) -> None:
    """A card whose vector is a sibling's (the same message's other fact, word for word) is
    never refused by its evidence: only by the hash or the meaning tier."""
    new = Candidate(Statement("Alice", "", fact_text, 1), 10, vector, MESSAGE)
    fact = WithdrawnFact("7", 100, TEA, fact_vector, MESSAGE)
    assert not evidence_states(new, fact, T, [Sibling("8", MESSAGE, vector)])
    (with_sibling,) = refusals([new], [fact], T, [Sibling("8", MESSAGE, vector)])
    (by_meaning,) = refusals([replace(new, sources=frozenset())], [fact], T)
    assert (with_sibling is None) == (by_meaning is None)
