"""Structured logs (§11): JSON lines; every run transition carries run id, chat id, reason,
attempt — and never message text.

Runs in a subprocess so the production logging configuration is exercised exactly
(structlog caches loggers per process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from memory_worker.settings import Settings
from memory_worker.settings.types import reveal

CANARY = "canary-log-5d1e I am allergic to peanuts"

SCRIPT = textwrap.dedent(
    """
    import asyncio, os
    from llm_client import BackendUnavailable
    from llm_client._errors import TaskTimeout
    from memory_worker.storage.connections import client_from_url
    from memory_worker.logs import configure
    from memory_worker.pipeline.processing import ProcessResult
    from memory_worker.runs import RunStore
    from memory_worker.settings import Settings
    from tests.support.runner import tick_runner
    from memory_worker.settings.types import reveal
    from tests.support.factories import make_request

    configure("INFO", "json")

    class Scripted:
        def __init__(self, outcomes):
            self.outcomes = list(outcomes)

        async def __call__(self, run, *, deadline):
            outcome = self.outcomes.pop(0)
            if isinstance(outcome, BaseException):
                raise outcome
            return ProcessResult(summary={"cards": 1})

    async def main():
        settings = Settings(backoff_unit_seconds=0.001, max_attempts=2)
        redis = client_from_url(reveal(settings.redis_url) or "")
        store = RunStore(redis, settings)
        await store.enqueue(make_request(4242, texts=[os.environ["CANARY"]]))
        await store.enqueue(make_request(4343, hour=5, texts=[os.environ["CANARY"]]))
        outcomes = [
            BackendUnavailable("UPSTREAM_ERROR: " + os.environ["CANARY"], code="UPSTREAM_ERROR"),
            TaskTimeout("task budget " + os.environ["CANARY"], seconds=1),
            None,
            TaskTimeout("task budget", seconds=1),
            TaskTimeout("task budget", seconds=1),
        ]
        pipeline = tick_runner(settings=settings, redis=redis, processor=Scripted(outcomes))
        for _ in range(len(outcomes)):
            await asyncio.sleep(0.01)
            await pipeline.tick("job")
        await redis.aclose()

    asyncio.run(main())
    """
)


def test_run_transitions_are_json_lines_with_ids_and_no_text(
    settings: Settings, redis: Any
) -> None:
    env = os.environ | {
        "REDIS_URL": reveal(settings.redis_url) or "",
        "MEMORY_KEY_PREFIX": settings.key_prefix,
        "CANARY": CANARY,
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert CANARY.split()[0] not in done.stderr
    assert "peanuts" not in done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]
    by_event: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        assert {"event", "level", "timestamp"} <= set(line)
        by_event.setdefault(line["event"], []).append(line)

    transitions = ["run_claimed", "run_released", "run_failed", "run_completed", "run_retired"]
    for name in transitions:
        assert name in by_event, (name, sorted(by_event))
        for line in by_event[name]:
            assert line["run_id"].startswith("r")
            assert line["chat_id"] in (4242, 4343)
            assert isinstance(line["attempt"], int)
    assert by_event["run_released"][0]["reason"] == "provider_unavailable"
    assert by_event["run_released"][0]["attempt"] == 1  # the attempt that was refunded
    assert by_event["run_failed"][0]["reason"] == "provider_timeout"
    assert by_event["run_failed"][0]["code"] == "task_timeout"
    assert by_event["run_retired"][0]["reason"] == "provider_timeout"
    assert by_event["run_retired"][0]["attempt"] == 2


SECRET_SCRIPT = textwrap.dedent(
    """
    import logging, os
    from memory_worker.logs import configure, get_logger

    configure("INFO", "json")
    log = get_logger("memory_worker.test")
    log.warning("farm_answer", detail="farm echoed key " + os.environ["KEY"])
    log.warning("nested", extra={"items": ["Authorization: Bearer " + os.environ["KEY"]]})
    logging.getLogger("httpx").warning("HTTP Request: GET " + os.environ["URL"])
    logging.getLogger("arq.worker").error("job said: пароль от вайфая " + os.environ["PASSWORD"])
    try:
        raise RuntimeError("boom with " + os.environ["KEY"])
    except RuntimeError:
        log.exception("unexpected")
    """
)


def test_no_secret_reaches_a_log_line_whoever_logs_it() -> None:
    """§11, §14: every string of every line — ours, a library's, a traceback — passes
    through the masking module's scrub before it is written."""
    key = "sk-live-" + "7f3a" * 8
    password = "Kx9canary2024"
    url_secret = "pgcanary9secret"
    env = os.environ | {
        "KEY": key,
        "PASSWORD": password,
        "URL": f"postgres://admin:{url_secret}@db.internal/app?token=querycanary123",
    }
    done = subprocess.run(
        [sys.executable, "-c", SECRET_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]
    assert [line["event"].split()[0] for line in lines][:2] == ["farm_answer", "nested"]
    assert len(lines) == 5
    for secret in (key, key[8:], password, url_secret, "querycanary123"):
        assert secret not in done.stderr
    assert "[Filtered]" in lines[0]["detail"]
    assert "RuntimeError" in lines[-1]["exception"]  # the traceback is kept, its secret is not


TRACEBACK_SCRIPT = textwrap.dedent(
    """
    import logging, sys
    from memory_worker.logs import configure, get_logger

    secret = sys.argv[2]
    configure("DEBUG", sys.argv[1], secrets=[secret, "short"])
    configure("DEBUG", sys.argv[1])  # a later reconfiguration keeps the secrets

    def failing(password=secret):
        raise RuntimeError("connect failed with " + password)

    try:
        failing()
    except RuntimeError:
        get_logger("memory_worker.x").debug("ours", url="redis://:" + secret + "@h/0", exc_info=True)
        logging.getLogger("arq.worker").exception("theirs %s", secret)
    """
)


@pytest.mark.parametrize("fmt", ["console", "json"])
def test_tracebacks_have_no_locals_and_lines_lose_the_configured_secrets(fmt: str) -> None:
    """Rich tracebacks with locals once printed every secret a frame held."""
    secret = "canary-secret-8c2f"
    done = subprocess.run(
        [sys.executable, "-c", TRACEBACK_SCRIPT, fmt, secret],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == ""
    assert done.stderr.count("Traceback (most recent call last)") == 2  # ours and stdlib's
    assert "RuntimeError: connect failed with [Filtered]" in done.stderr
    assert secret not in done.stderr
    assert "password =" not in done.stderr  # no frame locals


ARQ_SCRIPT = textwrap.dedent(
    """
    import asyncio, os, sys
    from arq import Worker
    from arq.connections import ArqRedis
    from memory_worker.logs import configure
    from memory_worker.storage.connections import client_from_url

    configure(sys.argv[1], "json")

    async def tick(ctx):
        return None

    async def main():
        # the library's client is a plain redis-py one; arq's worker takes an ArqRedis on its pool
        redis = ArqRedis(connection_pool=client_from_url(os.environ["URL"]).connection_pool)
        queue = os.environ["QUEUE"]
        for n in range(3):
            await redis.enqueue_job("tick", _job_id=f"{queue}-idle-{n}", _queue_name=queue)
        worker = Worker(
            functions=[tick], redis_pool=redis, queue_name=queue, burst=True,
            handle_signals=False, poll_delay=0.01,
        )
        await worker.main()
        await worker.close()
        await redis.delete(queue)

    asyncio.run(main())
    """
)


@pytest.mark.parametrize(("level", "shown"), [("INFO", False), ("DEBUG", True)])
def test_arqs_idle_job_lines_are_debug(
    settings: Settings, redis: Any, level: str, shown: bool
) -> None:
    """A real arq worker runs three jobs: its start and finish lines (→ / ● per job, most of
    an idle worker's log) are DEBUG records, so INFO leaves them out; its start-up line stays."""
    env = os.environ | {
        "URL": reveal(settings.redis_url) or "",
        "QUEUE": f"{settings.key_prefix}arq-log-test",
    }
    done = subprocess.run(
        [sys.executable, "-c", ARQ_SCRIPT, level],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]
    jobs = [line for line in lines if "idle-" in line["event"]]
    assert any(line["event"].startswith("Starting worker") for line in lines)
    assert any(line["level"] == "info" for line in lines)
    if shown:
        assert len(jobs) == 6, jobs  # started and finished, per job
        assert {line["level"] for line in jobs} == {"debug"}
    else:
        assert jobs == []
