"""The chaos soak's report for a drain that did not settle (bench/chaos.py): the pipeline's
state read from a real server, and the workers' last events without their fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.chaos import pipeline_snapshot, recent_events
from memory_worker.keys import Keys
from memory_worker.settings import Settings


async def test_the_snapshot_shows_each_tick_set_and_when_its_members_are_due(
    redis: Any, settings: Settings
) -> None:
    keys = Keys(settings.key_prefix)
    now_ms = await redis.time()
    due_ms = now_ms[0] * 1000 + 30_000
    await redis.zadd(keys.arq_queue, {"tick:probe": due_ms})
    await redis.zadd(keys.ticks_running, {"tick:stuck": due_ms})
    await redis.zadd(keys.queued, {"r1": 1, "r2": 2})
    await redis.hset(keys.pipeline_state, "deferred_since", "123")
    lines = await pipeline_snapshot(redis, keys)
    joined = "\n".join(lines)
    assert "arq queue: 1 ['tick:probe@+" in joined
    assert "ticks:running: 1 ['tick:stuck@+" in joined
    assert "ticks:queued: 0 []" in joined
    assert "runs:queued: 2" in lines
    assert "pipeline: {'deferred_since': '123'}" in lines


def test_recent_events_keep_time_worker_level_and_event_only(tmp_path: Path) -> None:
    canary = "CANARY-message-text"
    rows = [
        {"timestamp": "2026-01-01T00:00:02Z", "level": "info", "event": "run_claimed", "x": canary},
        {"timestamp": "2026-01-01T00:00:01Z", "level": "warning", "event": "redis_unavailable"},
    ]
    (tmp_path / "worker0.log").write_text(
        "not json\n" + "\n".join(json.dumps(r) for r in rows) + "\n[1, 2]\n"
    )
    (tmp_path / "worker1.log").write_text(json.dumps({"level": "info"}) + "\n")
    assert recent_events(tmp_path) == [
        "2026-01-01T00:00:01Z worker0 warning redis_unavailable",
        "2026-01-01T00:00:02Z worker0 info run_claimed",
    ]
    assert canary not in "".join(recent_events(tmp_path))
