"""User story (§7): the farm is never paid twice for one run's extraction.

A run whose embedding or card write fails after its extraction succeeded goes back (released,
or failed with its backoff); its next attempt takes the validated extraction its first one
kept and goes straight to the embedding and the card write. The farm simulator counts the
extraction jobs it was sent. A forget between the attempts erases the kept extraction (no
byte of the forgotten user stays in any key) and the next attempt extracts anew from what
remains; a run claimed under another prompt version extracts anew too.

The first two stories run a real worker process; the forget and prompt-version stories
drive the production pipeline (``build_tick_runner``) in this process, tick by tick.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.cards import CardStore
from memory_worker.consolidation.consolidate import plan_run
from memory_worker.consolidation.kept import Staleness, decode, stale_reason
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import ErrorLogEntry, RunStatus
from memory_worker.pipeline.runner import TickRunner
from memory_worker.runs import RunStore, now_ms
from memory_worker.settings import Settings
from memory_worker.settings.checks import EXTRACTION_PROMPTS
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle
from memory_worker.wiring import build_tick_runner
from tests.support.factories import make_request
from tests.support.forget import ALICE, BOB, CANARY, CHAT, JAN, deployment_bytes, two_users
from tests.support.harness import Fleet, completed_run, eventually
from tests.support.logs import capture_logs

pytestmark = pytest.mark.slow

#: The embedder's one failure: the walk ends with no target left, the run is released.
EMBEDDER_DOWN_ONCE = Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", times=1)
FACTS = ["I live in Lisbon", "I love green tea", "my sister works at Acme"]


def extraction_texts(sim: FarmSimulator, settings: Settings) -> list[str]:
    """Every extraction request the farm received, decoded."""
    return [body.decode() for body in sim.received(settings.extraction_service)]


async def test_an_embedding_failure_costs_no_second_extraction(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    store = RunStore(redis, settings)
    rid = (await store.enqueue(make_request(4101, texts=FACTS))).run_id or ""
    sim.set_fault(settings.embedder_service, EMBEDDER_DOWN_ONCE)
    fleet = Fleet(settings, tmp_path, {"discovery_base_url": sim.base_url})
    fleet.start(1)
    try:
        done = await completed_run(lambda: store.get(rid), timeout=60)
    finally:
        fleet.stop_all()
    assert (done.attempts, done.releases, done.error_log) == (1, 1, []), fleet.logs()
    assert sim.submits(settings.extraction_service) == 1, fleet.logs()
    assert sim.submits(settings.embedder_service) == 2
    assert done.result is not None
    assert (done.result["extraction_reused"], done.result["llm_calls"]) == (True, 1)
    assert done.result["cards_inserted"] >= 2
    assert await redis.exists(Keys(settings.key_prefix).run_extraction(rid)) == 0


async def test_a_card_write_failure_costs_no_second_extraction(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    """The card write meets a misshapen key of the chat (StoreDataCorrupt): the run fails,
    its attempt spent; once the key is mended its retry writes the kept extraction."""
    keys = Keys(settings.key_prefix)
    store = RunStore(redis, settings)
    rid = (await store.enqueue(make_request(4102, texts=FACTS))).run_id or ""
    await redis.hset(keys.chat(4102, "seq"), "not", "a counter")
    fleet = Fleet(
        settings,
        tmp_path,
        {"discovery_base_url": sim.base_url, "backoff_unit_seconds": 2.0},
    )
    fleet.start(1)
    try:

        async def failed() -> bool:
            return (await store.get(rid)).status is RunStatus.FAILED

        await eventually(failed, timeout=60)
        assert await redis.exists(keys.run_extraction(rid)) == 1
        await redis.delete(keys.chat(4102, "seq"))
        done = await completed_run(lambda: store.get(rid), timeout=60)
    finally:
        fleet.stop_all()
    assert done.attempts == 2, fleet.logs()
    assert [e.code for e in done.error_log] == ["StoreDataCorrupt"]
    assert sim.submits(settings.extraction_service) == 1, fleet.logs()
    assert done.result is not None
    assert done.result["extraction_reused"] is True
    cards = await CardStore(redis, keys).all_cards(4102)
    assert {c.object for c in cards} >= {"Lisbon", "green tea"}


async def _pipeline(settings: Settings, redis: Any) -> TickRunner:
    return await build_tick_runner(settings, redis)


async def _close(pipeline: TickRunner) -> None:
    for close in pipeline.closers:
        await close()


@pytest.mark.parametrize("scope", ["user", "chat"])
async def test_a_forget_between_attempts_erases_the_kept_extraction(
    settings: Settings, redis: Any, sim: FarmSimulator, key_prefix: str, scope: str
) -> None:
    s = settings.model_copy(
        update={"forget_rewrite_aof": False, "discovery_base_url": sim.base_url}
    )
    keys = Keys(s.key_prefix)
    store = RunStore(redis, s)
    rid = (await store.enqueue(two_users(JAN, 1))).run_id or ""
    sim.set_fault(s.embedder_service, EMBEDDER_DOWN_ONCE)
    pipeline = await _pipeline(s, redis)
    with capture_logs() as logs:
        outcome = await _forget_between_attempts(s, redis, sim, key_prefix, scope, pipeline, rid)
    # what the worker said of the kept extraction names no text: counts, ids, reasons
    assert any(e["event"] == "consolidation.done" for e in logs) is (outcome == "completed")
    assert CANARY[ALICE] not in repr(logs)
    assert CANARY[BOB] not in repr(logs)
    run = await store.get(rid)
    if scope == "chat":
        assert (outcome, run.status) == ("idle", RunStatus.SKIPPED)
        assert sim.submits(s.extraction_service) == 1
        return
    assert (outcome, run.status) == ("completed", RunStatus.COMPLETED)
    assert sim.submits(s.extraction_service) == 2  # extracted anew, from what remains
    assert CANARY[ALICE] not in extraction_texts(sim, s)[-1]
    assert run.result is not None
    assert run.result["extraction_reused"] is False
    facts = " ".join(c.fact_text for c in await CardStore(redis, keys).all_cards(CHAT))
    assert CANARY[ALICE] not in facts
    assert CANARY[BOB] in facts
    assert CANARY[ALICE].encode() not in await deployment_bytes(redis, key_prefix)


async def _forget_between_attempts(
    s: Settings,
    redis: Any,
    sim: FarmSimulator,
    key_prefix: str,
    scope: str,
    pipeline: TickRunner,
    rid: str,
) -> str:
    """The first attempt keeps its extraction and is released at its embedding; the forget;
    the second attempt's outcome."""
    keys = Keys(s.key_prefix)
    try:
        assert await pipeline.tick("t1") == "deferred"
        kept = await redis.get(keys.run_extraction(rid))
        assert kept is not None
        assert CANARY[ALICE].encode() in kept
        assert CANARY[ALICE].encode() in await deployment_bytes(redis, key_prefix)

        queue = MemoryQueue(RedisHandle(redis, reveal(s.redis_url) or ""), s)
        await queue.forget(CHAT, ALICE if scope == "user" else None)
        assert await redis.exists(keys.run_extraction(rid)) == 0
        assert CANARY[ALICE].encode() not in await deployment_bytes(redis, key_prefix)

        return await pipeline.tick("t2")
    finally:
        await _close(pipeline)


async def test_a_run_claimed_under_another_prompt_version_extracts_anew(
    settings: Settings, redis: Any, sim: FarmSimulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run released under memory_v1 is skipped by a memory_v2 fleet (older version), an
    operator replays it, and a memory_v2 worker claims it: the extraction kept under v1 is
    not used (the prompt changed), the run is extracted again under v2."""
    prompts = {**EXTRACTION_PROMPTS, "memory_v2": "extraction_v1.txt"}
    monkeypatch.setattr("memory_worker.consolidation.prompt.EXTRACTION_PROMPTS", prompts)
    v1 = settings.model_copy(update={"discovery_base_url": sim.base_url})
    v2 = v1.model_copy(update={"prompt_version": "memory_v2"})
    keys = Keys(v1.key_prefix)
    request = make_request(4103, texts=FACTS)
    rid = (await RunStore(redis, v1).enqueue(request)).run_id or ""
    sim.set_fault(v1.embedder_service, EMBEDDER_DOWN_ONCE)
    old = await _pipeline(v1, redis)
    try:
        assert await old.tick("t1") == "deferred"
    finally:
        await _close(old)
    raw = await redis.get(keys.run_extraction(rid))
    record = decode(raw, card_max_bytes=v1.card_max_bytes)
    assert record is not None
    assert record.prompt_version == "memory_v1"

    store = RunStore(redis, v2)
    assert (await store.claim_detailed("v2-worker")).skipped == [rid]
    entry = ErrorLogEntry(attempt=0, failed_at=JAN, code="replay", reason=None, message="-")
    assert await store.replay_batch(
        "skipped", [(rid, now_ms(), entry.model_dump_json())], now_ms=now_ms()
    ) == {rid}
    stale = stale_reason(
        record,
        prompt_version=plan_run(request, v2).prompt_version,
        digest=plan_run(request, v2).digest,
        forget_epoch=record.forget_epoch,
        now_ms=record.kept_at_ms,
        ttl_ms=60_000,
    )
    assert stale is Staleness.PROMPT_VERSION  # only the version differs
    new = await _pipeline(v2, redis)
    try:
        assert await new.tick("t2") == "completed"
    finally:
        await _close(new)
    run = await store.get(rid)
    assert run.result is not None
    assert run.result["extraction_reused"] is False
    assert sim.submits(v1.extraction_service) == 2


# --- faults around the kept extraction ------------------------------------------------------


async def _claimed_again(store: RunStore, rid: str) -> Any:
    """The run claimed, released (as after an embedding failure) and claimed again."""
    first = (await store.claim_detailed("w1")).run
    assert first is not None
    assert first.id == rid
    assert await store.release(first, reason="provider_unavailable")
    again = (await store.claim_detailed("w1")).run
    assert again is not None
    return first, again


async def test_a_store_that_refuses_the_keep_costs_the_attempt_nothing(
    settings: Settings, redis: Any, farm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis away, or out of memory, when the extraction is kept: the attempt goes on to its
    embedding and card write and completes (§7: a store fault never discards a farm result);
    only a later attempt would have to extract again."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import ResponseError

    from memory_worker.consolidation.consolidate import consolidate_run

    store = RunStore(redis, settings)
    keys = Keys(settings.key_prefix)
    cards = CardStore(redis, keys)
    for chat, refusal in (
        (4201, RedisConnectionError("Connection refused")),
        (4202, ResponseError("OOM command not allowed when used memory > 'maxmemory'.")),
    ):
        rid = (await store.enqueue(make_request(chat, texts=FACTS))).run_id or ""
        claim = (await store.claim_detailed("w1")).run
        assert claim is not None

        async def refuse(*_: Any, error: Exception = refusal, **__: Any) -> bool:
            raise error

        monkeypatch.setattr(RunStore, "keep_extraction", refuse)
        with capture_logs() as logs:
            result = await consolidate_run(
                claim.id,
                claim.request,
                store=cards,
                extractor=farm.extractor,
                embedder=farm.embedder,
                settings=settings,
                forget_epoch=claim.forget_epoch,
                kept=store.extraction_slot(claim),
            )
        monkeypatch.undo()
        assert result.cards_inserted >= 2
        assert await redis.exists(keys.run_extraction(rid)) == 0
        assert [e["error"] for e in logs if e["event"] == "consolidation.extraction_not_kept"] == [
            type(refusal).__name__
        ]


async def test_a_kept_value_that_is_not_a_record_is_extracted_again(
    settings: Settings, redis: Any, farm: Any
) -> None:
    """A stored value no attempt of this code wrote (another format, a hand edit): the next
    attempt says so in its log and extracts anew; the run completes."""
    from memory_worker.consolidation.consolidate import consolidate_run

    store = RunStore(redis, settings)
    keys = Keys(settings.key_prefix)
    rid = (await store.enqueue(make_request(4203, texts=FACTS))).run_id or ""
    _, again = await _claimed_again(store, rid)
    await redis.set(keys.run_extraction(rid), b'{"format": 1, "cards": "not a list"}')
    calls_before = farm.sim.submits(settings.extraction_service)
    with capture_logs() as logs:
        result = await consolidate_run(
            again.id,
            again.request,
            store=CardStore(redis, keys),
            extractor=farm.extractor,
            embedder=farm.embedder,
            settings=settings,
            forget_epoch=again.forget_epoch,
            kept=store.extraction_slot(again),
        )
    assert "consolidation.kept_extraction_unreadable" in [e["event"] for e in logs]
    assert farm.sim.submits(settings.extraction_service) == calls_before + 1
    assert result.extraction_reused is False
    assert result.cards_inserted >= 2
