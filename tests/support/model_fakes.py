"""Deterministic stand-ins for the LLM and the embedder.

- :class:`HashEmbedder` — bag of character trigrams hashed into ``dim``
  buckets, L2-normalised: rewordings land close, unrelated texts far.
- :class:`ScriptedExtractor` — replays scripted assistant answers in order,
  like an oracle that read the prompt: ``@card(subject=…;predicate=…)``
  placeholders are replaced by the alias the prompt showed for that card
  (a placeholder whose card was not shown fails the test: the pipeline did
  not give the model the context it needed). Every request is recorded.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llm_client import ChatResult, LLMError

_PLACEHOLDER = re.compile(r"@card\(([^)]*)\)")


def hash_vector(text: str, dim: int) -> list[float]:
    """A deterministic unit vector of ``text`` (hashed character trigrams)."""
    folded = f"  {text.casefold()}  "
    vector = [0.0] * dim
    for i in range(len(folded) - 2):
        digest = hashlib.blake2b(folded[i : i + 3].encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dim
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


@dataclass
class HashEmbedder:
    """Embeds with :func:`hash_vector`; can fail with ``error`` from call ``fail_on`` (1-based)."""

    dim: int = 64
    error: LLMError | None = None
    fail_on: int = 1
    calls: list[list[str]] = field(default_factory=list)

    async def __call__(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        self.calls.append(list(texts))
        if self.error is not None and len(self.calls) >= self.fail_on:
            raise self.error
        return [hash_vector(text, self.dim) for text in texts]


def _resolve(value: Any, cards: Sequence[Mapping[str, Any]]) -> Any:
    if isinstance(value, dict):
        return {k: _resolve(v, cards) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, cards) for v in value]
    if not isinstance(value, str):
        return value
    match = _PLACEHOLDER.fullmatch(value)
    if not match:
        return value
    wanted = dict(part.split("=", 1) for part in match.group(1).split(";") if part)
    found = [
        card
        for card in cards
        if all(str(card.get(k, "")).casefold() == v.casefold() for k, v in wanted.items())
    ]
    if len(found) != 1:
        raise AssertionError(f"prompt shows {len(found)} cards matching {wanted}: {cards}")
    return found[0]["id"]


@dataclass
class ScriptedExtractor:
    """Answers each call with the next scripted item (dict → JSON, str → raw, error → raised)."""

    script: list[Any]
    requests: list[dict[str, Any]] = field(default_factory=list)
    payloads: list[dict[str, Any]] = field(default_factory=list)
    workflows: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    async def __call__(
        self,
        request: Mapping[str, Any],
        *,
        workflow: str,
        idempotency_key: str,
        timeout: float | None,
    ) -> ChatResult:
        self.requests.append(dict(request))
        self.workflows.append(workflow)
        self.keys.append(idempotency_key)
        payload = json.loads(request["messages"][-1]["content"])
        self.payloads.append(payload)
        if not self.script:
            raise AssertionError("the extractor was called more often than scripted")
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, dict) and set(item) == {"raw"}:
            content = item["raw"]
        else:
            shown = payload.get("existing_cards") or payload.get("cards") or []
            content = json.dumps(_resolve(item, shown), ensure_ascii=False)
        return ChatResult(content=content, prompt_tokens=100, completion_tokens=50)

    def prompt_message_ids(self) -> list[int]:
        return [m["message_id"] for p in self.payloads for m in p.get("messages", [])]
