"""The operator console (§15) through its HTTP interface, against real Valkey.

Every page answers with a strict CSP; actions need the console token and a
CSRF token, answer 403 otherwise and change nothing (every key DUMP-compared);
no secret setting ever reaches a response; markup in stored text renders inert;
``MEMORY_CONSOLE_SHOW_MEMORY=0`` keeps every card and message text out.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from llm_client import Circuit, EventType, Outcome, RoutingEvent
from llm_client._outlier.model import Mode as Rule
from llm_client._outlier.model import Verdict
from memory_worker.cards import CardStore, EpisodeWrite, NewCard, RunWrites
from memory_worker.console import add_console
from memory_worker.console.app import CSP
from memory_worker.console.data import iso, overview_data
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore, now_ms
from memory_worker.runs.model import HOUR_MS
from memory_worker.runs.policy import FailurePlan
from memory_worker.settings import Settings
from memory_worker.wiring import breaker_store, event_log, outlier_store
from tests.support import console
from tests.support.cards import new
from tests.support.console import TOKEN, MakeClient, csrf_of, with_token
from tests.support.console import make_client as make_client  # the fixture
from tests.support.dumps import dump_all
from tests.support.factories import make_request

SCRIPT = "<script>alert('pwned')</script>"
#: Markup in a farm error (not the messages' own: an echo of them is stored as [message text]).
ERROR_MARKUP = '<img src=x onerror="alert(7)">'
CHAT = 4242
TARGET = "llm-openai/memory-extractor"
PAGES = [
    "/",
    "/runs",
    "/runs?status=failed",
    "/runs?status=retired&chat=4242",
    "/runs?code=upstream_error&since=2d",
    "/breakers",
    "/events",
    "/events?workflow=console&type=console_replay",
    "/memory",
    f"/memory/{CHAT}",
    f"/memory/{CHAT}?q=tea",
    "/settings",
    "/replay",
    "/replay?preview=1&scope=failed",
    "/forget",
    f"/forget?chat={CHAT}&user=100&preview=1",
    "/static/console.css",
]


def lives_in(
    fact: str, obj: str, at: datetime, *, conf: float = 0.8, sources: tuple[int, ...] = (1,)
) -> NewCard:
    """A user100 ``lives_in`` fact card without an embedding."""
    return new(
        fact,
        subject="user100",
        predicate="lives_in",
        obj=obj,
        user=100,
        at=at,
        conf=conf,
        sources=sources,
        seed=None,
        card_type="fact",
    )


async def seed(redis: Any, settings: Settings) -> dict[str, str]:
    """Runs in every state, a retired run with markup in its error, an open breaker, memory."""
    store = RunStore(redis, settings)
    ids: dict[str, str] = {}
    for i in range(3):
        result = await store.enqueue(make_request(CHAT, hour=i, texts=[f"I love tea {SCRIPT}"]))
        assert result.run_id
        ids[f"queued{i}"] = result.run_id
    claim = await store.claim("console-test-worker")
    assert claim is not None
    await store.fail(
        claim,
        FailurePlan(retire=True, next_attempt_at_ms=None),
        code="upstream_error",
        reason="backend_unavailable",
        message=f"farm said {ERROR_MARKUP}",
    )
    ids["retired"] = claim.id
    processing = await store.claim("console-test-worker")
    assert processing is not None
    ids["processing"] = processing.id
    breakers = breaker_store(redis, settings)
    for _ in range(settings.breaker_failure_threshold + 1):
        permit = await breakers.acquire(TARGET, lease_seconds=5)
        if permit is None:
            break
        await breakers.record(TARGET, permit, Outcome.FAILURE)
    assert (await breakers.view(TARGET)).circuit is not Circuit.CLOSED
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    cards = CardStore(redis, Keys(settings.key_prefix))

    await cards.apply_run(
        CHAT,
        "seed-run-1",
        RunWrites(
            observed_at=t0,
            cards=[
                lives_in("user100 lives in Porto", "Porto", t0),
                lives_in(f"likes {SCRIPT}", "x", t0),
            ],
            episode=EpisodeWrite(
                summary=f"talked about tea {SCRIPT}",
                topics=["tea"],
                participants=["user100"],
                range_start=t0,
                range_end=t0 + timedelta(hours=1),
                thread_id=0,
                message_count=2,
            ),
        ),
        now=t0,
    )
    return ids


# --- pages ------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", [False, True], ids=["read-only", "with-token"])
async def test_every_page_renders_with_strict_headers(
    redis: Any, settings: Settings, make_client: MakeClient, token: bool
) -> None:
    await seed(redis, settings)
    client = await make_client(with_token(settings) if token else settings)
    for path in PAGES:
        response = await client.get(path)
        body = await response.text()
        assert response.status == 200, (path, body[:500])
        assert response.headers["Content-Security-Policy"] == CSP
        assert "script-src" not in CSP
        assert "unsafe-inline" not in CSP
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        if path.endswith(".css"):
            continue
        assert "<script" not in body, path  # no script at all, and stored markup is escaped
        has_forms = 'name="token"' in body
        if not token:
            assert not has_forms, path  # actions hidden in a read-only console


async def test_overview_counts_and_outage_banner(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    client = await make_client(settings)
    body = await (await client.get("/")).text()
    counts = await RunStore(redis, settings).counts()
    for status in ("queued", "processing", "failed", "retired"):
        found = re.search(rf'id="count-{status}"><span class="n">(\d+)<', body)
        assert found, status
        assert int(found.group(1)) == counts[status], status
    assert '<meta http-equiv="refresh"' in body
    # the breaker is open and it is the route's only target: the route is open
    assert 'id="outage-banner"' in body
    assert 'route <b class="route-open">memory_extraction</b> open since' in body
    waiting = re.search(r'id="runs-waiting">(\d+)<', body)
    assert waiting
    assert int(waiting.group(1)) == counts["queued"]
    # the banner is on every page
    assert 'id="outage-banner"' in await (await client.get("/settings")).text()


async def test_overview_charts_releases_per_hour(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    store = RunStore(redis, settings)
    now = now_ms()
    await store.enqueue(make_request(CHAT), at_ms=now - 2 * HOUR_MS)
    for at in (now - HOUR_MS, now - HOUR_MS + 1, now):  # two releases last hour, one this hour
        claim = await store.claim("console-test-worker", at_ms=at)
        assert claim is not None
        assert await store.release(claim, reason="provider_unavailable", at_ms=at)
    overview = await overview_data(redis, settings, [], now_ms=now)
    assert [h.released for h in overview.hours[-3:]] == [0, 2, 1]
    assert sum(h.released for h in overview.hours) == 3
    assert overview.released == 3  # the all-time total agrees
    expected = {iso(h.start_ms): h.released for h in overview.hours}

    body = await (await make_client(settings)).get("/")
    text = await body.text()
    shown = re.findall(r"<title>([^<]+): (\d+) released</title>", text)
    assert len(shown) == len(overview.hours)
    # the page reads the clock itself: compare by hour, not by position
    assert {when: int(n) for when, n in shown if n != "0"} == {
        when: n for when, n in expected.items() if n
    }
    assert '<span class="sw bar-rel"></span> released' in text
    bars = re.findall(r'height="(\d+)" class="bar-rel"', text)
    assert sorted(int(b) for b in bars if b != "0") == [50, 100]  # peak 2 → 100 px


async def test_run_detail_escapes_markup_and_links_memory(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    ids = await seed(redis, settings)
    client = await make_client(settings)
    body = await (await client.get(f"/runs/{ids['retired']}")).text()
    assert "farm said &lt;img src=x onerror=&#34;alert(7)&#34;&gt;" in body
    assert ERROR_MARKUP not in body
    assert SCRIPT not in body
    assert f'href="/memory/{CHAT}"' in body
    assert "upstream_error" in body
    assert "backend_unavailable" in body
    lease = await (await client.get(f"/runs/{ids['processing']}")).text()
    assert "console-test-worker" in lease
    assert (await client.get("/runs/r000000000000nope")).status == 404


async def test_memory_browser_escapes_and_shows_history_then_turns_off(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    t1 = datetime(2026, 11, 5, tzinfo=UTC)
    cards = CardStore(redis, Keys(settings.key_prefix))
    from memory_worker.cards import ResolutionOp, ResolutionWrite

    old = next(c for c in await cards.all_cards(CHAT) if c.object == "Porto")
    lisbon = lives_in("user100 lives in Lisbon", "Lisbon", t1, conf=0.9, sources=(5,))
    await cards.apply_run(
        CHAT,
        "seed-run-2",
        RunWrites(
            observed_at=t1,
            cards=[lisbon],
            resolutions=[ResolutionWrite(old.id, ResolutionOp.SUPERSEDE, new_index=0)],
        ),
        now=t1,
    )
    client = await make_client(settings)
    body = await (await client.get(f"/memory/{CHAT}")).text()
    assert "user100 lives in Lisbon" in body
    assert "<s>user100 lives in Porto</s>" in body  # the superseded history, under its successor
    assert "&lt;script&gt;" in body
    assert SCRIPT not in body
    assert "talked about tea" in body
    searched = await (await client.get(f"/memory/{CHAT}?q=lisbon")).text()
    assert "user100 lives in Lisbon" in searched
    assert "likes &lt;script" not in searched

    off = await make_client(settings.model_copy(update={"console_show_memory": False}))
    for path in [f"/memory/{CHAT}", "/memory", *PAGES]:
        text = await (await off.get(path)).text()
        for fragment in ("Lisbon", "Porto", "talked about tea", "I love tea"):
            assert fragment not in text, (path, fragment)


async def queue_runs(redis: Any, settings: Settings, count: int, chats: list[int]) -> RunStore:
    """``count`` queued runs an hour apart, dealt round the ``chats`` in turn."""
    store = RunStore(redis, settings)
    for i in range(count):
        await store.enqueue(make_request(chats[i % len(chats)], hour=i))
    return store


async def test_runs_list_pages_and_filters(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await queue_runs(redis, settings, 120, chats=[7000, 7001, 7002])
    client = await make_client(settings)
    first = await (await client.get("/runs?status=queued")).text()
    assert first.count('<a href="/runs/r') == 50
    found = re.search(r'id="next-page" href="([^"]+)"', first)
    assert found
    second = await (await client.get(found.group(1).replace("&amp;", "&"))).text()
    assert second.count('<a href="/runs/r') == 50
    ids_first = set(re.findall(r'href="/runs/(r[0-9a-f]+)"', first))
    ids_second = set(re.findall(r'href="/runs/(r[0-9a-f]+)"', second))
    assert not ids_first & ids_second
    chat = await (await client.get("/runs?chat=7001")).text()
    assert chat.count('<a href="/runs/r') == 40
    assert 'id="next-page"' not in chat


async def test_runs_filter_pages_fill_inside_a_chunk_and_continue(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    store = await queue_runs(redis, settings, 300, chats=[8000, 8001])
    client = await make_client(settings)
    seen: list[str] = []
    path: str | None = "/runs?chat=8001"
    while path:
        text = await (await client.get(path)).text()
        page = re.findall(r'href="/runs/(r[0-9a-f]+)"', text)
        assert len(page) <= 50
        seen += page
        found = re.search(r'id="next-page" href="([^"]+)"', text)
        path = found.group(1).replace("&amp;", "&") if found else None
    expected = [r.id for r in await store.list_runs(limit=1000) if r.chat_id == 8001]
    assert seen == expected  # every run of the chat once, newest first, none skipped
    assert (await client.get("/runs?status=bogus")).status == 400


# --- actions ----------------------------------------------------------------------------------


async def test_actions_refused_without_token_change_nothing(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    for path, form in (("/breakers/reset", {"target": TARGET}), ("/replay", {"scope": "retired"})):
        await console.assert_refused_without_token_or_csrf(redis, settings, make_client, path, form)


async def test_breakers_page_shows_an_ejection_and_its_event_and_reset_clears_it(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    outliers = outlier_store(redis, settings)
    tier = [TARGET, "farm-b/memory-extractor"]
    await outliers.sync(tier, {TARGET: (4, 26)})
    (ejected,) = await outliers.eject(tier, [Verdict(TARGET, Rule.FAILURE_PERCENTAGE, 4, 26)])
    await event_log(redis, settings).emit(
        RoutingEvent(
            EventType.TARGET_EJECTED,
            "memory_extraction",
            target=TARGET,
            reason="failure_percentage",
            counters={"times": ejected.times, "ejected_ms": 30_000},
        )
    )
    client = await make_client(with_token(settings))
    page = await (await client.get("/breakers")).text()
    row = page.split(f'<tr data-target="{TARGET}">', 1)[1].split("</tr>", 1)[0]
    assert "ejection-note" in row
    assert "ejected 30s (1× in a row)" in row or "ejected 29s (1× in a row)" in row
    assert "ejected (failure_percentage) at" in row
    timeline = await (await client.get("/events?type=target_ejected")).text()
    assert "target_ejected" in timeline
    assert TARGET in timeline
    csrf = await csrf_of(client)
    response = await client.post(
        "/breakers/reset", data={"target": TARGET, "csrf": csrf, "token": TOKEN}
    )
    assert response.status == 200
    row = (await response.text()).split(f'<tr data-target="{TARGET}">', 1)[1].split("</tr>")[0]
    assert "ejection-note" not in row
    assert "in · no calls" in row
    assert (await outliers.sync([TARGET]))[0].times == 0


async def test_breaker_reset_with_token_leaves_an_audit_event(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    client = await make_client(with_token(settings))
    csrf = await csrf_of(client)
    response = await client.post(
        "/breakers/reset", data={"target": TARGET, "csrf": csrf, "token": TOKEN}
    )
    assert response.status == 200  # followed the 303 to the breakers page
    assert 'id="reset-done"' in await response.text()
    assert (await breaker_store(redis, settings).view(TARGET)).circuit is Circuit.CLOSED
    events = await (await client.get("/events?type=console_breaker_reset")).text()
    assert "console_breaker_reset" in events
    assert f"target={TARGET}" in events
    missing = await client.post(
        "/breakers/reset", data={"target": "no/such", "csrf": csrf, "token": TOKEN}
    )
    assert missing.status == 404


async def test_a_console_action_keeps_the_routing_event_stream_at_its_setting(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    """A console action appends its audit event with ``MEMORY_ROUTING_EVENTS_MAXLEN``, as the
    workers append theirs: with the stream at 10,500 entries and the setting at 20,000, a
    breaker reset adds one entry and trims none (the event log's own default, 10,000,
    would cut the stream back to about 10,000)."""
    await seed(redis, settings)
    keep = with_token(settings, routing_events_maxlen=20_000)
    keys = Keys(settings.key_prefix)
    await redis.delete(keys.events)
    async with redis.pipeline(transaction=False) as pipe:
        for i in range(10_500):
            pipe.xadd(keys.events, {"type": "seed", "n": str(i)})
        await pipe.execute()
    client = await make_client(keep)
    csrf = await csrf_of(client)
    response = await client.post(
        "/breakers/reset", data={"target": TARGET, "csrf": csrf, "token": TOKEN}
    )
    assert response.status == 200
    assert await redis.xlen(keys.events) == 10_501


async def test_replay_preview_then_confirm(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    ids = await seed(redis, settings)
    client = await make_client(with_token(settings))
    before = await dump_all(redis, settings.key_prefix)
    preview = await client.get("/replay?preview=1&scope=retired&code=upstream_error")
    text = await preview.text()
    assert re.search(r'id="matched">1<', text)
    assert 'id="replay-confirm"' in text
    assert await dump_all(redis, settings.key_prefix) == before  # the dry run wrote nothing
    csrf = await csrf_of(client)
    form = {"scope": "retired", "code": "upstream_error", "csrf": csrf, "token": TOKEN}
    done = await client.post("/replay", data=form)
    body = await done.text()
    assert done.status == 200
    assert re.search(r'id="replayed">1<', body)
    run = await RunStore(redis, settings).get(ids["retired"])
    assert (run.status, run.attempts, run.retired) == (RunStatus.FAILED, 0, False)
    assert run.error_log[-1].kind == "replay"
    events = await (await client.get("/events?workflow=console")).text()
    assert "console_replay" in events
    assert "replayed=1" in events


# --- secrets ----------------------------------------------------------------------------------


async def test_canary_secrets_never_in_any_response(
    redis: Any, settings: Settings, make_client: MakeClient, tmp_path: Path, monkeypatch: Any
) -> None:
    canary = {
        "console_token": "CANARY-console-5b1e",
        "console_read_token": "CANARY-console-read-3f0d",
        "admin_telegram_bot_token": "CANARY-telegram-77aa",
        "admin_webhook_url": "https://hooks.example/CANARY-webhook-c0de",
        "sentry_dsn": "https://CANARY-sentry-1234@o1.ingest.example/42",
    }
    farm_key = "CANARY-farm-key-9e9e"
    monkeypatch.setenv("FARM_API_KEY", farm_key)
    routes = tmp_path / "routes.toml"
    routes.write_text(
        "[[routes.memory_extraction.targets]]\n"
        'provider = "llm-openai"\nmodel = "memory-extractor"\nauth_env = "FARM_API_KEY"\n'
    )
    redis_password = "CANARY-redis-pw-4d4d"
    secret_settings = settings.model_copy(
        update={
            **{k: SecretStr(v) for k, v in canary.items()},
            "redis_url": f"redis://:{redis_password}@127.0.0.1:1/0",
            "routes_file": routes,
        }
    )
    await seed(redis, settings)
    client = await make_client(secret_settings)
    needles = [*canary.values(), farm_key, redis_password, "CANARY"]
    responses = [await client.get("/settings")]  # a read token closes the pages: the login
    responses.append(await console.log_in(client, "wrong"))
    responses.append(await console.log_in(client, canary["console_token"]))
    csrf = await csrf_of(client)
    responses += [await client.get(path) for path in PAGES]
    for form in (
        {"target": TARGET, "token": "wrong"},
        {"target": TARGET, "token": canary["console_token"]},
    ):
        responses.append(await client.post("/breakers/reset", data={**form, "csrf": csrf}))
    responses.append(
        await client.post(
            "/replay",
            data={"scope": "retired", "csrf": csrf, "token": canary["console_token"]},
        )
    )
    for response in responses:
        text = await response.text()
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        for needle in needles:
            assert needle not in text, (response.url, needle)
            assert needle not in headers, (response.url, needle)
    # the routes file was read (its target is listed), so its auth_env's key was in reach
    assert TARGET in await (await client.get("/breakers")).text()
    settings_page = await (await client.get("/settings")).text()
    assert "MEMORY_CONSOLE_TOKEN" in settings_page
    assert "(set, hidden)" in settings_page


async def test_served_by_the_health_server_next_to_metrics(
    redis: Any, settings: Settings, redis_url: str
) -> None:
    """``memory-worker serve``'s server answers the console at / beside /metrics and /readyz."""
    import httpx

    from memory_worker.server import HealthServer

    await seed(redis, settings)
    server = HealthServer(settings, redis_url, host="127.0.0.1", port=0)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            overview = await client.get("/")
            assert overview.status_code == 200
            assert 'id="count-queued"' in overview.text
            assert overview.headers["content-security-policy"] == CSP
            assert (await client.get("/metrics")).status_code == 200
            assert (await client.get("/readyz")).status_code == 200
    finally:
        await server.stop()


async def test_redis_down_answers_503_without_secrets(settings: Settings) -> None:
    """A console whose Redis does not answer says so (503), for pages and actions alike."""
    from memory_worker.storage.connections import client_from_url

    dead = client_from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    app = web.Application()
    add_console(app, dead, with_token(settings))
    async with TestClient(TestServer(app)) as client:
        for path in ("/", "/runs", "/breakers", "/events", f"/memory/{CHAT}", "/replay?preview=1"):
            response = await client.get(path)
            assert response.status == 503, path
            text = await response.text()
            assert 'id="unavailable"' in text
            assert TOKEN not in text
        assert (await client.get("/settings")).status == 200  # needs no Redis
    await dead.aclose()


async def test_loopback_console_refuses_foreign_host_names(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 gets nothing."""
    client = await make_client(settings)
    assert (await client.get("/", headers={"Host": "localhost:9108"})).status == 200
    for host in ("evil.example", "evil.example:9108", "127.0.0.1.evil.example"):
        response = await client.get("/settings", headers={"Host": host})
        assert response.status == 421, host
    # bound off loopback, any host name is answered (the token guards it, not the name)
    anywhere = await make_client(with_token(settings, serve_host="0.0.0.0"))
    bearer = {"Host": "console.internal", "Authorization": f"Bearer {TOKEN}"}
    assert (await anywhere.get("/settings", headers=bearer)).status == 200
    # another loopback address than 127.0.0.1 is loopback too: its own name is answered
    other = await make_client(settings.model_copy(update={"serve_host": "127.0.0.2"}))
    assert (await other.get("/settings", headers={"Host": "127.0.0.2:9108"})).status == 200
    assert (await other.get("/settings", headers={"Host": "evil.example"})).status == 421
