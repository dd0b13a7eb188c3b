"""The related-card lookup favours the run's authors (§16: related recall@5 >= 0.95)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_worker.cards import Card
from memory_worker.consolidation.context import rank_related
from tests.support.cards import stored

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def card(card_id: str, fact: str, *, subject: str = "x", user: int | None = None) -> Card:
    return stored(
        card_id,
        fact,
        chat=1,
        user=user,
        subject=subject,
        predicate="is",
        at=T0,
        dedup="h" + card_id,
    )


FOUND = [
    (card("1", "Ivan moved to Porto."), 0.90),
    (card("2", "Lena moved to Berlin."), 0.89),
    (card("3", "Finn lives in Dublin."), 0.88),
    (card("4", "Someone likes tea.", user=7), 0.80),
    (card("5", "A note.", subject="Finn"), 0.70),
    (card("6", "Finnegan's cat is grey."), 0.87),
]


@pytest.mark.parametrize(
    ("names", "ids", "boost", "k", "order"),
    [
        ([], (), 0.03, 3, ["1", "2", "3"]),  # nobody to favour: cosine order
        (["Finn"], (), 0.0, 3, ["1", "2", "3"]),  # no boost: cosine order
        (["Finn"], (), 0.03, 3, ["3", "1", "2"]),  # the speaker's card first
        (["finn"], (), 0.03, 2, ["3", "1"]),  # any case; a whole word only (not Finnegan)
        (["Finn"], (), 0.25, 6, ["3", "5", "1", "2", "6", "4"]),  # the subject names him too
        ([], (7,), 0.15, 3, ["4", "1", "2"]),  # an author's user card
        (["  "], (), 0.03, 2, ["1", "2"]),  # a blank name matches nothing
    ],
    ids=["no-authors", "no-boost", "speaker", "whole-word", "subject", "user-card", "blank"],
)
def test_rank_related(
    names: list[str], ids: tuple[int, ...], boost: float, k: int, order: list[str]
) -> None:
    ranked = rank_related(FOUND, author_ids=ids, author_names=names, boost=boost, k=k)
    assert [c.id for c in ranked] == order
