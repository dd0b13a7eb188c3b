"""Every snippet the README and the bot's API page show is a file under ``examples/`` that a
test loads and uses; the config examples ship inside the wheel and the sdist and
``memory-worker init-config`` writes them; a worker refuses routes without extraction."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import typer

from llm_client import EMBEDDING, MEMORY_EXTRACTION, load_routes
from memory_worker.cli.commands import app
from memory_worker.cli.tools import CONFIG_EXAMPLES, SHIPPED_FOLDERS
from memory_worker.errors import RoutesIncomplete
from memory_worker.settings import Settings
from memory_worker.wiring import check_run_routes
from tests.support.harness import cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
#: The shipped configuration files (init-config writes them; the README shows them too).
CONFIG = ROOT / "config"
PAGES = [ROOT / "README.md", ROOT / "docs" / "bot-api.md", ROOT / "docs" / "getting-started.md"]
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.S)


def _example_files() -> dict[str, str]:
    return {
        p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
        for folder in (EXAMPLES, CONFIG)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_snippet_of_the_page_is_an_example_file(page: Path) -> None:
    files = _example_files()
    snippets = FENCE.findall(page.read_text(encoding="utf-8"))
    assert snippets
    missing = [body[:60] for _, body in snippets if body not in files.values()]
    assert not missing, (
        f"{page.name}: snippets that are no file under examples/ or config/: {missing}"
    )


def _command_lines() -> list[list[str]]:
    lines = []
    for name in ("operators.sh", "commands.sh"):
        for line in (EXAMPLES / name).read_text().splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "memory-worker":
                lines.append(words[1:])
    return lines


@pytest.mark.parametrize("argv", _command_lines(), ids=" ".join)
def test_every_command_of_the_examples_parses(argv: list[str]) -> None:
    """Each command and every option it passes exist (parsed, not run)."""
    group: Any = typer.main.get_command(app)
    words = list(argv)
    while hasattr(group, "commands") and words and words[0] in group.commands:
        group = group.commands[words.pop(0)]
    assert not hasattr(group, "commands"), f"{argv}: names no command"
    group.make_context(argv[0], words)


def test_the_two_commands_are_make_targets() -> None:
    makefile = (ROOT / "Makefile").read_text()
    for line in (EXAMPLES / "two-commands.sh").read_text().splitlines():
        target = shlex.split(line, comments=True)
        assert target[0] == "make"
        assert re.search(rf"^{target[1]}:", makefile, re.MULTILINE)


@pytest.mark.parametrize(
    ("name", "dimension"), [("routes.toml", 512), ("routes-local-embed.toml", 384)]
)
def test_routes_examples_are_complete_working_routes_files(name: str, dimension: int) -> None:
    """Each loads (with the dimension its header names) and a worker starts on it."""
    defaults = Settings(embedding_dimension=dimension).route_defaults()
    routes = load_routes(CONFIG / name, defaults)
    assert {MEMORY_EXTRACTION, EMBEDDING} <= set(routes.routes)
    check_run_routes(routes, CONFIG / name)  # a worker starts on it


def test_a_routes_file_without_extraction_is_refused_at_start(
    settings: Settings, tmp_path: Path
) -> None:
    """The old recall snippet, used as the whole routes file, turned extraction off."""
    recall_only = tmp_path / "routes.toml"
    recall_only.write_text(
        '[routes.embedding]\n[[routes.embedding.targets]]\ntransport = "local"\n'
        'model = "multilingual-e5-small"\n'
    )
    defaults = settings.model_copy(update={"embedding_dimension": 384}).route_defaults()
    routes = load_routes(recall_only, defaults)
    with pytest.raises(RoutesIncomplete, match="no enabled memory_extraction route"):
        check_run_routes(routes, recall_only)
    done = cli(
        settings,
        "run",
        MEMORY_ROUTES_FILE=str(recall_only),
        MEMORY_EMBEDDING_DIMENSION="384",
    )
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, done.stderr
    assert "memory_extraction" in errors[0]
    assert "released forever" in errors[0]


def test_init_config_writes_the_examples_and_keeps_existing_files(
    settings: Settings, tmp_path: Path
) -> None:
    target = tmp_path / "ops"
    done = cli(settings, "init-config", str(target))
    assert done.returncode == 0, done.stderr
    assert "REDIS_URL stays unset" in done.stdout  # copying example.env keeps the embedded one
    for name in CONFIG_EXAMPLES:
        assert (target / name).read_bytes() == (CONFIG / name).read_bytes()
    for folder in SHIPPED_FOLDERS:  # deploy/ and examples/ whole
        for path in _shipped_files(folder):
            name = path.relative_to(ROOT).as_posix()
            assert (target / name).read_bytes() == path.read_bytes(), name
    for name in REQUIRED_DEPLOY:
        assert (target / name).is_file(), name
    (target / "routes.toml").write_text("# mine\n")
    refused = cli(settings, "init-config", str(target))
    assert refused.returncode == 2
    assert "--force" in refused.stderr
    assert (target / "routes.toml").read_text() == "# mine\n"
    assert cli(settings, "init-config", str(target), "--force").returncode == 0
    assert (target / "routes.toml").read_bytes() == (CONFIG / "routes.toml").read_bytes()


#: What an operator deploys from (issue: in the wheel and written by init-config).
REQUIRED_DEPLOY = (
    "deploy/prometheus/alerts.yml",
    "deploy/prometheus/alerts_test.yml",
    "deploy/prometheus/prometheus.yml",
    "deploy/grafana/memory-worker.json",
    "deploy/systemd/memory-worker@.service",
    "examples/bot/quickstart.py",
)


def _shipped_files(folder: str) -> list[Path]:
    return [
        p
        for p in sorted((ROOT / folder).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]


@pytest.mark.slow
# setuptools builds in the source tree's build/: two wheel builds at once break each other
@pytest.mark.xdist_group("wheel")
def test_the_wheel_and_the_sdist_ship_the_examples(tmp_path: Path) -> None:
    """Built offline with the installed setuptools (no ``build`` needed): the config
    examples, deploy/ and examples/ whole, the LICENSE."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
         "-q", "-w", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("memory_worker-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in CONFIG_EXAMPLES:
        assert f"memory_worker/config/{name}" in names
    for folder in SHIPPED_FOLDERS:
        for path in _shipped_files(folder):
            assert f"memory_worker/{path.relative_to(ROOT).as_posix()}" in names
    assert {f"memory_worker/{name}" for name in REQUIRED_DEPLOY} <= names
    assert "memory_worker-0.1.0.dist-info/licenses/LICENSE" in names
    assert "memory_worker/docs/runbook.md" in names  # the console serves the bundled docs
    for package in ("memory_worker", "llm_client"):  # every data file of the code: Lua, templates…
        for path in sorted((ROOT / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                assert path.relative_to(ROOT).as_posix() in names
    assert "memory_worker/console/templates/explain.html.j2" in names
    # the pages the console serves at /docs/ (its banner links the runbook there)
    for page in (ROOT / "docs").glob("*.md"):
        assert f"memory_worker/docs/{page.name}" in names
    sdist = subprocess.run(
        [sys.executable, "-c",
         f"from setuptools import build_meta; print(build_meta.build_sdist({str(tmp_path)!r}))"],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip
    assert sdist.returncode == 0, sdist.stderr
    (archive,) = tmp_path.glob("memory_worker-*.tar.gz")
    with tarfile.open(archive) as tar:
        members = {m.split("/", 1)[1] for m in tar.getnames() if "/" in m}
    for name in CONFIG_EXAMPLES:
        assert f"config/{name}" in members
    assert set(REQUIRED_DEPLOY) <= members
    assert "LICENSE" in members
    assert "setup.py" in members
