"""The loopback farm simulator with the two clients consolidation calls (chat, embed)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import orjson

from llm_client import ChatResult, DiscoveryClient
from memory_worker.farmsim import FarmSimulator
from memory_worker.settings import Settings
from tests.support.simulator import sim_config


@dataclass
class FarmExtractor:
    client: DiscoveryClient
    #: Awaited after the farm answered and before the answer is handed back (tests pause here).
    hold: Callable[[], Awaitable[None]] | None = None

    async def __call__(
        self,
        request: Mapping[str, Any],
        *,
        workflow: str,
        idempotency_key: str,
        timeout: float | None,
    ) -> ChatResult:
        answer = await self.client.chat(request, idempotency_key=idempotency_key, timeout=timeout)
        if self.hold is not None:
            await self.hold()
        return answer


@dataclass
class FarmEmbedder:
    client: DiscoveryClient
    dimension: int

    async def __call__(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]:
        result = await self.client.embed(
            texts, dimension=self.dimension, idempotency_key=idempotency_key, timeout=timeout
        )
        return result.embeddings


@dataclass
class Farm:
    sim: FarmSimulator
    extractor: FarmExtractor
    embedder: FarmEmbedder


@asynccontextmanager
async def farm_for(settings: Settings, **options: Any) -> AsyncIterator[Farm]:
    """The simulator (``options``: its own, e.g. ``embedder="hashed"``) and both clients."""
    async with FarmSimulator(**options) as sim:
        # wide budgets: the simulator embeds in-process (e5 on a loaded 2-core host took > 5 s
        # for one submit); no test of this farm times a call out on purpose
        config = sim_config(sim, request_timeout=20.0, task_timeout=30.0, capacity_wait=0.5)
        chat = DiscoveryClient(
            config, service=settings.extraction_service, endpoint=settings.extraction_endpoint
        )
        embed = DiscoveryClient(
            config, service=settings.embedder_service, endpoint=settings.embedder_endpoint
        )
        try:
            yield Farm(sim, FarmExtractor(chat), FarmEmbedder(embed, settings.embedding_dimension))
        finally:
            await chat.aclose()
            await embed.aclose()


def everything_sent(sim: FarmSimulator, service: str | None = None) -> str:
    """Every body the farm received (of ``service``; None: all), decoded: the prompt JSON is a
    string inside the chat request's JSON, so each message's content is added as it is."""
    texts = []
    for body in sim.received(service):
        texts.append(body.decode())
        for message in orjson.loads(body).get("messages", []):
            texts.append(str(message.get("content", "")))
    return "\n".join(texts)
