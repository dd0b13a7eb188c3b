"""The command line's rough edges, filed down (§11, §13): ``--version``, ``runs list
--retired`` with the last error, validated choices, a run's own attempt budget, help texts
printed as written, ``./.env`` read under the real environment, ``farmsim --fault``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from memory_worker.runs import RunStore
from memory_worker.runs.policy import FailurePlan
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.version import __version__
from tests.support.factories import make_request
from tests.support.harness import cli


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def test_version(settings: Settings) -> None:
    done = cli(settings, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"memory-worker {__version__}\n"


def test_help_texts_print_their_literal_text(settings: Settings) -> None:
    """Rich markup would print ``'memory-worker[local-embed]'`` as ``'memory-worker'``."""
    done = cli(settings, "farmsim", "--help", COLUMNS="200")
    assert done.returncode == 0, done.stderr
    assert "pip install 'memory-worker[local-embed]'" in " ".join(done.stdout.split())


def test_report_type_is_validated(settings: Settings) -> None:
    line = _one_error_line(cli(settings, "report", "--type", "bogus"))
    assert "unknown --type bogus" in line
    assert "circuit_opened" in line  # the choices are named
    assert cli(settings, "report", "--type", "circuit_opened", "--json").returncode == 0


async def test_runs_list_retired_with_the_last_error_and_the_runs_own_budget(
    settings: Settings, redis: Any
) -> None:
    worker = RunStore(redis, settings.model_copy(update={"max_attempts": 7}))
    kept = (await worker.enqueue(make_request(1))).run_id
    retired = (await worker.enqueue(make_request(2))).run_id
    claim = await worker.claim("w")
    assert claim is not None
    assert claim.id in (kept, retired)
    await worker.fail(
        claim,
        FailurePlan(retire=True, next_attempt_at_ms=None),
        code="UPSTREAM_ERROR",
        reason="provider_unavailable",
        message="farm down",
    )
    listed = cli(settings, "runs", "list", "--retired", "--json")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert [(r["id"], r["retired"], r["max_attempts"]) for r in runs] == [(claim.id, True, 7)]
    table = cli(settings, "runs", "list", "--retired", COLUMNS="250")
    assert "UPSTREAM_ERROR (provider_unavailable)" in table.stdout
    assert "1/7" in table.stdout  # the worker's budget, not this CLI's MEMORY_MAX_ATTEMPTS
    shown = cli(settings, "runs", "show", claim.id, MEMORY_MAX_ATTEMPTS="2", COLUMNS="250")
    assert "max_attempts: 7" in shown.stdout
    other = kept if claim.id == retired else retired
    assert other is not None
    never = cli(settings, "runs", "show", other, MEMORY_MAX_ATTEMPTS="2", COLUMNS="250")
    assert "never claimed" in never.stdout
    assert "--status queued" in _one_error_line(
        cli(settings, "runs", "list", "--retired", "--status", "queued")
    )


async def test_dotenv_in_the_working_directory_is_read_and_the_environment_wins(
    settings: Settings, redis: Any, tmp_path: Path
) -> None:
    rid = (await RunStore(redis, settings).enqueue(make_request(1))).run_id
    (tmp_path / ".env").write_text(
        f"REDIS_URL={reveal(settings.redis_url)}\nMEMORY_KEY_PREFIX={settings.key_prefix}\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "MEMORY_KEY_PREFIX")}

    def runs(**more: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "memory_worker", "runs", "list", "--json"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env | {"PYTHONPATH": str(Path.cwd())} | more,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return [r["id"] for r in json.loads(done.stdout)]

    assert runs() == [rid]  # the .env's server and prefix
    assert runs(MEMORY_KEY_PREFIX="elsewhere:") == []  # the real environment wins


def test_farmsim_starts_with_a_fault(settings: Settings) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memory_worker", "farmsim", "--port", "0", "--embedder",
         "hashed", "--fault", "job_failed:llm-openai", "--fault", "submit_status",
         "--for-seconds", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        faults = httpx.get(url + "/_sim/faults", timeout=10).json()
        assert faults["llm-openai"]["kind"] == "job_failed"
        assert faults["*"]["kind"] == "submit_status"
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    line = _one_error_line(cli(settings, "farmsim", "--fault", "melted"))
    assert "unknown kind" in line
    assert "job_failed" in line
