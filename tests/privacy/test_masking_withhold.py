"""Masking (§14), the last guard: a text that :func:`contains_secret` flags never reaches the farm
with that value in it, even when no detector recognises the value.

``contains_secret`` flags a text for a secret a detector found (``mask`` takes it out), a
placeholder, or words about a credential. For the last reason there is no span, so a value in a
phrasing no rule knows ("kennwort … geändert auf Kuchen2006") used to reach the farm beside the
very words that got its card refused. ``mask`` now withholds such a line whole
(:mod:`memory_worker.privacy.masking.withhold`).

- a table of such phrasings, each with a fresh canary value: flagged, and the value is gone;
- lines that only talk about a credential are kept as written;
- the marker words' one-scan prefilter never hides one (hypothesis, 400 examples);
- a hypothesis property (500 examples) on a soup of marker words, ordinary words and values:
  for any text, every value-shaped word on a flagged line, and every value a detector found,
  is absent from what ``mask`` returns, and ``mask`` stays idempotent;
- end to end: a consolidation against the loopback farm simulator, every body it received
  searched for the canaries (the extraction prompt and the embedder inputs alike).
"""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memory_worker.cards import CardStore
from memory_worker.consolidation.consolidate import consolidate_run
from memory_worker.keys import Keys
from memory_worker.privacy.masking import REDACTED, contains_secret, find_secrets, mask
from memory_worker.privacy.masking.detect import REPEAT_MIN_CHARS
from memory_worker.privacy.masking.withhold import (
    SECRET_MARKERS,
    flagged_values,
    talks_about_a_credential,
)
from memory_worker.settings import Settings
from tests.support.factories import slice_request
from tests.support.farm import Farm, everything_sent, farm_for

ALNUM = string.ascii_lowercase + string.digits


def _canary(prefix: str) -> str:
    """A fresh value shaped as people pick them: a word, a dot or dash, digits."""
    return f"{prefix}{secrets.choice('.-')}{''.join(secrets.choice(ALNUM) for _ in range(5))}7"


#: Phrasings where the value is not where a label rule looks for it (each flagged by its words).
PHRASINGS = [
    "kennwort vom router steht hinten drauf, hab es aber geändert auf {v}",
    "пароль від дії не скажу 😂 а от від нетфлікса {v}",
    "{v} 是我的淘宝密码，你帮我下单吧",
    "wifi şifresi bu arada {v} 😄",
    "password ig aku {v} jgn dikasih ke siapa2",
    "docker-compose.yml:\n  environment:\n    - MYSQL_ROOT_PASSWORD={v}\n    - MYSQL_DATABASE=shop",
    "sneha {v} (digitei errado kkk, é senha)",
    "contraseña nueva del correo:\n{v}",
]


@pytest.mark.parametrize("phrasing", PHRASINGS)
def test_a_flagged_line_never_keeps_its_value(phrasing: str) -> None:
    value = _canary("kotik")
    text = phrasing.format(v=value)
    assert contains_secret(text)
    masked = mask(text)
    assert value not in masked
    assert REDACTED in masked
    assert mask(masked) == masked


@pytest.mark.parametrize(
    "text",
    [
        "I forgot my password AGAIN, third time this month",
        "password reset link sent, check your spam folder",
        "the password is wrong, try the other one",
        "密码至少8位，要有字母和数字",
        "パスワードは8文字以上にしてください",
        "run ssh-copy-id deploy@buildbox, it asks for the password once",
        "DB_PASSWORD_FILE=/run/secrets/db",
        "commit 3f2a9c0 fixed the password reset bug",
        "password strength meter says 72/100",
        "gebruik ssh -p 2222 jan@server.local, hij vraagt zelf om het wachtwoord",
        "set DB_PASSWORD=<your-password> in .env before running it",
        "DB_USER=app\nDB_PASSWORD=\nDB_HOST=localhost",
        "changed my password on 2024-03-07 at 10:30, v2.3.1 of the app",
    ],
)
def test_a_line_that_only_talks_about_a_credential_is_kept(text: str) -> None:
    assert mask(text) == text


# --- the property -------------------------------------------------------------------------------

_MARKERS = ("password", "Passwort", "пароль", "密码", "パスワード", "şifre", "senha", "hasło")
_WORDS = ("my", "is", "the", "wifi", "new", "for", "router", "da", "es", "von", "от", "是", "bu")
_VALUE = st.text(
    alphabet=string.ascii_letters + string.digits + "!@#.-_+=", min_size=4, max_size=14
)
_PIECE = st.one_of(st.sampled_from(_MARKERS), st.sampled_from(_WORDS), _VALUE)
_SEP = st.sampled_from([" ", " ", ": ", "\n", ", ", "="])
_LINE = st.lists(st.tuples(_PIECE, _SEP), min_size=1, max_size=12).map(
    lambda pairs: "".join(a + b for a, b in pairs)
)


def _alone(value: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", text) is not None


@hsettings(max_examples=500, deadline=None)
@given(text=_LINE)
def test_what_contains_secret_flags_never_leaves_mask_with_its_value(text: str) -> None:
    masked = mask(text)
    assert mask(masked) == masked
    if not contains_secret(text):
        return
    for value in flagged_values(text):
        assert not _alone(value, masked), (text, value)
    for found in find_secrets(text):
        value = text[found.start : found.end]
        if len(value) >= REPEAT_MIN_CHARS and not value.startswith("["):
            assert value not in masked.replace(REDACTED, "\0"), (text, value)


# --- end to end: what the farm simulator receives -----------------------------------------------

CHAT = -100777
ALICE, BOB = 31, 32
DAY = datetime(2026, 5, 4, 9, tzinfo=UTC)


@pytest.fixture
async def farm(settings: Settings) -> AsyncIterator[Farm]:
    async with farm_for(settings, embedder="hashed") as f:
        yield f


async def test_a_flagged_value_never_reaches_the_farm(
    farm: Farm, redis: Any, settings: Settings
) -> None:
    canaries = [_canary(word) for word in ("kuchen", "sokil", "panda", "sevgili")]
    rows = [
        (1, ALICE, "Alice", "I live in Lisbon"),
        (2, ALICE, "Alice", PHRASINGS[0].format(v=canaries[0])),
        (3, BOB, "Bob", PHRASINGS[1].format(v=canaries[1])),
        (4, ALICE, "Alice", PHRASINGS[2].format(v=canaries[2])),
        (5, BOB, "Bob", f"I work at Acme\nwifi şifresi bu arada {canaries[3]} 😄"),
    ]
    request = slice_request(CHAT, DAY, rows, length=timedelta(days=1), first_minute=0)
    store = CardStore(redis, Keys(settings.key_prefix))
    result = await consolidate_run(
        "run-withhold",
        request,
        store=store,
        extractor=farm.extractor,
        embedder=farm.embedder,
        settings=settings,
        now=DAY + timedelta(days=1),
    )
    assert result.llm_calls >= 1
    sent = everything_sent(farm.sim)
    for canary in canaries:
        assert canary not in sent
        assert canary[:6] in canary  # the canary's word alone is ordinary text
    assert "I live in Lisbon" in sent
    assert "I work at Acme" in sent  # the line above the withheld one arrives as written
    assert REDACTED in sent


_SOUP = st.lists(
    st.one_of(
        st.sampled_from([*_MARKERS, "ŞİFRE", "PASSWORD", "ſeed phrase", "Api-Key", "كلمة السر"]),
        st.text(max_size=8),
    ),
    max_size=10,
).map(" ".join)


@hsettings(max_examples=400, deadline=None)
@given(text=_SOUP)
def test_the_marker_prefilter_never_hides_a_marker(text: str) -> None:
    assert talks_about_a_credential(text) == bool(SECRET_MARKERS.search(text))
