"""The console's card actions (§10, §15): retract or correct one card, a preview first.

The memory page links each card to its page; a preview writes nothing (every key
DUMP-compared); the confirm is a POST with the console token and the CSRF pair, acting
as ``console`` with audit events that hold ids, never the card's text; without the token,
with a stale CSRF or on a read-only console: 403 and nothing changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_worker.cards import CardStatus, CardStore, RunWrites
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from tests.support.cards import new
from tests.support.console import TOKEN, MakeClient, csrf_of, with_token
from tests.support.console import make_client as make_client  # the fixture
from tests.support.dumps import dump_all, dump_chat
from tests.support.forget import ALICE, CANARY, CHAT, JAN
from tests.support.routes import farm_target, route, write_routes


async def seed(redis: Any, settings: Settings) -> CardStore:
    cards = CardStore(redis, Keys(settings.key_prefix))
    alice = new(f"Alice lives in {CANARY[ALICE]}", user=ALICE, seed=None)
    await cards.apply_run(CHAT, "r1", RunWrites(observed_at=JAN, cards=[alice]), now=JAN)
    return cards


async def events(redis: Any, settings: Settings) -> list[dict[str, str]]:
    keys = Keys(settings.key_prefix)
    found = []
    for stream in (keys.audit, keys.events):
        for _, fields in await redis.xrange(stream):
            found.append({k.decode(): v.decode() for k, v in fields.items()})
    return found


async def test_retract_from_the_memory_page_preview_first(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    cards = await seed(redis, settings)
    client = await make_client(with_token(settings))
    memory = await (await client.get(f"/memory/{CHAT}")).text()
    assert f'href="/cards/{CHAT}/1"' in memory

    page = await (await client.get(f"/cards/{CHAT}/1")).text()
    assert 'id="retract-form"' in page
    assert 'id="correct-form"' in page
    before = await dump_all(redis, settings.key_prefix)
    preview = await client.get(f"/cards/{CHAT}/1?action=retract&reason=wrong&preview=1")
    body = await preview.text()
    assert preview.status == 200
    assert 'id="card-confirm"' in body
    assert await dump_all(redis, settings.key_prefix) == before  # the preview wrote nothing

    form = {"action": "retract", "reason": "wrong", "csrf": await csrf_of(client)}
    refused = await client.post(f"/cards/{CHAT}/1", data=form)  # no token
    assert refused.status == 403
    assert await dump_all(redis, settings.key_prefix) == before

    done = await client.post(f"/cards/{CHAT}/1", data=form | {"token": TOKEN})
    assert done.status == 200
    assert 'id="card-done"' in await done.text()
    card = await cards.get_card(CHAT, "1")
    assert card is not None
    assert (card.status, card.retracted_by, card.retract_reason) == (
        CardStatus.RETRACTED,
        "console",
        "wrong",
    )
    found = await events(redis, settings)
    text = " ".join(value for e in found for value in e.values())
    assert "console_retract" in text
    assert any(e.get("type") == "retract" for e in found)
    assert not any(CANARY[ALICE] in value for e in found for value in e.values())


async def test_correct_preview_then_confirm(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    cards = await seed(redis, settings)
    client = await make_client(with_token(settings))
    bad = await client.get(f"/cards/{CHAT}/1?action=correct&fact=+&preview=1")
    assert bad.status == 400
    assert "fact_text is empty" in await bad.text()
    preview = await client.get(
        f"/cards/{CHAT}/1?action=correct&fact=Alice+lives+in+Porto&preview=1"
    )
    assert "Alice lives in Porto" in await preview.text()
    form = {"action": "correct", "fact": "Alice lives in Porto", "csrf": await csrf_of(client)}
    done = await client.post(f"/cards/{CHAT}/1", data=form | {"token": TOKEN})
    assert done.status == 200
    live = await cards.visible_cards(CHAT, user_id=ALICE)
    assert [(c.fact_text, c.asserted_by, c.corrects) for c in live] == [
        ("Alice lives in Porto", "console", "1")
    ]


async def test_a_correct_during_a_farm_outage_is_its_page_not_a_server_error(
    redis: Any, settings: Settings, make_client: MakeClient, sim: FarmSimulator, tmp_path: Path
) -> None:
    """The farm is down while a card of a chat with vectors is corrected: the card page says
    the embedding route is unavailable (503), and the chat's memory is unchanged."""
    sim.set_fault("*", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message="dns"))
    routes = write_routes(
        tmp_path, embedding=route(farm_target("embedder", "e", endpoint="encode"))
    )
    farm = with_token(
        settings, routes_file=routes, discovery_base_url=sim.base_url, embedding_dimension=16
    )
    cards = CardStore(redis, Keys(settings.key_prefix))
    alice = new(f"Alice lives in {CANARY[ALICE]}", user=ALICE, seed=1)
    writes = RunWrites(observed_at=JAN, cards=[alice], embedding_model="e")
    await cards.apply_run(CHAT, "r1", writes, now=JAN)
    client = await make_client(farm)
    before = await dump_chat(cards, CHAT)
    form = {"action": "correct", "fact": "Alice lives in Porto", "csrf": await csrf_of(client)}
    answer = await client.post(f"/cards/{CHAT}/1", data=form | {"token": TOKEN})
    assert answer.status == 503
    assert "the embedding route is unavailable" in await answer.text()
    assert await dump_chat(cards, CHAT) == before


async def test_a_read_only_console_and_memory_off_change_nothing(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    before = await dump_all(redis, settings.key_prefix)
    read_only = await make_client(settings)
    preview = await (
        await read_only.get(f"/cards/{CHAT}/1?action=retract&reason=x&preview=1")
    ).text()
    assert 'id="card-confirm"' not in preview
    form = {"action": "retract", "reason": "x", "csrf": await csrf_of(read_only), "token": TOKEN}
    assert (await read_only.post(f"/cards/{CHAT}/1", data=form)).status == 403
    hidden = await make_client(with_token(settings, console_show_memory=False))
    page = await (await hidden.get(f"/cards/{CHAT}/1")).text()
    assert CANARY[ALICE] not in page
    assert (await hidden.get(f"/cards/{CHAT}/x")).status in (200, 404)
    assert await dump_all(redis, settings.key_prefix) == before
