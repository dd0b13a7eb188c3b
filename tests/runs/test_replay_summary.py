"""The retired-run summary (§11): the replay preview reads counts and one page, never every
run, and what it shows is what reading every run would show.

Random sequences of retire / replay / retention / "an older release retired this" run through
the real scripts on Valkey; after each step the summary must equal the truth read run by run,
and every counts-answered preview must equal the preview of a full plan.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from memory_worker.cards import CardStore
from memory_worker.keys import Keys
from memory_worker.privacy.forget import parse_scope
from memory_worker.runs import RunStore
from memory_worker.runs.policy import FailurePlan
from memory_worker.runs.replay import ReplayFilter, ReplayPreview, ReplayScope, ReplayStore
from memory_worker.runs.replay_summary import count_matches, facts_value, parse_counts, parse_facts
from memory_worker.settings import Settings
from memory_worker.upkeep.forgetter import Forgetter
from memory_worker.upkeep.maintenance import bound_growth
from memory_worker.wiring import replay_store
from tests.support.factories import make_request, retired_candidate
from tests.support.harness import cli

DAY = 86_400_000
T0 = int(datetime(2026, 6, 1, tzinfo=UTC).timestamp() * 1000)
CODES = ("UPSTREAM_ERROR", "task_timeout", "DecodeError")
REASONS = ("provider_timeout", "backend_unavailable", None)
RETIRE = FailurePlan(retire=True, next_attempt_at_ms=None)


@pytest.fixture
def s(settings: Settings) -> Settings:
    return settings.model_copy(update={"retired_run_message_retention_days": 2.0})


async def retire(store: RunStore, i: int, at_ms: int, code: str, reason: str | None) -> str:
    enqueued = await store.enqueue(make_request(1000 + i), at_ms=at_ms)
    assert enqueued.run_id is not None
    while True:  # a replayed run waiting in the retry bucket is claimed first: retire it again
        claim = await store.claim("w", at_ms=at_ms)
        assert claim is not None
        assert await store.fail(claim, RETIRE, code=code, reason=reason, message="x", at_ms=at_ms)
        if claim.id == enqueued.run_id:
            return claim.id


async def truth(replay: ReplayStore) -> dict[str, tuple[str, bool]]:
    """Every retired run read the slow way: id → (facts value, has messages)."""
    every = await replay.read_every_run(ReplayFilter(), "-inf", "+inf", 2000)
    return {
        c.id: (
            facts_value(c.code, c.reason, c.chat_id, c.prompt_version, c.attempts),
            c.has_messages,
        )
        for c in every
    }


async def summary_state(redis: Any, keys: Keys) -> dict[str, tuple[str, bool]]:
    facts = {k.decode(): v.decode() for k, v in (await redis.hgetall(keys.retired_facts)).items()}
    aged = {m.decode() for m in await redis.zrange(keys.retired_aged, 0, -1)}
    return {run_id: (value, run_id not in aged) for run_id, value in facts.items()}


async def check(replay: ReplayStore, redis: Any, keys: Keys, now_ms: int) -> None:
    assert await replay.summary.ready()
    assert await summary_state(redis, keys) == await truth(replay)
    # the counts are the facts, counted
    raw = {k.decode(): v.decode() for k, v in (await redis.hgetall(keys.retired_counts)).items()}
    counts = parse_counts(raw)
    state = await summary_state(redis, keys)
    expected_total: dict[tuple[str | None, str | None], int] = {}
    expected_aged: dict[tuple[str | None, str | None], int] = {}
    for value, has_messages in state.values():
        facts = parse_facts(value)
        pair = (facts.code, facts.reason)
        expected_total[pair] = expected_total.get(pair, 0) + 1
        if not has_messages:
            expected_aged[pair] = expected_aged.get(pair, 0) + 1
    assert (counts.total, counts.aged) == (expected_total, expected_aged)
    # every counts-answered preview equals the full plan's
    for wanted in (
        ReplayFilter(),
        ReplayFilter(error_code="upstream_error"),
        ReplayFilter(reason="provider_timeout"),
        ReplayFilter(error_code="task_timeout", reason="backend_unavailable"),
    ):
        fast = await replay.preview(wanted, now_ms=now_ms, rate_per_second=2.0)
        full = ReplayPreview.of_plan(await replay.plan(wanted, now_ms=now_ms, rate_per_second=2.0))
        assert (fast.matched, fast.by_code, fast.by_reason, fast.aged_out_count) == (
            full.matched,
            full.by_code,
            full.by_reason,
            full.aged_out_count,
        )
        assert fast.last_available_ms == full.last_available_ms
        assert {r.run_id for r in fast.aged_out} <= {r.run_id for r in full.aged_out}
        assert len(fast.aged_out) == min(20, full.aged_out_count)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_the_summary_always_equals_reading_every_run(
    s: Settings, redis: Any, seed: int
) -> None:
    rng = random.Random(seed)
    store, replay, keys = RunStore(redis, s), replay_store(redis, s), Keys(s.key_prefix)
    now, made = T0, 0
    seen: set[str] = set()
    for _ in range(40):
        op = rng.choice(
            ["retire", "retire", "retire", "replay", "age", "upgrade", "deleted", "forget"]
        )
        now += rng.randint(1, 12) * 3_600_000
        if op == "retire":
            await retire(store, made, now, rng.choice(CODES), rng.choice(REASONS))
            made += 1
        elif op == "replay":
            wanted = ReplayFilter(error_code=rng.choice(CODES))
            await replay.apply(await replay.plan(wanted, now_ms=now))
        elif op == "age":
            await store.prune(at_ms=now)
        elif op == "forget":  # §14: a forgotten chat's retired run is skipped, not replayable
            ids = [m.decode() for m in await redis.zrange(keys.retired, 0, -1)]
            if ids:
                chat = (await store.get(rng.choice(ids))).chat_id
                await Forgetter(redis, s).forget(parse_scope(chat, None), actor="test")
        else:
            if op == "upgrade":  # retired by a release that kept no summary
                await redis.delete(*keys.retired_summary)
            else:  # a run deleted by something that did not keep the summary
                ids = [m.decode() for m in await redis.zrange(keys.retired, 0, -1)]
                for run_id in rng.sample(ids, k=min(len(ids), 1)):
                    await redis.zrem(keys.retired, run_id)
                    await redis.delete(keys.run(run_id), keys.run_errors(run_id))
            # meanwhile the preview reads every run, and is still right
            full = await replay.plan(ReplayFilter(), now_ms=now)
            assert len(full.items) == sum(has for _, has in (await truth(replay)).values())
            await bound_growth(replay, CardStore(redis, keys), s, now=_dt(now))
        await check(replay, redis, keys, now)
        seen.add(op)
        if await redis.zcard(keys.retired_aged):
            seen.add("some aged")
    assert seen >= {
        "retire",
        "replay",
        "age",
        "some aged",
        "forget",
    }  # the sequence covered each step


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def test_counts_by_code_and_reason_leave_out_aged_runs() -> None:
    counts = parse_counts(
        {
            "n\tUPSTREAM_ERROR\tprovider_timeout": "5",
            "aged\tUPSTREAM_ERROR\tprovider_timeout": "2",
            "n\tDecodeError\t": "1",
            "n\tx\ty": "0",
        }
    )
    by_code, by_reason, aged = count_matches(counts, code=None, reason=None)
    assert (dict(by_code), dict(by_reason), aged) == (
        {"UPSTREAM_ERROR": 3, "DecodeError": 1},
        {"provider_timeout": 3, "-": 1},
        2,
    )
    by_code, _, aged = count_matches(counts, code="decodeerror", reason=None)
    assert (dict(by_code), aged) == ({"DecodeError": 1}, 0)


async def test_a_run_whose_text_aged_out_says_so_and_is_not_replayed(
    s: Settings, redis: Any
) -> None:
    store = RunStore(redis, s)
    old = await retire(store, 1, T0, "UPSTREAM_ERROR", "provider_timeout")
    fresh = await retire(store, 2, T0 + 2 * DAY, "UPSTREAM_ERROR", "provider_timeout")
    pruned = await store.prune(at_ms=T0 + 3 * DAY)  # retention 2 days: only the old one
    assert pruned.retired_messages == 1

    dry = cli(s, "replay", "--dry-run", "--error-code", "UPSTREAM_ERROR")
    assert dry.returncode == 0, dry.stderr
    assert "1 matching run(s) cannot be replayed: their messages aged out" in dry.stdout
    line = next(x for x in dry.stdout.splitlines() if old in x)
    assert "text aged out at 2026-06-04 00:00:00 UTC" in line
    assert "can no longer be replayed" in line

    doc = json.loads(cli(s, "replay", "--dry-run", "--json").stdout)
    assert [r["id"] for r in doc["runs"]] == [fresh]
    assert doc["aged_out"] == [
        {
            "id": old,
            "chat_id": 1001,
            "code": "UPSTREAM_ERROR",
            "reason": "provider_timeout",
            "failed_at": "2026-06-01T00:00:00+00:00",
            "aged_out_at": "2026-06-04T00:00:00+00:00",
            "replayable": False,
        }
    ]
    done = json.loads(cli(s, "replay", "--yes", "--json").stdout)
    assert done["replayed"] == 1
    assert (await store.get(old)).retired
    # and once nothing replayable is left, the aged run is still named
    after = cli(s, "replay", "--dry-run")
    assert "No runs match: nothing to replay." in after.stdout
    assert old in after.stdout


async def test_the_preview_scope_failed_falls_back_to_reading_runs(s: Settings, redis: Any) -> None:
    store = RunStore(redis, s)
    await retire(store, 1, T0, "UPSTREAM_ERROR", None)
    replay = replay_store(redis, s)
    preview = await replay.preview(ReplayFilter(scope=ReplayScope.FAILED), now_ms=T0)
    assert (preview.matched, preview.by_code) == (1, {"UPSTREAM_ERROR": 1})


@pytest.mark.parametrize(
    "query", ["preview=1&code=upstream_error", "preview=1&chat=1001&since=3000d"]
)
async def test_the_console_preview_names_runs_whose_text_aged_out(
    s: Settings, redis: Any, query: str
) -> None:
    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    from memory_worker.console import add_console

    store = RunStore(redis, s)
    old = await retire(store, 1, T0, "UPSTREAM_ERROR", "provider_timeout")
    await retire(store, 2, T0 + 2 * DAY, "UPSTREAM_ERROR", "provider_timeout")
    await store.prune(at_ms=T0 + 3 * DAY)
    app = web.Application()
    add_console(app, redis, s)
    async with TestClient(TestServer(app)) as client:
        page = await client.get(f"/replay?{query}")
        text = await page.text()
    assert page.status == 200
    assert re.search(r'id="aged-count">1<', text)
    assert "can no longer be replayed: their messages aged out" in text
    assert f'href="/runs/{old}"' in text
    assert "2026-06-04" in text  # when its text aged out
    matched = 0 if "chat=1001" in query else 1  # chat 1001 holds only the aged run
    assert re.search(rf'id="matched">{matched}<', text)


def test_a_plan_names_the_matching_runs_whose_text_aged_out() -> None:
    from memory_worker.runs.replay import plan

    base = retired_candidate("a", 1, T0, "provider_timeout")
    gone = replace(base, id="b", has_messages=False, aged_at_ms=T0 + DAY)
    other = replace(gone, id="c", code="DecodeError")
    replay = plan([gone, base, other], ReplayFilter(error_code="upstream_error"), now_ms=T0)
    assert [i.run_id for i in replay.items] == ["a"]
    assert [(r.run_id, r.aged_at_ms) for r in replay.aged_out] == [("b", T0 + DAY)]
    preview = ReplayPreview.of_plan(replay)
    assert (preview.matched, preview.aged_out_count) == (1, 1)


async def test_retention_drops_every_run_that_shares_the_watermarks_millisecond(
    s: Settings, redis: Any
) -> None:
    store = RunStore(redis, s)
    ids = [await retire(store, i, T0, "UPSTREAM_ERROR", None) for i in range(5)]
    pruned = await store.prune(at_ms=T0 + 3 * DAY, batch=2)
    assert pruned.retired_messages == 5  # a full batch takes the rest of its millisecond
    keys = Keys(s.key_prefix)
    assert not any([await redis.hexists(keys.run(i), "messages") for i in ids])
    assert await redis.zcard(keys.retired_aged) == 5
