"""``export --chat ID [--user ID] [--out FILE]`` and ``import FILE``: memory as a file (§13).

``export`` writes the chat's (or the user's) memory as JSON lines
(:mod:`memory_worker.cards.export_format`) to ``--out`` — written beside it first and
renamed into place, so a failed export leaves no half file — or to standard output.
``import`` checks the whole file, then restores it in one atomic step (``-``: standard
input). Thin over ``MemoryQueue.export`` / ``import_export``; a bad file is one line and
exit 2, nothing written.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memory_worker.cli.cards import with_queue
from memory_worker.cli.common import JsonFlag, app, err, out, print_json, run_sync

if TYPE_CHECKING:
    from memory_worker.api import MemoryQueue
    from memory_worker.cards.export_format import MemoryExport


@app.command("export")
def export(
    chat: Annotated[int, typer.Option("--chat", metavar="ID", help="The chat id.")],
    user: Annotated[
        int | None,
        typer.Option("--user", metavar="ID", help="Only what this user is entitled to receive."),
    ] = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="Write here (default: stdout).")
    ] = None,
) -> None:
    """Every card (all statuses), episode and link of a chat — or of one user in it — as
    JSON lines with provenance, vectors and a format version."""

    async def action(queue: MemoryQueue) -> MemoryExport:
        return await queue.export(chat, user, actor="cli")

    done = run_sync(with_queue(action))
    if out_file is None:
        for line in done.lines():
            sys.stdout.buffer.write(line)
        sys.stdout.flush()
    else:
        _write_atomically(out_file, done)
    counts = ", ".join(f"{n} {k}" for k, n in done.counts.items())
    err.print(f"exported chat {chat}{'' if user is None else f' user {user}'}: {counts}")


def _write_atomically(path: Path, done: MemoryExport) -> None:
    """The lines into a file beside ``path``, then renamed over it (never a half file)."""
    folder = path.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            for line in done.lines():
                fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)  # personal data: the owner's alone
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@app.command("import")
def import_cmd(
    file: Annotated[str, typer.Argument(metavar="FILE", help="An export file, or - for stdin.")],
    as_json: JsonFlag = False,
) -> None:
    """Restore an export into its chat (any deployment, standalone or cluster): all of it or,
    for a bad file or a chat holding other memory under its ids, nothing. Idempotent."""

    data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    source = "stdin" if file == "-" else file

    async def action(queue: MemoryQueue) -> dict[str, int]:
        return await queue.import_export(io.BytesIO(data), source=source, actor="cli")

    done = run_sync(with_queue(action))
    if as_json:
        print_json(done)
        return
    out.print(
        f"imported {done['cards']} card(s) ({done['present']} already there), "
        f"{done['episodes']} episode(s), {done['vectors']} vector(s)",
        highlight=False,
    )
