"""The console's card actions (§10, §15): retract or correct one card, a preview first.

``GET /cards/{chat}/{card}`` shows the card (the memory browser's: its text, so
``MEMORY_CONSOLE_SHOW_MEMORY=0`` turns it off) with a retract form (a reason) and a correct
form (the new fact). Submitting one is ``GET …?action=retract&reason=…&preview=1`` (or
``action=correct&fact=…``): the preview says what will happen, writing nothing, and holds
the confirm form. ``POST /cards/{chat}/{card}`` needs the console token and the CSRF pair
like every action, calls ``MemoryQueue.retract`` / ``correct`` with actor ``console`` (their
audit events, no text) and leaves a ``console_retract`` / ``console_correct`` event on the
routing-event stream (ids only). Bad input is the page with its problem, nothing changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from memory_worker.console import data
from memory_worker.console.actions import ACTOR, Console
from memory_worker.errors import CardNotFound, CardNotLive, InvalidCorrection
from memory_worker.logs import get_logger

if TYPE_CHECKING:
    from memory_worker.api import MemoryQueue
    from memory_worker.cards import Card
    from memory_worker.settings import Settings

log = get_logger(__name__)

ACTIONS = ("retract", "correct")


def _queue(console: Console) -> MemoryQueue:
    """The bot's API over the console's clients (its recall walker built on first use)."""
    from memory_worker.api import MemoryQueue
    from memory_worker.cards import CardStore
    from memory_worker.storage.connections import RedisHandle

    queue = MemoryQueue(RedisHandle(console.redis, ""), console.settings)
    queue._cards = CardStore(console.cards, queue.keys)
    return queue


def _ids(request: web.Request) -> tuple[int, str] | None:
    try:
        chat_id = int(request.match_info["chat_id"])
        card_id = str(int(request.match_info["card_id"]))
    except ValueError:
        return None
    return chat_id, card_id


async def _page(
    console: Console,
    request: web.Request,
    card: Card,
    *,
    form: Any,
    preview: str = "",
    done: Card | None = None,
    problems: list[str] | None = None,
    status: int = 200,
) -> web.Response:
    return await console.render(
        request,
        "card.html.j2",
        status=status,
        c=card,
        q=form,
        preview=preview,
        done=done,
        problems=problems or [],
    )


async def card_page(console: Console, request: web.Request) -> web.Response:
    """The card with its forms; with ``preview`` what the chosen action will do."""
    if not console.settings.console_show_memory:
        return await console.render(request, "memory_off.html.j2")
    ids = _ids(request)
    queue = _queue(console)
    card = None if ids is None else await queue.cards.get_card(*ids)
    if card is None:
        return await console.render(request, "missing.html.j2", status=404, what="that card")
    q = request.query
    action = q.get("action", "")
    if not q.get("preview") or action not in ACTIONS:
        return await _page(console, request, card, form=q)
    problems = _check(action, q, card, console.settings)
    if problems:
        return await _page(console, request, card, form=q, problems=problems, status=400)
    return await _page(console, request, card, form=q, preview=action)


def _check(action: str, form: Any, card: Card, settings: Settings) -> list[str]:
    """What is wrong with the request (nothing written either way)."""
    from memory_worker.cards.corrections import check_fact, check_reason

    try:
        if action == "retract":
            check_reason(form.get("reason", ""))
            if card.status.value == "retracted":
                return [f"card {card.ref} is already retracted"]
        else:
            check_fact(form.get("fact", ""), settings.card_max_bytes)
            if not card.live:
                return [f"card {card.ref} is {card.status.value}: only a live card is corrected"]
    except InvalidCorrection as exc:
        return [str(exc)]
    return []


async def card_act(console: Console, request: web.Request) -> web.Response:
    """Retract or correct for real (token and CSRF checked first: refused → 403)."""
    form = await console.authorize(request, "card")
    if isinstance(form, web.Response):
        return form
    ids = _ids(request)
    queue = _queue(console)
    card = None if ids is None else await queue.cards.get_card(*ids)
    action = form.get("action", "")
    if card is None or action not in ACTIONS:
        return await console.render(request, "missing.html.j2", status=404, what="that card")
    try:
        if action == "retract":
            done = await queue.retract(card, actor=ACTOR, reason=form.get("reason", ""))
        else:
            done = await queue.correct(card, form.get("fact", ""), actor=ACTOR)
    except (InvalidCorrection, CardNotLive, CardNotFound) as exc:
        return await _page(console, request, card, form=form, problems=[str(exc)], status=400)
    finally:
        await queue._close_recall()
    context = {"chat_id": str(card.chat_id), "card_id": card.id, "new_card_id": done.id}
    await data.audit(console.redis, console.settings, f"console_{action}", context=context)
    log.info(f"console.card_{action}", chat_id=card.chat_id, card_id=card.id, now_id=done.id)
    return await _page(console, request, card, form={}, done=done)
