"""§9 channels: Telegram Bot API and the JSON webhook against a loopback fake, and the log."""

from __future__ import annotations

import logging

import httpx
import pytest
from pydantic import SecretStr

from memory_worker.errors import DeliveryFailed
from memory_worker.paging.notifiers import (
    LogNotifier,
    Page,
    TelegramNotifier,
    WebhookNotifier,
    external,
    notifiers_from_settings,
)
from memory_worker.settings import Settings
from tests.support.admin_fakes import FakeTelegram

TOKEN = "123456:AAE-bot-token-CANARY"
PAGE = Page(
    id="p1",
    text="memory-worker routing report: circuit_open_exhaustion\nworkflow: memory_extraction",
    event_type="circuit_open_exhaustion",
    workflow="memory_extraction",
    severity="error",
    dedupe_key="circuit_open_exhaustion:memory_extraction:-",
    created_at_ms=1,
)


async def test_telegram_sends_text_to_the_chat(telegram: FakeTelegram) -> None:
    async with httpx.AsyncClient() as http:
        notifier = TelegramNotifier(
            api_base=telegram.base_url, token=TOKEN, chat_id=-100, http=http
        )
        await notifier.send(PAGE)
    (message,) = telegram.messages()
    assert message.token == TOKEN
    assert message.json["chat_id"] == -100
    assert message.json["text"] == PAGE.text
    assert notifier.name == "telegram:-100"
    assert TOKEN not in repr(notifier)


async def test_telegram_failure_is_typed_and_keeps_the_token_out(
    telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    telegram.failures.append(
        (429, {"ok": False, "description": "Too Many Requests", "parameters": {"retry_after": 7}})
    )
    caplog.set_level(logging.DEBUG)
    async with httpx.AsyncClient() as http:
        notifier = TelegramNotifier(api_base=telegram.base_url, token=TOKEN, chat_id=1, http=http)
        with pytest.raises(DeliveryFailed) as info:
            await notifier.send(PAGE)
    assert (info.value.status, info.value.retry_after) == (429, 7.0)
    assert TOKEN not in str(info.value)
    assert "HTTP Request" in caplog.text  # httpx did log the request …
    assert TOKEN not in caplog.text  # … without the token


async def test_telegram_ok_false_is_a_failure(telegram: FakeTelegram) -> None:
    telegram.failures.append((200, {"ok": False, "description": "chat not found"}))
    async with httpx.AsyncClient() as http:
        notifier = TelegramNotifier(api_base=telegram.base_url, token=TOKEN, chat_id=1, http=http)
        with pytest.raises(DeliveryFailed):
            await notifier.send(PAGE)


async def test_unreachable_channel_is_a_delivery_failure_without_the_url() -> None:
    async with httpx.AsyncClient() as http:
        notifier = TelegramNotifier(
            api_base="http://127.0.0.1:1", token=TOKEN, chat_id=1, http=http
        )
        with pytest.raises(DeliveryFailed) as info:
            await notifier.send(PAGE)
    assert info.value.kind == "ConnectError"
    assert TOKEN not in str(info.value)
    assert info.value.__cause__ is None


async def test_webhook_posts_json(telegram: FakeTelegram) -> None:
    async with httpx.AsyncClient() as http:
        hook = WebhookNotifier(f"{telegram.base_url}/hook", http=http)
        await hook.send(PAGE)
        telegram.hook_failures.append(502)
        with pytest.raises(DeliveryFailed) as info:
            await hook.send(PAGE)
    assert info.value.status == 502
    first = telegram.hooks()[0].json
    assert first["type"] == "circuit_open_exhaustion"
    assert first["text"] == PAGE.text
    assert first["dedupe_key"] == PAGE.dedupe_key
    assert first["source"] == "memory-worker"


async def test_log_notifier_never_fails() -> None:
    await LogNotifier().send(PAGE)


async def test_notifiers_from_settings() -> None:
    async with httpx.AsyncClient() as http:
        none = notifiers_from_settings(Settings(), http)
        assert [n.name for n in none] == ["log"]
        assert external(none) == []
        # a token without chat ids cannot page anyone: refused at start (settings_checks),
        # and a copy that has one anyway pages nobody
        token_without_chats = Settings().model_copy(
            update={"admin_telegram_bot_token": SecretStr(TOKEN)}
        )
        assert external(notifiers_from_settings(token_without_chats, http)) == []
        full = Settings(
            admin_telegram_bot_token=SecretStr(TOKEN),
            admin_telegram_chat_ids="11, 22",
            admin_webhook_url=SecretStr("https://hooks.example/abc"),
        )
        assert [n.name for n in notifiers_from_settings(full, http)] == [
            "telegram:11",
            "telegram:22",
            "webhook",
            "log",
        ]
