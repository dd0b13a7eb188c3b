"""The pure half of the vector search (no Redis): scoring a query against a chat's matrix
and ranking the scores (what :meth:`CardStore.similar_cards` reads cards for)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_worker.cards.vectors import Matrix, VectorCache, quantize, ranked

ROWS = {  # card id → (scope key, vector)
    "1": ("chat", [1.0, 0.0, 0.0]),
    "2": ("user:7", [0.0, 1.0, 0.0]),
    "3": ("thread:5", [1.0, 1.0, 0.0]),
    "4": ("chat", [0.0, 0.0, 1.0]),
}


def matrix(live: Sequence[int] = (1, 1, 1, 1)) -> Matrix:
    m = Matrix(3)
    m.append(
        b"".join(quantize(v) for _, v in ROWS.values()),
        [f"{cid}|{sk}".encode() for cid, (sk, _) in ROWS.items()],
    )
    m.set_mask(bytes(live))
    return m


def best(scores: np.ndarray | None) -> list[str]:
    assert scores is not None
    ids = ["1", "2", "3", "4"]
    return [ids[i] for i in ranked(scores, len(ids))]


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [
        pytest.param(None, ["1", "3", "2", "4"], id="every-scope"),
        pytest.param(frozenset({"chat"}), ["1", "4"], id="chat-only"),
        pytest.param(frozenset({"chat", "user:7"}), ["1", "2", "4"], id="chat-and-user"),
        pytest.param(frozenset({"user:8"}), [], id="unknown-scope"),
    ],
)
def test_scores_keep_only_allowed_scopes(
    allowed: frozenset[str] | None, expected: list[str]
) -> None:
    assert best(matrix().scores([1.0, 0.2, 0.1], allowed)) == expected


def test_a_row_that_is_not_live_never_ranks() -> None:
    assert best(matrix(live=(0, 1, 1, 1)).scores([1.0, 0.2, 0.1], None)) == ["3", "2", "4"]


@pytest.mark.parametrize(
    "query",
    [
        pytest.param([1.0, 0.0], id="other-dimension"),
        pytest.param([0.0, 0.0, 0.0], id="zero-vector"),
    ],
)
def test_a_query_that_cannot_be_compared_scores_nothing(query: list[float]) -> None:
    assert matrix().scores(query, None) is None


@pytest.mark.parametrize(
    ("want", "expected"),
    [
        pytest.param(1, [2], id="top-one"),
        pytest.param(2, [2, 0], id="top-two"),
        pytest.param(4, [2, 0, 3], id="all-finite-only"),
        pytest.param(9, [2, 0, 3], id="more-than-there-are"),
    ],
)
def test_ranked_is_best_first_and_finite(want: int, expected: list[int]) -> None:
    scores = np.array([0.5, -np.inf, 0.9, 0.1])
    assert ranked(scores, want) == expected


def test_the_cache_holds_its_byte_budget_as_cached_matrices_grow_in_place() -> None:
    """The LRU evicts oldest chats once the matrices' bytes pass the budget, counting a
    cached matrix at its size when last put (it grows in place between puts)."""
    one = matrix().nbytes
    cache = VectorCache(max_bytes=3 * one)
    for chat in (1, 2, 3):
        cache.put(chat, matrix())
    assert list(cache.entries) == [1, 2, 3]
    grown = cache.get(1)
    assert grown is not None
    grown.append(quantize([1.0, 0.0, 0.0]), [b"5|chat"])  # chat 1 is now the newest
    cache.put(1, grown)
    assert list(cache.entries) == [3, 1]
    assert cache.held_bytes == one + grown.nbytes
    assert cache.held_bytes == sum(m.nbytes for m in cache.entries.values())
    cache.put(4, matrix())
    assert list(cache.entries) == [1, 4]
    big = Matrix(3)
    big.append(quantize([0.0, 1.0, 0.0]) * 40, [f"{i}|chat".encode() for i in range(40)])
    assert big.nbytes > 3 * one
    cache.put(5, big)  # alone over the budget: kept, everything older goes
    assert list(cache.entries) == [5]
    assert cache.held_bytes == big.nbytes


SCOPES = ["chat", "user:7", "user:8", "thread:5"]


@given(
    rows=st.lists(st.tuples(st.sampled_from(SCOPES), st.booleans()), max_size=12),
    allowed=st.none() | st.frozensets(st.sampled_from([*SCOPES, "user:9"])),
)
def test_candidates_are_the_live_rows_of_an_allowed_scope(
    rows: list[tuple[str, bool]], allowed: frozenset[str] | None
) -> None:
    """Any mix of scopes and live flags, any allowed set (empty, unknown scopes, every
    scope): the rows :meth:`Matrix.scores` may rank, row for row."""
    m = Matrix(3)
    m.append(
        b"".join(quantize([1.0, float(i), 0.5]) for i in range(len(rows))),
        [f"{i + 1}|{sk}".encode() for i, (sk, _) in enumerate(rows)],
    )
    m.set_mask(bytes(int(live) for _, live in rows))
    expected = [live and (allowed is None or sk in allowed) for sk, live in rows]
    assert m.candidates(allowed).tolist() == expected
