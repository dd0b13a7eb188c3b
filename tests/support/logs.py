"""Capture the library's structured log events (its loggers are stdlib ``logging`` ones).

``with capture_logs() as events:`` collects every event logged under
``memory_worker.*`` and ``llm_client.*`` meanwhile, as ``{"event": …, "log_level": …,
**fields}`` — the shape ``structlog.testing.capture_logs`` gave.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llm_client import event_of

PACKAGES = ("memory_worker", "llm_client")


class EventCollector(logging.Handler):
    """Keeps the structured event of every record it handles."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.events: list[dict[str, Any]] = []
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        event = event_of(record)
        if event is not None:
            self.events.append({**event, "log_level": record.levelname.lower()})


@contextmanager
def capture_logs() -> Iterator[list[dict[str, Any]]]:
    collector = EventCollector()
    loggers = [logging.getLogger(name) for name in PACKAGES]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(collector)
        logger.setLevel(logging.DEBUG)
    try:
        yield collector.events
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(collector)
            logger.setLevel(level)
