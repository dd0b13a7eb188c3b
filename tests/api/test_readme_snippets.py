"""The README works as written: its bot quick start and the bot API page's
Python snippets, taken from the pages themselves, run unchanged against the setup the
README's two commands leave behind — no ``REDIS_URL``, the embedded Valkey under
``MEMORY_DATA_DIR`` — each in a fresh interpreter, in page order, as a newcomer pastes them.

The API page's routes snippet (its TOML block, with the settings its first line names) is the
routes file, so the memory snippets embed in-process with e5; between the README's snippet and
the memory ones the test stores chat 42's cards, as a worker would have.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from tests.api.test_bot_memory_example import check_output, seed_chat

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BOT_API = ROOT / "docs" / "bot-api.md"
GETTING_STARTED = ROOT / "docs" / "getting-started.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)


def snippets(page: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(page.read_text("utf-8")) if lang == language]


@pytest.fixture
def newcomer(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A directory with no .env and an environment with no Redis and no memory-worker
    setting: what the README's two commands leave (the embedded Valkey under var/)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "REDIS_URL" and not k.startswith(("MEMORY_", "REDIS_"))
    }
    env["MEMORY_DATA_DIR"] = str(tmp_path / "var")
    try:
        yield tmp_path, env
    finally:
        EmbeddedValkey(tmp_path / "var" / "valkey").shutdown()


def run_snippet(code: str, folder: Path, env: dict[str, str]) -> str:
    script = folder / "snippet.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"{code[:200]}\n---\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_pages_show_the_snippets_run_here() -> None:
    """One README quick start (the getting-started page shows it too), the API page's four
    (quick start, recall, memory, the sync client) and its routes file: a page that grows
    another snippet must be run here too."""
    assert len(snippets(README, "python")) == 1
    assert len(snippets(BOT_API, "python")) == 6
    assert len(snippets(BOT_API, "toml")) == 1
    assert snippets(GETTING_STARTED, "python") == snippets(README, "python")
    programs = [*snippets(README, "python"), *programs_of(snippets(BOT_API, "python"))]
    assert len(programs) == 5
    for code in programs:
        assert "REDIS_URL" not in code.replace("# REDIS_URL", "")  # no setting to paste first
        assert "MemoryQueue.connect(embedded=True)" in code


def programs_of(codes: list[str]) -> list[str]:
    """The whole programs of a page; the rest are fragments that continue one (they use its
    ``queue``), and :func:`test_the_fragments_compile` holds those."""
    return [code for code in codes if "asyncio.run(" in code or "SyncMemoryQueue" in code]


def test_the_fragments_compile() -> None:
    """The API page's history and as-of fragments are not whole programs (they go on from the
    quick start's ``queue``): each compiles with top-level ``await`` and uses only ``queue``."""
    codes = snippets(BOT_API, "python")
    fragments = [code for code in codes if code not in programs_of(codes)]
    assert len(fragments) == 2
    for code in fragments:
        tree = compile(
            code, "<fragment>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        assert isinstance(tree, ast.Module)
        compile(tree, "<fragment>", "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        assert "queue." in code


async def test_readme_and_bot_api_snippets_run_as_written_on_the_embedded_valkey(
    newcomer: tuple[Path, dict[str, str]],
) -> None:
    folder, env = newcomer
    (readme_quick_start,) = snippets(README, "python")
    out = run_snippet(readme_quick_start, folder, env).splitlines()
    assert out[:2] == ["enqueued", "queued 0"]
    assert (folder / "var" / "valkey" / "server.json").exists(), "no embedded Valkey in var/"
    server = EmbeddedValkey(folder / "var" / "valkey").ensure()  # the one the snippet started
    assert run_snippet(readme_quick_start, folder, env).splitlines()[0] == "duplicate"

    (routes,) = snippets(BOT_API, "toml")
    (names,) = re.findall(r"\((MEMORY_ROUTES_FILE=\S+ MEMORY_EMBEDDING_DIMENSION=\d+)\)", routes)
    (folder / "routes.toml").write_text(routes, encoding="utf-8")
    env |= dict(pair.split("=", 1) for pair in names.split())

    redis = client_from_url(server.url)
    try:
        store = await seed_chat(redis, "mw:")  # the default MEMORY_KEY_PREFIX
        quick_start, recall, memory, sync = programs_of(snippets(BOT_API, "python"))
        assert quick_start == readme_quick_start
        found = run_snippet(recall, folder, env).splitlines()
        assert found[0].endswith("  Alice loves green tea."), found
        await check_output(run_snippet(memory, folder, env), store, folder)
        blocking = run_snippet(sync, folder, env).splitlines()
        assert blocking[0] == "duplicate"  # the quick start's run, enqueued again
        assert len(blocking) == 5
        asked = [line.split(" -> ")[0] for line in blocking[1:4]]
        assert asked == ["What does Alice drink?", "Where does Alice live?", "Who rides a bike?"]
        assert all(not line.endswith(" -> -") for line in blocking[1:4])  # each found a card
        assert "Where does Alice live? -> Alice lives in Porto" in blocking  # corrected above
        assert blocking[-1].endswith("tokens, degraded: False")
    finally:
        await redis.aclose()
