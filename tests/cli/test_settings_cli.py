"""No setting that cannot work starts, and no secret reaches any output (§11) — through real
processes.

Every secret setting holds a canary (``tests/support/settings_cases.py``) in every
case, and stdout and stderr of every process are scanned for all of them:

- every setting with each of its bad values, through every command in turn: stdout
  empty, one line on stderr naming the variable, exit 2 (one forked process per
  case, ``tests/support/cli_fork.py``; and the console script itself for the
  issue's own example);
- every command with good input and with bad input, and with an unexpected error
  raised inside it while its frame holds every secret (debug logs on, so its
  traceback is logged too);
- ``run`` and ``serve`` started for real with the canaries (worker working,
  ``/readyz`` ready), and their start-up failures: a contradiction between settings,
  a routes file whose local model cannot make the embedding dimension, refused
  credentials;
- the same gate at the other doors: ``arq memory_worker.worker.WorkerSettings`` (arq's own
  process) prints ``run``'s line, a ``.env`` line that is not ``NAME=value`` is that
  line naming the file and the line, and a lease shortened alone is accepted — two real
  workers on it keep a run that outlasts the lease.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from arq.connections import ArqRedis

from llm_client import extra_installed
from memory_worker.api import MemoryQueue
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.runs import RunStore
from memory_worker.settings import Settings, env_name
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.worker.fleet import FAST, Fleet
from tests.support.cli_fork import CliCase, CliResult, run_cli_cases
from tests.support.factories import make_request, request_dict
from tests.support.harness import completed_run, free_port, run_memory_worker
from tests.support.replies import command
from tests.support.settings_cases import acl_user, bad_values, canaries, canary_env, canary_of

#: One invocation of every command (a bad setting must stop each before its body).
COMMANDS: list[list[str]] = [
    ["run"],
    ["run", "--serve", "--port", "1"],
    ["serve", "--port", "1"],
    ["enqueue", "-"],
    ["runs", "list"],
    ["runs", "list", "--json"],
    ["runs", "show", "some-run"],
    ["replay", "--dry-run"],
    ["forget", "--chat", "1", "--dry-run"],
    ["breakers", "list"],
    ["breakers", "reset", "a/b"],
    ["report"],
    ["demo", "--fast"],
    ["config"],
    ["config", "--markdown"],
]
PREFIX = "canary:"


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The session's environment without any setting, plus ``extra``."""
    names = {env_name(n) for n in Settings.model_fields}
    env = {k: v for k, v in os.environ.items() if k not in names}
    return env | {"MEMORY_DATA_DIR": str(tmp_path / "var"), "MEMORY_LOG_FORMAT": "json", **extra}


#: A provider key a routes file names by its variable (``auth_env``): a secret outside the settings.
ROUTE_KEY = "CANARY-7e3f-route-key-x9"


def leaked(*texts: str) -> list[str]:
    return [c for c in [*canaries(), ROUTE_KEY] if any(c in t for t in texts)]


def assert_one_error_line(result: CliResult | subprocess.CompletedProcess[str], *names: str) -> str:
    where = result.case.argv if isinstance(result, CliResult) else result.args
    assert result.returncode == 2, (where, result.stdout[-500:], result.stderr[-2000:])
    assert result.stdout == "", (where, result.stdout[-500:])
    lines = result.stderr.splitlines()
    assert len(lines) == 1, (where, result.stderr[-2000:])
    assert lines[0].startswith("error: "), lines[0]
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


# --- every setting, a bad value, every command ---------------------------------------------


#: The cases run in this many shards, each its own test, so pytest-xdist spreads them over its
#: processes (one test was 6.5 minutes of a loaded host's run, longer than the rest of a worker's
#: share of the suite).
SHARDS = 6


@pytest.mark.timeout(600)  # ~40 forked CLI runs a shard: minutes on a loaded 2-core host
@pytest.mark.parametrize("shard", range(SHARDS), ids=lambda s: f"shard{s}")
def test_every_setting_with_a_bad_value_is_one_line_on_stderr_and_exit_2(
    shard: int, tmp_path: Path
) -> None:
    env = base_env(tmp_path, **canary_env())
    cases = [
        CliCase(COMMANDS[i % len(COMMANDS)], env | {env_name(name): bad}, label=env_name(name))
        for i, (name, bad) in enumerate(
            (name, bad)
            for name, info in sorted(Settings.model_fields.items())
            for bad in bad_values(name, info, tmp_path)
        )
    ]
    assert len(cases) > len(Settings.model_fields)
    for result in run_cli_cases(cases[shard::SHARDS]):
        line = assert_one_error_line(result, f"invalid settings: {result.case.label}")
        assert not leaked(result.stdout, result.stderr), line


def test_a_good_environment_passes_the_same_gate(tmp_path: Path) -> None:
    """The gate is the settings, not the harness: the canary environment itself starts."""
    (result,) = run_cli_cases(
        [CliCase(["config", "--markdown"], base_env(tmp_path, **canary_env()))]
    )
    assert result.returncode == 0, result.stderr
    assert not leaked(result.stdout, result.stderr)


@pytest.mark.parametrize(
    "argv", [["runs", "list"], ["run"], ["serve"], ["runs", "list", "--help"]], ids=" ".join
)
def test_the_console_script_with_the_issues_example(argv: list[str], tmp_path: Path) -> None:
    """``MEMORY_MAX_ATTEMPTS=abc memory-worker runs list`` printed 113 lines and every secret."""
    env = base_env(tmp_path, **canary_env(), MEMORY_MAX_ATTEMPTS="abc")
    done = subprocess.run(
        [sys.executable, "-m", "memory_worker", *argv],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    line = assert_one_error_line(done, "MEMORY_MAX_ATTEMPTS", "(got 'abc')")
    assert not leaked(done.stdout, done.stderr), line


@pytest.mark.parametrize(
    ("env", "names"),
    [
        pytest.param({"MEMORY_PROMPT_VERSION": "memory_v2"}, ["MEMORY_PROMPT_VERSION"], id="prompt"),
        pytest.param({"MEMORY_WORKER_CONCURRENCY": "0"}, ["MEMORY_WORKER_CONCURRENCY"], id="concurrency"),
        pytest.param({"MEMORY_LEASE_RENEW_SECONDS": "45"},
                     ["MEMORY_LEASE_RENEW_SECONDS", "MEMORY_LEASE_SECONDS"], id="renewal-vs-lease"),
        pytest.param({"MEMORY_CAPACITY_WAIT_SECONDS": "900"},
                     ["MEMORY_CAPACITY_WAIT_SECONDS", "MEMORY_TASK_TIMEOUT_SECONDS"], id="wait-vs-task"),
    ],
)  # fmt: skip
def test_run_refuses_settings_that_cannot_work(
    env: dict[str, str], names: list[str], tmp_path: Path
) -> None:
    """The worker that would have skipped every memory_v1 run never starts."""
    done = subprocess.run(
        [sys.executable, "-m", "memory_worker", "run"],
        capture_output=True, text=True, env=base_env(tmp_path, **canary_env(), **env),
        timeout=60, check=False,
    )  # fmt: skip
    line = assert_one_error_line(done, *names)
    assert not leaked(done.stdout, done.stderr), line


@pytest.mark.skipif(not extra_installed(), reason="needs the local-embed extra")
def test_run_refuses_a_local_model_that_cannot_make_the_dimension(tmp_path: Path) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text(
        '[[routes.embedding.targets]]\ntransport = "local"\nmodel = "multilingual-e5-small"\n'
    )
    env = base_env(tmp_path, **canary_env(), MEMORY_ROUTES_FILE=str(routes),
                   MEMORY_EMBEDDING_DIMENSION="512")  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "memory_worker", "run"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    line = assert_one_error_line(done, "MEMORY_ROUTES_FILE", "MEMORY_EMBEDDING_DIMENSION=384")
    assert "384-d" in line
    assert not leaked(done.stdout, done.stderr)


# --- the arq entry, .env, a shortened lease: the same gate everywhere ------------------------


#: The console scripts next to this interpreter (the real entry points a deployment runs).
SCRIPTS = Path(sys.executable).parent


#: Bad settings for the arq entry: a bad secret value (its canary must not show) and a
#: contradiction (the issue's watchdog), with the variables each line must name.
ARQ_CASES = [
    ({"REDIS_URL": "http://u:CANARY-7e3f-arq-x9@127.0.0.1:1/0"}, ["REDIS_URL"]),
    ({"MEMORY_WATCHDOG_SECONDS": "5"}, ["MEMORY_WATCHDOG_SECONDS", "MEMORY_TICK_TIMEOUT_SECONDS"]),
]


def test_the_arq_entry_fails_with_the_clis_one_line(tmp_path: Path) -> None:
    """``arq memory_worker.worker.WorkerSettings`` printed a 37-line traceback on a bad
    setting; it prints ``memory-worker run``'s line, on stderr, and exits 2 (arq itself, a
    real process per case)."""
    for env, names in ARQ_CASES:
        full = base_env(tmp_path, **(canary_env() | env))
        arq = subprocess.run(
            [str(SCRIPTS / "arq"), "memory_worker.worker.WorkerSettings"],
            capture_output=True, text=True, env=full, timeout=60, check=False, cwd=tmp_path,
        )  # fmt: skip
        line = assert_one_error_line(arq, *names)
        assert line == assert_one_error_line(run_memory_worker(["run"], full), *names)
        assert "Traceback" not in arq.stderr
        assert not leaked(arq.stdout, arq.stderr)
        assert "CANARY-7e3f-arq-x9" not in arq.stdout + arq.stderr


#: A .env whose REDIS_URL line lost its closing quote (the value holds a canary password).
BROKEN_DOTENV = (
    "# memory-worker\n"
    "MEMORY_MAX_ATTEMPTS=3\n"
    'REDIS_URL="redis://:CANARY-7e3f-dotenv-x9@127.0.0.1:1/0\n'
    "MEMORY_LOG_LEVEL=INFO\n"
)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        pytest.param(BROKEN_DOTENV, 3, id="unclosed-quote"),
        pytest.param("MEMORY_MAX_ATTEMPTS=3\nREDIS_URL\n", 2, id="name-without-equals"),
        pytest.param("REDIS URL=redis://127.0.0.1:1/0\n", 1, id="space-in-the-name"),
    ],
)
def test_a_malformed_dotenv_line_is_an_error_naming_the_file_and_the_line(
    text: str, line: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A malformed REDIS_URL line made ``runs list`` start an embedded Valkey and answer
    from an empty store, exit 0. Now: one line naming the file and the line, never its text,
    exit 2, and nothing started."""
    dotenv = tmp_path / ".env"
    dotenv.write_text(text)
    env = {k: v for k, v in canary_env().items() if k != "REDIS_URL"}
    valkey_dir = tmp_path / "var" / "valkey"
    monkeypatch.chdir(tmp_path)  # the command line reads ./.env
    try:
        done = run_memory_worker(["runs", "list"], base_env(tmp_path, **env))
        error = assert_one_error_line(done, f"{dotenv} line {line}:")
        assert not valkey_dir.exists(), "an embedded Valkey was started"
    finally:
        EmbeddedValkey(valkey_dir).shutdown()  # only if a regression started one
    assert "CANARY-7e3f-dotenv-x9" not in done.stderr + done.stdout
    assert "redis://" not in error
    assert not leaked(done.stdout, done.stderr)


def test_a_shortened_lease_alone_is_accepted(tmp_path: Path) -> None:
    """``MEMORY_LEASE_SECONDS=6`` alone was refused (the renewal's default stayed 10 s)."""
    env = base_env(tmp_path, **canary_env(), MEMORY_LEASE_SECONDS="6")
    done = run_memory_worker(["config", "--markdown"], env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


@pytest.mark.slow
async def test_a_worker_on_a_shortened_lease_alone_keeps_a_run_longer_than_the_lease(
    settings: Settings, redis: Any, sim: FarmSimulator, tmp_path: Path
) -> None:
    """Two workers, ``MEMORY_LEASE_SECONDS=6`` and neither the renewal nor the heartbeat set,
    and an extraction that takes 7.5 s: the lease, renewed every 2 s, never lapses — one
    claim, one attempt, no lease lost, and the other worker never takes the run."""
    overrides = {k: v for k, v in FAST.items()
                 if k not in ("lease_seconds", "lease_renew_seconds", "worker_heartbeat_seconds")}  # fmt: skip
    overrides |= {"lease_seconds": 6.0, "task_timeout_seconds": 30.0,
                  "discovery_base_url": sim.base_url}  # fmt: skip
    store = RunStore(redis, settings)
    rid = (await store.enqueue(make_request(6060))).run_id
    assert rid is not None
    sim.set_fault(settings.extraction_service, Fault(kind=FaultKind.SLOW, seconds=7.5, times=1))
    fleet = Fleet(settings, tmp_path, overrides)
    try:
        fleet.start(2)
        run = await completed_run(lambda: store.get(rid), timeout=90)
    finally:
        fleet.stop_all()
    logs = fleet.logs(tail=None)
    assert (run.attempts, run.releases, run.error_log) == (1, 0, []), logs[-4000:]
    assert logs.count('"run_claimed"') == 1, logs[-4000:]
    assert "run_lease_lost" not in logs


# --- every command, good and bad input, on a real Valkey whose password is a canary -------------


@pytest.fixture
async def canary_redis(
    private_valkey: EmbeddedValkey, admin: ArqRedis, tmp_path: Path
) -> dict[str, str]:
    """The canary environment, with REDIS_URL and MEMORY_CARDS_URL logging in for real, and
    a routes file whose provider key (``auth_env``) is a canary too."""
    env = canary_env(private_valkey)
    for name in ("redis_url", "cards_url"):
        await command(admin, "ACL", "SETUSER", acl_user(name), "reset", "on", f">{canary_of(name)}",
                      "~*", "&*", "+@all")  # fmt: skip
    routes = tmp_path / "routes.toml"
    routes.write_text(
        "[[routes.memory_extraction.targets]]\n"
        'transport = "openai"\nurl = "http://127.0.0.1:9/v1"\nmodel = "m"\nauth_env = "FARM_KEY"\n'
        "[[routes.memory_merge.targets]]\n[[routes.embedding.targets]]\n"  # the defaults' targets
    )
    return base_env(tmp_path, **env, MEMORY_KEY_PREFIX=PREFIX, MEMORY_ROUTES_FILE=str(routes),
                    FARM_KEY=ROUTE_KEY)  # fmt: skip


async def test_every_command_with_good_and_bad_input_prints_no_secret(
    canary_redis: dict[str, str], tmp_path: Path
) -> None:
    good_file, bad_file = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good_file.write_text(json.dumps(request_dict(7)) + "\n")
    bad_file.write_text('{"chat_id": "seven"}\n')
    settings = Settings(redis_url=canary_redis["REDIS_URL"], key_prefix=PREFIX)
    queue = await MemoryQueue.connect(settings=settings)
    try:
        run_id = (await queue.enqueue(request_dict(8))).run_id
    finally:
        await queue.close()
    assert run_id is not None
    debug = canary_redis | {"MEMORY_LOG_LEVEL": "debug"}
    good: list[list[str]] = [["config"], ["enqueue", str(good_file)], ["runs", "list"], ["runs", "list", "--json"],
            ["runs", "show", run_id, "--json"], ["replay", "--dry-run"],
            ["forget", "--chat", "8", "--dry-run"], ["breakers", "list", "--json"],
            ["breakers", "reset", "x/y", "--force"], ["report", "--json"]]  # fmt: skip
    bad: list[list[str]] = [["enqueue", str(bad_file)], ["runs", "show", "no-such-run"],
           ["replay", "--since", "99999999999d", "--dry-run"], ["forget", "--dry-run"],
           ["breakers", "reset", "nobody/nothing"]]  # fmt: skip
    usage: list[list[str]] = [["runs", "list", "--status", "bogus"], ["report", "--limit", "0"]]
    # every command, with a bug inside (enqueue fed a good file: "-" reads an empty stdin)
    broken = [c for c in COMMANDS if c != ["enqueue", "-"]] + [["enqueue", str(good_file)]]
    cases = (
        [CliCase(argv, canary_redis, label="good") for argv in good]
        + [CliCase(argv, canary_redis, label="bad") for argv in bad]
        + [CliCase(argv, debug, fault="unexpected", label="bug") for argv in broken]
        + [CliCase(argv, canary_redis, label="usage") for argv in usage]
    )
    for result in run_cli_cases(cases):
        where = (result.case.label, result.case.argv, result.stderr[-1500:])
        assert not leaked(result.stdout, result.stderr), where
        if result.case.label == "good":
            assert result.returncode == 0, where
            continue
        assert result.returncode == 2, where
        if result.case.label == "usage":  # click's own usage message (a box), no traceback
            assert "Traceback" not in result.stderr, where
            continue
        assert result.stderr.splitlines()[-1].startswith("error: "), where
        if result.case.label == "bug":  # the traceback is logged (debug), without locals
            assert "unexpected RuntimeError: a bug while working with [Filtered]" in result.stderr
            assert "Traceback" in result.stderr
        else:
            assert "Traceback" not in result.stderr, where


# --- run and serve, for real, with the canaries ----------------------------------------------


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=20)


def start(
    argv: list[str], env: dict[str, str], procs: list[subprocess.Popen[str]]
) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memory_worker", *argv],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    procs.append(proc)
    return proc


def readyz(
    url: str, proc: subprocess.Popen[str], *, status: int, timeout: float = 60
) -> httpx.Response:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        try:
            answer = httpx.get(url + "/readyz", timeout=5)
        except httpx.HTTPError:
            answer = None
        if answer is not None and answer.status_code == status:
            return answer
        time.sleep(0.1)
    raise AssertionError(f"/readyz never answered {status}")


def fetch(url: str, *paths: str) -> list[str]:
    return [httpx.get(url + path, timeout=10).text for path in paths]


def run_console_script(
    argv: list[str], env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_worker", *argv],
        capture_output=True, text=True, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def stopped(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err


async def test_run_and_serve_with_canaries_print_and_serve_no_secret(
    canary_redis: dict[str, str], processes: list[subprocess.Popen[str]]
) -> None:
    env = canary_redis | {"MEMORY_LOG_LEVEL": "debug", "MEMORY_WORKER_HEARTBEAT_SECONDS": "0.5"}
    worker_port, serve_port = free_port(), free_port()
    worker = start(["run", "--serve", "--port", str(worker_port)], env, processes)
    server = start(["serve", "--port", str(serve_port)], env, processes)
    pages = []
    for port, proc in ((worker_port, worker), (serve_port, server)):
        url = f"http://127.0.0.1:{port}"
        pages.append(readyz(url, proc, status=200).text)
        pages += fetch(url, "/metrics", "/", "/settings")
    outputs = [stopped(worker), stopped(server)]
    assert [code for code, _, _ in outputs] == [0, 0], [err[-2000:] for _, _, err in outputs]
    assert '"worker_started"' in outputs[0][2]  # the worker did start (and logged at debug)
    assert not leaked(*pages, *(out + err for _, out, err in outputs))


async def test_run_and_serve_with_refused_credentials_print_no_secret(
    canary_redis: dict[str, str],
    private_valkey: EmbeddedValkey,
    processes: list[subprocess.Popen[str]],
) -> None:
    env = canary_redis | {
        "REDIS_URL": private_valkey.url_as("user", f"{canary_of('redis_url')}-wrong")
    }
    done = run_console_script(["run"], env)
    line = assert_one_error_line(done, "refused the credentials")
    assert not leaked(done.stdout, done.stderr), line
    port = free_port()
    server = start(["serve", "--port", str(port)], env, processes)
    body = readyz(f"http://127.0.0.1:{port}", server, status=503).text
    code, out, err = stopped(server)
    assert code == 0, err[-2000:]
    assert not leaked(body, out, err)


@pytest.mark.slow
async def test_the_demo_with_canaries_prints_and_logs_no_secret(
    canary_redis: dict[str, str], tmp_path: Path
) -> None:
    """The demo on REDIS_URL (a canary password), every other secret a canary too."""
    env = canary_redis | {"COLUMNS": "120", "MEMORY_FARMSIM_EMBEDDER": "hashed"}
    env.pop("MEMORY_ROUTES_FILE")  # the demo's farm is its simulator
    done = run_console_script(["demo", "--fast", "--data-dir", str(tmp_path / "demo")], env, 240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "The story held." in done.stdout
    logs = [p.read_text(errors="replace") for p in (tmp_path / "demo").rglob("*.log")]
    assert logs  # the demo logs to a file: scanned too
    assert not leaked(done.stdout, done.stderr, *logs)
