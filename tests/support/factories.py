"""Small builders for run requests used across tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from memory_worker.models import RunRequest

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


def make_request(chat_id: int = 1, **kwargs: Any) -> RunRequest:
    return RunRequest.model_validate(request_dict(chat_id, **kwargs))
