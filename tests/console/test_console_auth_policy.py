"""Who may read the console (§15), the pure decisions: loopback or not, when a console
must not start, which token was presented, the login cookie, the wrong-token bucket.

Tables for the cases, hypothesis for the properties (no forged cookie is accepted; however
wrong tokens are timed, a client gets at most burst + rate × elapsed of them looked at).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from memory_worker.console.auth import (
    Bucket,
    LimitPolicy,
    after_failure,
    client_key,
    exposure_problem,
    is_loopback,
    mint_session,
    reads_need_token,
    session_kind,
    token_kind,
    wait_for,
)
from memory_worker.console.gate import FailureLimiter, safe_next
from memory_worker.settings import Settings
from tests.support.clock import ManualClock

FULL = SecretStr("full-token-31f0c2a9")
READ = SecretStr("read-token-77b1e4d0")
KEY = b"k" * 32


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        pytest.param("127.0.0.1", True, id="ipv4-loopback"),
        pytest.param("127.3.2.1", True, id="anywhere-in-127/8"),
        pytest.param("::1", True, id="ipv6-loopback"),
        pytest.param("[::1]", True, id="bracketed-ipv6"),
        pytest.param("localhost", True, id="localhost"),
        pytest.param("LOCALHOST", True, id="localhost-any-case"),
        pytest.param("::ffff:127.0.0.1", True, id="ipv4-mapped-loopback"),
        pytest.param("0.0.0.0", False, id="every-ipv4-address"),
        pytest.param("::", False, id="every-ipv6-address"),
        pytest.param("", False, id="empty-means-every-address"),
        pytest.param(None, False, id="none"),
        pytest.param("10.1.2.3", False, id="private-address"),
        pytest.param("192.0.2.1", False, id="test-net"),
        pytest.param("fe80::1", False, id="link-local"),
        pytest.param("::ffff:10.0.0.1", False, id="ipv4-mapped-private"),
        pytest.param("console.internal", False, id="dns-name"),
        pytest.param("127.0.0.1.evil.example", False, id="lookalike-name"),
    ],
)
def test_is_loopback(host: str | None, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("host", "token", "read", "closed", "refused"),
    [
        pytest.param("127.0.0.1", None, None, False, False, id="loopback-open"),
        pytest.param("127.0.0.1", FULL, None, False, False, id="loopback-full-token-open"),
        pytest.param("127.0.0.1", None, READ, True, False, id="loopback-read-token-closes"),
        pytest.param("0.0.0.0", None, None, True, True, id="network-no-token-refused"),
        pytest.param("::", SecretStr(""), SecretStr(""), True, True, id="empty-tokens-refused"),
        pytest.param("0.0.0.0", FULL, None, True, False, id="network-full-token"),
        pytest.param("10.0.0.5", None, READ, True, False, id="network-read-token"),
        pytest.param("console.internal", FULL, READ, True, False, id="network-both"),
    ],
)
def test_reads_need_token_and_exposure(
    host: str,
    token: SecretStr | None,
    read: SecretStr | None,
    closed: bool,
    refused: bool,
) -> None:
    assert reads_need_token(host, read) is closed
    problem = exposure_problem(host, token, read)
    assert (problem is not None) is refused
    if problem:
        assert "MEMORY_CONSOLE_TOKEN" in problem
        assert "--metrics-only" in problem
        assert "\n" not in problem  # one line on stderr


@pytest.mark.parametrize(
    ("given", "token", "read", "kind"),
    [
        pytest.param(FULL.get_secret_value(), FULL, READ, "full", id="full"),
        pytest.param(READ.get_secret_value(), FULL, READ, "read", id="read"),
        pytest.param(READ.get_secret_value(), FULL, None, None, id="read-unset"),
        pytest.param("full-token-31f0c2a", FULL, READ, None, id="prefix"),
        pytest.param(FULL.get_secret_value() + " ", FULL, READ, None, id="trailing-space"),
        pytest.param("", FULL, READ, None, id="empty"),
        pytest.param("", None, None, None, id="empty-against-unset"),
        pytest.param("", SecretStr(""), SecretStr(""), None, id="empty-against-empty"),
        pytest.param("same", SecretStr("same"), SecretStr("same"), "full", id="same-token-full"),
    ],
)
def test_token_kind(
    given: str, token: SecretStr | None, read: SecretStr | None, kind: str | None
) -> None:
    assert token_kind(given, token, read) == kind


def test_session_cookie_round_trip_and_refusals() -> None:
    value = mint_session(KEY, "read", 1_000.0)
    assert FULL.get_secret_value() not in value
    assert READ.get_secret_value() not in value
    assert session_kind(value, KEY, 1_000.0, 3600) == "read"
    assert session_kind(mint_session(KEY, "full", 1_000), KEY, 4_600, 3600) == "full"
    kind, issued, mac = value.split(".")
    cases = {
        "expired": (value, KEY, 4_601.0),
        "from-the-future": (value, KEY, 1_000.0 - 61),
        "other-key": (value, b"x" * 32, 1_000.0),
        "kind-swapped": (f"full.{issued}.{mac}", KEY, 1_000.0),
        "issued-moved": (f"{kind}.{int(issued) + 3600}.{mac}", KEY, 1_000.0),
        "mac-cut": (f"{kind}.{issued}.{mac[:-1]}", KEY, 1_000.0),
        "no-mac": (f"{kind}.{issued}", KEY, 1_000.0),
        "negative": (f"{kind}.-5.{mac}", KEY, 1_000.0),
        "empty": ("", KEY, 1_000.0),
    }
    for case, (text, key, now) in cases.items():
        assert session_kind(text, key, now, 3600) is None, case


@given(st.text(max_size=120))
@settings(max_examples=300)
def test_no_forged_cookie_is_a_session(text: str) -> None:
    assert session_kind(text, KEY, 1_000.0, 3600) is None


def test_bucket_burst_then_rate() -> None:
    policy = LimitPolicy(burst=3, per_minute=6)  # then one every 10 s
    bucket = None
    for now in (0.0, 0.1, 0.2):
        assert wait_for(bucket, now, policy) == 0
        bucket = after_failure(bucket, now, policy)
    assert wait_for(bucket, 0.2, policy) == 10
    assert wait_for(bucket, 5.2, policy) == 5
    assert wait_for(bucket, 10.2, policy) == 0
    bucket = after_failure(bucket, 10.2, policy)
    assert wait_for(bucket, 10.2, policy) == 10
    assert wait_for(bucket, 1_000.0, policy) == 0
    full = after_failure(None, 0.0, policy)
    assert wait_for(Bucket(full.level, full.at_s), -50.0, policy) == 0  # a clock going back


@given(
    burst=st.integers(1, 10),
    per_minute=st.floats(0.5, 120),
    gaps=st.lists(st.floats(0, 30), min_size=1, max_size=200),
)
@settings(max_examples=200)
def test_wrong_tokens_looked_at_never_exceed_burst_plus_rate(
    burst: int, per_minute: float, gaps: list[float]
) -> None:
    """However an attacker times its tries, at most burst + rate × elapsed are checked."""
    policy = LimitPolicy(burst, per_minute)
    bucket = None
    now = 0.0
    checked = 0
    for gap in gaps:
        now += gap
        if wait_for(bucket, now, policy) == 0:
            checked += 1
            bucket = after_failure(bucket, now, policy)
    assert checked <= burst + now * per_minute / 60 + 1e-6  # (the bucket's float slack)


@given(gaps=st.lists(st.floats(0, 100), min_size=1, max_size=50))
def test_waiting_what_retry_after_says_is_enough(gaps: list[float]) -> None:
    policy = LimitPolicy(2, 3)
    bucket = None
    now = 0.0
    for gap in gaps:
        now += gap
        wait = wait_for(bucket, now, policy)
        if wait:
            assert wait_for(bucket, now + wait, policy) == 0
            now += wait
        bucket = after_failure(bucket, now, policy)


@pytest.mark.parametrize(
    ("remote", "key"),
    [
        pytest.param("203.0.113.7", "203.0.113.7", id="ipv4"),
        pytest.param("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64", id="ipv6-by-64"),
        pytest.param("2001:db8:1:2:ffff::9", "2001:db8:1:2::/64", id="same-64"),
        pytest.param("::ffff:203.0.113.7", "203.0.113.7", id="ipv4-mapped"),
        pytest.param(None, "unknown", id="no-peer"),
        pytest.param("unix-socket", "unix-socket", id="not-an-address"),
    ],
)
def test_client_key(remote: str | None, key: str) -> None:
    assert client_key(remote) == key


def test_limiter_keeps_clients_apart_and_bounded() -> None:
    clock = ManualClock(100.0)
    limiter = FailureLimiter(LimitPolicy(burst=2, per_minute=6), clock, max_clients=3)
    for _ in range(2):
        limiter.failed("10.0.0.1")
    assert limiter.wait("10.0.0.1") == 10
    assert limiter.wait("10.0.0.2") == 0  # another address is not held back
    for n in range(50):
        limiter.failed(f"10.1.0.{n}")
        assert len(limiter.buckets) <= 3
    clock.advance(20)
    limiter.failed("10.9.9.9")
    assert len(limiter.buckets) <= 3


@pytest.mark.parametrize(
    ("value", "target"),
    [
        pytest.param("/runs?status=failed", "/runs?status=failed", id="path-and-query"),
        pytest.param("/memory/42", "/memory/42", id="path"),
        pytest.param("//evil.example/", "/", id="scheme-relative"),
        pytest.param("/\\evil.example", "/", id="backslash"),
        pytest.param("https://evil.example/", "/", id="absolute"),
        pytest.param("/runs\r\nSet-Cookie: x=1", "/", id="header-split"),
        pytest.param("/login?next=/", "/", id="login-loop"),
        pytest.param("/logout", "/", id="logout"),
        pytest.param("", "/", id="empty"),
        pytest.param(None, "/", id="none"),
    ],
)
def test_safe_next(value: object, target: str) -> None:
    assert safe_next(value) == target


# --- safe as shipped --------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _example_env() -> dict[str, str]:
    lines = (ROOT / "config" / "example.env").read_text().splitlines()
    pairs = (line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
    return {k.strip(): v.strip() for k, v in pairs}


def _serve_commands(text: str) -> list[list[str]]:
    """Every ``memory-worker serve …`` command in ``text`` (a Procfile, the README)."""
    found = re.findall(r"memory-worker serve([^`\n|]*)", text)
    return [shlex.split(re.sub(r"\$\{PORT:-(\d+)\}", r"\1", args)) for args in found]


def _host(args: list[str], env: dict[str, str]) -> str:
    if "--host" in args:
        return args[args.index("--host") + 1]
    return env.get("MEMORY_SERVE_HOST", str(Settings.model_fields["serve_host"].default))


@pytest.mark.parametrize("where", ["Procfile", "README.md"])
def test_shipped_commands_never_put_the_console_on_the_network(where: str) -> None:
    """With the example environment (no token), every shipped ``serve`` either binds
    loopback or serves no console; and the Procfile still serves both."""
    env = _example_env()
    commands = _serve_commands((ROOT / where).read_text())
    assert commands, where
    for args in commands:
        if "--metrics-only" in args:
            continue
        host = _host(args, env)
        assert exposure_problem(host, None, None) is None, (where, args)
        assert is_loopback(host), (where, args)
    if where == "Procfile":
        assert any("--metrics-only" in args and "0.0.0.0" in args for args in commands)
        assert any("--metrics-only" not in args for args in commands)  # the console, on loopback


def test_example_env_keeps_the_console_on_loopback_without_tokens() -> None:
    env = _example_env()
    assert is_loopback(env["MEMORY_SERVE_HOST"])
    assert "MEMORY_CONSOLE_TOKEN" not in env  # a placeholder token must never ship live
    assert "MEMORY_CONSOLE_READ_TOKEN" not in env
