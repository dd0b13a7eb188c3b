"""Sentry on, sending nowhere, with a transport that keeps every envelope — for the
no-secrets-in-Sentry tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sentry_sdk
from pydantic import SecretStr
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

from memory_worker.ops.sentry import init_sentry
from memory_worker.settings import Settings

#: A DSN the SDK accepts; nothing is sent to it (the transport keeps the envelopes).
DSN = SecretStr("https://public@sentry.invalid/1")


class CapturingTransport(Transport):
    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.envelopes: list[Envelope] = []

    def capture_envelope(self, envelope: Envelope) -> None:
        self.envelopes.append(envelope)

    def events(self) -> list[dict[str, Any]]:
        return [
            item.payload.json
            for env in self.envelopes
            for item in env.items
            if item.type == "event" and item.payload.json is not None
        ]

    def raw(self) -> bytes:
        return b"".join(env.serialize() for env in self.envelopes)


@contextmanager
def capturing(settings: Settings, **update: Any) -> Iterator[CapturingTransport]:
    """Sentry initialised from ``settings`` with :data:`DSN` and ``update``; on exit it is
    flushed, closed and back to a disabled client for the other tests."""
    transport = CapturingTransport()
    on = settings.model_copy(update={"sentry_dsn": DSN, **update})
    assert init_sentry(on, transport=transport)
    try:
        yield transport
    finally:
        sentry_sdk.flush()
        sentry_sdk.get_client().close()
        sentry_sdk.init()


def http_breadcrumbs(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The HTTP breadcrumbs an event carries."""
    return [c for c in event["breadcrumbs"]["values"] if c.get("type") == "http"]
