"""The retry classifier (§4): which failures may be retried on another target.

``retryable_reason(error)`` answers a :class:`FailureReason` or ``None``.

Order:

1. a typed ``llm_client`` error's own reason wins (``Transport`` and
   ``BackendUnavailable`` are ``provider_unavailable`` whatever their text);
2. otherwise the message is matched, case-insensitively, against the
   :data:`REJECT_PHRASES` (→ not retryable), then against each group of
   :data:`PHRASE_RULES` in order; the first group with a matching phrase wins;
3. then an HTTP status the error carries (``Upstream.status_code``) is looked up
   in :data:`STATUS_RULES`: any 5xx not matched above is ``provider_error``;
4. anything unmatched (HTTP 400 schema errors, auth failures) is not retryable.

Busy answers ("server busy", "queue full", "draining", "model loading",
"out of memory", …) are capacity, never faults — that group comes first, so a
busy 500/503 stays neutral for the breakers. The group holds the
fleet-breaker original's busy tables (draining, slot caps, token budgets, KV
headroom, memory, overload and back-pressure, cold / not-loaded models), and
spelling does not matter: text and phrases are compared after :func:`fold`
(case, and any run of underscores, hyphens, punctuation or spaces between two
letters, made one space), so ``TOKEN_BUDGET_EXHAUSTED``, ``kv-headroom`` and
"Request rejected." all match their one-line rows. A busy phrase in an answer
whose HTTP status says the request itself is wrong (:data:`NOT_BUSY_STATUSES`:
400, 401, 403, …) is not a busy answer: a rejected bad request must fail, not
be released forever. A backend that was reached and
crashed (HTTP 500, "internal server error", any other 5xx) is
``provider_error``: charged and failed over, and a walk ending on it fails the
run. "status 500: capacity exceeded" is therefore ``provider_error`` (no
capacity phrase matches), while 503 "upstream unavailable" stays
``provider_unavailable``.

The tables are plain data: a new phrase is one line, pinned by one test row.
"""

from __future__ import annotations

import re
from functools import cache

from llm_client._errors import LLMError, Upstream
from llm_client._retry.reasons import FailureReason

#: Phrases that make an error not retryable, checked before every other rule.
REJECT_PHRASES: tuple[str, ...] = (
    "telegram api error",
    "validation failed",
    "user cancelled",
    "user canceled",
)

#: Phrase groups, checked in this order; the first group with a hit wins.
PHRASE_RULES: tuple[tuple[FailureReason, tuple[str, ...]], ...] = (
    (
        FailureReason.CAPACITY_UNAVAILABLE,
        (
            "capacity unavailable",
            "service capacity unavailable",
            "no slots",
            "no slot available",
            "resource exhausted",
            # busy answers are capacity, never faults (§4)
            "server busy",
            "busy",
            "queue full",
            "too many requests",
            "try again later",
            "draining",
            "model loading",
            "loading model",
            "insufficient memory",
            "out of memory",
            "kv cache",
            "token budget exhausted",
            # The fleet-breaker original's tables (spelling folded, see fold()).
            "slot cap",
            "slot limit",
            "slots full",
            "slots exhausted",
            "no free slot",
            "kv headroom",
            "request rejected",
            "service temporarily unavailable",
            "request timed out waiting for capacity",
            "model not loaded",
        ),
    ),
    (
        FailureReason.PROVIDER_PROTOCOL_ERROR,
        (
            "tool protocol error",
            "empty final text",
            "no tool calls",
            "decode chat completion payload",
            "decode memory extractor response",
            "response body is empty",
        ),
    ),
    (
        FailureReason.PROVIDER_TIMEOUT,
        (
            "client.timeout",
            "context deadline exceeded",
            "deadline exceeded",
            "timeout",
            "timed out",
        ),
    ),
    (
        FailureReason.PROVIDER_OVERLOADED,
        (
            "high demand",
            "overload",
            "overloaded",
            "rate limit",
            "429",
        ),
    ),
    (
        FailureReason.PROVIDER_UNAVAILABLE,
        (
            "status: unavailable",
            "status unavailable",
            "service unavailable",
            "service disabled",
            "connection refused",
            "connection reset",
            "error sending request for url",
            "error decoding response body",
            "connection closed before message completed",
            "incomplete message",
            "bad gateway",
            "gateway timeout",
            "error 503",
            "status 503",
            " 503",
            " 502",
            " 504",
        ),
    ),
    (
        FailureReason.PROVIDER_ERROR,
        (
            "internal server error",
            "error 500",
            "status 500",
            "http 500",
        ),
    ),
)

#: Phrases matched as whole words (no letter on either side), so "busy" never matches
#: "business"; every other phrase is a plain substring.
WHOLE_WORDS: frozenset[str] = frozenset({"busy"})

#: HTTP statuses that say the request itself is wrong: a busy phrase in such an answer
#: ("400: request rejected: invalid schema") is not a busy answer.
NOT_BUSY_STATUSES: frozenset[int] = frozenset({400, 401, 403, 405, 413, 414, 415, 422})

#: HTTP statuses (carried by ``Upstream.status_code``) checked after every phrase group:
#: any 5xx that no phrase matched is a backend that was reached and crashed.
STATUS_RULES: tuple[tuple[range, FailureReason], ...] = (
    (range(500, 600), FailureReason.PROVIDER_ERROR),
)


#: Letters joined by underscores, hyphens, punctuation or spaces: :func:`fold` makes the
#: joint one space.
_JOINT = re.compile(r"(?<=[a-z])[\W_]+(?=[a-z])")


def fold(text: str) -> str:
    """``text`` for phrase matching: case-folded, and every run of separators between two
    letters (``_``, ``-``, ``.``, ``,``, spaces…) made one space — ``"Server_Busy!"`` →
    ``"server busy!"``. Digits keep their punctuation (``" 1.503 s"`` is not ``" 503"``)."""
    return _JOINT.sub(" ", text.casefold())


@cache
def _folded(phrase: str) -> str:
    return fold(phrase)


@cache
def _word(phrase: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z]){re.escape(_folded(phrase))}(?![a-z])")


def matches(phrase: str, text: str) -> bool:
    """Whether folded ``text`` contains folded ``phrase`` (whole word for :data:`WHOLE_WORDS`)."""
    if phrase in WHOLE_WORDS:
        return _word(phrase).search(text) is not None
    return _folded(phrase) in text


def rejected(message: str) -> bool:
    """Whether the reject list marks ``message`` as never retryable."""
    text = fold(message)
    return any(matches(phrase, text) for phrase in REJECT_PHRASES)


def reason_from_message(message: str, *, busy: bool = True) -> FailureReason | None:
    """Classify free text by the phrase tables (reject list first); ``busy=False`` skips
    the capacity group (an answer whose status says it cannot be a busy answer)."""
    text = fold(message)
    if not text.strip():
        return None
    if rejected(text):
        return None
    for reason, phrases in PHRASE_RULES:
        if not busy and reason is FailureReason.CAPACITY_UNAVAILABLE:
            continue
        if any(matches(phrase, text) for phrase in phrases):
            return reason
    return None


def reason_from_status(status_code: int | None) -> FailureReason | None:
    """Classify an HTTP status by :data:`STATUS_RULES` (None: no rule)."""
    if status_code is None:
        return None
    for statuses, reason in STATUS_RULES:
        if status_code in statuses:
            return reason
    return None


def retryable_reason(error: BaseException) -> FailureReason | None:
    """The reason ``error`` may be retried on another target, or None if it may not."""
    if isinstance(error, LLMError) and error.typed:
        return error.reason
    message = str(error)
    status = error.status_code if isinstance(error, Upstream) else None
    reason = reason_from_message(message, busy=status not in NOT_BUSY_STATUSES)
    if reason is not None or rejected(message):
        return reason
    return reason_from_status(status)
