"""The operator console in a real headless browser (§15): Debian's chromium via Selenium.

User story: "during a farm outage an operator opens the console, sees which route
is open and that nothing burns attempts, resets a breaker (refused without the
token), looks at a chat's memory, replays the runs an incident retired, and
forgets a user of that chat on request".

Real parts throughout: a private Valkey, the farm simulator over HTTP, a worker
process, and the console served by ``memory-worker serve`` in its own process.
The browser runs with no sandbox-dependent features and a fresh profile. With
``CONSOLE_SCREENSHOTS=DIR`` the screenshots docs/console.md shows are written there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_worker.cards import CardStore
from memory_worker.farmsim import FarmSimulator
from memory_worker.farmsim.faults import Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.paging.reports import page_counters
from memory_worker.runs import RunStore
from memory_worker.runs.policy import FailurePlan
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import client_from_url
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.wiring import breaker_store
from memory_worker.worker.fleet import worker_env
from tests.support.factories import make_request
from tests.support.harness import Fleet, eventually, free_port

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
TOKEN = "browser-console-token-31337"
TARGETS = ("llm-openai/memory-extractor", "embedder/embedder")
CHAT = 5150
#: What the farm says during the outage: a key in it must never reach a page.
FARM_KEY = "sk-live-4f1c0ffee5e1b2a3c4d5e6f708192a3b"
DOWN = f"upstream backend unreachable (api key {FARM_KEY})"
CONVERSATION = [
    ["I live in Porto", "I love green tea"],
    ["I work at Acme", "my name is <script>alert(1)</script>"],
    ["I live in Lisbon", "I am allergic to peanuts"],
    ["we decided to meet on Friday", "I prefer oolong"],
]
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1100",
)


def _browser_available() -> bool:
    return bool(shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER))


if not _browser_available() and not os.environ.get("CI"):
    pytest.skip(
        "Debian chromium + chromium-driver not installed (make browser)", allow_module_level=True
    )


@pytest.fixture
def valkey(own_valkey: EmbeddedValkey) -> str:
    return own_valkey.url


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_page_load_timeout(30)
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    where = Path(os.environ.get("CONSOLE_SCREENSHOTS") or tmp_path / "shots")
    where.mkdir(parents=True, exist_ok=True)
    return where


class Page:
    """The browser, driven from a thread so the test's loop (and the simulator) keeps running."""

    def __init__(self, driver: Any, base: str) -> None:
        self.driver = driver
        self.base = base

    async def open(self, path: str) -> str:
        await asyncio.to_thread(self.driver.get, self.base + path)
        return str(await asyncio.to_thread(lambda: self.driver.page_source))

    async def text(self, element_id: str) -> str:
        from selenium.webdriver.common.by import By

        element = await asyncio.to_thread(self.driver.find_element, By.ID, element_id)
        return str(await asyncio.to_thread(lambda: element.text))

    async def submit(self, css: str, fields: dict[str, str], button: str) -> str:
        """Fill ``fields`` of the form matched by ``css`` and click its ``button``."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        def act() -> str:
            form = self.driver.find_element(By.CSS_SELECTOR, css)
            for name, value in fields.items():
                box = form.find_element(By.NAME, name)
                box.clear()
                box.send_keys(value)
            form.find_element(By.CSS_SELECTOR, button).click()
            WebDriverWait(self.driver, 20).until(lambda _: _detached(form))  # next page loaded
            return str(self.driver.page_source)

        return await asyncio.to_thread(act)

    async def links(self, css: str) -> list[str]:
        """The ``href`` attributes (as written) of the elements ``css`` matches."""
        from selenium.webdriver.common.by import By

        def read() -> list[str]:
            found = self.driver.find_elements(By.CSS_SELECTOR, css)
            return [str(e.get_dom_attribute("href")) for e in found]

        return await asyncio.to_thread(read)

    async def count(self, css: str) -> int:
        from selenium.webdriver.common.by import By

        return len(await asyncio.to_thread(self.driver.find_elements, By.CSS_SELECTOR, css))

    async def shot(self, path: Path) -> None:
        await asyncio.to_thread(self.driver.save_screenshot, str(path))

    async def scripts(self) -> int:
        from selenium.webdriver.common.by import By

        return len(await asyncio.to_thread(self.driver.find_elements, By.TAG_NAME, "script"))


@pytest.fixture
def console(valkey: str, tmp_path: Path) -> tuple[str, Settings]:
    """Where ``memory-worker serve`` will listen, and the settings of the deployment."""
    port = free_port()
    settings = Settings(redis_url=valkey, key_prefix="br:", data_dir=tmp_path / "var")
    return f"http://127.0.0.1:{port}", settings.model_copy(update={"serve_port": port})


def _start_serve(
    settings: Settings, sim: FarmSimulator | None, tmp: Path, **extra: Any
) -> subprocess.Popen[bytes]:
    """``memory-worker serve`` in its own process, with the console token and the farm."""
    env = worker_env(
        settings,
        {
            **({"discovery_base_url": sim.base_url} if sim is not None else {}),
            "console_token": TOKEN,
            "serve_port": settings.serve_port,
            "metrics_cache_seconds": 0.2,
            **extra,
        },
    )
    with open(tmp / "serve.log", "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "memory_worker", "serve"], env=env, stdout=log, stderr=log
        )


async def _serve(
    settings: Settings, sim: FarmSimulator | None, tmp: Path, **extra: Any
) -> subprocess.Popen[bytes]:
    proc = _start_serve(settings, sim, tmp, **extra)

    async def up() -> bool:
        try:
            async with httpx.AsyncClient() as client:
                return (
                    await client.get(f"http://127.0.0.1:{settings.serve_port}/healthz")
                ).status_code == 200
        except httpx.HTTPError:
            return False

    await eventually(up, timeout=30, every=0.2)
    return proc


@pytest.mark.soak  # a minutes-long outage story; the login test keeps a browser in CI
async def test_operator_sees_outage_resets_breaker_browses_memory_and_replays(
    console: tuple[str, Settings], driver: Any, screenshots: Path, tmp_path: Path
) -> None:
    base, settings = console
    redis = client_from_url(reveal(settings.redis_url) or "")
    store = RunStore(redis, settings)
    async with FarmSimulator() as sim:
        serve = await _serve(settings, sim, tmp_path)
        fleet = Fleet(settings, tmp_path, env_overrides={"discovery_base_url": sim.base_url})
        page = Page(driver, base)
        try:
            # --- healthy: runs complete, the overview counts them -----------------------------
            fleet.start(1)
            for hour, texts in enumerate(CONVERSATION):  # one window at a time, oldest first
                await store.enqueue(make_request(CHAT, hour=hour, texts=texts))

                async def completed(n: int = hour + 1) -> bool:
                    return (await store.counts())["completed"] == n

                await eventually(completed, timeout=60)
            html = await page.open("/")
            assert re.search(r'id="count-completed"><span class="n">4<', html)
            assert 'id="outage-banner"' not in html
            assert await page.scripts() == 0
            await page.shot(screenshots / "console-overview.png")

            # --- the memory browser: cards and episodes, markup shown as text ---------------
            html = await page.open(f"/memory/{CHAT}")
            assert "green tea" in html
            assert await page.scripts() == 0  # '<script>' in a message or card stays text
            await page.shot(screenshots / "console-memory.png")

            # --- the farm goes down: the banner and the store's numbers -----------------------
            # (every job fails UPSTREAM_ERROR, its message carrying a key that must not show)
            sim.set_fault("*", Fault(FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message=DOWN))
            for hour in range(4, 10):
                await store.enqueue(make_request(CHAT + 1, hour=hour))

            async def banner_up() -> bool:
                html = await page.open("/")
                return 'id="outage-banner"' in html and 'class="route-open"' in html

            await eventually(banner_up, timeout=60, every=0.5)
            keys = Keys(settings.key_prefix)

            async def banner_matches_store() -> bool:
                await page.open("/")
                waiting = int(await redis.zcard(keys.queued)) + int(await redis.zcard(keys.retry))
                pages = await page_counters(redis, keys)
                return (
                    await page.text("runs-waiting") == str(waiting)
                    and await page.text("pages-sent") == str(pages["sent"])
                    and await page.text("pages-suppressed") == str(pages["suppressed"])
                )

            await eventually(banner_matches_store, timeout=60, every=0.5)
            assert await page.text("attempts-spent") == "0"
            # (a fail-open probe may hold one of the six runs for a moment: equality with
            # the store, read at the same moment, is what the banner promises)
            assert 1 <= int(await page.text("runs-waiting")) <= 6
            assert re.fullmatch(r"\d+", await page.text("next-probe"))

            # --- why and what to do: the farm's code, masked message, the runbook link --------
            async def farm_error_shown() -> bool:
                html = await page.open("/")
                return 'class="farm-code">UPSTREAM_ERROR<' in html

            await eventually(farm_error_shown, timeout=60, every=0.5)
            html = await page.open("/")
            assert FARM_KEY not in html
            assert "upstream backend unreachable" in html
            links = await page.links("a.runbook-link")
            assert "/docs/runbook.md#provider_unavailable" in links
            await page.shot(screenshots / "console-outage.png")

            # --- a released run shows its release history ---------------------------------------
            released = [r for r in await store.list_runs(limit=50) if r.releases >= 1]
            assert released, "the outage released no run"
            html = await page.open(f"/runs/{released[0].id}")
            history = await page.text("release-log")
            assert "provider_unavailable" in history
            assert "memory_extraction" in history
            assert FARM_KEY not in html

            # --- the workers page lists the fleet -----------------------------------------------
            fleet.start(2)

            async def three_workers() -> bool:
                await page.open("/workers")
                return await page.text("workers-alive") == "3"

            await eventually(three_workers, timeout=90, every=1.0)
            rows = await page.count("tr.worker")
            assert rows == 3
            await page.shot(screenshots / "console-workers.png")
            counts = await store.counts()
            assert counts["failed"] == 0  # nothing burnt an attempt

            # --- breaker reset: refused without the token, done with it -----------------------
            breakers = breaker_store(redis, settings)

            tripped = [v for v in await breakers.views(TARGETS) if v.trips >= 1]
            assert tripped, "the outage opened no breaker"
            target = tripped[0].target
            before = await breakers.state(target)
            await page.open("/breakers")
            form = f'tr[data-target="{target}"] form'
            refused = await page.submit(form, {"token": "not-the-token"}, "button")
            assert 'id="refused"' in refused
            assert (await breakers.state(target)).trips >= before.trips  # not reset
            await page.open("/breakers")
            done = await page.submit(form, {"token": TOKEN}, "button")
            assert 'id="reset-done"' in done
            html = await page.open("/events?type=console_breaker_reset")
            assert f"target={target}" in html

            # --- the farm is back: the backlog drains ----------------------------------------
            sim.clear_faults()

            async def drained() -> bool:
                c = await store.counts()
                return c["completed"] == 10 and c["queued"] == 0 and c["processing"] == 0

            await eventually(drained, timeout=90, every=0.5)
            assert 'id="outage-banner"' not in await page.open("/")

            # --- replay: an incident retired two runs; dry run first, then the replay ---------
            fleet.stop_all()
            retired = []
            for hour in range(10, 12):
                result = await store.enqueue(make_request(CHAT + 2, hour=hour))
                claim = await store.claim("incident-worker")
                assert claim is not None
                assert claim.id == result.run_id
                await store.fail(
                    claim,
                    FailurePlan(retire=True, next_attempt_at_ms=None),
                    code="upstream_error",
                    reason="backend_unavailable",
                    message="farm unreachable",
                )
                retired.append(claim.id)
            await page.open("/replay")
            preview = await page.submit(
                "#replay-preview-form", {"code": "upstream_error"}, "#preview"
            )
            assert 'id="replay-confirm"' in preview
            assert await page.text("matched") == "2"
            for rid in retired:
                assert (await store.get(rid)).retired  # the dry run wrote nothing
            result_html = await page.submit("#replay-confirm", {"token": TOKEN}, "#confirm")
            assert 'id="replay-done"' in result_html
            assert await page.text("replayed") == "2"
            for rid in retired:
                run = await store.get(rid)
                assert (run.status, run.attempts, run.retired) == (RunStatus.FAILED, 0, False)

            # --- one run by id: cancel it from its page (preview, then the token) -------------
            doomed = (await store.enqueue(make_request(CHAT + 3, hour=13))).run_id
            assert doomed is not None
            await page.open(f"/runs/{doomed}")
            preview = await page.submit("#run-actions", {}, "#cancel-preview")
            assert 'id="run-confirm"' in preview
            assert (await store.get(doomed)).status is RunStatus.QUEUED  # the preview wrote nothing
            refused = await page.submit("#run-confirm", {"token": "not-the-token"}, "#confirm-run")
            assert 'id="refused"' in refused
            assert (await store.get(doomed)).status is RunStatus.QUEUED
            await page.open(f"/runs/{doomed}?action=cancel&preview=1")
            done_html = await page.submit("#run-confirm", {"token": TOKEN}, "#confirm-run")
            assert 'id="run-done"' in done_html
            assert "st-cancelled" in done_html
            assert (await store.get(doomed)).status is RunStatus.CANCELLED
            assert doomed in await page.open("/events?type=console_run_cancel")
            fleet.start(1)

            async def replayed_completed() -> bool:
                runs = [await store.get(rid) for rid in retired]
                return all(r.status is RunStatus.COMPLETED for r in runs)

            await eventually(replayed_completed, timeout=60, every=0.5)

            # --- forget a user from the memory page: preview, confirm, their cards gone -------
            cards = CardStore(redis, Keys(settings.key_prefix))
            forgotten = 101  # said "I love green tea" (the second message of each window)
            assert any(c.user_id == forgotten for c in await cards.all_cards(CHAT))
            await page.open(f"/memory/{CHAT}")
            preview = await page.submit("#forget-form", {"user": str(forgotten)}, "#forget-open")
            assert 'id="forget-confirm"' in preview
            assert int(await page.text("forget-cards")) >= 1
            assert any(c.user_id == forgotten for c in await cards.all_cards(CHAT))  # dry run
            done_html = await page.submit("#forget-confirm", {"token": TOKEN}, "#confirm-forget")
            assert 'id="forget-done"' in done_html
            left = await cards.all_cards(CHAT)
            assert left
            assert all(c.user_id != forgotten for c in left)
            assert "green tea" not in await page.open(f"/memory/{CHAT}")
        except BaseException:
            with contextlib.suppress(Exception):
                sys.stderr.write(str(driver.page_source)[-3000:])
            sys.stderr.write(fleet.logs()[-3000:])
            sys.stderr.write((tmp_path / "serve.log").read_text(errors="replace")[-3000:])
            raise
        finally:
            fleet.stop_all()
            serve.terminate()
            serve.wait(timeout=15)
            await redis.aclose()


async def test_operator_logs_in_to_a_closed_console_and_out_again(
    console: tuple[str, Settings], driver: Any, tmp_path: Path
) -> None:
    """A console whose pages need a token (here the read token, which closes it even on
    loopback; off loopback it is the same gate): the page asked for shows the login form,
    a wrong token is refused, the read token opens that page (the SameSite=Strict cookie
    follows the redirect), the cookie is HttpOnly and not the token, actions stay refused,
    and logging out closes the pages again."""
    from tests.console.test_console import CHAT as SEEDED_CHAT
    from tests.console.test_console import seed

    base, settings = console
    redis = client_from_url(reveal(settings.redis_url) or "")
    read = "browser-read-token-2c9e"
    try:
        await seed(redis, settings)
        serve = await _serve(settings, None, tmp_path, console_read_token=read)
        page = Page(driver, base)
        try:
            html = await page.open(f"/memory/{SEEDED_CHAT}")
            assert 'id="login-form"' in html
            assert "Porto" not in html
            refused = await page.submit("#login-form", {"token": "not-the-token"}, "#login")
            assert "Wrong token." in refused
            done = await page.submit("#login-form", {"token": read}, "#login")
            assert "Porto" in done  # back on the page first asked for, now readable
            assert driver.current_url == f"{base}/memory/{SEEDED_CHAT}"
            cookies = {c["name"]: c for c in await asyncio.to_thread(driver.get_cookies)}
            session = cookies["mw_console_session"]
            assert session["httpOnly"] is True
            assert session["sameSite"] == "Strict"
            assert read not in session["value"]
            assert await page.scripts() == 0
            await page.open("/breakers")
            form = "tr[data-target] form"
            refused_action = await page.submit(form, {"token": read}, "button")
            assert 'id="refused"' in refused_action  # the read token opens no action
            await page.open("/")
            after = await page.submit("header form", {}, "#logout")
            assert 'id="login-form"' in after
            assert 'id="login-form"' in await page.open("/settings")
        except BaseException:
            sys.stderr.write((tmp_path / "serve.log").read_text(errors="replace")[-3000:])
            raise
        finally:
            serve.terminate()
            serve.wait(timeout=15)
    finally:
        await redis.aclose()


async def test_the_banners_runbook_link_opens_the_bundled_runbook_at_its_section(
    console: tuple[str, Settings], driver: Any, tmp_path: Path
) -> None:
    """A fresh install, no docs site configured: during an outage the banner's runbook link
    lands on the runbook the console serves, scrolled to the heading the link names."""
    from selenium.webdriver.common.by import By

    from tests.console.test_console import seed

    base, settings = console
    redis = client_from_url(reveal(settings.redis_url) or "")
    try:
        await seed(redis, settings)  # an open breaker: the banner is up
        serve = await _serve(settings, None, tmp_path)
        page = Page(driver, base)
        try:
            html = await page.open("/")
            assert 'id="outage-banner"' in html
            href = (await page.links("#outage-banner a.runbook-link"))[0]
            assert href.startswith("/docs/runbook.md#")
            anchor = href.split("#", 1)[1]

            def follow() -> tuple[str, str, str, int]:
                driver.find_element(By.CSS_SELECTOR, "#outage-banner a.runbook-link").click()
                heading = driver.find_element(By.ID, anchor)
                top = driver.execute_script(
                    "return arguments[0].getBoundingClientRect().top;", heading
                )
                return driver.current_url, heading.tag_name, driver.title, int(top)

            url, tag, title, top = await asyncio.to_thread(follow)
            assert url == f"{base}/docs/runbook.md#{anchor}"
            assert tag in {"h2", "h3", "h4"}
            assert title.startswith("Operations runbook")
            assert 0 <= top < 200  # the browser scrolled to the section
            assert await page.scripts() == 0
        except BaseException:
            sys.stderr.write((tmp_path / "serve.log").read_text(errors="replace")[-3000:])
            raise
        finally:
            serve.terminate()
            serve.wait(timeout=15)
    finally:
        await redis.aclose()


def _detached(element: Any) -> bool:
    """The element left the document (the form's page was replaced by the next one).

    Selenium's ``staleness_of`` expects a StaleElementReference error; during the navigation
    Chrome may instead answer "Node with given id does not belong to the document" (a
    WebDriverException), which means the same thing."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as exc:
        if "does not belong to the document" in str(exc):
            return True
        raise
    return False
