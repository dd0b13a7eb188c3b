"""What a transport answers, and the protocols the router calls.

Three transports exist: the farm's Discovery job API (``llm_client._transport.discovery``),
direct OpenAI-compatible chat completions (``llm_client._transport.openai_compat``) and,
for embeddings only, the in-process e5 model (``llm_client._transport.local_embed``).
All raise only ``llm_client._errors`` types, so the router and the classifier
never know which one served an attempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

import httpx


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Budgets and identity of one client (seconds)."""

    base_url: str
    request_timeout: float = 30.0
    task_timeout: float = 720.0
    capacity_wait: float = 60.0
    capacity_poll: float = 1.0
    job_poll: float = 1.0
    priority: int = 10


@dataclass(frozen=True, slots=True)
class UpstreamResponse:
    """A backend's HTTP answer, as relayed by the farm (body already base64-decoded)."""

    status_code: int
    body: bytes
    content_type: str = "application/json"
    job_id: str | None = None


@dataclass(frozen=True, slots=True)
class ChatResult:
    """The assistant message of a chat completion."""

    content: str
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    job_id: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EmbedResult:
    """One vector per input text, in input order."""

    embeddings: list[list[float]]
    dimension: int
    job_id: str | None = None
    #: The model that made the vectors, when the transport knows it (the local one does).
    model: str | None = None


class ChatTransport(Protocol):
    """Sends one OpenAI-style chat request to one target."""

    async def chat(
        self,
        request: Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> ChatResult:
        """``timeout`` (seconds) caps the whole call, e.g. at the caller's deadline."""
        ...


class EmbedTransport(Protocol):
    """Embeds texts on one target."""

    async def embed(
        self,
        texts: Sequence[str],
        *,
        dimension: int,
        task_description: str | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> EmbedResult: ...


class OwnedHttp:
    """An httpx client that a transport either borrowed or created (and then closes)."""

    def __init__(self, http: httpx.AsyncClient | None, *, timeout: float) -> None:
        self._owns_http = http is None
        self._http = http if http is not None else httpx.AsyncClient(timeout=timeout)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections (only when this client created them)."""
        if self._owns_http:
            await self._http.aclose()
