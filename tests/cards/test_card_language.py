"""The language a card is written in (§10, :mod:`memory_worker.cards.language`), pure: a table
of short cards in each language, the subject's words aside, what is not given away, and
hypothesis over arbitrary text (what a model may write)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_worker.cards.language import card_language, other_languages, script


@pytest.mark.parametrize(
    ("text", "subject", "lang"),
    [
        pytest.param("Alice likes green tea.", "Alice", "en", id="en-verb"),
        pytest.param("Oscar is allergic to penicillin.", "Oscar", "en", id="en-stop"),
        pytest.param("Lucía likes black tea.", "Lucía", "en", id="en-name-with-a-mark"),
        pytest.param("Inès speaks Japanese.", "Inès", "en", id="en-name-french"),
        pytest.param("Ian collects old watches and sells them.", "Ian", "en", id="en-and"),
        pytest.param("Max spielt Geige.", "Max", "de", id="de-verb"),
        pytest.param("Lukas schaut gern Fußball.", "Lukas", "de", id="de-gern"),
        pytest.param("Jonas backt beruflich Brot.", "Jonas", "de", id="de-shapes"),
        pytest.param("Marta toca la guitarra.", "Marta", "es", id="es-article"),
        pytest.param("Carmen trabaja como abogada.", "Carmen", "es", id="es-verb"),
        pytest.param("Alba estudia japonés y portugués.", "Alba", "es", id="es-marks"),
        pytest.param("Léa joue du piano.", "Léa", "fr", id="fr-verb"),
        pytest.param("Camille aime le thé à la menthe.", "Camille", "fr", id="fr-article"),
        pytest.param("Sofía parle allemand.", "Sofía", "fr", id="fr-name-spanish"),
        pytest.param("Алиса любит зелёный чай.", "Алиса", "ru", id="ru"),
        pytest.param("Назар любить джаз, її брат — ні.", "Назар", "uk", id="uk"),
        pytest.param("Grace es vegana.", "Grace", None, id="es-or-de-es"),
        pytest.param("Kevin conduce un Toyota rojo.", "Kevin", None, id="not-given-away"),
        pytest.param("Theo teaches history.", "Theo", None, id="too-few-words"),
        pytest.param("Alice", "Alice", None, id="only-the-subject"),
        pytest.param("42 !", "", None, id="no-letters"),
        pytest.param("", "", None, id="empty"),
    ],
)
def test_card_language(text: str, subject: str, lang: str | None) -> None:
    assert card_language(text, subject) == lang


@pytest.mark.parametrize(
    ("a", "b", "other"),
    [
        pytest.param(("Alice likes green tea.", "Alice"), ("Alice mag grünen Tee.", "Alice"), True),
        pytest.param(("Alice likes green tea.", "Alice"), ("Алиса любит чай.", "Алиса"), True),
        pytest.param(
            ("Isabel es vegana.", "Isabel"), ("Изабель — веганка.", "Изабель"), True, id="scripts"
        ),
        pytest.param(
            ("Alice likes green tea.", "Alice"), ("Alice likes black coffee.", "Alice"), False
        ),
        pytest.param(
            ("Kevin drives a red Toyota.", "Kevin"),
            ("Kevin conduce un Toyota rojo.", "Kevin"),
            False,
            id="one-not-given-away",
        ),
        pytest.param(("Мария любит кофе.", "Мария"), ("Мария пьёт чай.", "Мария"), False),
    ],
)
def test_other_languages(a: tuple[str, str], b: tuple[str, str], other: bool) -> None:
    assert other_languages(*a, *b) is other
    assert other_languages(*b, *a) is other


def test_script() -> None:
    assert script("Алиса likes чай") == "cyrillic"
    assert script("Alice любит tea") == "latin"
    assert script("12 — 34") is None


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80), subject=st.text(max_size=20), other=st.text(max_size=80))
def test_any_text_gives_a_language_or_none_and_a_symmetric_answer(
    text: str, subject: str, other: str
) -> None:
    """Whatever a model writes: no exception, one of the languages or None, a text is never in
    another language than itself, and two texts are in two languages both ways round."""
    assert card_language(text, subject) in {None, "en", "de", "es", "fr", "ru", "uk"}
    assert not other_languages(text, subject, text, subject)
    assert other_languages(text, subject, other, "") is other_languages(other, "", text, subject)
