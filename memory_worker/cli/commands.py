"""The command line, assembled: every command module registered on :data:`app`.

:func:`memory_worker.cli.main` imports this module once it knows the command's extra is
installed (``typer`` and ``rich`` are ``memory-worker[cli]``'s, not the library's).
"""

from __future__ import annotations

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
    valkey,
)

# isort: on
from memory_worker.cli.common import app

#: The command modules, imported for the commands they register on :data:`app`.
COMMAND_MODULES = (
    worker, runs, replay, forget, cards, transfer, fleet, demo, config, tools, valkey,
)  # fmt: skip

__all__ = ["COMMAND_MODULES", "app"]
