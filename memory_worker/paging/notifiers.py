"""Admin page channels (§9): Telegram Bot API, a generic JSON webhook, and the log.

A notifier sends one :class:`Page` (already rendered, free of message text and
secrets) and raises :class:`DeliveryFailed` when the channel did not take it;
the outbox in ``memory_worker.paging.reports`` retries with backoff. Errors never
carry URLs (the Telegram URL contains the bot token) or response bodies: only
the channel name, an HTTP status or an exception type.

Telegram and the webhook are *external* channels; the log channel is always
there but does not count as "configured" (without an external channel the
admin cooldown is not consumed, see ``reports``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from memory_worker.errors import DeliveryFailed
from memory_worker.logs import get_logger
from memory_worker.settings import Settings

log = get_logger(__name__)

#: Telegram's limit is 4096 characters per message; pages stay well below it.
TELEGRAM_MAX_CHARS = 4000


@dataclass(frozen=True, slots=True)
class Page:
    """One admin page, as stored in the outbox."""

    id: str
    text: str
    event_type: str
    workflow: str
    severity: str
    dedupe_key: str
    created_at_ms: int


class Notifier(Protocol):
    """A page channel."""

    #: Stable channel name (outbox bookkeeping, logs, metrics): ``telegram:<chat>``, ``webhook``.
    name: str
    #: Whether this channel reaches a human (the log does not).
    external: bool

    async def send(self, page: Page) -> None: ...


class _RedactSecret(logging.Filter):
    """Replaces a secret in stdlib log records (httpx logs request URLs at INFO)."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secret and record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            record.args = tuple(
                str(arg).replace(self.secret, "<redacted>") if self.secret in str(arg) else arg
                for arg in args
            )
        if self.secret and isinstance(record.msg, str) and self.secret in record.msg:
            record.msg = record.msg.replace(self.secret, "<redacted>")
        return True


def _guard_logs(secret: str) -> None:
    """Keep ``secret`` out of httpx's own request logs (idempotent per secret)."""
    for name in ("httpx", "httpcore"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _RedactSecret) and f.secret == secret for f in logger.filters):
            logger.addFilter(_RedactSecret(secret))


async def _post(
    http: httpx.AsyncClient, channel: str, url: str, payload: dict[str, Any], timeout: float
) -> httpx.Response:
    try:
        return await http.post(url, json=payload, timeout=timeout)
    except httpx.HTTPError as exc:
        raise DeliveryFailed(channel, kind=type(exc).__name__) from None


class TelegramNotifier:
    """``sendMessage`` to one admin chat through the Bot API."""

    external = True

    def __init__(
        self,
        *,
        api_base: str,
        token: str,
        chat_id: int,
        http: httpx.AsyncClient,
        timeout: float = 10.0,
    ) -> None:
        self.name = f"telegram:{chat_id}"
        self._url = f"{api_base.rstrip('/')}/bot{token}/sendMessage"
        self._chat_id = chat_id
        self._http = http
        self._timeout = timeout
        _guard_logs(token)

    def __repr__(self) -> str:
        return f"TelegramNotifier(chat_id={self._chat_id})"  # never the token

    async def send(self, page: Page) -> None:
        payload = {
            "chat_id": self._chat_id,
            "text": page.text[:TELEGRAM_MAX_CHARS],
            "disable_web_page_preview": True,
        }
        answer = await _post(self._http, self.name, self._url, payload, self._timeout)
        retry_after: float | None = None
        ok = False
        try:
            body = answer.json()
            ok = bool(body.get("ok")) if isinstance(body, dict) else False
            params = body.get("parameters") if isinstance(body, dict) else None
            if isinstance(params, dict) and isinstance(params.get("retry_after"), int | float):
                retry_after = float(params["retry_after"])
        except ValueError:
            ok = False
        if not answer.is_success or not ok:
            raise DeliveryFailed(self.name, status=answer.status_code, retry_after=retry_after)


class WebhookNotifier:
    """A JSON ``POST`` per page to a generic webhook (Slack-style ``text`` included)."""

    external = True
    name = "webhook"

    def __init__(self, url: str, *, http: httpx.AsyncClient, timeout: float = 10.0) -> None:
        self._url = url
        self._http = http
        self._timeout = timeout
        _guard_logs(url)  # webhook URLs often embed a secret path

    def __repr__(self) -> str:
        return "WebhookNotifier()"

    async def send(self, page: Page) -> None:
        payload = {
            "source": "memory-worker",
            "id": page.id,
            "type": page.event_type,
            "workflow": page.workflow,
            "severity": page.severity,
            "dedupe_key": page.dedupe_key,
            "created_at_ms": page.created_at_ms,
            "text": page.text,
        }
        answer = await _post(self._http, self.name, self._url, payload, self._timeout)
        if not answer.is_success:
            raise DeliveryFailed(self.name, status=answer.status_code)


class LogNotifier:
    """Writes the page to the log; always available, never counts as configured."""

    external = False
    name = "log"

    async def send(self, page: Page) -> None:
        log.warning(
            "admin.page",
            page_id=page.id,
            event_type=page.event_type,
            workflow=page.workflow,
            severity=page.severity,
            dedupe_key=page.dedupe_key,
            text=page.text,
        )


def notifiers_from_settings(settings: Settings, http: httpx.AsyncClient) -> list[Notifier]:
    """Telegram (token + chat ids), the webhook (URL) when configured, and always the log."""
    notifiers: list[Notifier] = []
    token = settings.admin_telegram_bot_token
    if token is not None and token.get_secret_value() and settings.admin_telegram_chat_ids:
        notifiers.extend(
            TelegramNotifier(
                api_base=settings.telegram_api_base,
                token=token.get_secret_value(),
                chat_id=chat_id,
                http=http,
            )
            for chat_id in settings.admin_telegram_chat_ids
        )
    webhook = settings.admin_webhook_url
    if webhook is not None and webhook.get_secret_value():
        notifiers.append(WebhookNotifier(webhook.get_secret_value(), http=http))
    notifiers.append(LogNotifier())
    return notifiers


def configured_channels(settings: Settings) -> list[str]:
    """The external channels these settings configure (``telegram``, ``webhook``), as
    :func:`notifiers_from_settings` would build them; [] when pages reach nobody."""
    channels = []
    token = settings.admin_telegram_bot_token
    if token is not None and token.get_secret_value() and settings.admin_telegram_chat_ids:
        channels.append("telegram")
    webhook = settings.admin_webhook_url
    if webhook is not None and webhook.get_secret_value():
        channels.append("webhook")
    return channels


def external(notifiers: Sequence[Notifier]) -> list[Notifier]:
    """The channels that reach a human."""
    return [n for n in notifiers if n.external]
