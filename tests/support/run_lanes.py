"""Where a run stands in the run store, read back, and the Python twin of ``runs/lua/cancel.lua``.

:func:`seen` reads one run's place: its status, the lanes and indexes that hold it, whether the
retired-run summary and a kept extraction know it, and its error log's length. :func:`cancel_twin`
answers what the cancel script does to such a place; :func:`lanes_of` is the one place each
status allows (the invariant every script keeps).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from memory_worker.keys import Keys
from memory_worker.models import RunStatus


@dataclass(frozen=True)
class Place:
    """One run's place in the store (None status: no such run)."""

    status: str | None
    retired: bool
    lanes: frozenset[str]
    summary: bool
    extraction: bool
    errors: int


async def seen(redis: Any, keys: Keys, run_id: str, versions: tuple[str, ...] = ()) -> Place:
    """``run_id``'s place; ``versions``: the prompt versions whose parked sets to look in."""
    status, retired = await redis.hmget(keys.run(run_id), ["status", "retired"])
    lanes = {
        "queued": keys.queued,
        "retry": keys.retry,
        "leases": keys.leases,
        "retired": keys.retired,
        **{f"status:{s.value}": keys.by_status(s.value) for s in RunStatus},
    }
    held = set()
    for name, key in lanes.items():
        if await redis.zscore(key, run_id) is not None:
            held.add(name)
    for version in versions:
        if await redis.zscore(keys.parked(version), run_id) is not None:
            held.add("parked")
    return Place(
        status=None if status is None else status.decode(),
        retired=retired == b"1",
        lanes=frozenset(held),
        summary=bool(await redis.hexists(keys.retired_facts, run_id)),
        extraction=bool(await redis.exists(keys.run_extraction(run_id))),
        errors=int(await redis.llen(keys.run_errors(run_id))),
    )


def lanes_of(place: Place) -> set[frozenset[str]]:
    """The lane sets a run of ``place``'s status may be in (a queued run waits in the shared
    queue or in its version's parked set)."""
    status = place.status
    if status == "queued":
        return {frozenset({"status:queued", "queued"}), frozenset({"status:queued", "parked"})}
    if status == "processing":
        return {frozenset({"status:processing", "leases"})}
    if status == "failed":
        return {frozenset({"status:failed", "retired" if place.retired else "retry"})}
    return {frozenset({f"status:{status}"})}


def cancel_twin(before: Place) -> tuple[str, Place]:
    """What ``cancel.lua`` answers and leaves, from the run's place before it."""
    if before.status is None:
        return "missing", before
    if before.status == "cancelled":
        return "already", before
    if before.status in ("completed", "skipped"):
        return "finished", before
    after = replace(
        before,
        status="cancelled",
        retired=False,
        lanes=frozenset({"status:cancelled"}),
        summary=False,
        extraction=False,
        errors=before.errors + 1,
    )
    return "cancelled", after
