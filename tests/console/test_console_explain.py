"""A console that helps act (§15): the outage banner says what the farm answered (masked)
and what to do (a runbook section that exists), a run shows its release history, the
workers page lists the registry, and every figure says what it counts — with the same
definition as ``memory-worker report`` and ``/metrics``."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from llm_client import AllCircuitsOpen, BackendUnavailable
from memory_worker.console import explain
from memory_worker.console.data import overview_data
from memory_worker.models import RouteError
from memory_worker.ops.metrics import MemoryCollector, read_sample, report_data
from memory_worker.runs import RunStore
from memory_worker.runs.policy import release_origin
from memory_worker.runs.workers import heartbeat_info
from memory_worker.settings import Settings
from memory_worker.storage.sampling import Sampler
from tests.console.test_console import seed
from tests.support.console import MakeClient
from tests.support.console import make_client as make_client  # the fixture

ROOT = Path(__file__).resolve().parents[2]
RUNBOOK = ROOT / "docs" / "runbook.md"
KEY = f"sk-live-{uuid.uuid4().hex}{uuid.uuid4().hex[:8]}"
WF, TARGET = "memory_extraction", "llm-openai/memory-extractor"


def _slug(heading: str) -> str:
    """MkDocs' (Python-Markdown toc's) anchor of a heading."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def runbook_anchors() -> set[str]:
    text = RUNBOOK.read_text(encoding="utf-8")
    return {_slug(m.group(1)) for m in re.finditer(r"^#{2,4} (.+)$", text, re.MULTILINE)}


def test_every_advice_links_a_runbook_section_that_exists() -> None:
    advices = [*explain.ADVICE.values(), explain.OTHER_ADVICE, explain.NO_ANSWER_ADVICE]
    missing = {a.anchor for a in advices} - runbook_anchors()
    assert not missing, f"docs/runbook.md has no heading for {sorted(missing)}"


@pytest.mark.parametrize(
    ("reason", "anchor"),
    [
        ("provider_unavailable", "provider_unavailable"),
        ("capacity_unavailable", "capacity_unavailable"),
        ("provider_error", "provider_error"),
        ("provider_timeout", "provider_timeout"),
        ("provider_protocol_error", "other-farm-errors"),
        (None, "other-farm-errors"),
    ],
)
def test_advice_by_reason(reason: str | None, anchor: str) -> None:
    error = RouteError(workflow=WF, at="2026-11-02T18:00:00Z", code="X", reason=reason)
    assert explain.advice(error).anchor == anchor
    assert explain.advice(None) is explain.NO_ANSWER_ADVICE


@pytest.mark.parametrize(
    ("base", "href"),
    [
        ("/docs/runbook.md", "/docs/runbook.md#provider_error"),
        ("https://docs.example/mw/runbook/", "https://docs.example/mw/runbook/#provider_error"),
        ("https://docs.example/runbook/#old", "https://docs.example/runbook/#provider_error"),
    ],
)
def test_runbook_href(base: str, href: str) -> None:
    assert explain.runbook_href(base, "provider_error") == href


async def _release_with_answer(store: RunStore, message: str) -> str:
    """A queued run claimed and released as the walker's farm answer would release it."""
    claim = await store.claim("console-test-worker")
    assert claim is not None
    answer = BackendUnavailable(message, code="UPSTREAM_ERROR")
    answer.note_origin(WF, TARGET)
    assert await store.release(claim, reason="provider_unavailable", origin=release_origin(answer))
    return claim.id


async def test_banner_shows_the_farms_last_answer_masked_and_what_to_do(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    ids = await seed(redis, settings)  # the extraction target's breaker open
    store = RunStore(redis, settings)
    released = await _release_with_answer(
        store, f"UPSTREAM_ERROR: backend unreachable <b>x</b> (key {KEY})"
    )
    assert released != ids["processing"]
    body = await (await (await make_client(settings)).get("/")).text()
    banner = body[body.index('id="outage-banner"') : body.index("</section>")]
    assert 'class="farm-code">UPSTREAM_ERROR<' in banner
    assert "backend unreachable &lt;b&gt;x&lt;/b&gt;" in banner  # text, not markup
    assert KEY not in body
    assert 'href="/docs/runbook.md#provider_unavailable"' in banner
    assert "What to do:" in banner
    # a deployment's docs site; a later refusal (no farm answer) keeps the answer shown
    claim = await store.claim("console-test-worker")
    assert claim is not None
    refused = release_origin(AllCircuitsOpen("every target open", workflow=WF))
    assert await store.release(claim, reason="provider_unavailable", origin=refused)
    docs = settings.model_copy(update={"console_runbook_url": "https://docs.example/runbook/"})
    body = await (await (await make_client(docs)).get("/runs")).text()
    assert 'class="farm-code">UPSTREAM_ERROR<' in body
    assert 'href="https://docs.example/runbook/#provider_unavailable"' in body


async def test_the_banner_names_the_farms_error_from_the_first_release_on(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    """An outage's first minute: one call failed with UPSTREAM_ERROR (its breaker charged,
    still closed) and the run went back. The banner is up already, with the farm's code and
    what to do; a success on the target takes it down."""
    from llm_client import Circuit, Outcome
    from memory_worker.wiring import breaker_store
    from tests.support.factories import make_request

    store = RunStore(redis, settings)
    client = await make_client(settings)
    assert 'id="outage-banner"' not in await (await client.get("/")).text()
    await store.enqueue(make_request(77, texts=["hello"]))
    breakers = breaker_store(redis, settings)
    permit = await breakers.acquire(TARGET, lease_seconds=5)
    assert permit is not None
    await breakers.record(TARGET, permit, Outcome.FAILURE)
    assert (await breakers.view(TARGET)).circuit is Circuit.CLOSED  # not tripped yet
    await _release_with_answer(store, "UPSTREAM_ERROR: backend unreachable")
    body = await (await client.get("/runs")).text()
    banner = body[body.index('id="outage-banner"') : body.index("</section>")]
    assert "Farm failing" in banner
    assert 'class="route-failing">memory_extraction<' in banner
    assert 'class="farm-code">UPSTREAM_ERROR<' in banner
    assert 'href="/docs/runbook.md#provider_unavailable"' in banner
    permit = await breakers.acquire(TARGET, lease_seconds=5)
    assert permit is not None
    await breakers.record(TARGET, permit, Outcome.SUCCESS)  # the farm answers again
    assert 'id="outage-banner"' not in await (await client.get("/")).text()


async def test_a_released_run_shows_its_release_history(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    store = RunStore(redis, settings)
    rid = await _release_with_answer(store, "UPSTREAM_ERROR: farm down")
    body = await (await (await make_client(settings)).get(f"/runs/{rid}")).text()
    history = body[body.index('id="release-log"') :]
    assert re.search(
        r"<td>provider_unavailable</td><td>memory_extraction</td>"
        r"<td>llm-openai/memory-extractor</td><td>UPSTREAM_ERROR</td>",
        history,
    )
    assert "no failed attempts (released 1 times" in body
    assert "the budget of its last claim" in body
    # the title is the run's id, nothing of the page's body
    (title,) = re.findall(r"<title>(.*?)</title>", body, re.S)
    assert title == f"Run {rid} · memory-worker console"
    assert body.count('id="release-log"') == 1


async def test_workers_page_lists_the_registry(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    store = RunStore(redis, settings)
    for n in range(3):
        info = heartbeat_info(prompt_version="v-test", busy=n % 2, host=f"host-{n}")
        await store.heartbeat(f"host-{n}:{100 + n}:abc", [], concurrency=4, info=info)
    body = await (await (await make_client(settings)).get("/workers")).text()
    assert len(re.findall(r'<tr class="worker" data-worker="host-\d:', body)) == 3
    assert '<b id="workers-alive">3</b>' in body
    assert "v-test" in body
    assert "1 of 4" in body


async def test_every_figure_is_explained_and_names_a_metric_the_endpoint_has(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    await seed(redis, settings)
    sample = await read_sample(redis, settings)
    sampler: Sampler[Any] = Sampler(lambda: read_sample(redis, settings), min_interval=0)
    await sampler.refresh()
    registry = CollectorRegistry()
    registry.register(MemoryCollector(sampler))
    exposed = {f.name for f in text_string_to_metric_families(generate_latest(registry).decode())}
    figures = [*explain.STATUS_FIGURES, *explain.TOTAL_FIGURES, *explain.STATE_FIGURES]
    for figure in figures:
        assert figure.meaning
        for series in (figure.metric or "").split(" / "):
            name = series.split("{", 1)[0].removesuffix("_total")
            if name and not name.startswith("memory_worker_admin_pages"):  # the pager's own
                assert name in exposed, (figure.id, name)
    body = await (await (await make_client(settings)).get("/")).text()
    for figure in figures:
        assert figure.meaning in body.replace("&#39;", "'"), figure.id
    # the same numbers as the report: runs by status, pages
    report = await report_data(redis, settings)
    for name, count in report["runs"].items():
        assert re.search(rf'id="count-{name}"><span class="n">{count}<', body), name
    overview = await overview_data(redis, settings, [])
    failures = sum(v for k, v in sample.counters.items() if k.startswith("failed:"))
    assert overview.failed_total == failures
    assert re.search(rf'id="total-failed">{failures}<', body)


def test_a_route_without_its_own_answer_shows_a_shared_targets_newest() -> None:
    """Routes share targets (and breakers): a route whose calls were all refused shows what
    the farm last said on one of its targets, through another route."""
    from datetime import UTC, datetime

    from llm_client import Circuit
    from memory_worker.console.data import outage_banner
    from tests.console.test_console_data import view

    def error(workflow: str, target: str, hour: int) -> RouteError:
        at = datetime(2026, 11, 2, hour, tzinfo=UTC)
        return RouteError(workflow=workflow, at=at, target=target, code=f"C{hour}")

    errors = {
        WF: error(WF, TARGET, 10),
        "embedding": error("embedding", "embedder/e", 11),
        "other": error("other", TARGET, 12),
    }
    banner = outage_banner(
        now_ms=0,
        routes={WF: [TARGET], "memory_merge": [TARGET], "lonely": ["x/y"]},
        breakers=[view(TARGET, Circuit.OPEN, opened=1), view("x/y", Circuit.OPEN, opened=1)],
        deferred_since_ms=None,
        next_tick_ms=None,
        runs_waiting=0,
        pages={},
        failed_since=0,
        last_errors=errors,
    )
    assert banner is not None
    shown = {r.workflow: r.last_error and r.last_error.code for r in banner.open_routes}
    assert shown == {WF: "C10", "memory_merge": "C12", "lonely": None}
