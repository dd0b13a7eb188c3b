"""``memory-worker``: the one command-line entry point (§11, §13), one module per command group.

- :mod:`~memory_worker.cli.common`: the typer apps, consoles, ``with_redis``, one-line failures.
- :mod:`~memory_worker.cli.worker`: ``run [--serve]``, ``serve``.
- :mod:`~memory_worker.cli.demo`: ``demo [--fast]``.
- :mod:`~memory_worker.cli.runs`: ``enqueue FILE|-``, ``runs list|show``.
- :mod:`~memory_worker.cli.replay`: ``replay``.
- :mod:`~memory_worker.cli.forget`: ``forget --chat ID [--user ID]`` (§14).
- :mod:`~memory_worker.cli.cards`: ``cards show|retract|correct REF`` (one card, §10).
- :mod:`~memory_worker.cli.transfer`: ``export --chat ID [--user ID] [--out FILE]``,
  ``import FILE`` (§13).
- :mod:`~memory_worker.cli.fleet`: ``breakers list|reset``, ``report`` (rendering only; the
  data comes from :mod:`memory_worker.ops.metrics`).
- :mod:`~memory_worker.cli.config`: ``config [--markdown]``.
- :mod:`~memory_worker.cli.tools`: ``init-config [DIR]`` (the shipped examples) and
  ``farmsim`` (the farm simulator, with faults, for trying outages by hand).
- :mod:`~memory_worker.cli.failures`: :func:`failure_message`, the one line a failure prints.

Every command reads the same settings (env vars, and ``./.env`` under them; see
``memory-worker config``) and talks to ``REDIS_URL`` or the embedded Valkey. ``--json`` prints one JSON
document on stdout; logs and prompts go to stderr.

Every failure is **one line** on stderr (``error: …``) and exit status 2:
:func:`failure_message` maps each exception type to its line (secrets
redacted, no traceback); an unexpected error is one line too, its traceback
(without local variables, secrets masked) logged at debug level
(``MEMORY_LOG_LEVEL=debug``). The settings are checked before any command
runs (``common._setup``): a bad one is one line naming its variable.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from memory_worker.logs import get_logger

# isort: off
# Command modules first, in the order ``--help`` lists their commands.
from memory_worker.cli import (
    worker,
    runs,
    replay,
    forget,
    cards,
    transfer,
    fleet,
    demo,
    config,
    tools,
)

# isort: on
from memory_worker.cli.common import EXIT_FAILURE, app, error_line
from memory_worker.cli.config import (
    CONFIG_END,
    CONFIG_START,
    config_markdown,
    config_rows,
    replace_config_table,
)
from memory_worker.cli.failures import failure_message
from memory_worker.cli.fleet import print_report
from memory_worker.cli.runs import read_requests
from memory_worker.settings import Settings, get_settings

if TYPE_CHECKING:
    from memory_worker.ops.metrics import report_data

#: The command modules, imported for the commands they register on :data:`app`.
COMMAND_MODULES = (worker, runs, replay, forget, cards, transfer, fleet, demo, config, tools)

__all__ = [
    "CONFIG_END",
    "CONFIG_START",
    "EXIT_FAILURE",
    "app",
    "config_markdown",
    "config_rows",
    "failure_message",
    "main",
    "print_report",
    "read_requests",
    "replace_config_table",
    "report_data",
]


def __getattr__(name: str) -> Any:
    """``report_data`` lives in :mod:`memory_worker.ops.metrics` (imported only when asked for)."""
    if name == "report_data":
        from memory_worker.ops.metrics import report_data

        return report_data
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """The console script: one line on stderr and exit 2 for any failure, no traceback.

    Logging is configured before anything runs (plain tracebacks, on stderr), so
    even a failure before the settings are read cannot reach structlog's default
    renderer, which printed tracebacks with every local variable on stdout.
    """
    from memory_worker.logs import configure

    configure()
    try:
        app()
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        get_logger(__name__).debug("cli_failed", exc_info=True)
        try:
            settings: Settings | None = get_settings()
        except Exception:
            settings = None
        error_line(failure_message(exc, settings))
        sys.exit(EXIT_FAILURE)
