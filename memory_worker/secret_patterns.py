"""Secret patterns: the one home of every shape of credential we look for.

Two uses, two strictness levels, one module so they can be read side by side:

- **Memory** (:func:`contains_secret`, :func:`redact_secrets`): a card that
  carries or talks about a credential is never stored; an episode summary
  keeps its sentence with the values replaced by ``[redacted]``. Minimum
  lengths are long (``sk-`` + 16, a Telegram token's exact 35): a false
  positive here drops an ordinary fact.
- **Logs and Sentry** (:func:`scrub_tokens`): every string leaving the
  process loses tokens, keys and URL credentials, replaced by
  ``[Filtered]``. Minimum lengths are short (``sk-`` + 6): a false positive
  only hides a few characters of a log line. Every value shape of the memory
  table is scrubbed too (after the log patterns), so nothing a card may not
  hold can reach a log.
"""

from __future__ import annotations

import re

#: Value shapes that are secrets wherever they appear, whatever surrounds them.
SECRET_SHAPES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"\bsk-[A-Za-z0-9_-]{16,}",
        r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bglpat-[A-Za-z0-9_-]{20,}",
        r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
        r"\bAIza[0-9A-Za-z_-]{35}",
        r"\b\d{8,10}:[A-Za-z0-9_-]{35}\b",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    )
)
#: Values that are secrets by their label (``Bearer …``, ``password: …``).
LABELLED_SECRETS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}",
        r"(?i)\b(?:token|api[_-]?key|secret|password|passwd|pwd)\s*[=:]\s*\S{4,}",
    )
)
#: Every secret value a card may not hold.
SECRET_VALUES: tuple[re.Pattern[str], ...] = SECRET_SHAPES + LABELLED_SECRETS
#: Words that mark a text as being about a secret; a card containing one is dropped.
SECRET_MARKERS = re.compile(
    r"(?i)(api[\s_-]?key|apikey|passw(?:or)?d|пароль|парол[ьяюе]|token\s*=|secret\s*=|"
    r"access[\s_-]?token|client[\s_-]?secret|private[\s_-]?key|\bbearer\s+\S)"
)
MARKER_WITH_VALUE = re.compile(
    r"(?i)\b(password|passwd|pwd|пароль|api[\s_-]?key|token|secret)(\s*(?:is|это|:|=|-)\s*)\S+"
)
REDACTED = "[redacted]"


def contains_secret(text: str) -> bool:
    """Whether ``text`` carries (or talks about) a credential — such cards are never stored."""
    return bool(SECRET_MARKERS.search(text)) or any(p.search(text) for p in SECRET_VALUES)


def redact_secrets(text: str) -> str:
    """``text`` with secret values replaced (for episode summaries, which are kept)."""
    for pattern in SECRET_VALUES:
        text = pattern.sub(REDACTED, text)
    return MARKER_WITH_VALUE.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)


# --- logs and Sentry ------------------------------------------------------------------------

FILTERED = "[Filtered]"

LOG_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]+"), "Bearer " + FILTERED),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{6,}"), FILTERED),
    (re.compile(r"\bbot\d{5,}:[A-Za-z0-9_-]{20,}"), "bot" + FILTERED),
    (re.compile(r"\b\d{5,}:[A-Za-z0-9_-]{30,}"), FILTERED),
    (re.compile(r"(?i)\b(xox[abpr]-|gh[pousr]_|glpat-)[A-Za-z0-9_-]{8,}"), FILTERED),
    # credentials in URLs: scheme://user:password@host → scheme://user:[Filtered]@host
    (re.compile(r"([a-z][a-z0-9+.-]*://[^\s:/@]*):[^\s@/]+@", re.I), r"\1:" + FILTERED + "@"),
    (
        re.compile(
            r"(?i)([?&](?:api[_-]?key|key|token|access_token|secret|password|auth|sig)=)[^&\s]+"
        ),
        r"\1" + FILTERED,
    ),
    (re.compile(r"(?i)\b(password|passwd|secret|api[_-]?key)\s*[=:]\s*\S+"), r"\1=" + FILTERED),
)


def scrub_tokens(text: str) -> str:
    """``text`` without tokens, keys and URL credentials (the log patterns, then every
    shape of :data:`SECRET_SHAPES`; labelled values are the log patterns' own)."""
    for pattern, replacement in LOG_PATTERNS:
        text = pattern.sub(replacement, text)
    for pattern in SECRET_SHAPES:
        text = pattern.sub(FILTERED, text)
    return text
