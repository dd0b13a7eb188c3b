"""What makes a set of settings unable to work, said in one line per problem (§11).

Three kinds of problem, all found before anything else runs:

- **a bad value** (not a number, out of bounds, an unknown prompt version, a URL
  that is no URL): pydantic finds it; :func:`describe_errors` turns each of its
  errors into ``VARIABLE: what is wrong (got 'value')`` — the value quoted only
  when the setting is not a secret (:func:`~memory_worker.settings.types.is_secret_field`,
  decided by the field's type), and a URL quoted with its password masked;
- **a contradiction** between settings (a lease renewed less often than it
  lapses, a capacity wait longer than the job's budget, …): :data:`RELATIONS`,
  one row per pair, checked by :func:`contradictions` on plain values; each
  line names every variable involved;
- **an unknown prompt version**: :data:`EXTRACTION_PROMPTS` is the table of
  versions and their prompt files (a new version adds a row and a file).

Pure functions on plain data; ``memory_worker.settings`` calls them from its
validators and turns the result into one :class:`~memory_worker.errors.SettingsError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails
from pydantic_settings import SettingsError as SourceError

from memory_worker.errors import SettingsError
from memory_worker.settings.types import is_secret_field, mask_url

#: Prompt text per prompt version (a new version adds a row and a file in ``prompts/``).
EXTRACTION_PROMPTS: Mapping[str, str] = {"memory_v1": "extraction_v1.txt"}
#: The package and folder the prompt files ship in (the one place that says where).
PROMPTS_PACKAGE, PROMPTS_FOLDER = "memory_worker.consolidation", "prompts"
#: Longest slice of a bad (non-secret) value quoted back in an error.
QUOTE_CHARS = 60

#: pydantic's error for a default derived from other settings when one of them is bad.
NOT_DERIVED = "default_factory_not_called"

#: Returns the environment variable of a settings field.
EnvName = Callable[[str], str]
M = TypeVar("M", bound=BaseModel)


def load_checked(model: type[M], env: EnvName, **overrides: Any) -> M:
    """``model`` built from the environment (and ``overrides``), or one :class:`SettingsError`.

    The error lists every problem, one line each, naming its variable; a secret
    setting's value is never quoted, and the pydantic error (which holds every
    input, secrets included) is neither chained to it nor kept in its context.
    """
    problems: list[str]
    try:
        return model(**overrides)
    except ValidationError as exc:
        problems = describe_errors(exc.errors(), model.model_fields, env)
    except SourceError as exc:  # a variable pydantic-settings could not even decode
        problems = [str(exc).split(";")[0]]
    raise SettingsError(problems)


def prompt_file(name: str) -> Traversable:
    """A prompt file shipped with the package (read by ``prompt.load_prompt``)."""
    return resources.files(PROMPTS_PACKAGE).joinpath(PROMPTS_FOLDER, name)


def known_prompt_versions() -> list[str]:
    """Prompt versions whose prompt file ships with the package."""
    return sorted(v for v, name in EXTRACTION_PROMPTS.items() if prompt_file(name).is_file())


def check_prompt_version(version: str) -> None:
    """Raise ``ValueError`` unless ``version`` has its prompt file."""
    known = known_prompt_versions()
    if version not in known:
        raise ValueError(f"no prompt for version {version!r}; known versions: {', '.join(known)}")


@dataclass(frozen=True, slots=True)
class Relation:
    """``left`` must be at most (``strict``: below) ``right``; ``why`` says what breaks if not.

    ``left`` and ``right`` are sums of ``(factor, field)`` terms, so one row also says
    "3 x heartbeat <= lease - renewal".
    """

    left: tuple[tuple[float, str], ...]
    right: tuple[tuple[float, str], ...]
    strict: bool
    why: str

    @property
    def fields(self) -> list[str]:
        return [name for _, name in (*self.left, *self.right)]

    def holds(self, values: Mapping[str, Any]) -> bool:
        left, right = _sum(self.left, values), _sum(self.right, values)
        return left < right if self.strict else left <= right

    def problem(self, values: Mapping[str, Any], env: EnvName) -> str:
        op = "<" if self.strict else "<="
        return (
            f"{_side(self.left, values, env)} must be {op} {_side(self.right, values, env)}: "
            f"{self.why}"
        )


def _sum(terms: Iterable[tuple[float, str]], values: Mapping[str, Any]) -> float:
    return sum(factor * float(values[name]) for factor, name in terms)


def _side(terms: tuple[tuple[float, str], ...], values: Mapping[str, Any], env: EnvName) -> str:
    parts = []
    for i, (factor, name) in enumerate(terms):
        sign = "" if i == 0 and factor > 0 else (" - " if factor < 0 else " + ")
        scale = "" if abs(factor) == 1 else f"{abs(factor):g} x "
        parts.append(f"{sign}{scale}{env(name)} ({float(values[name]):g})")
    return "".join(parts)


def _le(left: str, right: str, why: str, *, strict: bool = False) -> Relation:
    return Relation(((1.0, left),), ((1.0, right),), strict, why)


#: Every pair of settings that must agree. A new row is one line.
RELATIONS: tuple[Relation, ...] = (
    _le(
        "lease_renew_seconds",
        "lease_seconds",
        "a run's lease would lapse between two renewals and another worker would take it",
        strict=True,
    ),
    Relation(
        ((3.0, "worker_heartbeat_seconds"),),
        ((1.0, "lease_seconds"), (-1.0, "lease_renew_seconds")),
        False,
        "a Redis pause shorter than a worker's heartbeat lifetime (3 heartbeats) could "
        "outlast a lease renewed on time, and a live worker would lose its run",
    ),
    _le(
        "capacity_wait_seconds",
        "task_timeout_seconds",
        "a job would wait for a farm slot longer than it may run",
    ),
    _le(
        "embedding_capacity_wait_seconds",
        "embedding_task_timeout_seconds",
        "an embedding would wait for a slot longer than it may run",
    ),
    _le(
        "task_timeout_seconds",
        "route_wall_seconds",
        "a routed call's wall budget would end before one job's budget",
    ),
    _le(
        "route_wall_seconds",
        "tick_timeout_seconds",
        "a tick would be stopped before one routed call's budget ends",
        strict=True,
    ),
    _le(
        "breaker_cooldown_seconds",
        "breaker_cooldown_max_seconds",
        "the cap of the open period would be below its first period",
    ),
    _le(
        "poll_delay_seconds",
        "readiness_stall_seconds",
        "the worker loop would read as stalled between two polls (/readyz 503)",
        strict=True,
    ),
    _le(
        "ephemeral_ttl_days",
        "short_ttl_days",
        "ephemeral cards would outlive short-lived ones",
    ),
    _le(
        "related_cards",
        "existing_cards_max",
        "the prompt would cut the related cards it was asked to show",
    ),
    _le(
        "embedding_task_timeout_seconds",
        "route_wall_seconds",
        "a routed call's wall budget would end before one embedding job's budget",
    ),
    Relation(
        ((1.0, "tick_timeout_seconds"), (1.0, "shutdown_grace_seconds")),
        ((1.0, "watchdog_seconds"),),
        True,
        "a tick still inside its budget (its farm calls are inside it: each job's budget "
        "within the routed call's wall, the wall within the tick's) would read as wedged, "
        "and the worker would exit 70 and wedge again on the same run after each restart",
    ),
    _le(
        "worker_heartbeat_seconds",
        "pinned_window_seconds",
        "a pinned worker would be judged on fewer than two looks at the counts (one a "
        "heartbeat period)",
        strict=True,
    ),
    Relation(
        ((4.0, "breaker_success_hold_seconds"),),
        ((1.0, "routing_latency_window_seconds"),),
        False,
        "held successes would reach the latency windows too late for slow-node detection",
    ),
)


def contradictions(values: Mapping[str, Any], env: EnvName) -> list[str]:
    """One line per relation that does not hold, naming every variable involved (never a
    secret's value). ``values`` holds the settings in force: a derived one (the watchdog
    window) by its value, not None."""
    problems = [r.problem(values, env) for r in RELATIONS if not r.holds(values)]
    admin, read = values.get("console_token"), values.get("console_read_token")
    if (
        admin is not None
        and read is not None
        and admin.get_secret_value() == read.get_secret_value()
    ):
        problems.append(
            f"{env('console_token')} and {env('console_read_token')} are the same token: "
            "whoever may only read the console could also act on it"
        )
    token = values.get("admin_telegram_bot_token")
    if token is not None and token.get_secret_value() and not values.get("admin_telegram_chat_ids"):
        problems.append(
            f"{env('admin_telegram_bot_token')} is set but {env('admin_telegram_chat_ids')} "
            "is empty: no page would ever be sent to Telegram"
        )
    return problems


def describe_errors(
    errors: Iterable[ErrorDetails], fields: Mapping[str, FieldInfo], env: EnvName
) -> list[str]:
    """One line per pydantic error: the variable, what is wrong, the value unless secret."""
    by_env = {env(name): name for name in fields}
    lines: list[str] = []
    for error in errors:
        if error.get("type") == NOT_DERIVED:  # follows from another error, reported itself
            continue
        loc = error.get("loc") or ()
        message = _message(error)
        if not loc:  # a model validator: the message names its variables itself
            lines.append(message)
            continue
        head = str(loc[0])
        name = head if head in fields else by_env.get(head, head)
        variable = env(name) if name in fields else head
        secret = name not in fields or is_secret_field(fields[name])
        quoted = "" if secret else _quote(error.get("input"))
        lines.append(f"{variable}: {message}{quoted}")
    return lines


def _message(error: ErrorDetails) -> str:
    text = str(error.get("msg") or "invalid")
    for prefix in ("Value error, ", "Assertion failed, "):
        text = text.removeprefix(prefix)
    if text[:1].isupper() and text[1:2].islower():  # "Input should…", not "MEMORY_…"
        text = text[:1].lower() + text[1:]
    return text


def _quote(value: Any) -> str:
    if value is None or isinstance(value, Mapping):
        return ""
    text = value if isinstance(value, str) else str(value)
    shown = repr(mask_url(text) if "://" in text else text)  # a URL may carry a password
    if len(shown) > QUOTE_CHARS:
        shown = shown[: QUOTE_CHARS - 1] + "…"
    return f" (got {shown})"


def _prompt_version(value: str) -> str:
    check_prompt_version(value)
    return value


#: A prompt version whose prompt file ships with this release.
PromptVersion = Annotated[str, AfterValidator(_prompt_version)]
