"""How the run store's Redis values read back as models, and the entries its scripts write.

The run hash (``run:<id>``) → :class:`~memory_worker.models.Run` and the claim script's
fields → :class:`~memory_worker.runs.model.ClaimedRun`; the one-line JSON a release
appends to the run's ``release_log`` field and the route's last error the release and fail
scripts keep in ``routes:last_error`` (§15). Plain functions on plain data: no Redis.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson
from pydantic import TypeAdapter, ValidationError

from llm_client import as_text
from memory_worker.errors import StoredRunUnreadable
from memory_worker.models import (
    Cursor,
    ErrorLogEntry,
    Message,
    ReleaseEntry,
    RouteError,
    Run,
    RunRequest,
    RunStatus,
    SkipReason,
    problems_of,
)
from memory_worker.runs.model import ClaimedRun, ms_to_dt
from memory_worker.runs.policy import ReleaseOrigin

T = TypeVar("T")


#: How each field a shown run reads is parsed: the fields :func:`run_problems` checks.
_SHOWN_FIELDS: dict[str, Callable[[str], object]] = {
    "id": str,
    "status": RunStatus,
    "chat_id": int,
    "thread_id": int,
    "range_start": datetime.fromisoformat,
    "range_end": datetime.fromisoformat,
    "prompt_version": str,
    "created_at": ms_to_dt,
    "updated_at": ms_to_dt,
}


def run_problems(h: Mapping[str, str]) -> list[str]:
    """What is wrong with a stored run's hash for showing it: field names and what is wrong,
    never a value (the same words as :func:`request_from_hash`'s)."""
    problems: list[str] = []
    for name, parse in _SHOWN_FIELDS.items():
        if name not in h:
            problems.append(f"{name}: missing")
            continue
        try:
            parse(h[name])
        except (ValueError, TypeError, OverflowError):
            problems.append(f"{name}: not a valid value")
    return problems or ["run: not a valid stored run"]


def run_from_hash(h: dict[str, str], errors: Sequence[bytes | str]) -> Run:
    """A run as stored (its error log and release history masked for showing); a hash that
    does not read as one (hand-edited, corrupted) is a :class:`StoredRunUnreadable` naming
    its fields, never quoting them (``int()``'s and pydantic's messages would)."""
    try:
        return _run_from_hash(h, errors)
    except (KeyError, ValueError, TypeError, OverflowError):  # pydantic's and orjson's too
        raise StoredRunUnreadable(h.get("id", "?"), run_problems(h)) from None


def _run_from_hash(h: dict[str, str], errors: Sequence[bytes | str]) -> Run:
    request_cursor = orjson.loads(h["cursor"]) if h.get("cursor") else None
    budget = h.get("max_attempts") or ""
    return Run(
        id=h["id"],
        status=RunStatus(h["status"]),
        retired=h.get("retired") == "1",
        attempts=int(h.get("attempts") or 0),
        max_attempts=int(budget) if budget.isdigit() else None,
        releases=int(h.get("releases") or 0),
        error_log=[ErrorLogEntry.model_validate_json(e).masked() for e in errors],
        release_log=release_log(h.get("release_log") or ""),
        chat_id=int(h["chat_id"]),
        thread_id=int(h["thread_id"]),
        range_start=datetime.fromisoformat(h["range_start"]),
        range_end=datetime.fromisoformat(h["range_end"]),
        prompt_version=h["prompt_version"] or None,
        cursor=Cursor.model_validate(request_cursor) if request_cursor else None,
        message_count=int(h.get("message_count") or 0),
        created_at=ms_to_dt(h["created_at"]) or datetime.now(UTC),
        updated_at=ms_to_dt(h["updated_at"]) or datetime.now(UTC),
        next_attempt_at=ms_to_dt(h.get("next_attempt_at")),
        lease_owner=h.get("lease_owner") or None,
        leased_until=ms_to_dt(h.get("leased_until")),
        result=orjson.loads(h["result"]) if h.get("result") else None,
        skip_reason=skip_reason(h),
    )


def skip_reason(h: Mapping[str, str]) -> SkipReason | None:
    """A skipped run's reason; one skipped before the field was stored was skipped by a
    claim, so for an older prompt version (a forget always stored its reason)."""
    if h.get("status") != RunStatus.SKIPPED.value:
        return None
    return SkipReason(h.get("skip_reason") or SkipReason.PROMPT_VERSION.value)


def pairs(raw: list[Any]) -> dict[str, str]:
    return {as_text(raw[i]): as_text(raw[i + 1]) for i in range(0, len(raw), 2)}


def claimed(fields: list[Any], token: str, owner: str) -> ClaimedRun | None:
    """The claim script's run fields as the claimed run (None: no run)."""
    if not fields:
        return None
    h = pairs(fields)
    return ClaimedRun(
        id=h["id"],
        token=token,
        owner=owner,
        attempts=int(h["attempts"]),
        releases=int(h.get("releases") or 0),
        request=request_from_hash(h),
        forget_epoch=int(h.get("forget_epoch") or 0),
        ready_at_ms=int(float(h["ready_at"])) if h.get("ready_at") else None,
    )


#: A run's stored messages, validated in one call from their JSON (pydantic's core parses
#: and checks the list; one ``model_validate`` a message cost twice as much per claim).
_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


def request_from_hash(h: dict[str, str]) -> RunRequest:
    """A claimed run's request; a stored one that no longer validates is a
    :class:`StoredRunUnreadable` naming fields only (pydantic's own message quotes the
    stored values, which are chat text; so does ``int()``'s)."""
    problems: list[str] = []

    def read(name: str, parse: Callable[[str], T]) -> T | None:
        if name not in h:
            problems.append(f"{name}: missing")
            return None
        try:
            return parse(h[name])
        except ValidationError as exc:
            problems.extend(f"{name}.{problem}" for problem in problems_of(exc))
        except (ValueError, TypeError, OverflowError):
            problems.append(f"{name}: not a valid value")
        return None

    chat_id = read("chat_id", int)
    thread_id = read("thread_id", int)
    range_start = read("range_start", datetime.fromisoformat)
    range_end = read("range_end", datetime.fromisoformat)
    cursor = read("cursor", Cursor.model_validate_json) if h.get("cursor") else None
    messages = read("messages", _MESSAGES.validate_json)
    if not problems:
        try:
            return RunRequest(
                chat_id=chat_id,
                thread_id=thread_id,
                range_start=range_start,
                range_end=range_end,
                prompt_version=h.get("prompt_version", ""),
                cursor=cursor,
                messages=messages,
            )
        except ValidationError as exc:
            problems = problems_of(exc)
    raise StoredRunUnreadable(h.get("id", "?"), problems) from None


# --- release history and the routes' last errors (§15) ---------------------------------------


def release_entry(now_ms: int, reason: str, origin: ReleaseOrigin, code: str | None) -> str:
    """One release as the one-line JSON the release script appends (``code`` masked)."""
    entry: dict[str, Any] = {"at": now_ms, "reason": reason}
    if origin.workflow:
        entry["workflow"] = origin.workflow
    if origin.target:
        entry["target"] = origin.target
    if code:
        entry["code"] = code
    return orjson.dumps(entry).decode()


def release_log(field: str) -> list[ReleaseEntry]:
    """The run's ``release_log`` field as entries, oldest first (an unreadable line is
    skipped: the history is for reading, never a reason to fail a page)."""
    entries = []
    for line in field.split("\n"):
        if not line:
            continue
        try:
            raw = orjson.loads(line)
            entries.append(
                ReleaseEntry(
                    at=datetime.fromtimestamp(int(raw["at"]) / 1000, tz=UTC),
                    reason=str(raw["reason"]),
                    workflow=raw.get("workflow"),
                    target=raw.get("target"),
                    code=raw.get("code"),
                )
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ValidationError):
            continue
    return entries


def route_error_json(
    now_ms: int, origin: ReleaseOrigin, *, code: str, reason: str | None, message: str
) -> str:
    """A route's last error as the release and fail scripts store it (already masked)."""
    return orjson.dumps(
        {
            "at": now_ms,
            "target": origin.target,
            "code": code,
            "reason": reason,
            "message": message,
        }
    ).decode()


def route_errors(raw: Iterable[tuple[Any, Any]]) -> dict[str, RouteError]:
    """``routes:last_error`` (workflow → JSON) as masked :class:`RouteError` by workflow."""
    found: dict[str, RouteError] = {}
    for workflow, value in raw:
        try:
            data = orjson.loads(value)
            error = RouteError(
                workflow=as_text(workflow),
                at=datetime.fromtimestamp(int(data["at"]) / 1000, tz=UTC),
                target=data.get("target"),
                code=str(data.get("code") or ""),
                reason=data.get("reason"),
                message=str(data.get("message") or ""),
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ValidationError):
            continue
        found[error.workflow] = error.masked()
    return found
