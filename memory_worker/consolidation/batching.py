"""Token budgets: how much of a run one extraction call sees, and what is left for later (§10).

- :func:`estimate_tokens` — a tokenizer-free estimate that errs on the high
  side for Cyrillic and counts CJK per character (ASCII ≈ 4 chars a token).
- :func:`select_slice` — the part of a run that fits its message budget. The
  rest becomes a **continuation** run (same window, cursor after the last
  covered message) — :func:`continuation_request`. Noise messages cost
  nothing; a continuation that would hold only noise is not made, so every
  message is covered exactly once and no run is spent on spam.
- :func:`pack_batches` — the covered messages as extraction batches, each
  within the budget; a single message bigger than the budget is split at
  whitespace into parts (each part keeps its message id and says ``i/n``).

Selection depends only on the messages and the budget (never on the store),
so a retried run computes the same continuation and its natural key makes
the second enqueue a duplicate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from memory_worker.models import Cursor, Message, RunRequest

#: Share of the input budget spent on messages; the rest holds existing cards.
MESSAGE_SHARE = 0.75

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ASCII/4 + other/2 + CJK×1 (at least 1)."""
    if not text:
        return 1
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    cjk = len(_CJK.findall(text)) if non_ascii else 0
    ascii_chars = len(text) - non_ascii
    return max(1, math.ceil(ascii_chars / 4 + (non_ascii - cjk) / 2 + cjk))


def payload_tokens(value: Any) -> int:
    """Estimated tokens of ``value`` serialised as compact JSON."""
    return estimate_tokens(orjson.dumps(value).decode())


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message (or one part of an oversized message) as the extractor sees it."""

    message_id: int
    user_id: int
    sender_name: str
    text: str
    sent_at: datetime
    part: str | None = None

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "message_id": self.message_id,
            "user_id": self.user_id,
            "sender_name": self.sender_name,
            "text": self.text,
            "sent_at": self.sent_at.isoformat().replace("+00:00", "Z"),
        }
        if self.part is not None:
            data["part"] = self.part
        return data

    @property
    def tokens(self) -> int:
        return payload_tokens(self.payload()) + 1

    @classmethod
    def of(
        cls, message: Message, text: str | None = None, part: str | None = None
    ) -> PromptMessage:
        return cls(
            message_id=message.message_id,
            user_id=message.user_id,
            sender_name=message.sender_name,
            text=message.text if text is None else text,
            sent_at=message.sent_at,
            part=part,
        )


def message_tokens(message: Message) -> int:
    return PromptMessage.of(message).tokens


def message_order(message: Message) -> tuple[datetime, int]:
    """The order runs and cursors use: time, then message id."""
    return (message.sent_at, message.message_id)


def after_cursor(messages: Sequence[Message], cursor: Cursor | None) -> list[Message]:
    """``messages`` strictly after ``cursor``, in run order."""
    ordered = sorted(messages, key=message_order)
    if cursor is None:
        return ordered
    mark = (cursor.after_sent_at, cursor.after_message_id)
    return [m for m in ordered if message_order(m) > mark]


@dataclass(frozen=True, slots=True)
class RunSlice:
    """What one run covers now (``covered``, of which ``kept`` go to the extractor) and the rest."""

    covered: tuple[Message, ...]
    kept: tuple[Message, ...]
    rest: tuple[Message, ...]


def select_slice(
    messages: Sequence[Message],
    kept_ids: Collection[int],
    *,
    budget_tokens: int,
    max_messages: int,
) -> RunSlice:
    """The longest prefix of ``messages`` (run order) whose kept messages fit the budget.

    At least one kept message is always covered (an oversized one is split by
    :func:`pack_batches`). Noise is free. When nothing but noise is left
    after the prefix, the prefix takes it too.
    """
    covered: list[Message] = []
    kept: list[Message] = []
    used = 0
    cut = len(messages)
    for index, message in enumerate(messages):
        if message.message_id not in kept_ids:
            covered.append(message)
            continue
        cost = message_tokens(message)
        if kept and (used + cost > budget_tokens or len(kept) >= max_messages):
            cut = index
            break
        covered.append(message)
        kept.append(message)
        used += cost
    rest = list(messages[cut:])
    if rest and not any(m.message_id in kept_ids for m in rest):
        covered.extend(rest)
        rest = []
    return RunSlice(covered=tuple(covered), kept=tuple(kept), rest=tuple(rest))


def continuation_request(request: RunRequest, run_slice: RunSlice) -> RunRequest | None:
    """The run for ``run_slice.rest``: same window, cursor after the last covered message."""
    if not run_slice.rest or not run_slice.covered:
        return None
    last = run_slice.covered[-1]
    return RunRequest(
        chat_id=request.chat_id,
        thread_id=request.thread_id,
        range_start=request.range_start,
        range_end=request.range_end,
        prompt_version=request.prompt_version,
        cursor=Cursor(after_sent_at=last.sent_at, after_message_id=last.message_id),
        messages=list(run_slice.rest),
    )


def split_text(text: str, budget_tokens: int) -> list[str]:
    """``text`` cut into parts of at most ``budget_tokens`` each, at whitespace when possible.

    A cut moves back to the last whitespace if that keeps at least half the
    part; otherwise it cuts mid-word. Parts concatenate back to ``text``.
    """
    budget = max(1, budget_tokens)
    parts: list[str] = []
    rest = text
    while rest:
        if estimate_tokens(rest) <= budget:
            parts.append(rest)
            break
        low, high = 1, len(rest)
        while low < high:  # largest prefix length within the budget
            mid = (low + high + 1) // 2
            if estimate_tokens(rest[:mid]) <= budget:
                low = mid
            else:
                high = mid - 1
        cut = low
        space = max(rest.rfind(" ", 0, cut), rest.rfind("\n", 0, cut))
        if space + 1 >= cut // 2 and space > 0:
            cut = space + 1
        parts.append(rest[:cut])
        rest = rest[cut:]
    return parts


def _parts(message: Message, budget_tokens: int) -> list[PromptMessage]:
    whole = PromptMessage.of(message)
    if whole.tokens <= budget_tokens:
        return [whole]
    frame = PromptMessage.of(message, text="", part="99/99").tokens
    chunks = split_text(message.text, max(16, budget_tokens - frame))
    return [
        PromptMessage.of(message, text=chunk, part=f"{i}/{len(chunks)}")
        for i, chunk in enumerate(chunks, start=1)
    ]


def pack_batches(
    kept: Sequence[Message], *, budget_tokens: int, max_messages: int
) -> list[list[PromptMessage]]:
    """Greedy, order-preserving batches of ``kept`` within the budget and message cap."""
    batches: list[list[PromptMessage]] = []
    current: list[PromptMessage] = []
    used = 0
    for message in kept:
        for piece in _parts(message, budget_tokens):
            cost = piece.tokens
            if current and (used + cost > budget_tokens or len(current) >= max_messages):
                batches.append(current)
                current, used = [], 0
            current.append(piece)
            used += cost
    if current:
        batches.append(current)
    return batches
