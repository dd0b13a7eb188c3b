"""The docs cannot drift: the configuration page's table is the generated one, the bot
quick start runs (the README's and the API page's are one example, examples/bot/quickstart.py),
config/example.env names real settings, the Procfile names real commands, and the README's two commands are what CI
runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from dotenv import dotenv_values

from memory_worker.cli.commands import app
from memory_worker.cli.config import CONFIG_END, CONFIG_START, config_markdown, replace_config_table
from memory_worker.settings import Settings, env_name
from memory_worker.settings.types import reveal

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONFIG_PAGE = ROOT / "docs" / "configuration.md"
BOT_API_PAGE = ROOT / "docs" / "bot-api.md"


def _first_python_block(text: str) -> str:
    return text[text.index("```python") + len("```python") : text.index("```\n\n")]


def test_configuration_page_table_is_the_generated_one() -> None:
    page = CONFIG_PAGE.read_text(encoding="utf-8")
    block = page[page.index(CONFIG_START) + len(CONFIG_START) : page.index(CONFIG_END)]
    assert block.strip() == config_markdown().strip(), (
        "docs/configuration.md's table is stale: run "
        "`memory-worker config --update-readme docs/configuration.md`"
    )
    assert replace_config_table(page) == page
    for name in Settings.model_fields:
        assert f"`{env_name(name)}`" in block


def test_config_markdown_command_prints_the_same_table() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memory_worker", "config", "--markdown"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == config_markdown()


def _example_env() -> dict[str, str]:
    values: dict[str, str] = {}
    for line in (ROOT / "config" / "example.env").read_text().splitlines():
        found = re.match(r"^#?\s*([A-Z][A-Z0-9_]+)=(.*)$", line.strip())
        if found:
            values[found.group(1)] = found.group(2)
    return values


def test_example_env_names_only_real_settings_and_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    known = {env_name(name) for name in Settings.model_fields}
    values = _example_env()
    monkeypatch.chdir(ROOT / "config")  # as init-config writes it: beside routes.toml
    assert len(values) >= 20
    assert set(values) <= known, sorted(set(values) - known)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.max_queued_runs == 5000
    assert settings.admin_telegram_chat_ids == [11111111, 22222222]


def test_example_env_leaves_the_embedded_valkey_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Copied to .env as init-config says, it keeps the README's setup: REDIS_URL stays a
    comment that says what setting it changes."""
    text = (ROOT / "config" / "example.env").read_text()
    assert not re.search(r"^REDIS_URL=", text, re.MULTILINE)
    assert re.search(r"^# REDIS_URL=redis://", text, re.MULTILINE)
    assert "Setting REDIS_URL switches the embedded Valkey off" in text
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(text)  # "copy example.env to .env"
    assert "REDIS_URL" not in dotenv_values(tmp_path / ".env")


def test_procfile_runs_real_commands() -> None:
    commands = getattr(typer.main.get_command(app), "commands", {})
    assert {"run", "serve", "replay", "demo"} <= set(commands)
    processes = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        processes[name.strip()] = re.sub(r"\$\{PORT:-(\d+)\}", r"\1", command).split()
    # the console has its own process: the metrics one faces the network without it
    assert set(processes) == {"worker", "metrics", "console"}
    for argv in processes.values():
        assert argv[0] == "memory-worker"
        assert argv[1] in commands
        commands[argv[1]].make_context(argv[1], argv[2:])  # every option it passes exists


def test_readmes_two_commands_are_what_ci_runs() -> None:
    assert "make demo" in README
    assert "make test" in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.MULTILINE)
    makefile = (ROOT / "Makefile").read_text()
    test_target = makefile[makefile.index("\ntest:") :].split("\n\n")[0]
    assert "pytest" in test_target
    assert "memory-worker demo --fast" in test_target
    assert "memory-worker demo" in makefile[makefile.index("\ndemo:") :].split("\n\n")[0]


def test_bot_quick_start_is_the_api_pages_example() -> None:
    readme = _first_python_block(README[README.index("## Quick start for the bot") :])
    page = _first_python_block(BOT_API_PAGE.read_text(encoding="utf-8"))
    assert readme == page


def test_readme_bot_example_runs(settings: Settings, redis: Any, tmp_path: Path) -> None:
    script = ROOT / "examples" / "bot" / "quickstart.py"  # the README shows this file
    shown = _first_python_block(README[README.index("## Quick start for the bot") :])
    assert shown.lstrip("\n") == script.read_text(encoding="utf-8")
    env = os.environ | {
        "REDIS_URL": reveal(settings.redis_url) or "",
        "MEMORY_KEY_PREFIX": settings.key_prefix,
        "MEMORY_LOG_FORMAT": "json",
    }
    first = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[:2] == ["enqueued", "queued 0"]
    again = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60
    )
    assert again.stdout.splitlines()[0] == "duplicate"  # enqueue is idempotent
