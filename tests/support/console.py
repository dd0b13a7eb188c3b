"""The console under test: a client factory, the action token, CSRF, logging in, the
refused-write check."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from memory_worker.console.app import add_console
from memory_worker.console.auth import CSRF_COOKIE
from memory_worker.settings import Settings
from tests.support.dumps import dump_all

TOKEN = "console-token-7f3a9c"


MakeClient = Callable[[Settings], Awaitable[TestClient[Any, Any]]]


def with_token(settings: Settings, **extra: Any) -> Settings:
    return settings.model_copy(update={"console_token": SecretStr(TOKEN), **extra})


async def csrf_of(client: TestClient[Any, Any]) -> str:
    await client.get("/breakers")
    cookie = client.session.cookie_jar.filter_cookies(client.make_url("/")).get(CSRF_COOKIE)
    assert cookie is not None
    return cookie.value


async def log_in(
    client: TestClient[Any, Any], token: str, next_path: str = "/", **headers: str
) -> Any:
    """POST the login form as a browser does: its page first (the CSRF cookie), then the form.

    Returns the answer unfollowed (303 with the session cookie, or the refusal)."""
    await client.get("/login", headers=headers)
    cookie = client.session.cookie_jar.filter_cookies(client.make_url("/")).get(CSRF_COOKIE)
    assert cookie is not None
    form = {"token": token, "next": next_path, "csrf": cookie.value}
    return await client.post("/login", data=form, allow_redirects=False, headers=headers)


@pytest.fixture
async def make_client(redis: Any) -> AsyncIterator[MakeClient]:
    """Consoles over the test's Redis, closed afterwards (import it where a suite needs it)."""
    clients: list[TestClient[Any, Any]] = []

    async def make(settings: Settings) -> TestClient[Any, Any]:
        app = web.Application()
        add_console(app, redis, settings)
        client: TestClient[Any, Any] = TestClient(TestServer(app))
        await client.start_server()
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


async def assert_refused_without_token_or_csrf(
    redis: Any, settings: Settings, make_client: MakeClient, path: str, form: dict[str, str]
) -> TestClient[Any, Any]:
    """POSTing ``form`` to ``path`` is refused with 403 and changes nothing: from a read-only
    console, without the token, with a wrong one, without the CSRF pair and with a forged one.

    Returns the read-only console.
    """
    read_only = await make_client(settings)
    tokened = await make_client(with_token(settings))
    before = await dump_all(redis, settings.key_prefix)
    for client, token in ((read_only, TOKEN), (tokened, ""), (tokened, "wrong-token-123")):
        csrf = await csrf_of(client)
        response = await client.post(path, data={**form, "csrf": csrf, "token": token})
        assert response.status == 403, (path, token)
        assert 'id="refused"' in await response.text()
    for pair in ({}, {"csrf": "x" * 32}):  # a right token without the CSRF pair, or a forged one
        response = await tokened.post(path, data={**form, "token": TOKEN, **pair})
        assert response.status == 403, (path, pair)
    assert await dump_all(redis, settings.key_prefix) == before
    return read_only
