"""What a tick does with a claimed run, behind one small interface.

``RunProcessor`` turns a claimed run into a :class:`ProcessResult` or raises;
the tick decides release vs fail from the exception's type (``runs.decide``).
The real processor is :mod:`memory_worker.consolidate` behind the routed
walker; :class:`FarmExtractionProcessor` is the minimal one (one extraction
call and one embedding call straight to the farm) used when consolidation is
switched off and by the pipeline benchmarks.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from llm_client.errors import DecodeError
from llm_client.transport import ChatTransport, EmbedTransport
from memory_worker.models import RunRequest
from memory_worker.run_store import ClaimedRun


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """Counts stored on the completed run, and continuation runs to enqueue first."""

    summary: dict[str, Any]
    continuations: list[RunRequest] = field(default_factory=list)


class RunProcessor(Protocol):
    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        """Process ``run`` before ``deadline`` (``time.monotonic()`` seconds)."""
        ...


class RouteGate(Protocol):
    async def blocked(self) -> bool:
        """True when a route the pipeline needs is entirely breaker-open right now."""
        ...


def extraction_payload(run: ClaimedRun) -> dict[str, Any]:
    """The user-message JSON of an extraction request (see the farm simulator contract)."""
    req = run.request
    return {
        "task": "memory_extraction",
        "run": {
            "id": run.id,
            "chat_id": req.chat_id,
            "thread_id": req.thread_id,
            "range_start": req.range_start.isoformat(),
            "range_end": req.range_end.isoformat(),
        },
        "messages": [
            {
                "message_id": m.message_id,
                "user_id": m.user_id,
                "sender_name": m.sender_name,
                "text": m.text,
                "sent_at": m.sent_at.isoformat(),
            }
            for m in req.messages
            if not m.is_bot and m.text.strip()
        ],
        "existing_cards": [],
    }


def decode_candidate_facts(content: str) -> tuple[list[str], Mapping[str, Any]]:
    """Fact texts of a §10 extraction answer; DecodeError when it is not one."""
    try:
        data = orjson.loads(content)
    except orjson.JSONDecodeError:
        raise DecodeError("decode memory extractor response: not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("candidate_cards"), list):
        raise DecodeError("decode memory extractor response: no candidate_cards")
    facts = [
        card["fact_text"]
        for card in data["candidate_cards"]
        if isinstance(card, dict) and isinstance(card.get("fact_text"), str) and card["fact_text"]
    ]
    return facts, data


class FarmExtractionProcessor:
    """One extraction and one embedding call; stores counts on the run."""

    def __init__(
        self,
        chat: ChatTransport,
        embed: EmbedTransport,
        *,
        model: str,
        dimension: int,
        max_tokens: int = 4000,
    ) -> None:
        self.chat = chat
        self.embed = embed
        self.model = model
        self.dimension = dimension
        self.max_tokens = max_tokens

    async def __call__(self, run: ClaimedRun, *, deadline: float) -> ProcessResult:
        request = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": "Extract durable memory cards as JSON."},
                {"role": "user", "content": orjson.dumps(extraction_payload(run)).decode()},
            ],
            "temperature": 0.2,
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        answer = await self.chat.chat(
            request,
            idempotency_key=f"{run.id}:{run.token}:extract",
            timeout=max(deadline - time.monotonic(), 0.001),
        )
        facts, data = decode_candidate_facts(answer.content)
        vectors = 0
        if facts:
            embedded = await self.embed.embed(
                facts,
                dimension=self.dimension,
                idempotency_key=f"{run.id}:{run.token}:embed",
                timeout=max(deadline - time.monotonic(), 0.001),
            )
            vectors = len(embedded.embeddings)
        return ProcessResult(
            summary={
                "cards": len(facts),
                "vectors": vectors,
                "topics": len(data.get("topics") or []),
            }
        )
