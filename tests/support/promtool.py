"""Debian's ``prometheus`` package on the test machine: ``promtool`` and the server binary.

CI installs the package (``make promtool``, which ``.ci/run`` calls); a machine without it
skips the tests that need it, saying why.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

MISSING = "promtool absent (Debian package prometheus; `make promtool` installs it)"


def binary(name: str = "promtool") -> str:
    """The path of ``name`` (``promtool`` or ``prometheus``), or skip the test."""
    found = shutil.which(name)
    if found is None:
        pytest.skip(MISSING.replace("promtool absent", f"{name} absent"))
    return found


def promtool(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``promtool ARGS`` (its output captured; the caller asserts on the return code)."""
    return subprocess.run(
        [binary(), *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def check_metrics(text: str) -> None:
    """``promtool check metrics`` on a scrape: clean, no lint finding."""
    done = promtool("check", "metrics", stdin=text)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "", done.stdout
    assert done.stderr.strip() == "", done.stderr
