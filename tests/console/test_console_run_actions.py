"""The run page's cancel and replay (§13, §15) through the console's HTTP interface, against
real Valkey.

The buttons preview first (a GET that writes nothing, read-only consoles included); the
action is a POST that needs the console token and the CSRF pair — refused, it answers 403 and
changes nothing (every key DUMP-compared); done, it leaves a ``console_run_cancel`` /
``console_run_replay`` audit event. ``cancelled`` is a status filter, a colour and a series.
"""

from __future__ import annotations

import re
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest

from memory_worker.models import RunStatus
from memory_worker.ops.metrics import MemoryCollector, read_sample
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.storage.sampling import Sampler
from tests.support.console import TOKEN, MakeClient, csrf_of, with_token
from tests.support.console import make_client as make_client  # the fixture
from tests.support.dumps import dump_all
from tests.support.factories import make_request


async def queued_run(redis: Any, settings: Settings) -> str:
    result = await RunStore(redis, settings).enqueue(make_request(77, hour=3))
    assert result.run_id is not None
    return result.run_id


async def test_a_read_only_console_previews_but_cannot_cancel(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    run_id = await queued_run(redis, settings)
    client = await make_client(settings)
    before = await dump_all(redis, settings.key_prefix)
    page = await (await client.get(f"/runs/{run_id}")).text()
    assert 'id="cancel-preview"' in page
    assert 'id="replay-run-preview"' not in page  # a queued run has nothing to replay
    preview = await client.get(f"/runs/{run_id}?action=cancel&preview=1")
    text = await preview.text()
    assert preview.status == 200
    assert 'id="run-preview"' in text
    assert "leaves the queue" in text
    assert 'id="run-confirm"' not in text
    assert f"memory-worker runs cancel {run_id}" in text
    csrf = await csrf_of(client)
    refused = await client.post(f"/runs/{run_id}", data={"action": "cancel", "csrf": csrf})
    assert refused.status == 403
    assert await dump_all(redis, settings.key_prefix) == before


async def test_cancel_then_replay_from_the_run_page(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    runs = RunStore(redis, settings)
    run_id = await queued_run(redis, settings)
    client = await make_client(with_token(settings))
    before = await dump_all(redis, settings.key_prefix)
    preview = await (await client.get(f"/runs/{run_id}?action=cancel&preview=1")).text()
    assert 'id="run-confirm"' in preview
    assert await dump_all(redis, settings.key_prefix) == before  # a preview writes nothing

    csrf = await csrf_of(client)
    wrong = await client.post(
        f"/runs/{run_id}", data={"action": "cancel", "csrf": csrf, "token": "nope"}
    )
    assert wrong.status == 403
    no_csrf = await client.post(f"/runs/{run_id}", data={"action": "cancel", "token": TOKEN})
    assert no_csrf.status == 403
    assert await dump_all(redis, settings.key_prefix) == before

    done = await client.post(
        f"/runs/{run_id}", data={"action": "cancel", "csrf": csrf, "token": TOKEN}
    )
    body = await done.text()
    assert done.status == 200
    assert 'id="run-done"' in body
    assert 'class="st st-cancelled"' in body
    assert 'id="replay-run-preview"' in body
    assert 'id="cancel-preview"' not in body
    assert (await runs.get(run_id)).status is RunStatus.CANCELLED
    listed = await (await client.get("/runs?status=cancelled")).text()
    assert run_id in listed
    events = await (await client.get("/events?type=console_run_cancel")).text()
    assert run_id in events

    # cancelled: a status series and a counter of cancels by the status they came from
    sampler: Sampler[Any] = Sampler(lambda: read_sample(redis, settings), min_interval=0)
    await sampler.refresh()
    registry = CollectorRegistry()
    registry.register(MemoryCollector(sampler))
    exposed = generate_latest(registry).decode()
    assert re.search(r'memory_worker_runs\{status="cancelled"\} 1\.0', exposed)
    assert re.search(r'memory_worker_runs_cancelled_total\{status="queued"\} 1\.0', exposed)

    again = await client.post(
        f"/runs/{run_id}", data={"action": "cancel", "csrf": csrf, "token": TOKEN}
    )
    assert again.status == 409  # cancelled already: said on the page, nothing changed
    assert "cancelled already" in await again.text()

    preview = await (await client.get(f"/runs/{run_id}?action=replay&preview=1")).text()
    assert "Attempts 0 → 0" in preview
    replayed = await client.post(
        f"/runs/{run_id}", data={"action": "replay", "csrf": csrf, "token": TOKEN}
    )
    assert replayed.status == 200
    assert 'id="run-done"' in await replayed.text()
    run = await runs.get(run_id)
    assert (run.status, run.attempts) == (RunStatus.FAILED, 0)
    assert [e.kind for e in run.error_log] == ["cancel", "replay"]
    events = await (await client.get("/events?type=console_run_replay")).text()
    assert run_id in events


async def test_an_unreadable_run_is_a_page_naming_its_fields_and_the_lists_still_show(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    """A hand-edited run hash (``chat_id`` no longer a number) made the run page a bare 500
    and, through the lists, every page that lists runs; the run page names the field (never
    its value), the action is refused the same way, and the runs list shows the others."""
    runs = RunStore(redis, settings)
    good = await queued_run(redis, settings)
    bad = (await runs.enqueue(make_request(78, hour=4))).run_id
    assert bad is not None
    canary = "canary-console-unreadable-9c1e"
    await redis.hset(runs.keys.run(bad), "chat_id", canary)
    client = await make_client(with_token(settings))
    page = await client.get(f"/runs/{bad}")
    text = await page.text()
    assert page.status == 500
    assert "chat_id: not a valid value" in text
    assert canary not in text
    csrf = await csrf_of(client)
    before = await dump_all(redis, settings.key_prefix)
    refused = await client.post(
        f"/runs/{bad}", data={"action": "cancel", "csrf": csrf, "token": TOKEN}
    )
    assert refused.status == 500
    assert canary not in await refused.text()
    assert await dump_all(redis, settings.key_prefix) == before
    listing = await client.get("/runs")
    listed = await listing.text()
    assert listing.status == 200
    assert good in listed
    assert canary not in listed
