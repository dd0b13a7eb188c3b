"""``export --chat ID [--user ID] [--out FILE]`` and ``import FILE``: memory as a file (§13).

``export`` writes the chat's (or the user's) memory as JSON lines
(:mod:`memory_worker.cards.export_format`) to ``--out`` — written beside it first and
renamed into place, so a failed export leaves no half file — or to standard output.
``import`` reads at most ``MEMORY_IMPORT_MAX_BYTES`` (``-``: standard input), checks the
whole file, then restores it in chunks, resumable by running it again. Thin over
``MemoryQueue.export`` / ``import_export``; a bad or too large file is one line naming the
line and field, and exit 2, nothing written.
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
from memory_worker.cli.common import JsonFlag, an_id, app, err, fail, out, print_json, run_sync
from memory_worker.settings import get_settings

if TYPE_CHECKING:
    from memory_worker.api import MemoryQueue
    from memory_worker.cards.export_format import MemoryExport


@app.command("export")
def export(
    chat: Annotated[int, typer.Option("--chat", metavar="ID", callback=an_id, help="The chat id.")],
    user: Annotated[
        int | None,
        typer.Option(
            "--user",
            metavar="ID",
            callback=an_id,
            help="Only what this user is entitled to receive.",
        ),
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
    """Restore an export into its chat (any deployment, standalone or cluster): a bad or too
    large file (over MEMORY_IMPORT_MAX_BYTES), or a chat holding other memory under its ids,
    writes nothing; cards keep every rule a run's cards keep. Idempotent, and resumable by
    running it again."""

    source = "stdin" if file == "-" else file
    data = _read_capped(file, get_settings().import_max_bytes)

    async def action(queue: MemoryQueue) -> dict[str, int]:
        return await queue.import_export(io.BytesIO(data), source=source, actor="cli")

    done = run_sync(with_queue(action))
    if as_json:
        print_json(done)
        return
    left_out = f", {done['retracted']} left out: retracted" if done.get("retracted") else ""
    out.print(
        f"imported {done['cards']} card(s) ({done['present']} already there{left_out}), "
        f"{done['episodes']} episode(s), {done['vectors']} vector(s)",
        highlight=False,
    )


def _read_capped(file: str, limit: int) -> bytes:
    """The file's bytes (``-``: standard input), refused past ``limit`` before it is read
    whole: one line and exit 2 (``MEMORY_IMPORT_MAX_BYTES``)."""
    try:
        if file == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            path = Path(file)
            if path.stat().st_size > limit:
                raise fail(f"{file}: the file is over {limit} bytes (MEMORY_IMPORT_MAX_BYTES)")
            with path.open("rb") as fh:
                data = fh.read(limit + 1)
    except OSError as exc:
        raise fail(f"cannot read {file}: {exc.strerror or type(exc).__name__}") from None
    if len(data) > limit:
        raise fail(f"{file}: the file is over {limit} bytes (MEMORY_IMPORT_MAX_BYTES)")
    return data
