"""The console's read gate and login (§15): the HTTP side of :mod:`.auth`.

When pages need a token (the console is bound off loopback, or a read token is set),
:meth:`Gate.check` lets a request through with

- a login cookie (``mw_console_session``: HttpOnly, ``SameSite=Strict``, an HMAC under a
  key this process drew at start, never the token; :data:`SESSION_COOKIE`), set by
  ``POST /login`` with either token typed into the login form (no JavaScript needed), or
- ``Authorization: Bearer <token>`` (scripts), either token;

anything else gets the login page with 401. ``/login``, ``/logout`` and the stylesheet
(a file of the package, no data) are the only paths open without one.

The login form carries the CSRF pair like every action, so a page elsewhere cannot post
guesses from an operator's browser. Every wrong token — at the login form, in a bearer
header, in an action's form
(:meth:`Gate.wrong_token`) — costs the client address one try of its bucket
(:class:`FailureLimiter`); an empty bucket answers 429 with ``Retry-After`` before any
token is compared, so a guess is never checked while the client must wait. Successes
cost nothing, and a logged-in browser is never slowed (its cookie is not a guess).
Refusals are logged with the client address and what was tried, never a token.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aiohttp import web

from memory_worker.console.auth import (
    CSRF_COOKIE,
    Bucket,
    LimitPolicy,
    TokenKind,
    after_failure,
    client_key,
    csrf_pair_ok,
    is_full,
    mint_session,
    reads_need_token,
    session_kind,
    token_kind,
    wait_for,
)
from memory_worker.logs import get_logger

if TYPE_CHECKING:
    from memory_worker.settings import Settings

log = get_logger(__name__)

SESSION_COOKIE = "mw_console_session"
#: Paths the gate never closes: the login itself and the stylesheet the login page uses.
OPEN_PATHS = frozenset({"/login", "/logout", "/static/console.css"})
#: Client addresses the limiter remembers at most (full buckets are forgotten first).
MAX_CLIENTS = 4096
REALM = 'Bearer realm="memory-worker console"'


class FailureLimiter:
    """Wrong-token buckets per client address (:mod:`.auth` decides, this only keeps them)."""

    def __init__(
        self, policy: LimitPolicy, clock: Callable[[], float], max_clients: int = MAX_CLIENTS
    ) -> None:
        self.policy = policy
        self.clock = clock
        self.max_clients = max_clients
        self.buckets: OrderedDict[str, Bucket] = OrderedDict()

    def wait(self, client: str) -> int:
        """Seconds ``client`` must wait before its next token is looked at (0: none)."""
        return wait_for(self.buckets.get(client), self.clock(), self.policy)

    def failed(self, client: str) -> None:
        now = self.clock()
        self.buckets[client] = after_failure(self.buckets.get(client), now, self.policy)
        self.buckets.move_to_end(client)
        if len(self.buckets) > self.max_clients:
            self._forget(now)

    def _forget(self, now: float) -> None:
        """Drop refilled buckets; if every one is still draining, the least recent."""
        for client in [c for c, b in self.buckets.items() if is_full(b, now, self.policy)]:
            del self.buckets[client]
        while len(self.buckets) > self.max_clients:
            self.buckets.popitem(last=False)


#: How the gate renders its pages: :meth:`memory_worker.console.app.Console.render`.
Render = Callable[..., Awaitable[web.Response]]


def safe_next(value: object) -> str:
    """Where to go after logging in: a path of this console, never another site."""
    text = str(value or "")
    if not text.startswith("/") or text.startswith(("//", "/\\")) or not text.isprintable():
        return "/"
    if text.split("?")[0] in ("/login", "/logout"):
        return "/"
    return text


class Gate:
    """Who may read the console's pages; the limiter every token check shares."""

    def __init__(self, render: Render, settings: Settings, clock: Callable[[], float]) -> None:
        self.render = render
        self.settings = settings
        self.clock = clock
        self.closed = reads_need_token(settings.serve_host, settings.console_read_token)
        self.key = secrets.token_bytes(32)  # sessions end with the process
        self.max_age_s = settings.console_session_hours * 3600.0
        self.limiter = FailureLimiter(
            LimitPolicy(settings.console_auth_burst, settings.console_auth_per_minute), clock
        )

    def session(self, request: web.Request) -> TokenKind | None:
        value = request.cookies.get(SESSION_COOKIE)
        if not value:
            return None
        return session_kind(value, self.key, self.clock(), self.max_age_s)

    def kind_of(self, given: str) -> TokenKind | None:
        s = self.settings
        return token_kind(given, s.console_token, s.console_read_token)

    async def check(self, request: web.Request) -> web.StreamResponse | None:
        """None when ``request`` may read its page, else the answer that refuses it."""
        if not self.closed or request.path in OPEN_PATHS or self.session(request):
            return None
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() == "bearer" and given.strip():
            return self._bearer(request, given.strip())
        back = request.path_qs if request.method == "GET" else "/"  # never back to a POST
        return await self.login_page(request, status=401, next_path=back)

    def _bearer(self, request: web.Request, given: str) -> web.StreamResponse | None:
        client = client_key(request.remote)
        wait = self.limiter.wait(client)
        if wait:
            self._log_limited(request, client, "bearer", wait)
            return web.Response(
                text=f"too many wrong tokens: retry in {wait} s\n",
                status=429,
                headers={"Retry-After": str(wait)},
            )
        if self.kind_of(given) is not None:
            return None
        self.wrong_token(request, client, "bearer")
        return web.Response(
            text="wrong token\n",
            status=401,
            headers={"WWW-Authenticate": REALM + ', error="invalid_token"'},
        )

    def wrong_token(self, request: web.Request, client: str, tried: str) -> None:
        """Count a wrong token against ``client`` and log it (never the token)."""
        self.limiter.failed(client)
        log.warning("console.token_refused", client=client, tried=tried, path=request.path)

    def _log_limited(self, request: web.Request, client: str, tried: str, wait: int) -> None:
        log.warning(
            "console.token_rate_limited",
            client=client,
            tried=tried,
            path=request.path,
            retry_after_s=wait,
        )

    def limited(self, request: web.Request, tried: str) -> tuple[str, int]:
        """The client's key and how long it must wait (logged when it must)."""
        client = client_key(request.remote)
        wait = self.limiter.wait(client)
        if wait:
            self._log_limited(request, client, tried, wait)
        return client, wait

    # --- the login form -------------------------------------------------------------------------
    async def login_page(
        self,
        request: web.Request,
        *,
        status: int = 200,
        next_path: str = "/",
        problem: str = "",
        retry_after: int = 0,
    ) -> web.Response:
        response = await self.render(
            request,
            "login.html.j2",
            status=status,
            banner=False,
            next=safe_next(next_path),
            problem=problem,
        )
        if status == 401:
            response.headers["WWW-Authenticate"] = REALM
        if retry_after:
            response.headers["Retry-After"] = str(retry_after)
        return response

    async def login_form(self, request: web.Request) -> web.Response:
        return await self.login_page(request, next_path=request.query.get("next", "/"))

    async def login(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        next_path = safe_next(form.get("next"))
        if not csrf_pair_ok(request.cookies.get(CSRF_COOKIE, ""), str(form.get("csrf", ""))):
            # a form posted from elsewhere (or a stale page): no guess, nothing counted
            problem = "Missing or stale CSRF token: reload the page and try again."
            return await self.login_page(request, status=403, next_path=next_path, problem=problem)
        client, wait = self.limited(request, "login")
        if wait:
            problem = f"Too many wrong tokens from your address: try again in {wait} s."
            return await self.login_page(
                request, status=429, next_path=next_path, problem=problem, retry_after=wait
            )
        kind = self.kind_of(str(form.get("token", "")))
        if kind is None:
            self.wrong_token(request, client, "login")
            return await self.login_page(
                request, status=401, next_path=next_path, problem="Wrong token."
            )
        log.info("console.login", client=client, kind=kind)
        response = web.Response(status=303, headers={"Location": next_path})
        response.set_cookie(
            SESSION_COOKIE,
            mint_session(self.key, kind, self.clock()),
            httponly=True,
            samesite="Strict",
            secure=request.secure,
            path="/",
            max_age=int(self.max_age_s),
        )
        return response

    async def logout(self, _: web.Request) -> web.StreamResponse:
        response = web.Response(status=303, headers={"Location": "/login"})
        response.del_cookie(SESSION_COOKIE, path="/")
        return response
