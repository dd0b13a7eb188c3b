"""The systemd units beside the Procfile (``deploy/systemd``): each runs a Procfile line's
command, and ``systemd-analyze verify`` finds nothing to say about them (skipped where the
tool is missing)."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "deploy" / "systemd"
#: Where the units expect the installation and the settings (their comments say so).
BINARY = "/opt/memory-worker/.venv/bin/memory-worker"
ENV_FILE = "/etc/memory-worker/memory-worker.env"
#: Procfile process → its unit.
UNIT_OF = {
    "worker": "memory-worker@.service",
    "metrics": "memory-worker-metrics.service",
    "console": "memory-worker-console.service",
}


def _service(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(path.read_text(encoding="utf-8"))
    return parser["Service"]


def _procfile() -> dict[str, str]:
    lines = (ROOT / "config" / "Procfile").read_text(encoding="utf-8").splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())


def test_every_procfile_process_has_a_unit_running_its_command() -> None:
    procfile = _procfile()
    assert set(procfile) == set(UNIT_OF)
    assert {p.name for p in UNITS.glob("*.service")} == set(UNIT_OF.values())
    for process, command in procfile.items():
        service = _service(UNITS / UNIT_OF[process])
        assert service["ExecStart"] == command.replace("memory-worker", BINARY, 1).replace(
            "${PORT:-9108}", "9108"
        )
        assert service["EnvironmentFile"] == ENV_FILE
        assert service["Restart"] == "on-failure"  # the watchdog's exit 70 restarts a worker
    worker = (UNITS / UNIT_OF["worker"]).read_text(encoding="utf-8")
    assert "Environment=MEMORY_WORKER_SLOT=%i" in worker  # a stable identity per instance


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_analyze_verifies_every_unit(tmp_path: Path) -> None:
    """Verified as installed here: the binary this venv has, an empty settings file, the
    template as instance ``1``."""
    env_file = tmp_path / "memory-worker.env"
    env_file.write_text("")
    binary = Path(sys.executable).with_name("memory-worker")
    assert binary.is_file()
    copies = []
    for unit in sorted(UNITS.glob("*.service")):
        name = unit.name.replace("@.service", "@1.service")
        text = unit.read_text(encoding="utf-8")
        text = text.replace(BINARY, str(binary)).replace(ENV_FILE, str(env_file))
        (tmp_path / name).write_text(text, encoding="utf-8")
        copies.append(f"./{name}")
    done = subprocess.run(
        ["systemd-analyze", "verify", *copies],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout + done.stderr == ""


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_verify_speaks_up_about_a_broken_unit(tmp_path: Path) -> None:
    """The check can fail: a misspelt key and a missing binary are both reported."""
    unit = tmp_path / "broken.service"
    unit.write_text("[Service]\nExecStat=/bin/true\nExecStart=/nonexistent/memory-worker run\n")
    done = subprocess.run(
        ["systemd-analyze", "verify", "./broken.service"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "ExecStat" in done.stderr
