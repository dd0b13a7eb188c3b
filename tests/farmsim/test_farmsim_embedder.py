"""The farm simulator's deterministic hashed embedder."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_worker.farmsim import embedder
from memory_worker.farmsim.embedder import cosine, embed_text, embed_texts, features


def _norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


def test_same_input_gives_the_same_vector() -> None:
    assert embed_text("Anna likes jazz.") == embed_text("Anna likes jazz.")
    assert embed_texts(["a b", "c"]) == [embed_text("a b"), embed_text("c")]


def test_case_and_punctuation_do_not_matter() -> None:
    assert embed_text("Anna likes JAZZ!") == embed_text("anna likes jazz")


@pytest.mark.parametrize("dimension", [1, 8, 512, 1024])
def test_vectors_have_the_requested_dimension_and_unit_norm(dimension: int) -> None:
    vector = embed_text("Anna lives in Berlin", dimension)
    assert len(vector) == dimension
    assert _norm(vector) == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["", "   ", "!!!"])
def test_texts_without_words_still_have_unit_norm(text: str) -> None:
    assert _norm(embed_text(text)) == pytest.approx(1.0)


@pytest.mark.parametrize("dimension", [0, -1, 100_000])
def test_bad_dimension_is_rejected(dimension: int) -> None:
    with pytest.raises(ValueError):
        embed_text("x", dimension)


@pytest.mark.parametrize(
    ("anchor", "similar", "unrelated"),
    [
        ("Anna likes jazz music", "Anna loves jazz", "The train leaves at noon"),
        ("Bob lives in Berlin", "Bob moved to Berlin", "Allergic to peanuts"),
        ("Анна любит кофе", "Анна любит крепкий кофе", "Встреча в пятницу"),
        (
            "The group decided to go hiking",
            "hiking on Saturday with the group",
            "Bob works at Siemens",
        ),
    ],
)
def test_texts_sharing_words_are_clearly_closer(anchor: str, similar: str, unrelated: str) -> None:
    near = cosine(embed_text(anchor), embed_text(similar))
    far = cosine(embed_text(anchor), embed_text(unrelated))
    assert near > far + 0.2
    assert abs(far) < 0.3


def test_features_are_words_and_padded_trigrams() -> None:
    assert features("Hi") == [("w:hi", 1.0), ("t: hi", 0.5), ("t:hi ", 0.5)]


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=1, max_value=600))
def test_any_text_embeds_to_a_unit_vector(text: str, dimension: int) -> None:
    vector = embed_text(text, dimension)
    assert len(vector) == dimension
    assert _norm(vector) == pytest.approx(1.0)
    assert cosine(vector, embed_text(text, dimension)) == pytest.approx(1.0)


# --- the simulator's choice of embedder ---------------------------------------------------


def test_fit_dimension_pads_with_zeros_or_cuts_and_renormalises() -> None:
    unit = [0.6, 0.8, 0.0]
    assert embedder.fit_dimension(unit, 5) == [0.6, 0.8, 0.0, 0.0, 0.0]
    assert embedder.fit_dimension(unit, 1) == [1.0]
    assert embedder.fit_dimension([0.0, 0.0, 1.0], 2) == [1.0, 0.0]  # nothing left: a unit axis


def test_make_embedder_kinds() -> None:
    assert embedder.make_embedder("hashed").kind is embedder.EmbedderKind.HASHED
    assert embedder.make_embedder("local").kind is embedder.EmbedderKind.LOCAL
    with pytest.raises(ValueError, match="nope"):
        embedder.make_embedder("nope")


def test_hashed_kind_is_the_exact_bag_of_words() -> None:
    hashed = embedder.make_embedder("hashed")
    assert hashed.embed(["Anna likes jazz"], 64, True) == [
        embedder.embed_text("Anna likes jazz", 64)
    ]


def test_local_kind_runs_e5_once_per_text_and_query_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    from llm_client._transport import local_embed

    calls: list[tuple[list[str], bool]] = []
    real = local_embed.load_model(embedder.LOCAL_MODEL)

    class Counting:
        dim = real.dim

        def encode(self, texts: list[str], is_query: bool = False) -> object:
            calls.append((list(texts), is_query))
            return real.encode(texts, is_query=is_query)

    import llm_client

    monkeypatch.setattr(llm_client, "load_model", lambda model: Counting())  # the face it uses
    monkeypatch.setattr(embedder, "_CACHE", {})
    local = embedder.LocalEmbedder()
    first = local.embed(["sim cache probe", "sim cache probe"], 384, False)
    again = local.embed(["sim cache probe"], 384, False)
    query = local.embed(["sim cache probe"], 384, True)
    assert calls == [(["sim cache probe"], False), (["sim cache probe"], True)]
    assert first[0] == first[1] == again[0]
    assert query[0] != first[0]
    assert embedder.cosine(first[0], query[0]) > 0.8
