"""Redis replies as text: the one bytes → str helper (llm_client and memory_worker share it)."""

from __future__ import annotations

from typing import Any


def as_text(value: Any) -> str:
    """A Redis reply value as text: bytes decoded (UTF-8), None as ``""``, anything else ``str``."""
    if isinstance(value, bytes):
        return value.decode()
    return "" if value is None else str(value)


def reply_pairs(reply: list[Any]) -> list[tuple[Any, Any]]:
    """``ZDIFF … WITHSCORES``: (member, score) pairs, whether or not the client paired them."""
    if reply and isinstance(reply[0], (list, tuple)):
        return [(m, sc) for m, sc in reply]
    return list(zip(reply[::2], reply[1::2], strict=True))
