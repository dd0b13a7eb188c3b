"""No message text and no secret in an admin page (§9, §11): a farm that echoes the prompt in
its busy, 429, flaky and down answers, met by a real walker whose events go through the admin
reporter as the worker's do, then the pages delivered to a Telegram-compatible endpoint and
a webhook. Every page's body, the incident the reporter keeps, the outbox and the log lines
meanwhile are searched for the canaries (the bot token and the webhook's secret are canaries
too)."""

from __future__ import annotations

import httpx
from redis.asyncio import Redis

from memory_worker.farmsim import FarmSimulator
from memory_worker.keys import Keys
from memory_worker.paging.notifiers import Notifier, TelegramNotifier, WebhookNotifier
from memory_worker.paging.policy import ReportConfig
from memory_worker.paging.reports import AdminReporter
from memory_worker.settings import Settings
from tests.support.admin_fakes import FakeTelegram
from tests.support.canaries import (
    echoing_farm_walks,
    leaking_lines,
    leaks,
    log_lines,
    stored_text,
)

BOT_TOKEN = "424242:canary-bot-token-Zq81"
HOOK_SECRET = "canary-hook-secret-77"


async def test_pages_of_an_echoing_farm_hold_no_text_or_secret(
    redis: Redis, settings: Settings, sim: FarmSimulator, telegram: FakeTelegram
) -> None:
    async with httpx.AsyncClient() as http:
        channels: list[Notifier] = [
            TelegramNotifier(api_base=telegram.base_url, token=BOT_TOKEN, chat_id=7, http=http),
            WebhookNotifier(f"{telegram.base_url}/hook?token={HOOK_SECRET}", http=http),
        ]
        reporter = AdminReporter(
            redis, Keys(settings.key_prefix), channels, ReportConfig(cooldown_seconds=600)
        )
        with log_lines() as logged:
            await echoing_farm_walks(redis, settings.key_prefix, sim, calls=30, reporter=reporter)
            stored = await stored_text(redis, settings.key_prefix)  # the outbox, the incident
            stats = await reporter.deliver_due()
    assert stats.sent >= 1
    pages = [str(m.json) for m in telegram.messages()] + [str(h.json) for h in telegram.hooks()]
    assert len(pages) >= 2  # both channels paged
    assert any("memory-worker routing report" in page for page in pages)
    for page in pages:
        assert leaks(page) == [], page
        assert BOT_TOKEN not in page
        assert HOOK_SECRET not in page
    assert leaking_lines(stored) == []
    text = logged.getvalue()
    assert leaking_lines(text) == []
    assert BOT_TOKEN not in text
    assert HOOK_SECRET not in text
