"""§9: ``report`` and the console say it loudly when pages reach nobody.

User story: "during the outage `report` said 'sent 0, suppressed 7' and the console 'pages
sent 0' — I read that as all quiet; nobody had been told." Now both lead with a warning
when no channel is configured here, or when a worker could only log its pages.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import SecretStr

from memory_worker.keys import Keys
from memory_worker.paging.notifiers import configured_channels
from memory_worker.paging.policy import unconfigured_warning
from memory_worker.settings import Settings
from tests.support.console import MakeClient
from tests.support.console import make_client as make_client  # the fixture
from tests.support.harness import cli

WEBHOOK = "https://hooks.example.org/services/T000/B000/canary-webhook-secret"
TELEGRAM = {"admin_telegram_bot_token": SecretStr("424242:canary-telegram-token")}


@pytest.mark.parametrize(
    ("update", "channels"),
    [
        pytest.param({}, [], id="nothing"),
        pytest.param(TELEGRAM, [], id="token-without-chat-ids"),
        pytest.param({**TELEGRAM, "admin_telegram_chat_ids": [7]}, ["telegram"], id="telegram"),
        pytest.param({"admin_webhook_url": SecretStr(WEBHOOK)}, ["webhook"], id="webhook"),
    ],
)
def test_configured_channels(update: dict[str, Any], channels: list[str]) -> None:
    assert configured_channels(Settings().model_copy(update=update)) == channels


@pytest.mark.parametrize(
    ("channels", "pages", "expected"),
    [
        pytest.param(["telegram"], {"sent": 3}, None, id="configured-all-sent"),
        pytest.param([], {}, "no paging channel is configured", id="none-quiet"),
        pytest.param(
            [], {"suppressed": 7, "not_configured": 2}, "2 page(s) so far reached nobody", id="none"
        ),
        pytest.param(
            ["webhook"], {"not_configured": 1}, "a worker has no paging channel", id="a-worker"
        ),
    ],
)
def test_unconfigured_warning(
    channels: list[str], pages: dict[str, int], expected: str | None
) -> None:
    warning = unconfigured_warning(channels, pages)
    if expected is None:
        assert warning is None
        return
    assert warning is not None
    assert expected in warning
    assert "ADMIN_WEBHOOK_URL" in warning  # says what to set


async def test_report_warns_loudly_when_no_channel_is_configured(
    settings: Settings, redis: Any
) -> None:
    keys = Keys(settings.key_prefix)
    await redis.hset(keys.admin_counters, mapping={"suppressed": 7, "not_configured": 1})
    done = cli(settings, "report")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("WARNING") == 2  # first and last line: on screen either way
    assert "no paging channel is configured" in done.stdout
    assert "1 page(s) so far reached nobody" in done.stdout.replace("\n", " ")
    document = json.loads(cli(settings, "report", "--json").stdout)
    assert document["paging"]["channels"] == []
    assert "no paging channel" in document["paging"]["warning"]


async def test_report_is_quiet_when_a_channel_is_configured(settings: Settings, redis: Any) -> None:
    await redis.hset(Keys(settings.key_prefix).admin_counters, mapping={"sent": 2})
    done = cli(settings, "report", ADMIN_WEBHOOK_URL=WEBHOOK)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stdout
    assert "canary-webhook-secret" not in done.stdout + done.stderr
    # …until a worker logs a page it had no channel for
    await redis.hincrby(Keys(settings.key_prefix).admin_counters, "not_configured", 1)
    done = cli(settings, "report", ADMIN_WEBHOOK_URL=WEBHOOK)
    assert "a worker has no paging channel" in done.stdout


async def test_the_console_overview_warns_when_nobody_is_paged(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await redis.hset(Keys(settings.key_prefix).admin_counters, mapping={"suppressed": 7})
    body = await (await (await make_client(settings)).get("/")).text()
    assert 'id="paging-warning" role="alert"' in body
    assert "no paging channel is configured" in body
    configured = settings.model_copy(update={"admin_webhook_url": SecretStr(WEBHOOK)})
    body = await (await (await make_client(configured)).get("/")).text()
    assert 'id="paging-warning"' not in body
    assert "canary-webhook-secret" not in body
