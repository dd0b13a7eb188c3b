"""Run-store arrangements more than one suite starts from."""

from __future__ import annotations

from typing import Any

from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from tests.support.factories import make_request


async def done_beside_waiting(
    redis: Any, settings: Settings, *, done_chat: int, waiting_chat: int, at_ms: int
) -> tuple[RunStore, str, str]:
    """A store keeping finished runs one day, one run completed at ``at_ms + 1``, one queued.

    Returns the store, the completed run's id and the still-waiting run's id (its window is
    five hours earlier, so the claim takes the other one first).
    """
    store = RunStore(redis, settings.model_copy(update={"completed_run_retention_days": 1.0}))
    done = (await store.enqueue(make_request(done_chat), at_ms=at_ms)).run_id
    waiting = (await store.enqueue(make_request(waiting_chat, hour=-5), at_ms=at_ms)).run_id
    assert done
    assert waiting
    claim = await store.claim("w", at_ms=at_ms)
    assert claim is not None
    assert claim.id == done
    await store.complete(claim, {"cards": 1}, at_ms=at_ms + 1)
    return store, done, waiting
