"""Breaker scripts' replies decoded into the pure model's types (one place reads them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llm_client._breaker.model import BreakerState
from llm_client._gateway.model import Refusal
from llm_client._redis_text import as_text


def fields_of(raw_hash: Sequence[Any]) -> dict[str, int]:
    """A breaker hash's ``HGETALL`` reply (flat field, value list) as integers by field."""
    return {as_text(raw_hash[i]): int(as_text(raw_hash[i + 1])) for i in range(0, len(raw_hash), 2)}


def state_from(raw_hash: Sequence[Any], raw_window: Sequence[Any]) -> BreakerState:
    """The breaker's hash and its window (``ZRANGE … WITHSCORES``: ``seq:failed`` members
    scored by time) as the pure model's state."""
    fields = fields_of(raw_hash)
    window = tuple(
        (int(float(as_text(raw_window[i + 1]))), as_text(raw_window[i]).endswith(":1"))
        for i in range(0, len(raw_window), 2)
    )
    return BreakerState(
        opened=fields.get("opened", 0) == 1,
        generation=fields.get("gen", 0),
        consecutive=fields.get("consec", 0),
        trips=fields.get("trips", 0),
        opened_at_ms=fields.get("opened_at", 0),
        open_until_ms=fields.get("open_until", 0),
        probe_until_ms=fields.get("probe_until", 0),
        window=tuple(sorted(window)),
    )


def refusal_of(value: Any) -> Refusal | None:
    """A script's refusal text ('' = admitted) as a :class:`Refusal`."""
    text = as_text(value)
    return Refusal(text) if text else None
