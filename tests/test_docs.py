"""The documentation is self-contained and describes the system as it is.

- Every ``§N`` cited in the code, tests, benches, configuration, docs and README is a
  section heading of ``docs/contract.md`` (``## §N Title``), and a citation of a part by
  its quoted title (``§7 "Store faults"``) names a heading inside that section.
- The README's relative links point at files in the repository (``mkdocs build --strict``
  checks the links and anchors of the ``docs/`` pages; a test here runs it too).
- The prose carries no release markers of an outside document and no tracker numbers:
  what an earlier version did, and which ticket asked for a change, belong in commit
  messages. This file holds the patterns and their samples, so it is the one file left out.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "docs" / "contract.md"

#: Where prose lives: the packages, tests, benches, configuration and docs, plus the
#: top-level files that carry prose or comments.
SCANNED_DIRS = (
    "memory_worker",
    "llm_client",
    "tests",
    "bench",
    "examples",
    "config",
    "docs",
    "deploy",
)
SCANNED_FILES = ("README.md", "mkdocs.yml", "Makefile", "Procfile", "pyproject.toml", "setup.py")
TEXT_SUFFIXES = frozenset(
    {
        ".py",
        ".lua",
        ".md",
        ".toml",
        ".html",
        ".css",
        ".txt",
        ".env",
        ".yml",
        ".yaml",
        ".jsonl",
        ".sh",
        ".j2",
        "",
    }
)

SECTION_HEADING = re.compile(r"^## §(\d+) \S", re.MULTILINE)
CITATION = re.compile(r"§\s?(\d+)")
PART_CITATION = re.compile(r"§\s?(\d+) [\"“]([^\"”]+)[\"”]")

#: A release marker: "r-e-v 2", "Rev. 3", "revision 2", "revs 2" (any case).
RELEASE_MARKER = re.compile(r"\brev(?:ision)?s?\.?\s*#?\d+\b", re.IGNORECASE)
#: A tracker reference: "issue 11", "Issue #9", "issues #3 and #4", or a ticket cited by
#: its quoted title. The plural needs its "#" ("issues 3 commands" is a verb).
TRACKER_REF = re.compile(
    r"\bissue\s*#?\s*\d+|\bissues\s*#\s*\d+|\b(?:the\s+)?issue\s+[\"“][A-Z]",
    re.IGNORECASE,
)
#: The contract is docs/contract.md; prose that names an outside spec file points away.
OUTSIDE_SPEC = re.compile(r"\bSPEC\b")


def _scanned() -> list[Path]:
    files = [ROOT / name for name in SCANNED_FILES if (ROOT / name).is_file()]
    for folder in SCANNED_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts:
                files.append(path)
    return [path for path in files if path.resolve() != Path(__file__).resolve()]


def _lines() -> list[tuple[str, int, str]]:
    found = []
    for path in _scanned():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            found.append((rel, number, line))
    return found


LINES = _lines()


def _contract_sections() -> dict[int, str]:
    """Section number → the section's text, heading included."""
    text = CONTRACT.read_text(encoding="utf-8")
    starts = [(int(m.group(1)), m.start()) for m in SECTION_HEADING.finditer(text)]
    sections = {}
    for index, (number, start) in enumerate(starts):
        end = starts[index + 1][1] if index + 1 < len(starts) else len(text)
        sections[number] = text[start:end]
    return sections


def test_the_contract_has_sections_one_to_sixteen_in_order() -> None:
    text = CONTRACT.read_text(encoding="utf-8")
    numbers = [int(m.group(1)) for m in SECTION_HEADING.finditer(text)]
    assert numbers == list(range(1, 17))


def test_every_cited_section_is_in_the_contract() -> None:
    sections = _contract_sections()
    dangling = [
        f"{rel}:{number}: §{cited}"
        for rel, number, line in LINES
        for cited in CITATION.findall(line)
        if int(cited) not in sections
    ]
    assert not dangling, dangling


def test_every_cited_part_is_a_heading_of_its_section() -> None:
    sections = _contract_sections()
    cited = [
        (rel, n, int(s), title)
        for rel, n, line in LINES
        for s, title in PART_CITATION.findall(line)
    ]
    assert cited, 'expected at least one §N "Part" citation (§7 "Store faults")'
    missing = [
        f"{rel}:{n}: §{section} {title!r}"
        for rel, n, section, title in cited
        if not re.search(rf"^###+ {re.escape(title)}\s*$", sections.get(section, ""), re.MULTILINE)
    ]
    assert not missing, missing


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(RELEASE_MARKER, id="release-markers"),
        pytest.param(TRACKER_REF, id="tracker-numbers"),
        pytest.param(OUTSIDE_SPEC, id="outside-spec"),
    ],
)
def test_no_history_in_the_prose(pattern: re.Pattern[str]) -> None:
    found = [
        f"{rel}:{number}: {line.strip()[:120]}"
        for rel, number, line in LINES
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        pytest.param("(§7 rev 2)", RELEASE_MARKER, id="rev-2"),
        pytest.param("Revision 3 adds", RELEASE_MARKER, id="revision-3"),
        pytest.param("rev. 2", RELEASE_MARKER, id="rev-dot"),
        pytest.param("(issue 11, item 7)", TRACKER_REF, id="issue-11"),
        pytest.param("Issue #9 row 14", TRACKER_REF, id="issue-hash-9"),
        pytest.param("issues #3 and #4", TRACKER_REF, id="issues-hash"),
        pytest.param('the issue "Faults never cost work"', TRACKER_REF, id="issue-title"),
        pytest.param("SPEC §2", OUTSIDE_SPEC, id="spec-file"),
    ],
)
def test_the_history_patterns_catch_what_they_are_for(text: str, pattern: re.Pattern[str]) -> None:
    assert pattern.search(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("the previous 2 claims", id="previous"),
        pytest.param("reverse 2 rows", id="reverse"),
        pytest.param("the claim issues 3 commands", id="issues-as-a-verb"),
        pytest.param("an issue with the code from runs show", id="open-an-issue"),
        pytest.param("SPEC_VERSION = 2; spectrum", id="identifiers"),
        pytest.param("§7 store faults", id="a-citation"),
    ],
)
def test_the_history_patterns_leave_ordinary_prose_alone(text: str) -> None:
    assert not any(p.search(text) for p in (RELEASE_MARKER, TRACKER_REF, OUTSIDE_SPEC))


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    local = [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+:", t)]
    assert local, "the README links its docs pages"
    missing = [t for t in local if t and not (ROOT / t).exists()]
    assert not missing, missing


def test_readme_is_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count("\n") <= 250
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name != "index.md":
            assert f"docs/{page.name}" in readme, f"the README does not point at {page.name}"


def test_the_docs_build_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "contract" / "index.html").is_file()
