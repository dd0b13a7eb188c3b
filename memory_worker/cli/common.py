"""What every command shares: the typer apps, the consoles, Redis for one command, failing.

Every failure is **one line** on stderr (``error: …``) and exit status
:data:`EXIT_FAILURE`; ``--json`` prints one JSON document on stdout.

The settings are read and checked in :func:`_setup`, before any command body runs:
a bad or contradictory setting is that one line too, naming the variable, never a
secret's value. A ``.env`` file in the working directory is read first
(:func:`read_dotenv`; a line that is not ``NAME=value`` is such an error, naming the file
and the line): the real environment wins over it, and only the command line reads it — a bot that imports the library gets its settings from its own environment.
Typer's pretty tracebacks are off for every command: with local variables they once
printed every secret a frame held; help texts are printed as written (no rich markup:
``pip install 'memory-worker[local-embed]'`` keeps its brackets).
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

import click
import orjson
import typer
from dotenv import dotenv_values
from dotenv.parser import parse_stream
from rich.console import Console

from memory_worker.cli.failures import EXIT_FAILURE
from memory_worker.errors import SettingsError
from memory_worker.models import INT64_MAX, INT64_MIN
from memory_worker.settings import Settings, get_settings
from memory_worker.storage.connections import RedisHandle, open_redis

#: Never a rich traceback (with or without locals): a failure is one line (see ``cli.main``);
#: help texts as written (rich markup would eat ``[local-embed]``).
NO_PRETTY_TRACEBACKS: dict[str, Any] = {
    "pretty_exceptions_enable": False,
    "pretty_exceptions_show_locals": False,
    "rich_markup_mode": None,
}
#: The file of settings the command line reads from its working directory.
DOTENV = ".env"
app = typer.Typer(
    name="memory-worker",
    help="Durable memory consolidation worker for a chat bot (arq + Redis).",
    no_args_is_help=True,
    add_completion=False,
    **NO_PRETTY_TRACEBACKS,
)
runs_app = typer.Typer(
    help="Inspect memory runs; cancel or replay one by id.",
    no_args_is_help=True,
    **NO_PRETTY_TRACEBACKS,
)
app.add_typer(runs_app, name="runs")
breakers_app = typer.Typer(
    help="Inspect and reset the fleet's circuit breakers.",
    no_args_is_help=True,
    **NO_PRETTY_TRACEBACKS,
)
app.add_typer(breakers_app, name="breakers")

out = Console(width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True)
T = TypeVar("T")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
YesFlag = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
DryRunFlag = Annotated[
    bool, typer.Option("--dry-run", help="Show what would change; write nothing.")
]


def an_id(value: int | None) -> int | None:
    """An option's callback: a chat, user or thread id is a signed 64-bit int (what the
    store keeps); another number is a bad parameter (one line, exit 2)."""
    if value is not None and not INT64_MIN <= value <= INT64_MAX:
        raise typer.BadParameter(f"{value} is not a signed 64-bit id")
    return value


#: A TCP port's bounds for an option (0: any free one).
PORT = {"min": 0, "max": 65535}


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def error_line(message: str) -> None:
    """One line on stderr, whatever the terminal width (rich would wrap it)."""
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")
    sys.stderr.flush()


def fail(message: str, code: int = EXIT_FAILURE) -> typer.Exit:
    error_line(message)
    return typer.Exit(code)


def confirm(question: str) -> bool:
    """Ask ``question`` (y/N) on stderr; the answer. With nobody to answer — no terminal, or
    standard input at its end — it refuses: one line naming ``--yes``, exit
    :data:`EXIT_FAILURE`, nothing changed (click alone would say "Aborted!" and exit 1)."""
    try:
        return typer.confirm(question, err=True, default=False)
    except (typer.Abort, click.exceptions.Abort):
        sys.stderr.write("\n")
        raise fail(
            f"{question} needs an answer and none came (no terminal, or standard input "
            "ended): nothing was changed; pass --yes to act without asking"
        ) from None


def print_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


async def with_redis(settings: Settings, action: Callable[[RedisHandle], Awaitable[T]]) -> T:
    """Open Redis (starting the embedded Valkey if needed), run ``action``, close."""
    handle = await open_redis(settings)
    try:
        return await action(handle)
    finally:
        await handle.close()


def read_dotenv(path: Path) -> list[str]:
    """Put ``path``'s variables into this process's environment, the real environment
    winning (a variable already set, even empty, is left alone); returns the names taken.

    The command line's processes (a worker, the server, the demo's workers) inherit them.
    A line that is not ``NAME=value`` raises :class:`SettingsError` naming the file and the
    line, and nothing of the file is used: a setting silently dropped (a ``REDIS_URL`` that
    fell back to the embedded Valkey) answers from the wrong store.
    """
    if not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"cannot read {path}: {type(exc).__name__}") from None
    problems = dotenv_problems(text, path.absolute())
    if problems:
        raise SettingsError(problems)
    values = dotenv_values(stream=io.StringIO(text))
    taken = [name for name, value in values.items() if name not in os.environ and value]
    for name in taken:
        os.environ[name] = values[name] or ""
    if taken:
        get_settings.cache_clear()
    return taken


def dotenv_problems(text: str, path: Path) -> list[str]:
    """One line per line of a ``.env`` text that is not ``NAME=value`` (a comment or a blank
    line is fine), naming ``path`` and the line number, never the line (it may hold a secret)."""
    problems = []
    for binding in parse_stream(io.StringIO(text)):
        where = f"{path} line {binding.original.line}"
        if binding.error:
            problems.append(
                f"{where}: not a NAME=value line (an unclosed quote, a space in the name…)"
            )
        elif binding.key is not None and binding.value is None:
            problems.append(f"{where}: a name without '=' (write NAME= to leave it unset)")
    return problems


def _version(show: bool) -> None:
    if show:
        from memory_worker.version import __version__

        sys.stdout.write(f"memory-worker {__version__}\n")
        raise typer.Exit()


@app.callback()
def _setup(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Settings first (a bad one: one line, exit 2); then logs to stderr (stdout is for
    results), configured from the settings and masking their secrets."""
    from memory_worker.logs import configure
    from memory_worker.settings.types import secret_values

    try:
        # the names the .env gave: ``config`` says where each value came from
        ctx.obj = {"dotenv": read_dotenv(Path(DOTENV))}
        settings = get_settings()
    except SettingsError as exc:
        raise fail(str(exc)) from None
    configure(settings.log_level, settings.log_format, secrets=secret_values(settings))


def ms_text(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
