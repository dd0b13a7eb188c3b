"""The console's forget action (§14, §15): a dry-run preview with counts, then the forget.

``GET /forget?chat=…&user=…&preview=1`` counts what would go (a dry run of
:class:`~memory_worker.upkeep.forgetter.Forgetter`: nothing is written, read-only consoles
included); ``POST /forget`` needs the console token and the CSRF pair like every
action, forgets with actor ``console`` (the forget's own audit event, shown by
``memory-worker report``) and leaves a ``console_forget`` event on the routing-event
stream (ids and counts only). The pages show ids and counts, never a card or message
text, so they render with ``MEMORY_CONSOLE_SHOW_MEMORY=0`` too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from memory_worker.console import data
from memory_worker.console.actions import ACTOR, Console
from memory_worker.errors import ForgetInputError
from memory_worker.logs import get_logger
from memory_worker.privacy.forget import ForgetResult, ForgetScope
from memory_worker.upkeep.forgetter import Forgetter

if TYPE_CHECKING:
    pass

log = get_logger(__name__)


def parse_form(q: Any) -> ForgetScope:
    """The scope a form names (``chat`` required, ``user`` optional), or ValueError."""
    chat = str(q.get("chat") or "").strip()
    user = str(q.get("user") or "").strip()
    if not chat:
        raise ValueError("chat: a chat id is required (a user is forgotten within one chat)")
    try:
        chat_id = int(chat)
    except ValueError:
        raise ValueError(f"chat {chat!r}: expected an integer chat id") from None
    try:
        user_id = int(user) if user else None
    except ValueError:
        raise ValueError(f"user {user!r}: expected an integer user id") from None
    return ForgetScope(chat_id, user_id)


def what(scope: ForgetScope) -> str:
    if scope.user_id is None:
        return f"chat {scope.chat_id}"
    return f"user {scope.user_id} in chat {scope.chat_id}"


def _forgetter(console: Console) -> Forgetter:
    return Forgetter(console.redis, console.settings, cards_redis=console.cards)


async def _page(
    console: Console,
    request: web.Request,
    q: Any,
    *,
    result: ForgetResult | None = None,
    problems: list[str] | None = None,
    status: int = 200,
) -> web.Response:
    return await console.render(
        request,
        "forget.html.j2",
        status=status,
        q=q,
        r=result,
        what=what(ForgetScope(result.chat_id, result.user_id)) if result else "",
        problems=problems or [],
    )


async def forget_form(console: Console, request: web.Request) -> web.Response:
    """The form; with ``preview`` the dry run's counts (nothing written)."""
    q = request.query
    if not q.get("preview"):
        return await _page(console, request, q)
    try:
        scope = parse_form(q)
        preview = await _forgetter(console).forget(scope, dry_run=True, actor=ACTOR)
    except ForgetInputError as exc:  # an unknown chat (a ValueError too: caught first)
        return await _page(console, request, q, problems=[str(exc)], status=404)
    except ValueError as exc:
        return await _page(console, request, q, problems=[str(exc)], status=400)
    return await _page(console, request, q, result=preview)


async def forget(console: Console, request: web.Request) -> web.Response:
    """Forget for real (token and CSRF checked first: refused → 403, nothing changed)."""
    form = await console.authorize(request, "forget")
    if isinstance(form, web.Response):
        return form
    try:
        scope = parse_form(form)
        done = await _forgetter(console).forget(scope, actor=ACTOR)
    except ForgetInputError as exc:
        return await _page(console, request, form, problems=[str(exc)], status=404)
    except ValueError as exc:
        return await _page(console, request, form, problems=[str(exc)], status=400)
    counts = {k: int(getattr(done.counts, k)) for k in _COUNTED}
    context = {"chat_id": str(done.chat_id), "scope": done.scope}
    if done.user_id is not None:
        context["user_id"] = str(done.user_id)
    await data.audit(
        console.redis, console.settings, "console_forget", counters=counts, context=context
    )
    log.info("console.forget", scope=done.scope, **counts)
    return await _page(console, request, form, result=done)


_COUNTED = ("cards", "vectors", "episodes", "links", "runs", "messages")
