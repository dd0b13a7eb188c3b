"""Structured log calls that land in the standard library's ``logging`` (§13).

Every module of ``llm_client`` and ``memory_worker`` logs with
``log = get_logger(__name__)`` and ``log.info("event_name", run_id=…)``. The
logger is a small :class:`Logger` around ``logging.getLogger(__name__)`` (the
standard library only: a bot's install needs no logging package): it reads no
global configuration and sets none, so a bot importing the library gets stdlib
records under ``memory_worker.*`` / ``llm_client.*`` (filtered and handled
however the bot configured ``logging``) and never a line on stdout.

A record's message is ``event key=value …`` (readable under any formatter);
the structured event itself rides on the record as :data:`EVENT_ATTR`, which
the CLI's formatter (:func:`memory_worker.logs.configure`) unpacks into one
JSON object a line. Fields bound with :func:`bind_log_context` (a run's id while
a worker processes it) join every event logged in that context, after the call's
own fields and never over them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

#: The record attribute holding the structured event (``{"event": name, **fields}``).
EVENT_ATTR = "structured_event"

#: Fields every event logged in this context carries (:func:`bind_log_context`); never
#: changed in place, each bind sets a new mapping.
_CONTEXT: ContextVar[Mapping[str, Any]] = ContextVar(
    "llm_client_log_context", default=MappingProxyType({})
)


def bind_log_context(**fields: Any) -> None:
    """Add ``fields`` to every event logged from now on in this context (task, thread)."""
    _CONTEXT.set({**_CONTEXT.get(), **fields})


def unbind_log_context(*names: str) -> None:
    """Take ``names`` out of the fields :func:`bind_log_context` added."""
    _CONTEXT.set({k: v for k, v in _CONTEXT.get().items() if k not in names})


def to_record(event: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of one stdlib ``Logger.log`` call for ``event`` and ``fields``
    (``exc_info`` and ``stack_info`` among them are the stdlib's own)."""
    fields = dict(fields)
    exc_info = fields.pop("exc_info", None)
    stack_info = bool(fields.pop("stack_info", False))
    text = event + "".join(f" {key}={value}" for key, value in fields.items())
    return {
        "msg": text,
        "extra": {EVENT_ATTR: {"event": event, **fields}},
        "exc_info": exc_info,
        "stack_info": stack_info,
    }


class Logger:
    """``log.info("event", key=value)`` on one stdlib logger; ``bind`` adds fields."""

    __slots__ = ("_context", "_logger")

    def __init__(self, logger: logging.Logger, context: Mapping[str, Any] | None = None) -> None:
        self._logger = logger
        self._context: Mapping[str, Any] = dict(context or {})

    @property
    def name(self) -> str:
        return self._logger.name

    def bind(self, **fields: Any) -> Logger:
        """A logger adding ``fields`` to every event (the call's own fields win)."""
        return Logger(self._logger, {**self._context, **fields})

    def _log(self, level: int, event: str, fields: Mapping[str, Any]) -> None:
        if not self._logger.isEnabledFor(level):
            return
        merged = {**self._context, **fields}
        for key, value in _CONTEXT.get().items():
            merged.setdefault(key, value)
        # stacklevel 3: the record names the module and line that called info/warning/…
        self._logger.log(level, **to_record(event, merged), stacklevel=3)

    def debug(self, event: str, **fields: Any) -> None:
        self._log(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log(logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        """An error with the current exception's traceback."""
        self._log(logging.ERROR, event, {"exc_info": True, **fields})

    def critical(self, event: str, **fields: Any) -> None:
        self._log(logging.CRITICAL, event, fields)


_quieted: set[str] = set()


def get_logger(name: str) -> Logger:
    """A structured logger writing to ``logging.getLogger(name)`` (no global set-up).

    The package's top logger gets a ``NullHandler`` (the stdlib's advice for
    libraries): an unconfigured bot sees no "last resort" lines on stderr either.
    """
    package = name.partition(".")[0]
    if package not in _quieted:
        _quieted.add(package)
        logging.getLogger(package).addHandler(logging.NullHandler())
    return Logger(logging.getLogger(name))


def event_of(record: logging.LogRecord) -> dict[str, Any] | None:
    """The structured event a record of :func:`get_logger` carries (None for others)."""
    found = getattr(record, EVENT_ATTR, None)
    return dict(found) if isinstance(found, dict) else None
