"""Redaction before the farm (§14): what the worker sends never carries a
credential or a payment card number — nor, with MEMORY_REDACT_CONTACTS, an e-mail address or
a phone number — while ordinary text arrives as written.

The pure masking function is tested with tables and hypothesis; the canary tests run a real
consolidation (and a merge request) against the loopback farm simulator and search every body
it received.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memory_worker.cards import CardStore, Durability, NewCard, RunWrites, Scope
from memory_worker.consolidation.consolidate import consolidate_run
from memory_worker.consolidation.prompt import build_merge_request, farm_payload
from memory_worker.keys import Keys
from memory_worker.models import RunRequest
from memory_worker.privacy.masking import luhn_valid, mask
from memory_worker.settings import Settings
from tests.support.factories import slice_request
from tests.support.farm import Farm, everything_sent, farm_for

# --- the pure function -----------------------------------------------------------------------

SECRETS = {
    "openai key": "sk-proj-9f8e7d6c5b4a3f2e1d0c9b8a",
    "stripe key": "rk_live_abcdefghij0123",
    "aws key": "AKIAIOSFODNN7EXAMPLE",
    "github token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "gitlab token": "glpat-abcdefghij0123456789",
    "slack token": "xoxb-123456789012-abcdefghij",
    "google key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "telegram token": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
}
CARDS = {
    "visa spaced": "4111 1111 1111 1111",
    "visa dashed": "4111-1111-1111-1111",
    "visa plain": "4111111111111111",
    "mastercard": "5555 5555 5555 4444",
    "amex": "3782 822463 10005",
    "visa 13": "4222222222222",
    "unionpay 19": "6212345678901265",
}
CONTACTS = {
    "email": "alice.canary+memo@example.co.uk",
    "intl phone": "+7 912 345-67-89",
    "us phone": "(415) 555-0100",
    "uk phone": "020 7946 0958",
    "plain intl": "+4915112345678",
}


@pytest.mark.parametrize("secret", list(SECRETS.values()), ids=list(SECRETS))
def test_a_secret_shape_is_masked_wherever_it_stands(secret: str) -> None:
    text = f"here: {secret} — keep it safe"
    masked = mask(text)
    assert secret not in masked
    assert masked == "here: [redacted] — keep it safe"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my password: hunter22 ok", "my password: [redacted] ok"),
        ("PASSWORD=correct-horse", "PASSWORD=[redacted]"),
        ("the wifi password is swordfish", "the wifi password is [redacted]"),
        ("мой пароль это qwerty123", "мой пароль это [redacted]"),
        ("api_key: abcd1234efgh", "api_key: [redacted]"),
        ("Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [redacted]"),
        ("token=abc", "token=[redacted]"),
    ],
    ids=["password colon", "password equals", "password is", "пароль", "api key", "bearer", "t"],
)
def test_a_labelled_secret_keeps_its_label_and_loses_its_value(text: str, expected: str) -> None:
    assert mask(text) == expected


@pytest.mark.parametrize("number", list(CARDS.values()), ids=list(CARDS))
def test_a_luhn_valid_card_number_is_masked(number: str) -> None:
    assert luhn_valid(number.replace(" ", "").replace("-", ""))
    assert mask(f"pay with {number}, thanks") == "pay with [card number], thanks"


@pytest.mark.parametrize(
    "text",
    [
        "order 4111 1111 1111 1112 shipped",  # fails the Luhn check
        "message id 12345678901234567890123",  # longer than any card number
        "call me at 12:30 on 2026-01-05",
        "the answer is 42 and pi is 3.14159",
        "ticket 1234-5678",
    ],
    ids=["not luhn", "too long", "time and date", "numbers", "short"],
)
def test_ordinary_numbers_are_left_alone(text: str) -> None:
    assert mask(text, contacts=True) == text


def test_a_card_number_after_another_number_is_still_found() -> None:
    assert mask("x 12 4111 1111 1111 1111") == "x 12 [card number]"


@pytest.mark.parametrize("contact", list(CONTACTS.values()), ids=list(CONTACTS))
def test_contacts_are_masked_only_when_asked(contact: str) -> None:
    text = f"reach me at {contact} after six"
    assert mask(text) == text
    masked = mask(text, contacts=True)
    assert contact not in masked
    assert masked in {"reach me at [email] after six", "reach me at [phone] after six"}


@pytest.mark.parametrize(
    "text",
    [
        "I live in Lisbon and love sushi",
        "Я живу в Берлине, люблю чай",
        "東京に住んでいます",
        "meet on 2026-01-05 at 12:30, room 4.12",
        "version 1.2.3 of the app; see https://example.org/docs?page=2",
        "",
    ],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert mask(text, contacts=True) == text


# hypothesis: any text, with or without canaries spliced in between words

CANARIES = [*SECRETS.values(), *CARDS.values(), *CONTACTS.values(), "password: hunter2222"]


@hsettings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=["Cs"])), contacts=st.booleans())
def test_masking_never_raises_and_is_idempotent(text: str, contacts: bool) -> None:
    once = mask(text, contacts=contacts)
    assert mask(once, contacts=contacts) == once


@hsettings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="abc 0123456789+-()@.:=", max_size=60),
    contacts=st.booleans(),
)
def test_masking_is_idempotent_on_digit_and_punctuation_soup(text: str, contacts: bool) -> None:
    once = mask(text, contacts=contacts)
    assert mask(once, contacts=contacts) == once


@hsettings(max_examples=300, deadline=None)
@given(
    # words as people write them (a capital first at most): letters in random case beside a
    # secret are taken for another value (§14, a message that held one secret)
    before=st.lists(st.from_regex(r"[A-ZА-Я]?[a-zа-я]{1,9}", fullmatch=True), max_size=5),
    after=st.lists(st.from_regex(r"[A-ZА-Я]?[a-zа-я]{1,9}", fullmatch=True), max_size=5),
    canary=st.sampled_from(CANARIES),
)
def test_no_canary_survives(before: list[str], after: list[str], canary: str) -> None:
    text = " ".join([*before, canary, *after])
    masked = mask(text, contacts=True)
    assert canary not in masked
    assert masked.startswith(" ".join(before))


def test_a_payload_keeps_ids_and_times_and_masks_its_texts() -> None:
    payload: dict[str, Any] = {
        "task": "memory_extraction",
        "run": {"id": "r-1", "chat_id": 5},
        "messages": [
            {
                "message_id": 4111111111111111,
                "user_id": 1,
                "sender_name": "alice@example.org",
                "text": "my card 4111 1111 1111 1111",
                "sent_at": "2026-01-05T12:30:00Z",
            }
        ],
        "existing_cards": [{"id": "c1", "fact": "Alice's key is sk-abcdefghijklmnopqrstu"}],
    }
    masked = farm_payload(payload, contacts=True)
    message = masked["messages"][0]
    assert message["message_id"] == 4111111111111111
    assert message["sent_at"] == "2026-01-05T12:30:00Z"
    assert (message["sender_name"], message["text"]) == ("[email]", "my card [card number]")
    assert masked["existing_cards"][0] == {"id": "c1", "fact": "Alice's key is [redacted]"}
    assert masked["run"] == payload["run"]
    assert payload["messages"][0]["text"] == "my card 4111 1111 1111 1111"  # not mutated


# --- canaries against the farm simulator -------------------------------------------------------

CHAT = -100555
ALICE, BOB = 21, 22
DAY = datetime(2026, 3, 2, 9, tzinfo=UTC)
KEY_CANARY = "sk-canaryAAAAbbbbCCCCdddd1234"
CARD_CANARY = "4111 1111 1111 1111"
PASSWORD_CANARY = "Tr0ub4dor-canary"
MAIL_CANARY = "alice.canary@example.org"
PHONE_CANARY = "+351 912 345 678"
OLD_CARD_MAIL = "bob.canary@example.net"


@pytest.fixture
async def farm(settings: Settings) -> AsyncIterator[Farm]:
    async with farm_for(settings, embedder="hashed") as f:
        yield f


def request_with_canaries() -> RunRequest:
    rows = [
        (1, ALICE, "Alice", "I live in Lisbon"),
        (2, ALICE, "Alice", f"my openai key is {KEY_CANARY} do not share"),
        (3, BOB, "Bob", f"card for the tickets: {CARD_CANARY}"),
        (4, ALICE, "Alice", f"the wifi password: {PASSWORD_CANARY}"),
        (5, ALICE, "Alice", f"write to {MAIL_CANARY} or call {PHONE_CANARY}"),
        (6, BOB, "Bob", "I work at Acme"),
    ]
    return slice_request(CHAT, DAY, rows, length=timedelta(days=1), first_minute=0)


async def seed_card_with_contact(store: CardStore, dimension: int) -> None:
    """A card stored before contacts were masked: shown to the extractor as existing memory.
    Its vector makes the run's related-card lookup embed the run text (a query sent too)."""
    card = NewCard(
        scope=Scope.USER,
        thread_id=0,
        user_id=BOB,
        card_type="contact",
        subject="Bob",
        predicate="email",
        object=OLD_CARD_MAIL,
        fact_text=f"Bob's e-mail is {OLD_CARD_MAIL}",
        confidence=0.9,
        salience=0.5,
        durability=Durability.LONG,
        source_message_ids=(99,),
        valid_from=DAY - timedelta(days=3),
        observed_at=DAY - timedelta(days=3),
        expires_at=None,
        embedding=[1.0] * dimension,
    )
    at = DAY - timedelta(days=3)
    await store.apply_run(CHAT, "old", RunWrites(observed_at=at, cards=[card]), now=at)


async def consolidate(farm: Farm, redis: Any, settings: Settings) -> str:
    store = CardStore(redis, Keys(settings.key_prefix))
    await seed_card_with_contact(store, settings.embedding_dimension)
    result = await consolidate_run(
        "run-canary",
        request_with_canaries(),
        store=store,
        extractor=farm.extractor,
        embedder=farm.embedder,
        settings=settings,
        now=DAY + timedelta(days=1),
    )
    assert result.llm_calls >= 1
    assert result.embed_calls == 2  # the related-card query and the cards
    return everything_sent(farm.sim)


async def test_secrets_never_reach_the_farm_and_ordinary_text_does(
    farm: Farm, redis: Any, settings: Settings
) -> None:
    sent = await consolidate(farm, redis, settings)
    for canary in (KEY_CANARY, CARD_CANARY, PASSWORD_CANARY, "4111111111111111"):
        assert canary not in sent
    assert "I live in Lisbon" in sent
    assert "I work at Acme" in sent
    assert "my openai key is [redacted] do not share" in sent
    assert "card for the tickets: [card number]" in sent
    # contacts are not masked by default
    assert MAIL_CANARY in sent
    assert OLD_CARD_MAIL in sent
    assert farm.sim.received(settings.embedder_service)  # embeddings were checked too


async def test_with_redact_contacts_no_address_or_number_reaches_the_farm(
    farm: Farm, redis: Any, settings: Settings
) -> None:
    sent = await consolidate(farm, redis, settings.model_copy(update={"redact_contacts": True}))
    canaries = (KEY_CANARY, CARD_CANARY, PASSWORD_CANARY, MAIL_CANARY, PHONE_CANARY)
    for canary in (*canaries, OLD_CARD_MAIL, "912 345 678"):
        assert canary not in sent
    assert "write to [email] or call [phone]" in sent
    assert "Bob's e-mail is [email]" in sent  # an existing card, as shown to the extractor
    assert "I live in Lisbon" in sent


def test_merge_requests_mask_card_texts(settings: Settings) -> None:
    payload = {
        "task": "memory_merge",
        "subject": MAIL_CANARY,
        "cards": [{"id": "1", "fact": f"key {KEY_CANARY}", "predicate": "has", "obs": 1}],
    }
    request = build_merge_request(
        payload, settings=settings.model_copy(update={"redact_contacts": True})
    )
    content = request["messages"][1]["content"]
    assert KEY_CANARY not in content
    assert MAIL_CANARY not in content
    assert orjson.loads(content)["cards"][0]["obs"] == 1


@pytest.mark.parametrize(
    "text",
    ["token-based auth is fine", "our secret-santa list", "tokens: 500 per call", "passwords"],
)
def test_words_that_only_look_like_labels_are_left_alone(text: str) -> None:
    assert mask(text) == text
