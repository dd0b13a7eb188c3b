"""Fault rows 10, 11, 18, 19, 20 and 22: Redis start-up checks, input, CLI errors, Sentry.

Real parts throughout: private Valkey servers whose ``maxmemory-policy``,
``maxmemory`` and ACL users the scenarios change, the real CLI and worker
processes, the loopback farm simulator, and Sentry with a capturing transport.
"""

from __future__ import annotations

import contextlib
import copy
import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import sentry_sdk
from pydantic import SecretStr
from redis.exceptions import OutOfMemoryError

from memory_worker.api import MemoryQueue
from memory_worker.errors import (
    DeliveryFailed,
    EvictionPolicyError,
    InvalidRunRequest,
    ScriptPermissionError,
    StoreWriteRefused,
)
from memory_worker.models import LATEST_TIME, RunStatus
from memory_worker.ops.metrics import read_sample
from memory_worker.paging.notifiers import Page, WebhookNotifier, notifiers_from_settings
from memory_worker.runs import RunStore
from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.checks import read_health
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from tests.faults.context import FaultContext, Scenario
from tests.support.factories import request_dict
from tests.support.harness import Fleet, cli, completed_run, eventually, free_port
from tests.support.sentry import capturing, http_breadcrumbs


@asynccontextmanager
async def private_valkey(ctx: FaultContext, name: str) -> AsyncIterator[tuple[EmbeddedValkey, Any]]:
    """A Valkey of this scenario's own (its config and users are ours to break), plus admin."""
    server = EmbeddedValkey(ctx.tmp_path / name).ensure()
    admin = client_from_url(server.url)
    try:
        yield server, admin
    finally:
        await admin.aclose()
        server.stop()


def as_user(server: EmbeddedValkey, settings: Settings, user: str = "", pw: str = "") -> Settings:
    if not user:  # the server's own URL (the embedded server has a generated password)
        return settings.model_copy(update={"redis_url": server.url})
    url = server.url_as(user, pw)
    return settings.model_copy(update={"redis_url": url})


def failed_with_one_line(done: subprocess.CompletedProcess[str]) -> str:
    """Exit 2, no traceback, and the last stderr line is the one ``error:`` line."""
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == errors[0]
    return errors[0]


async def stored_runs(redis: Any, settings: Settings) -> int:
    return sum(
        n for status, n in (await RunStore(redis, settings).counts()).items() if status != "retired"
    )


# --- row 10: an evicting Redis ---------------------------------------------------------------


async def row10(ctx: FaultContext) -> None:
    """allkeys-lru at 6 MB lost 79/150 runs. Now: the worker and the bot refuse to start on it;
    on noeviction every acknowledged run survives memory pressure and evictions stay 0."""
    async with private_valkey(ctx, "evicting") as (server, admin):
        settings = as_user(server, ctx.settings)
        await admin.config_set("maxmemory", "6mb")
        await admin.config_set("maxmemory-policy", "allkeys-lru")

        worker = cli(settings, "run")  # a real worker process: refuses, does not hang
        line = failed_with_one_line(worker)
        assert "maxmemory-policy" in line
        assert "allkeys-lru" in line
        with pytest.raises(EvictionPolicyError):
            await MemoryQueue.connect(settings=settings)

        await admin.config_set("maxmemory-policy", "noeviction")
        queue = await MemoryQueue.connect(settings=settings)
        acknowledged: list[str] = []
        refused = 0
        causes: list[type[BaseException] | None] = []
        try:
            for i in range(150):  # ~9 MB of runs into 6 MB
                texts = [f"run {i} part {p} " + "x" * 15_000 for p in range(4)]
                try:
                    result = await queue.enqueue(request_dict(5000 + i, texts=texts))
                except StoreWriteRefused as refusal:  # the bot's calls raise our types only
                    causes.append(type(refusal.__cause__) if refusal.__cause__ else None)
                    refused += 1  # the caller is told; nothing is silently dropped
                    continue
                assert result.status.value == "enqueued"
                assert result.run_id is not None  # an enqueued run has its id
                acknowledged.append(result.run_id)
            assert refused > 0, "the scenario must reach maxmemory"
            assert set(causes) == {OutOfMemoryError}, causes
            assert acknowledged
            for run_id in acknowledged:  # every acknowledged run is still there
                assert (await queue.get_run(run_id)).status is RunStatus.QUEUED
            sample = await read_sample(admin, settings)
            assert sample.runs["queued"] == len(acknowledged)
            health = await read_health(admin)
            assert health is not None
            assert health.evicted_keys == 0
            assert health.maxmemory_bytes == 6 * 1024 * 1024
        finally:
            await queue.close()


# --- row 11: a user without scripts ----------------------------------------------------------


async def row11(ctx: FaultContext) -> None:
    """An ACL user without EVAL/EVALSHA read as ready while every enqueue and claim failed."""
    async with private_valkey(ctx, "acl") as (server, admin):
        await admin.execute_command(
            "ACL", "SETUSER", "bot", "on", ">bot-pw", "~*", "&*", "+@all", "-eval", "-evalsha"
        )
        settings = as_user(server, ctx.settings, "bot", "bot-pw")

        line = failed_with_one_line(cli(settings, "run"))  # the worker refuses to start
        assert "Lua scripts" in line
        with pytest.raises(ScriptPermissionError):
            await MemoryQueue.connect(settings=settings)

        health = HealthServer(settings, reveal(settings.redis_url) or "", port=0)
        await health.start()
        try:
            async with httpx.AsyncClient(timeout=5) as client:
                unready = await client.get(health.base_url + "/readyz")
                assert unready.status_code == 503
                assert unready.json()["problems"] == ["redis_scripts_forbidden"]
                assert unready.json()["redis"]["ok"] is True  # reachable, but useless

                await admin.execute_command("ACL", "SETUSER", "bot", "+eval", "+evalsha")
                ready = await client.get(health.base_url + "/readyz")
                assert ready.status_code == 200, ready.text
        finally:
            await health.stop()
        async with await MemoryQueue.connect(settings=settings) as queue:
            assert (await queue.enqueue(request_dict(11))).status.value == "enqueued"


# --- row 18: all-or-nothing enqueue ----------------------------------------------------------


async def row18(ctx: FaultContext) -> None:
    """All-or-nothing: with one oversize request in the batch nothing is stored; without it, all are."""
    settings = ctx.settings.model_copy(update={"max_message_chars": 100})
    batch = [request_dict(1800 + i, hour=i) for i in range(3)]
    oversize = request_dict(1899, texts=["x" * 101])
    path = ctx.tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [*batch, oversize]) + "\n")

    line = failed_with_one_line(cli(settings, "enqueue", str(path), MEMORY_MAX_MESSAGE_CHARS="100"))
    assert "line 4: messages.0.text" in line
    assert await stored_runs(ctx.redis, settings) == 0

    async with await MemoryQueue.connect(settings=settings) as queue:
        with pytest.raises(InvalidRunRequest):
            await queue.enqueue_many([*batch, oversize])
        assert await stored_runs(ctx.redis, settings) == 0
        results = await queue.enqueue_many(batch)
    assert [r.status.value for r in results] == ["enqueued"] * 3

    fleet = Fleet(settings, ctx.tmp_path, {"discovery_base_url": ctx.sim.base_url})
    try:
        fleet.start(1)
        store = RunStore(ctx.redis, settings)

        async def all_done() -> bool:
            return (await store.counts())["completed"] == 3

        await eventually(all_done, timeout=60)
    finally:
        fleet.stop_all()
    for result in results:
        assert result.run_id is not None  # enqueued (asserted above): it has its id
        run = await store.get(result.run_id)
        assert run.attempts == 1
        assert run.releases == 0


# --- row 19: strict validation ---------------------------------------------------------------


def _variant(change: dict[str, Any], message: dict[str, Any] | None = None) -> dict[str, Any]:
    data = request_dict(1900)
    data.update(change)
    if message:
        data["messages"][0].update(message)
    return data


REJECTED = {
    "year 10000": _variant({"range_end": "9999-12-31T23:59:59-05:00"}),
    "chat_id true": _variant({"chat_id": True}),
    'chat_id "1"': _variant({"chat_id": "1"}),
    "chat_id 1.0": _variant({"chat_id": 1.0}),
    "integer timestamp": _variant({}, {"sent_at": 1_793_000_000}),
    "lone surrogate": _variant({}, {"text": "broken \ud83d half"}),
}


async def row19(ctx: FaultContext) -> None:
    """Year 10000 was accepted and made the chat's memory unreadable for good."""
    async with await MemoryQueue.connect(settings=ctx.settings) as queue:
        for label, data in REJECTED.items():
            with pytest.raises(InvalidRunRequest):
                await queue.enqueue(copy.deepcopy(data))
            assert await stored_runs(ctx.redis, ctx.settings) == 0, label
        path = ctx.tmp_path / "y10k.json"
        path.write_text(json.dumps(REJECTED["year 10000"]))
        assert "range_end" in failed_with_one_line(cli(ctx.settings, "enqueue", str(path)))

        # the latest accepted hour is processed and memory stays readable
        start = LATEST_TIME - timedelta(hours=1)
        edge = request_dict(1901)
        edge["range_start"] = start.isoformat()
        edge["range_end"] = (LATEST_TIME - timedelta(seconds=1)).isoformat()  # end is exclusive
        for i, message in enumerate(edge["messages"]):
            message["sent_at"] = (start + timedelta(minutes=i + 1)).isoformat()
        result = await queue.enqueue(edge)
        assert result.status.value == "enqueued"
        run_id = result.run_id
        assert run_id is not None  # an enqueued run has its id
        fleet = Fleet(ctx.settings, ctx.tmp_path, {"discovery_base_url": ctx.sim.base_url})
        try:
            fleet.start(1)
            run = await completed_run(lambda: queue.get_run(run_id), timeout=60)
        finally:
            fleet.stop_all()
        assert run.attempts == 1
        cards = await queue.visible_cards(1901)  # raised ValueError for a year-10000 run
        everything = await queue.cards.visible_cards(
            1901, include_inactive=True, now=datetime(2199, 12, 31, 23, 30, tzinfo=UTC)
        )
        assert everything, "the run produced memory"
        assert isinstance(cards, list)


# --- row 20: CLI failures --------------------------------------------------------------------


async def row20(ctx: FaultContext) -> None:
    """Each failure was a traceback with exit 1; now one line on stderr, exit 2, no secret."""
    secret = "pw-canary-20f1"
    good = ctx.tmp_path / "good.jsonl"
    good.write_text(json.dumps(request_dict(2000)) + "\n")
    bad_utf8 = ctx.tmp_path / "bad.jsonl"
    bad_utf8.write_bytes(b'{"chat_id": "\xff"}\n')
    routes = ctx.tmp_path / "routes.toml"
    routes.write_text("[routes.memory_extraction\n")
    port = free_port()
    unreachable = ctx.settings.model_copy(
        update={"redis_url": f"redis://:{secret}@127.0.0.1:{port}/0"}
    )
    async with private_valkey(ctx, "cli") as (server, admin):
        await admin.execute_command(
            "ACL", "SETUSER", "noperm", "on", ">noperm-pw", "~*", "&*", "+@all", "-evalsha"
        )
        await admin.execute_command("ACL", "SETUSER", "op", "on", ">right-pw", "~*", "&*", "+@all")
        cases: list[tuple[str, subprocess.CompletedProcess[str], str]] = [
            ("invalid utf-8", cli(ctx.settings, "enqueue", str(bad_utf8)), "not valid UTF-8"),
            ("unreachable", cli(unreachable, "runs", "list"), f"127.0.0.1:{port}"),
            (
                "wrong password",
                cli(as_user(server, ctx.settings, "op", secret), "runs", "list"),
                "refused the credentials",
            ),
            (
                "noperm",
                cli(as_user(server, ctx.settings, "noperm", "noperm-pw"), "enqueue", str(good)),
                "NOPERM",
            ),
            (
                "bad routes",
                cli(ctx.settings, "breakers", "list", MEMORY_ROUTES_FILE=str(routes)),
                "invalid routes",
            ),
            (
                "since overflow",
                cli(ctx.settings, "replay", "--since", "99999999999d", "--dry-run"),
                "too far in the past",
            ),
        ]
        await admin.config_set("maxmemory", "1")  # noeviction and full: every write refused
        cases.append(("oom", cli(as_user(server, ctx.settings), "enqueue", str(good)), "OOM"))
        await admin.config_set("maxmemory", "0")
        for label, done, expected in cases:
            line = failed_with_one_line(done)
            assert expected in line, (label, line)
            assert secret not in done.stderr, label
        assert await stored_runs(ctx.redis, ctx.settings) == 0
        assert await admin.dbsize() == 0  # NOPERM and OOM stored nothing either


# --- row 22: Sentry HTTP breadcrumbs ---------------------------------------------------------


async def row22(ctx: FaultContext) -> None:
    """Secrets in HTTP breadcrumbs (url, http.query, webhook paths, /bot<token>/) reached Sentry."""
    bot_token = "987654321:AAcanaryTelegramToken0123456789abcdef"
    slack_secret = "CanarySlackPath0123456789"
    unconfigured = "CanaryNotInSettings0123456789"
    query_secret = "canary-query-0123"
    base = ctx.sim.base_url
    settings = ctx.settings.model_copy(
        update={
            "admin_telegram_bot_token": SecretStr(bot_token),
            "admin_telegram_chat_ids": [42],
            "telegram_api_base": base,
            "admin_webhook_url": SecretStr(f"{base}/services/T000/B000/{slack_secret}"),
        }
    )
    page = Page("p1", "farm down", "route_unavailable", "memory_extraction", "error", "k", 0)
    with capturing(settings) as transport:
        async with httpx.AsyncClient(timeout=5) as http:
            channels = [
                *notifiers_from_settings(settings, http),
                # a webhook whose secret is in no setting: the URL's shape alone must hide it
                WebhookNotifier(f"{base}/hooks/{unconfigured}?sig={query_secret}", http=http),
            ]
            for channel in channels:
                # the simulator is not Slack or Telegram: delivery fails, the crumbs stay
                with contextlib.suppress(DeliveryFailed):
                    await channel.send(page)
        sentry_sdk.capture_exception(RuntimeError("a bug after the pages"))
    (event,) = transport.events()
    http_crumbs = http_breadcrumbs(event)
    assert len(http_crumbs) >= 3, event["breadcrumbs"]
    raw = transport.raw()
    for canary in (bot_token, slack_secret, unconfigured, query_secret, "AAcanaryTelegram"):
        assert canary.encode() not in raw, canary
    assert base.encode() in raw  # host and port are kept: the breadcrumbs still tell the story


ROWS: dict[int, Scenario] = {
    10: row10,
    11: row11,
    18: row18,
    19: row19,
    20: row20,
    22: row22,
}
