"""The data the bot hands us and reads back: run requests, messages, runs (§7, §13).

``RunRequest`` is the public request JSON of §13, validated strictly: a bad
request raises :class:`memory_worker.errors.InvalidRunRequest` listing every
problem, and nothing is stored. ``Run`` is the read view (``runs show
--json``, ``MemoryQueue.get_run``).

Strict means no coercion: ids are JSON integers within 64 bits (not
``true``, ``"1"`` or ``1.0``), flags are JSON booleans, times are RFC 3339
strings with an offset (not unix numbers) inside :data:`EARLIEST_TIME` ..
:data:`LATEST_TIME`, and text is valid Unicode (no lone surrogates): a
request that passes can always be stored, read back and turned into memory.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    model_validator,
)

from memory_worker.errors import InvalidRunRequest
from memory_worker.privacy.masking import scrub


class RunStatus(StrEnum):
    QUEUED = "queued"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"
    #: Taken out for good by an operator (``runs cancel``, the console; §13); ``replay``
    #: by id puts it back.
    CANCELLED = "cancelled"


class SkipReason(StrEnum):
    """Why a ``skipped`` run is never processed (stored with the run as ``skip_reason``)."""

    #: A worker of a newer prompt version claimed it (``replay --status skipped`` re-runs it).
    PROMPT_VERSION = "prompt_version"
    #: Its chat or person was forgotten (§14): its messages are gone, for good.
    FORGOTTEN = "forgotten"


#: Why a skipped run was skipped, as the console's run page and ``runs show`` say it.
SKIP_MEANING: dict[str, str] = {
    "prompt_version": "an older prompt version than the claiming worker's: never processed; "
    "memory-worker replay --status skipped re-runs it under the new one",
    "forgotten": "its chat or person was forgotten: its messages are gone and it is never "
    "processed (nothing to replay)",
}


#: Run request times must lie in [EARLIEST_TIME, LATEST_TIME): wide enough for any real
#: chat history, narrow enough that every window, cursor and card-expiry computation
#: (time + TTL, UTC conversion, unix milliseconds) stays inside ``datetime``'s range.
#: Year 10000 is not a time a chat can have, and once stored it made memory unreadable.
EARLIEST_TIME = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_TIME = datetime(2200, 1, 1, tzinfo=UTC)
#: Ids are signed 64-bit (Telegram's chat ids are; Redis and Lua read them as such).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _time_text_only(value: Any) -> Any:
    """Times come as RFC 3339 text (or ``datetime`` from Python), never as unix numbers."""
    if isinstance(value, bool | int | float):
        raise ValueError("must be an RFC 3339 time string with an offset, not a number")
    return value


def _time_in_range(value: datetime) -> datetime:
    try:
        utc = value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise ValueError("time is out of range") from None
    if not EARLIEST_TIME <= utc < LATEST_TIME:
        raise ValueError(
            f"time must be from {EARLIEST_TIME:%Y-%m-%d} up to {LATEST_TIME:%Y-%m-%d} (UTC)"
        )
    return value


def _valid_unicode(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text is not valid Unicode (lone surrogate)") from None
    return value


#: An RFC 3339 time with an offset, inside the supported range.
Time = Annotated[AwareDatetime, BeforeValidator(_time_text_only), AfterValidator(_time_in_range)]
#: An integer that is a JSON integer (no bool, string or float coercion), 64-bit.
Id = Annotated[int, Strict(), Field(ge=INT64_MIN, le=INT64_MAX)]
#: The same, not negative (message and thread ids).
NonNegativeId = Annotated[int, Strict(), Field(ge=0, le=INT64_MAX)]
#: A flag that is a JSON boolean (no ``"true"`` / ``1`` coercion).
Flag = Annotated[bool, Strict()]
#: Text that can be encoded as UTF-8 (stored, logged by length, sent to the farm).
Text = Annotated[str, Strict(), AfterValidator(_valid_unicode)]


class Message(BaseModel):
    """One chat message of a run (§13)."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)

    message_id: NonNegativeId
    user_id: Id
    sender_name: Text = Field(max_length=256)
    is_bot: Flag = False
    is_forward: Flag = False
    text: Text
    sent_at: Time


class Cursor(BaseModel):
    """Continuation cursor: the run covers messages strictly after this one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    after_sent_at: Time
    after_message_id: NonNegativeId

    def token(self) -> str:
        return f"{self.after_sent_at.timestamp():.6f}:{self.after_message_id}"


class RunRequest(BaseModel):
    """A slice of one chat's history to consolidate (§13 run request JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chat_id: Id
    thread_id: NonNegativeId = 0
    range_start: Time
    range_end: Time
    prompt_version: str | None = Field(None, min_length=1, max_length=64)
    cursor: Cursor | None = None
    messages: list[Message] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_window(self) -> RunRequest:
        if self.range_end <= self.range_start:
            raise ValueError("range_end must be after range_start")
        seen: set[int] = set()
        for msg in self.messages:
            if msg.message_id in seen:
                raise ValueError(f"duplicate message_id {msg.message_id}")
            seen.add(msg.message_id)
            if not (self.range_start <= msg.sent_at <= self.range_end):
                raise ValueError(
                    f"message {msg.message_id} sent_at is outside [range_start, range_end]"
                )
        return self

    def natural_key(self, prompt_version: str) -> str:
        """Digest of (chat, thread, window, prompt version, cursor): one run per slice."""
        parts = [
            str(self.chat_id),
            str(self.thread_id),
            f"{self.range_start.timestamp():.6f}",
            f"{self.range_end.timestamp():.6f}",
            prompt_version,
            self.cursor.token() if self.cursor else "",
        ]
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]

    def messages_json(self) -> bytes:
        return orjson.dumps([m.model_dump(mode="json") for m in self.messages])


def _model_json(value: Any) -> Any:
    """orjson's fallback: models nested in a request dict (e.g. a ``Message``) as JSON data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON-encodable")


def parse_run_request(data: bytes | str | dict[str, Any]) -> RunRequest:
    """Validate one run request (raw JSON or a decoded object); typed error on bad input.

    A decoded object goes through JSON first, so a dict and its JSON text are judged
    alike (and a lone surrogate or an integer beyond 64 bits is refused by the encoder).
    """
    if isinstance(data, dict):
        try:
            data = orjson.dumps(data, default=_model_json)
        except TypeError as exc:  # orjson.JSONEncodeError: surrogates, huge ints, odd types
            raise InvalidRunRequest([f"<root>: not JSON-encodable ({exc})"]) from None
    try:
        return RunRequest.model_validate_json(data)
    except ValidationError as exc:
        raise InvalidRunRequest(problems_of(exc)) from None


def problems_of(exc: ValidationError) -> list[str]:
    """Each of a validation's errors as ``field.path: what is wrong`` — never the input
    (it is chat text: these lines reach callers, logs and Sentry)."""
    return [
        f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
        for err in exc.errors(include_url=False, include_input=False)
    ]


class ErrorLogEntry(BaseModel):
    """One failure of a run; the log is bounded and never cleared by a replay.

    The store masks ``code`` and ``message`` and bounds them before writing, removing
    what the farm echoed of the run's messages (§14); whatever shows an entry
    shows :meth:`masked` (an entry written before a secret shape was known, or by an
    older version, is shown masked too). Readers that never show the text (replay
    selection) skip that cost.
    """

    model_config = ConfigDict(frozen=True)

    attempt: int
    failed_at: datetime
    code: str
    reason: str | None = None
    message: str = ""
    kind: Literal["failure", "replay", "retired", "released", "cancel"] = "failure"

    def masked(self) -> ErrorLogEntry:
        """This entry as it may be shown: code and message scrubbed."""
        code, message = scrub(self.code), scrub(self.message)
        if (code, message) == (self.code, self.message):
            return self
        return self.model_copy(update={"code": code, "message": message})


class ReleaseEntry(BaseModel):
    """One release of a run (§7, §15): when, why, and which route and target, when known.

    Identifiers only (the farm's code is masked when written): the message the farm gave
    is kept once per route, as the route's last error (:class:`RouteError`), not per run.
    """

    model_config = ConfigDict(frozen=True)

    at: datetime
    reason: str
    workflow: str | None = None
    target: str | None = None
    code: str | None = None


class RouteError(BaseModel):
    """The last error a route's farm gave (§15's outage banner), its message masked."""

    model_config = ConfigDict(frozen=True)

    workflow: str
    at: datetime
    target: str | None = None
    code: str = ""
    reason: str | None = None
    message: str = ""

    def masked(self) -> RouteError:
        """As it may be shown: code and message scrubbed again (§14)."""
        return self.model_copy(update={"code": scrub(self.code), "message": scrub(self.message)})


class Run(BaseModel):
    """The read view of a run (§13 run JSON)."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: RunStatus
    retired: bool = False
    attempts: int
    #: The attempt budget of the worker that last claimed the run (its
    #: ``MEMORY_MAX_ATTEMPTS``); None: never claimed (the claiming worker's applies).
    max_attempts: int | None = None
    releases: int
    error_log: list[ErrorLogEntry]
    #: The newest releases, oldest first (``MEMORY_RELEASE_LOG_MAX_ENTRIES`` of them).
    release_log: list[ReleaseEntry] = Field(default_factory=list)
    chat_id: int
    thread_id: int
    range_start: datetime
    range_end: datetime
    #: None: enqueued without a version, not claimed yet (it takes the claiming worker's).
    prompt_version: str | None = None
    cursor: Cursor | None = None
    message_count: int
    created_at: datetime
    updated_at: datetime
    next_attempt_at: datetime | None = None
    lease_owner: str | None = None
    leased_until: datetime | None = None
    result: dict[str, Any] | None = None
    #: Why a ``skipped`` run was skipped (None for every other status).
    skip_reason: SkipReason | None = None
