"""Pure parts of the direct OpenAI-compatible client: URL normalisation, status errors."""

from __future__ import annotations

import pytest

from llm_client import ClientConfig, OpenAICompatClient, Upstream
from llm_client._transport.openai_compat import chat_completions_url, status_error


@pytest.mark.parametrize(
    ("url", "normalised"),
    [
        ("http://localhost:11434", "http://localhost:11434/v1/chat/completions"),
        ("http://localhost:11434/", "http://localhost:11434/v1/chat/completions"),
        ("http://vllm:8000/v1", "http://vllm:8000/v1/chat/completions"),
        ("http://vllm:8000/v1/", "http://vllm:8000/v1/chat/completions"),
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/chat/completions"),
        ("https://h/v1/chat/completions", "https://h/v1/chat/completions"),
        ("https://h/v1/chat/completions/", "https://h/v1/chat/completions"),
        (" http://h:1/x?y=1 ", "http://h:1/x/chat/completions?y=1"),
    ],
)
def test_chat_completions_url(url: str, normalised: str) -> None:
    assert chat_completions_url(url) == normalised


def test_status_error_keeps_status_text_and_hints() -> None:
    body = (
        b'{"error": {"message": "Rate limit exceeded", "metadata": {"error_type": "rate_limit"}}}'
    )
    error = status_error(429, body, "12")
    assert isinstance(error, Upstream)
    assert str(error) == (
        "chat completions: status 429: Rate limit exceeded "
        "(retry_after_seconds=12 openrouter_error_type=rate_limit)"
    )
    assert (error.status_code, error.retry_after, error.code) == (429, 12.0, "HTTP_429")


def test_status_error_without_body_or_hints() -> None:
    error = status_error(502, b"", None)
    assert str(error) == "chat completions: status 502"
    assert error.retry_after is None


async def test_repr_never_shows_the_api_key() -> None:
    async with OpenAICompatClient(
        "http://h", api_key="sk-SECRET", config=ClientConfig(base_url="")
    ) as client:
        assert "sk-SECRET" not in repr(client)
        assert client.url == "http://h/v1/chat/completions"
