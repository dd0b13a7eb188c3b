"""The library inside a bot (§13).

- A bot process that imports the library and uses it writes nothing to stdout;
  its records reach a handler on the ``memory_worker`` logger.
- ``MemoryQueue.connect()`` without a Redis URL raises ``RedisNotConfigured``
  (and starts no server) unless the caller asks for the embedded one.
- Wrong vector sizes, wrong id types and oversized queries raise the
  ``InvalidQuery`` errors before anything is read or written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.api.query_args import check_embedding, check_id, check_k, check_query_text
from memory_worker.cards import RunWrites, Scope
from memory_worker.errors import (
    EmbeddingSizeMismatch,
    InvalidId,
    InvalidQuery,
    MemoryWorkerError,
    QueryTooLarge,
    RedisNotConfigured,
)
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.embedded import EmbeddedValkey
from tests.support.cards import T0, new
from tests.support.factories import make_request

ROOT = Path(__file__).resolve().parents[2]
CHAT = 4711
DIM = 8

BOT = textwrap.dedent(
    """
    import asyncio, json, logging, os, sys

    from memory_worker import MemoryQueue  # the bot's one import

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append({"logger": record.name, "message": record.getMessage()})

    logger = logging.getLogger("memory_worker")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Keep())

    async def main():
        sys.path.insert(0, os.environ["ROOT"])
        from tests.support.factories import make_request

        q = await MemoryQueue.connect(os.environ["BOT_REDIS_URL"])
        result = await q.enqueue(make_request(int(os.environ["BOT_CHAT"])))
        run = await q.get_run(result.run_id)
        await q.visible_cards(int(os.environ["BOT_CHAT"]), user_id=7)
        await q.similar_cards(int(os.environ["BOT_CHAT"]), [1.0] * int(os.environ["BOT_DIM"]), 3)
        await q.recall(int(os.environ["BOT_CHAT"]), "what does Alice drink?", 3)
        gone = await q.forget(int(os.environ["BOT_CHAT"]))
        await q.close()
        return {"status": run.status.value, "runs_gone": gone.counts.runs}

    answer = asyncio.run(main())
    with open(os.environ["BOT_OUT"], "w") as out:
        json.dump({"answer": answer, "records": records}, out)
    """
)


def test_a_bot_using_the_library_writes_nothing_to_stdout(
    settings: Settings, tmp_path: Path
) -> None:
    out = tmp_path / "bot.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "REDIS_URL"))} | {
        "ROOT": str(ROOT),
        "BOT_REDIS_URL": reveal(settings.redis_url) or "",
        "BOT_CHAT": str(CHAT),
        "BOT_DIM": str(settings.embedding_dimension),
        "BOT_OUT": str(out),
        "MEMORY_KEY_PREFIX": settings.key_prefix,
    }
    done = subprocess.run(
        [sys.executable, "-c", BOT],
        cwd=tmp_path,  # another directory than the project's
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b""  # not one line on the bot's stdout
    report = json.loads(out.read_text())
    assert report["answer"] == {"status": "queued", "runs_gone": 1}
    records = report["records"]
    assert any(r["message"].startswith("forget.done") for r in records), records
    assert all(r["logger"].startswith("memory_worker.") for r in records)
    assert not (tmp_path / "var").exists()  # and no embedded server of its own


async def test_connect_without_a_url_is_a_configuration_error(tmp_path: Path) -> None:
    bare = Settings(redis_url=None, data_dir=tmp_path / "var")
    with pytest.raises(RedisNotConfigured, match="REDIS_URL") as info:
        await MemoryQueue.connect(settings=bare)
    assert isinstance(info.value, MemoryWorkerError)
    assert "embedded=True" in str(info.value)  # says what to do
    assert not (tmp_path / "var").exists()  # no server was started behind the bot's back


async def test_connect_embedded_uses_the_data_dirs_server(tmp_path: Path) -> None:
    bare = Settings(redis_url=None, data_dir=tmp_path / "var", key_prefix="lib:")
    try:
        async with await MemoryQueue.connect(embedded=True, settings=bare) as q:
            result = await q.enqueue(make_request(1))
            assert (await q.get_run(result.run_id or "")).chat_id == 1
        assert (tmp_path / "var" / "valkey" / "server.json").exists()
    finally:
        EmbeddedValkey(tmp_path / "var" / "valkey").shutdown()


# --- typed errors for wrong arguments -------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [1.5, "42", True, False, None, b"1", [1]],
    ids=["float", "str", "true", "false", "none", "bytes", "list"],
)
def test_check_id_takes_ints_only(value: object) -> None:
    with pytest.raises(InvalidId, match="chat_id must be an int"):
        check_id("chat_id", value)


@pytest.mark.parametrize(
    ("k", "error"),
    [(-1, InvalidQuery), (101, QueryTooLarge), (2.0, InvalidId), (True, InvalidId)],
    ids=["negative", "over-limit", "float", "bool"],
)
def test_check_k_bounds(k: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        check_k(k, 100)
    assert check_k(100, 100) == 100
    assert check_k(0, 100) == 0


@pytest.mark.parametrize(
    ("text", "error"),
    [("x" * 2001, QueryTooLarge), ("  ", InvalidQuery), (b"tea", InvalidQuery), (7, InvalidQuery)],
    ids=["too-long", "blank", "bytes", "int"],
)
def test_check_query_text(text: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        check_query_text(text, 2000)
    assert check_query_text("x" * 2000, 2000) == "x" * 2000


@pytest.mark.parametrize(
    ("embedding", "error"),
    [
        ([1.0] * (DIM - 1), EmbeddingSizeMismatch),
        ([1.0] * (DIM + 1), EmbeddingSizeMismatch),
        ([], EmbeddingSizeMismatch),
        ("abcdefgh", InvalidQuery),
        ([1.0] * (DIM - 1) + [float("nan")], InvalidQuery),
        ([1.0] * (DIM - 1) + ["1"], InvalidQuery),
        (42, InvalidQuery),
    ],
    ids=["short", "long", "empty", "str", "nan", "str-item", "int"],
)
def test_check_embedding(embedding: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        check_embedding(CHAT, embedding, DIM)


def test_check_embedding_takes_a_numpy_row() -> None:
    import numpy as np

    assert check_embedding(CHAT, np.ones(DIM, dtype=np.float32), DIM) == [1.0] * DIM


@pytest.fixture
async def queue(settings: Settings) -> AsyncIterator[MemoryQueue]:
    q = await MemoryQueue.connect(settings=settings.model_copy(update={"embedding_dimension": DIM}))
    try:
        yield q
    finally:
        await q.close()


async def remember(q: MemoryQueue) -> None:
    card = new("Alice likes green tea", scope=Scope.CHAT, user=None, embedding=[1.0] * DIM)
    await q.cards.apply_run(CHAT, "run-1", RunWrites(observed_at=T0, cards=[card]), now=T0)


async def test_similar_cards_with_a_wrong_vector_size_is_a_typed_error(queue: MemoryQueue) -> None:
    with pytest.raises(EmbeddingSizeMismatch) as info:  # no vectors yet: the setting's size
        await queue.similar_cards(CHAT, [1.0] * (DIM + 4), 3)
    assert (info.value.expected, info.value.got) == (DIM, DIM + 4)
    await remember(queue)
    assert len(await queue.similar_cards(CHAT, [1.0] * DIM, 3)) == 1
    with pytest.raises(EmbeddingSizeMismatch):
        await queue.similar_cards(CHAT, [1.0] * (DIM - 1), 3)
    with pytest.raises(QueryTooLarge):
        await queue.similar_cards(CHAT, [1.0] * DIM, queue.settings.query_max_k + 1)


@pytest.mark.parametrize("bad", [1.5, "x", True], ids=["float", "str", "bool"])
async def test_forget_with_a_wrong_id_type_is_a_typed_error_and_forgets_nothing(
    queue: MemoryQueue, bad: Any
) -> None:
    await remember(queue)
    with pytest.raises(InvalidId):
        await queue.forget(bad)
    with pytest.raises(InvalidId):
        await queue.forget(CHAT, user_id=bad)
    assert len(await queue.visible_cards(CHAT)) == 1  # nothing went


async def test_visible_cards_and_recall_check_their_ids(queue: MemoryQueue) -> None:
    with pytest.raises(InvalidId):
        await queue.visible_cards(str(CHAT))  # type: ignore[arg-type]
    with pytest.raises(InvalidId):
        await queue.recall(CHAT, "tea?", user_id=7.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidId):
        await queue.similar_cards(1.5, [1.0] * DIM)  # type: ignore[arg-type]


async def test_an_oversized_recall_is_refused_before_any_embedding(queue: MemoryQueue) -> None:
    await remember(queue)

    class NoWalker:
        transports = None  # what close() looks at

        def __getattr__(self, name: str) -> Any:
            raise AssertionError("recall embedded an oversized query")

    queue.recall_walker = NoWalker()  # type: ignore[assignment]
    limit = queue.settings.recall_max_query_chars
    with pytest.raises(QueryTooLarge) as info:
        await queue.recall(CHAT, "tea " * limit)
    assert (info.value.size, info.value.limit) == (4 * limit, limit)
    with pytest.raises(QueryTooLarge):
        await queue.recall(CHAT, "tea?", k=queue.settings.query_max_k + 1)
