"""§3/§7: embeddings have their own short budgets, and an embedder timeout releases the run;
a hung or busy embedder at the related lookup releases it before its extraction is spent."""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from llm_client import (
    EMBEDDING,
    AllCircuitsOpen,
    BackendUnavailable,
    CapacityUnavailable,
    CapacityWaitExpired,
    CapacityWaitTimeout,
    ClientConfig,
    ClientFactory,
    CoolingDown,
    DeadlineExceeded,
    DecodeError,
    DiscoveryClient,
    Exhausted,
    LLMError,
    NoCandidates,
    RequestTimeout,
    RouteDefaults,
    TaskTimeout,
    Transport,
    Upstream,
)
from llm_client._routing.routes import parse_routes
from memory_worker.cards import CardStore, RunWrites
from memory_worker.consolidation.consolidate import consolidate_run
from memory_worker.consolidation.context import lookup_failure_ends_run
from memory_worker.errors import EmbedderTimeout
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunRequest
from memory_worker.runs.policy import Verdict, decide
from memory_worker.settings import Settings
from tests.support.cards import new
from tests.support.dumps import dump_chat
from tests.support.model_fakes import HashEmbedder, ScriptedExtractor

CHAT = 4343
T0 = datetime(2026, 3, 1, 10, tzinfo=UTC)
DIM = 32


def request() -> RunRequest:
    return RunRequest.model_validate(
        {
            "chat_id": CHAT,
            "thread_id": 0,
            "range_start": T0.isoformat(),
            "range_end": (T0 + timedelta(days=1)).isoformat(),
            "messages": [
                {
                    "message_id": 1,
                    "user_id": 11,
                    "sender_name": "user11",
                    "text": "I love green tea",
                    "sent_at": (T0 + timedelta(minutes=1)).isoformat(),
                }
            ],
        }
    )


ANSWER: dict[str, Any] = {
    "episode_summary": "Talk.",
    "topics": ["t"],
    "participants": ["user11"],
    "candidate_cards": [
        {
            "scope": "user",
            "card_type": "preference",
            "subject": "user11",
            "predicate": "likes",
            "object": "",
            "fact_text": "user11 loves green tea.",
            "confidence": 0.8,
            "salience": 0.5,
            "source_message_ids": [1],
            "user_id": 11,
            "durability": "long",
        }
    ],
    "resolutions": [],
    "links": [],
}


@pytest.fixture
def store(redis: Any, key_prefix: str) -> CardStore:
    return CardStore(redis, Keys(key_prefix))


@pytest.fixture
def small(redis_url: str, key_prefix: str) -> Settings:
    return Settings(redis_url=redis_url, key_prefix=key_prefix, embedding_dimension=DIM)


# --- settings and the client factory ------------------------------------------------------


def test_embeddings_get_their_own_budgets() -> None:
    settings = Settings()
    embed = settings.client_config(workflow=EMBEDDING)
    chat = settings.client_config()
    assert (embed.request_timeout, embed.task_timeout, embed.capacity_wait) == (15.0, 15.0, 15.0)
    assert (chat.request_timeout, chat.task_timeout, chat.capacity_wait) == (30.0, 720.0, 60.0)
    assert settings.client_config(workflow="memory_extraction") == chat
    assert (embed.job_poll, embed.priority, embed.base_url) == (
        chat.job_poll,
        chat.priority,
        chat.base_url,
    )


def test_embedding_budgets_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDING_TASK_TIMEOUT_SECONDS", "7.5")
    monkeypatch.setenv("MEMORY_EMBEDDING_REQUEST_TIMEOUT_SECONDS", "4")
    monkeypatch.setenv("MEMORY_EMBEDDING_CAPACITY_WAIT_SECONDS", "2")
    embed = Settings().client_config(workflow=EMBEDDING)
    assert (embed.request_timeout, embed.task_timeout, embed.capacity_wait) == (4.0, 7.5, 2.0)


def _routes(task_override: float | None = None) -> Any:
    embed_target: dict[str, Any] = {"base_url": "http://farm.test"}
    if task_override is not None:
        embed_target["task_timeout_seconds"] = task_override
    raw = {
        "routes": {
            "memory_extraction": {"targets": [{"base_url": "http://farm.test"}]},
            EMBEDDING: {"targets": [embed_target]},
        }
    }
    return parse_routes(raw, RouteDefaults())


def _config(client: Any) -> ClientConfig:
    assert isinstance(client, DiscoveryClient)
    config = client._config
    assert isinstance(config, ClientConfig)
    return config


def test_client_factory_applies_the_embedding_template() -> None:
    chat_template = ClientConfig(base_url="", task_timeout=720.0, capacity_wait=60.0)
    embed_template = ClientConfig(base_url="", task_timeout=15.0, capacity_wait=15.0)
    factory = ClientFactory(chat_template, embed_config=embed_template)
    routes = _routes()
    (extract_target,) = routes.get("memory_extraction").targets
    (embed_target,) = routes.get(EMBEDDING).targets
    assert _config(factory.embed(embed_target)).task_timeout == 15.0
    assert _config(factory.embed(embed_target)).base_url == "http://farm.test"
    assert _config(factory.chat(extract_target)).task_timeout == 720.0
    # a target's own budget still wins over the workflow's
    (override,) = _routes(task_override=3.0).get(EMBEDDING).targets
    assert _config(ClientFactory(chat_template, embed_config=embed_template).embed(override)) == (
        ClientConfig(base_url="http://farm.test", task_timeout=3.0, capacity_wait=15.0)
    )
    # without an embedding template both use the one template (old behaviour)
    assert _config(ClientFactory(chat_template).embed(embed_target)).task_timeout == 720.0


async def test_a_hung_embedder_times_out_on_the_embedding_budget(sim: FarmSimulator) -> None:
    sim.set_fault("embedder", Fault(FaultKind.HANG))
    chat = ClientConfig(base_url="", task_timeout=30.0, capacity_wait=1.0, job_poll=0.02)
    # budgets of 3 s (not 0.3, nor 1): on a loaded CI machine the simulator's answer to the
    # submit itself once took longer than 0.3 + 0.3 s, and once longer than 1 + 1 s, which
    # ends as a capacity wait instead
    embed = ClientConfig(base_url="", task_timeout=3.0, capacity_wait=3.0, job_poll=0.02)
    raw = {"routes": {EMBEDDING: {"targets": [{"base_url": sim.base_url}]}}}
    embedding = parse_routes(raw, RouteDefaults()).get(EMBEDDING)
    assert embedding is not None
    (target,) = embedding.targets
    factory = ClientFactory(chat, embed_config=embed)
    try:
        started = time.monotonic()
        with pytest.raises(TaskTimeout):
            await factory.embed(target).embed(["x"], dimension=DIM)
        assert time.monotonic() - started < 15.0  # not the chat budget of 30 s
    finally:
        await factory.aclose()


# --- consolidation: an embedder timeout releases the run -----------------------------------

TIMEOUTS = [
    pytest.param(TaskTimeout("job j did not finish within 15s", seconds=15), id="task-timeout"),
    pytest.param(
        Upstream("UPSTREAM_TIMEOUT: embedder took too long", code="UPSTREAM_TIMEOUT"),
        id="upstream-timeout",
    ),
]


async def seed(store: CardStore) -> dict[str, bytes]:
    """A card with a vector: the chat's runs make the related lookup. The chat's keys after."""
    at = T0 - timedelta(days=3)
    card = new("user11 drinks tea.", subject="user11", predicate="drinks", at=at, sources=(99,))
    card = dataclasses.replace(card, embedding=[1.0] * DIM)
    await store.apply_run(CHAT, "seed", RunWrites(observed_at=at, cards=[card]), now=at)
    return await dump_chat(store, CHAT)


@pytest.mark.parametrize("seeded", [True, False], ids=["after_the_lookup", "new_chat"])
@pytest.mark.parametrize("error", TIMEOUTS)
async def test_an_embedding_timeout_releases_and_writes_nothing(
    store: CardStore, small: Settings, error: LLMError, seeded: bool
) -> None:
    before = await seed(store) if seeded else {}
    # the cards time out: after the lookup worked, or as a new chat's only embedding call
    embedder = HashEmbedder(DIM, error=error, fail_on=2 if seeded else 1)
    extractor = ScriptedExtractor([ANSWER])
    with pytest.raises(EmbedderTimeout) as info:
        await consolidate_run(
            "run-1", request(), store=store, extractor=extractor, embedder=embedder, settings=small
        )
    assert info.value.__cause__ is error
    assert info.value.code == "embedding_timeout"
    decision = decide(info.value)
    assert (decision.verdict, decision.reason, decision.code) == (
        Verdict.RELEASE,
        "provider_timeout",
        "embedding_timeout",
    )
    assert len(extractor.payloads) == 1
    assert embedder.calls[-1][0] == "user11 loves green tea."
    assert await dump_chat(store, CHAT) == before


async def test_an_embedding_timeout_at_the_lookup_costs_no_extraction(
    store: CardStore, small: Settings
) -> None:
    await seed(store)  # a chat with a card vector: its runs embed a related-card query first
    embedder = HashEmbedder(DIM, error=TaskTimeout("hung", seconds=15), fail_on=1)
    extractor = ScriptedExtractor([ANSWER])
    with pytest.raises(EmbedderTimeout):
        await consolidate_run(
            "run-1", request(), store=store, extractor=extractor, embedder=embedder, settings=small
        )
    assert extractor.payloads == []


@pytest.mark.parametrize(
    ("error", "raised", "verdict"),
    [
        pytest.param(
            DeadlineExceeded("the run's deadline", workflow=EMBEDDING),
            DeadlineExceeded,
            Verdict.FAIL,
            id="run-deadline-still-fails",
        ),
        pytest.param(
            RequestTimeout("poll timed out", seconds=15),
            RequestTimeout,
            Verdict.RELEASE,
            id="request-timeout-is-transport",
        ),
        pytest.param(
            CapacityWaitExpired("still queued", seconds=15),
            CapacityWaitExpired,
            Verdict.RELEASE,
            id="capacity-wait-is-capacity",
        ),
    ],
)
async def test_other_embedding_errors_keep_their_type(
    store: CardStore,
    small: Settings,
    error: LLMError,
    raised: type[LLMError],
    verdict: Verdict,
) -> None:
    await seed(store)
    embedder = HashEmbedder(DIM, error=error, fail_on=2)  # the lookup works, the cards fail
    with pytest.raises(raised) as info:
        await consolidate_run(
            "run-1",
            request(),
            store=store,
            extractor=ScriptedExtractor([ANSWER]),
            embedder=embedder,
            settings=small,
        )
    assert type(info.value) is raised
    assert decide(info.value).verdict is verdict


# --- the related lookup: what ends the run before its extraction ------------------------------

#: Every kind of error an embedding call can end with, and whether the related lookup's
#: failure with it ends the run before the extraction (True) or lets the lookup go on by
#: the words alone (False).
LOOKUP_FAILURES = [
    pytest.param(DeadlineExceeded("the run's deadline", workflow=EMBEDDING), True, id="deadline"),
    pytest.param(EmbedderTimeout("embedding call timed out"), True, id="embedder-timeout"),
    pytest.param(CapacityWaitTimeout("still busy", workflow=EMBEDDING), True, id="walk-ended-busy"),
    pytest.param(CoolingDown("cooling", workflow=EMBEDDING), True, id="walk-ended-cooling"),
    pytest.param(CapacityUnavailable("no slots", retry_after=3.0), True, id="capacity"),
    pytest.param(CapacityWaitExpired("still queued", seconds=15), True, id="capacity-wait"),
    # outside a walk a 429 or a paused 503 is not typed busy (a walk ending on one is
    # CapacityWaitTimeout): the lookup goes on, and decide() would fail it
    pytest.param(Upstream("status 429", status_code=429), False, id="bare-429"),
    pytest.param(
        Upstream("status 503", status_code=503, retry_after=5.0), False, id="bare-503-paused"
    ),
    pytest.param(Upstream("status 503", status_code=503), False, id="503-without-pause"),
    pytest.param(BackendUnavailable("UPSTREAM_ERROR"), False, id="outage-unreached"),
    pytest.param(Transport("connection refused"), False, id="outage-transport"),
    pytest.param(RequestTimeout("round trip", seconds=15), False, id="outage-request-timeout"),
    pytest.param(NoCandidates("no target", workflow=EMBEDDING), False, id="outage-no-candidates"),
    pytest.param(
        AllCircuitsOpen("every breaker open", workflow=EMBEDDING), False, id="outage-all-open"
    ),
    pytest.param(Exhausted("hops spent", workflow=EMBEDDING), False, id="outage-exhausted"),
    pytest.param(Upstream("status 500: boom", status_code=500), False, id="crash"),
    pytest.param(Upstream("HTTP 400: prompt too long", status_code=400), False, id="bad-request"),
    pytest.param(DecodeError("decode embedding response"), False, id="protocol"),
]


@pytest.mark.parametrize(("error", "ends"), LOOKUP_FAILURES)
def test_which_lookup_failures_end_the_run_before_its_extraction(
    error: LLMError, ends: bool
) -> None:
    assert lookup_failure_ends_run(error) is ends
    if ends and not isinstance(error, DeadlineExceeded):
        # a hung or busy embedder: the run is released, its attempt refunded (§7)
        assert decide(error).verdict is Verdict.RELEASE


BUSY_LOOKUPS = [
    pytest.param(CapacityWaitTimeout("still busy", workflow=EMBEDDING), id="walk-ended-busy"),
    pytest.param(CoolingDown("cooling", workflow=EMBEDDING), id="walk-ended-cooling"),
    pytest.param(CapacityUnavailable("no slots", retry_after=3.0), id="capacity"),
    pytest.param(CapacityWaitExpired("still queued", seconds=0.5), id="capacity-wait"),
]


@pytest.mark.parametrize("error", BUSY_LOOKUPS)
async def test_a_busy_embedder_at_the_lookup_releases_the_run_before_its_extraction(
    store: CardStore, small: Settings, error: LLMError
) -> None:
    """Fault row 4 on a loaded host: the hung embedder's retry hop meets a job still
    queued, and the lookup's walk ends busy. No extraction is spent (it would be made
    without the related cards, then wait for the embedder anyway): released, 0 attempts."""
    before = await seed(store)
    embedder = HashEmbedder(DIM, error=error, fail_on=1)
    extractor = ScriptedExtractor([ANSWER])
    with pytest.raises(type(error)) as info:
        await consolidate_run(
            "run-1", request(), store=store, extractor=extractor, embedder=embedder, settings=small
        )
    assert info.value is error
    assert extractor.payloads == []
    assert decide(info.value).verdict is Verdict.RELEASE
    assert await dump_chat(store, CHAT) == before
