"""§11: the Grafana dashboard that ships (deploy/grafana/memory-worker.json) is one Grafana
loads and one that shows data.

- the JSON basics Grafana needs: title, uid, schema version, a Prometheus datasource
  variable every panel uses, unique panel ids, a 24-column grid without overlaps, a refId
  and an expression for every query;
- every expression parses as PromQL (promtool checks them as recording rules);
- every series an expression reads exists on a real endpoint (a renamed metric would leave
  its panel empty);
- the panels the runbook promises are there: outage state, throughput, attempts vs
  releases, breakers, latency.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from memory_worker.settings import Settings
from tests.support.promtool import promtool
from tests.support.scrape import metric_names, real_exposition

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "memory-worker.json"


def dashboard() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return document


def panels() -> list[dict[str, Any]]:
    return [p for p in dashboard()["panels"] if p["type"] != "row"]


def expressions() -> Iterator[tuple[str, str]]:
    for panel in panels():
        for target in panel["targets"]:
            yield panel["title"], target["expr"]


def test_the_dashboard_has_what_grafana_needs() -> None:
    doc = dashboard()
    assert doc["title"] == "memory-worker"
    assert doc["uid"] == "memory-worker"
    assert isinstance(doc["schemaVersion"], int)
    assert doc["schemaVersion"] >= 30
    variables = {v["name"]: v for v in doc["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids))
    cells: set[tuple[int, int]] = set()
    for panel in doc["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] >= 0, panel["title"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        area = {
            (x, y)
            for x in range(grid["x"], grid["x"] + grid["w"])
            for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not area & cells, f"{panel['title']} overlaps another panel"
        cells |= area
    for panel in panels():
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip(), panel["title"]


def test_every_expression_is_promql(tmp_path: Path) -> None:
    rules = [
        {"record": f"dashboard:expr_{i}", "expr": expr} for i, (_, expr) in enumerate(expressions())
    ]
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    done = promtool("check", "rules", path)
    assert done.returncode == 0, done.stdout + done.stderr


async def test_every_series_a_panel_reads_exists_on_a_real_endpoint(settings: Settings) -> None:
    exposed = await real_exposition(settings)
    for title, expr in expressions():
        missing = metric_names(expr) - exposed
        assert not missing, (title, missing)


@pytest.mark.parametrize(
    ("topic", "series"),
    [
        pytest.param("outage state", "memory_worker_route_open", id="outage"),
        pytest.param("outage state", "memory_worker_incident_open", id="incident"),
        pytest.param("throughput", "memory_worker_runs_completed_total", id="throughput"),
        pytest.param("attempts vs releases", "memory_worker_runs_failed_total", id="attempts"),
        pytest.param("attempts vs releases", "memory_worker_runs_released_total", id="releases"),
        pytest.param("breakers", "memory_worker_breaker_state", id="breakers"),
        pytest.param("latency", "memory_worker_run_duration_seconds_bucket", id="run-latency"),
        pytest.param("latency", "memory_worker_claim_wait_seconds_bucket", id="claim-wait"),
        pytest.param("latency", "memory_worker_tick_duration_seconds_bucket", id="tick"),
        pytest.param("error ratio", "memory_worker_target_error_ratio", id="error-ratio"),
        pytest.param("ejected", "memory_worker_target_ejected", id="ejected"),
        pytest.param(
            "latency per target", "memory_worker_farm_call_seconds_bucket", id="target-latency"
        ),
    ],
)
def test_the_promised_panels_are_there(topic: str, series: str) -> None:
    assert any(series in metric_names(expr) for _, expr in expressions()), topic


#: Series each worker process exports itself (``run --serve``): the instance variable filters them.
PROCESS_SERIES = {
    "memory_worker_worker_slots",
    "memory_worker_worker_slots_busy",
    "memory_worker_run_duration_seconds_bucket",
    "memory_worker_claim_wait_seconds_bucket",
    "memory_worker_tick_duration_seconds_bucket",
    "memory_worker_farm_call_seconds_bucket",
}


def test_an_instance_variable_selects_the_worker_endpoints() -> None:
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    instance = variables["instance"]
    assert instance["type"] == "query"
    assert instance["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
    assert instance["definition"] == "label_values(memory_worker_worker_slots, instance)"
    assert instance["multi"] is True
    assert instance["includeAll"] is True
    assert instance["allValue"] == ".*"
    filtered = 0
    for title, expr in expressions():
        for series in metric_names(expr) & PROCESS_SERIES:
            uses = re.findall(rf"\b{series}\{{([^}}]*)\}}", expr)
            assert uses, (title, series)
            assert all('instance=~"$instance"' in labels for labels in uses), (title, expr)
            filtered += 1
        if not metric_names(expr) & PROCESS_SERIES:
            assert "$instance" not in expr, (title, "a fleet series is never filtered")
    assert filtered >= 8


def _panel_reading(pattern: str) -> dict[str, Any]:
    found = [p for p in panels() if any(re.search(pattern, t["expr"]) for t in p["targets"])]
    assert found, pattern
    return found[0]


def test_per_target_latency_and_error_panels() -> None:
    latency = _panel_reading(
        r"histogram_quantile\(0\.95, sum by \(le, target\) "
        r"\(rate\(memory_worker_farm_call_seconds_bucket\{"
    )
    assert "{{target}}" in " ".join(t["legendFormat"] for t in latency["targets"])
    errors = _panel_reading(
        r"sum by \(target, reason\) \(rate\(memory_worker_routing_attempts_total"
        r"\{outcome=\"failure\"\}"
    )
    assert "per target" in errors["title"]
    assert "per target" in latency["title"]
