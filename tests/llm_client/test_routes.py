"""§6 route configuration: defaults, the example file, and every validation rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llm_client import RouteDefaults, RoutesError, default_routes, load_routes
from llm_client._routing.routes import WORKFLOWS, parse_routes

ROOT = Path(__file__).resolve().parents[2]
DEFAULTS = RouteDefaults(discovery_base_url="http://farm.test:50051", max_hops=4, wall_seconds=900)


def test_default_routes_send_every_workflow_to_the_default_farm() -> None:
    routes = default_routes(DEFAULTS)
    assert set(routes.routes) == set(WORKFLOWS)
    extraction = routes.get("memory_extraction")
    assert extraction is not None
    (target,) = extraction.targets
    assert (target.transport, target.base_url) == ("discovery", "http://farm.test:50051")
    assert (target.service, target.endpoint, target.model) == (
        "llm-openai",
        "chat_completions",
        "memory-extractor",
    )
    assert target.id == "llm-openai/memory-extractor"
    embedding = routes.get("embedding")
    assert embedding is not None
    assert (embedding.targets[0].service, embedding.targets[0].endpoint) == ("embedder", "encode")
    merge = routes.get("memory_merge")
    assert merge is not None
    assert merge.targets[0].id == target.id  # same target: one shared breaker
    assert (extraction.max_hops, extraction.wall_seconds) == (4, 900)


def test_no_file_means_defaults() -> None:
    assert load_routes(None, DEFAULTS).source == "defaults"


def test_the_example_file_loads_and_matches_the_defaults() -> None:
    routes = load_routes(ROOT / "config" / "routes.toml", DEFAULTS)
    defaults = default_routes(DEFAULTS)
    for workflow in WORKFLOWS:
        route = routes.get(workflow)
        assert route is not None
        assert [t.id for t in route.targets] == [t.id for t in defaults.routes[workflow].targets]
        assert route.targets[0].base_url == "http://farm.test:50051"


def test_primary_and_fallbacks_in_order_with_budget() -> None:
    raw: dict[str, Any] = {
        "routes": {
            "memory_extraction": {
                "max_hops": 3,
                "wall_seconds": 120,
                "targets": [
                    {"provider": "farm", "model": "big"},
                    {
                        "transport": "openai",
                        "provider": "openrouter",
                        "url": "https://openrouter.ai/api/v1",
                        "model": "meta-llama/llama-3.1-70b",
                        "auth_env": "OPENROUTER_API_KEY",
                    },
                    {"transport": "openai", "url": "http://127.0.0.1:11434/v1", "model": "q:14b"},
                ],
            }
        }
    }
    routes = parse_routes(raw, DEFAULTS, env={"OPENROUTER_API_KEY": "sk-test"})
    route = routes.get("memory_extraction")
    assert route is not None
    assert [t.id for t in route.targets] == [
        "farm/big",
        "openrouter/meta-llama/llama-3.1-70b",
        "127.0.0.1/q:14b",
    ]
    assert (route.max_hops, route.wall_seconds) == (3, 120)
    assert route.targets[1].api_key({"OPENROUTER_API_KEY": "sk-test"}) == "sk-test"
    assert route.targets[0].api_key({}) is None
    assert routes.get("embedding") is None  # a file is authoritative
    assert routes.target_ids() == [t.id for t in route.targets]


def bad(raw: dict[str, Any], **kwargs: Any) -> list[str]:
    with pytest.raises(RoutesError) as info:
        parse_routes(raw, DEFAULTS, **kwargs)
    return info.value.problems


def extraction(*targets: dict[str, Any], **budget: Any) -> dict[str, Any]:
    return {"routes": {"memory_extraction": {"targets": list(targets), **budget}}}


INLINE_SECRET_ROWS = [
    pytest.param({"api_key": "sk-live-123"}, id="api_key"),
    pytest.param({"token": "abc"}, id="token"),
    pytest.param({"Password": "hunter2"}, id="password-any-case"),
    pytest.param({"authorization": "Bearer x"}, id="authorization"),
]


@pytest.mark.parametrize("secret", INLINE_SECRET_ROWS)
def test_inline_secrets_are_rejected_without_echoing_them(secret: dict[str, str]) -> None:
    problems = bad(extraction({"model": "m", **secret}))
    assert len(problems) == 1
    assert "inline secrets are not allowed" in problems[0]
    assert "auth_env" in problems[0]
    assert "routes.memory_extraction.targets[0]." in problems[0]
    assert next(iter(secret.values())) not in problems[0]


URL_ROWS = [
    pytest.param("https://user:pw@host/v1", "credentials in URLs", id="userinfo"),
    pytest.param("https://host/v1?api_key=sk-1", "query parameters", id="key-query"),
    pytest.param("ftp://host/v1", "http(s) URL", id="scheme"),
]


@pytest.mark.parametrize(("url", "message"), URL_ROWS)
def test_bad_urls(url: str, message: str) -> None:
    problems = bad(extraction({"transport": "openai", "url": url, "model": "m"}))
    assert any(message in p and ".url" in p for p in problems), problems
    assert all("sk-1" not in p and "pw@" not in p for p in problems)


VALIDATION_ROWS = [
    pytest.param(extraction(), "targets", id="empty-targets"),
    pytest.param(extraction({"transport": "grpc", "model": "m"}), "transport", id="transport"),
    pytest.param(extraction({"transport": "openai", "model": "m"}), "need url", id="openai-url"),
    pytest.param(
        extraction({"transport": "openai", "url": "http://h/v1", "service": "s", "model": "m"}),
        "url only",
        id="openai-extra",
    ),
    pytest.param(
        extraction({"url": "http://h/v1", "model": "m"}), "not url", id="discovery-with-url"
    ),
    pytest.param(extraction({"model": "m", "colour": "red"}), "unknown key", id="unknown-key"),
    pytest.param(extraction({"model": "m"}, max_hops=0), "max_hops", id="hops"),
    pytest.param(extraction({"model": "m"}, wall_seconds=-1), "wall_seconds", id="wall"),
    pytest.param(extraction({"model": "m"}, {"model": "m"}), "duplicate", id="duplicate"),
    pytest.param(extraction({"model": "m", "auth_env": "sk-123"}), "NAME", id="auth-env-value"),
    pytest.param(extraction({"provider": "a b", "model": "m"}), "provider", id="provider"),
    pytest.param(
        {"routes": {"memory_extractoin": {"targets": [{"model": "m"}]}}},
        "unknown workflow",
        id="workflow-typo",
    ),
    pytest.param({"route": {}}, "unknown section", id="section-typo"),
    pytest.param(
        {
            "routes": {
                "embedding": {
                    "targets": [{"transport": "openai", "url": "http://h/v1", "model": "e"}]
                }
            }
        },
        "discovery transport",
        id="embedding-openai",
    ),
]


@pytest.mark.parametrize(("raw", "fragment"), VALIDATION_ROWS)
def test_validation_errors_are_clear(raw: dict[str, Any], fragment: str) -> None:
    problems = bad(raw)
    assert any(fragment in p for p in problems), problems


def test_missing_auth_env_is_reported_unless_not_required() -> None:
    raw = extraction({"model": "m", "auth_env": "FARM_KEY"})
    problems = bad(raw, env={})
    assert problems == [
        "routes.memory_extraction.targets[0].auth_env: environment variable FARM_KEY is not set"
    ]
    routes = parse_routes(raw, DEFAULTS, env={}, require_secrets=False)
    assert routes.get("memory_extraction") is not None


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text(
        """
[routes.memory_extraction]
max_hops = 0
[[routes.memory_extraction.targets]]
transport = "openai"
model = "m"
[routes.memory_merge]
[[routes.memory_merge.targets]]
model = "m"
token = "t0ps3cret"
""",
        encoding="utf-8",
    )
    with pytest.raises(RoutesError) as info:
        load_routes(path, DEFAULTS)
    assert str(path) in str(info.value)
    assert "t0ps3cret" not in str(info.value)
    assert any("token" in p for p in info.value.problems)


def test_unreadable_and_invalid_toml(tmp_path: Path) -> None:
    with pytest.raises(RoutesError, match="cannot read"):
        load_routes(tmp_path / "missing.toml", DEFAULTS)
    broken = tmp_path / "broken.toml"
    broken.write_text("[routes\n", encoding="utf-8")
    with pytest.raises(RoutesError, match="not valid TOML"):
        load_routes(broken, DEFAULTS)


# --- tiers, weights and caps (§6) -----------------------------------------------------------


def farm(service: str, **options: Any) -> dict[str, Any]:
    return {"service": service, "model": f"m-{service}", **options}


def one_route(*targets: dict[str, Any], workflow: str = "memory_extraction") -> Any:
    return parse_routes({"routes": {workflow: {"targets": list(targets)}}}, DEFAULTS)


def test_without_tiers_each_target_is_its_own_tier_in_order() -> None:
    route = one_route(farm("a"), farm("b"), farm("c")).get("memory_extraction")
    assert route is not None
    assert [(t.service, t.tier, t.weight) for t in route.ordered] == [
        ("a", 0, 1.0),
        ("b", 1, 1.0),
        ("c", 2, 1.0),
    ]
    assert all(not t.limits.capped for t in route.targets)


def test_tiers_weights_and_caps_are_read() -> None:
    route = one_route(
        farm("fallback", tier=1, requests_per_minute=60, tokens_per_day=1_000_000),
        farm("a", tier=0, weight=3),
        farm("b", tier=0, max_in_flight=8),
    ).get("memory_extraction")
    assert route is not None
    assert [(t.service, t.tier) for t in route.ordered] == [("a", 0), ("b", 0), ("fallback", 1)]
    a, b, fallback = route.ordered
    assert (a.weight, b.limits.max_in_flight) == (3.0, 8)
    assert (fallback.limits.requests_per_minute, fallback.limits.tokens_per_day) == (60, 1_000_000)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        pytest.param(
            {"tier": -1}, "targets[0].tier: Input should be greater than or equal to 0", id="tier"
        ),
        pytest.param(
            {"weight": 0}, "targets[0].weight: Input should be greater than 0", id="weight"
        ),
        pytest.param(
            {"max_in_flight": 0},
            "targets[0].max_in_flight: Input should be greater",
            id="in-flight",
        ),
        pytest.param(
            {"requests_per_minute": "fast"},
            "targets[0].requests_per_minute: Input should be a valid integer",
            id="rpm-type",
        ),
        pytest.param(
            {"tokens_per_day": 0}, "targets[0].tokens_per_day: Input should be greater", id="tokens"
        ),
    ],
)
def test_bad_tiers_weights_and_caps_are_one_clear_line_each(
    options: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(RoutesError) as info:
        one_route(farm("a", **options))
    assert len(info.value.problems) == 1
    assert fragment in info.value.problems[0]


def test_a_target_shared_by_two_routes_has_one_set_of_caps() -> None:
    raw = {
        "routes": {
            "memory_extraction": {"targets": [farm("a", requests_per_minute=60)]},
            "memory_merge": {"targets": [farm("a", requests_per_minute=120)]},
        }
    }
    with pytest.raises(RoutesError) as info:
        parse_routes(raw, DEFAULTS)
    assert info.value.problems == [
        "routes.memory_merge.targets[0]: a/m-a has other caps (max_in_flight, "
        "requests_per_minute, tokens_per_day) than at routes.memory_extraction.targets[0]; "
        "a target's caps are the same everywhere"
    ]
    raw["routes"]["memory_merge"]["targets"][0]["requests_per_minute"] = 60
    assert parse_routes(raw, DEFAULTS).get("memory_merge") is not None
