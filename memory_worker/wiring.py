"""Assembles a worker's pipeline from the settings (the composition root).

Kept apart from ``worker.py`` so the arq glue stays free of transport,
routing and consolidation imports, and tests can build pipelines with
their own processors.
"""

from __future__ import annotations

from arq.connections import ArqRedis

from llm_client.transport import ClientConfig
from memory_worker.processing import FarmExtractionProcessor
from memory_worker.settings import Settings
from memory_worker.worker import Pipeline


def client_config(settings: Settings, base_url: str | None = None) -> ClientConfig:
    return ClientConfig(
        base_url=base_url or settings.discovery_base_url,
        request_timeout=settings.request_timeout_seconds,
        task_timeout=settings.task_timeout_seconds,
        capacity_wait=settings.capacity_wait_seconds,
        capacity_poll=settings.capacity_poll_seconds,
        job_poll=settings.job_poll_seconds,
        priority=settings.discovery_priority,
    )


async def build_default_pipeline(settings: Settings, redis: ArqRedis) -> Pipeline:
    """Extraction and embedding straight to ``DISCOVERY_BASE_URL``."""
    from llm_client.discovery import DiscoveryClient

    config = client_config(settings)
    chat = DiscoveryClient(
        config, service=settings.extraction_service, endpoint=settings.extraction_endpoint
    )
    embed = DiscoveryClient(
        config, service=settings.embedder_service, endpoint=settings.embedder_endpoint
    )
    processor = FarmExtractionProcessor(
        chat,
        embed,
        model=settings.extraction_model,
        dimension=settings.embedding_dimension,
        max_tokens=settings.extraction_max_output_tokens,
    )
    pipeline = Pipeline(settings=settings, redis=redis, processor=processor)
    pipeline.closers.extend([chat.aclose, embed.aclose])
    return pipeline
