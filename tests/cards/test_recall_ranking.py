"""The pure parts of hybrid recall (§16): terms, BM25, the fusions, time windows, rank_cards."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_worker.api.query_args import check_window
from memory_worker.cards import Card, CardStatus, Scope
from memory_worker.cards.recall import (
    FusionParams,
    LexicalIndex,
    RecallHit,
    Window,
    card_span,
    fuse,
    named_window,
    rank_cards,
    terms,
)
from memory_worker.cards.recall.fusion import boost_window, ranks
from memory_worker.cards.recall.tokens import guess_language, skeleton, stem, words
from memory_worker.errors import InvalidQuery

T0 = datetime(2026, 7, 15, 10, tzinfo=UTC)


# --- terms ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Мария", "Maria"),
        ("Марии", "Mariya"),
        ("Марией", "Maria"),
        ("Юлия", "Julia"),
        ("Yulia", "Юлии"),
        ("Алексей", "Alexei"),
        ("Aleksey", "Алексея"),
        ("Дмитрий", "Dmitry"),
        ("Наталья", "Natalia"),
        ("Андрій", "Andriy"),
        ("Михаил", "Mikhail"),
        ("Йонас", "Jonas"),
        ("Лусия", "Lucía"),
    ],
    ids=lambda s: s,
)
def test_a_name_in_two_scripts_shares_a_term(a: str, b: str) -> None:
    assert set(terms(a)) & set(terms(b)), (terms(a), terms(b))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Мария живёт в Казани", "Где живет Мария?"),  # ё folds, cases stem
        ("Мария жила в Казани", "Кто жил в Казань?"),
        ("Alice lives in Lisbon", "Where does Alice live?"),
        ("Jonas wohnt in Leipzig", "Wo wohnt Jonas jetzt?"),
        ("Lucía vive en Sevilla", "¿Dónde vivía Lucia?"),  # accents strip after stemming
        ("Camille travaille à Lyon", "Où travaillait Camille ?"),
        ("Андрій живе у Львові", "Де живуть Андрія батьки?"),
    ],
    ids=["ru-yo", "ru-cases", "en", "de", "es-accent", "fr", "uk"],
)
def test_word_forms_of_one_language_meet(a: str, b: str) -> None:
    shared = set(terms(a)) & set(terms(b))
    assert len({t.lstrip("~") for t in shared}) >= 2, (terms(a), terms(b))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is the name of the dog?", ["name", "~nam", "dog", "~dog"]),
        ("Где и когда?", []),
        ("", []),
        ("I'm 42, in 2025", ["42", "2025"]),
    ],
    ids=["en-stop-words", "ru-only-stop-words", "empty", "numbers"],
)
def test_terms_drop_stop_words_and_keep_numbers(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("the dog and the cat", "en"),
        ("ich und der Hund", "de"),
        ("el perro y la casa", "es"),
        ("le chien et la maison", "fr"),
        ("собака и кошка", "ru"),
        ("собака і кішка", "uk"),
        ("Biscuit Pepper", None),
    ],
)
def test_guess_language(text: str, lang: str | None) -> None:
    assert guess_language(words(text)) == lang


def test_stemmer_falls_back_to_the_words_script() -> None:
    assert stem("running", "ru") == stem("running", "en") == "run"
    assert stem("кошками", "en") == stem("кошками", "ru")
    assert skeleton("ab") == ""  # too short to say anything


@given(st.text(max_size=200))
def test_terms_never_fail_and_are_deterministic(text: str) -> None:
    assert terms(text) == terms(text)
    assert all(t and " " not in t for t in terms(text))


# --- BM25 ------------------------------------------------------------------------------------


def _index(*docs: str) -> LexicalIndex:
    index = LexicalIndex()
    index.add(terms(d) for d in docs)
    return index


def test_bm25_ranks_the_rarer_matching_term_first_and_zero_without_a_match() -> None:
    index = _index("Alice likes green tea", "Alice likes coffee", "Bob likes jazz")
    scores = index.scores(terms("Alice tea"), np.ones(3, bool))
    assert scores[0] > scores[1] > 0
    assert scores[2] == 0


def test_bm25_statistics_are_over_the_mask_only() -> None:
    index = _index("tea tea tea", "tea", "coffee")
    everyone = index.scores(["tea"], np.ones(3, bool))
    without_first = index.scores(["tea"], np.array([False, True, True]))
    assert without_first[0] == 0  # masked rows never score
    assert without_first[1] != everyone[1]  # df and mean length changed with the mask
    assert index.scores(["tea"], np.zeros(3, bool)).sum() == 0


def test_bm25_index_grows_row_for_row_and_a_short_mask_means_out() -> None:
    index = _index("tea")
    index.add([terms("green tea")])
    assert index.count == 2
    scores = index.scores(terms("tea"), np.array([True]))  # row 1 not in the mask
    assert scores[0] > 0
    assert scores[1] == 0
    assert index.rows_with(terms("green tea")[:1]).tolist() == [False, True]
    assert index.rows_with([]).tolist() == [False, False]
    assert index.ideal(["tea", "nowhere"], np.ones(2, bool)) > index.ideal(
        ["tea"], np.ones(2, bool)
    )


# --- fusion ----------------------------------------------------------------------------------


def test_ranks_share_the_best_rank_of_a_tie() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.1, 7.0])
    valid = np.array([True, True, True, True, False])
    assert ranks(scores, valid).tolist() == [2, 1, 2, 4, np.inf]


INF = -np.inf


@pytest.mark.parametrize(
    ("method", "dense", "lexical", "best"),
    [
        ("rrf", [0.9, 0.8, 0.7], [0.0, 5.0, 4.0], 1),  # lexical lifts the second
        ("rrf", [0.9, 0.8, INF], [0.0, 0.0, 9.0], 0),  # a non-candidate never wins
        ("convex", [0.9, 0.85, 0.1], [0.0, 3.0, 0.0], 1),
        ("relative", [0.9, 0.85, 0.1], [0.0, 3.0, 0.0], 1),
        ("dense", [0.9, 0.85, 0.1], [0.0, 3.0, 0.0], 0),
    ],
    ids=["rrf-lifts", "rrf-candidates-only", "convex", "relative", "dense-ignores-lexical"],
)
def test_fuse(method: str, dense: list[float], lexical: list[float], best: int) -> None:
    params = FusionParams(method=method, lexical_weight=0.5 if method != "rrf" else 1.0)  # type: ignore[arg-type]
    fused = fuse(np.array(dense), np.array(lexical), np.isfinite(dense), params, ideal=3.0)
    assert int(np.argmax(fused)) == best
    assert np.isneginf(fused[~np.isfinite(dense)]).all()


@pytest.mark.parametrize(
    ("method", "ranked"),
    [("rrf", True), ("convex", True), ("relative", True), ("dense", False)],
)
def test_a_candidate_without_a_vector_is_ranked_by_its_words_alone(
    method: str, ranked: bool
) -> None:
    """A remembered card waiting for its vector: a candidate whose cosine is not finite.
    It is ranked by its lexical share (the best words here beat a mediocre cosine with no
    word in common under ``convex`` and ``relative``; ``rrf`` gives it its lexical rank's share only),
    never by a cosine, and left out without a word in common or by ``dense``."""
    dense = np.array([0.9, 0.2, INF, INF])
    lexical = np.array([3.0, 0.0, 3.0, 0.0])
    params = FusionParams(method=method, lexical_weight=0.5)  # type: ignore[arg-type]
    fused = fuse(dense, lexical, np.ones(4, bool), params, ideal=3.0)
    assert np.isneginf(fused[3])  # no word in common: nothing to rank it by
    assert bool(np.isfinite(fused[2])) is ranked
    if ranked:
        assert fused[0] > fused[2]  # the cosine and the words beat the words alone
    if method != "rrf" and ranked:  # with the lowest cosine's share: the words count
        assert fused[2] > fused[1]
    only_words = fuse(np.full(2, INF), np.array([0.0, 2.0]), np.ones(2, bool), params, ideal=2.0)
    assert np.isneginf(only_words[0])
    assert bool(np.isfinite(only_words[1])) is ranked


def _fuse_before(
    dense: np.ndarray,
    lexical: np.ndarray,
    candidates: np.ndarray,
    params: FusionParams,
    ideal: float,
) -> np.ndarray:
    """The fusion as it was before rows without a vector were ranked (the reference)."""
    from memory_worker.cards.recall.fusion import _TIE_BREAK, _minmax, _scaled

    fused = np.full(len(candidates), -np.inf)
    candidates = candidates & np.isfinite(dense)
    if not candidates.any():
        return fused
    if params.method == "dense":
        fused[candidates] = dense[candidates]
        return fused
    matched = candidates & (lexical > 0)
    if params.method == "rrf":
        share = 1.0 / (params.rrf_k + ranks(dense, candidates))
        if matched.any():
            share = share + params.lexical_weight / (params.rrf_k + ranks(lexical, matched))
        share = share + _TIE_BREAK * _minmax(dense, candidates)
        fused[candidates] = share[candidates]
        return fused
    weight = min(1.0, max(0.0, params.lexical_weight))
    if params.method == "relative":
        share = np.minimum(lexical / ideal, 1.0) if ideal > 0 else np.zeros(len(lexical))
    else:
        share = _scaled(lexical, candidates)
    fused[candidates] = (1.0 - weight) * _minmax(dense, candidates)[candidates] + weight * (
        share[candidates]
    )
    return fused


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-1, 1), st.floats(0, 20), st.booleans()), min_size=1, max_size=30),
    st.sampled_from(["rrf", "convex", "relative", "dense"]),
    st.floats(0, 1),
    st.one_of(st.just(0.0), st.floats(0.01, 30)),  # a BM25 ideal: none, or a real one
)
def test_rows_with_a_vector_fuse_exactly_as_before(
    rows: list[tuple[float, float, bool]], method: str, weight: float, ideal: float
) -> None:
    """Where every candidate has a vector (every chat but one holding a remembered card that
    waits for its vector), the fusion is the one measured before, to the bit."""
    dense = np.array([d if c else -np.inf for d, _, c in rows])
    lexical = np.array([lex for _, lex, _ in rows])
    candidates = np.array([c for _, _, c in rows])
    params = FusionParams(method=method, lexical_weight=weight)  # type: ignore[arg-type]
    got = fuse(dense, lexical, candidates, params, ideal=ideal)
    want = _fuse_before(dense, lexical, candidates, params, ideal)
    assert np.array_equal(got, want)


def test_fuse_without_a_vector_ranks_lexically_and_leaves_non_matches_out() -> None:
    fused = fuse(None, np.array([0.0, 2.0, 1.0]), np.array([True, True, False]), FusionParams())
    assert fused.tolist() == [-np.inf, 2.0, -np.inf]


def test_an_rrf_tie_is_broken_by_the_cosine() -> None:
    # dense ranks 2,1 and lexical ranks 1,2: equal reciprocal sums; the cosine decides
    rrf = FusionParams(method="rrf", lexical_weight=1.0)
    fused = fuse(np.array([0.5, 0.6]), np.array([2.0, 1.0]), np.ones(2, bool), rrf)
    assert fused[1] > fused[0]


def test_boost_window_lifts_only_the_rows_inside() -> None:
    fused = np.array([0.3, 0.2, 0.1, -np.inf])
    lifted = boost_window(fused, np.array([False, True, False, True]), 1.0)
    assert lifted[1] == pytest.approx(0.4)
    assert lifted[0] == 0.3
    assert lifted[2] == 0.1
    assert np.isneginf(lifted[3])
    assert boost_window(fused, np.ones(4, bool), 0.0) is fused
    assert boost_window(np.array([-0.2, 0.1]), np.array([True, False]), 0.5)[0] == pytest.approx(
        -0.1
    )


@given(
    st.lists(st.floats(-1, 1), min_size=1, max_size=30),
    st.lists(st.floats(0, 20), min_size=30, max_size=30),
    st.sampled_from(["rrf", "convex", "relative", "dense"]),
)
def test_fusion_keeps_a_row_that_wins_both_rankings_first(
    dense: list[float], lexical: list[float], method: str
) -> None:
    d = np.array(dense)
    lex = np.array(lexical[: len(dense)])
    top = int(np.argmax(d))
    lex[top] = lex.max() + 1.0
    d[d == d[top]] = d[top]  # ties with the top stay ties
    fused = fuse(d, lex, np.ones(len(d), bool), FusionParams(method=method), ideal=lex[top])  # type: ignore[arg-type]
    assert fused[top] == fused.max()


# --- time --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "since", "until"),
    [
        ("What did Maria do in May?", datetime(2026, 5, 1), datetime(2026, 6, 1)),
        ("in December", datetime(2025, 12, 1), datetime(2026, 1, 1)),
        ("Что Мария делала в мае?", datetime(2026, 5, 1), datetime(2026, 6, 1)),
        ("Що Андрій робив у травні?", datetime(2026, 5, 1), datetime(2026, 6, 1)),
        ("Was hat Jonas im Mai gemacht?", datetime(2026, 5, 1), datetime(2026, 6, 1)),
        ("¿Qué hizo Lucía en mayo?", datetime(2026, 5, 1), datetime(2026, 6, 1)),
        ("Qu'a fait Camille en mai ?", datetime(2026, 5, 1), datetime(2026, 6, 1)),
        ("What happened last week?", datetime(2026, 7, 6), datetime(2026, 7, 13)),
        ("Что было на прошлой неделе?", datetime(2026, 7, 6), datetime(2026, 7, 13)),
        ("last month", datetime(2026, 6, 1), datetime(2026, 7, 1)),
        ("yesterday", datetime(2026, 7, 14), datetime(2026, 7, 15)),
        ("вчора", datetime(2026, 7, 14), datetime(2026, 7, 15)),
        ("3 days ago", datetime(2026, 7, 11), datetime(2026, 7, 14)),
        ("vor 2 Wochen", datetime(2026, 6, 30), datetime(2026, 7, 3)),
        ("hace 3 días", datetime(2026, 7, 11), datetime(2026, 7, 14)),
        ("What did Caroline do in May 2023?", datetime(2023, 5, 1), datetime(2023, 6, 1)),
        ("в мае 2024 года", datetime(2024, 5, 1), datetime(2024, 6, 1)),
        ("Where did Bob live in 2022?", datetime(2022, 1, 1), datetime(2023, 1, 1)),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_named_window(text: str, since: datetime, until: datetime) -> None:
    assert named_window(text, T0) == Window(since.replace(tzinfo=UTC), until.replace(tzinfo=UTC))


@pytest.mark.parametrize(
    "text",
    [
        "May I ask where Bob lives?",
        "червоний автомобіль",
        "Where is Martin?",
        "трава",
        "hello",
        "I have 3000 cards",
    ],
)
def test_no_named_window(text: str) -> None:
    assert named_window(text, T0) is None


def _card(
    text: str,
    *,
    at: datetime = T0,
    first: datetime | None = None,
    until: datetime | None = None,
    status: CardStatus = CardStatus.ACTIVE,
    card_id: str = "1",
) -> Card:
    return Card(
        id=card_id,
        chat_id=1,
        scope=Scope.CHAT,
        card_type="fact",
        subject="",
        predicate="",
        object="",
        fact_text=text,
        confidence=0.8,
        salience=0.5,
        observation_count=1,
        status=status,
        valid_from=first or at,
        valid_until=until,
        observed_at=at,
        created_at=at,
        updated_at=at,
        source_message_ids=[1],
        dedup_hash="h" + card_id,
    )


DAY = timedelta(days=1)


@pytest.mark.parametrize(
    ("first", "last", "until", "since", "before", "meets"),
    [
        (0, 0, None, -1, 1, True),
        (0, 0, None, 1, None, False),  # observed before the window
        (0, 0, None, None, 0, False),  # until is open at its end
        (0, 0, None, None, 1, True),
        (-5, 0, None, -3, -2, True),  # first said before, observed after: spans it
        (-5, -4, 3, 1, 2, True),  # still valid later than its last observation
        (0, 0, None, None, None, True),
    ],
    ids=["inside", "before", "until-excludes", "until", "spans", "valid-until", "open"],
)
def test_a_card_meets_a_window_by_its_span(
    first: int,
    last: int,
    until: int | None,
    since: int | None,
    before: int | None,
    meets: bool,
) -> None:
    card = _card(
        "x",
        first=T0 + first * DAY,
        at=T0 + last * DAY,
        until=None if until is None else T0 + until * DAY,
    )
    window = Window(
        None if since is None else T0 + since * DAY, None if before is None else T0 + before * DAY
    )
    assert window.meets(*card_span(card)) is meets
    start, end = card_span(card)
    assert window.meets_ms(int(start.timestamp() * 1000), int(end.timestamp() * 1000)) is meets


def test_a_window_needs_aware_ordered_bounds() -> None:
    with pytest.raises(ValueError, match="timezone"):
        Window(datetime(2026, 1, 1), None)
    with pytest.raises(ValueError, match="after"):
        Window(T0, T0)


# --- rank_cards --------------------------------------------------------------------------


def test_rank_cards_fuses_filters_and_unpacks_like_a_pair() -> None:
    cards = [
        _card("Maria lives in Kazan", card_id="1", at=T0 - 60 * DAY),
        _card("Мария любит зелёный чай", card_id="2", at=T0 - 3 * DAY),
        _card("Bob likes tea", card_id="3"),
        _card("Maria moved away", card_id="4", status=CardStatus.SUPERSEDED),
    ]
    hits = rank_cards("Where does Maria live?", cards, k=5)
    assert [h.card.id for h in hits] == ["1", "2"]  # lexical alone: matches only, live only
    card, score = hits[0]
    assert card is hits[0].card
    assert score == hits[0].score
    assert hits[0].observed_at == T0 - 60 * DAY
    assert hits[0].valid_from == T0 - 60 * DAY
    assert isinstance(hits[0], RecallHit)
    assert hits[0].dense is None
    assert hits[0].lexical > 0
    recent = rank_cards("Maria", cards, window=Window(T0 - 7 * DAY, None))
    assert [h.card.id for h in recent] == ["2"]
    vectors = [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], None]
    fused = rank_cards("tea", cards, query_vector=[0.0, 1.0], card_vectors=vectors, k=3)
    # "Bob likes tea": second by the cosine, first by the words; "Мария любит чай": first
    # by the cosine alone; the superseded card never
    assert [h.card.id for h in fused] == ["3", "2", "1"]
    assert fused[1].dense == pytest.approx(1.0)
    assert fused[1].lexical == 0
    assert rank_cards("tea", cards, k=0) == []
    assert rank_cards("tea", [], k=3) == []
    with pytest.raises(ValueError, match="one entry per card"):
        rank_cards("tea", cards, query_vector=[1.0, 0.0], card_vectors=vectors[:2])


def test_rank_cards_time_boost_lifts_the_named_month() -> None:
    cards = [
        _card("Maria went to Lisbon", card_id="1", at=datetime(2026, 3, 10, tzinfo=UTC)),
        _card("Maria went to Kyoto", card_id="2", at=datetime(2026, 5, 10, tzinfo=UTC)),
    ]
    vectors = [[1.0, 0.1], [0.9, 0.2]]
    plain = rank_cards("Where did Maria go in May?", cards, query_vector=[1.0, 0.0],
                       card_vectors=vectors, now=T0, params=FusionParams(method="rrf", time_boost=0.0))  # fmt: skip
    boosted = rank_cards(
        "Where did Maria go in May?",
        cards,
        query_vector=[1.0, 0.0],
        card_vectors=vectors,
        now=T0,
        params=FusionParams(method="rrf", lexical_weight=1.0, time_boost=1.0),
    )
    assert plain[0].card.id == "1"
    assert boosted[0].card.id == "2"


@pytest.mark.parametrize(
    "module", ["memory_worker.cards.recall", "memory_worker.cards.recall.ranking"]
)
def test_the_recall_package_imports_first_in_a_fresh_interpreter(module: str) -> None:
    # the card store imports recall: recall must not import the card store back at run time
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr.decode()


def test_a_named_time_no_card_is_of_keeps_its_words_as_evidence() -> None:
    march = datetime(2026, 3, 10, tzinfo=UTC)
    cards = [
        _card("Maria went to Kyoto", card_id="1", at=march),
        _card("Maria's party is in December", card_id="2", at=march),
    ]
    # "in December" is December 2025 from July 2026: no card is of it, so "December"
    # stays a word to match, and nothing is lifted
    hits = rank_cards("What does Maria do in December?", cards, now=T0)
    assert hits[0].card.id == "2"
    assert hits[0].lexical > hits[1].lexical


@pytest.mark.parametrize(
    ("since", "until", "problem"),
    [
        (datetime(2026, 1, 1), None, "timezone"),
        (None, "2026-01-01", "must be a datetime"),
        (T0, T0, "after"),
        (T0, T0 - DAY, "after"),
    ],
    ids=["naive", "a-string", "empty", "reversed"],
)
def test_check_window_refuses_with_a_typed_error(
    since: object, until: object, problem: str
) -> None:
    with pytest.raises(InvalidQuery, match=problem):
        check_window(since, until)


def test_check_window_answers_none_when_both_are_open() -> None:
    assert check_window(None, None) is None
    assert check_window(T0, None) == Window(T0, None)


def test_the_bots_import_paths_of_rank_cards_are_the_same_function() -> None:
    """docs/bot-api.md names ``memory_worker.rank_cards``; ``memory_worker.recall`` (the
    path bots imported it from) and ``memory_worker.cards.recall`` give the same one."""
    import memory_worker
    import memory_worker.cards.recall
    import memory_worker.recall

    assert memory_worker.rank_cards is memory_worker.recall.rank_cards
    assert memory_worker.recall.rank_cards is memory_worker.cards.recall.rank_cards
    assert memory_worker.recall.RecallHit is memory_worker.RecallHit
