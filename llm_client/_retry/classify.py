"""The retry classifier (§4): which failures may be retried on another target.

``retryable_reason(error)`` answers a :class:`FailureReason` or ``None``.

Order:

1. a typed ``llm_client`` error's own reason wins (``Transport`` and
   ``BackendUnavailable`` are ``provider_unavailable`` whatever their text);
2. an HTTP status that says busy (:func:`busy_status`) is busy whatever the text
   says: a 429 always (:data:`BUSY_STATUSES`), a 503 that names its pause with a valid
   ``Retry-After`` (:data:`PAUSED_BUSY_STATUSES`);
3. otherwise the message is matched, after :func:`fold`, against the
   :data:`REJECT_PHRASES` (→ not retryable), then against each group of
   :data:`PHRASE_RULES` in order; the first group with a matching phrase wins;
4. then an HTTP status the error carries (``Upstream.status_code``) is looked up
   in :data:`STATUS_RULES`: any 5xx not matched above is ``provider_error``;
5. anything unmatched (HTTP 400 schema errors, auth failures) is not retryable.

Busy answers ("server busy", "queue full", "draining", "model loading",
"out of memory", …) are capacity, never faults — that group comes first, so a
busy 500/503 stays neutral for the breakers. The group holds the
fleet-breaker original's busy tables (draining, slot caps, token budgets, KV
headroom, memory, overload and back-pressure, cold / not-loaded models) and
d-inference's whole capacity family (KV, memory or slots insufficient; a model
not loaded, loading, or none loaded; slot caps, full queues, over capacity, too
many requests). Spelling does not matter: text and phrases are compared after
:func:`fold` (CamelCase split into words, case folded, and any run of
underscores, hyphens, punctuation or spaces between two letters made one space),
so ``TOKEN_BUDGET_EXHAUSTED``, ``kv-headroom``, ``SlotCapExceeded`` and
"Request rejected." all match their one-line rows. A busy phrase in an answer
whose HTTP status says the request itself is wrong (:data:`NOT_BUSY_STATUSES`:
400, 401, 403, …) is not a busy answer: a rejected bad request must fail, not
be released forever; nor is one that says a load failed
(:data:`NOT_BUSY_PHRASES`: "error loading", "loading failed"): a model that
could not load crashed, one that is loading is busy. An HTTP 429 is busy
whatever its text says (:data:`BUSY_STATUSES`): ``capacity_unavailable`` when a
capacity phrase matches, else ``provider_overloaded`` — never a fault, never
"not retryable". So is an HTTP 503 that carries a valid ``Retry-After``
(``Upstream.retry_after`` is set only for delay-seconds or an HTTP-date, RFC 9110
§10.2.3): RFC 9110 §15.6.4 says a 503 is a temporary overload the server expects to
pass, and the header says when. A 503 without one, or with one that is not valid,
is read by its text and status as before (a fault, unless a busy phrase matches).
A backend that was reached and
crashed (HTTP 500, "internal server error", any other 5xx) is
``provider_error``: charged and failed over, and a walk ending on it fails the
run. "status 500: capacity exceeded" is therefore ``provider_error`` (no
capacity phrase matches), while 503 "upstream unavailable" stays
``provider_unavailable``.

The tables are plain data: a new phrase is one line, pinned by one test row.
"""

from __future__ import annotations

import math
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
            # d-inference's capacity family (folded, see fold(); whole words in WHOLE_WORDS)
            "insufficient kv",
            "insufficient slot",
            "not loaded",
            "no model loaded",
            "no models loaded",
            "loading",
            "queue is full",
            "over capacity",
            "at capacity",
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
#: "business", "loading" never "reloading", "at capacity" never "what capacity"; every
#: other phrase is a plain substring.
WHOLE_WORDS: frozenset[str] = frozenset({"busy", "loading", "not loaded", "at capacity"})

#: Phrases that say a busy-sounding answer is a failure: a model that could not load
#: crashed. Any of them takes the capacity group out of play for that answer.
NOT_BUSY_PHRASES: tuple[str, ...] = (
    "error loading",
    "loading error",
    "failed loading",
    "loading failed",
)

#: HTTP statuses that say the request itself is wrong: a busy phrase in such an answer
#: ("400: request rejected: invalid schema") is not a busy answer.
NOT_BUSY_STATUSES: frozenset[int] = frozenset({400, 401, 403, 405, 413, 414, 415, 422})

#: HTTP statuses that say busy whatever the text says, and the reason they carry when no
#: capacity phrase matches: a 429 is a rate limit, never a fault or a rejection.
BUSY_STATUSES: dict[int, FailureReason] = {429: FailureReason.PROVIDER_OVERLOADED}

#: HTTP statuses that say busy whatever the text says when, and only when, the answer
#: names its pause with a valid ``Retry-After`` (RFC 9110 §15.6.4: a 503 is "a temporary
#: overload", and the header says how long it lasts), and the reason they carry when no
#: capacity phrase matches.
PAUSED_BUSY_STATUSES: dict[int, FailureReason] = {503: FailureReason.PROVIDER_OVERLOADED}

#: HTTP statuses (carried by ``Upstream.status_code``) checked after every phrase group:
#: any 5xx that no phrase matched is a backend that was reached and crashed.
STATUS_RULES: tuple[tuple[range, FailureReason], ...] = (
    (range(500, 600), FailureReason.PROVIDER_ERROR),
)

_CAPACITY_PHRASES: tuple[str, ...] = dict(PHRASE_RULES)[FailureReason.CAPACITY_UNAVAILABLE]


#: Letters joined by underscores, hyphens, punctuation or spaces: :func:`fold` makes the
#: joint one space.
_JOINT = re.compile(r"(?<=[a-z])[\W_]+(?=[a-z])")
#: CamelCase word boundaries: a lower-case letter before an upper-case one
#: (``slotCap``), and the last capital of an acronym before a capitalised word
#: (``KVCache``).
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def fold(text: str) -> str:
    """``text`` for phrase matching: CamelCase split into words, case-folded, and every run
    of separators between two letters (``_``, ``-``, ``.``, ``,``, spaces…) made one space —
    ``"Server_Busy!"`` → ``"server busy!"``, ``"SlotCapExceeded"`` → ``"slot cap exceeded"``.
    Digits keep their punctuation (``" 1.503 s"`` is not ``" 503"``)."""
    return _JOINT.sub(" ", _CAMEL.sub(" ", text).casefold())


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


def capacity_phrase(message: str) -> bool:
    """Whether ``message`` is a busy answer by its words: a capacity phrase, and no
    :data:`NOT_BUSY_PHRASES` (a load that failed)."""
    text = fold(message)
    if any(matches(phrase, text) for phrase in NOT_BUSY_PHRASES):
        return False
    return any(matches(phrase, text) for phrase in _CAPACITY_PHRASES)


def reason_from_message(message: str, *, busy: bool = True) -> FailureReason | None:
    """Classify free text by the phrase tables (reject list first); ``busy=False`` skips
    the capacity group (an answer whose status says it cannot be a busy answer)."""
    text = fold(message)
    if not text.strip():
        return None
    if rejected(text):
        return None
    for reason, phrases in PHRASE_RULES:
        if reason is FailureReason.CAPACITY_UNAVAILABLE:
            if busy and capacity_phrase(text):
                return reason
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


def valid_pause(retry_after: float | None) -> bool:
    """Whether ``retry_after`` is a pause a farm named (a finite number of seconds, 0 or
    more; the transports set it only from a valid ``Retry-After``)."""
    return retry_after is not None and math.isfinite(retry_after) and retry_after >= 0


def busy_status(status: int | None, retry_after: float | None) -> FailureReason | None:
    """The busy reason an answer's HTTP status gives it whatever its text says (None: the
    status alone does not say busy): a 429 always, a 503 only with a valid pause."""
    if status is None:
        return None
    if status in BUSY_STATUSES:
        return BUSY_STATUSES[status]
    if status in PAUSED_BUSY_STATUSES and valid_pause(retry_after):
        return PAUSED_BUSY_STATUSES[status]
    return None


def retryable_reason(error: BaseException) -> FailureReason | None:
    """The reason ``error`` may be retried on another target, or None if it may not."""
    if isinstance(error, LLMError) and error.typed:
        return error.reason
    message = str(error)
    status = error.status_code if isinstance(error, Upstream) else None
    pause = error.retry_after if isinstance(error, Upstream) else None
    busy = busy_status(status, pause)
    if busy is not None:  # busy whatever it says: capacity, or the status's reason
        if capacity_phrase(message):
            return FailureReason.CAPACITY_UNAVAILABLE
        return busy
    reason = reason_from_message(message, busy=status not in NOT_BUSY_STATUSES)
    if reason is not None or rejected(message):
        return reason
    return reason_from_status(status)
