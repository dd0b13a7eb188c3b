"""``init-config [DIR]`` and ``farmsim``: what an operator starts from, and a farm to try it on.

- ``init-config`` writes the example ``Procfile``, ``example.env`` and routes files that
  ship inside the package (``memory_worker.config``, from the repository's
  ``config/``) into a directory, never over an existing file unless ``--force``.
- ``farmsim`` serves the loopback farm simulator (:mod:`memory_worker.farmsim`) with an
  optional fault from the start (``--fault KIND[:SERVICE]``); faults are changed while it
  runs through its ``/_sim/faults`` endpoint (docs/runbook.md, "Trying an outage by hand").
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Annotated

import typer

from memory_worker.cli.common import app, fail, out

#: The files ``init-config`` writes (the configuration examples, not the README snippets).
CONFIG_EXAMPLES = ("Procfile", "example.env", "routes.toml", "routes-local-embed.toml")


def examples_dir() -> Traversable:
    """Where the shipped configuration examples are: the package's ``config`` (an installed
    wheel or sdist), else the source tree's ``config/`` (a checkout, an editable install)."""
    shipped = resources.files("memory_worker") / "config"
    if shipped.is_dir():
        return shipped
    return resources.files("memory_worker").joinpath("..", "config")


def write_examples(target: Path, *, force: bool = False) -> list[Path]:
    """Write :data:`CONFIG_EXAMPLES` into ``target`` (made if missing); returns the paths.

    Nothing is written when a file exists and ``force`` is off: the error names them all.
    """
    source = examples_dir()
    existing = [name for name in CONFIG_EXAMPLES if (target / name).exists()]
    if existing and not force:
        raise fail(f"{', '.join(existing)} already in {target}: --force overwrites them")
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name in CONFIG_EXAMPLES:
        path = target / name
        path.write_bytes(source.joinpath(name).read_bytes())
        written.append(path)
    return written


@app.command("init-config")
def init_config(
    directory: Annotated[
        Path, typer.Argument(help="Where to write the files (made if missing).")
    ] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
) -> None:
    """Write the example Procfile, example.env and routes files to start a deployment from."""
    for path in write_examples(directory, force=force):
        out.print(f"wrote {path}", highlight=False)
    out.print(
        "next: copy example.env to .env (memory-worker reads ./.env; the real environment "
        "wins) and set MEMORY_ROUTES_FILE to your routes file. REDIS_URL stays unset there "
        "(an embedded Valkey under MEMORY_DATA_DIR); set it only to share one Redis between "
        "machines",
        highlight=False,
    )


@app.command("farmsim")
def farmsim(
    host: Annotated[str, typer.Option(help="Bind address (loopback unless you mean it).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 50051,
    fault: Annotated[
        list[str] | None,
        typer.Option(
            "--fault",
            help="Start with this fault: KIND or KIND:SERVICE (repeatable; e.g. "
            "job_failed:embedder for an embedder outage). Kinds: see docs/runbook.md.",
        ),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(
            help="local: the real multilingual e5-small (pip install "
            "'memory-worker[local-embed]'); hashed: a bag of words. Default: "
            "MEMORY_FARMSIM_EMBEDDER, else local."
        ),
    ] = None,
    for_seconds: Annotated[
        float | None, typer.Option(help="Stop after this long (default: until Ctrl-C).")
    ] = None,
) -> None:
    """Serve the farm simulator (a loopback Discovery job API) to try outages by hand."""
    import asyncio
    import contextlib

    from memory_worker.farmsim.__main__ import parse_args, serve
    from memory_worker.farmsim.faults import parse_fault_spec

    try:
        faults = [parse_fault_spec(spec) for spec in fault or []]
    except ValueError as exc:
        raise fail(str(exc)) from None
    if embedder not in (None, "local", "hashed"):
        raise fail(f"--embedder {embedder!r}: expected local or hashed")
    argv = ["--host", host, "--port", str(port)]
    argv += ["--embedder", embedder] if embedder else []
    argv += ["--for-seconds", str(for_seconds)] if for_seconds is not None else []
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(parse_args(argv), faults=faults))
