"""The console off loopback for real (§15): a network namespace this test creates.

A private namespace joined to this one by a veth pair carrying TEST-NET-2 addresses
(198.51.100.0/24, reserved for documentation: no real network). Inside it the store (an
embedded Valkey on the namespace's own loopback, seeded by :func:`seed_inside`) and
``memory-worker serve --host <namespace address>``; this side asks for every page:

- with no token configured the console refuses to start (exit 2, one line on stderr);
- with tokens, every page without one is refused (401, nothing of the store in it), and
  works with the token (bearer) or after a login with the read token (cookie);
- ``serve --metrics-only`` and ``run --serve`` there need no token and serve no console.

Needs root and iproute2's ``ip`` (skipped otherwise, saying which). Everything the test
made — processes in the namespace, the veth pair, the namespace — goes in ``finally``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_worker.console.auth import CSRF_COOKIE as CSRF
from tests.console.test_console import CHAT, PAGES, TARGET

# one namespace test at a time: each adds a veth pair and a TEST-NET-2 address on this host
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("netns")]

TOKEN = "netns-console-token-4b7d1f"
READ = "netns-read-token-90aa3c"
ROOT = Path(__file__).resolve().parents[2]
PREFIX = "ns:"
#: Fragments of the seeded store (cards, messages, the worker holding a lease, a breaker).
STORE_FRAGMENTS = ("Porto", "I love tea", "console-test-worker", TARGET, "upstream_error")


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create a network namespace (ip netns add)"
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    return None


@dataclass
class Namespace:
    name: str
    host_if: str
    inside: str  # the namespace's address (the server binds it)
    outside: str  # this side's address on the veth


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def _free_subnet() -> int:
    """A /30 of 198.51.100.0/24 no interface of this machine uses (other tests make some)."""
    used = subprocess.run(
        ["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, check=True
    ).stdout
    for _ in range(100):
        base = random.randrange(0, 256, 4)
        if not any(f"198.51.100.{base + i}/" in used for i in range(4)):
            return base
    raise AssertionError("no free /30 in 198.51.100.0/24")


@pytest.fixture
def netns() -> Iterator[Namespace]:
    reason = _why_not()
    if reason:
        pytest.skip(reason)
    tag = f"{os.getpid() % 100_000:05d}{random.randrange(16 * 16):02x}"
    base = _free_subnet()
    ns = Namespace(
        f"mwconsole{tag}", f"mwh{tag}", f"198.51.100.{base + 2}", f"198.51.100.{base + 1}"
    )
    peer = f"mwn{tag}"
    try:
        _ip("netns", "add", ns.name)
        _ip("link", "add", ns.host_if, "type", "veth", "peer", "name", peer)
        _ip("link", "set", peer, "netns", ns.name)
        _ip("addr", "add", f"{ns.outside}/30", "dev", ns.host_if)
        _ip("link", "set", ns.host_if, "up")
        _ip("-n", ns.name, "addr", "add", f"{ns.inside}/30", "dev", peer)
        _ip("-n", ns.name, "link", "set", peer, "up")
        _ip("-n", ns.name, "link", "set", "lo", "up")
        yield ns
    finally:
        _end_processes_in(ns.name)
        with contextlib.suppress(subprocess.CalledProcessError):
            _ip("link", "del", ns.host_if)  # takes its peer with it
        with contextlib.suppress(subprocess.CalledProcessError):
            _ip("netns", "del", ns.name)


def _end_processes_in(name: str) -> None:
    """Stop what still runs in the namespace (only this test started anything there)."""
    listed = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
    pids = [int(p) for p in listed.stdout.split()]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):
        return not Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    return False


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MEMORY_") and k not in ("REDIS_URL", "MEMORY_CARDS_URL")
    }
    return env | {
        "MEMORY_DATA_DIR": str(data_dir),  # no REDIS_URL: the namespace's own embedded Valkey
        "MEMORY_KEY_PREFIX": PREFIX,
        "MEMORY_LOG_FORMAT": "json",
        "PYTHONPATH": str(ROOT),
        **extra,
    }


def _inside(ns: Namespace, *argv: str) -> list[str]:
    return ["ip", "netns", "exec", ns.name, *argv]


def seed_inside() -> None:
    """Run in the namespace: seed its embedded Valkey as the console tests do; print the ids."""
    from memory_worker.settings import Settings
    from memory_worker.storage.connections import client_from_url, resolve_url
    from tests.console.test_console import seed

    async def main() -> dict[str, str]:
        settings = Settings()
        url, _ = resolve_url(settings)  # starts the store, detached: it outlives this process
        redis = client_from_url(url)
        try:
            return await seed(redis, settings.model_copy(update={"redis_url": url}))
        finally:
            await redis.aclose()

    print(json.dumps(asyncio.run(main())))


def _start(ns: Namespace, data_dir: Path, log: Path, *args: str, **env: str) -> Any:
    with open(log, "ab") as out:
        return subprocess.Popen(
            _inside(ns, sys.executable, "-m", "memory_worker", *args),
            env=_env(data_dir, **env),
            stdout=out,
            stderr=out,
            cwd=ROOT,
        )


def _wait_up(url: str, proc: Any, log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/healthz", timeout=2, trust_env=False).status_code == 200:
                return
        time.sleep(0.1)
    raise AssertionError(f"{url} not up in time: {log.read_text(errors='replace')[-3000:]}")


def _stop(proc: Any) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _no_store_in(body: str, where: str) -> None:
    body = re.sub(r'name="next" value="[^"]*"', "", body)  # the page asked for, echoed back
    for fragment in STORE_FRAGMENTS:
        assert fragment not in body, (where, fragment)


def test_console_off_loopback_refused_without_a_token_works_with_it(
    netns: Namespace, tmp_path: Path
) -> None:
    data_dir = tmp_path / "var"
    seeded = subprocess.run(
        _inside(
            netns,
            sys.executable,
            "-c",
            "from tests.console.test_console_netns import seed_inside as s; s()",
        ),
        env=_env(data_dir),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert seeded.returncode == 0, seeded.stderr[-3000:]
    ids: dict[str, str] = json.loads(seeded.stdout.strip().splitlines()[-1])
    pages = [p for p in PAGES if not p.startswith("/static/")] + [f"/runs/{ids['retired']}"]

    # no token at all: refuses to start, before it listens
    bare = subprocess.run(
        _inside(netns, sys.executable, "-m", "memory_worker", "serve", "--host", netns.inside),
        env=_env(data_dir),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert bare.returncode == 2
    lines = bare.stderr.strip().splitlines()
    assert len(lines) == 1, bare.stderr
    assert lines[0].startswith(f"error: the console would serve chats' memory on {netns.inside}")

    url = f"http://{netns.inside}:9108"
    log = tmp_path / "serve.log"
    serve = _start(
        netns,
        data_dir,
        log,
        "serve",
        "--host",
        netns.inside,
        "--port",
        "9108",
        MEMORY_CONSOLE_TOKEN=TOKEN,
        MEMORY_CONSOLE_READ_TOKEN=READ,
    )
    try:
        _wait_up(url, serve, log)
        with httpx.Client(base_url=url, timeout=10, trust_env=False) as anyone:
            for path in pages:
                answer = anyone.get(path)
                assert answer.status_code == 401, path
                _no_store_in(answer.text, path)
            assert anyone.get("/metrics").status_code == 200  # Prometheus needs no token
            for path in ("/breakers/reset", "/replay", "/forget"):
                answer = anyone.post(path, data={"target": TARGET, "chat": str(CHAT)})
                assert answer.status_code == 401, path
        with httpx.Client(
            base_url=url, timeout=10, trust_env=False, headers={"Authorization": f"Bearer {TOKEN}"}
        ) as script:
            for path in pages:
                assert script.get(path).status_code == 200, path
            assert "Porto" in script.get(f"/memory/{CHAT}").text
        with httpx.Client(base_url=url, timeout=10, trust_env=False) as browser:
            browser.get("/login")  # the form's page hands out the CSRF cookie
            form = {"token": READ, "next": f"/memory/{CHAT}", "csrf": browser.cookies[CSRF]}
            logged_in = browser.post("/login", data=form)
            assert logged_in.status_code == 303
            assert logged_in.headers["location"] == f"/memory/{CHAT}"
            for path in pages:
                assert browser.get(path).status_code == 200, path
            assert "Porto" in browser.get(f"/memory/{CHAT}").text
    finally:
        _stop(serve)
    assert TOKEN not in log.read_text(errors="replace")
    assert READ not in log.read_text(errors="replace")


@pytest.mark.parametrize(
    "args",
    [["serve", "--metrics-only"], ["run", "--serve"]],
    ids=["serve-metrics-only", "run-serve"],
)
def test_metrics_and_worker_probes_off_loopback_carry_no_console(
    netns: Namespace, tmp_path: Path, args: list[str]
) -> None:
    url = f"http://{netns.inside}:9109"
    log = tmp_path / "probe.log"
    data_dir = tmp_path / "var"
    proc = _start(netns, data_dir, log, *args, "--host", netns.inside, "--port", "9109")
    try:
        _wait_up(url, proc, log, timeout=90)
        with httpx.Client(base_url=url, timeout=10, trust_env=False) as client:
            assert client.get("/metrics").status_code == 200
            assert client.get("/readyz").status_code in (200, 503)
            for path in ("/", "/runs", f"/memory/{CHAT}", "/settings", "/login"):
                assert client.get(path).status_code == 404, path
    finally:
        _stop(proc)
