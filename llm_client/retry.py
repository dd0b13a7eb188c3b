"""The retry classifier (§4): which failures may be retried on another target.

``retryable_reason(error)`` answers a :class:`FailureReason` or ``None``.

Order:

1. a typed ``llm_client`` error's own reason wins (``Transport`` and
   ``BackendUnavailable`` are ``provider_unavailable`` whatever their text);
2. otherwise the message is matched, case-insensitively, against the
   :data:`REJECT_PHRASES` (→ not retryable), then against each group of
   :data:`PHRASE_RULES` in order; the first group with a matching phrase wins;
3. anything unmatched (HTTP 400 schema errors, auth failures) is not retryable.

The tables are plain data: a new phrase is one line, pinned by one test row.
"""

from __future__ import annotations

from llm_client.errors import LLMError
from llm_client.reasons import FailureReason

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
            "model loading",
            "error 503",
            "status 503",
            " 503",
            " 502",
            " 504",
        ),
    ),
)


def reason_from_message(message: str) -> FailureReason | None:
    """Classify free text by the phrase tables (reject list first)."""
    text = message.casefold()
    if not text.strip():
        return None
    if any(phrase in text for phrase in REJECT_PHRASES):
        return None
    for reason, phrases in PHRASE_RULES:
        if any(phrase in text for phrase in phrases):
            return reason
    return None


def retryable_reason(error: BaseException) -> FailureReason | None:
    """The reason ``error`` may be retried on another target, or None if it may not."""
    if isinstance(error, LLMError) and error.typed:
        return error.reason
    return reason_from_message(str(error))
