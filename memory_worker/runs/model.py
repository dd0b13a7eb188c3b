"""What the run store answers, and the pure twins of its scripts' decisions (no Redis)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import IntEnum, StrEnum

from memory_worker.models import RunRequest, RunStatus

#: Runs of newer prompt versions one claim parks at most (one round trip each, once per
#: run; then the claim answers "nothing" and the safety net carries on).
PARK_PER_CLAIM = 500
#: Parked runs of the worker's own version one claim moves back to the queue.
RESTORE_PER_CLAIM = 100
#: Heads one claim walks at most (runs skipped, retired or kept for a live owner on its way).
CLAIM_LOOPS = 64
#: Heads of each claim lane (expired leases, due retries, queued) a claim script names for
#: the next claim, whose script may take no other run: a few more than the claims that
#: usually come in between.
CLAIM_PEEK = 8
#: The most heads of a lane one answer names (it doubles each time the heads moved on).
CLAIM_PEEK_MAX = 64
#: Calls a claim makes again when the heads it had moved on; then it answers nothing and
#: the next tick claims.
CLAIM_AGAIN = 8
#: Times an enqueue that found the queue full reads the processing runs for its script
#: (a claim in between makes it read again); then the answer is queue_full.
ENQUEUE_CHECKS = 5
#: Hours of per-hour run counts (``runs:hourly``) the store keeps; the console charts 24.
HOURLY_KEEP_HOURS = 48
HOUR_MS = 3_600_000
#: Longest error code an error-log entry keeps (a farm's code is the farm's own text).
CODE_MAX_CHARS = 64


class LeaseAnswer(IntEnum):
    """What a lease renewal answered (``lua/renew.lua``)."""

    LOST = 0  # another owner holds the run now (or it was settled)
    HELD = 1  # renewed
    CANCELLED = 2  # an operator cancelled the run (§13): its owner drops it


class EnqueueStatus(StrEnum):
    ENQUEUED = "enqueued"
    DUPLICATE = "duplicate"
    QUEUE_FULL = "queue_full"
    DAILY_CAP = "daily_cap"


@dataclass(slots=True)
class PruneResult:
    """What one pruning pass removed (docs/runbook.md, "Bounded growth")."""

    runs: int = 0
    natural_keys: int = 0
    retired_messages: int = 0
    workers: int = 0
    unparked: int = 0


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    """The typed answer to an enqueue (§7): ``run_id`` is None when capped."""

    status: EnqueueStatus
    run_id: str | None


@dataclass(frozen=True, slots=True)
class ClaimedRun:
    """A run this worker holds the lease of."""

    id: str
    token: str
    owner: str
    attempts: int
    request: RunRequest
    releases: int
    #: The chat's forget epoch at the claim (§14): the card write is refused under an older one.
    forget_epoch: int = 0
    #: Since when the run was claimable (unix ms; None: unknown) — the claim wait (§11).
    ready_at_ms: int | None = None


@dataclass(frozen=True, slots=True)
class UnreadableClaim:
    """A run this worker claimed whose stored request no longer validates (§7): it can never
    heal, so the worker fails it for good at once (``problems``: fields, never values)."""

    id: str
    token: str
    attempts: int
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """A claim's run (None: nothing claimable) and the runs it retired or skipped on the way;
    ``unreadable``: the run it claimed could not be read (``run`` is then None)."""

    run: ClaimedRun | None
    retired: list[str]
    skipped: list[str]
    unreadable: UnreadableClaim | None = None


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class Pulse:
    """The store's pulse: last worker touch and when the store last came back (unix ms)."""

    at: int | None
    since: int | None


def touch_pulse(pulse: Pulse, *, now: int, gap_ms: int) -> Pulse:
    """A worker touched the store at ``now``; a silence longer than ``gap_ms`` restarts ``since``.

    The Lua ``touch_pulse`` (``lua/pulse.lua``, used by the claim and heartbeat scripts) is a
    line-by-line translation that answers the fields to write instead of writing them.
    """
    since = now if pulse.at is None or now - pulse.at > gap_ms else pulse.since
    at = now if pulse.at is None or now > pulse.at else pulse.at
    return Pulse(at, since)


def lease_kept_for_owner(
    *,
    owner_expiry_ms: int | None,
    owner_lists_run: bool,
    since_ms: int | None,
    now: int,
    heartbeat_ttl_ms: int,
) -> bool:
    """Whether a claim must leave an *expired* lease to its owner (§7).

    The owner keeps it while it is alive — its heartbeat has not expired, or the
    store came back less than one heartbeat TTL ago (nobody could heartbeat while
    it was away) — and its heartbeat still lists the run. A dead owner, or a live
    one that dropped the run, loses it. The claim script's ``kept_for_owner`` is
    the Lua twin.
    """
    if owner_expiry_ms is None or not owner_lists_run:
        return False
    alive_until = owner_expiry_ms
    if since_ms is not None:
        alive_until = max(alive_until, since_ms + heartbeat_ttl_ms)
    return now <= alive_until


def keep_extraction(
    *, lease_token: str | None, status: str | None, epoch_now: int, token: str, epoch: int
) -> bool:
    """Whether an attempt may keep its run's extraction (§7; twin of
    ``lua/keep_extraction.lua``): it still holds the run's lease, and the chat's forget epoch
    is still the one it was claimed under."""
    return lease_token == token and status == "processing" and epoch_now == epoch


def hour_of(at_ms: int) -> int:
    """Whole UTC hours since the epoch (the ``<hour>`` of a ``runs:hourly`` field)."""
    return at_ms // HOUR_MS


def hourly_field(kind: str, hour: int) -> str:
    return f"{kind}:{hour}"


def count_hour(
    counts: Mapping[str, int], kind: str, at_ms: int, keep: int = HOURLY_KEEP_HOURS
) -> dict[str, int]:
    """The ``runs:hourly`` hash after one run of ``kind`` at ``at_ms``.

    The hour's field goes up by one. While the hash holds at most ``keep`` fields nothing
    else happens (one ``HLEN``); past that, every field outside ``(hour - keep, hour + keep]``
    goes (old hours, and hours only a clock far ahead could write), so the hash never holds
    more than ``2 × keep`` fields and a count is kept at least ``keep`` hours.
    The Lua ``count_hour`` (``lua/hourly.lua``) is a line-by-line translation.
    """
    hour = hour_of(at_ms)
    field = hourly_field(kind, hour)
    after = dict(counts)
    after[field] = after.get(field, 0) + 1
    if len(after) <= keep:
        return after
    return {f: n for f, n in after.items() if _field_hour_kept(f, hour, keep)}


def _field_hour_kept(field: str, hour: int, keep: int) -> bool:
    _, colon, tail = field.rpartition(":")
    if not (colon and tail.isascii() and tail.isdigit()):
        return False
    return hour - keep < int(tail) <= hour + keep


def append_release(log: str, entry: str, keep: int) -> str:
    """The run's ``release_log`` field after one more release ``entry`` (a one-line JSON
    object): one entry a line, the newest ``keep`` kept, oldest first.

    The Lua in ``lua/release.lua`` is a line-by-line translation (blank lines are dropped).
    """
    lines = [line for line in log.split("\n") if line]
    lines.append(entry)
    return "\n".join(lines[-keep:])


def queued_run_fields(
    request: RunRequest, run_id: str, natural_key: str, messages: bytes, now: int
) -> list[str | int | bytes]:
    """The run hash of a newly queued run, as the enqueue script's flat name/value ARGV."""
    range_end_ms = int(request.range_end.timestamp() * 1000)
    fields: dict[str, str | int | bytes] = {
        "id": run_id,
        "chat_id": request.chat_id,
        "thread_id": request.thread_id,
        "range_start": request.range_start.isoformat(),
        "range_end": request.range_end.isoformat(),
        "prompt_version": request.prompt_version or "",
        "cursor": request.cursor.model_dump_json() if request.cursor else "",
        "nk": natural_key,
        "qscore": -range_end_ms,
        "messages": messages,
        "message_count": len(request.messages),
        "status": RunStatus.QUEUED.value,
        "attempts": 0,
        "releases": 0,
        "retired": "0",
        "created_at": now,
        "updated_at": now,
        "next_attempt_at": "",
        "lease_owner": "",
        "lease_token": "",
        "leased_until": "",
        "result": "",
    }
    flat: list[str | int | bytes] = []
    for name, value in fields.items():
        flat.extend((name, value))
    return flat


def new_run_id(at_ms: int) -> str:
    """Time-sortable id: 12 hex digits of ms, then 8 random hex digits."""
    return f"r{at_ms:012x}{secrets.token_hex(4)}"


def ms_to_dt(value: str | bytes | None) -> datetime | None:
    if value in (None, "", b""):
        return None
    assert value is not None
    return datetime.fromtimestamp(int(value) / 1000, tz=UTC)
