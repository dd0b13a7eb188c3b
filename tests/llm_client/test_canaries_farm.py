"""No message text and no secret in what the busy family, Retry-After cooling and outlier
ejection leave behind (§6, §11): log lines, the routing-event stream, the outlier and
breaker keys, and the metrics scrape (its ejection gauges).

A farm simulator whose errors echo the prompt (message text, a password, a card number) and
a Redis URL with its password, on four faulty targets of one tier — flaky (ejected), busy
503 with a Retry-After (cooling), 429 whose Retry-After header is the echo itself, down —
beside a healthy one; a real walker with outlier ejection against a real Valkey. The
canaries are searched for in the raw bytes of every output.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from redis.asyncio import Redis

from llm_client import BreakerConfig, BreakerStore, EjectionConfig, EventType, OutlierStore
from memory_worker.farmsim import FarmSimulator
from memory_worker.keys import Keys
from memory_worker.ops.metrics import MemoryCollector, read_sample
from memory_worker.settings import Settings
from memory_worker.storage.sampling import Sampler
from tests.support.canaries import (
    FAULTS,
    echoing_farm_walks,
    leaking_lines,
    leaks,
    log_lines,
    stored_text,
)


async def test_busy_cooling_and_ejection_leave_no_echo_of_the_prompt(
    redis: Redis, settings: Settings, sim: FarmSimulator
) -> None:
    with log_lines() as logged:
        events = await echoing_farm_walks(redis, settings.key_prefix, sim)
    kinds = {(e.type, (e.target or "").split("/")[0]) for e in events}
    # every path was driven: the busy node cooled, the flaky one was ejected, the down one's
    # breaker opened, the limited one (its Retry-After unreadable) failed
    assert (EventType.TARGET_COOLING, "llm-busy") in kinds, sorted(kinds)
    assert (EventType.TARGET_EJECTED, "llm-flaky") in kinds, sorted(kinds)
    assert (EventType.CIRCUIT_OPENED, "llm-down") in kinds, sorted(kinds)
    assert (EventType.ATTEMPT_FAILED, "llm-limited") in kinds, sorted(kinds)

    text = logged.getvalue()
    assert '"routing.target_cooling"' in text
    assert '"routing.target_ejected"' in text
    assert leaking_lines(text) == []
    assert [e.as_dict() for e in events if leaks(repr(e.as_dict()))] == []
    assert leaking_lines(await stored_text(redis, settings.key_prefix)) == []  # every key

    keys = Keys(settings.key_prefix)
    targets = [f"llm-{s}/m" for s in [*FAULTS, "ok"]]
    breakers = BreakerStore(redis, keys, BreakerConfig())
    outliers = OutlierStore(redis, keys, EjectionConfig(window_seconds=30))

    async def sample() -> Any:
        return await read_sample(
            redis,
            settings,
            breakers=breakers,
            targets=targets,
            routes={"memory_extraction": targets},
            outliers=outliers,
        )

    sampler: Sampler[Any] = Sampler(sample, min_interval=0)
    await sampler.refresh()
    registry = CollectorRegistry()
    registry.register(MemoryCollector(sampler))
    exposed = generate_latest(registry).decode()
    assert "memory_worker_target_ejected" in exposed  # the gauges were read
    assert leaking_lines(exposed) == []
