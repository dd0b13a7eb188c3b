"""What a fresh process pays before it does anything: the imports.

Every worker, CLI command and bot process starts by importing the package, and the test suite
starts hundreds of them. The masking rules once made that import 3.7 s (their patterns were
built at import; now they are built once and shared), and nothing timed would have noticed.
Here each command runs ``--starts`` times in a fresh interpreter, in rotating order, and the
figure is its median wall time, as a ratio against the bare interpreter measured in the same
run (``python -c pass``):

- ``import memory_worker``: the bot's API (what a bot process loads);
- ``import memory_worker.privacy.masking``: the masking rules alone;
- ``memory-worker --help``: the CLI's first answer;
- a bad setting: the CLI's one-line refusal (``MEMORY_MAX_ATTEMPTS=abc memory-worker config``).

Run from the repository root:

    python bench/startup.py [--starts 12]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from common import run_bench

CLI = "from memory_worker.cli import main; main()"
COMMANDS: dict[str, tuple[list[str], dict[str, str]]] = {
    "bare interpreter (baseline)": (["-c", "pass"], {}),
    "import memory_worker": (["-c", "import memory_worker"], {}),
    "import memory_worker.privacy.masking": (["-c", "import memory_worker.privacy.masking"], {}),
    "memory-worker --help": (["-c", CLI, "--help"], {}),
    "a bad setting (exit 2)": (["-c", CLI, "config"], {"MEMORY_MAX_ATTEMPTS": "abc"}),
}


def start(argv: list[str], extra: dict[str, str]) -> float:
    """Seconds one fresh interpreter takes to run ``argv`` and exit."""
    env = {**os.environ, **extra}
    began = time.perf_counter()
    subprocess.run([sys.executable, *argv], env=env, capture_output=True, check=False)
    return time.perf_counter() - began


async def main(starts: int) -> None:
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    names = list(COMMANDS)
    for i in range(starts):
        for name in names[i % len(names) :] + names[: i % len(names)]:  # rotating order
            times[name].append(start(*COMMANDS[name]))
    base = statistics.median(times[names[0]])
    print(f"{'command':<40} {'median s':>9} {'min s':>7} {'× bare':>7}")
    for name in names:
        median = statistics.median(times[name])
        print(f"{name:<40} {median:>9.3f} {min(times[name]):>7.3f} {median / base:>7.1f}")


if __name__ == "__main__":
    run_bench(main, __doc__, starts=12)
