"""What the console's actions share: the console they act through, and who acts.

The forget action (:mod:`~memory_worker.console.forget_action`) and a card's retract or
correct (:mod:`~memory_worker.console.card_action`) each take the app's
:class:`memory_worker.console.app.Console` through this small protocol (so they need not
import the app), and leave their audit events as :data:`ACTOR`.
"""

from __future__ import annotations

from typing import Any, Protocol

from aiohttp import web
from arq.connections import ArqRedis

from memory_worker.settings import Settings
from memory_worker.storage.connections import CardsRedis

#: Who the audit events of a console action name as the actor.
ACTOR = "console"


class Console(Protocol):
    """What an action needs of :class:`memory_worker.console.app.Console`."""

    redis: ArqRedis
    settings: Settings
    cards: CardsRedis

    async def render(
        self, request: web.Request, template: str, *, status: int = 200, **context: Any
    ) -> web.Response: ...

    async def authorize(
        self, request: web.Request, action: str
    ) -> web.Response | dict[str, str]: ...
