"""Routes files for tests and benches: the TOML a worker reads, from a few target builders.

One spelling of a target (a farm service, the local embedder) instead of a TOML
block per suite; :func:`routes_toml` writes the ``[routes.<workflow>]`` tables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

Target = Mapping[str, object]


def farm_target(service: str, model: str | None = None, *, endpoint: str | None = None) -> Target:
    """A Discovery-farm target; what is left out takes the workflow's default."""
    target: dict[str, object] = {"transport": "discovery", "service": service}
    if endpoint is not None:
        target["endpoint"] = endpoint
    if model is not None:
        target["model"] = model
    return target


def local_target(model: str = "multilingual-e5-small") -> Target:
    """The in-process embedder."""
    return {"transport": "local", "model": model}


#: The farm simulator's embedder, as the farm suites route it.
FARM_EMBEDDER = farm_target("embedder", "embedder", endpoint="encode")


@dataclass(frozen=True)
class Route:
    targets: tuple[Target, ...]
    options: Mapping[str, float] = field(default_factory=dict)


def route(*targets: Target, **options: float) -> Route:
    """One workflow's route: its targets in order, and budgets such as ``max_hops``."""
    return Route(targets, options)


def routes_toml(**workflows: Route) -> str:
    """The routes file text for ``workflows`` (workflow name → route)."""
    lines: list[str] = []
    for workflow, spec in workflows.items():
        lines.append(f"[routes.{workflow}]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in spec.options.items()]
        for target in spec.targets:
            lines.append(f"[[routes.{workflow}.targets]]")
            lines += [f"{key} = {json.dumps(value)}" for key, value in target.items()]
    return "\n".join(lines) + "\n"


def write_routes(directory: Path, **workflows: Route) -> Path:
    """``directory/routes.toml`` holding :func:`routes_toml` of ``workflows``."""
    path = directory / "routes.toml"
    path.write_text(routes_toml(**workflows))
    return path
