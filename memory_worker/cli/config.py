"""``config [--json|--markdown|--update-readme]``: every setting in use, and the docs table.

``config`` shows each setting's value in use and where it came from: ``environment``, the
working directory's ``.env`` (the command line reads it; the environment wins), or
``default`` (:func:`settings_in_use`); a secret shows as ``set``, never its value. The
table of variables, defaults and meanings lives in docs/configuration.md between its
markers (``--markdown`` prints it); ``--update-readme FILE`` rewrites it in any file that
has them."""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Mapping
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import orjson
import typer
from pydantic import SecretStr
from rich.table import Table

from memory_worker.cli.common import JsonFlag, app, out, print_json
from memory_worker.settings import Settings, get_settings
from memory_worker.settings.types import field_defaults

CONFIG_START = "<!-- config-table:start (generated: memory-worker config --markdown) -->"
CONFIG_END = "<!-- config-table:end -->"


@app.command("config")
def config_cmd(
    ctx: typer.Context,
    markdown: Annotated[
        bool,
        typer.Option("--markdown", help="Print the configuration table (docs/configuration.md)."),
    ] = False,
    update_readme: Annotated[
        Path | None,
        typer.Option(
            "--update-readme",
            help="Rewrite the table between this file's markers (docs/configuration.md).",
        ),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Every setting's value in use and where it came from (environment, .env, default);
    secrets show as set or unset. --markdown: the variables, defaults and meanings."""
    if update_readme is not None:
        text = update_readme.read_text(encoding="utf-8")
        update_readme.write_text(replace_config_table(text), encoding="utf-8")
        return
    if markdown:
        sys.stdout.write(config_markdown())
        return
    from_dotenv = (ctx.find_root().obj or {}).get("dotenv", [])
    rows = settings_in_use(get_settings(), os.environ, from_dotenv)
    if json_out:
        print_json([row._asdict() for row in rows])
        return
    table = Table("variable", "value", "source")
    for row in rows:
        table.add_row(row.variable, row.value, row.source)
    out.print(table)


class InUse(NamedTuple):
    """One setting as ``config`` shows it."""

    variable: str
    value: str
    #: ``environment``, ``.env`` or ``default``.
    source: str


def shown(value: Any) -> str:
    """A setting's value as text: a secret only as ``set``; ``unset`` for none."""
    if value is None:
        return "unset"
    if isinstance(value, SecretStr):
        return "set" if value.get_secret_value() else "unset"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, str | int | float | Path):
        return str(value)
    return orjson.dumps(value, default=str).decode()


def settings_in_use(
    settings: Settings, environ: Mapping[str, str], from_dotenv: Collection[str]
) -> list[InUse]:
    """Every setting's value in ``settings`` and its source, in model order: ``.env`` for a
    variable the command line took from it (``from_dotenv``), ``environment`` for another
    one set (not empty: an empty variable is unset), else ``default``."""
    from memory_worker.settings import env_name

    rows = []
    for name in Settings.model_fields:
        variable = env_name(name)
        if variable in from_dotenv:
            source = ".env"
        elif environ.get(variable):
            source = "environment"
        else:
            source = "default"
        rows.append(InUse(variable, shown(getattr(settings, name)), source))
    return rows


def config_rows() -> list[tuple[str, str, str]]:
    """(environment variable, default, meaning) of every setting, in model order."""
    from memory_worker.settings import env_name

    rows = []
    defaults = field_defaults(Settings)
    for name, info in Settings.model_fields.items():
        default = defaults[name]
        shown = "" if default is None else str(default)
        rows.append((env_name(name), shown, info.description or ""))
    return rows


def config_markdown() -> str:
    """The configuration table of docs/configuration.md, generated from the settings model."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    lines += [
        f"| `{var}` | {f'`{default}`' if default else '*unset*'} | {desc} |"
        for var, default, desc in config_rows()
    ]
    return "\n".join(lines) + "\n"


def replace_config_table(readme: str) -> str:
    """``readme`` (a page's text) with a freshly generated table between the markers."""
    start = readme.index(CONFIG_START) + len(CONFIG_START)
    end = readme.index(CONFIG_END)
    return readme[:start] + "\n" + config_markdown() + readme[end:]
