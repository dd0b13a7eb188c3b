"""Card validation (§10): what the extractor proposes vs what may become memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_worker.cards import (
    Card,
    Durability,
    ResolutionOp,
    Scope,
    dedup_hash,
    scope_key,
)
from memory_worker.consolidation.extraction import CandidateCard, LinkCandidate, ResolutionCandidate
from memory_worker.consolidation.validation import (
    BatchFacts,
    Limits,
    RunCards,
    SourceMessage,
    validate_card,
    validate_cards,
    validate_links,
    validate_resolutions,
)
from memory_worker.privacy.masking import contains_secret, mask
from tests.support.cards import stored

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
ALICE, BOB = 11, 12
BATCH = BatchFacts(
    thread_id=0,
    messages={
        1: SourceMessage(ALICE, T0),
        2: SourceMessage(BOB, T0 + timedelta(minutes=5)),
        3: SourceMessage(ALICE, T0 + timedelta(minutes=9)),
    },
)
LIMITS = Limits()


def cand(**fields: Any) -> CandidateCard:
    base: dict[str, Any] = {
        "scope": "user",
        "card_type": "preference",
        "subject": "Alice",
        "predicate": "likes",
        "object": "tea",
        "fact_text": "Alice likes tea.",
        "source_message_ids": [1],
        "user_id": ALICE,
    }
    base.update(fields)
    return CandidateCard.model_validate(base)


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"fact_text": ""}, "empty"),
        ({"fact_text": "x" * 701}, "too_long"),
        ({"fact_text": "я" * 351}, "too_long"),
        ({"subject": "s" * 300}, "too_long"),
        ({"fact_text": "Alice's key is sk-abcdefghijklmnop1234"}, "secret"),
        ({"fact_text": "Alice's password is tulip"}, "secret"),
        ({"fact_text": "Пароль Алисы — тюльпан"}, "secret"),
        ({"object": "Bearer eyJhbGciOiJIUzI1NiJ9.payload"}, "secret"),
        ({"fact_text": "set token=abc123def in the config"}, "secret"),
        ({"fact_text": "the api key lives in vault"}, "secret"),
        ({"source_message_ids": []}, "no_source"),
        ({"source_message_ids": [99]}, "no_source"),
        ({"user_id": None}, "no_user"),
        ({"user_id": BOB, "source_message_ids": [1, 3]}, "wrong_user"),
    ],
    ids=[
        "empty",
        "long_ascii",
        "long_bytes_cyrillic",
        "long_subject",
        "sk_key",
        "password",
        "password_ru",
        "bearer",
        "token_assign",
        "api_key_marker",
        "no_sources",
        "unknown_source",
        "user_missing",
        "wrong_user",
    ],
)
def test_dropped_cards(fields: dict[str, Any], reason: str) -> None:
    assert validate_card(cand(**fields), BATCH, LIMITS) == reason


def test_a_user_card_needs_one_cited_message_of_its_user() -> None:
    card = validate_card(cand(user_id=BOB, source_message_ids=[1, 2, 99]), BATCH, LIMITS)
    assert not isinstance(card, str)
    assert card.user_id == BOB
    assert card.source_message_ids == (1, 2)
    assert card.valid_from == T0
    assert card.observed_at == T0 + timedelta(minutes=5)


@pytest.mark.parametrize(
    ("fields", "thread", "scope", "user"),
    [
        ({"scope": "chat"}, 0, Scope.CHAT, None),
        ({"scope": "thread"}, 0, Scope.CHAT, None),
        ({"scope": "chat"}, 7, Scope.THREAD, None),
        ({"scope": "thread"}, 7, Scope.THREAD, None),
        ({"scope": "user"}, 7, Scope.USER, ALICE),
        ({"scope": "user", "card_type": "joke"}, 0, Scope.CHAT, None),
        ({"scope": "user", "card_type": "event"}, 7, Scope.THREAD, None),
        ({"scope": "user", "card_type": "relationship"}, 0, Scope.CHAT, None),
        ({"scope": "weird"}, 0, Scope.CHAT, None),
    ],
    ids=[
        "chat",
        "thread_outside_thread",
        "chat_in_thread",
        "thread_in_thread",
        "user_in_thread",
        "joke_forced",
        "event_forced_thread",
        "relationship_forced",
        "unknown_scope",
    ],
)
def test_scope_mapping(fields: dict[str, Any], thread: int, scope: Scope, user: int | None) -> None:
    batch = BatchFacts(thread_id=thread, messages=BATCH.messages)
    card = validate_card(cand(**fields), batch, LIMITS)
    assert not isinstance(card, str)
    assert (card.scope, card.user_id) == (scope, user)
    assert card.thread_id == (thread if scope == Scope.THREAD else 0)


@pytest.mark.parametrize(
    ("durability", "card_type", "ttl"),
    [
        ("ephemeral", "preference", timedelta(days=2)),
        ("short", "project", timedelta(days=14)),
        ("long", "preference", None),
        ("permanent", "identity", None),
        (None, "event", timedelta(days=14)),
        (None, "preference", None),
        ("forever", "preference", None),
    ],
)
def test_durability_sets_expiry_from_message_time(
    durability: str | None, card_type: str, ttl: timedelta | None
) -> None:
    card = validate_card(
        cand(durability=durability, card_type=card_type, scope="chat"), BATCH, LIMITS
    )
    assert not isinstance(card, str)
    assert card.expires_at == (None if ttl is None else card.observed_at + ttl)


def test_unknown_card_type_becomes_preference() -> None:
    card = validate_card(cand(card_type="trivia"), BATCH, LIMITS)
    assert not isinstance(card, str)
    assert card.card_type == "preference"


def test_repeats_inside_a_run_fold_into_one_card() -> None:
    run = RunCards()
    indexes, dropped = validate_cards(
        [
            cand(confidence=0.6, source_message_ids=[1]),
            cand(fact_text="alice likes tea", confidence=0.9, source_message_ids=[3]),
            cand(fact_text=""),
        ],
        BATCH,
        LIMITS,
        run,
    )
    assert indexes == [0]
    assert dropped == {"empty": 1}
    (card,) = run.cards
    assert card.confidence == 0.9
    assert card.source_message_ids == (1, 3)


@pytest.mark.parametrize(
    "text",
    [
        "sk-proj-9f8e7d6c5b4a3f2e1d0c9b8a",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "xoxb-123456789012-abcdefghij",
        "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
        "-----BEGIN RSA PRIVATE KEY-----",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "Authorization: Bearer abcdef123456",
        "password: hunter2",
        "secret=xyz",
    ],
)
def test_secret_shapes(text: str) -> None:
    assert contains_secret(text)
    assert contains_secret(f"prefix {text} suffix")


@pytest.mark.parametrize(
    "text",
    ["Alice likes tea.", "Bob's token collection is huge", "Kate bears no grudges"],
)
def test_ordinary_texts_are_not_secrets(text: str) -> None:
    assert not contains_secret(text)


def test_redaction_keeps_the_sentence_and_removes_values() -> None:
    text = "Alice shared sk-proj-9f8e7d6c5b4a3f2e1d0c9b8a and said the password is hunter2."
    out = mask(text)
    assert "sk-proj" not in out
    assert "hunter2" not in out
    assert out.startswith("Alice shared [redacted]")


def existing(card_id: str, subject: str, predicate: str, fact: str) -> Card:
    sk = scope_key(Scope.USER, 0, ALICE)
    return stored(
        card_id,
        fact,
        chat=5,
        user=ALICE,
        subject=subject,
        predicate=predicate,
        card_type="identity",
        at=T0,
        dedup=dedup_hash(sk, subject, predicate, "", fact),
        durability=Durability.LONG,
    )


def res(old: str, decision: str, **extra: Any) -> ResolutionCandidate:
    return ResolutionCandidate.model_validate({"old_card_id": old, "decision": decision, **extra})


def test_resolutions_only_name_shown_cards_once() -> None:
    shown = {
        "c1": existing("10", "Alice", "lives_in", "Alice lives in Berlin."),
        "c2": existing("11", "Alice", "works_at", "Alice works at a bank."),
        "c3": existing("12", "Alice", "likes", "Alice likes coffee."),
    }
    run = RunCards()
    indexes, _ = validate_cards(
        [
            cand(predicate="lives_in", fact_text="Alice lives in Lisbon.", object="Lisbon"),
            cand(predicate="likes", fact_text="Alice likes tea."),
        ],
        BATCH,
        LIMITS,
        run,
    )
    claimed: set[str] = set()
    writes, dropped = validate_resolutions(
        [
            res("c1", "supersede", new_fact_text="Alice lives in Lisbon."),
            res("c1", "reinforce"),
            res("c9", "reinforce"),
            res("10", "reinforce"),
            res("c2", "explode"),
            res("c2", "update", new_fact_text="Alice works at Nordea."),
            res("c3", "competing"),
        ],
        existing=shown,
        cards=run.cards,
        batch_indexes=indexes,
        claimed=claimed,
        limits=LIMITS,
    )
    assert [(w.old_card_id, w.op, w.new_index) for w in writes] == [
        ("10", ResolutionOp.SUPERSEDE, 0),
        ("11", ResolutionOp.UPDATE, None),
        ("12", ResolutionOp.COMPETING, 1),
    ]
    assert writes[1].new_fact_text == "Alice works at Nordea."
    assert writes[1].new_dedup_hash == dedup_hash(
        "user:11", "Alice", "works_at", "", "Alice works at Nordea."
    )
    assert dropped == {"duplicate_resolution": 1, "unknown_card": 2, "unknown_decision": 1}
    assert claimed == {"10", "11", "12"}


def test_supersede_without_a_matching_new_card_is_dropped() -> None:
    shown = {"c1": existing("10", "Alice", "lives_in", "Alice lives in Berlin.")}
    run = RunCards()
    indexes, _ = validate_cards(
        [cand(predicate="likes", fact_text="Alice likes tea."), cand(fact_text="Alice likes jam.")],
        BATCH,
        LIMITS,
        run,
    )
    writes, dropped = validate_resolutions(
        [res("c1", "supersede", new_fact_text="Alice lives in Porto."), res("c1", "update")],
        existing=shown,
        cards=run.cards,
        batch_indexes=indexes,
        claimed=set(),
        limits=LIMITS,
    )
    assert writes == []
    assert dropped == {"unmatched": 2}


def test_resolution_texts_are_validated() -> None:
    shown = {"c1": existing("10", "Alice", "lives_in", "Alice lives in Berlin.")}
    writes, dropped = validate_resolutions(
        [res("c1", "update", new_fact_text="Alice's password is hunter2")],
        existing=shown,
        cards=[],
        batch_indexes=[],
        claimed=set(),
        limits=LIMITS,
    )
    assert writes == []
    assert dropped == {"bad_text": 1}


def test_merge_into_a_shown_card_or_a_new_one() -> None:
    shown = {
        "c1": existing("10", "Kate", "plays", "Kate plays guitar."),
        "c2": existing("11", "Kate", "member_of", "Kate is in The Lemons."),
    }
    writes, _ = validate_resolutions(
        [res("c1", "merge", into_card_id="c2", new_fact_text="Kate plays guitar in The Lemons.")],
        existing=shown,
        cards=[],
        batch_indexes=[],
        claimed=set(),
        limits=LIMITS,
    )
    (write,) = writes
    assert (write.old_card_id, write.into_card_id) == ("10", "11")
    assert write.new_dedup_hash == dedup_hash(
        "user:11", "Kate", "member_of", "", "Kate plays guitar in The Lemons."
    )


def test_links_join_this_batchs_new_cards_only() -> None:
    run = RunCards()
    indexes, _ = validate_cards(
        [cand(fact_text="A."), cand(predicate="x", fact_text="B.")], BATCH, LIMITS, run
    )
    links, dropped = validate_links(
        [
            LinkCandidate(from_fact_text="a", to_fact_text="B", relation="supports"),
            LinkCandidate(from_fact_text="A.", to_fact_text="B.", relation="supports"),
            LinkCandidate(from_fact_text="A.", to_fact_text="C.", relation="supports"),
            LinkCandidate(from_fact_text="A.", to_fact_text="A.", relation="same_topic"),
            LinkCandidate(from_fact_text="A.", to_fact_text="B.", relation="causes"),
        ],
        run.cards,
        indexes,
    )
    assert [(link.from_index, link.relation, link.to_index) for link in links] == [
        (0, "supports", 1)
    ]
    assert dropped == {"unmatched_link": 2, "unknown_relation": 1}
