"""``valkey status|stop``: the embedded Valkey of ``MEMORY_DATA_DIR`` (§2).

The server belongs to its data directory and outlives every process that used it
(:mod:`memory_worker.storage.embedded`): ``status`` says whether it runs (read only: it
starts nothing and writes nothing), ``stop`` stops it (SIGTERM flushes its append-only file;
the next command or worker that needs it starts it again). With ``REDIS_URL`` set the
deployment does not use it, and both say so.
"""

from __future__ import annotations

from typing import Any

import typer

from memory_worker.cli.common import NO_PRETTY_TRACEBACKS, JsonFlag, app, out, print_json
from memory_worker.settings import Settings, get_settings

valkey_app = typer.Typer(
    help="The embedded Valkey server of MEMORY_DATA_DIR (used while REDIS_URL is unset).",
    no_args_is_help=True,
    **NO_PRETTY_TRACEBACKS,
)
app.add_typer(valkey_app, name="valkey")


def _in_use(settings: Settings) -> str:
    return "no: REDIS_URL is set" if settings.redis_url is not None else "yes: REDIS_URL is unset"


@valkey_app.command("status")
def status(json_out: JsonFlag = False) -> None:
    """Whether the embedded server runs (its pid, socket and data dir); changes nothing."""
    from memory_worker.storage.embedded import EmbeddedValkey

    settings = get_settings()
    found = EmbeddedValkey(settings.valkey_dir).status()
    data: dict[str, Any] = {
        "state": found.state,
        "pid": found.pid,
        "socket": str(found.socket),
        "data_dir": str(found.data_dir),
        "in_use": settings.redis_url is None,
    }
    if json_out:
        print_json(data)
        return
    pid = f" (pid {found.pid})" if found.pid is not None else ""
    out.print(f"{found.state}{pid}", highlight=False)
    out.print(f"socket    {found.socket}", highlight=False)
    out.print(f"data dir  {found.data_dir}", highlight=False)
    out.print(f"in use    {_in_use(settings)}", highlight=False)


@valkey_app.command("stop")
def stop(json_out: JsonFlag = False) -> None:
    """Stop the embedded server (whoever started it); the next command that needs it starts
    it again."""
    from memory_worker.storage.embedded import EmbeddedValkey

    settings = get_settings()
    server = EmbeddedValkey(settings.valkey_dir)
    pid = server.status().pid
    stopped = server.shutdown()
    if json_out:
        print_json({"stopped": stopped, "pid": pid if stopped else None})
        return
    if stopped:
        out.print(f"stopped the embedded Valkey (pid {pid})", highlight=False)
    else:
        out.print(f"the embedded Valkey was not running ({settings.valkey_dir})", highlight=False)
