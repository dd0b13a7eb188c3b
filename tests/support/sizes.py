"""Module and function sizes of both packages: a report, not a rule.

There is no size cap (docs/development.md, "Structure rules"): a module holds one concept
however long it is. This report shows where the long files and functions are, for a
reader deciding whether a part of one has a concept of its own:

    .venv/bin/python -m tests.support.sizes          # histogram and the longest ten
    .venv/bin/python -m tests.support.sizes --top 30

Lines are newline counts of the file; a function's length runs from its ``def`` (its
decorators excluded) to its last line.
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES = ("memory_worker", "llm_client")
BUCKETS = (100, 200, 300, 400, 500, 600, 800, 1000)


@dataclass(frozen=True)
class Sized:
    """One module or function and its length in lines."""

    name: str
    lines: int


def module_sizes(root: Path = ROOT) -> list[Sized]:
    """Every ``.py`` file of both packages, with its newline count."""
    return [
        Sized(path.relative_to(root).as_posix(), path.read_text(encoding="utf-8").count("\n"))
        for package in PACKAGES
        for path in sorted((root / package).rglob("*.py"))
    ]


def function_sizes(root: Path = ROOT) -> list[Sized]:
    """Every function and method of both packages, with its length in lines."""
    found: list[Sized] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    end = node.end_lineno or node.lineno
                    where = f"{path.relative_to(root).as_posix()}:{node.lineno} {node.name}"
                    found.append(Sized(where, end - node.lineno + 1))
    return found


def histogram(sizes: list[Sized], buckets: tuple[int, ...] = BUCKETS) -> list[tuple[str, int]]:
    """``(label, count)`` per bucket: ``0–100``, ``101–200`` … ``>1000``."""
    rows: list[tuple[str, int]] = []
    low = 0
    for high in buckets:
        count = sum(1 for s in sizes if low < s.lines <= high or (low == 0 and s.lines == 0))
        rows.append((f"{low + 1 if low else 0}–{high}", count))
        low = high
    rows.append((f">{low}", sum(1 for s in sizes if s.lines > low)))
    return rows


def report(root: Path = ROOT, top: int = 10) -> str:
    """The printed report: the module histogram, then the longest modules and functions."""
    modules = module_sizes(root)
    functions = function_sizes(root)
    out = [f"modules: {len(modules)}, lines: {sum(m.lines for m in modules)}"]
    width = max(count for _, count in histogram(modules)) or 1
    for label, count in histogram(modules):
        out.append(f"  {label:>9} {count:4d} {'#' * round(40 * count / width)}")
    out.append(f"longest modules (top {top}):")
    out += [f"  {m.lines:5d} {m.name}" for m in sorted(modules, key=lambda m: -m.lines)[:top]]
    out.append(f"functions: {len(functions)}; longest (top {top}):")
    out += [f"  {f.lines:5d} {f.name}" for f in sorted(functions, key=lambda f: -f.lines)[:top]]
    return "\n".join(out)


def main() -> None:
    """Print the report for this checkout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--top", type=int, default=10, help="how many of the longest to list")
    print(report(top=parser.parse_args().top))


if __name__ == "__main__":
    main()
