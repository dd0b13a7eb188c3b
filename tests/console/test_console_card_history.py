"""The console's card page shows the card's history (§13, §15): each event's kind, the other
card, the run or request that caused it."""

from __future__ import annotations

import pytest

from memory_worker.api import MemoryQueue
from memory_worker.settings import Settings
from tests.support.card_history import CHAT, story
from tests.support.card_history import queue as queue  # the fixture
from tests.support.console import MakeClient, with_token
from tests.support.console import make_client as make_client  # the fixture


async def test_the_console_card_page_shows_its_history(
    queue: MemoryQueue, settings: Settings, make_client: MakeClient
) -> None:
    if queue.cards.redis is not queue.redis:
        pytest.skip("the console on the queue's server")
    await story(queue)
    client = await make_client(with_token(settings))
    page = await client.get(f"/cards/{CHAT}/3")
    body = await page.text()
    assert page.status == 200
    assert 'id="card-history"' in body
    rows = body.split('id="card-history"')[1].split("</table>")[0]
    kinds = [r.split('class="kind">')[1].split("<")[0] for r in rows.split('<tr class="event')[1:]]
    assert kinds == ["created", "supersedes", "corrected"]
    assert 'href="/runs/r3"' in rows
    assert "request req-7" in rows
    assert f'href="/cards/{CHAT}/4"' in rows


async def test_the_memory_page_shows_the_memory_as_it_stood_at_a_moment(
    queue: MemoryQueue, settings: Settings, make_client: MakeClient
) -> None:
    if queue.cards.redis is not queue.redis:
        pytest.skip("the console on the queue's server")
    await story(queue)
    client = await make_client(with_token(settings))

    async def live(query: str) -> list[str]:
        body = await (await client.get(f"/memory/{CHAT}{query}")).text()
        rows = body.split('<tr class="card"><td class="fact">')[1:]
        return sorted(row.split("</td>")[0] for row in rows)

    assert await live("") == ["Alice is vegetarian", "Bob works as a nurse"]
    assert await live("?as_of=2026-03-01T13:30") == [
        "Alice lives in Lisbon",
        "Bob works as a nurse",
    ]
    assert await live("?as_of=2026-03-01T15:00:01%2B00:00") == [
        "Alice lives in Braga",  # retracted since
        "Bob works as a nurse",
    ]
    assert await live("?as_of=2026-03-01T11:00") == []
    page = await (await client.get(f"/memory/{CHAT}?as_of=2026-03-01T15:00:01")).text()
    assert 'id="as-of-note"' in page
    bad = await client.get(f"/memory/{CHAT}?as_of=yesterday")
    assert bad.status == 200
    assert "as of: not an ISO 8601 time" in await bad.text()
