"""``init-config [DIR]`` and ``farmsim``: what an operator starts from, and a farm to try it on.

- ``init-config`` writes what ships inside the package into a directory, never over an
  existing file unless ``--force``: the example ``Procfile``, ``example.env`` and routes
  files (``memory_worker.config``, from the repository's ``config/``), and the
  ``deploy/`` (Prometheus alert rules and their tests, ``prometheus.yml``, the Grafana
  dashboard, systemd units) and ``examples/`` folders, whole.
- ``farmsim`` serves the loopback farm simulator (:mod:`memory_worker.farmsim`) with an
  optional fault from the start (``--fault KIND[:SERVICE]``); faults are changed while it
  runs through its ``/_sim/faults`` endpoint (docs/runbook.md, "Trying an outage by hand").
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Annotated

import typer

from memory_worker.cli.common import PORT, app, fail, out

#: The configuration examples ``init-config`` writes at the top of its directory.
CONFIG_EXAMPLES = ("Procfile", "example.env", "routes.toml", "routes-local-embed.toml")
#: The shipped folders ``init-config`` writes whole, under their own names.
SHIPPED_FOLDERS = ("deploy", "examples")


def shipped(folder: str) -> Traversable:
    """A folder the package ships (``config``, ``deploy``, ``examples``): the package's own
    (an installed wheel or sdist), else the source tree's (a checkout, an editable install)."""
    inside = resources.files("memory_worker") / folder
    if inside.is_dir():
        return inside
    return resources.files("memory_worker").joinpath("..", folder)


def _tree(folder: Traversable, under: PurePosixPath) -> Iterator[tuple[str, Traversable]]:
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name == "__pycache__" or entry.name.endswith(".pyc"):
            continue
        if entry.is_dir():
            yield from _tree(entry, under / entry.name)
        else:
            yield (under / entry.name).as_posix(), entry


def example_files() -> dict[str, Traversable]:
    """Every file ``init-config`` writes: its path in the target directory → the shipped file."""
    files = {name: shipped("config").joinpath(name) for name in CONFIG_EXAMPLES}
    for folder in SHIPPED_FOLDERS:
        files.update(_tree(shipped(folder), PurePosixPath(folder)))
    return files


def write_examples(target: Path, *, force: bool = False) -> list[Path]:
    """Write :func:`example_files` into ``target`` (made if missing); returns the paths.

    Nothing is written when a file exists and ``force`` is off: the error names them all.
    """
    files = example_files()
    existing = [name for name in files if (target / name).exists()]
    if existing and not force:
        raise fail(f"{', '.join(existing)} already in {target}: --force overwrites them")
    written = []
    for name, source in files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(source.read_bytes())
        written.append(path)
    return written


@app.command("init-config")
def init_config(
    directory: Annotated[
        Path, typer.Argument(help="Where to write the files (made if missing).")
    ] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
) -> None:
    """Write the example Procfile, example.env and routes files to start a deployment from,
    with deploy/ (Prometheus alert rules and their tests, prometheus.yml, the Grafana
    dashboard, systemd units) and examples/."""
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
    port: Annotated[int, typer.Option(**PORT, help="Port (0: any free one).")] = 50051,
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
