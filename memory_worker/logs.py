"""Logging: the library writes stdlib records; the CLI renders them as structured lines.

Every log call in the project is ``log.info("event_name", run_id=…, chat_id=…)``
— ids, codes, reasons and counts, never message text, card text or secrets —
on a logger from :func:`get_logger` (``llm_client._log``): a stdlib
``logging`` logger under ``memory_worker.*`` (or ``llm_client.*``) with no
global set-up, so a bot that imports the library decides where records go and
nothing is ever written to stdout (§13).

The processes the CLI starts call :func:`configure`: one root handler on stderr
that renders every record — ours with their fields, arq's, httpx's — as one
JSON object a line in production, readable locally. Every string of every line —
ours, a library's, a formatted traceback — passes through
:func:`memory_worker.privacy.masking.scrub` (:func:`mask_secrets`) on its way out: a
token in an exception text or a password in a URL a library logs never reaches the
log (§11, §14). ``configure(secrets=…)`` adds the exact values of the secret-typed
settings to what :func:`~memory_worker.privacy.masking.scrub` replaces, a last guard
behind the secret types themselves. Tracebacks are plain text without local variables
whatever the format (a renderer with locals once printed every setting a frame held).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from llm_client import event_of, get_logger
from memory_worker.privacy.masking import remember_secrets, scrub

if TYPE_CHECKING:
    import structlog

__all__ = ["configure", "get_logger", "redirect"]


def _unpack_event(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """A record of :func:`get_logger` rendered with its fields, not its message text."""
    record = event_dict.get("_record")
    event = event_of(record) if isinstance(record, logging.LogRecord) else None
    if event is not None:
        event_dict.update(event)
    return event_dict


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrubbed(v) for v in value]
    return value


def mask_secrets(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """A structlog processor (the CLI's renderer): every string of the line (nested too) scrubbed."""
    return {key: _scrubbed(value) for key, value in event.items()}


#: arq's per-job lines (``→ job started``, ``← job ● result``) and its health record: on an
#: idle fleet they are most of a worker's log, one pair per tick every few seconds. Logged at
#: INFO by ``arq.worker``; :class:`ArqJobLines` turns them into DEBUG records.
ARQ_IDLE_FORMATS = ("%6.2fs → ", "%6.2fs ← ", "recording health: ")


class ArqJobLines(logging.Filter):
    """On the ``arq.worker`` logger: its job and health lines become DEBUG records, shown
    only when the logger is enabled for DEBUG (``MEMORY_LOG_LEVEL=DEBUG``); every other arq
    line (start-up, retries, aborts, errors) keeps its level."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not isinstance(record.msg, str):
            return True
        if not record.msg.startswith(ARQ_IDLE_FORMATS):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def configure(
    level: str = "INFO",
    fmt: Literal["auto", "json", "console"] = "auto",
    *,
    secrets: Iterable[str] | None = None,
) -> None:
    """Route every stdlib record to stderr, rendered (the CLI's processes only; idempotent).

    ``secrets`` replaces the exact strings every line loses; None keeps the current ones (a
    later reconfiguration, e.g. the demo's, never drops them)."""
    import structlog  # the CLI's renderer (memory-worker[cli]); the library never needs it

    if secrets is not None:
        remember_secrets(secrets)
    json_lines = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    pre_chain: list[structlog.types.Processor] = [
        _unpack_event,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor
    if json_lines:
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=pre_chain,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,  # a traceback is text, scrubbed next
                mask_secrets,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("httpx", "httpcore", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    arq_worker = logging.getLogger("arq.worker")
    arq_worker.filters[:] = [f for f in arq_worker.filters if not isinstance(f, ArqJobLines)]
    arq_worker.addFilter(ArqJobLines())


def redirect(path: Path) -> None:
    """Send every log line to ``path`` instead of stderr (same format), e.g. for the demo."""
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    formatter = root.handlers[0].formatter if root.handlers else None
    handler = logging.FileHandler(path, encoding="utf-8")
    if formatter is not None:
        handler.setFormatter(formatter)
    root.handlers[:] = [handler]
