"""``demo [--fast]``: the walkthrough (embedded Valkey + farm simulator)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memory_worker.cli.common import app, run_sync
from memory_worker.settings import get_settings


@app.command()
def demo(
    fast: Annotated[bool, typer.Option("--fast", help="Shorten every interval (CI).")] = False,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Where the demo's embedded Valkey keeps its data (default var/demo)."),
    ] = None,
) -> None:
    """The walkthrough: extraction, a farm outage, recovery (embedded Valkey + farm simulator)."""
    from memory_worker.demo import run_demo

    code = run_sync(run_demo(get_settings(), fast=fast, data_dir=data_dir))
    raise typer.Exit(code)
