"""The two secret tables agree: nothing a card may not hold reaches a log or Sentry."""

from __future__ import annotations

import pytest

from memory_worker.ops.sentry import redact
from memory_worker.privacy.masking import SECRET_SHAPES, contains_secret, scrub_tokens

SHAPES = [
    "sk-proj-9f8e7d6c5b4a3f2e1d0c9b8a",
    "rk_live_abcdefghij0123",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "glpat-abcdefghij0123456789",
    "xoxb-123456789012-abcdefghij",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "-----BEGIN RSA PRIVATE KEY-----",
]


def test_every_shape_has_a_sample() -> None:
    for pattern in SECRET_SHAPES:
        assert any(pattern.search(s) for s in SHAPES), pattern.pattern


@pytest.mark.parametrize("secret", SHAPES)
def test_a_secret_no_card_may_hold_never_reaches_a_log(secret: str) -> None:
    line = f"upstream said: {secret} (retrying)"
    assert contains_secret(line)
    assert secret not in scrub_tokens(line)
    assert secret not in redact(line)
    assert redact(line).startswith("upstream said: ")
