"""Structured logging: one JSON object a line in production, readable locally.

Every log call in the project is ``log.info("event_name", run_id=…, chat_id=…)``
— ids, codes, reasons and counts, never message text, card text or secrets.
``configure`` routes the standard library's loggers (arq, httpx, aiohttp)
through the same renderer.

Tracebacks are plain text without local variables, whatever the format (the
console renderer's default, rich with locals, once printed every setting a
frame held, secrets included), and every string of every line loses the
secrets the process was configured with (``secrets``: the values of the
secret-typed settings), a last guard behind the secret types themselves.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import Any, Literal

import structlog

_configured = False
#: What every log string loses (longest first), see :func:`configure`.
_secrets: tuple[str, ...] = ()
MASK = "[Filtered]"
#: Shorter strings are not masked (they would mask ordinary words).
MIN_SECRET_CHARS = 6


def mask_secrets(
    logger: Any, method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Replace every configured secret in the event's string values (a structlog processor)."""
    if _secrets:
        for key, value in event_dict.items():
            if isinstance(value, str):
                event_dict[key] = _mask(value)
    return event_dict


def _mask(text: str) -> str:
    for secret in _secrets:
        text = text.replace(secret, MASK)
    return text


def configure(
    level: str = "INFO",
    fmt: Literal["auto", "json", "console"] = "auto",
    *,
    secrets: Iterable[str] | None = None,
) -> None:
    """Configure structlog + stdlib logging once per process (idempotent).

    ``secrets`` replaces the strings every log line loses; None keeps the current ones
    (a later reconfiguration, e.g. the demo's, never drops them).
    """
    global _configured, _secrets
    if secrets is not None:
        _secrets = tuple(sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len)[::-1])
    json_lines = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
    )
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.format_exc_info,
            mask_secrets,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.processors.format_exc_info],
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
