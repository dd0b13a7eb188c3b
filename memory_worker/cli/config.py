"""``config [--markdown|--update-readme]``: every setting, and the docs table made from them.

The table lives in docs/configuration.md between its markers; ``--update-readme FILE``
rewrites it in any file that has them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from memory_worker.cli.common import app, out
from memory_worker.settings import Settings
from memory_worker.settings.types import field_defaults

CONFIG_START = "<!-- config-table:start (generated: memory-worker config --markdown) -->"
CONFIG_END = "<!-- config-table:end -->"


@app.command("config")
def config_cmd(
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
) -> None:
    """Every setting with its environment variable, default and meaning."""
    if update_readme is not None:
        text = update_readme.read_text(encoding="utf-8")
        update_readme.write_text(replace_config_table(text), encoding="utf-8")
        return
    if markdown:
        sys.stdout.write(config_markdown())
        return
    table = Table("variable", "default", "meaning")
    for row in config_rows():
        table.add_row(*row)
    out.print(table)


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
