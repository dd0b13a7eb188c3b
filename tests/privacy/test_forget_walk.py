"""Forget's walk over every run (§14): a page of the run index per script call finds
exactly one chat's runs, across pages and among other chats' runs."""

from __future__ import annotations

from typing import Any

import pytest

from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.runs import forget as run_forget
from memory_worker.runs.forget import RunForget
from memory_worker.settings import Settings
from tests.support.factories import make_request


@pytest.mark.parametrize("page", [1, 3, 1000])
async def test_the_walk_finds_every_run_of_the_chat_and_no_other(
    settings: Settings, redis: Any, monkeypatch: pytest.MonkeyPatch, page: int
) -> None:
    store = RunStore(redis, settings)
    mine: set[str] = set()
    for i in range(11):
        chat = -100777 if i % 3 == 0 else 7000 + i
        added = await store.enqueue(make_request(chat, hour=i))
        assert added.run_id
        if chat == -100777:
            mine.add(added.run_id)
    monkeypatch.setattr(run_forget, "_WALK_PAGE", page)
    found = await RunForget(redis, Keys(settings.key_prefix), chunk=10).chat_runs(-100777)
    assert sorted(found) == sorted(mine)
    assert len(found) == len(set(found)) == 4
    assert await RunForget(redis, Keys(settings.key_prefix), chunk=10).chat_runs(5) == []
