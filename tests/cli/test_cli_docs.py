"""docs/cli.md cannot drift from the command line: walking the typer app's click tree, every
command has a row in the page's table, and every one of its options is named in that row —
or, for a row that hands over to the runbook (``memory-worker replay …`` linking
``runbook.md#…``), in that runbook section; and every command a row names exists. Likewise
every ``memory_worker/…`` path the docs name exists (the package moved under them before).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from memory_worker.cli.commands import app

ROOT = Path(__file__).resolve().parents[2]
CLI_PAGE = ROOT / "docs" / "cli.md"
DOCS = sorted(
    [*(ROOT / "docs").glob("*.md"), ROOT / "README.md", *(ROOT / "examples").rglob("*.md")]
)


def commands() -> dict[str, Any]:
    """Every command of the typer app by its path (``runs cancel``), hidden ones left out."""

    def walk(command: Any, path: list[str]) -> Iterator[tuple[str, Any]]:
        if hasattr(command, "commands"):  # a group (typer's own click)
            for name, sub in command.commands.items():
                if not getattr(sub, "hidden", False):
                    yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), command

    return dict(walk(typer.main.get_command(app), []))


def long_options(command: Any) -> list[str]:
    return [
        flag
        for param in command.params
        if param.param_type_name == "option"
        for flag in param.opts
        if flag.startswith("--") and flag != "--help"
    ]


def rows(page: str) -> list[tuple[set[str], str]]:
    """The table's rows: the command paths each names in its first cell, and its text.

    A cell names commands in code spans: ``memory-worker runs show ID`` names ``runs show``;
    ``memory-worker cards show|retract|correct REF`` names the three; a span after the first
    one may leave ``memory-worker`` out (``breakers reset TARGET``)."""
    groups = {path.split()[0] for path in commands() if " " in path}
    found = []
    for line in page.splitlines():
        if not line.startswith("| `memory-worker"):
            continue
        text = line.replace("\\|", "¦")
        first = text.split(" | ")[0]
        named: set[str] = set()
        for span in re.findall(r"`([^`]+)`", first):
            words = span.removeprefix("memory-worker ").split()
            if not words:
                continue
            if words[0].startswith("-"):  # an option of the app itself (--version)
                named.add(words[0])
                continue
            if words[0] in groups and len(words) > 1:
                named |= {f"{words[0]} {sub}" for sub in words[1].split("¦")}
            else:
                named |= set(words[0].split("¦"))
        found.append((named, text.replace("¦", "|")))
    return found


def runbook_section(anchor: str) -> str:
    """The runbook's section under the heading whose anchor is ``anchor``."""
    text = (ROOT / "docs" / "runbook.md").read_text(encoding="utf-8")
    for match in re.finditer(r"^(#+) (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", match.group(2).lower()).strip().replace(" ", "-")
        if slug == anchor:
            level = len(match.group(1))
            rest = text[match.end() :]
            end = re.search(rf"^#{{1,{level}}} ", rest, flags=re.M)
            return rest[: end.start()] if end else rest
    raise AssertionError(f"docs/runbook.md has no section #{anchor}")


def test_the_walk_sees_the_whole_app() -> None:
    found = commands()
    assert {"run", "serve", "runs list", "runs cancel", "breakers reset", "cards retract"} <= set(
        found
    )
    assert "--dry-run" in long_options(found["runs cancel"])


@pytest.mark.parametrize("path", sorted(commands()))
def test_docs_cli_names_the_command_and_every_option(path: str) -> None:
    table = rows(CLI_PAGE.read_text(encoding="utf-8"))
    mine = [text for named, text in table if path in named]
    assert mine, f"docs/cli.md has no row for `memory-worker {path}`"
    where = "\n".join(mine)
    for link in re.findall(r"runbook\.md#([\w\-]+)", where):
        if "…" in where.split(" | ")[0]:  # the row hands its options over to the runbook
            where += runbook_section(link)
    missing = [flag for flag in long_options(commands()[path]) if flag not in where]
    assert not missing, f"docs/cli.md's row for `memory-worker {path}` does not name {missing}"


def test_every_command_a_row_names_exists() -> None:
    known = set(commands()) | set(long_options(typer.main.get_command(app)))
    for named, text in rows(CLI_PAGE.read_text(encoding="utf-8")):
        assert named, text
        stale = {name for name in named if name not in known}
        assert not stale, f"docs/cli.md names commands the app does not have: {stale}"


def named_paths(text: str) -> set[str]:
    """Every ``memory_worker/…`` (or ``llm_client/…``) path a text names, wildcards left out,
    and every path in a code span a folder of the package starts (``runs/store.py``)."""
    found = set()
    for match in re.finditer(r"(?<![\w/.])((?:memory_worker|llm_client)/[\w./\-]*)(\S?)", text):
        path = match.group(1).rstrip(".,;:)")
        if match.group(2) not in ("*", "<", "{") and "..." not in path:
            found.add(path)
    for span in re.findall(r"`([\w\-]+/[\w./\-]+\.(?:py|lua|j2|css))`", text):
        if not span.startswith(("memory_worker/", "llm_client/")):
            found.add(span)
    return found


def exists(path: str) -> bool:
    """A path from the repository's root, or (``runs/store.py``) inside a package or the
    tests."""
    return any(
        (ROOT / base / path).exists() for base in ("", "memory_worker", "llm_client", "tests")
    )


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_package_path_the_docs_name_exists(doc: Path) -> None:
    missing = sorted(p for p in named_paths(doc.read_text(encoding="utf-8")) if not exists(p))
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_the_path_check_can_fail() -> None:
    text = "see `memory_worker/settings.py`, memory_worker/runs/lua/*.lua and `cards/recall.py`"
    assert named_paths(text) == {"memory_worker/settings.py", "cards/recall.py"}
    assert not exists("memory_worker/settings.py")
    assert not exists("cards/recall.py")
    assert exists("runs/store.py")
