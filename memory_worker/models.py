"""The data the bot hands us and reads back: run requests, messages, runs (§7, §13).

``RunRequest`` is the public request JSON of §13, validated strictly: a bad
request raises :class:`memory_worker.errors.InvalidRunRequest` listing every
problem, and nothing is stored. ``Run`` is the read view (``runs show
--json``, ``MemoryQueue.get_run``).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

import orjson
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from memory_worker.errors import InvalidRunRequest


class RunStatus(StrEnum):
    QUEUED = "queued"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"


class Message(BaseModel):
    """One chat message of a run (§13)."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)

    message_id: int = Field(ge=0)
    user_id: int
    sender_name: str = Field(max_length=256)
    is_bot: bool = False
    is_forward: bool = False
    text: str
    sent_at: AwareDatetime


class Cursor(BaseModel):
    """Continuation cursor: the run covers messages strictly after this one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    after_sent_at: AwareDatetime
    after_message_id: int = Field(ge=0)

    def token(self) -> str:
        return f"{self.after_sent_at.timestamp():.6f}:{self.after_message_id}"


class RunRequest(BaseModel):
    """A slice of one chat's history to consolidate (§13 run request JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chat_id: int
    thread_id: int = Field(0, ge=0)
    range_start: AwareDatetime
    range_end: AwareDatetime
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


def parse_run_request(data: bytes | str | dict[str, Any]) -> RunRequest:
    """Validate one run request (raw JSON or a decoded object); typed error on bad input."""
    try:
        if isinstance(data, dict):
            return RunRequest.model_validate(data)
        return RunRequest.model_validate_json(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors(include_url=False, include_input=False)
        ]
        raise InvalidRunRequest(problems) from None


class ErrorLogEntry(BaseModel):
    """One failure of a run; the log is bounded and never cleared by a replay."""

    model_config = ConfigDict(frozen=True)

    attempt: int
    failed_at: datetime
    code: str
    reason: str | None = None
    message: str = ""
    kind: Literal["failure", "replay", "retired", "released"] = "failure"


class Run(BaseModel):
    """The read view of a run (§13 run JSON)."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: RunStatus
    retired: bool = False
    attempts: int
    max_attempts: int
    releases: int
    error_log: list[ErrorLogEntry]
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
