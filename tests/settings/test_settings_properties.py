"""Settings are a trust boundary (§11): whatever the environment holds, either a Settings
whose every relation holds, or the one typed error naming the variable — never another
exception, and never a secret's value in the error.

Two properties, each over the real path (``os.environ`` read by pydantic-settings, then
:func:`~memory_worker.settings.load_settings`):

- **anything** (:data:`ANYTHING_EXAMPLES` examples): a few settings at a time, each set to
  arbitrary text (any Unicode an environment can hold, undecodable bytes included), huge
  or odd numbers, unicode digits, or an empty value;
- **numbers in their own bounds** (:data:`IN_BOUNDS_EXAMPLES` examples): every number a
  setting accepts alone, several at once, so what is left to refuse is a contradiction
  between them — the relations, the derived defaults of the lease renewal and heartbeat,
  the watchdog window.

A valid Settings is then checked against what the system needs at run time, written out
here independently of ``checks.RELATIONS`` (so emptying that table fails this test): the
lease outlives its renewal and three heartbeats, the watchdog outlasts the tick budget and
a routed farm call, the console tokens differ, the smallest valid run fits
``MEMORY_MAX_RUN_BYTES``, every number is finite and bounded, every text can be encoded, and
the configs handed to the farm client, the breakers, the gateway, the default routes and
arq all build.

Every secret setting's value carries a canary; no error may contain it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import annotated_types
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from llm_client import default_routes
from memory_worker.errors import SettingsError
from memory_worker.keys import Keys
from memory_worker.models import RunRequest
from memory_worker.settings import Settings, env_name, load_settings
from memory_worker.settings.types import reveal
from memory_worker.worker.main import worker_kwargs
from tests.support.factories import smallest_request
from tests.support.settings_cases import CANARY, canary_of, canary_value, secret_fields, unwrap

ANYTHING_EXAMPLES = 300
IN_BOUNDS_EXAMPLES = 300

FIELDS = sorted(Settings.model_fields)
SECRETS = secret_fields()
#: Values no number field should ever accept, and a few it should.
ODD_NUMBERS = ["1e309", "-1e309", "inf", "nan", "-0", "0x10", "1_000", "１２", "٣", " 5 ",
               "5.", ".5", "1e-320", "+3", "1e21", "10^21", "9" * 400, "0.0000001", "1e15"]  # fmt: skip

#: What an environment variable can hold: any character but NUL; undecodable bytes arrive
#: as lone surrogates U+DC80-U+DCFF (Python's surrogateescape), no other surrogate can.
ENV_CHARS = st.one_of(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF),
)
ENV_TEXT = st.one_of(
    st.text(ENV_CHARS, max_size=30), st.text(ENV_CHARS, min_size=200, max_size=400)
)
NUMBER_TEXT = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.floats().map(repr),
    st.sampled_from(ODD_NUMBERS),
)


def bounds(name: str) -> tuple[float | None, float | None, bool, bool]:
    """(lower, upper, lower exclusive, upper exclusive) of a number setting."""
    low = high = None
    low_open = high_open = False
    for m in unwrap(Settings.model_fields[name])[1]:
        if isinstance(m, annotated_types.Ge):
            low = float(m.ge)  # type: ignore[arg-type]
        elif isinstance(m, annotated_types.Gt):
            low, low_open = float(m.gt), True  # type: ignore[arg-type]
        elif isinstance(m, annotated_types.Le):
            high = float(m.le)  # type: ignore[arg-type]
        elif isinstance(m, annotated_types.Lt):
            high, high_open = float(m.lt), True  # type: ignore[arg-type]
    return low, high, low_open, high_open


def in_bounds(name: str) -> st.SearchStrategy[str]:
    """A value the setting accepts on its own (numbers inside their bounds, flags, choices)."""
    info = Settings.model_fields[name]
    base = unwrap(info)[0]
    if name in SECRETS:
        return st.just(canary_value(name, info))
    if base is bool:
        return st.sampled_from(["true", "false", "1", "0", "yes", "off"])
    if get_origin(base) is Literal:
        return st.sampled_from([str(choice) for choice in get_args(base)])
    if base not in (int, float):
        return st.nothing()
    low, high, low_open, high_open = bounds(name)
    low = -1e6 if low is None else low
    high = 1e6 if high is None else high
    if base is int:
        return st.integers(math.ceil(low), math.floor(min(high, 10**7))).map(str)
    floats = st.floats(
        low, min(high, 1e7), exclude_min=low_open, exclude_max=high_open, allow_nan=False
    )
    # spread over the range and near its small end, where most relations bite
    near = st.floats(low, min(high, low + 100), exclude_min=low_open, exclude_max=high_open)
    return st.one_of(floats, near).map(repr)


def anything(name: str) -> st.SearchStrategy[str]:
    """Any value an environment may hold for the setting; a secret one carries its canary."""
    if name in SECRETS:
        return st.one_of(
            st.builds(lambda a, b: f"{a}{canary_of(name)}{b}", ENV_TEXT, ENV_TEXT),
            st.builds(lambda a: f"redis://u:{canary_of(name)}{a}@h:1/0", ENV_TEXT),
            st.just(canary_value(name, Settings.model_fields[name])),
        )
    return st.one_of(ENV_TEXT, NUMBER_TEXT, st.just(""), in_bounds(name))


def environments(value: Any, max_size: int) -> st.SearchStrategy[dict[str, str]]:
    fields = [n for n in FIELDS if not value(n).is_empty]
    names = st.lists(st.sampled_from(fields), unique=True, max_size=max_size)
    return names.flatmap(lambda ns: st.fixed_dictionaries({n: value(n) for n in ns}))


@contextmanager
def environment(values: Mapping[str, str], data_dir: Path) -> Iterator[None]:
    """Exactly ``values`` as the settings' environment (by field), the rest restored after."""
    variables = {env_name(n) for n in FIELDS}
    saved = {k: os.environ[k] for k in variables if k in os.environ}
    for variable in variables:
        os.environ.pop(variable, None)
    os.environ["MEMORY_DATA_DIR"] = str(data_dir)
    try:
        for name, value in values.items():
            os.environ[env_name(name)] = value
        yield
    finally:
        for variable in variables:
            os.environ.pop(variable, None)
        os.environ.update(saved)


#: The smallest run request the model accepts (its encoded messages are the size floor).
SMALLEST_RUN = RunRequest.model_validate(smallest_request())


def assert_the_system_can_run(s: Settings) -> None:
    """What the worker, the store and the clients need of a valid Settings (see module doc)."""
    assert s.lease_renew_seconds < s.lease_seconds
    assert 3 * s.worker_heartbeat_seconds <= s.lease_seconds - s.lease_renew_seconds + 1e-9
    window = s.watchdog_window
    assert window > s.tick_timeout_seconds + s.shutdown_grace_seconds
    assert window > s.route_wall_seconds
    assert s.route_wall_seconds < s.tick_timeout_seconds
    assert s.task_timeout_seconds <= s.route_wall_seconds
    assert s.capacity_wait_seconds <= s.task_timeout_seconds
    assert s.poll_delay_seconds < s.readiness_stall_seconds
    if s.console_token is not None and s.console_read_token is not None:
        assert reveal(s.console_token) != reveal(s.console_read_token)
    assert len(SMALLEST_RUN.messages_json()) <= s.max_run_bytes
    for name in FIELDS:
        value = getattr(s, name)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            low, high, _, _ = bounds(name)
            assert math.isfinite(value), name
            assert high is not None, f"{env_name(name)} has no upper bound"
            assert low is not None, f"{env_name(name)} has no lower bound"
            assert low <= value <= high, name
        text = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
        text.encode("utf-8")  # Redis keys, HTTP, logs: every text must be encodable
    Keys(s.key_prefix).run("r1").encode("utf-8")
    for workflow in (None, "embedding"):
        s.client_config(workflow=workflow)
    s.breaker_config()
    s.gateway_config()
    if s.routes_file is None:
        default_routes(s.route_defaults())
    worker_kwargs(s)


def load(values: Mapping[str, str], data_dir: Path) -> Settings | SettingsError:
    """The settings ``values`` make, or the SettingsError they raise (anything else raises)."""
    with environment(values, data_dir):
        try:
            return load_settings()
        except SettingsError as exc:
            return exc


def judged(values: Mapping[str, str], data_dir: Path) -> None:
    """Load the settings from ``values``; a refusal must be the one typed, safe error."""
    loaded = load(values, data_dir)
    if isinstance(loaded, Settings):
        assert_the_system_can_run(loaded)
        event("valid")
        return
    text = str(loaded)
    assert loaded.__cause__ is None  # the pydantic error (it holds every input) stays behind
    assert loaded.__context__ is None
    assert "\n" not in text, text
    assert CANARY not in text, text
    assert loaded.problems, text
    named = {env_name(n) for n in values}
    for problem in loaded.problems:  # each names a variable that was set
        assert any(variable in problem for variable in named), (problem, values)
    event("refused")


@settings(
    max_examples=ANYTHING_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(values=environments(anything, max_size=4))
def test_any_environment_is_valid_settings_or_one_typed_error(
    values: dict[str, str], tmp_path: Path
) -> None:
    judged(values, tmp_path / "var")


@settings(
    max_examples=IN_BOUNDS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(values=environments(in_bounds, max_size=12))
def test_numbers_in_their_own_bounds_are_valid_together_or_a_contradiction(
    values: dict[str, str], tmp_path: Path
) -> None:
    judged(values, tmp_path / "var")
