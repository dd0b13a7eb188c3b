"""Shared pieces of the forget tests (§14): the farm, run slices with canaries, a key scan."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from memory_worker.cards import CardStore
from memory_worker.consolidation.consolidate import ConsolidationResult, consolidate_run
from memory_worker.models import RunRequest
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from tests.support.factories import Row, slice_request
from tests.support.farm import Farm

CHAT = -100555
ALICE, BOB = 21, 22
#: Each user's canary: a word no other text of the deployment holds.
CANARY = {ALICE: "Qorvadine", BOB: "Blemmswick"}
JAN = datetime(2026, 1, 10, 9, tzinfo=UTC)


def slice_of(start: datetime, *rows: Row, chat_id: int = CHAT) -> RunRequest:
    return slice_request(chat_id, start, rows)


def two_users(start: datetime, first_id: int) -> RunRequest:
    """A slice where Alice and Bob each say where they live (their canaries)."""
    return slice_of(
        start,
        (first_id, ALICE, "Alice", f"I live in {CANARY[ALICE]}"),
        (first_id + 1, BOB, "Bob", f"I live in {CANARY[BOB]}"),
        (first_id + 2, ALICE, "Alice", f"I love {CANARY[ALICE]} tea"),
    )


async def consolidate_claim(
    claim: ClaimedRun, cards: CardStore, farm: Farm, settings: Settings, **more: Any
) -> ConsolidationResult:
    """Consolidate a claimed run through the farm as the worker does (``more``: e.g. ``attempt``)."""
    return await consolidate_run(
        claim.id,
        claim.request,
        store=cards,
        extractor=farm.extractor,
        embedder=farm.embedder,
        settings=settings,
        now=claim.request.range_end,
        forget_epoch=claim.forget_epoch,
        **more,
    )


async def process_one(
    store: RunStore, cards: CardStore, farm: Farm, settings: Settings, worker: str = "w1"
) -> ClaimedRun | None:
    """Claim one run, consolidate it through the farm, complete it (the worker's path)."""
    claim = (await store.claim_detailed(worker)).run
    if claim is None:
        return None
    result = await consolidate_claim(claim, cards, farm, settings)
    await store.complete(claim, result.summary())
    return claim


async def deployment_bytes(redis: Any, prefix: str) -> bytes:
    """Every key name and value of the deployment (the test's prefix), as one byte string.

    Values are read by type (DUMP may compress a string and hide a canary).
    """
    out: list[bytes] = []
    async for key in redis.scan_iter(match=f"*{prefix}*", count=1000):
        out.append(key)
        kind = (await redis.type(key)).decode()
        if kind == "string":
            out.append(await redis.get(key))
        elif kind == "hash":
            for name, value in (await redis.hgetall(key)).items():
                out += [name, value]
        elif kind == "list":
            out += await redis.lrange(key, 0, -1)
        elif kind == "set":
            out += list(await redis.smembers(key))
        elif kind == "zset":
            out += [m for m, _ in await redis.zrange(key, 0, -1, withscores=True)]
        elif kind == "stream":
            for _, fields in await redis.xrange(key):
                for name, value in fields.items():
                    out += [name, value]
    return b"\n".join(out)
