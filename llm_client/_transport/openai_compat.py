"""Direct OpenAI-compatible chat completions (Ollama, vLLM, llama.cpp, OpenRouter), §3.

The second transport: one ``POST …/chat/completions`` per call, with the
provider's bearer token on that request (here the provider *is* the server).
It raises the same ``llm_client`` errors as the Discovery client, so routing
and the retry classifier never know which transport served an attempt:

- non-2xx → :class:`Upstream` with the status and the provider's error text,
  plus ``retry_after`` (from ``Retry-After``) kept as an attribute and a hint;
- an empty or undecodable 2xx body → :class:`EmptyResponse` / :class:`DecodeError`;
- connection failures → :class:`Transport` (a connect timeout is a
  :class:`RequestTimeout` of ``request_timeout``);
- the single POST carries the whole generation, so it gets the *task* budget
  (capped by the caller's ``timeout``); its expiry is a :class:`TaskTimeout`.

Asynchronous (HTTP 202) answers are not supported; memory work never streams.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import httpx

from llm_client._edge import dumps, loads_or_missing, mapped
from llm_client._errors import DecodeError, LLMError, TaskTimeout, Upstream
from llm_client._log import get_logger
from llm_client._transport.base import ChatResult, ClientConfig, OwnedHttp, UpstreamResponse
from llm_client._transport.envelope import chat_result
from llm_client._transport.error_text import body_error_text, clip
from llm_client._transport.retry_after import retry_after_seconds

log = get_logger(__name__)

_CHAT_PATH: Final = "/chat/completions"


def chat_completions_url(url: str) -> str:
    """Normalise a provider URL so its path ends in ``/chat/completions``.

    A bare host gets ``/v1/chat/completions``; ``…/v1`` gets ``/chat/completions``
    appended; a URL already ending in ``/chat/completions`` is kept.
    """
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    if not path:
        path = "/v1" + _CHAT_PATH
    elif not path.endswith(_CHAT_PATH):
        path += _CHAT_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _provider_error_type(body: bytes) -> str | None:
    """OpenRouter's ``error.metadata.error_type`` hint, when present."""
    data = loads_or_missing(body)
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    metadata = error.get("metadata") if isinstance(error, dict) else None
    kind = metadata.get("error_type") if isinstance(metadata, dict) else None
    return clip(kind, 80) if isinstance(kind, str) and kind.strip() else None


def status_error(
    status_code: int,
    body: bytes,
    retry_after: str | None,
    *,
    now: float | None = None,
    date: str | None = None,
) -> Upstream:
    """A non-2xx provider answer: ``chat completions: status N: text (hints)``.

    ``retry_after`` is the answer's ``Retry-After`` header as sent, read per RFC 9110
    (:mod:`~llm_client._transport.retry_after`, against its ``date`` header or ``now``)."""
    text = body_error_text(body)
    seconds = retry_after_seconds(retry_after, now=now, date=date)
    error_type = _provider_error_type(body)
    hints = []
    if seconds is not None:
        hints.append(f"retry_after_seconds={seconds:g}")
    if error_type:
        hints.append(f"openrouter_error_type={error_type}")
    message = f"chat completions: status {status_code}"
    if text:
        message += f": {text}"
    if hints:
        message += f" ({' '.join(hints)})"
    return Upstream(
        message, code=f"HTTP_{status_code}", status_code=status_code, retry_after=seconds
    )


class OpenAICompatClient(OwnedHttp):
    """Calls one OpenAI-compatible chat-completions endpoint; a ``ChatTransport``."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        config: ClientConfig,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.url = chat_completions_url(url)
        self._config = config
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        super().__init__(http, timeout=config.task_timeout)

    def __repr__(self) -> str:
        return f"OpenAICompatClient(url={self.url!r})"

    async def chat(
        self,
        request: Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> ChatResult:
        """One chat completion (``stream`` is always false)."""
        started = time.monotonic()
        try:
            result = await self._chat(request, idempotency_key, timeout)
        except LLMError as exc:
            log.info(
                "openai_compat.call_failed",
                url=self.url,
                error=exc.kind,
                code=exc.code,
                elapsed_ms=int((time.monotonic() - started) * 1000),
            )
            raise
        log.debug(
            "openai_compat.call_succeeded",
            url=self.url,
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )
        return result

    async def _chat(
        self, request: Mapping[str, Any], idempotency_key: str | None, timeout: float | None
    ) -> ChatResult:
        config = self._config
        payload = dumps({**request, "stream": False}, "encode chat request")
        headers = self._headers
        if idempotency_key:
            headers = {**headers, "X-Request-Id": idempotency_key}
        seconds = config.task_timeout if timeout is None else min(config.task_timeout, timeout)
        if seconds <= 0:
            raise TaskTimeout("chat completions: no time left before the call", seconds=0.0)
        by_caller = timeout is not None and timeout < config.task_timeout

        def expired() -> LLMError:
            why = (
                "cut by the caller's deadline" if by_caller else "no answer within the task budget"
            )
            return TaskTimeout(f"chat completions: {why} after {seconds:g}s", seconds=seconds)

        connect = min(config.request_timeout, seconds)
        with mapped(
            "chat completions", seconds=seconds, connect_seconds=connect, timeout_error=expired
        ):
            async with asyncio.timeout(seconds):
                answer = await self._http.post(
                    self.url,
                    content=payload,
                    headers=headers,
                    timeout=httpx.Timeout(seconds, connect=connect),
                )
        if not answer.is_success:
            raise status_error(
                answer.status_code,
                answer.content,
                answer.headers.get("retry-after"),
                now=time.time(),
                date=answer.headers.get("date"),
            )
        if answer.status_code == 202:
            raise DecodeError("chat completions: asynchronous (202) answers are not supported")
        response = UpstreamResponse(
            status_code=answer.status_code,
            body=answer.content,
            content_type=answer.headers.get("content-type", "application/json"),
        )
        result = chat_result(response, what="chat completions")
        completion_id = result.raw.get("id")
        return replace(result, job_id=completion_id) if isinstance(completion_id, str) else result
