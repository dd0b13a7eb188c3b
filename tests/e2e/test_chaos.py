"""The chaos soak, soak-tier size (docs/reliability.md): bench/chaos.py with a ~3-minute fault schedule.

Three real worker processes, a private Valkey with AOF, the farm simulator,
200 runs across 40 chats; farm modes flip, Valkey is killed (-9) and frozen,
workers are killed and stopped; then everything heals and the backlog must
drain with every invariant of the soak holding (see bench/chaos.py). The
schedule's seed is printed; ``CHAOS_SEED`` / ``CHAOS_MINUTES`` override it.
The 30-minute soak is ``python bench/chaos.py --minutes 30``.
"""

from __future__ import annotations

import os

import pytest

from bench.chaos import run_soak

pytestmark = [pytest.mark.slow, pytest.mark.soak]

#: Schedule length: with the reference run and the drain the test takes 3–4 minutes.
MINUTES = float(os.environ.get("CHAOS_MINUTES", "3"))
#: A seed whose 3-minute plan has every farm mode, both Valkey faults and several kill -9s.
SEED = int(os.environ.get("CHAOS_SEED", "20261396"))


@pytest.mark.timeout(600)  # 3–4 minutes on a quiet host; 6.6 on a slow, loaded one
async def test_chaos_soak_loses_no_work() -> None:
    report = await run_soak(MINUTES, SEED, drain_timeout=75.0)
    text = "\n".join([f"chaos soak seed {SEED}", *report.lines()])
    print(text)
    assert report.ok, text
