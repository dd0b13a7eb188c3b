"""Route targets → transport clients: the protocol the walker needs and the real factory.

:class:`ClientFactory` builds (and caches) a Discovery, OpenAI-compatible or
local-embedding client per target, with the target's budget overrides on
top of the workflow's template.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

import httpx

from llm_client._routing.routes import RouteTarget
from llm_client._transport.base import ChatTransport, ClientConfig, EmbedTransport


class TransportFactory(Protocol):
    """Maps a route target to a transport client."""

    def chat(self, target: RouteTarget) -> ChatTransport: ...

    def embed(self, target: RouteTarget) -> EmbedTransport: ...


class ClientFactory:
    """Real clients per target (cached): Discovery or OpenAI-compatible.

    ``config`` is the template of budgets for chat clients and ``embed_config``
    (default: ``config``) the one for embedding clients — budgets are per
    workflow (§3: embeddings default to a 15 s task budget); each
    target's address and optional budget overrides are applied on top. Keys
    are read from the environment variable the target names in ``auth_env``.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        embed_config: ClientConfig | None = None,
        http: httpx.AsyncClient | None = None,
        env: Mapping[str, str] | None = None,
        local_concurrency: int = 1,
        local_threads: int | None = None,
    ) -> None:
        self._config = config
        self._local_concurrency = local_concurrency
        self._local_threads = local_threads
        self._embed_config = embed_config or config
        self._http = http
        self._env = env
        self._clients: dict[tuple[str, str], Any] = {}

    def _client_config(self, target: RouteTarget, *, embed: bool = False) -> ClientConfig:
        template = self._embed_config if embed else self._config
        config = replace(template, base_url=target.base_url or target.url or "")
        if target.request_timeout_seconds is not None:
            config = replace(config, request_timeout=target.request_timeout_seconds)
        if target.task_timeout_seconds is not None:
            config = replace(config, task_timeout=target.task_timeout_seconds)
        if target.capacity_wait_seconds is not None:
            config = replace(config, capacity_wait=target.capacity_wait_seconds)
        return config

    def _discovery(self, target: RouteTarget, *, embed: bool = False) -> Any:
        from llm_client._transport.discovery import DiscoveryClient

        return DiscoveryClient(
            self._client_config(target, embed=embed),
            service=target.service or "",  # both validated present by the route model
            endpoint=target.endpoint or "",
            api_key=target.api_key(self._env),
            http=self._http,
        )

    def chat(self, target: RouteTarget) -> ChatTransport:
        key = (target.id, "chat")
        if key not in self._clients:
            if target.transport == "openai":
                from llm_client._transport.openai_compat import OpenAICompatClient

                assert target.url
                self._clients[key] = OpenAICompatClient(
                    target.url,
                    api_key=target.api_key(self._env),
                    config=self._client_config(target),
                    http=self._http,
                )
            else:
                self._clients[key] = self._discovery(target)
        client: ChatTransport = self._clients[key]
        return client

    def embed(self, target: RouteTarget) -> EmbedTransport:
        key = (target.id, "embed")
        if key not in self._clients:
            if target.transport == "local":  # §16: in-process e5 (the local-embed extra)
                from llm_client._transport.local_embed import LocalEmbedClient

                self._clients[key] = LocalEmbedClient(
                    target.model,
                    self._client_config(target, embed=True),
                    concurrency=self._local_concurrency,
                    threads=self._local_threads,
                )
            else:
                self._clients[key] = self._discovery(target, embed=True)
        client: EmbedTransport = self._clients[key]
        return client

    async def aclose(self) -> None:
        """Close every client built so far."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            with contextlib.suppress(Exception):
                await client.aclose()
