"""consolidate_run's contract: all or nothing, typed errors through, idempotent, concurrent-safe."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from llm_client import (
    MEMORY_EXTRACTION,
    AllCircuitsOpen,
    BackendUnavailable,
    DeadlineExceeded,
    DecodeError,
    FailureReason,
    LLMError,
    NoCandidates,
    Upstream,
    retryable_reason,
)
from memory_worker.cards import CardStore
from memory_worker.consolidation.batching import MESSAGE_SHARE
from memory_worker.consolidation.consolidate import consolidate_run
from memory_worker.consolidation.prompt import overhead_tokens
from memory_worker.errors import ConsolidationError, RunCancelled
from memory_worker.keys import Keys
from memory_worker.models import RunRequest
from memory_worker.settings import Settings
from tests.support.cards import store as store  # the fixture
from tests.support.dumps import dump_chat
from tests.support.logs import capture_logs
from tests.support.model_fakes import HashEmbedder, ScriptedExtractor

CHAT = 4242
T0 = datetime(2026, 3, 1, 10, tzinfo=UTC)
DIM = 32
ALICE, BOB = 11, 12


def make_request(*texts: tuple[int, int, str], thread: int = 0) -> RunRequest:
    return RunRequest.model_validate(
        {
            "chat_id": CHAT,
            "thread_id": thread,
            "range_start": T0.isoformat(),
            "range_end": (T0 + timedelta(days=1)).isoformat(),
            "messages": [
                {
                    "message_id": mid,
                    "user_id": uid,
                    "sender_name": f"user{uid}",
                    "text": text,
                    "sent_at": (T0 + timedelta(minutes=mid)).isoformat(),
                }
                for mid, uid, text in texts
            ],
        }
    )


def card(fact: str, source: int, user: int = ALICE, predicate: str = "likes") -> dict[str, Any]:
    return {
        "scope": "user",
        "card_type": "preference",
        "subject": f"user{user}",
        "predicate": predicate,
        "object": "",
        "fact_text": fact,
        "confidence": 0.8,
        "salience": 0.5,
        "source_message_ids": [source],
        "user_id": user,
        "durability": "long",
    }


def answer(*cards: dict[str, Any], resolutions: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    return {
        "episode_summary": "Talk.",
        "topics": ["t"],
        "participants": ["user11"],
        "candidate_cards": list(cards),
        "resolutions": list(resolutions),
        "links": [],
    }


@pytest.fixture
def settings(redis_url: str, key_prefix: str) -> Settings:
    return Settings(redis_url=redis_url, key_prefix=key_prefix, embedding_dimension=DIM)


async def run(
    store: CardStore,
    settings: Settings,
    request: RunRequest,
    script: list[Any],
    *,
    run_id: str = "run-1",
    embedder: Any = None,
    **kw: Any,
) -> tuple[Any, ScriptedExtractor]:
    extractor = ScriptedExtractor(script)
    result = await consolidate_run(
        run_id,
        request,
        store=store,
        extractor=extractor,
        embedder=HashEmbedder(DIM) if embedder is None else embedder,
        settings=settings,
        now=T0 + timedelta(days=1),
        **kw,
    )
    return result, extractor


async def seed(store: CardStore, settings: Settings) -> None:
    """A chat that already has a card with a vector: runs now make the related lookup."""
    result, _ = await run(
        store,
        settings,
        make_request((100, ALICE, "I drink green tea")),
        [answer(card("Alice drinks green tea.", 100))],
        run_id="seed",
    )
    assert result.cards_inserted == 1


def watch_card_reads(store: CardStore, monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """An event set once the run starts reading its context cards (``live_card_groups``)."""
    started = asyncio.Event()
    reads = store.live_card_groups

    async def watched(*args: Any, **kwargs: Any) -> Any:
        started.set()
        return await reads(*args, **kwargs)

    monkeypatch.setattr(store, "live_card_groups", watched)
    return started


def small_budget(settings: Settings, tokens: int) -> Settings:
    budget = overhead_tokens("memory_v1") + math.ceil(tokens / MESSAGE_SHARE)
    return settings.model_copy(update={"max_input_tokens": budget})


async def test_cards_episode_and_counts(store: CardStore, settings: Settings) -> None:
    request = make_request((1, ALICE, "I love green tea"), (2, BOB, "coffee for me"))
    result, extractor = await run(
        store,
        settings,
        request,
        [answer(card("Alice loves green tea.", 1), card("Bob prefers coffee.", 2, BOB))],
    )
    assert (result.cards_inserted, result.llm_calls, result.batches) == (2, 1, 1)
    assert result.embed_calls == 1  # one batch of card/episode texts: nothing to relate to
    assert result.episode_id == "run-1"
    assert extractor.workflows == [MEMORY_EXTRACTION]
    (key,) = extractor.keys
    assert key.startswith("run-1:a0:")
    assert key.endswith(":b0")
    payload = extractor.payloads[0]
    assert payload["task"] == "memory_extraction"
    assert [m["sent_at"] for m in payload["messages"]] == [
        "2026-03-01T10:01:00Z",
        "2026-03-01T10:02:00Z",
    ]
    summary = result.summary()
    json.dumps(summary)
    assert "Alice loves" not in json.dumps(summary)


async def test_an_extractor_outage_mid_run_propagates_and_nothing_is_written(
    store: CardStore, settings: Settings
) -> None:
    long_text = "I grow tomatoes. " * 120
    request = make_request((1, ALICE, long_text))
    tight = small_budget(settings, 200)
    outage = BackendUnavailable("UPSTREAM_ERROR: [Errno -3] Temporary failure in name resolution")
    with pytest.raises(BackendUnavailable) as info:
        await run(store, tight, request, [answer(card("Alice grows tomatoes.", 1)), outage])
    assert info.value is outage
    assert retryable_reason(info.value) == FailureReason.PROVIDER_UNAVAILABLE
    assert await store.chat_keys(CHAT) == []


@pytest.mark.parametrize("seeded", [True, False], ids=["after_the_lookup", "new_chat"])
@pytest.mark.parametrize(
    "error",
    [BackendUnavailable("UPSTREAM_ERROR: down"), NoCandidates("all open", workflow="embedding")],
    ids=["backend_unavailable", "no_candidates"],
)
async def test_an_embedder_outage_mid_run_propagates_and_nothing_is_written(
    store: CardStore, settings: Settings, error: LLMError, seeded: bool
) -> None:
    if seeded:
        await seed(store, settings)
    before = await dump_chat(store, CHAT)
    request = make_request((1, ALICE, "I love green tea"))
    # the cards' embedding fails: after the lookup's, or as a new chat's only embedding call
    embedder = HashEmbedder(DIM, error=error, fail_on=2 if seeded else 1)
    with pytest.raises(type(error)):
        await run(
            store, settings, request, [answer(card("Alice loves green tea.", 1))], embedder=embedder
        )
    assert len(embedder.calls) == embedder.fail_on
    assert embedder.calls[-1][0] == "Alice loves green tea."
    assert await dump_chat(store, CHAT) == before


@pytest.mark.parametrize(
    "outage",
    [BackendUnavailable("UPSTREAM_ERROR"), AllCircuitsOpen("embedding open", workflow="embedding")],
    ids=["embedder_down", "embedding_route_open"],
)
@pytest.mark.parametrize("seeded", [True, False], ids=["lookup_made", "new_chat_no_lookup"])
async def test_an_embedder_outage_at_the_related_lookup_still_tries_extraction(
    store: CardStore, settings: Settings, outage: LLMError, seeded: bool
) -> None:
    """§6: the lookup is never the only call of a run during an outage, so a farm-wide
    outage reaches (and trips, and pages) extraction too; the extraction's own outage decides.
    A new chat makes no lookup at all: extraction is its first call."""
    if seeded:
        await seed(store, settings)
    lookup = HashEmbedder(DIM, error=outage, fail_on=1)
    request = make_request((1, ALICE, "I love green tea"))
    extractor = ScriptedExtractor([BackendUnavailable("UPSTREAM_ERROR")])
    with pytest.raises(BackendUnavailable):
        await consolidate_run(
            "run-1",
            request,
            store=store,
            extractor=extractor,
            embedder=HashEmbedder(DIM),
            lookup_embedder=lookup,
            settings=settings,
        )
    assert len(lookup.calls) == int(seeded)
    assert len(extractor.payloads) == 1
    # no related cards: the recent ones only
    shown = [c["fact"] for c in extractor.payloads[0]["existing_cards"]]
    assert shown == (["Alice drinks green tea."] if seeded else [])


async def test_the_lookup_has_its_own_embedder_and_the_run_completes_after_its_outage(
    store: CardStore, settings: Settings
) -> None:
    await seed(store, settings)
    lookup = HashEmbedder(DIM, error=BackendUnavailable("UPSTREAM_ERROR"), fail_on=1)
    embedder = HashEmbedder(DIM)
    request = make_request((1, ALICE, "I love green tea"))
    result = await consolidate_run(
        "run-1",
        request,
        store=store,
        extractor=ScriptedExtractor([answer(card("Alice loves green tea.", 1))]),
        embedder=embedder,
        lookup_embedder=lookup,
        settings=settings,
    )
    assert result.cards_inserted == 1
    assert len(lookup.calls) == 1
    assert len(embedder.calls) == 1  # the cards and the episode, not the lookup


class FlakyLookup(HashEmbedder):
    """Fails the first call (the related-card query) with a non-outage error."""

    async def __call__(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        if not self.calls:
            self.calls.append(list(texts))
            raise Upstream("HTTP 400: prompt too long", status_code=400)
        return await super().__call__(texts, idempotency_key=idempotency_key, timeout=timeout)


async def test_a_failed_related_lookup_is_best_effort(store: CardStore, settings: Settings) -> None:
    await seed(store, settings)
    request = make_request((1, ALICE, "I love green tea"))
    embedder = FlakyLookup(DIM)
    result, _ = await run(
        store, settings, request, [answer(card("Alice loves green tea.", 1))], embedder=embedder
    )
    assert result.cards_inserted == 1
    assert len(embedder.calls) == 2  # the failed lookup, then the cards


async def test_a_failed_related_lookup_still_finds_related_cards_by_their_words(
    store: CardStore, settings: Settings
) -> None:
    await seed(store, settings)  # "Alice drinks green tea." (older)
    await run(
        store,
        settings,
        make_request((101, ALICE, "I play chess")),
        [answer(card("Alice plays chess.", 101, predicate="plays"))],
        run_id="seed-2",
    )  # newer: first among Alice's own cards
    one = settings.model_copy(update={"existing_cards_max": 1})
    request = make_request((1, ALICE, "I love green tea"))
    embedder = FlakyLookup(DIM)
    _, extractor = await run(
        store, one, request, [answer(card("Alice loves green tea.", 1))], embedder=embedder
    )
    # the query could not be embedded; BM25 alone still put the tea card first
    shown = [c["fact"] for c in extractor.payloads[0]["existing_cards"]]
    assert shown == ["Alice drinks green tea."]


@pytest.mark.parametrize(
    "content",
    ["I'm sorry, I can't help with that.", "", '{"note": "no"}'],
    ids=["prose", "empty", "wrong_object"],
)
async def test_garbage_is_a_protocol_error_and_nothing_is_written(
    store: CardStore, settings: Settings, content: str
) -> None:
    request = make_request((1, ALICE, "I love green tea"))
    with pytest.raises(DecodeError) as info:
        await run(store, settings, request, [{"raw": content}])
    assert "decode memory extractor response" in str(info.value)
    assert retryable_reason(info.value) == FailureReason.PROVIDER_PROTOCOL_ERROR
    assert await store.chat_keys(CHAT) == []


async def test_a_truncated_answer_is_salvaged(store: CardStore, settings: Settings) -> None:
    request = make_request((1, ALICE, "I love green tea"), (2, ALICE, "and I hate coffee"))
    full = json.dumps(
        answer(card("Alice loves green tea.", 1), card("Alice hates coffee.", 2, predicate="hates"))
    )
    result, _ = await run(store, settings, request, [{"raw": full[: full.index("Alice hates")]}])
    assert result.salvaged_answers == 1
    assert [c.fact_text for c in await store.all_cards(CHAT)] == ["Alice loves green tea."]


async def test_wrong_embedding_dimension_is_a_protocol_error(
    store: CardStore, settings: Settings
) -> None:
    request = make_request((1, ALICE, "I love green tea"))
    with pytest.raises(DecodeError):
        await run(store, settings, request, [answer(card("x", 1))], embedder=HashEmbedder(DIM + 1))
    assert await store.chat_keys(CHAT) == []


async def test_a_crash_after_the_write_reruns_to_the_same_bytes(
    store: CardStore, settings: Settings
) -> None:
    request = make_request((1, ALICE, "I love green tea"), (2, BOB, "coffee for me"))
    first, _ = await run(store, settings, request, [answer(card("Alice loves green tea.", 1))])
    assert first.cards_inserted == 1
    before = await dump_chat(store, CHAT)
    # the run was reclaimed after the crash; the model would now answer differently
    second, extractor = await run(
        store, settings, request, [answer(card("Bob drinks coffee.", 2, BOB))], attempt=1
    )
    assert second.already_applied
    assert extractor.payloads == [], "an applied run costs no LLM call"
    assert await dump_chat(store, CHAT) == before


async def test_two_workers_on_one_chat_store_no_duplicate(
    redis_url: str, key_prefix: str, settings: Settings, open_client: Callable[[str], Any]
) -> None:
    clients = [open_client(redis_url), open_client(redis_url)]
    stores = [CardStore(c, Keys(key_prefix)) for c in clients]
    fact = card("Alice loves green tea.", 1)
    second = dict(fact, source_message_ids=[5])
    requests = [
        make_request((1, ALICE, "I love green tea")),
        make_request((5, ALICE, "green tea is the best")),
    ]
    results = await asyncio.gather(
        *(
            consolidate_run(
                f"run-{i}",
                requests[i],
                store=stores[i],
                extractor=ScriptedExtractor([answer([fact, second][i])]),
                embedder=HashEmbedder(DIM),
                settings=settings,
                now=T0,
            )
            for i in range(2)
        )
    )
    assert sorted((r.cards_inserted, r.cards_observed) for r in results) == [(0, 1), (1, 0)]
    (stored,) = await stores[0].all_cards(CHAT)
    assert stored.observation_count == 2
    assert stored.source_message_ids == [1, 5]


async def test_a_passed_deadline_fails_before_any_call(
    store: CardStore, settings: Settings
) -> None:
    request = make_request((1, ALICE, "I love green tea"))
    with pytest.raises(DeadlineExceeded):
        await run(store, settings, request, [answer()], deadline=0.0)
    assert await store.chat_keys(CHAT) == []


async def test_existing_cards_in_the_prompt_are_bounded_scoped_and_aliased(
    store: CardStore, settings: Settings
) -> None:
    bounded = settings.model_copy(update={"existing_cards_max": 5})
    first = make_request(*[(i, ALICE, f"fact number {i}") for i in range(1, 9)])
    await run(
        store,
        bounded,
        first,
        [answer(*[card(f"Alice fact {i}.", i, predicate=f"p{i}") for i in range(1, 9)])],
        run_id="seed-alice",
    )
    other_thread = make_request((20, BOB, "thread only"), thread=9)
    await run(
        store,
        bounded,
        other_thread,
        [answer({**card("Thread nine fact.", 20, BOB), "scope": "chat"})],
        run_id="seed-thread",
    )
    later = make_request((30, ALICE, "another fact"))
    _, extractor = await run(store, bounded, later, [answer()], run_id="later")
    shown = extractor.payloads[0]["existing_cards"]
    assert 0 < len(shown) <= 5
    assert {c["id"] for c in shown} <= {f"c{i}" for i in range(1, 6)}
    assert all(c["fact"].startswith("Alice fact") for c in shown)
    assert all(c["age"] == "today" for c in shown)


async def test_without_an_embedder_cards_are_stored_without_vectors(
    store: CardStore, settings: Settings
) -> None:
    request = make_request((1, ALICE, "I love green tea"))
    extractor = ScriptedExtractor([answer(card("Alice loves green tea.", 1))])
    result = await consolidate_run(
        "run-1",
        request,
        store=store,
        extractor=extractor,
        embedder=None,
        settings=settings,
        now=T0,
    )
    assert (result.cards_inserted, result.embed_calls) == (1, 0)
    (stored,) = await store.all_cards(CHAT)
    assert not stored.has_embedding


async def test_unknown_prompt_version_is_refused(store: CardStore, settings: Settings) -> None:
    request = make_request((1, ALICE, "x")).model_copy(update={"prompt_version": "memory_v0"})
    with pytest.raises(ConsolidationError):
        await run(store, settings, request, [answer()])


async def test_logs_never_carry_message_or_card_text(store: CardStore, settings: Settings) -> None:
    request = make_request((1, ALICE, "my secret diary entry"))
    with capture_logs() as logs:
        await run(store, settings, request, [answer(card("Alice keeps a diary entry.", 1))])
    text = orjson.dumps(logs, default=str).decode()
    assert "diary" not in text
    assert any(entry["event"] == "consolidation.done" for entry in logs)


async def test_the_context_cards_are_read_while_the_related_lookup_embeds(
    store: CardStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recent and participants' cards are read during the lookup's embedding call (it
    only lands once the read has started), not after it: the read adds no slot time."""
    await run(
        store,
        settings,
        make_request((1, ALICE, "I love tea")),
        [answer(card("Alice loves tea.", 1))],
        run_id="seed",
    )
    read_started = watch_card_reads(store, monkeypatch)

    class WaitsForTheRead(HashEmbedder):
        async def __call__(self, texts: Sequence[str], **kwargs: Any) -> Any:
            await asyncio.wait_for(read_started.wait(), 2)  # times out if read after it
            return await super().__call__(texts, **kwargs)

    _, extractor = await run(
        store,
        settings,
        make_request((2, ALICE, "still tea")),
        [answer()],
        run_id="later",
        embedder=WaitsForTheRead(DIM),
    )
    assert [c["fact"] for c in extractor.payloads[0]["existing_cards"]] == ["Alice loves tea."]


async def _green_tea_again(
    store: CardStore, settings: Settings, embedder: HashEmbedder
) -> tuple[Any, ScriptedExtractor]:
    """Alice's run that relates to her tea card, answered with one new card."""
    request = make_request((1, ALICE, "green tea again"))
    return await run(
        store, settings, request, [answer(card("Alice loves green tea.", 1))], embedder=embedder
    )


async def test_a_chat_with_card_vectors_embeds_the_related_query_first(
    store: CardStore, settings: Settings
) -> None:
    await seed(store, settings)
    embedder = HashEmbedder(DIM)
    result, extractor = await _green_tea_again(store, settings, embedder)
    assert result.embed_calls == 2
    assert len(embedder.calls) == 2
    assert "green tea again" in embedder.calls[0][0]  # the related-card query
    assert embedder.calls[1][0] == "Alice loves green tea."
    assert [c["fact"] for c in extractor.payloads[0]["existing_cards"]] == [
        "Alice drinks green tea."
    ]


async def _seed_without_vectors(store: CardStore, settings: Settings) -> None:
    extractor = ScriptedExtractor([answer(card("Alice drinks green tea.", 100))])
    request = make_request((100, ALICE, "I drink green tea"))
    await consolidate_run(
        "seed", request, store=store, extractor=extractor, embedder=None, settings=settings, now=T0
    )


async def _seed_other_scope(store: CardStore, settings: Settings) -> None:
    request = make_request((100, BOB, "I drink green tea"))
    answered = [answer(card("Bob drinks green tea.", 100, BOB))]
    await run(store, settings, request, answered, run_id="seed")


@pytest.mark.parametrize(
    ("seeding", "shown"),
    [
        (None, []),
        (_seed_without_vectors, ["Alice drinks green tea."]),
        (_seed_other_scope, []),  # Bob's user card: not a scope of Alice's run
    ],
    ids=["new_chat", "cards_without_vectors", "vectors_only_out_of_scope"],
)
async def test_a_chat_without_card_vectors_to_relate_makes_no_query_embedding_call(
    store: CardStore, settings: Settings, seeding: Any, shown: list[str]
) -> None:
    """Nothing the query could find: no embedding call for it (the cards' call only); the
    recent cards are shown all the same."""
    if seeding is not None:
        await seeding(store, settings)
    embedder = HashEmbedder(DIM)
    result, extractor = await _green_tea_again(store, settings, embedder)
    assert result.cards_inserted == 1
    assert result.embed_calls == 1
    assert embedder.calls == [["Alice loves green tea.", "Talk."]]
    assert [c["fact"] for c in extractor.payloads[0]["existing_cards"]] == shown


async def test_the_context_cards_are_read_while_the_applied_check_runs(
    store: CardStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The card reads go out with the already-applied check, not a round trip after it;
    a run found applied still makes no call."""
    await seed(store, settings)
    read_started = watch_card_reads(store, monkeypatch)
    check = store.has_applied

    async def waits_for_the_read(*args: Any) -> bool:
        await asyncio.wait_for(read_started.wait(), 2)  # times out if read after it
        return await check(*args)

    monkeypatch.setattr(store, "has_applied", waits_for_the_read)
    embedder = HashEmbedder(DIM)
    result, extractor = await run(
        store,
        settings,
        make_request((100, ALICE, "I drink green tea")),
        [answer()],
        run_id="seed",
        embedder=embedder,
    )
    assert result.already_applied
    assert extractor.payloads == []
    assert embedder.calls == []
    _, extractor = await run(
        store, settings, make_request((2, ALICE, "still tea")), [answer()], run_id="later"
    )
    assert [c["fact"] for c in extractor.payloads[0]["existing_cards"]] == [
        "Alice drinks green tea."
    ]


@pytest.mark.parametrize("at", [1, 2], ids=["before_the_embedding", "before_the_card_write"])
async def test_a_run_cancelled_at_a_checkpoint_embeds_and_writes_nothing_after_it(
    store: CardStore, settings: Settings, at: int
) -> None:
    """§13: the checkpoints before the embedding and before the card write raise the cancel;
    nothing of the run is written, and no farm call is made after the one that found it."""
    before = await dump_chat(store, CHAT)
    request = make_request((1, ALICE, "I love green tea"))
    embedder = HashEmbedder(DIM)
    passed: list[int] = []

    async def checkpoint() -> None:
        passed.append(len(embedder.calls))
        if len(passed) == at:
            raise RunCancelled("run-1")

    with pytest.raises(RunCancelled):
        await run(
            store,
            settings,
            request,
            [answer(card("Alice loves green tea.", 1))],
            embedder=embedder,
            checkpoint=checkpoint,
        )
    assert len(passed) == at
    assert len(embedder.calls) == (0 if at == 1 else 1)  # a new chat: no related lookup
    assert await dump_chat(store, CHAT) == before
    assert not await store.has_applied(CHAT, "run-1")
