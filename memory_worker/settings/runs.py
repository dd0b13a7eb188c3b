"""A run's settings (§7): attempts and backoff, the lease, the caps, the request limits,
what is kept and for how long.

A base of :class:`~memory_worker.settings.model.Settings` (one model, every field at the
top level: ``MEMORY_MAX_ATTEMPTS``…); the run store reads them together. The lease renewal
and the worker heartbeat (a field of :class:`Settings`, §8) follow the lease unless they are
set (:func:`renewal_default`, :func:`heartbeat_default`), so shortening the lease alone keeps
a valid set of settings.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memory_worker.settings.checks import PromptVersion
from memory_worker.settings.types import DAY, SecretSafeSettings

#: The encoded size of the smallest run request the model accepts (one message, every
#: field at its shortest): a smaller ``MEMORY_MAX_RUN_BYTES`` would refuse every run.
SMALLEST_RUN_BYTES = 124
#: Redis's largest string (``proto-max-bulk-len``, 512 MB): a run's messages are one value.
MAX_RUN_BYTES = 512 * 1024 * 1024
#: Longest retention or expiry, in days (ten years).
MAX_RETENTION_DAYS = 3650
#: Shortest lease: its renewal (a third of it by default) and three worker heartbeats must
#: fit in it with room for Redis round trips on a loaded host.
MIN_LEASE_SECONDS = 1.0
#: The lease renewal and the worker heartbeat when not set: today's periods, or shorter when
#: the lease is shorter (:func:`renewal_default`, :func:`heartbeat_default`).
RENEWAL_DEFAULT_SECONDS, HEARTBEAT_DEFAULT_SECONDS = 10.0, 5.0


def renewal_default(data: dict[str, Any]) -> float:
    """``MEMORY_LEASE_RENEW_SECONDS`` when unset: a third of the lease, at most 10 s."""
    lease = float(data.get("lease_seconds", 30.0))
    return min(RENEWAL_DEFAULT_SECONDS, lease / 3)


def heartbeat_default(data: dict[str, Any]) -> float:
    """``MEMORY_WORKER_HEARTBEAT_SECONDS`` when unset: a quarter of what the lease leaves after
    a renewal (three heartbeats fit in it, §7), at most 5 s. A renewal that leaves nothing is
    refused as such (``checks.RELATIONS``); the heartbeat then follows the lease alone."""
    lease = float(data.get("lease_seconds", 30.0))
    left = lease - float(data.get("lease_renew_seconds", renewal_default(data)))
    return min(HEARTBEAT_DEFAULT_SECONDS, (left if left > 0 else lease) / 4)


class RunSettings(SecretSafeSettings):
    """A run's settings (fields of :class:`Settings`)."""

    max_attempts: int = Field(5, ge=1, le=100, description="Attempts before a run is retired.")
    backoff_unit_seconds: float = Field(
        60.0, gt=0, le=DAY, description="Backoff unit: attempts² × unit."
    )
    backoff_max_units: float = Field(
        60.0, gt=0, le=10_000, description="Backoff cap, in units (60 × 60 s = 1 h)."
    )
    lease_seconds: float = Field(
        30.0,
        ge=MIN_LEASE_SECONDS,
        le=DAY,
        description="Lease of a claimed run; renewed while it works. The renewal and the "
        "heartbeat follow it unless they are set.",
    )
    lease_renew_seconds: float = Field(
        default_factory=renewal_default,
        gt=0,
        le=DAY,
        description="Lease renewal period. Unset: a third of MEMORY_LEASE_SECONDS, at most 10 s.",
    )
    max_queued_runs: int = Field(
        5000, ge=1, le=10_000_000, description="Cap of queued + processing runs."
    )
    max_daily_enqueued_runs: int = Field(
        2000, ge=1, le=10_000_000, description="New runs per UTC day."
    )
    prompt_version: PromptVersion = Field(
        "memory_v1", description="Current extraction prompt version."
    )
    error_log_max_entries: int = Field(
        20, ge=1, le=1000, description="Error-log entries kept per run."
    )
    error_message_max_chars: int = Field(
        500, ge=1, le=100_000, description="Longest error text kept in an entry."
    )
    release_log_max_entries: int = Field(20, ge=1, le=1000, description="Releases kept per run.")
    max_run_messages: int = Field(
        2000, ge=1, le=100_000, description="Messages accepted in one run request."
    )
    max_message_chars: int = Field(
        16_000, ge=1, le=1_000_000, description="Longest message text accepted."
    )
    max_run_bytes: int = Field(
        2_000_000,
        ge=SMALLEST_RUN_BYTES,
        le=MAX_RUN_BYTES,
        description="Largest encoded run request accepted.",
    )
    extraction_keep_seconds: float = Field(
        6 * 3600.0,
        ge=60,
        le=7 * DAY,
        description="A run's validated extraction is kept with the run this long, so an "
        "attempt after an embedding or card-write failure goes straight to embedding (§7: "
        "the farm is not paid twice); a new prompt version, slice or forget epoch drops it.",
    )
    completed_run_retention_days: float = Field(
        14.0,
        gt=0,
        le=MAX_RETENTION_DAYS,
        description="Completed/skipped runs are kept this long, then pruned (their slice stays a duplicate).",
    )
    retired_run_message_retention_days: float = Field(
        30.0,
        gt=0,
        le=MAX_RETENTION_DAYS,
        description="Retired runs keep their messages this long (replayable), then only "
        "their record and error log.",
    )
    natural_key_retention_days: float = Field(
        90.0,
        gt=0,
        le=MAX_RETENTION_DAYS,
        description="A pruned run's slice stays a duplicate this long after it was "
        "enqueued; later the same slice is a new run.",
    )
    applied_run_retention_days: float = Field(
        30.0,
        gt=0,
        le=MAX_RETENTION_DAYS,
        description="Per-chat record of applied runs (idempotency) kept this long.",
    )
    chat_index_backfill_runs: int = Field(
        20_000,
        gt=0,
        le=10_000_000,
        description="Runs enqueued before the per-chat run index that one maintenance pass "
        "adds to it (a one-time backfill; forget walks every run until it is done).",
    )
    forget_chunk_items: int = Field(
        100,
        ge=1,
        le=10_000,
        description="Cards (or runs, links, keys) one forget script call removes: each call "
        "blocks Redis for a few milliseconds only (§14).",
    )
    forget_rewrite_aof: bool = Field(
        True,
        description="After a forget, ask the server to rewrite its append-only file so the "
        "forgotten text leaves the disk (BGREWRITEAOF; refused servers are logged).",
    )
    audit_maxlen: int = Field(
        10_000, ge=1, le=10_000_000, description="Audit events kept (approximately)."
    )
