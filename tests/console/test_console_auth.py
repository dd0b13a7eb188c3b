"""The console's pages are personal data (§15), through its HTTP interface.

Bound off loopback (the settings' ``serve_host``; the test server itself listens on
loopback, the netns test in ``test_console_netns.py`` does it for real) every page and
action answers 401 without a token and shows nothing of the store; a login (either token,
an HMAC cookie) or a bearer header opens the pages; only the full token opens actions;
wrong tokens are rate-limited per client address with 429 + Retry-After (time injected);
refusals are logged without the token. A console that would be served off loopback with
no token never mounts, and the metrics-only and worker servers carry no console at all.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from llm_client import Circuit
from memory_worker.console import add_console
from memory_worker.console.app import CSP
from memory_worker.console.gate import SESSION_COOKIE
from memory_worker.errors import ConsoleExposedError
from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.wiring import breaker_store
from tests.console.test_console import CHAT, PAGES, TARGET, seed
from tests.support.clock import ManualClock
from tests.support.console import TOKEN, csrf_of, log_in
from tests.support.dumps import dump_all
from tests.support.logs import capture_logs

READ = "read-token-5d0e8b21"
NETWORK = "0.0.0.0"
ACTIONS = [
    ("/breakers/reset", {"target": TARGET}),
    ("/replay", {"scope": "retired"}),
    ("/forget", {"chat": str(CHAT)}),
]
#: Page fragments that come from the seeded store (cards, messages, runs, breakers).
STORE_FRAGMENTS = ("Porto", "I love tea", "console-test-worker", TARGET, "upstream_error")

Client = TestClient[Any, Any]
MakeGated = Callable[..., Awaitable[Client]]


def exposed(settings: Settings, *, full: bool = True, read: bool = False, **extra: Any) -> Settings:
    update: dict[str, Any] = {"serve_host": NETWORK, **extra}
    if full:
        update["console_token"] = SecretStr(TOKEN)
    if read:
        update["console_read_token"] = SecretStr(READ)
    return settings.model_copy(update=update)


@web.middleware
async def as_client(request: web.Request, handler: Any) -> web.StreamResponse:
    """The test says which address a request comes from (``X-Test-Client``)."""
    fake = request.headers.get("X-Test-Client")
    return await handler(request.clone(remote=fake) if fake else request)  # type: ignore[no-any-return]


@pytest.fixture
async def make_gated(redis: Any) -> AsyncIterator[MakeGated]:
    clients: list[Client] = []

    async def make(settings: Settings, clock: ManualClock | None = None) -> Client:
        app = web.Application(middlewares=[as_client])
        add_console(app, redis, settings, clock=clock or ManualClock(1_000_000.0))
        client: Client = TestClient(TestServer(app))
        await client.start_server()
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


async def login(client: Client, token: str, **headers: str) -> Any:
    return await log_in(client, token, **headers)


def assert_nothing_of_the_store(body: str, where: str) -> None:
    body = re.sub(r'name="next" value="[^"]*"', "", body)  # the page asked for, echoed back
    for fragment in STORE_FRAGMENTS:
        assert fragment not in body, (where, fragment)
    assert 'id="outage-banner"' not in body, where


@pytest.mark.parametrize(
    ("full", "read"),
    [(True, False), (False, True), (True, True)],
    ids=["full-token", "read-token", "both"],
)
async def test_off_loopback_every_page_and_action_needs_a_token(
    redis: Any, settings: Settings, make_gated: MakeGated, full: bool, read: bool
) -> None:
    ids = await seed(redis, settings)
    client = await make_gated(exposed(settings, full=full, read=read))
    pages = [p for p in PAGES if not p.startswith("/static/")] + [f"/runs/{ids['retired']}"]
    for path in pages:
        response = await client.get(path)
        body = await response.text()
        assert response.status == 401, path
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert response.headers["Content-Security-Policy"] == CSP
        assert 'id="login-form"' in body, path
        assert_nothing_of_the_store(body, path)
        for run_id in ids.values():  # (the page asked for is echoed in the login's next)
            assert run_id not in body or run_id in path, (path, run_id)
    before = await dump_all(redis, settings.key_prefix)
    csrf = await csrf_of_login_page(client)
    for path, form in ACTIONS:
        response = await client.post(path, data={**form, "csrf": csrf, "token": TOKEN})
        assert response.status == 401, path
        body = await response.text()
        assert_nothing_of_the_store(body, path)
        assert 'name="next" value="/"' in body  # after the login, a page, not the POST
    assert await dump_all(redis, settings.key_prefix) == before
    assert (await client.get("/static/console.css")).status == 200  # the login page's styles

    tokens = [t for t, on in ((TOKEN, full), (READ, read)) if on]
    for token in tokens:  # a script: a bearer header on every request
        bearer = {"Authorization": f"Bearer {token}"}
        for path in pages:
            response = await client.get(path, headers=bearer)
            assert response.status == 200, (path, token)
        assert "Porto" in await (await client.get(f"/memory/{CHAT}", headers=bearer)).text()
    for token in tokens:  # a browser: the login form, then a cookie
        browser = await make_gated(exposed(settings, full=full, read=read))
        assert (await login(browser, token)).status == 303
        for path in pages:
            response = await browser.get(path)
            assert response.status == 200, (path, token)
        overview = await (await browser.get("/")).text()
        assert 'id="outage-banner"' in overview
        assert 'id="logout"' in overview


async def csrf_of_login_page(client: Client) -> str:
    """The CSRF cookie a refused page hands out (an attacker has one too)."""
    await client.get("/")
    cookie = client.session.cookie_jar.filter_cookies(client.make_url("/")).get("mw_console_csrf")
    assert cookie is not None
    return cookie.value


async def test_login_cookie_is_an_httponly_strict_hmac_that_expires(
    redis: Any, settings: Settings, make_gated: MakeGated
) -> None:
    clock = ManualClock(1_000_000.0)
    client = await make_gated(exposed(settings, console_session_hours=2.0), clock)
    refused = await client.get("/runs?status=failed")
    assert 'name="next" value="/runs?status=failed"' in await refused.text()
    response = await log_in(client, TOKEN, "/runs?status=failed")
    assert response.status == 303
    assert response.headers["Location"] == "/runs?status=failed"
    set_cookie = response.headers["Set-Cookie"]
    assert set_cookie.startswith(f"{SESSION_COOKIE}=")
    assert "HttpOnly" in set_cookie
    assert "SameSite=Strict" in set_cookie
    assert "Max-Age=7200" in set_cookie
    assert TOKEN not in set_cookie
    assert (await client.get("/settings")).status == 200
    clock.advance(2 * 3600 - 1)
    assert (await client.get("/settings")).status == 200
    clock.advance(2)
    assert (await client.get("/settings")).status == 401  # the server, not the browser, ends it

    assert (await login(client, TOKEN)).status == 303
    assert (await client.get("/settings")).status == 200
    out = await client.post("/logout", allow_redirects=False)
    assert (out.status, out.headers["Location"]) == (303, "/login")
    assert (await client.get("/settings")).status == 401
    # a login from another process (another key) is no session here
    other = await make_gated(exposed(settings), clock)
    assert (await login(other, TOKEN)).status == 303
    cookie = other.session.cookie_jar.filter_cookies(other.make_url("/"))[SESSION_COOKIE]
    stolen = {"Cookie": f"{SESSION_COOKIE}={cookie.value}"}
    assert (await client.get("/settings", headers=stolen)).status == 401
    # after a login, never off to another site
    away = await log_in(client, TOKEN, "//evil.example/")
    assert away.headers["Location"] == "/"


async def test_the_read_token_opens_no_action(
    redis: Any, settings: Settings, make_gated: MakeGated
) -> None:
    await seed(redis, settings)
    client = await make_gated(exposed(settings, read=True))
    assert (await login(client, READ)).status == 303
    csrf = await csrf_of(client)
    before = await dump_all(redis, settings.key_prefix)
    for path, form in ACTIONS:
        response = await client.post(path, data={**form, "csrf": csrf, "token": READ})
        assert response.status == 403, path
        assert 'id="refused"' in await response.text()
    assert await dump_all(redis, settings.key_prefix) == before
    done = await client.post(
        "/breakers/reset", data={"target": TARGET, "csrf": csrf, "token": TOKEN}
    )
    assert 'id="reset-done"' in await done.text()
    assert (await breaker_store(redis, settings).view(TARGET)).circuit is Circuit.CLOSED


async def test_loopback_stays_readable_and_a_read_token_closes_it(
    redis: Any, settings: Settings, make_gated: MakeGated
) -> None:
    await seed(redis, settings)
    open_console = await make_gated(settings.model_copy(update={"console_token": SecretStr(TOKEN)}))
    assert "Porto" in await (await open_console.get(f"/memory/{CHAT}")).text()
    assert (await open_console.get("/login")).status == 404  # nothing to log in to
    assert 'id="logout"' not in await (await open_console.get("/")).text()
    closed = await make_gated(settings.model_copy(update={"console_read_token": SecretStr(READ)}))
    assert (await closed.get(f"/memory/{CHAT}")).status == 401
    assert (await login(closed, READ)).status == 303
    assert "Porto" in await (await closed.get(f"/memory/{CHAT}")).text()


async def test_wrong_tokens_are_rate_limited_per_client_address(
    redis: Any, settings: Settings, make_gated: MakeGated
) -> None:
    """Three wrong tries back to back, then one per 10 s; a guess is not even looked at while
    the client must wait; another address and a logged-in browser are not slowed."""
    await seed(redis, settings)
    clock = ManualClock(1_000_000.0)
    limited = exposed(settings, read=True, console_auth_burst=3, console_auth_per_minute=6)
    client = await make_gated(limited, clock)
    operator = {"X-Test-Client": "198.51.100.10"}
    attacker = {"X-Test-Client": "203.0.113.66"}
    assert (await login(client, TOKEN, **operator)).status == 303  # logged in before the attack
    session = client.session.cookie_jar.filter_cookies(client.make_url("/"))[SESSION_COOKIE]
    logged_in = {**operator, "Cookie": f"{SESSION_COOKIE}={session.value}"}
    client.session.cookie_jar.clear()

    async def by_form(token: str) -> Any:
        return await login(client, token, **attacker)

    async def by_bearer(token: str) -> Any:
        return await client.get("/", headers={**attacker, "Authorization": f"Bearer {token}"})

    kinds = [by_form, by_bearer, by_form]
    for attempt in kinds:
        assert (await attempt("guess-0001")).status == 401
    for attempt in kinds:  # the right token too: nothing is compared while it must wait
        for token in ("guess-0002", TOKEN, READ):
            answer = await attempt(token)
            assert answer.status == 429
            assert answer.headers["Retry-After"] == "10"
    csrf = await csrf_of_login_page(client)
    form = {"target": TARGET, "csrf": csrf, "token": TOKEN}
    # a reader's session from the attacker's address: the read gate passes, the action's
    # token check is where the guess would go
    cookie = {**attacker, "Cookie": f"{SESSION_COOKIE}={session.value}; mw_console_csrf={csrf}"}
    action = await client.post("/breakers/reset", data=form, headers=cookie)
    assert action.status == 429  # the action's token check shares the bucket
    assert action.headers["Retry-After"] == "10"
    assert (await breaker_store(redis, settings).view(TARGET)).circuit is not Circuit.CLOSED

    assert (await client.get("/settings", headers=logged_in)).status == 200  # never slowed
    elsewhere = await login(client, "guess-0003", **{"X-Test-Client": "192.0.2.44"})
    assert elsewhere.status == 401  # another address: its guess is looked at (and wrong)
    clock.advance(9)
    assert (await login(client, TOKEN, **attacker)).status == 429
    assert (await login(client, TOKEN, **attacker)).headers["Retry-After"] == "1"
    clock.advance(1)
    assert (await login(client, "guess-0004", **attacker)).status == 401  # one try a 10 s
    assert (await login(client, TOKEN, **attacker)).status == 429
    clock.advance(10)
    assert (await login(client, TOKEN, **attacker)).status == 303  # success costs nothing
    assert (await login(client, TOKEN, **attacker)).status == 303


async def test_a_login_posted_from_elsewhere_is_refused_and_costs_nothing(
    redis: Any, settings: Settings, make_gated: MakeGated
) -> None:
    """A page elsewhere posting guesses from the operator's browser has no CSRF pair (the
    SameSite=Strict cookie stays home): refused before any token is looked at, uncounted."""
    client = await make_gated(exposed(settings, console_auth_burst=1))
    for pair in ({}, {"csrf": "x" * 32}):
        for token in ("guess-1", TOKEN):
            form = {"token": token, "next": "/", **pair}
            answer = await client.post("/login", data=form, allow_redirects=False)
            assert answer.status == 403
            assert SESSION_COOKIE not in answer.headers.get("Set-Cookie", "")
    assert (await login(client, "guess-2")).status == 401  # the one try is still there
    assert (await login(client, TOKEN)).status == 429


async def test_refused_tokens_are_logged_without_the_token(
    redis: Any, settings: Settings, make_gated: MakeGated
) -> None:
    canary = "CANARY-guess-91ce"
    client = await make_gated(exposed(settings, console_auth_burst=2), ManualClock(5.0))
    with capture_logs() as logs:
        await login(client, canary)
        await client.get("/", headers={"Authorization": f"Bearer {canary}"})
        await login(client, canary)
        await login(client, TOKEN)
    refused = [e for e in logs if e["event"] == "console.token_refused"]
    assert [e["tried"] for e in refused] == ["login", "bearer"]
    assert all(e["client"] == "127.0.0.1" for e in refused)
    assert [e["event"] for e in logs].count("console.token_rate_limited") == 2
    for entry in logs:
        for value in entry.values():
            assert canary not in str(value)
            assert TOKEN not in str(value)


async def test_the_gate_answers_before_redis_is_touched(settings: Settings) -> None:
    """Redis gone: a refused reader still gets the login page (401, not a 503 that would
    say anything about the store), a login still works, a token holder sees the 503."""
    from memory_worker.storage.connections import client_from_url

    dead = client_from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    app = web.Application()
    add_console(app, dead, exposed(settings))
    try:
        async with TestClient(TestServer(app)) as client:
            for path in ("/", "/runs", f"/memory/{CHAT}", "/events"):
                response = await client.get(path)
                assert response.status == 401, path
                assert 'id="unavailable"' not in await response.text()
            assert (await login(client, TOKEN)).status == 303
            assert (await client.get("/runs")).status == 503
            assert (await client.get("/settings")).status == 200  # needs no Redis
    finally:
        await dead.aclose()


async def test_an_exposed_console_without_a_token_never_mounts(
    redis: Any, settings: Settings, redis_url: str
) -> None:
    for host in (NETWORK, "::", "", "10.0.0.5", "console.internal"):
        bare = settings.model_copy(update={"serve_host": host})
        with pytest.raises(ConsoleExposedError, match="MEMORY_CONSOLE_TOKEN"):
            add_console(web.Application(), redis, bare)
    # the server gives up before it listens (.invalid never resolves: even a broken check
    # could not put anything on a network)
    server = HealthServer(settings, redis_url, host="console.invalid", port=0)
    with pytest.raises(ConsoleExposedError):
        await server.start()
    assert server._runner is None
    assert server._redis is None  # its Redis client closed again


@pytest.mark.parametrize("how", ["metrics-only", "run-serve"])
async def test_metrics_only_and_worker_servers_carry_no_console(
    redis: Any, settings: Settings, redis_url: str, how: str
) -> None:
    heartbeat = (lambda: 1) if how == "run-serve" else None
    server = HealthServer(
        settings, redis_url, host="127.0.0.1", port=0, console=False, worker_heartbeat=heartbeat
    )
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            for path in ("/", "/runs", f"/memory/{CHAT}", "/settings", "/login"):
                assert (await client.get(path)).status_code == 404, path
            assert (await client.get("/metrics")).status_code == 200
            assert (await client.get("/healthz")).status_code == 200
    finally:
        await server.stop()


def test_serve_off_loopback_without_a_token_exits_2_with_one_line(settings: Settings) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CONSOLE_")}
    env |= {"REDIS_URL": reveal(settings.redis_url) or "", "MEMORY_LOG_FORMAT": "json"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memory_worker",
            "serve",
            "--host",
            "console.invalid",
            "--port",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: the console would serve chats' memory on console.invalid")
    assert "MEMORY_CONSOLE_TOKEN" in lines[0]
