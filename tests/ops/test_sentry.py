"""Sentry (§11): outages are breadcrumbs, unexpected errors are events, nothing sensitive leaves.

A capturing transport stands in for the network: every envelope the SDK
would send is kept and serialised, and the canaries (message text, card
text, tokens, a Redis password) are searched for in the raw bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import sentry_sdk
from pydantic import SecretStr

from llm_client import (
    AllCircuitsOpen,
    BackendUnavailable,
    CapacityUnavailable,
    DecodeError,
    RequestError,
    TaskTimeout,
)
from llm_client import Transport as TransportError
from memory_worker.farmsim import FarmSimulator
from memory_worker.ops.sentry import (
    is_breadcrumb,
    redact,
    report_failure,
    scrub_breadcrumb,
    scrub_event,
)
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from tests.support.factories import make_request
from tests.support.runner import tick_runner
from tests.support.sentry import CapturingTransport, capturing, http_breadcrumbs

MESSAGE_CANARY = "canary-message-7f3a my secret diary"
CARD_CANARY = "canary-card-91bc likes pistachio ice cream"
BEARER = "Bearer canarytoken0123456789abcdef"
SK_KEY = "sk-canary0123456789abcdefABCDEF"
BOT_TOKEN = "123456789:AAHcanarycanarycanarycanary0123456"
REDIS_PASSWORD = "hunter2canarypw"
CANARIES = [
    "canary-message-7f3a",
    "canary-card-91bc",
    "canarytoken0123456789abcdef",
    SK_KEY,
    BOT_TOKEN,
    REDIS_PASSWORD,
]


@pytest.fixture
def capture(settings: Settings) -> Iterator[CapturingTransport]:
    with capturing(settings, environment="test") as transport:
        yield transport


class Raising:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        raise self.error


@pytest.mark.parametrize(
    ("error", "outage"),
    [
        (BackendUnavailable("UPSTREAM_ERROR: dns", code="UPSTREAM_ERROR"), True),
        (TransportError("connection refused"), True),
        (CapacityUnavailable("no slots available"), True),
        (AllCircuitsOpen("every target open", workflow="memory_extraction"), True),
        (TaskTimeout("task budget", seconds=1), True),
        (DecodeError("decode memory extractor response: not JSON"), True),
        (RequestError("bad request built"), False),
        (KeyError("fact_text"), False),
        (RuntimeError("boom"), False),
    ],
    ids=[
        "backend-unavailable",
        "transport",
        "capacity",
        "all-circuits-open",
        "task-timeout",
        "decode",
        "request-error",
        "key-error",
        "runtime-error",
    ],
)
def test_is_breadcrumb(error: BaseException, outage: bool) -> None:
    assert is_breadcrumb(error) is outage


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        (f"Authorization: {BEARER}", "canarytoken"),
        (f"key {SK_KEY} used", SK_KEY),
        (f"POST https://api.telegram.org/bot{BOT_TOKEN}/sendMessage", BOT_TOKEN),
        (f"redis://:{REDIS_PASSWORD}@db:6379/0", REDIS_PASSWORD),
        (f"rediss://user:{REDIS_PASSWORD}@db:6379/0", REDIS_PASSWORD),
        ("https://x/hook?token=abcdef123456&x=1", "abcdef123456"),
        ("password=hunter2", "hunter2"),
    ],
)
def test_redact(text: str, absent: str) -> None:
    assert absent not in redact(text)


def test_scrub_event_drops_exception_text_and_text_fields() -> None:
    event = {
        "exception": {
            "values": [
                {
                    "type": "ValueError",
                    "value": MESSAGE_CANARY,
                    "stacktrace": {"frames": [{"function": "f", "vars": {"x": CARD_CANARY}}]},
                }
            ]
        },
        "extra": {"fact_text": CARD_CANARY, "run_id": "r1", "url": f"redis://:{REDIS_PASSWORD}@h"},
        "request": {"data": MESSAGE_CANARY},
    }
    cleaned = scrub_event(event)
    text = repr(cleaned)
    for canary in CANARIES:
        assert canary not in text
    assert cleaned["exception"]["values"][0]["type"] == "ValueError"
    assert cleaned["extra"]["run_id"] == "r1"


async def test_outage_makes_no_event_and_a_bug_makes_one_without_secrets(
    settings: Settings, redis: Any, capture: CapturingTransport
) -> None:
    store = RunStore(redis, settings)
    texts = [MESSAGE_CANARY, CARD_CANARY]
    for i in range(8):
        await store.enqueue(make_request(100 + i, hour=i, texts=texts))

    outages: list[BaseException] = [
        BackendUnavailable(
            f"UPSTREAM_ERROR: [Errno -3] {MESSAGE_CANARY} {BEARER}", code="UPSTREAM_ERROR"
        ),
        TransportError(f"connection refused redis://:{REDIS_PASSWORD}@db"),
        CapacityUnavailable("no slots available"),
        AllCircuitsOpen("every target open", workflow="memory_extraction"),
    ]
    for error in outages:
        pipeline = tick_runner(
            settings=settings,
            redis=redis,
            processor=Raising(error),
            report_failure=report_failure,
        )
        assert await pipeline.tick("job") == "deferred"
    # breadcrumbs from logs that carry secrets (third-party logs, e.g. an HTTP client)
    logging.getLogger("httpx").warning(
        "HTTP Request: POST https://api.telegram.org/bot%s/sendMessage", BOT_TOKEN
    )
    logging.getLogger("memory_worker.test").error("routing.route_unavailable key=%s", SK_KEY)
    sentry_sdk.flush()
    assert capture.events() == []  # an outage of any kind: zero events

    bug = RuntimeError(f"unexpected: {CARD_CANARY} {MESSAGE_CANARY} {BEARER} {SK_KEY}")
    pipeline = tick_runner(
        settings=settings, redis=redis, processor=Raising(bug), report_failure=report_failure
    )
    assert await pipeline.tick("job") == "failed"
    sentry_sdk.flush()

    events = capture.events()
    assert len(events) == 1
    (event,) = events
    assert event["exception"]["values"][-1]["type"] == "RuntimeError"
    assert event["tags"]["run.code"] == "RuntimeError"
    assert event["environment"] == "test"
    assert event["release"].startswith("memory-worker@")
    crumbs = event["breadcrumbs"]["values"]
    assert any(c.get("category") == "outage" for c in crumbs)  # the outage story came along
    assert any("api.telegram.org" in (c.get("message") or "") for c in crumbs)
    raw = capture.raw()
    for canary in CANARIES:
        assert canary.encode() not in raw, canary


# --- HTTP breadcrumbs (fault-matrix row 22) --------------------------------------------------

SLACK_SECRET = "CanarySlackSecret0123456789"
QUERY_SECRET = "canaryquerysig0123"
FRAGMENT_SECRET = "canaryfragment0123"
WEBHOOK_CANARY = "CanaryWebhookTok0123456789"
CONFIGURED_SECRET = "cfg-canary-shape-of-nothing"


@pytest.mark.parametrize(
    ("text", "absent", "kept"),
    [
        (f"https://hooks.slack.com/services/T000/B000/{SLACK_SECRET}", SLACK_SECRET, "slack.com"),
        (f"https://discord.com/api/webhooks/123/{WEBHOOK_CANARY}", WEBHOOK_CANARY, "/webhooks/"),
        ("https://api.telegram.org/bot123:short/getMe", "short", "/getMe"),
        (f"https://x/a?sig={QUERY_SECRET}&page=2", QUERY_SECRET, "sig="),
        (f"https://x/a#{FRAGMENT_SECRET}", FRAGMENT_SECRET, "https://x/a"),
        (f"https://x/hook/{WEBHOOK_CANARY}", WEBHOOK_CANARY, "https://x/"),
        ("http://127.0.0.1:8080/v1/jobs/abc", "@", "/v1/jobs/abc"),
    ],
    ids=["slack", "discord", "telegram-short", "query", "fragment", "token-segment", "plain"],
)
def test_redact_urls(text: str, absent: str, kept: str) -> None:
    cleaned = redact(text)
    assert absent not in cleaned
    assert kept in cleaned


def test_http_breadcrumb_fields_lose_their_values() -> None:
    crumb = {
        "type": "http",
        "category": "httplib",
        "data": {
            "url": f"https://hooks.slack.com/services/T000/B000/{SLACK_SECRET}",
            "http.method": "POST",
            "http.query": f"sig={QUERY_SECRET}&plain=value",
            "http.fragment": FRAGMENT_SECRET,
            "status_code": 200,
        },
    }
    data = scrub_breadcrumb(crumb)["data"]
    assert data["url"] == "https://hooks.slack.com/services/[Filtered]"
    assert data["http.query"] == "sig=[Filtered]&plain=[Filtered]"
    assert data["http.fragment"] == "[Filtered]"
    assert data["http.method"] == "POST"
    assert data["status_code"] == 200


async def test_real_http_breadcrumbs_carry_no_secret(
    settings: Settings, sim: FarmSimulator
) -> None:
    """Real httpx calls (sentry's own HTTP breadcrumbs), then a real event: no canary leaves."""
    webhook = SecretStr(f"{sim.base_url}/plain/{CONFIGURED_SECRET}")
    with capturing(settings, admin_webhook_url=webhook) as transport:
        async with httpx.AsyncClient(timeout=5) as client:
            for path in (
                f"/services/T000/B000/{SLACK_SECRET}",
                f"/bot{BOT_TOKEN}/sendMessage",
                f"/v1/jobs?sig={QUERY_SECRET}#{FRAGMENT_SECRET}",
                f"/plain/{CONFIGURED_SECRET}",  # no known shape: filtered as a configured secret
            ):
                await client.post(sim.base_url + path, json={})
        sentry_sdk.capture_exception(RuntimeError("a bug"))
    (event,) = transport.events()
    crumbs = http_breadcrumbs(event)
    assert len(crumbs) >= 4, crumbs  # the breadcrumbs were really recorded, then scrubbed
    raw = transport.raw()
    for canary in (SLACK_SECRET, BOT_TOKEN, QUERY_SECRET, FRAGMENT_SECRET, CONFIGURED_SECRET):
        assert canary.encode() not in raw, canary
    assert sim.base_url.encode() in raw  # host and port stay: the breadcrumb is still useful
