"""SyncMemoryQueue (§13): MemoryQueue's blocking twin, from plain threads, against a real
Valkey — the same methods and signatures, concurrent calls from 8 threads, a close while a
call is in flight, a call after close, and the bot-API page's example run as written."""

from __future__ import annotations

import asyncio
import inspect
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import memory_worker
from memory_worker import MemoryQueue, SyncMemoryQueue
from memory_worker.api.edge import public_methods
from memory_worker.runs import EnqueueStatus
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from tests.support.routes import farm_target, local_target, route, write_routes

ROOT = Path(__file__).resolve().parents[2]
CHAT = 4242
THREADS = 8


def request(chat_id: int, hour: int, text: str, user_id: int = 7) -> dict[str, Any]:
    return {
        "chat_id": chat_id,
        "range_start": f"2026-11-02T{hour:02d}:00:00Z",
        "range_end": f"2026-11-02T{hour:02d}:59:00Z",
        "messages": [
            {
                "message_id": 1,
                "user_id": user_id,
                "sender_name": "Alice",
                "text": text,
                "sent_at": f"2026-11-02T{hour:02d}:05:00Z",
            }
        ],
    }


# --- the same methods ------------------------------------------------------------------------


def test_the_sync_client_has_every_method_of_memory_queue_with_its_signature() -> None:
    """Names and signatures, both ways: a method added to MemoryQueue appears here (the sync
    methods are generated from the class), and none is blocking-only."""
    asynchronous = public_methods(MemoryQueue)
    blocking = public_methods(SyncMemoryQueue)
    assert sorted(blocking) == sorted(asynchronous)
    for name, method in asynchronous.items():
        mine = blocking[name]
        assert not inspect.iscoroutinefunction(mine), name
        theirs = inspect.signature(method)
        ours = inspect.signature(mine)
        assert list(ours.parameters.values()) == list(theirs.parameters.values()), name
        if name != "connect":  # connect answers a SyncMemoryQueue
            assert ours.return_annotation == theirs.return_annotation, name
    connect = inspect.signature(SyncMemoryQueue.connect)
    assert connect.parameters == inspect.signature(MemoryQueue.connect).parameters
    assert connect.return_annotation == "SyncMemoryQueue"
    assert blocking["recall"].__doc__ == MemoryQueue.recall.__doc__


# --- from plain threads ----------------------------------------------------------------------


@pytest.fixture
def down_farm(settings: Settings, tmp_path: Path) -> Settings:
    """Settings whose embedding route points at a port nothing listens on: every recall is
    answered from the words alone (degraded), with no fake in the way."""
    routes = write_routes(
        tmp_path, embedding=route(farm_target("embedder", "m", endpoint="encode"))
    )
    return settings.model_copy(
        update={
            "routes_file": routes,
            "discovery_base_url": "http://127.0.0.1:9",
            "embedding_dimension": 16,
        }
    )


def test_eight_threads_enqueue_remember_and_recall_at_once(down_farm: Settings) -> None:
    barrier = threading.Barrier(THREADS)
    answers: dict[int, list[Any]] = {}
    errors: list[BaseException] = []

    def bot(i: int, q: SyncMemoryQueue) -> None:
        try:
            barrier.wait(timeout=30)
            results = [q.enqueue(request(CHAT + i, h, f"message {i}.{h}")) for h in range(5)]
            q.remember(CHAT, f"Thread{i} collects stamps{i}", user_id=i, actor="bot")
            hits = q.recall(CHAT, f"stamps{i}", k=3, user_id=i)
            runs = [q.get_run(r.run_id) for r in results if r.run_id]
            answers[i] = [results, hits, runs]
        except BaseException as error:
            errors.append(error)

    with SyncMemoryQueue.connect(settings=down_farm) as q:
        threads = [threading.Thread(target=bot, args=(i, q)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert errors == []
        assert sorted(answers) == list(range(THREADS))
        run_ids = set()
        for i, (results, hits, runs) in answers.items():
            assert [r.status for r in results] == [EnqueueStatus.ENQUEUED] * 5
            run_ids |= {r.run_id for r in results}
            assert [run.chat_id for run in runs] == [CHAT + i] * 5
            assert hits.degraded  # the farm is down: by the words alone
            assert [h.card.fact_text for h in hits] == [f"Thread{i} collects stamps{i}"]
        assert len(run_ids) == THREADS * 5
        assert len(q.list_runs(limit=100)) == THREADS * 5
    assert q.closed


class _SilentFarm:
    """A TCP server that accepts and never answers: an embedding call hangs on it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.reached = threading.Event()
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self._held.append(conn)
            self.reached.set()

    def close(self) -> None:
        self.server.close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def silent_farm() -> Iterator[_SilentFarm]:
    farm = _SilentFarm()
    try:
        yield farm
    finally:
        farm.close()


def _hanging(down_farm: Settings, farm: _SilentFarm, timeout: float) -> Settings:
    return down_farm.model_copy(
        update={
            "discovery_base_url": farm.url,
            "recall_timeout_seconds": timeout,
            "request_timeout_seconds": 600.0,
        }
    )


def _seed(down_farm: Settings) -> None:
    """A card for the recall to find (stored by a client whose embedder fails at once)."""
    with SyncMemoryQueue.connect(settings=down_farm) as q:
        q.remember(CHAT, "Alice collects stamps", user_id=7, actor="bot")


def _recall_in_a_thread(q: SyncMemoryQueue) -> tuple[threading.Thread, list[object]]:
    got: list[object] = []

    def call() -> None:
        try:
            got.append(q.recall(CHAT, "stamps", user_id=7))
        except BaseException as error:
            got.append(error)

    thread = threading.Thread(target=call)
    thread.start()
    return thread, got


def test_closing_while_a_call_hangs_cancels_it_after_the_grace_with_queue_closed(
    down_farm: Settings, silent_farm: _SilentFarm
) -> None:
    _seed(down_farm)
    q = SyncMemoryQueue.connect(settings=_hanging(down_farm, silent_farm, 300.0))
    q.close_grace_seconds = 0.2
    silent_farm.reached.clear()
    thread, got = _recall_in_a_thread(q)
    assert silent_farm.reached.wait(30)  # the recall is in flight, its embedding hanging
    started = time.monotonic()
    q.close()
    thread.join(30)
    assert time.monotonic() - started < 15
    (error,) = got
    assert isinstance(error, memory_worker.QueueClosed)
    assert error.call == "recall"


def test_closing_while_a_call_runs_lets_it_finish_within_the_grace(
    down_farm: Settings, silent_farm: _SilentFarm
) -> None:
    _seed(down_farm)
    q = SyncMemoryQueue.connect(settings=_hanging(down_farm, silent_farm, 1.0))
    q.close_grace_seconds = 60.0
    silent_farm.reached.clear()
    thread, got = _recall_in_a_thread(q)
    assert silent_farm.reached.wait(30)
    q.close()  # waits for the recall: its 1 s budget ends, the words answer it
    thread.join(30)
    (hits,) = got
    assert isinstance(hits, memory_worker.RecallResult)
    assert hits.degraded
    assert [h.card.fact_text for h in hits] == ["Alice collects stamps"]


def test_a_call_after_close_raises_queue_closed(settings: Settings) -> None:
    with SyncMemoryQueue.connect(settings=settings) as q:
        assert q.list_runs() == []
    assert q.closed
    q.close()  # again: nothing
    with pytest.raises(memory_worker.QueueClosed) as info:
        q.enqueue(request(CHAT, 1, "hello"))
    assert info.value.call == "enqueue"
    with pytest.raises(memory_worker.QueueClosed):
        q.recall(CHAT, "hello")
    with pytest.raises(memory_worker.QueueClosed):
        q.validate_many([request(CHAT, 1, "hello")])
    assert isinstance(info.value, memory_worker.MemoryWorkerError)


def test_errors_reach_the_calling_thread_as_memory_worker_types(settings: Settings) -> None:
    with SyncMemoryQueue.connect(settings=settings) as q:
        with pytest.raises(memory_worker.RunNotFound):
            q.get_run("no-such-run")
        with pytest.raises(memory_worker.InvalidId):
            q.visible_cards("42")
    with pytest.raises(memory_worker.RedisNotConfigured):
        SyncMemoryQueue.connect(settings=settings.model_copy(update={"redis_url": None}))


def test_connect_fails_without_leaving_a_thread_behind(settings: Settings) -> None:
    before = {t.name for t in threading.enumerate()}
    with pytest.raises(memory_worker.StoreError):
        SyncMemoryQueue.connect("redis://127.0.0.1:9/0", settings=settings)
    assert "memory-worker-sync" not in {t.name for t in threading.enumerate()} - before


# --- the page's example ----------------------------------------------------------------------


async def test_the_sync_example_runs(settings: Settings, redis: Any, tmp_path: Path) -> None:
    """examples/bot/sync.py, as docs/bot-api.md shows it, in a subprocess: a run enqueued,
    three questions recalled from a thread pool (real e5 on the local route), a context."""
    import dataclasses

    from llm_client import ClientConfig, LocalEmbedClient
    from memory_worker.cards import CardStore, RunWrites, Scope
    from memory_worker.keys import Keys
    from tests.support.cards import new

    seen = datetime(2026, 11, 2, 18, 5, tzinfo=UTC)

    example = (ROOT / "examples" / "bot" / "sync.py").read_text(encoding="utf-8")
    assert example in (ROOT / "docs" / "bot-api.md").read_text(encoding="utf-8")
    facts = [
        ("Alice loves green tea.", Scope.USER),
        ("Alice lives in Lisbon.", Scope.USER),
        ("Мария любит кататься на велосипеде.", Scope.CHAT),
    ]
    client = LocalEmbedClient("multilingual-e5-small", ClientConfig(base_url=""))
    vectors = (await client.embed([f for f, _ in facts], dimension=384)).embeddings
    await client.aclose()
    cards = [
        dataclasses.replace(
            new(fact, scope=scope, user=7, subject=str(i), at=seen, seed=None), embedding=vector
        )
        for i, ((fact, scope), vector) in enumerate(zip(facts, vectors, strict=True))
    ]
    store = CardStore(redis, Keys(settings.key_prefix))
    writes = RunWrites(observed_at=seen, cards=cards, embedding_model="multilingual-e5-small")
    await store.apply_run(42, "r1", writes, now=seen)

    script = tmp_path / "sync_example.py"
    script.write_text(example)
    env = os.environ | {
        "REDIS_URL": reveal(settings.redis_url) or "",
        "MEMORY_KEY_PREFIX": settings.key_prefix,
        "MEMORY_ROUTES_FILE": str(write_routes(tmp_path, embedding=route(local_target()))),
        "MEMORY_EMBEDDING_DIMENSION": "384",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        env=env,
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 180)
    assert proc.returncode == 0, err.decode()
    assert out.decode().splitlines() == [
        "enqueued",
        "What does Alice drink? -> Alice loves green tea.",
        "Where does Alice live? -> Alice lives in Lisbon.",
        "Who rides a bike? -> Мария любит кататься на велосипеде.",
        out.decode().splitlines()[-1],
    ]
    assert out.decode().splitlines()[-1].endswith("tokens, degraded: False")
