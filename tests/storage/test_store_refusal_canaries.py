"""A store that refuses writes says so without message text or a password (§7 "Store faults",
§11): the bot's enqueue on a full noeviction Valkey, a worker's tick on it, ``/readyz`` and
``/metrics`` meanwhile. The error the bot gets, every log line (rendered as the CLI's
processes write them), the readiness body and the scrape are searched for the canaries: the
run's message text, a password and a card number in it, the sender's name, and the Redis
password of the operator's URL (an ACL user's canary, and the server's own ``requirepass``).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from memory_worker.api import MemoryQueue
from memory_worker.errors import StoreWriteRefused
from memory_worker.models import RunRequest
from memory_worker.pipeline.processing import ProcessResult
from memory_worker.runs import ClaimedRun
from memory_worker.server import HealthServer
from memory_worker.settings import Settings
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from tests.support.canaries import MESSAGE_TEXTS, REDIS_PASSWORD, SENDER, leaking_lines, log_lines
from tests.support.factories import request_dict
from tests.support.runner import tick_runner

USER = "canary-operator"


async def never(run: ClaimedRun, *, deadline: float) -> ProcessResult:
    raise AssertionError("a refused claim hands out no run")


async def test_a_refusing_store_reports_without_text_or_password(
    own_valkey: EmbeddedValkey, tmp_path: Path
) -> None:
    admin = client_from_url(own_valkey.url)
    await admin.acl_setuser(
        USER,
        enabled=True,
        passwords=[f"+{REDIS_PASSWORD}"],
        keys=["~*"],
        channels=["&*"],
        commands=["+@all"],
    )
    url = own_valkey.url_as(USER, REDIS_PASSWORD)
    settings = Settings(
        redis_url=url, key_prefix="refused:", data_dir=tmp_path / "var", metrics_cache_seconds=0
    )
    data = request_dict(7171, texts=MESSAGE_TEXTS)
    for message in data["messages"]:
        message["sender_name"] = SENDER
    queue = await MemoryQueue.connect(settings=settings)
    server = HealthServer(settings, url, port=0)
    bodies: list[str] = []
    try:
        await server.start()
        with log_lines() as logged:
            first = await queue.enqueue(RunRequest.model_validate(data))  # a run to claim
            assert first.run_id is not None
            await admin.config_set("maxmemory", "1")  # noeviction: every growing write refused
            data["range_start"], data["range_end"] = "2026-11-02T00:00:00Z", "2026-11-02T01:00:00Z"
            for message in data["messages"]:
                message["sent_at"] = "2026-11-02T00:30:00Z"
            with pytest.raises(StoreWriteRefused) as refused:
                await queue.enqueue(RunRequest.model_validate(data))
            runner = tick_runner(
                settings=settings,
                redis=queue.redis,
                processor=never,
            )
            await runner.tick("job")
            async with httpx.AsyncClient(timeout=10) as http:
                for path in ("/readyz", "/metrics", "/healthz"):
                    bodies.append((await http.get(server.base_url + path)).text)
    finally:
        await admin.config_set("maxmemory", "0")
        await server.stop()
        await queue.close()
        await admin.aclose()
    assert '"unready"' in bodies[0]
    assert "refused" in bodies[0]
    for text in [str(refused.value), repr(refused.value.args), *bodies, logged.getvalue()]:
        assert leaking_lines(text) == []
        assert (own_valkey.password or "-") not in text
    assert "tick_store_error" in logged.getvalue()
