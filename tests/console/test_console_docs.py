"""The console serves the documentation bundled with the package (§15), so the outage
banner's runbook links work with no docs site.

User story: "the banner says what to do and links the runbook; I click it on a fresh install
and land on the section, not on a 404". Every page is served at ``/docs/NAME.md`` with the
anchors MkDocs gives its headings (checked against a real ``mkdocs build``), every link
between the served pages lands on a page and heading that exist, and nothing outside the
bundled pages is reachable. The browser half is in tests/console/test_console_browser.py.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory_worker.console import docs, explain
from memory_worker.settings import Settings
from tests.support.console import MakeClient
from tests.support.console import make_client as make_client  # the fixture

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
HEADING_ID = re.compile(r'<h[1-6] id="([^"]+)"')
HREF = re.compile(r'href="([^"]+)"')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(where)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return where


@pytest.mark.parametrize("name", PAGES)
def test_the_console_gives_each_heading_the_anchor_the_docs_site_gives(
    name: str, site: Path
) -> None:
    built = site / ("index.html" if name == "index.md" else f"{name[:-3]}/index.html")
    on_site = set(HEADING_ID.findall(built.read_text(encoding="utf-8")))
    assert on_site
    assert docs.anchors(name) == on_site


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("§13 Public contract", "13-public-contract"),
        ("What the outage banner tells you", "what-the-outage-banner-tells-you"),
        ("`provider_unavailable`", "provider_unavailable"),
        ("Redis: memory, AOF — and *eviction*", "redis-memory-aof-and-eviction"),
        ("Café  crème", "cafe-creme"),
    ],
)
def test_slug(heading: str, anchor: str) -> None:
    assert docs.slug(heading) == anchor


def test_repeated_headings_are_numbered_as_the_site_numbers_them() -> None:
    page = docs.render("x.md", "# T\n## Notes\ntext\n## Notes\n## Notes\n")
    assert page.anchors == ("notes", "notes_1", "notes_2", "t")
    assert page.title == "T"


def test_raw_html_in_a_page_is_text() -> None:
    page = docs.render("x.md", "# T\n\n<script>alert(1)</script> and `<b>`\n")
    assert "<script>" not in page.html
    assert "&lt;script&gt;" in page.html


def test_every_advice_anchor_is_a_heading_of_the_served_runbook() -> None:
    advices = [*explain.ADVICE.values(), explain.OTHER_ADVICE, explain.NO_ANSWER_ADVICE]
    assert {a.anchor for a in advices} <= docs.anchors("runbook.md")


def test_the_default_runbook_link_is_the_served_runbook(settings: Settings) -> None:
    href = explain.runbook_href(Settings.model_fields["console_runbook_url"].default, "x")
    assert href == "/docs/runbook.md#x"
    assert settings.console_runbook_url == "/docs/runbook.md"


async def test_the_console_serves_every_page_and_every_link_between_them_lands(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    client = await make_client(settings)
    first = await client.get("/docs", allow_redirects=False)
    assert first.status == 302
    assert first.headers["Location"] == "/docs/index.md"
    bodies: dict[str, str] = {}
    for name in PAGES:
        response = await client.get(f"/docs/{name}")
        assert response.status == 200, name
        assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")
        bodies[name] = await response.text()
        assert "<script" not in bodies[name]
    assert 'id="provider_unavailable"' in bodies["runbook.md"]
    assert "<table>" in bodies["configuration.md"]
    checked = 0
    for name, body in bodies.items():
        article = body[body.index('id="doc"') :]
        for href in map(html.unescape, HREF.findall(article)):
            if re.match(r"[a-z]+:", href):
                continue  # the outside world
            target, _, anchor = href.partition("#")
            target = target or name
            if target.endswith(".png"):
                assert (await client.get(f"/docs/{target}")).status == 200
                continue
            assert target in bodies, f"{name} links {href}: no such page served"
            if anchor:
                assert anchor in docs.anchors(target), f"{name} links {href}: no such heading"
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    "path",
    ["/docs/nope.md", "/docs/..%2Fpyproject.toml", "/docs/.env", "/docs/README.md", "/docs/x.py"],
)
async def test_nothing_but_the_bundled_pages_is_served(
    redis: Any, settings: Settings, make_client: MakeClient, path: str
) -> None:
    client = await make_client(settings)
    response = await client.get(path)
    assert response.status == 404
    assert "[tool." not in await response.text()


async def test_the_docs_images_are_served(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    client = await make_client(settings)
    response = await client.get("/docs/console-outage.png")
    assert response.status == 200
    assert response.headers["Content-Type"] == "image/png"
    assert (await response.read()).startswith(b"\x89PNG")
