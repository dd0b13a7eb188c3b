"""The operator console's settings (§15): who may read it and act, and what it shows.

A base of :class:`~memory_worker.settings.model.Settings` (one model, every field at the
top level: ``MEMORY_CONSOLE_TOKEN``…); the console (``memory_worker.console``) reads them
together.
"""

from __future__ import annotations

from pydantic import Field

from memory_worker.settings.types import Name, SecretSafeSettings, Token


class ConsoleSettings(SecretSafeSettings):
    """The console's settings (fields of :class:`Settings`)."""

    console_token: Token | None = Field(
        None,
        description="Token the console's actions (replay, breaker reset, forget) ask for; off "
        "loopback it also opens every page. Unset: the console at / is read-only.",
    )
    console_read_token: Token | None = Field(
        None,
        description="Token that opens the console's pages but no action. Set: every page "
        "needs a token even on loopback (off loopback they always do).",
    )
    console_session_hours: float = Field(
        12.0,
        gt=0,
        le=30 * 24,
        description="How long a console login lasts (an HMAC cookie; a server restart also "
        "ends it).",
    )
    console_auth_burst: int = Field(
        5,
        ge=1,
        le=1000,
        description="Wrong console tokens one client address may try back to back.",
    )
    console_auth_per_minute: float = Field(
        5.0,
        gt=0,
        le=60_000,
        description="Wrong console tokens one client address may try per minute after the "
        "burst (then 429 with Retry-After).",
    )
    console_runbook_url: Name = Field(
        "/docs/runbook.md",
        description="Runbook page the console's links point at (the section's anchor is "
        "added): by default the runbook the console serves itself, bundled with the package; "
        "an absolute URL points at your own docs site.",
    )
    console_show_memory: bool = Field(
        True,
        description="Serve the console's memory browser (cards, episodes). 0: no card or "
        "message text is ever rendered.",
    )
