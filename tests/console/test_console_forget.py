"""The console's forget action (§14, §15): preview with counts, confirm with the token.

A chat's memory page links to a dry-run preview (counts only, nothing written,
every key DUMP-compared); the confirm is a POST with the console token and the CSRF
pair that forgets with actor ``console``; without them: 403 and nothing changed.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp.test_utils import TestClient

from memory_worker.cards import CardStore, RunWrites
from memory_worker.keys import Keys
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.upkeep.forgetter import recent_audit
from tests.support import console
from tests.support.cards import new
from tests.support.console import TOKEN, MakeClient, csrf_of, with_token
from tests.support.console import make_client as make_client  # the fixture
from tests.support.dumps import dump_all
from tests.support.forget import ALICE, BOB, CANARY, CHAT, JAN, two_users


async def seed(redis: Any, settings: Settings) -> CardStore:
    """Alice's and Bob's cards (their canaries) and a queued run holding both."""
    cards = CardStore(redis, Keys(settings.key_prefix))
    alice = new(f"Alice lives in {CANARY[ALICE]}", user=ALICE, obj=CANARY[ALICE])
    bob = new(f"Bob lives in {CANARY[BOB]}", user=BOB, subject="Bob", obj=CANARY[BOB], seed=2)
    await cards.apply_run(CHAT, "r1", RunWrites(observed_at=JAN, cards=[alice, bob]), now=JAN)
    await RunStore(redis, settings).enqueue(two_users(JAN, 1))
    return cards


async def seeded_forget_console(
    redis: Any, settings: Settings, make_client: MakeClient
) -> tuple[CardStore, TestClient[Any, Any]]:
    """The :func:`seed` cards and a console holding the token that may forget (no AOF rewrite)."""
    cards = await seed(redis, settings)
    return cards, await make_client(with_token(settings, forget_rewrite_aof=False))


def count(body: str, name: str) -> int:
    found = re.search(rf'id="forget-{name}">(\d+)<', body)
    assert found, name
    return int(found.group(1))


async def test_preview_from_the_memory_page_then_forget_a_user(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    cards, client = await seeded_forget_console(redis, settings, make_client)
    memory = await (await client.get(f"/memory/{CHAT}")).text()
    assert 'id="forget-form"' in memory
    assert 'action="/forget"' in memory

    before = await dump_all(redis, settings.key_prefix)
    preview = await client.get(f"/forget?chat={CHAT}&user={ALICE}&preview=1")
    body = await preview.text()
    assert preview.status == 200
    assert await dump_all(redis, settings.key_prefix) == before  # the dry run wrote nothing
    assert (count(body, "cards"), count(body, "runs"), count(body, "messages")) == (1, 1, 2)
    assert 'id="forget-confirm"' in body
    assert CANARY[ALICE] not in body  # counts and ids only
    assert CANARY[BOB] not in body

    csrf = await csrf_of(client)
    form = {"chat": str(CHAT), "user": str(ALICE), "csrf": csrf, "token": TOKEN}
    done = await client.post("/forget", data=form)
    text = await done.text()
    assert done.status == 200
    assert 'id="forget-done"' in text
    assert count(text, "cards") == 1
    assert CANARY[ALICE] not in text
    assert [c.user_id for c in await cards.all_cards(CHAT)] == [BOB]
    audit = (await recent_audit(redis, Keys(settings.key_prefix)))[0]
    assert (audit["actor"], audit["scope"], audit["user_id"]) == ("console", "user", str(ALICE))
    events = await (await client.get("/events?workflow=console&type=console_forget")).text()
    assert "console_forget" in events
    assert "cards=1" in events
    assert CANARY[ALICE] not in events


async def test_forget_a_whole_chat_from_the_console(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    cards, client = await seeded_forget_console(redis, settings, make_client)
    preview = await (await client.get(f"/forget?chat={CHAT}&user=&preview=1")).text()
    assert count(preview, "cards") == 2
    assert f"Forget chat {CHAT}" in preview
    csrf = await csrf_of(client)
    done = await client.post(
        "/forget", data={"chat": str(CHAT), "user": "", "csrf": csrf, "token": TOKEN}
    )
    assert done.status == 200
    assert await cards.all_cards(CHAT) == []


async def test_forget_refused_without_the_token_or_csrf_changes_nothing(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    before = await dump_all(redis, settings.key_prefix)
    form = {"chat": str(CHAT), "user": str(ALICE)}
    read_only = await console.assert_refused_without_token_or_csrf(
        redis, settings, make_client, "/forget", form
    )
    # the read-only console previews (a dry run) but offers no confirm
    preview = await (await read_only.get(f"/forget?chat={CHAT}&user={ALICE}&preview=1")).text()
    assert count(preview, "cards") == 1
    assert 'id="forget-confirm"' not in preview
    assert await dump_all(redis, settings.key_prefix) == before


async def test_bad_input_answers_one_line_and_changes_nothing(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    client = await make_client(with_token(settings))
    before = await dump_all(redis, settings.key_prefix)
    cases = [
        ("chat=abc", 400, "chat &#39;abc&#39;: expected an integer chat id"),
        (f"chat={CHAT}&user=x1", 400, "user &#39;x1&#39;: expected an integer user id"),
        ("chat=", 400, "chat: a chat id is required"),
        ("chat=424242", 404, "chat 424242 is unknown"),
    ]
    for query, status, line in cases:
        response = await client.get(f"/forget?{query}&preview=1")
        assert response.status == status, query
        assert line in await response.text(), query
    csrf = await csrf_of(client)
    response = await client.post("/forget", data={"chat": "424242", "csrf": csrf, "token": TOKEN})
    assert response.status == 404
    assert await dump_all(redis, settings.key_prefix) == before


async def test_the_preview_renders_with_memory_text_turned_off(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    client = await make_client(with_token(settings, console_show_memory=False))
    body = await (await client.get(f"/forget?chat={CHAT}&user={BOB}&preview=1")).text()
    assert count(body, "cards") == 1
    assert CANARY[BOB] not in body
