"""Structured logging: one JSON object a line in production, readable locally.

Every log call in the project is ``log.info("event_name", run_id=…, chat_id=…)``
— ids, codes, reasons and counts, never message text, card text or secrets.
``configure`` routes the standard library's loggers (arq, httpx, aiohttp)
through the same renderer, and every string of every line — ours, a library's,
a formatted traceback — passes through :func:`memory_worker.masking.scrub`
(:func:`mask_secrets`) on its way out: a token in an exception text or a
password in a URL a library logs never reaches the log (§11, §14 rev 3).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any, Literal

import structlog

from memory_worker.masking import scrub

_configured = False


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrubbed(v) for v in value]
    return value


def mask_secrets(_logger: Any, _method: str, event: structlog.types.EventDict) -> Any:
    """A structlog processor: every string of the line (nested too) scrubbed."""
    return {key: _scrubbed(value) for key, value in event.items()}


def configure(level: str = "INFO", fmt: Literal["auto", "json", "console"] = "auto") -> None:
    """Configure structlog + stdlib logging once per process (idempotent)."""
    global _configured
    json_lines = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.format_exc_info,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
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
    _configured = True


def redirect(path: Path) -> None:
    """Send every log line to ``path`` instead of stderr (same format), e.g. for the demo."""
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    formatter = root.handlers[0].formatter if root.handlers else None
    handler = logging.FileHandler(path, encoding="utf-8")
    if formatter is not None:
        handler.setFormatter(formatter)
    root.handlers[:] = [handler]
