"""The one masking module (§14): each family of secret is found and masked, its look-alikes
are not, and every reader (farm, cards, logs, Sentry, the error log) gets the same answer.

The realistic corpus (``tests/data/masking/``) is measured in ``test_masking_corpus.py``;
these are the tables of each rule, the laws (idempotent, never raises, ordinary text
unchanged — the meaning suite's own texts included) and the error-log helpers.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memory_worker.ops.sentry import redact
from memory_worker.privacy.masking import (
    ECHO,
    FILTERED,
    REDACTED,
    contains_secret,
    find_secrets,
    luhn_valid,
    mask,
    mask_error,
    scrub,
    strip_echoes,
)

DATA = Path(__file__).parent.parent / "data"

# Made-up values of real shapes (none is a live credential).
TOKENS = {
    "openai": "sk-proj-9f8e7d6c5b4a3f2e1d0c9b8a",
    "openai live": "sk-live-4eC39HqLyjWDarjtT1zdp7dc",
    "anthropic": "sk-ant-api03-AbCdEf0123456789xyz",
    "stripe": "rk_live_abcdefghij0123",
    "aws id": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github pat": "github_pat_11AZERTYU0abcdefghijklmn_OPQRSTUVWXYZabcdefghij0123456789",
    "gitlab": "glpat-abcdefghij0123456789",
    "slack": "xoxb-123456789012-abcdefghij",
    "google": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "telegram": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "huggingface": "hf_QwErTyUiOpAsDfGhJkLzXcVbNm12345678",
    "npm": "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "sendgrid": "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",
    "pypi": "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDUtNjc4OS1hYmNkZWYwMTIzNDU",
    "private key body": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
}


@pytest.mark.parametrize("token", list(TOKENS.values()), ids=list(TOKENS))
def test_a_token_is_masked_wherever_it_stands(token: str) -> None:
    for text in (token, f"use {token} please", f"key:{token}", f"«{token}»"):
        masked = mask(text)
        assert token not in masked
        assert REDACTED in masked
        assert contains_secret(text)
        assert token not in scrub(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the wifi password for the office is Tr0ub4dor", "the wifi password for the office is "),
        ("my password's hunter22", "my password's "),
        ("login bob pass: s3cr3t!", "login bob pass: "),
        ("the password is swordfish", "the password is "),
        ("PASSWORD=correct-horse", "PASSWORD="),
        ('{"password": "hunter2", "user": "bob"}', '{"password": "'),
        ("DB_PASSWORD=PgSuperSecret9", "DB_PASSWORD="),
        (
            "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "export AWS_SECRET_ACCESS_KEY=",
        ),
        ("api_key: abcd1234efgh", "api_key: "),
        ("Das WLAN-Passwort lautet Sommer2024", "Das WLAN-Passwort lautet "),
        ("le mot de passe est azerty123", "le mot de passe est "),
        ("mon mdp c'est chaton77", "mon mdp c'est "),
        ("la contraseña es gato1234", "la contraseña es "),
        ("a senha é banana99", "a senha é "),
        ("la password è Ciao2024", "la password è "),
        ("hasło to Kot12345", "hasło to "),
        ("пароль от вайфая qwerty123", "пароль от вайфая "),
        ("мой пароль это ромашка", "мой пароль это "),
        ("мій пароль: сонечко2020", "мій пароль: "),
        ("我的密码是abc12345", "我的密码是"),
        ("PIN: 4821", "PIN: "),
        ("Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer "),
        ("Authorization: Basic YWRtaW46aHVudGVyMg==", "Authorization: Basic "),
    ],
)
def test_a_labelled_secret_keeps_its_label_and_loses_its_value(text: str, expected: str) -> None:
    masked = mask(text)
    assert masked.startswith(expected + REDACTED), masked
    assert contains_secret(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgres://admin:PgSuperSecret9@db.internal/app", "postgres://admin:[redacted]@db"),
        ("redis://:Sup3rS3cret@cache:6379/0", "redis://:[redacted]@cache:6379/0"),
        ("amqp://guest:gu3st!pw@mq:5672/", "amqp://guest:[redacted]@mq:5672/"),
        ("https://x.org/cb?access_token=abcDEF123&page=2", "https://x.org/cb?access_token=[r"),
        (
            "https://hooks.slack.com/services/T0/B0/XXXXXXXXXXXX",
            "https://hooks.slack.com/services/[",
        ),
    ],
)
def test_credentials_inside_urls_are_masked_and_the_rest_kept(text: str, expected: str) -> None:
    assert mask(text).startswith(expected), mask(text)


PEM_BODY = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MBgJdDA5\nLkGqF3f8b9aH0xYz9QWe=="


@pytest.mark.parametrize(
    "text",
    [
        f"key:\n-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\nbye",
        f"-----BEGIN PRIVATE KEY----- {PEM_BODY.replace(chr(10), ' ')} -----END PRIVATE KEY-----",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}",  # cut short: no footer
    ],
    ids=["block", "one line", "truncated"],
)
def test_a_whole_private_key_is_masked_body_included(text: str) -> None:
    masked = mask(text)
    for line in PEM_BODY.split("\n"):
        assert line not in masked
    assert "BEGIN" not in masked


@pytest.mark.parametrize(
    "number",
    [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4111.1111.1111.1111",
        "4111\u00a01111\u00a01111\u00a01111",
        "4111  1111  1111  1111",
        "4111 - 1111 - 1111 - 1111",
        "4111111111111111",
        "3782 822463 10005",
        "5555 5555 5555 4444",
        "2200 0000 0000 0004",
    ],
)
def test_a_luhn_valid_card_number_is_masked_whatever_its_separators(number: str) -> None:
    assert luhn_valid("".join(c for c in number if c.isdigit()))
    assert mask(f"pay with {number}, thanks") == "pay with [card number], thanks"


LOOK_ALIKES = [
    "I forgot my password again",
    "here is the password reset link: https://example.org/reset",
    "the password is wrong",
    "your password must be at least 12 characters",
    "Passwort vergessen? Kein Problem",
    "le mot de passe est incorrect",
    "la contraseña es demasiado corta",
    "пароль неверный, попробуй ещё раз",
    "密码错误",
    "the secret is patience",
    "token-based auth is fine",
    "tokens: 500 per call",
    "MAX_TOKENS=512",
    "password_min_length=12",
    "DB_PASSWORD=${DB_PASSWORD}",
    "version 1.2.3 of the app",
    "call me at +7 912 345-67-89",
    "ISBN 978-3-16-148410-0",
    "order 4111 1111 1111 1112 shipped",
    "IBAN DE89 3704 0044 0532 0130 00",
    "request id 550e8400-e29b-41d4-a716-446655440000",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "from huggingface_hub import hf_hub_download",
    "see https://example.org/docs?page=2#intro",
    "meet on 2026-01-05 at 12:30, room 4.12",
    "sk-learn is not a thing, sklearn is",
    "the basic understanding matters",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert mask(text) == text
    assert find_secrets(text) == []


def test_the_meaning_suite_texts_are_never_changed() -> None:
    """Masking must not mangle ordinary text: every card, query and distractor of the
    meaning suite (six languages) goes through unchanged."""
    texts = []
    for line in (DATA / "meaning" / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        case = orjson.loads(line)
        texts += [case["card"], case["query"], *case["distractors"]]
    assert len(texts) > 700
    assert [t for t in texts if mask(t) != t] == []


# --- laws ------------------------------------------------------------------------------------

CANARIES = [*TOKENS.values(), "4111 1111 1111 1111", "password: hunter2222"]


@hsettings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=["Cs"])), contacts=st.booleans())
def test_masking_never_raises_and_is_idempotent(text: str, contacts: bool) -> None:
    once = mask(text, contacts=contacts)
    assert mask(once, contacts=contacts) == once
    assert scrub(scrub(text)) == scrub(text)


@hsettings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="abc XYZ 0123456789+-()@.:=/_'\"пароль密码 \u00a0", max_size=80),
    contacts=st.booleans(),
)
def test_masking_is_idempotent_on_label_and_digit_soup(text: str, contacts: bool) -> None:
    once = mask(text, contacts=contacts)
    assert mask(once, contacts=contacts) == once


@hsettings(max_examples=300, deadline=None)
@given(
    before=st.lists(st.from_regex(r"[A-Za-zА-я]{1,10}", fullmatch=True), max_size=5),
    after=st.lists(st.from_regex(r"[A-Za-zА-я]{1,10}", fullmatch=True), max_size=5),
    canary=st.sampled_from(CANARIES),
)
def test_no_canary_survives_between_words(before: list[str], after: list[str], canary: str) -> None:
    text = " ".join([*before, canary, *after])
    masked = mask(text)
    assert canary.rpartition(" ")[2] not in masked
    assert canary.rpartition(" ")[2] not in scrub(text)


# --- cards, logs, Sentry: the same answer ---------------------------------------------------


@pytest.mark.parametrize(
    "fact",
    [
        "Alice's openai key is [redacted]",
        "Bob pays with card [card number]",
        "The staging db password is Hunter2-Staging!",
        "postgres://admin:PgSuperSecret9@db is the staging database",
        "Das WLAN-Passwort lautet Sommer2024",
    ],
)
def test_a_card_with_a_secret_or_a_masked_one_is_refused(fact: str) -> None:
    assert contains_secret(fact)


@pytest.mark.parametrize("secret", CANARIES)
def test_a_secret_no_card_may_hold_never_reaches_a_log(secret: str) -> None:
    line = f"upstream said: {secret} (retrying)"
    value = secret.rpartition(" ")[2]
    assert contains_secret(line)
    assert value not in scrub(line)
    assert value not in redact(line)
    assert FILTERED in scrub(line)
    assert redact(line).startswith("upstream said: ")


# --- the error log ------------------------------------------------------------------------------

MESSAGE = "I am allergic to peanuts and my cat is called Biscuit"


def test_strip_echoes_removes_what_the_farm_quoted_of_the_messages() -> None:
    quoted = orjson.dumps({"messages": [{"text": MESSAGE + ' "really"'}]}).decode()
    error = f"invalid request: {quoted[:80]} rejected"
    stripped = strip_echoes(error, [MESSAGE + ' "really"', "short"])
    assert "peanuts" not in stripped
    assert "allergic" not in stripped
    assert ECHO in stripped
    assert stripped.startswith("invalid request: ")
    assert strip_echoes("upstream backend unreachable", [MESSAGE]) == "upstream backend unreachable"


def test_mask_error_masks_then_bounds() -> None:
    key = TOKENS["openai live"]
    error = f"400 from backend: echo '{MESSAGE}' with key {key} " + "x" * 2000
    kept = mask_error(error, echoes=[MESSAGE], limit=120)
    assert len(kept) <= 120
    assert key not in kept
    assert "peanuts" not in kept
    assert kept.startswith("400 from backend: echo '")
    assert mask_error("short and fine", limit=120) == "short and fine"
