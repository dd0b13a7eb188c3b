"""No message text, card text or secret on the console's admin pages (§11, §15), canary-checked.

The console shows card and message text in the memory browser only (``/memory/CHAT`` and a
card's page, behind ``MEMORY_CONSOLE_SHOW_MEMORY``); every other page is an admin page. A
run whose messages carry the canaries (text, a password, a card number, a sender's name) is
released on a farm error that echoes them, then cancelled and replayed from its page; a farm
that echoes the prompt in its busy, 429, flaky and down answers fills the event stream (the
incidents of ``/events``, the outage banner on every page, ``/docs/NAME.md`` included). Every
admin page, every step's answer and every log line meanwhile is searched for the canaries;
the console token, the read token and the Redis password are canaries too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sentry_sdk
from pydantic import SecretStr

from llm_client import BackendUnavailable, LLMError
from memory_worker.api import MemoryQueue
from memory_worker.consolidation.routed import RoutedModels
from memory_worker.farmsim import FarmSimulator
from memory_worker.models import RunRequest, RunStatus
from memory_worker.ops.sentry import report_failure
from memory_worker.pipeline.processing import ProcessResult, RunProcessor
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.settings import Settings
from tests.support.canaries import (
    CARD_TEXT,
    CONSOLE_TOKEN,
    ECHO,
    ECHO_TEXT,
    MESSAGE_TEXTS,
    PROMPT_REQUEST,
    READ_TOKEN,
    REASON,
    REDIS_PASSWORD,
    SENDER,
    WF,
    echoing_farm_walks,
    echoing_models,
    leaking_lines,
    leaks,
    log_lines,
    stored_text,
)
from tests.support.card_history import queue as queue  # the fixture
from tests.support.console import MakeClient
from tests.support.console import make_client as make_client  # the fixture
from tests.support.factories import request_dict
from tests.support.routes import route, write_routes
from tests.support.runner import tick_runner
from tests.support.sentry import capturing

CHAT = 5151
BEARER = {"Authorization": f"Bearer {READ_TOKEN}"}


def canary_console(settings: Settings, tmp_path: Path) -> Settings:
    """Both console tokens set to canaries; a Redis URL with a canary password to display;
    the extraction route on the farm walk's down target (its breaker opens: the banner)."""
    down = {"transport": "discovery", "provider": "llm-down", "service": "llm-down", "model": "m"}
    return settings.model_copy(
        update={
            "console_token": SecretStr(CONSOLE_TOKEN),
            "console_read_token": SecretStr(READ_TOKEN),
            "redis_url": f"redis://:{REDIS_PASSWORD}@127.0.0.1:6399/0",
            "routes_file": write_routes(tmp_path, memory_extraction=route(down)),
        }
    )


class Raising:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        raise self.error


def canary_request(hour: int) -> RunRequest:
    data = request_dict(CHAT, hour=hour, texts=MESSAGE_TEXTS)
    for message in data["messages"]:
        message["sender_name"] = SENDER
    return RunRequest.model_validate(data)


def echo_error(error: LLMError) -> LLMError:
    """``error`` as a walk raises it: from the down target of the extraction route."""
    error.note_origin(WF, "llm-down/m")
    return error


class Extracting:
    """The worker's routed chat call with the canary prompt (see ``echoing_models``)."""

    def __init__(self, models: RoutedModels) -> None:
        self.models = models

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        await self.models.chat(PROMPT_REQUEST, workflow=WF, idempotency_key=run.id, timeout=10)
        raise AssertionError("the echoing farm answered")


#: Keys (fragments of their names) that only admin outputs read.
ADMIN_KEYS = (":events", "last_error", ":errors")

ADMIN_PAGES = [
    "/",
    "/runs",
    "/runs?status=cancelled",
    f"/runs?chat={CHAT}",
    "/events",
    f"/events?workflow={WF}",
    "/breakers",
    "/workers",
    "/settings",
    "/replay",
    "/docs",
    "/docs/runbook.md",
    "/docs/console.md",
]


async def test_run_cancel_replay_incidents_and_docs_pages_show_no_canary(
    redis: Any, settings: Settings, sim: FarmSimulator, make_client: MakeClient, tmp_path: Path
) -> None:
    store = RunStore(redis, settings)
    bodies: dict[str, str] = {}
    with log_lines() as logged, capturing(settings, environment="test") as sentry:
        await echoing_farm_walks(redis, settings.key_prefix, sim, calls=20)
        run_ids = []
        # two outages (the run is released, the farm's answer kept as its route's last
        # error: the banner) and a 400 quoting the prompt (the run fails, the answer kept in
        # its error log and as the route's last error)
        async with echoing_models(redis, settings, sim) as models:
            processors: list[RunProcessor] = [
                Raising(echo_error(BackendUnavailable(f"UPSTREAM_ERROR: {ECHO_TEXT}"))),
                Raising(echo_error(BackendUnavailable(f"UPSTREAM_ERROR: {ECHO}"))),
                Extracting(models),
            ]
            for hour, (processor, outcome) in enumerate(
                zip(processors, ["deferred", "deferred", "failed"], strict=True)
            ):
                enqueued = await store.enqueue(canary_request(hour))
                assert enqueued.run_id is not None
                run_ids.append(enqueued.run_id)
                pipeline = tick_runner(
                    settings=settings,
                    redis=redis,
                    processor=processor,
                    report_failure=report_failure,
                )
                assert await pipeline.tick("job") == outcome
        client = await make_client(canary_console(settings, tmp_path))
        for run_id in run_ids:
            for path in (
                f"/runs/{run_id}",
                f"/runs/{run_id}?action=cancel&preview=1",
                f"/runs/{run_id}?action=replay&preview=1",
            ):
                response = await client.get(path, headers=BEARER)
                assert response.status == 200, path
                bodies[path] = await response.text()
            for action in ("cancel", "replay"):
                csrf = await csrf_of_read(client)
                done = await client.post(
                    f"/runs/{run_id}",
                    data={"action": action, "csrf": csrf, "token": CONSOLE_TOKEN},
                    headers=BEARER,
                )
                bodies[f"POST {action} {run_id}"] = body = await done.text()
                assert done.status == 200, (action, body[-2000:])
                assert 'id="run-done"' in body
            assert (await store.get(run_id)).status is RunStatus.FAILED  # cancelled, replayed
        for path in ADMIN_PAGES:
            response = await client.get(path, headers=BEARER)
            assert response.status == 200, path
            bodies[path] = await response.text()
    # the paths were driven: the outage banner with the route's last farm error (on the docs
    # page too), the release history, the error log, the incidents, the audit events
    assert "Release history" in bodies[f"/runs/{run_ids[0]}"]
    assert "invalid request body" in bodies[f"/runs/{run_ids[2]}"]  # its error log, masked
    assert "[message text]" in bodies[f"/runs/{run_ids[2]}"]
    assert "last farm error" in bodies["/docs/runbook.md"]
    assert 'class="incident"' in bodies["/events"]
    assert "console_run_cancel" in bodies["/events"]
    assert "console_run_replay" in bodies["/events"]
    assert "target_ejected" in bodies["/events"]
    for where, body in bodies.items():
        assert leaks(body) == [], where
    assert leaking_lines(logged.getvalue()) == []
    sentry_sdk.flush()
    assert sentry.events(), "the failed run's farm error is an event"
    assert leaks(sentry.raw()) == []
    # what the admin pages read from: the event stream (audit entries included), the routes'
    # last errors, the runs' error logs (the runs' own payloads hold the text by design)
    stored = (await stored_text(redis, settings.key_prefix)).splitlines()
    admin = [line for line in stored if any(k in line.split(" ")[0] for k in ADMIN_KEYS)]
    assert len(admin) >= 3
    assert leaking_lines("\n".join(admin)) == []


async def csrf_of_read(client: Any) -> str:
    """The CSRF cookie of a console whose pages need the read token."""
    await client.get("/breakers", headers=BEARER)
    return await csrf_of_cookie(client)


async def csrf_of_cookie(client: Any) -> str:
    from memory_worker.console.auth import CSRF_COOKIE

    cookie = client.session.cookie_jar.filter_cookies(client.make_url("/")).get(CSRF_COOKIE)
    assert cookie is not None
    return str(cookie.value)


async def test_a_card_s_history_on_its_page_and_the_admin_pages_show_no_text(
    queue: MemoryQueue, settings: Settings, make_client: MakeClient, tmp_path: Path
) -> None:
    """The card page is the memory browser's (its own text shown by design); its history
    section, and every admin page after a remember, correct and retract, hold no text: not
    the card's, not the correction's, not the retraction's reason."""
    if queue.cards.redis is not queue.redis:
        pytest.skip("the console on the queue's server")
    first = await queue.remember(CHAT, "Alice keeps goats", user_id=11, actor="ops:ann")
    corrected = await queue.correct(first, CARD_TEXT, actor="ops:ann", request_id="req-1")
    await queue.retract(corrected, actor="ops:bob", reason=REASON, request_id="req-2")
    client = await make_client(canary_console(settings, tmp_path))
    bodies: dict[str, str] = {}
    with log_lines() as logged:
        for ref in (first, corrected):
            page = await client.get(f"/cards/{CHAT}/{ref.id}", headers=BEARER)
            assert page.status == 200
            body = await page.text()
            assert 'id="card-history"' in body
            bodies[f"history {ref.id}"] = body.split('id="card-history"')[1].split("</table>")[0]
        for path in ADMIN_PAGES:
            bodies[path] = await (await client.get(path, headers=BEARER)).text()
    assert "retracted" in bodies[f"history {corrected.id}"]
    assert "req-2" in bodies[f"history {corrected.id}"]
    for where, body in bodies.items():
        assert leaks(body) == [], where
    assert leaking_lines(logged.getvalue()) == []
