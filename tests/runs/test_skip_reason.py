"""A skipped run says why (§13 run JSON, §15): forgotten, or an older prompt version.

User story: "a run I look up was skipped; the console called it an older prompt version
although the person had asked to be forgotten, and ``runs show`` said nothing". The reason
is stored with the run by the script that skips it — the claim (``prompt_version``) or the
forget (``forgotten``) — and shown by the console's run page and ``memory-worker runs show``
(text and JSON). Real Valkey, the real claim and forget scripts, the CLI as a process.
"""

from __future__ import annotations

import json
from typing import Any

from memory_worker.api import MemoryQueue
from memory_worker.keys import Keys
from memory_worker.models import RunStatus, SkipReason
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.storage.connections import RedisHandle
from tests.support.console import MakeClient
from tests.support.console import make_client as make_client  # the fixture
from tests.support.factories import make_request
from tests.support.harness import cli

FORGOTTEN_CHAT = 4040


async def _skipped_both_ways(redis: Any, settings: Settings) -> tuple[str, str]:
    store = RunStore(redis, settings)
    old = (await store.enqueue(make_request(1, prompt_version="memory_v0"))).run_id
    current = (await store.enqueue(make_request(1, hour=-1))).run_id
    claim = await store.claim("w")
    assert claim is not None
    assert claim.id == current
    gone = (await store.enqueue(make_request(FORGOTTEN_CHAT, hour=3))).run_id
    assert old is not None
    assert gone is not None
    await MemoryQueue(RedisHandle(redis, ""), settings).forget(FORGOTTEN_CHAT)
    return old, gone


async def test_the_skipping_script_stores_why(redis: Any, settings: Settings) -> None:
    old, gone = await _skipped_both_ways(redis, settings)
    store = RunStore(redis, settings)
    keys = Keys(settings.key_prefix)
    by_version, forgotten = await store.get(old), await store.get(gone)
    assert (by_version.status, by_version.skip_reason) == (
        RunStatus.SKIPPED,
        SkipReason.PROMPT_VERSION,
    )
    assert (forgotten.status, forgotten.skip_reason) == (RunStatus.SKIPPED, SkipReason.FORGOTTEN)
    assert await redis.hget(keys.run(old), "skip_reason") == b"prompt_version"
    assert await redis.hget(keys.run(gone), "skip_reason") == b"forgotten"
    queued = (await store.enqueue(make_request(2))).run_id
    assert (await store.get(queued or "")).skip_reason is None  # only a skipped run has one


async def test_the_console_run_page_says_why(
    redis: Any, settings: Settings, make_client: MakeClient
) -> None:
    old, gone = await _skipped_both_ways(redis, settings)
    client = await make_client(settings)
    by_version = await (await client.get(f"/runs/{old}")).text()
    forgotten = await (await client.get(f"/runs/{gone}")).text()
    assert 'id="run-skip-reason"><code>prompt_version</code>' in by_version
    assert "older prompt version" in by_version
    assert 'id="run-skip-reason"><code>forgotten</code>' in forgotten
    assert "was forgotten" in forgotten
    assert "older prompt version" not in forgotten[forgotten.index('id="run-skip-reason"') :]


async def test_runs_show_says_why(redis: Any, settings: Settings) -> None:
    old, gone = await _skipped_both_ways(redis, settings)
    text = cli(settings, "runs", "show", gone)
    assert text.returncode == 0, text.stderr
    assert "skip_reason: forgotten: its chat or person was forgotten" in text.stdout
    shown = cli(settings, "runs", "show", old, "--json")
    assert json.loads(shown.stdout)["skip_reason"] == "prompt_version"
    done = (await RunStore(redis, settings).enqueue(make_request(3))).run_id
    plain = cli(settings, "runs", "show", done or "")
    assert "skip_reason" not in plain.stdout
