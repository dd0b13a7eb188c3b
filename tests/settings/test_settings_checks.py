"""Settings that cannot work never start, and no secret is ever printed (§11): the checks
themselves, in process.

The same promises through real processes (every setting, every command, canaries
scanned on stdout and stderr) are in ``tests/cli/test_settings_cli.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr

from bench.chaos import worker_overrides as chaos_overrides
from memory_worker.api import MemoryQueue
from memory_worker.demo.story import FAST_TIMING, NORMAL_TIMING
from memory_worker.errors import SettingsError
from memory_worker.models import parse_run_request
from memory_worker.runs import RunStore
from memory_worker.settings import Settings, env_name, get_settings, load_settings
from memory_worker.settings.checks import (
    EXTRACTION_PROMPTS,
    RELATIONS,
    Relation,
    contradictions,
    known_prompt_versions,
)
from memory_worker.settings.runs import SMALLEST_RUN_BYTES
from memory_worker.settings.types import SecretUrl, mask_url, reveal, secret_values
from memory_worker.worker.fleet import FAST
from tests.support.factories import smallest_request
from tests.support.settings_cases import (
    bad_values,
    canaries,
    canary_env,
    canary_of,
    has_lower_bound,
    has_upper_bound,
    is_number,
    secret_fields,
)

FIELDS = sorted(Settings.model_fields)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No setting from the test session's environment, secrets set to their canaries."""
    for name in Settings.model_fields:
        monkeypatch.delenv(env_name(name), raising=False)
    for variable, value in canary_env().items():
        monkeypatch.setenv(variable, value)
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "var"))
    return monkeypatch


def refused(monkeypatch: pytest.MonkeyPatch, **env: str) -> SettingsError:
    for variable, value in env.items():
        monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    return raised.value


# --- every setting, a bad value ----------------------------------------------------------------


@pytest.mark.parametrize("name", FIELDS)
def test_every_setting_refuses_its_bad_values_naming_it_and_no_secret(
    name: str, clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    variable = env_name(name)
    for bad in bad_values(name, Settings.model_fields[name], tmp_path):
        error = refused(clean_env, **{variable: bad})
        line = str(error)
        assert error.problems, line
        assert all(p.startswith(variable) for p in error.problems), line
        assert "\n" not in line
        assert not [c for c in canaries() if c in line], line
        assert error.__cause__ is None  # the pydantic error (it holds the inputs) stays behind
        assert error.__context__ is None


def test_the_canary_environment_itself_is_valid(clean_env: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    assert sorted(secret_values(settings)) == sorted(
        {*canaries(), *[v for v in secret_values(settings) if "://" in v]}
    )


@pytest.mark.parametrize("name", [n for n in FIELDS if is_number(Settings.model_fields[n])])
def test_every_number_has_a_lower_bound(name: str) -> None:
    assert has_lower_bound(Settings.model_fields[name]), f"{env_name(name)} has no lower bound"


@pytest.mark.parametrize("name", [n for n in FIELDS if is_number(Settings.model_fields[n])])
def test_every_number_has_an_upper_bound(name: str) -> None:
    assert has_upper_bound(Settings.model_fields[name]), f"{env_name(name)} has no upper bound"


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        pytest.param(
            "MEMORY_WORKER_CONCURRENCY", "0", "greater than or equal to 1", id="concurrency-0"
        ),
        pytest.param(
            "MEMORY_LEASE_SECONDS", "-5", "greater than or equal to 1", id="negative-lease"
        ),
        pytest.param(
            "MEMORY_MAX_QUEUED_RUNS", "-1", "greater than or equal to 1", id="queue-cap--1"
        ),
        pytest.param("MEMORY_MAX_ATTEMPTS", "abc", "valid integer", id="attempts-abc"),
        pytest.param("MEMORY_TASK_TIMEOUT_SECONDS", "inf", "finite number", id="infinite-budget"),
        pytest.param("MEMORY_LEASE_SECONDS", "nan", "finite number", id="nan-lease"),
        pytest.param("MEMORY_SERVE_PORT", "70000", "less than or equal to 65535", id="port"),
        pytest.param(
            "MEMORY_PROMPT_VERSION",
            "memory_v2",
            "no prompt for version 'memory_v2'",
            id="unknown-prompt",
        ),
    ],
)
def test_the_issues_examples_are_refused(
    variable: str, value: str, says: str, clean_env: pytest.MonkeyPatch
) -> None:
    line = str(refused(clean_env, **{variable: value}))
    assert f"{variable}: " in line, line
    assert says in line, line


def test_an_empty_variable_means_unset(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("REDIS_URL", "")
    clean_env.setenv("MEMORY_MAX_ATTEMPTS", "")
    settings = load_settings()
    assert settings.redis_url is None
    assert settings.max_attempts == Settings.model_fields["max_attempts"].default


def test_every_problem_at_once_one_line(clean_env: pytest.MonkeyPatch) -> None:
    error = refused(clean_env, MEMORY_MAX_ATTEMPTS="x", MEMORY_LEASE_SECONDS="-1")
    assert sorted(p.split(":")[0] for p in error.problems) == [
        "MEMORY_LEASE_SECONDS",
        "MEMORY_MAX_ATTEMPTS",
    ]


# --- settings that cannot contradict at run time -------------------------------------------


@pytest.mark.parametrize(
    ("env", "names", "says"),
    [
        pytest.param({"MEMORY_WATCHDOG_SECONDS": "5"},
                     ["MEMORY_WATCHDOG_SECONDS", "MEMORY_TICK_TIMEOUT_SECONDS",
                      "MEMORY_SHUTDOWN_GRACE_SECONDS"], "would read as wedged", id="watchdog-5s"),
        pytest.param({"MEMORY_WATCHDOG_SECONDS": "3620"},
                     ["MEMORY_WATCHDOG_SECONDS"], "must be <", id="watchdog-at-budget-plus-grace"),
        pytest.param({"MEMORY_MAX_ATTEMPTS": str(10**21)}, ["MEMORY_MAX_ATTEMPTS"],
                     "less than or equal to 100", id="attempts-10^21"),
        pytest.param({"MEMORY_MAX_RUN_BYTES": "10"}, ["MEMORY_MAX_RUN_BYTES"],
                     "greater than or equal to 124", id="run-bytes-10"),
        pytest.param({"MEMORY_EMBEDDING_TASK_TIMEOUT_SECONDS": "1000"},
                     ["MEMORY_EMBEDDING_TASK_TIMEOUT_SECONDS", "MEMORY_ROUTE_WALL_SECONDS"],
                     "embedding job", id="embedding-budget-past-the-wall"),
        pytest.param({"MEMORY_EXTRACTION_SERVICE": "s" * 65}, ["MEMORY_EXTRACTION_SERVICE"],
                     "provider", id="service-longer-than-a-provider"),
        pytest.param({"MEMORY_EMBEDDER_SERVICE": "llm/openai"}, ["MEMORY_EMBEDDER_SERVICE"],
                     "letters, digits", id="service-with-a-slash"),
        pytest.param({"MEMORY_DATA_DIR": "d" * 300}, ["MEMORY_DATA_DIR"],
                     "cannot be used as a path", id="data-dir-name-too-long"),
        pytest.param({"MEMORY_KEY_PREFIX": "mw\x1b:"}, ["MEMORY_KEY_PREFIX"],
                     "control characters", id="prefix-with-escape"),
        pytest.param({"MEMORY_KEY_PREFIX": "mw\udcff:"}, ["MEMORY_KEY_PREFIX"],
                     "not UTF-8 text", id="prefix-undecodable"),
        pytest.param({"ADMIN_TELEGRAM_CHAT_IDS": str(10**30)}, ["ADMIN_TELEGRAM_CHAT_IDS"],
                     "less than or equal to 9223372036854775807", id="chat-id-past-64-bits"),
        pytest.param({"MEMORY_CARD_MAX_BYTES": "1"}, ["MEMORY_CARD_MAX_BYTES"],
                     "greater than or equal to 64", id="card-of-one-byte"),
        pytest.param({"MEMORY_EXTRACTION_MAX_OUTPUT_TOKENS": "1"},
                     ["MEMORY_EXTRACTION_MAX_OUTPUT_TOKENS"], "greater than or equal to 256",
                     id="answer-of-one-token"),
    ],
)  # fmt: skip
def test_settings_that_would_fail_at_run_time_are_refused(
    env: dict[str, str], names: list[str], says: str, clean_env: pytest.MonkeyPatch
) -> None:
    """What main accepted and then broke at run time: a worker that exits 70 on a 12 s farm
    call, a counter Redis cannot hold, every run refused, routes that fail at start, a bare
    OSError, keys Redis cannot be sent."""
    error = refused(clean_env, **env)
    line = str(error)
    for name in names:
        assert name in line, line
    assert says in line, line


def test_the_console_tokens_must_differ(clean_env: pytest.MonkeyPatch) -> None:
    same = canary_of("console_token")
    (line,) = refused(clean_env, MEMORY_CONSOLE_READ_TOKEN=same).problems
    assert "MEMORY_CONSOLE_TOKEN" in line
    assert "MEMORY_CONSOLE_READ_TOKEN" in line
    assert same not in line
    assert not [c for c in canaries() if c in line]


#: (lease, renewal, heartbeat set) -> (renewal, heartbeat) in force.
DERIVED = [
    pytest.param("30", None, None, 10.0, 5.0, id="defaults-unchanged"),
    pytest.param("6", None, None, 2.0, 1.0, id="lease-6-alone"),
    pytest.param("1", None, None, 1 / 3, 1 / 6, id="shortest-lease"),
    pytest.param("300", None, None, 10.0, 5.0, id="long-lease-keeps-todays-periods"),
    pytest.param("20", "12", None, 12.0, 2.0, id="heartbeat-follows-the-renewal"),
    pytest.param("6", None, "0.5", 2.0, 0.5, id="heartbeat-set"),
]


@pytest.mark.parametrize(("lease", "renewal", "heartbeat", "renews", "beats"), DERIVED)
def test_renewal_and_heartbeat_follow_the_lease_unless_set(
    lease: str,
    renewal: str | None,
    heartbeat: str | None,
    renews: float,
    beats: float,
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("MEMORY_LEASE_SECONDS", lease)
    for variable, value in (("MEMORY_LEASE_RENEW_SECONDS", renewal),
                            ("MEMORY_WORKER_HEARTBEAT_SECONDS", heartbeat)):  # fmt: skip
        if value is not None:
            clean_env.setenv(variable, value)
    settings = load_settings()
    assert settings.lease_renew_seconds == pytest.approx(renews)
    assert settings.worker_heartbeat_seconds == pytest.approx(beats)
    assert contradictions(settings.in_force(), env_name) == []


def test_a_derived_default_never_reports_a_variable_nobody_set(
    clean_env: pytest.MonkeyPatch,
) -> None:
    """A renewal that leaves the lease nothing is one contradiction naming the renewal, not
    a bound error on the heartbeat derived from it; a bad lease is its own error only."""
    error = refused(clean_env, MEMORY_LEASE_RENEW_SECONDS="30")
    assert all("MEMORY_LEASE_RENEW_SECONDS" in p for p in error.problems), error.problems
    clean_env.delenv("MEMORY_LEASE_RENEW_SECONDS")
    error = refused(clean_env, MEMORY_LEASE_SECONDS="abc", MEMORY_EMBEDDER_SERVICE="a b")
    assert sorted(p.split(":")[0] for p in error.problems) == [
        "MEMORY_EMBEDDER_SERVICE",
        "MEMORY_LEASE_SECONDS",
    ]


async def test_the_run_size_floor_is_the_smallest_valid_run(
    clean_env: pytest.MonkeyPatch, redis: Any, key_prefix: str
) -> None:
    """At its floor, MEMORY_MAX_RUN_BYTES still admits the smallest run the model accepts,
    and that run is stored; one byte less is refused."""
    smallest = parse_run_request(smallest_request())
    assert len(smallest.messages_json()) == SMALLEST_RUN_BYTES
    clean_env.setenv("MEMORY_MAX_RUN_BYTES", str(SMALLEST_RUN_BYTES))
    clean_env.setenv("MEMORY_KEY_PREFIX", key_prefix)
    clean_env.delenv("REDIS_URL")
    settings = load_settings()
    result = await RunStore(redis, settings).enqueue(smallest)
    assert result.run_id is not None
    line = str(refused(clean_env, MEMORY_MAX_RUN_BYTES=str(SMALLEST_RUN_BYTES - 1)))
    assert "MEMORY_MAX_RUN_BYTES" in line


# --- prompt versions ---------------------------------------------------------------------------


def test_every_known_prompt_version_has_its_file() -> None:
    assert known_prompt_versions() == sorted(EXTRACTION_PROMPTS)
    assert Settings.model_fields["prompt_version"].default in known_prompt_versions()


# --- relations: one test per pair --------------------------------------------------------------


def _violating(relation: Relation) -> dict[str, Any]:
    """Values (from the defaults) that break ``relation`` by moving its first left term up."""
    defaults = Settings().in_force()
    values = {name: defaults[name] for name in relation.fields}
    factor, name = relation.left[0]
    right = sum(f * float(values[n]) for f, n in relation.right)
    rest = sum(f * float(values[n]) for f, n in relation.left[1:])
    values[name] = (right - rest) / factor + (1 if relation.strict else 2)
    assert not relation.holds(values)
    return values


@pytest.mark.parametrize(
    "relation", RELATIONS, ids=["-vs-".join(dict.fromkeys(r.fields)) for r in RELATIONS]
)
def test_each_contradiction_is_refused_naming_both_settings(
    relation: Relation, clean_env: pytest.MonkeyPatch
) -> None:
    values = _violating(relation)
    error = refused(clean_env, **{env_name(n): str(v) for n, v in values.items()})
    (line,) = error.problems
    for name in relation.fields:
        assert env_name(name) in line, line
    assert relation.why in line
    # the edge itself is accepted (or, for "<", just below it)
    factor, name = relation.left[0]
    edge = dict(values)
    right = sum(f * float(edge[n]) for f, n in relation.right)
    rest = sum(f * float(edge[n]) for f, n in relation.left[1:])
    edge[name] = (right - rest) / factor - (0.001 if relation.strict else 0)
    assert relation.holds(edge)


def test_a_telegram_token_without_chats_is_a_contradiction(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.delenv("ADMIN_TELEGRAM_CHAT_IDS")
    (line,) = refused(clean_env).problems
    assert "ADMIN_TELEGRAM_BOT_TOKEN" in line
    assert "ADMIN_TELEGRAM_CHAT_IDS" in line
    assert not [c for c in canaries() if c in line]


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({}, id="defaults"),
        pytest.param(FAST, id="fleet-fast"),
        pytest.param(FAST_TIMING.overrides, id="demo-fast"),
        pytest.param(NORMAL_TIMING.overrides, id="demo"),
        pytest.param(
            chaos_overrides(lease=4.0, interval=1.0, page_cooldown=5.0, job_seconds=1.0),
            id="chaos-soak",
        ),
    ],
)
def test_shipped_settings_hold_every_relation(overrides: dict[str, Any]) -> None:
    """The settings the fleet, the demo and the soak start workers with: within every bound
    (validated, as a worker validates them) and every relation."""
    settings = Settings(**overrides)
    assert contradictions(settings.in_force(), env_name) == []


# --- secrets: masked by type -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:pw-secret@db:6379/0", "redis://:***@db:6379/0"),
        ("redis://user:pw-secret@db:6379/0?password=x&db=1", "redis://user:***@db:6379/0?password=***&db=***"),
        ("redis+sentinel://:pw-secret@s1:26379,s2:26379/main/0", "redis+sentinel://:***@s1:26379,s2:26379/main/0"),
        ("redis://db:6379/0", "redis://db:6379/0"),
        ("unix:///run/redis.sock", "unix:///run/redis.sock"),
    ],
)  # fmt: skip
def test_a_secret_url_prints_without_its_password(url: str, shown: str) -> None:
    secret = SecretUrl(url)
    assert str(secret) == mask_url(url) == shown
    assert "pw-secret" not in repr(secret)
    assert f"{secret}" == shown
    assert secret.get_secret_value() == url


#: What a password may hold unencoded in a URL's user part (RFC 3986 sub-delims, unreserved).
PASSWORD_CHARS = st.characters(
    codec="ascii", categories=["L", "N"], include_characters="-._~!$&'()*+,;=%"
)


@given(password=st.text(PASSWORD_CHARS, min_size=1), user=st.sampled_from(["", "bot"]))
def test_mask_url_shows_everything_but_the_password(password: str, user: str) -> None:
    url = f"redis://{user}:{password}@db.internal:6380/2"
    assert mask_url(url) == f"redis://{user}:***@db.internal:6380/2"
    assert str(SecretUrl(url)) == mask_url(url)
    # in a query, a value is everything up to the next "&" (an unencoded "&" starts a new one)
    value = password.replace("&", "").replace("=", "") or "x"
    assert mask_url(f"{url}?password={value}&db=2") == mask_url(url) + "?password=***&db=***"


def test_settings_repr_copies_and_dumps_hold_no_secret(clean_env: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    copy = settings.model_copy(update={"cards_url": "redis://:CANARY-7e3f-copied-x9@h:1/0"})
    assert isinstance(copy.cards_url, SecretUrl)  # a plain string given to a copy stays masked
    assert reveal(copy.cards_url) == "redis://:CANARY-7e3f-copied-x9@h:1/0"
    for text in (repr(settings), str(settings), repr(copy), str(settings.model_dump()),
                 settings.model_dump_json(), repr(dict(copy))):  # fmt: skip
        assert "CANARY" not in text, text
    assert "redis://redis-url:***@127.0.0.1:1/0" in repr(settings)  # the host is still shown


def test_secret_fields_are_found_by_type() -> None:
    assert set(secret_fields()) == {
        "redis_url",
        "cards_url",
        "admin_telegram_bot_token",
        "admin_webhook_url",
        "sentry_dsn",
        "console_token",
        "console_read_token",
    }
    assert not [n for n, i in Settings.model_fields.items()
                if n not in secret_fields() and re.search("(^|_)token$|dsn|password|secret", n)
                and not n.endswith("_per_token")]  # fmt: skip


def test_a_printed_url_may_not_carry_credentials(clean_env: pytest.MonkeyPatch) -> None:
    """The URL settings that are not secret (so printed) refuse credentials, unquoted."""
    for variable in ("DISCOVERY_BASE_URL", "TELEGRAM_API_BASE"):
        line = str(refused(clean_env, **{variable: "http://u:CANARY-7e3f-in-url-x9@farm:1/"}))
        assert "credentials" in line
        assert "CANARY" not in line


def test_a_raw_validation_error_quotes_no_input(clean_env: pytest.MonkeyPatch) -> None:
    """Whoever prints pydantic's own error (a library user) gets no value either."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as raised:
        Settings(
            redis_url="http://:CANARY-7e3f-raw-x9@h/0",
            console_token=SecretStr("CANARY-7e3f-raw-x9 x"),
        )
    assert "CANARY" not in str(raised.value)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        pytest.param("MEMORY_LEASE_SECONDS", "-1", id="bound"),
        pytest.param("REDIS_URL", "http://u:CANARY-7e3f-lib-x9@127.0.0.1:1/0", id="secret"),
    ],
)
async def test_the_library_raises_a_typed_error_naming_the_variable(
    variable: str, value: str, clean_env: pytest.MonkeyPatch
) -> None:
    """``MemoryQueue.connect()`` builds its settings the same way: a bot gets SettingsError."""
    clean_env.setenv(variable, value)
    get_settings.cache_clear()
    try:
        with pytest.raises(SettingsError) as raised:
            await MemoryQueue.connect()
    finally:
        get_settings.cache_clear()
    assert str(raised.value).startswith(f"invalid settings: {variable}: ")
    assert "CANARY" not in str(raised.value)
