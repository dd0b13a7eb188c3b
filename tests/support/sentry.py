"""A Sentry transport that keeps every envelope, for the no-secrets-in-Sentry tests."""

from __future__ import annotations

from typing import Any

from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport


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
