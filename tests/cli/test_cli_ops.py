"""Operator commands (§11, §13): breakers list/reset, report, serve, run --serve."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import IO, Any

import httpx
import pytest

from llm_client import EventType, Outcome, RedisEventLog, RoutingEvent
from llm_client._outlier.model import Mode as Rule
from llm_client._outlier.model import Verdict
from memory_worker.keys import Keys
from memory_worker.ops.metrics import route_target_ids
from memory_worker.settings import Settings
from memory_worker.wiring import breaker_store, event_log, outlier_store
from tests.support.harness import cli, cli_env, free_port


async def trip(redis: Any, settings: Settings, target: str) -> None:
    breakers = breaker_store(redis, settings)
    for _ in range(settings.breaker_failure_threshold):
        permit = await breakers.acquire(target, lease_seconds=5)
        assert permit is not None
        await breakers.record(target, permit, Outcome.FAILURE)


async def test_breakers_list_and_reset(settings: Settings, redis: Any) -> None:
    routed = route_target_ids(settings)
    await trip(redis, settings, routed[0])
    await trip(redis, settings, "openrouter/llama")  # stored state of a target no route names

    listed = cli(settings, "breakers", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    states = {b["target"]: b for b in json.loads(listed.stdout)}
    assert set(routed) | {"openrouter/llama"} <= set(states)
    assert states[routed[0]]["state"] == "open"
    assert states[routed[0]]["trips"] == 1
    assert states["openrouter/llama"]["state"] == "open"
    table = cli(settings, "breakers", "list")
    assert routed[0] in table.stdout
    assert "open" in table.stdout

    reset = cli(settings, "breakers", "reset", routed[0], "--json")
    assert reset.returncode == 0, reset.stderr
    assert json.loads(reset.stdout)["state"] == "closed"
    view = await breaker_store(redis, settings).view(routed[0])
    assert view.circuit.value == "closed"
    assert view.consecutive_failures == 0

    unknown = cli(settings, "breakers", "reset", "nobody/nothing")
    assert unknown.returncode == 2
    assert "unknown target" in unknown.stderr
    forced = cli(settings, "breakers", "reset", "nobody/nothing", "--force")
    assert forced.returncode == 0, forced.stderr


async def test_breakers_list_shows_an_ejection_and_reset_clears_it(
    settings: Settings, redis: Any
) -> None:
    routed = route_target_ids(settings)
    outliers = outlier_store(redis, settings)
    await outliers.sync(routed, {routed[0]: (2, 30)})
    (ejected,) = await outliers.eject(routed, [Verdict(routed[0], Rule.FAILURE_PERCENTAGE, 2, 30)])
    assert ejected.times == 1

    listed = cli(settings, "breakers", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {b["target"]: b for b in json.loads(listed.stdout)}
    assert rows[routed[0]]["ejection"]["standing"] == "ejected"
    assert rows[routed[0]]["ejection"]["times"] == 1
    assert rows[routed[1]]["ejection"]["standing"] == "in"
    table = cli(settings, "breakers", "list", COLUMNS="400")
    assert "ejected" in table.stdout

    reset = cli(settings, "breakers", "reset", routed[0])
    assert reset.returncode == 0, reset.stderr
    (after,) = await outliers.sync([routed[0]])
    assert (after.standing.value, after.calls, after.times) == ("in", 0, 0)


async def test_a_cli_breaker_reset_is_audited_like_a_console_one(
    settings: Settings, redis: Any
) -> None:
    routed = route_target_ids(settings)
    await trip(redis, settings, routed[0])
    assert cli(settings, "breakers", "reset", routed[0]).returncode == 0
    events = await event_log(redis, settings).recent(types=["cli_breaker_reset"])
    assert len(events) == 1
    assert events[0].workflow == "console"  # the audit's lane, beside the console's resets
    assert events[0].counters == {"trips_before": 1}
    context = dict(events[0].context)
    assert context["target"] == routed[0]
    assert context["state_before"] == "open"
    assert context["actor"] == "cli"
    assert context["user"]
    shown = cli(settings, "report", "--type", "cli_breaker_reset", "--json")
    assert shown.returncode == 0, shown.stderr
    assert "cli_breaker_reset" in shown.stdout


async def test_report_shows_events_pages_and_backlog(settings: Settings, redis: Any) -> None:
    keys = Keys(settings.key_prefix)
    log = RedisEventLog(redis, keys)
    await log.emit(
        RoutingEvent(
            EventType.ATTEMPT_FAILED,
            "memory_extraction",
            target="llm-openai/memory-extractor",
            reason="provider_unavailable",
            error_code="UPSTREAM_ERROR",
        )
    )
    await log.emit(
        RoutingEvent(
            EventType.CIRCUIT_OPEN_EXHAUSTION, "memory_extraction", counters={"targets": 1}
        )
    )
    await redis.hincrby(keys.admin_counters, "sent", 1)
    await redis.hincrby(keys.admin_counters, "suppressed", 4)
    await redis.hset(keys.pipeline_state, "deferred_since", str(int(time.time() * 1000)))

    done = cli(settings, "report", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [e["type"] for e in data["events"]] == ["circuit_open_exhaustion", "attempt_failed"]
    assert data["events"][1]["error_code"] == "UPSTREAM_ERROR"
    assert data["pages"]["sent"] == 1
    assert data["pages"]["suppressed"] == 4
    assert data["pipeline_deferred_since"] is not None

    only = cli(settings, "report", "--json", "--type", "attempt_failed", "--limit", "5")
    assert [e["type"] for e in json.loads(only.stdout)["events"]] == ["attempt_failed"]
    table = cli(settings, "report")
    assert "circuit_open_exhaustion" in table.stdout
    assert "sent 1, suppressed 4" in table.stdout


def start(settings: Settings, *args: str, **env: str) -> subprocess.Popen[str]:
    """The command's output goes to a file, not a pipe nobody reads: a worker logging for
    longer than a pipe holds (a loaded host) would block on a write and never exit."""
    log = tempfile.TemporaryFile("w+")  # noqa: SIM115 — the process writes it until it ends
    proc = subprocess.Popen(
        [sys.executable, "-m", "memory_worker", *args],
        env=cli_env(settings, **env),
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    _LOGS[proc.pid] = log
    return proc


#: Each started process's output file (by pid).
_LOGS: dict[int, IO[str]] = {}


def output(proc: subprocess.Popen[str]) -> str:
    log = _LOGS[proc.pid]
    log.seek(0)
    return log.read()


def wait_ready(url: str, proc: subprocess.Popen[str], timeout: float = 60.0) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, output(proc)[-3000:]
        try:
            answer = httpx.get(url + "/readyz", timeout=2)
        except httpx.HTTPError:
            time.sleep(0.1)
            continue
        if answer.status_code == 200:
            return answer
        time.sleep(0.1)
    raise AssertionError("not ready in time")


def stop(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_serve_answers_health_ready_and_metrics(settings: Settings, redis: Any) -> None:
    port = free_port()
    proc = start(settings, "serve", "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    try:
        ready = wait_ready(url, proc)
        assert ready.json()["worker"] is None  # standalone: Redis only
        assert httpx.get(url + "/healthz").json()["status"] == "alive"
        metrics = httpx.get(url + "/metrics")
        assert metrics.status_code == 200
        assert 'memory_worker_runs{status="queued"} 0.0' in metrics.text
    finally:
        code = stop(proc)
    assert code == 0


def test_run_serve_reports_the_worker_loop(settings: Settings, redis: Any) -> None:
    port = free_port()
    proc = start(
        settings,
        "run",
        "--serve",
        "--port",
        str(port),
        MEMORY_WORKER_HEARTBEAT_SECONDS="0.5",
        MEMORY_SAFETY_NET_SECONDS="1",
    )
    url = f"http://127.0.0.1:{port}"
    try:
        ready = wait_ready(url, proc)
        worker = ready.json()["worker"]
        assert worker is not None
        assert worker["loop_heartbeat_age_s"] < 5
    finally:
        code = stop(proc)
    assert code == 0


def _worker_labels(url: str) -> set[str]:
    text = httpx.get(url + "/metrics").text
    return set(re.findall(r'^memory_worker_worker_slots\{worker="([^"]*)"\}', text, re.MULTILINE))


@pytest.mark.parametrize("slot", ["worker.2", ""], ids=["slot", "host-only"])
def test_a_workers_series_keep_their_name_across_a_restart(
    settings: Settings, redis: Any, slot: str
) -> None:
    """The process series are named by host and MEMORY_WORKER_SLOT, never by the pid: a
    restarted worker continues its series instead of starting new ones."""
    port = free_port()
    env = {
        "MEMORY_WORKER_HEARTBEAT_SECONDS": "0.5",
        **({"MEMORY_WORKER_SLOT": slot} if slot else {}),
    }
    expected = f"{socket.gethostname()}/{slot}" if slot else socket.gethostname()
    names, pids = [], []
    for _ in range(2):
        proc = start(settings, "run", "--serve", "--port", str(port), **env)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_ready(url, proc)
            names.append(_worker_labels(url))
            pids.append(proc.pid)
        finally:
            assert stop(proc) == 0
    assert names == [{expected}, {expected}]
    assert pids[0] != pids[1]
    assert not any(str(pid) in expected for pid in pids)
