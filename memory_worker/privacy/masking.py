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
- **The farm** (:func:`mask_for_farm`, §14): every text the worker sends to
  the farm (prompt messages, cards shown, texts embedded, recall queries)
  loses the memory table's value shapes, labelled values (the label stays:
  ``password: [redacted]``) and Luhn-valid payment card numbers; with
  ``MEMORY_REDACT_CONTACTS`` e-mail addresses and phone numbers too. Pure and
  idempotent, so a re-sent prompt is masked the same.
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


# --- text sent to the farm (§14) ---------------------------------------------------------------

#: A labelled secret whose label stays (the extractor still sees that a password was
#: mentioned, never which): ``password: x`` → ``password: [redacted]``.
_FARM_LABELLED: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)\b((?:token|api[_-]?key|secret|password|passwd|pwd)\s*[=:]\s*)\S{4,}"),
    re.compile(
        r"(?i)\b((?:password|passwd|pwd|пароль|api[\s_-]?key|token|secret)"
        r"(?:\s*[:=]\s*|\s+(?:is|это|-)\s+))\S+"
    ),
)
#: Runs of digits in groups of one space or dash: the shapes a payment card number is typed in.
_DIGIT_RUN = re.compile(r"(?<![+0-9])[0-9]+(?:[ -][0-9]+)*")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_PHONE = re.compile(r"(?<![\w+/.,:])\+?\(?[0-9](?:[ .()-]{0,2}[0-9]){6,16}(?![\w/])")
_DATE_LIKE = re.compile(
    r"^(?:19|20)\d\d[-./]\d\d?[-./]\d\d?\b|^\d\d?[-./]\d\d?[-./](?:19|20)?\d\d\b"
)
CARD_NUMBER = "[card number]"
EMAIL = "[email]"
PHONE = "[phone]"
_MAX_PASSES = 4


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (payment card numbers do)."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if i % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card_spans(run: str) -> list[tuple[int, int]]:
    """Spans (within one digit run) of 13–19 digit, Luhn-valid windows aligned on its groups
    (the longest from each group start; a longer number is never masked in part)."""
    groups = [(m.start(), m.end()) for m in re.finditer(r"[0-9]+", run)]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(groups):
        digits, best = "", None
        for j in range(i, len(groups)):
            digits += run[groups[j][0] : groups[j][1]]
            if len(digits) > 19:
                break
            if len(digits) >= 13 and luhn_valid(digits):
                best = j
        if best is None:
            i += 1
            continue
        spans.append((groups[i][0], groups[best][1]))
        i = best + 1
    return spans


def _mask_cards(text: str) -> str:
    def one_run(match: re.Match[str]) -> str:
        run = match.group(0)
        out, at = [], 0
        for start, end in _card_spans(run):
            out += [run[at:start], CARD_NUMBER]
            at = end
        return "".join(out) + run[at:]

    return _DIGIT_RUN.sub(one_run, text)


def _mask_phone(match: re.Match[str]) -> str:
    candidate = match.group(0)
    digits = sum(c.isdigit() for c in candidate)
    least, most = (7, 15) if candidate.startswith("+") else (9, 12)
    if not least <= digits <= most or _DATE_LIKE.match(candidate):
        return candidate
    return PHONE


def _mask_once(text: str, *, contacts: bool) -> str:
    for pattern in SECRET_SHAPES:
        text = pattern.sub(REDACTED, text)
    for pattern in _FARM_LABELLED:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    text = _mask_cards(text)
    if contacts:
        text = _EMAIL.sub(EMAIL, text)
        text = _PHONE.sub(_mask_phone, text)
    return text


def mask_for_farm(text: str, *, contacts: bool = False) -> str:
    """``text`` as the farm may see it: credentials, tokens and (Luhn-valid) payment card
    numbers masked; with ``contacts``, e-mail addresses and phone numbers too.

    Pure and idempotent (masking a masked text changes nothing): every prompt text
    passes through it, and a masked message re-sent on a retry is sent the same.
    """
    for _ in range(_MAX_PASSES):
        masked = _mask_once(text, contacts=contacts)
        if masked == text:
            return masked
        text = masked
    return text
