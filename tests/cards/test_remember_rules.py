"""What a remembered fact becomes (§13), pure: the card rules on arbitrary text from the bot,
the time it became true, its scope and identity, and the same words found among hits.

The fact and the actor come from the bot (a trust boundary): any str either becomes a card
whose text is exactly what was sent (stripped) and whose plan reaches Lua, or is refused
with :class:`~memory_worker.errors.InvalidCorrection` — never another error, never a card
holding a secret.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_worker.cards import Card, CardStatus, Scope, dedup_hash
from memory_worker.cards.codec import lua_json
from memory_worker.cards.corrections import check_actor, check_fact
from memory_worker.cards.remember import (
    RememberPlan,
    check_valid_from,
    remembered_card,
    same_words,
    to_fill,
)
from memory_worker.errors import InvalidCorrection
from memory_worker.privacy.masking import contains_secret

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)
MAX_BYTES = 700
#: Any code point, lone surrogates and control characters included, and what looks like
#: a secret or a stored card's fields.
anything = st.one_of(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=900),
    st.sampled_from(
        [
            "password: hunter2hunter2",
            'x "row":"1" "h":"x" "updated":"5"',
            "\\u0000 \u0000 \ud800",
            "Мария любит чай",
            "  Alice is vegetarian.  ",
        ]
    ),
)


@settings(max_examples=500, deadline=None)
@given(anything, st.sampled_from([None, 7]), st.sampled_from([0, 3]))
def test_any_text_is_a_card_as_written_or_one_typed_refusal(
    text: str, user: int | None, thread: int
) -> None:
    try:
        fact = check_fact(text, MAX_BYTES)
    except InvalidCorrection:
        return
    assert fact == text.strip()
    assert fact
    assert len(fact.encode()) <= MAX_BYTES
    assert not contains_secret(fact)
    card = remembered_card(
        fact, user_id=user, thread_id=thread, valid_from=NOW, now=NOW, salience=0.8
    )
    assert card.fact_text == fact
    plan = RememberPlan(card, "bot", 0, dim=384)
    assert lua_json(plan.as_json(vector=False))  # it reaches the script
    assert plan.as_json(vector=False)["card"]["fact"] == fact


@settings(max_examples=300, deadline=None)
@given(anything)
def test_any_actor_is_kept_or_refused_with_one_typed_error(actor: str) -> None:
    try:
        kept = check_actor(actor)
    except InvalidCorrection:
        return
    assert kept == " ".join(actor.split())
    assert lua_json({"actor": kept})


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.none(),
        st.datetimes(timezones=st.none()),
        st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=-11))])),
        st.text(max_size=5),
        st.integers(),
    )
)
def test_valid_from_is_an_aware_time_up_to_now_or_a_typed_refusal(value: object) -> None:
    try:
        when = check_valid_from(value, NOW)
    except InvalidCorrection:
        assert not (isinstance(value, datetime) and value.tzinfo and value <= NOW)
        return
    assert when.tzinfo is not None
    assert when <= NOW
    assert when == (NOW if value is None else value)


@pytest.mark.parametrize(
    ("user", "thread", "scope", "key"),
    [
        (7, 0, Scope.USER, "user:7"),
        (7, 3, Scope.USER, "user:7"),  # a user's fact follows the user in every thread
        (None, 3, Scope.THREAD, "thread:3"),
        (None, 0, Scope.CHAT, "chat"),
    ],
)
def test_the_scope_is_the_users_else_the_threads_else_the_chats(
    user: int | None, thread: int, scope: Scope, key: str
) -> None:
    card = remembered_card("Alice skis", user_id=user, thread_id=thread, valid_from=NOW,
                           now=NOW, salience=0.8)  # fmt: skip
    assert (card.scope, card.scope_key, card.thread_id) == (scope, key, thread)
    assert (card.subject, card.predicate, card.object, card.source_message_ids) == ("", "", "", ())
    assert card.dedup_hash == dedup_hash(key, "", "", "", "alice SKIS!")  # its words


def _card(card_id: str, fact: str, *, sk: str = "user:7", status: str = "active") -> Card:
    return Card.model_validate(
        {
            "id": card_id,
            "chat_id": 1,
            "scope": "user" if sk.startswith("user") else "chat",
            "user_id": 7 if sk.startswith("user") else None,
            "card_type": "preference",
            "subject": "Alice",
            "predicate": "is",
            "object": "",
            "fact_text": fact,
            "confidence": 0.5,
            "salience": 0.5,
            "observation_count": 1,
            "status": status,
            "valid_from": NOW,
            "observed_at": NOW,
            "created_at": NOW,
            "updated_at": NOW,
            "source_message_ids": [1],
            "dedup_hash": card_id,
            "has_embedding": card_id != "9",
        }
    )


def test_the_same_words_are_a_live_card_of_the_scope_with_the_normalised_text() -> None:
    wanted = remembered_card("Alice is vegetarian", user_id=7, thread_id=0, valid_from=NOW,
                             now=NOW, salience=0.8)  # fmt: skip
    hits = [
        _card("1", "Alice is vegetarian", sk="chat"),  # another scope
        _card("2", "alice is VEGETARIAN!", status=CardStatus.RETRACTED.value),  # not live
        _card("3", "Alice was vegetarian"),  # other words
        _card("4", "  alice  is vegetarian."),
        _card("5", "Alice is vegetarian"),
    ]
    found = same_words(wanted, hits)
    assert found is not None
    assert found.id == "4"
    assert same_words(wanted, hits[:3]) is None


def test_a_fill_embeds_the_live_cards_still_without_a_vector() -> None:
    cards = [_card("8", "x"), _card("9", "y"), _card("10", "z", status="merged")]
    assert [c.id for c in to_fill(cards)] == ["9"]
