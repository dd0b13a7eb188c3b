"""The dataset (tests/data): realistic chat slices driven end to end through ``consolidate_run``.

Each slice is one or more runs with scripted model answers; its expected
file says which cards must exist (by subject/predicate and state), what
noise is dropped, what validation drops, what must never be stored. Every
slice also checks the invariants that hold for all of them:

- every message is covered exactly once across a run and its continuations;
- no noise message ever reaches a prompt; prompts carry message times;
- cards are never deleted; superseded cards keep a validity end;
- nothing stored looks like a secret;
- rerunning the last run (a crash after the write) changes no byte.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory_worker.cards import Card, CardStore
from memory_worker.consolidation.batching import MESSAGE_SHARE, after_cursor
from memory_worker.consolidation.consolidate import ConsolidationResult, consolidate_run
from memory_worker.consolidation.noise import noise_reason
from memory_worker.consolidation.prompt import overhead_tokens
from memory_worker.keys import Keys
from memory_worker.models import RunRequest
from memory_worker.privacy.masking import contains_secret
from memory_worker.settings import Settings
from memory_worker.upkeep.maintenance import expire_cards
from tests.support.dumps import dump_chat
from tests.support.model_fakes import HashEmbedder, ScriptedExtractor

DATA_DIR = Path(__file__).parent.parent / "data"
DIM = 64


@dataclass(frozen=True)
class Slice:
    name: str
    data: dict[str, Any]
    expected: dict[str, Any]


def load_slices() -> list[Slice]:
    """The chat slices of ``tests/data/slices`` with their ``tests/data/expected`` outcomes."""
    slices: list[Slice] = []
    for path in sorted((DATA_DIR / "slices").glob("*.json")):
        expected = json.loads((DATA_DIR / "expected" / path.name).read_text("utf-8"))
        slices.append(Slice(path.stem, json.loads(path.read_text("utf-8")), expected))
    return slices


SLICES = load_slices()


def test_dataset_is_big_enough() -> None:
    assert len(SLICES) >= 30
    languages = {"ru": "Иван", "de": "Jonas", "es": "Lucía", "uk": "Олена", "fr": "Camille"}
    text = " ".join(str(s.data) for s in SLICES)
    assert all(name in text for name in languages.values())


def _settings(case: Slice, redis_url: str, key_prefix: str) -> Settings:
    overrides: dict[str, Any] = dict(case.data.get("settings", {}))
    budget = overrides.pop("message_budget_tokens", None)
    if budget is not None:
        overrides["max_input_tokens"] = overhead_tokens("memory_v1") + math.ceil(
            budget / MESSAGE_SHARE
        )
    return Settings(
        redis_url=redis_url, key_prefix=key_prefix, embedding_dimension=DIM, **overrides
    )


async def _stored_texts(store: CardStore, chat_id: int) -> str:
    parts: list[str] = []
    for key in await store.chat_keys(chat_id):
        kind = (await store.redis.type(key)).decode()
        if kind == "hash":
            raw = await store.redis.hgetall(key)  # type: ignore[misc]
            parts += [v.decode("utf-8", "replace") for k, v in raw.items() if k != b"emb"]
        elif kind == "list":
            parts += [v.decode() for v in await store.redis.lrange(key, 0, -1)]  # type: ignore[misc]
        elif kind in ("set",):
            parts += [v.decode() for v in await store.redis.smembers(key)]  # type: ignore[misc]
    return "\n".join(parts)


#: How an expected field that is not the card's own attribute value is read off a card.
_READ: dict[str, Callable[[Card], Any]] = {
    "has_valid_until": lambda card: card.valid_until is not None,
    "superseded": lambda card: card.superseded_by is not None,
    "expires": lambda card: card.expires_at is not None,
    "conflict_group": lambda card: card.conflict_group is not None,
    "sources": lambda card: card.source_message_ids,
    "status": lambda card: card.status.value,
    "scope": lambda card: card.scope.value,
}


def _matches(card: Card, want: dict[str, Any]) -> bool:
    for name, value in want.items():
        if name == "count":
            continue
        if name in ("subject", "predicate", "object"):
            if getattr(card, name).casefold() != str(value).casefold():
                return False
        elif name == "fact_contains":
            if value not in card.fact_text:
                return False
        elif name == "confidence":
            if abs(card.confidence - value) > 1e-6:
                return False
        else:
            read = _READ.get(name)
            if (getattr(card, name) if read is None else read(card)) != value:
                return False
    return True


@pytest.mark.parametrize("case", SLICES, ids=[s.name for s in SLICES])
async def test_slice(case: Slice, redis: Any, redis_url: str, key_prefix: str) -> None:
    settings = _settings(case, redis_url, key_prefix)
    store = CardStore(redis, Keys(key_prefix))
    chat_id = int(case.data["chat_id"])
    expected = case.expected
    results: list[ConsolidationResult] = []
    prompts: list[dict[str, Any]] = []
    known_ids: set[str] = set()
    now = datetime.now()
    last: tuple[str, RunRequest, datetime] | None = None

    for spec in case.data["runs"]:
        extractor = ScriptedExtractor(list(spec["responses"]))
        original = RunRequest.model_validate(spec["request"])
        now = original.range_end + timedelta(minutes=5)
        chain: list[tuple[str, RunRequest]] = [(spec["run_id"], original)]
        covered: list[int] = []
        step = 0
        while chain:
            run_id, request = chain.pop()
            result = await consolidate_run(
                run_id,
                request,
                store=store,
                extractor=extractor,
                embedder=HashEmbedder(DIM),
                settings=settings,
                now=now,
            )
            results.append(result)
            last = (run_id, request, now)
            pending = {m.message_id for m in after_cursor(request.messages, request.cursor)}
            rest = (
                {m.message_id for m in result.continuation.messages}
                if result.continuation
                else set()
            )
            assert rest <= pending
            covered += sorted(pending - rest)
            if result.continuation is not None:
                step += 1
                chain.append((f"{spec['run_id']}-c{step}", result.continuation))
            cards_now = {c.id for c in await store.all_cards(chat_id)}
            assert known_ids <= cards_now, "a card was deleted"
            known_ids = cards_now
        assert sorted(covered) == sorted(m.message_id for m in original.messages)
        assert len(covered) == len(set(covered)), "a message was covered twice"
        assert not extractor.script, "scripted answers left unused"
        prompts += extractor.payloads
        noise_ids = {m.message_id for m in original.messages if noise_reason(m) is not None}
        assert noise_ids.isdisjoint(extractor.prompt_message_ids())
        for payload in extractor.payloads:
            assert all(m["sent_at"] for m in payload["messages"])

    cards = await store.all_cards(chat_id)
    for want in expected.get("cards", []):
        found = [c for c in cards if _matches(c, want)]
        assert len(found) == want.get("count", 1), (want, [c.model_dump() for c in cards])
    if "live_cards" in expected:
        assert sum(c.live for c in cards) == expected["live_cards"]
    if "total_cards" in expected:
        assert len(cards) == expected["total_cards"]
    noise = Counter[str]()
    for result in results:
        noise.update(result.noise_dropped)
    if "noise_dropped" in expected:
        assert dict(noise) == expected["noise_dropped"]
    prompt_ids = {m["message_id"] for p in prompts for m in p["messages"]}
    assert prompt_ids.isdisjoint(expected.get("never_in_prompt", []))
    dropped = Counter[str]()
    for result in results:
        dropped.update(result.dropped_by_validation)
    for reason, count in expected.get("dropped_by_validation", {}).items():
        assert dropped[reason] == count, dict(dropped)
    if "runs_processed" in expected:
        assert len(results) == expected["runs_processed"]
    if "episodes" in expected:
        assert len(await store.episodes(chat_id, limit=100)) == expected["episodes"]
    if "links" in expected:
        assert len(await store.links(chat_id)) == expected["links"]
    if "salvaged" in expected:
        assert sum(r.salvaged_answers for r in results) == expected["salvaged"]
    for view in expected.get("visible", []):
        visible = await store.visible_cards(
            chat_id, view["thread_id"], view.get("user_id"), now=now
        )
        assert len(visible) == view["count"], view
    if expected.get("same_conflict_group"):
        groups = {c.conflict_group for c in cards if c.conflict_group}
        assert len(groups) == 1

    # invariants of every slice
    for card in cards:
        assert not contains_secret(card.fact_text)
        if card.status.value == "superseded":
            assert card.valid_until is not None
            assert card.superseded_by is not None
        assert card.has_embedding
    stored = await _stored_texts(store, chat_id)
    for secret in expected.get("forbidden", []):
        assert secret not in stored

    # a crash after the write: the rerun is recognised, costs no LLM call, changes nothing
    assert last is not None
    before = await dump_chat(store, chat_id)
    run_id, request, at = last
    rerun = await consolidate_run(
        run_id,
        request,
        store=store,
        extractor=ScriptedExtractor([]),
        embedder=HashEmbedder(DIM),
        settings=settings,
        now=at + timedelta(hours=1),
    )
    assert rerun.already_applied or rerun.messages_extracted == 0
    assert await dump_chat(store, chat_id) == before

    if "expire_after_days" in expected:
        await expire_cards(store, now=now + timedelta(days=expected["expire_after_days"]))
        live = [c for c in await store.all_cards(chat_id) if c.live]
        assert len(live) == expected["live_after_expiry"]
        assert len(await store.all_cards(chat_id)) == len(cards), "expiry deleted a card"
