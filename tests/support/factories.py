"""Small builders for run requests used across tests (one request factory)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from memory_worker.models import RunRequest
from memory_worker.runs.replay import Candidate

BASE = datetime(2026, 11, 1, tzinfo=UTC)


def request_dict(
    chat_id: int = 1,
    *,
    hour: int = 0,
    thread_id: int = 0,
    texts: list[str] | None = None,
    prompt_version: str | None = None,
    user_id: int = 100,
) -> dict[str, Any]:
    """A valid run request JSON object for one hour window of one chat."""
    start = BASE + timedelta(hours=hour)
    texts = texts if texts is not None else ["I love green tea", "we decided to meet on Friday"]
    data: dict[str, Any] = {
        "chat_id": chat_id,
        "thread_id": thread_id,
        "range_start": start.isoformat(),
        "range_end": (start + timedelta(hours=1)).isoformat(),
        "messages": [
            {
                "message_id": i + 1,
                "user_id": user_id + (i % 2),
                "sender_name": f"user{user_id + (i % 2)}",
                "text": text,
                "sent_at": (start + timedelta(minutes=i + 1)).isoformat(),
            }
            for i, text in enumerate(texts)
        ],
    }
    if prompt_version is not None:
        data["prompt_version"] = prompt_version
    return data


def smallest_request() -> dict[str, Any]:
    """The smallest run request the model accepts: one message, every field at its shortest
    (the floor of ``MEMORY_MAX_RUN_BYTES`` is its encoded size)."""
    at = "1970-01-01T00:00:00Z"
    message = {"message_id": 0, "user_id": 0, "sender_name": "", "text": "", "sent_at": at}
    return {"chat_id": 0, "range_start": at, "range_end": "1970-01-01T00:00:01Z",
            "messages": [message]}  # fmt: skip


def make_request(chat_id: int = 1, **kwargs: Any) -> RunRequest:
    return RunRequest.model_validate(request_dict(chat_id, **kwargs))


#: A message row of a slice: message id, user id, sender name, text.
Row = tuple[int, int, str, str]


def slice_request(
    chat_id: int,
    start: datetime,
    rows: Sequence[Row],
    *,
    length: timedelta = timedelta(hours=1),
    first_minute: int = 1,
    extra: Mapping[str, Mapping[str, Any]] | None = None,
) -> RunRequest:
    """A run over ``rows``, one a minute from ``start + first_minute``; ``extra``: per message id."""
    more = extra or {}
    return RunRequest.model_validate(
        {
            "chat_id": chat_id,
            "range_start": start.isoformat(),
            "range_end": (start + length).isoformat(),
            "messages": [
                {
                    "message_id": mid,
                    "user_id": uid,
                    "sender_name": name,
                    "text": text,
                    "sent_at": (start + timedelta(minutes=first_minute + i)).isoformat(),
                    **more.get(str(mid), {}),
                }
                for i, (mid, uid, name, text) in enumerate(rows)
            ],
        }
    )


def retired_candidate(run_id: str, chat_id: int, failed_at_ms: int, reason: str) -> Candidate:
    """Replay's view of a run retired after five attempts, the last an UPSTREAM_ERROR."""
    return Candidate(
        id=run_id,
        chat_id=chat_id,
        prompt_version="memory_v1",
        status="failed",
        retired=True,
        attempts=5,
        failed_at_ms=failed_at_ms,
        code="UPSTREAM_ERROR",
        reason=reason,
    )
