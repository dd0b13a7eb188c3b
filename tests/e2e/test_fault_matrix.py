"""The fault matrix: one row per numbered fault (docs/reliability.md lists them).

Every row is a scenario against real parts (Valkey, the loopback farm
simulator, worker processes where it matters) asserting attempts spent,
status, releases, breaker state and pages. Rows live in ``tests/faults/``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest

import tests.faults as faults_pkg
from memory_worker.farmsim import FarmSimulator
from memory_worker.settings import Settings
from tests.faults.context import FaultContext, Scenario

ALL_ROWS = range(1, 38)


def _scenarios() -> dict[int, Scenario]:
    found: dict[int, Scenario] = {}
    for info in pkgutil.iter_modules(faults_pkg.__path__):
        if not info.name.startswith("rows_"):
            continue
        module = importlib.import_module(f"tests.faults.{info.name}")
        for row, scenario in module.ROWS.items():
            assert row not in found, f"row {row} defined twice"
            found[row] = scenario
    return found


SCENARIOS = _scenarios()


def test_every_row_has_a_scenario() -> None:
    missing = [row for row in ALL_ROWS if row not in SCENARIOS]
    assert not missing, f"fault rows without a scenario: {missing}"


@pytest.mark.slow  # real worker processes, 10–70 s a row: started first, they are no tail
@pytest.mark.parametrize("row", sorted(SCENARIOS), ids=lambda r: f"row{r:02d}")
async def test_fault_row(
    row: int,
    settings: Settings,
    redis: Any,
    redis_url: str,
    sim: FarmSimulator,
    tmp_path: Path,
) -> None:
    ctx = FaultContext(
        settings=settings, redis=redis, redis_url=redis_url, sim=sim, tmp_path=tmp_path
    )
    await SCENARIOS[row](ctx)


def test_the_reliability_page_lists_every_row() -> None:
    """docs/reliability.md's fault table names each row the matrix runs, and no other."""
    from pathlib import Path

    page = (Path(__file__).parent.parent.parent / "docs" / "reliability.md").read_text(
        encoding="utf-8"
    )
    listed = {int(m.group(1)) for m in re.finditer(r"^\| (\d+) \|", page, re.MULTILINE)}
    assert listed == set(SCENARIOS) == set(ALL_ROWS)
