"""``memory-worker config``: each setting's value in use and where it came from (the
environment, the working directory's ``.env``, the default); a secret only as set/unset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from memory_worker.cli.config import InUse, settings_in_use, shown
from memory_worker.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
CANARY = "CANARY-5b1c-console-token-0123456789abcdef"


def _row(rows: list[InUse], variable: str) -> InUse:
    (found,) = (row for row in rows if row.variable == variable)
    return found


@pytest.mark.parametrize(
    ("environ", "from_dotenv", "source"),
    [
        pytest.param({}, [], "default", id="nothing-set"),
        pytest.param({"MEMORY_MAX_ATTEMPTS": "7"}, [], "environment", id="environment"),
        pytest.param({"MEMORY_MAX_ATTEMPTS": "7"}, ["MEMORY_MAX_ATTEMPTS"], ".env", id="dotenv"),
        pytest.param({"MEMORY_MAX_ATTEMPTS": ""}, [], "default", id="empty-is-unset"),
        pytest.param({"MAX_ATTEMPTS": "7"}, [], "default", id="another-name"),
    ],
)
def test_the_source_of_a_value(
    environ: dict[str, str], from_dotenv: list[str], source: str
) -> None:
    rows = settings_in_use(Settings(max_attempts=7), environ, from_dotenv)
    assert _row(rows, "MEMORY_MAX_ATTEMPTS") == InUse("MEMORY_MAX_ATTEMPTS", "7", source)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(None, "unset", id="none"),
        pytest.param(SecretStr(CANARY), "set", id="secret"),
        pytest.param(SecretStr(""), "unset", id="empty-secret"),
        pytest.param(2.5, "2.5", id="float"),
        pytest.param(Path("var"), "var", id="path"),
        pytest.param(["a", "b"], '["a","b"]', id="list"),
    ],
)
def test_a_value_as_shown(value: object, text: str) -> None:
    assert shown(value) == text


def test_config_shows_the_values_in_use_and_their_sources(tmp_path: Path) -> None:
    """A real process in a directory with a .env: the environment wins over the file, the
    file over the default; the secret's value appears nowhere."""
    (tmp_path / ".env").write_text("MEMORY_MAX_ATTEMPTS=7\nMEMORY_KEY_PREFIX=dotenv:\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "REDIS_URL"))}
    env |= {
        "PYTHONPATH": str(ROOT),
        "MEMORY_KEY_PREFIX": "env:",
        "MEMORY_CONSOLE_TOKEN": CANARY,
    }
    done = subprocess.run(
        [sys.executable, "-m", "memory_worker", "config", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [InUse(**row) for row in json.loads(done.stdout)]
    assert len(rows) == len(Settings.model_fields)
    assert _row(rows, "MEMORY_MAX_ATTEMPTS") == InUse("MEMORY_MAX_ATTEMPTS", "7", ".env")
    assert _row(rows, "MEMORY_KEY_PREFIX") == InUse("MEMORY_KEY_PREFIX", "env:", "environment")
    assert _row(rows, "MEMORY_CONSOLE_TOKEN") == InUse("MEMORY_CONSOLE_TOKEN", "set", "environment")
    assert _row(rows, "REDIS_URL") == InUse("REDIS_URL", "unset", "default")
    assert CANARY not in done.stdout + done.stderr
    table = subprocess.run(
        [sys.executable, "-m", "memory_worker", "config"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert table.returncode == 0, table.stderr
    line = next(line for line in table.stdout.splitlines() if "MEMORY_MAX_ATTEMPTS " in line)
    assert [cell.strip() for cell in line.split("│")[1:4]] == ["MEMORY_MAX_ATTEMPTS", "7", ".env"]
    assert CANARY not in table.stdout
