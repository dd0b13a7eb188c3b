"""Structured log calls that land in the standard library's ``logging`` (§13).

Every module of ``llm_client`` and ``memory_worker`` logs with
``log = get_logger(__name__)`` and ``log.info("event_name", run_id=…)``. The
logger is a structlog ``BoundLogger`` with its *own* processors wrapped around
``logging.getLogger(__name__)``: it reads no global structlog configuration and
sets none, so a bot importing the library gets stdlib records under
``memory_worker.*`` / ``llm_client.*`` (filtered and handled however the bot
configured ``logging``) and never a line on stdout.

A record's message is ``event key=value …`` (readable under any formatter);
the structured event itself rides on the record as :data:`EVENT_ATTR`, which
the CLI's formatter (:func:`memory_worker.logs.configure`) unpacks into one
JSON object a line.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

import structlog

#: The record attribute holding the structured event (``{"event": name, **fields}``).
EVENT_ATTR = "structured_event"


def to_record(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> dict[str, Any]:
    """The last processor: the keyword arguments of one stdlib ``Logger`` call."""
    exc_info = event_dict.pop("exc_info", None)
    stack_info = bool(event_dict.pop("stack_info", False))
    event = str(event_dict.get("event", ""))
    fields = {k: v for k, v in event_dict.items() if k != "event"}
    text = event + "".join(f" {key}={value}" for key, value in fields.items())
    return {
        "msg": text,
        "extra": {EVENT_ATTR: {"event": event, **fields}},
        "exc_info": exc_info,
        "stack_info": stack_info,
    }


_PROCESSORS: list[Any] = [
    structlog.stdlib.filter_by_level,
    structlog.contextvars.merge_contextvars,
    to_record,
]


_quieted: set[str] = set()


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """A structured logger writing to ``logging.getLogger(name)`` (no global set-up).

    The package's top logger gets a ``NullHandler`` (the stdlib's advice for
    libraries): an unconfigured bot sees no "last resort" lines on stderr either.
    """
    package = name.partition(".")[0]
    if package not in _quieted:
        _quieted.add(package)
        logging.getLogger(package).addHandler(logging.NullHandler())
    return structlog.stdlib.BoundLogger(logging.getLogger(name), _PROCESSORS, context={})


def event_of(record: logging.LogRecord) -> dict[str, Any] | None:
    """The structured event a record of :func:`get_logger` carries (None for others)."""
    found = getattr(record, EVENT_ATTR, None)
    return dict(found) if isinstance(found, dict) else None
