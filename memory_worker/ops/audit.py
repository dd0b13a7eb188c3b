"""The audit trail: what an operator did, on the routing-event stream (§15).

Every operator action that changes state leaves one event here, from the console or the
command line alike: a breaker reset, a replay (by filter or of one run), a run's cancel, a
forget, a card's retract or correct. An event names the action (``console_…`` or ``cli_…``),
identifiers and counts — never message or card text — and, from the command line, the
operator's login. The events page shows them under the ``console`` workflow (the audit's lane
of the stream, whoever acted), and ``report --type`` selects them.
"""

from __future__ import annotations

import getpass
from collections.abc import Mapping

from redis.asyncio import Redis

from llm_client import RoutingEvent
from memory_worker.settings import Settings
from memory_worker.wiring import event_log

#: The audit's lane of the routing-event stream (its ``workflow``).
AUDIT_WORKFLOW = "console"
#: Every audit event type, console's and command line's.
AUDIT_TYPES = (
    "console_breaker_reset",
    "console_replay",
    "console_forget",
    "console_retract",
    "console_correct",
    "console_run_cancel",
    "console_run_replay",
    "cli_breaker_reset",
    "cli_replay",
    "cli_run_cancel",
    "cli_run_replay",
)


async def audit(
    redis: Redis,
    settings: Settings,
    action: str,
    *,
    counters: Mapping[str, int] | None = None,
    context: Mapping[str, str] | None = None,
) -> None:
    """An audit event on the routing-event stream: who did what, identifiers and counts only
    (trimmed at ``MEMORY_ROUTING_EVENTS_MAXLEN`` like every writer's)."""
    event = RoutingEvent(
        type=action,
        workflow=AUDIT_WORKFLOW,
        severity="warn",
        counters=dict(counters or {}),
        context=dict(context or {}),
        admin_actionable=False,
    )
    await event_log(redis, settings).emit(event)


def cli_actor() -> dict[str, str]:
    """The command line's audit context: ``actor`` ``cli`` and the operator's login (``?``
    when the system cannot name it)."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = "?"
    return {"actor": "cli", "user": user}
