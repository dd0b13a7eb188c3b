"""Bad values and canary secrets for every setting, derived from the settings model.

The lists come from :class:`~memory_worker.settings.Settings` itself, so a new
setting is covered the day it is added: a number gets "not a number" and a value
past each bound, a flag "maybe", a choice an unknown choice, and a checked type
(a URL, a name, a token…) the bad value of its type (:data:`BAD_BY_CHECK`). A
setting none of these covers fails :func:`bad_values` until it gets a row in
:data:`BAD_BY_FIELD`.

Every secret setting (typed ``SecretStr`` or ``SecretUrl``) gets a canary that is a
valid value of its type (:func:`canary_env`); the bad value of a secret setting
carries its canary too, so a test also proves the bad value is never quoted.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

import annotated_types
from pydantic import AfterValidator, TypeAdapter
from pydantic.fields import FieldInfo

from memory_worker.settings import Settings, env_name
from memory_worker.settings import checks as settings_checks
from memory_worker.settings import types as settings_types
from memory_worker.settings.types import SecretUrl, is_secret_field, secret_type
from memory_worker.storage.embedded import EmbeddedValkey

CANARY = "CANARY-7e3f"


def canary_of(name: str) -> str:
    """The canary string of one secret setting (each setting its own)."""
    return f"{CANARY}-{name.replace('_', '-')}-x9"


def acl_user(name: str) -> str:
    """The Redis user name of a secret URL setting's canary URL (its password is the canary)."""
    return name.replace("_", "-")


def unwrap(info: FieldInfo) -> tuple[Any, list[Any]]:
    """(the field's base type, its metadata): ``X | None`` and ``Annotated`` peeled off."""
    annotation, metadata = info.annotation, list(info.metadata)
    while True:
        origin = get_origin(annotation)
        if origin in (Union, types.UnionType):
            args = [a for a in get_args(annotation) if a is not type(None)]
            annotation = args[0]
        elif origin is Annotated:
            base, *extra = get_args(annotation)
            annotation, metadata = base, metadata + list(extra)
        else:
            return annotation, metadata


def checks(info: FieldInfo) -> list[Callable[..., Any]]:
    """The after-validator functions of the field's checked type."""
    return [m.func for m in unwrap(info)[1] if isinstance(m, AfterValidator)]


#: A bad value per checked type (keyed by its validator); ``{canary}`` is the field's canary.
BAD_BY_CHECK: dict[Callable[..., Any], str] = {
    settings_types._redis: "http://user:{canary}@127.0.0.1:6379/0",
    settings_types._cards: "https://user:{canary}@127.0.0.1:6379/0",
    settings_types._http: "ftp://farm.example/",
    settings_types._secret_http: "{canary}-is-no-url",
    settings_types._token: "{canary} with a space",
    settings_types._name: "two words",
    settings_types._service: "llm/openai",
    settings_types._level: "LOUD",
    settings_types._file: "/nonexistent/routes.toml",
    settings_checks._prompt_version: "memory_v2",
}
#: Settings of a plain type with a validator of their own.
BAD_BY_FIELD: dict[str, str] = {"key_prefix": "mw {x}"}


def bad_values(name: str, info: FieldInfo, tmp: Path) -> list[str]:
    """Every bad value of one setting (at least one; see the module doc)."""
    base, metadata = unwrap(info)
    found = [BAD_BY_CHECK[f].format(canary=canary_of(name)) for f in checks(info)
             if f in BAD_BY_CHECK]  # fmt: skip
    if settings_types._directory in checks(info):
        a_file = tmp / "not-a-directory"
        a_file.write_text("x")
        found.append(str(a_file))
    if name in BAD_BY_FIELD:
        found.append(BAD_BY_FIELD[name])
    if base is bool:
        found.append("maybe")
    elif base in (int, float):
        found += ["abc", *_past_bounds(base, metadata)]
    elif get_origin(base) is Literal:
        found.append("no-such-choice")
    elif get_origin(base) is list:
        found.append("a,b")
    assert found, (
        f"{env_name(name)}: no bad value known; add one to tests/support/settings_cases.py"
    )
    return found


def _past_bounds(base: type, metadata: list[Any]) -> list[str]:
    step = 1 if base is int else 0.5
    values: list[str] = []
    for m in metadata:
        if isinstance(m, annotated_types.Ge):
            values.append(str(float(cast(float, m.ge)) - step).removesuffix(".0"))
        elif isinstance(m, annotated_types.Gt):
            values.append(str(m.gt))
        elif isinstance(m, annotated_types.Le):
            values.append(str(float(cast(float, m.le)) + step).removesuffix(".0"))
        elif isinstance(m, annotated_types.Lt):
            values.append(str(m.lt))
    return values


def has_lower_bound(info: FieldInfo) -> bool:
    return any(isinstance(m, annotated_types.Ge | annotated_types.Gt) for m in unwrap(info)[1])


def has_upper_bound(info: FieldInfo) -> bool:
    return any(isinstance(m, annotated_types.Le | annotated_types.Lt) for m in unwrap(info)[1])


def is_number(info: FieldInfo) -> bool:
    return unwrap(info)[0] in (int, float)


def secret_fields() -> dict[str, FieldInfo]:
    return {n: i for n, i in Settings.model_fields.items() if is_secret_field(i)}


def canary_value(name: str, info: FieldInfo, server: EmbeddedValkey | None = None) -> str:
    """A valid value of a secret setting that carries its canary (a Redis URL logs in to
    ``server`` as an ACL user named for the setting; without a server it reaches nothing)."""
    canary = canary_of(name)
    if secret_type(info.annotation) is SecretUrl:
        if server is not None:
            return server.url_as(acl_user(name), canary)
        return f"redis://{acl_user(name)}:{canary}@127.0.0.1:1/0"
    assert info.annotation is not None
    adapter: TypeAdapter[Any] = TypeAdapter(info.annotation)
    for candidate in (canary, f"http://{canary}@127.0.0.1:9/1", f"http://127.0.0.1:9/{canary}"):
        try:
            adapter.validate_python(candidate)
        except ValueError:
            continue
        return candidate
    raise AssertionError(f"{env_name(name)}: no canary value fits its type")


def canary_env(server: EmbeddedValkey | None = None) -> dict[str, str]:
    """Every secret setting set to its canary (plus what the canaries need to be coherent)."""
    env = {env_name(n): canary_value(n, i, server) for n, i in secret_fields().items()}
    env[env_name("admin_telegram_chat_ids")] = "1"  # a bot token needs someone to page
    return env


def canaries() -> list[str]:
    return [canary_of(name) for name in secret_fields()]
