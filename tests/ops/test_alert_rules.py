"""§11: the alert rules that ship in deploy/prometheus/ are tested — against promtool, the
runbook and a real scrape.

- ``promtool check rules`` and ``check config`` pass; ``promtool test rules`` runs
  ``alerts_test.yml``, where every alert has a case that fires and one that stays quiet;
- the runbook's alert sections and the rules file hold the same alerts, expressions and
  ``for`` durations, and every alert's ``runbook_url`` is its section on the runbook the
  console serves;
- every series a rule reads exists on a real endpoint (a renamed metric would make its
  alert silently never fire).

CI installs promtool (``make promtool``); without it the promtool cases skip, saying why.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from memory_worker.console import docs
from memory_worker.settings import Settings
from tests.support.console import MakeClient
from tests.support.console import make_client as make_client  # the fixture
from tests.support.promtool import promtool
from tests.support.scrape import metric_names, real_exposition

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS = ROOT / "deploy" / "prometheus"
RULES = PROMETHEUS / "alerts.yml"
RULE_TESTS = PROMETHEUS / "alerts_test.yml"
RUNBOOK = ROOT / "docs" / "runbook.md"


def rules() -> dict[str, dict[str, Any]]:
    document = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return {r["alert"]: r for group in document["groups"] for r in group["rules"]}


def test_promtool_checks_the_rules_and_the_scrape_config() -> None:
    checked = promtool("check", "rules", RULES)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules())} rules found" in checked.stdout
    config = promtool("check", "config", PROMETHEUS / "prometheus.yml")
    assert config.returncode == 0, config.stdout + config.stderr
    assert "WARNING" not in config.stdout + config.stderr


def test_promtool_unit_tests_pass() -> None:
    done = promtool("test", "rules", RULE_TESTS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_every_alert_has_a_case_that_fires_and_one_that_stays_quiet() -> None:
    tests = yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))["tests"]
    firing: set[str] = set()
    quiet: set[str] = set()
    for case in tests:
        for check in case["alert_rule_test"]:
            (firing if check.get("exp_alerts") else quiet).add(check["alertname"])
    assert firing == set(rules())
    assert quiet == set(rules())


def runbook_rows() -> dict[str, tuple[str, str]]:
    """The runbook's alert sections: name → (expression, for)."""
    section = RUNBOOK.read_text(encoding="utf-8").split("\n## Alerts\n", 1)[1].split("\n## ")[0]
    rows = {}
    for found in re.finditer(
        r"^#### (\w+)\n\n`(.+)` — (?:for (\S+)|no `for`: at once)\.$", section, re.M
    ):
        name, expr, duration = found.groups()
        rows[name] = (expr, duration or "-")
    return rows


def test_the_runbook_sections_are_the_rules_file() -> None:
    table = runbook_rows()
    shipped = {name: (r["expr"], r.get("for", "-")) for name, r in rules().items()}
    assert table == shipped


RUNBOOK_URL = re.compile(r"^\{\{ \$externalLabels\.console_url \}\}/docs/runbook\.md#([\w-]+)$")


@pytest.mark.parametrize("name", sorted(rules()))
def test_every_alert_links_its_section_of_the_bundled_runbook(name: str) -> None:
    """The operators' convention: a ``runbook_url`` on every alert, here the section of the
    runbook the console serves (the console's address from Prometheus' external labels)."""
    url = rules()[name]["annotations"]["runbook_url"]
    found = RUNBOOK_URL.match(url)
    assert found, url
    (anchor,) = found.groups()
    assert anchor == name.lower()
    assert anchor in docs.anchors("runbook.md"), f"docs/runbook.md has no heading #{anchor}"


async def test_an_alerts_runbook_url_opens_its_section_on_the_console(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    """Each link followed on a real console: the page is served and holds the heading."""
    client = await make_client(settings)
    response = await client.get("/docs/runbook.md")
    assert response.status == 200
    body = await response.text()
    for name, rule in rules().items():
        anchor = rule["annotations"]["runbook_url"].rsplit("#", 1)[1]
        assert f'<h4 id="{anchor}">{name}</h4>' in body


def test_the_scrape_config_names_the_console_for_the_runbook_links() -> None:
    config = yaml.safe_load((PROMETHEUS / "prometheus.yml").read_text(encoding="utf-8"))
    assert config["global"]["external_labels"]["console_url"].startswith("http")


def test_the_rules_cover_what_an_operator_must_be_told() -> None:
    """Farm outage by route, runs waiting too long, attempts spent, retirements, no worker,
    Redis memory/eviction/persistence, paging failures: each has a rule on its series."""
    reads = {name: metric_names(r["expr"]) for name, r in rules().items()}
    must = {
        "MemoryWorkerFarmOutage": "memory_worker_route_open",
        "MemoryWorkerBacklogNotDraining": "memory_worker_oldest_queued_run_timestamp_seconds",
        "MemoryWorkerAttemptsSpentInOutage": "memory_worker_runs_failed_total",
        "MemoryWorkerRunsRetired": "memory_worker_runs_retired_total",
        "MemoryWorkerNoWorkers": "memory_worker_workers",
        "MemoryWorkerRedisNearlyFull": "memory_worker_redis_used_memory_bytes",
        "MemoryWorkerRedisEvicting": "memory_worker_redis_evicted_keys_total",
        "MemoryWorkerRedisPersistenceFailing": "memory_worker_redis_aof_last_write_ok",
        "MemoryWorkerPagingFailed": "memory_worker_admin_pages_total",
        "MemoryWorkerPagingNotConfigured": "memory_worker_admin_pages_total",
    }
    for alert, series in must.items():
        assert series in reads[alert], alert
    assert "by (workflow)" in rules()["MemoryWorkerFarmOutage"]["expr"]


async def test_every_series_a_rule_reads_exists_on_a_real_endpoint(settings: Settings) -> None:
    exposed = await real_exposition(settings)
    for name, rule in rules().items():
        missing = metric_names(rule["expr"]) - exposed
        assert not missing, (name, missing)


AGGREGATED = re.compile(r"(max|min|sum|absent)(\s+by\s*\([^)]*\)\s*)?\(\s*(increase\()?$")


@pytest.mark.parametrize("name", sorted(rules()))
def test_every_rule_aggregates_away_the_endpoint(name: str) -> None:
    """An alert fires once per fleet (or route, target, node), never once per endpoint:
    every series it reads sits under an aggregation (or absent(), which has no labels)."""
    expr = rules()[name]["expr"]
    for series in metric_names(expr):
        for use in re.finditer(rf"\b{series}\b", expr):
            assert AGGREGATED.search(expr[: use.start()]), (name, series)
