"""Tolerant decoding of model answers (§10): salvage what is usable, protocol error otherwise."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_client import DecodeError, FailureReason, retryable_reason
from memory_worker.consolidation.extraction import (
    DECODE_PHRASE,
    decode_extraction,
    decode_merge,
    salvage_truncated,
)


def card(fact: str, **extra: Any) -> dict[str, Any]:
    return {
        "scope": "user",
        "card_type": "preference",
        "subject": "Alice",
        "predicate": "likes",
        "object": "tea",
        "fact_text": fact,
        "confidence": 0.8,
        "salience": 0.6,
        "source_message_ids": [1],
        "user_id": 11,
        "durability": "long",
        **extra,
    }


def answer(*cards: Any, **extra: Any) -> dict[str, Any]:
    return {
        "episode_summary": "Alice talks about tea.",
        "topics": ["tea"],
        "participants": ["Alice"],
        "candidate_cards": list(cards),
        "resolutions": [],
        "links": [],
        **extra,
    }


GOOD = json.dumps(answer(card("Alice likes green tea."), card("Alice drinks tea daily.")))


@pytest.mark.parametrize(
    "content",
    [
        GOOD,
        f"```json\n{GOOD}\n```",
        f"<think>the user said tea {{maybe}}</think>{GOOD}",
        f"Sure! Here you go:\n{GOOD}\nHope this helps {{:)}}",
        "\ufeff" + GOOD,
        json.dumps({"memory_extraction": json.loads(GOOD)}),
    ],
    ids=["plain", "fenced", "think", "prose_around", "bom", "wrapped"],
)
def test_well_formed_answers_decode(content: str) -> None:
    out = decode_extraction(content)
    assert [c.fact_text for c in out.candidate_cards] == [
        "Alice likes green tea.",
        "Alice drinks tea daily.",
    ]
    assert out.episode_summary == "Alice talks about tea."
    assert out.topics == ("tea",)
    assert not out.salvaged


@pytest.mark.parametrize(
    "content",
    [
        "",
        "   ",
        None,
        "I could not find any durable facts in this conversation.",
        "null",
        "[1, 2, 3]",
        '{"foo": 1}',
        "{this is not json at all}",
        '{"episode_summ',
    ],
    ids=["empty", "blank", "none", "prose", "null", "array", "no_fields", "broken", "cut_in_key"],
)
def test_unusable_answers_are_protocol_errors(content: str | None) -> None:
    with pytest.raises(DecodeError) as info:
        decode_extraction(content)
    assert DECODE_PHRASE in str(info.value)
    assert retryable_reason(info.value) == FailureReason.PROVIDER_PROTOCOL_ERROR


def test_nothing_to_extract_is_a_valid_answer() -> None:
    out = decode_extraction(json.dumps(answer()))
    assert out.candidate_cards == ()
    assert out.malformed == 0


def test_truncated_answer_keeps_complete_cards() -> None:
    full = json.dumps(answer(card("one"), card("two"), card("three")))
    cut = full.index('"three"') + 3
    out = decode_extraction(full[:cut])
    assert out.salvaged
    assert [c.fact_text for c in out.candidate_cards] == ["one", "two"]


def test_truncated_inside_a_string_with_brackets() -> None:
    full = json.dumps(answer(card('uses "[x]{y}" syntax'), card("second, with comma")))
    out = decode_extraction(full[: full.index("second") + 8])
    assert [c.fact_text for c in out.candidate_cards] == ['uses "[x]{y}" syntax']


@given(cut=st.integers(min_value=1, max_value=len(GOOD) - 1))
@settings(max_examples=200, deadline=None)
def test_any_truncation_salvages_a_prefix_or_is_a_protocol_error(cut: int) -> None:
    originals = [c["fact_text"] for c in json.loads(GOOD)["candidate_cards"]]
    try:
        out = decode_extraction(GOOD[:cut])
    except DecodeError:
        return
    facts = [c.fact_text for c in out.candidate_cards]
    assert facts == originals[: len(facts)]


def test_salvage_closes_nested_brackets() -> None:
    assert salvage_truncated('{"a": [1, 2, {"b": [3') == {"a": [1, 2, {"b": []}]}
    assert salvage_truncated('{"a": "unterminated') == {}
    assert salvage_truncated("{]") is None


def test_items_are_validated_one_by_one() -> None:
    content = json.dumps(
        answer(
            card("kept"),
            {"scope": "user"},  # no fact text
            "not an object",
            card(
                "coerced",
                confidence="85%",
                salience="0.3",
                source_message_ids=["1", "#2", "x"],
                user_id="11",
            ),
            card("user id junk", user_id="alice"),
        )
    )
    out = decode_extraction(content)
    assert [c.fact_text for c in out.candidate_cards] == ["kept", "coerced", "user id junk"]
    assert out.malformed == 2
    coerced = out.candidate_cards[1]
    assert coerced.confidence == pytest.approx(0.85)
    assert coerced.salience == pytest.approx(0.3)
    assert coerced.source_message_ids == [1, 2]
    assert coerced.user_id == 11
    assert out.candidate_cards[2].user_id is None


def test_aliases_and_legacy_supersessions() -> None:
    content = json.dumps(
        {
            "episode_summary": "x",
            "cards": [
                {
                    "scope_type": "User",
                    "type": "Identity",
                    "fact": "Bob lives in Rome.",
                    "source_ids": 3,
                    "confidence": 250,
                }
            ],
            "supersessions": [{"old_card_id": 7, "new_fact_text": "Bob lives in Rome."}],
            "resolutions": [{"old_card_id": "c2", "decision": "Reinforce", "into_card_id": ""}],
        }
    )
    out = decode_extraction(content)
    (only,) = out.candidate_cards
    assert (only.scope, only.card_type, only.fact_text) == (
        "user",
        "identity",
        "Bob lives in Rome.",
    )
    assert only.source_message_ids == [3]
    assert only.confidence == 1.0
    assert [(r.old_card_id, r.decision, r.into_card_id) for r in out.resolutions] == [
        ("c2", "reinforce", None),
        ("7", "supersede", None),
    ]


def test_merge_answers() -> None:
    out = decode_merge(
        json.dumps(
            {
                "clusters": [
                    {"survivor_id": 3, "absorbed_ids": [4, "5"], "merged_fact_text": "x"},
                    {"absorbed_ids": []},
                ],
                "demote_ids": ["6"],
                "keep_ids": [7],
            }
        )
    )
    assert [(c.survivor_id, c.absorbed_ids) for c in out.clusters] == [("3", ["4", "5"])]
    assert out.malformed == 1
    assert out.demote_ids == ("6",)
    assert out.keep_ids == ("7",)
    with pytest.raises(DecodeError):
        decode_merge("no idea")
    with pytest.raises(DecodeError):
        decode_merge(GOOD)
