"""How the gate's state and limits travel to and from Redis (pure: no I/O).

The gate lives in the target's breaker hash (``llm_client._breaker.store``): fields
``cool_until``, ``tat`` (µs), ``tok_day``, ``tok_used``, the latency windows ``lw``,
``ls``, ``lc``, ``ps``, ``pc`` and the histogram buckets ``lb0`` … ``lb11``; its
in-flight slots are a ZSET beside it (member = slot token, score = lease expiry in ms).
A script receives a target's limits as four integers (0 = none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llm_client._gateway.model import (
    LATENCY_BUCKETS_MS,
    Gate,
    GatewayConfig,
    Latency,
    TargetLimits,
    rate_interval_us,
    rate_tolerance_us,
)
from llm_client._redis_text import as_text

#: The hash fields of the latency histogram, bucket by bucket (the last is +Inf).
BUCKET_FIELDS: tuple[str, ...] = tuple(f"lb{i}" for i in range(len(LATENCY_BUCKETS_MS) + 1))


def limit_args(limits: TargetLimits, config: GatewayConfig) -> list[int]:
    """A target's limits as a script's four ARGV integers."""
    rpm = limits.requests_per_minute
    return [
        limits.max_in_flight or 0,
        rate_interval_us(rpm) if rpm else 0,
        rate_tolerance_us(rpm, config.rate_burst) if rpm else 0,
        limits.tokens_per_day or 0,
    ]


def latency_from(values: Sequence[int]) -> Latency:
    """``lw, ls, lc, ps, pc`` as read by a script."""
    window, cur_sum, cur_count, prev_sum, prev_count = (int(x) for x in values)
    return Latency(window, cur_sum, cur_count, prev_sum, prev_count)


def gate_from(fields: Mapping[str, int], slots: Sequence[Any] = ()) -> Gate:
    """The gate stored in a breaker hash (``fields``: its integer fields by name) and its
    slot set (``ZRANGE … WITHSCORES`` reply)."""
    return Gate(
        cool_until_ms=fields.get("cool_until", 0),
        tat_us=fields.get("tat", 0),
        tok_day=fields.get("tok_day", 0),
        tok_used=fields.get("tok_used", 0),
        slots={
            as_text(slots[i]): int(float(as_text(slots[i + 1]))) for i in range(0, len(slots), 2)
        },
        latency=latency_from([fields.get(f, 0) for f in ("lw", "ls", "lc", "ps", "pc")]),
        buckets={
            i: fields[name] for i, name in enumerate(BUCKET_FIELDS) if fields.get(name, 0) > 0
        },
    )
