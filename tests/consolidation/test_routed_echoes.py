"""A farm that quotes its input back in an error leaves none of it in the error the run keeps
(§11, §14): the worker's routed chat call and embedder strip what a farm answer echoed of the
call's inputs — the senders' names and the chat's known cards in the prompt, the card texts
given to the embedder — from every error of the chain, before the run's error log and its
route's last error (admin pages) keep it.

The run store strips the run's own message texts; the rest of the prompt is known only here.
"""

from __future__ import annotations

from typing import Any

import pytest

from llm_client import LLMError, Upstream
from memory_worker.farmsim import FarmSimulator
from memory_worker.privacy.masking import ECHO, forget_echoes
from memory_worker.settings import Settings
from tests.support.canaries import (
    CARD_TEXT,
    PROMPT_REQUEST,
    WF,
    echoing_models,
    leaks,
)


def chain(error: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    cause: BaseException | None = error
    while cause is not None and cause not in found:
        found.append(cause)
        cause = cause.__cause__ or cause.__context__
    return found


async def test_a_chat_error_quoting_the_prompt_keeps_no_sender_or_card(
    redis: Any, settings: Settings, sim: FarmSimulator
) -> None:
    async with echoing_models(redis, settings, sim) as models:
        with pytest.raises(LLMError) as raised:
            await models.chat(PROMPT_REQUEST, workflow=WF, idempotency_key="k1", timeout=10)
    errors = chain(raised.value)
    assert any(isinstance(e, Upstream) and e.target for e in errors)  # the farm's own answer
    for error in errors:
        assert leaks(str(error)) == [], repr(error)
        assert leaks(repr(error.args)) == [], repr(error)
    assert any(ECHO in str(e) and "invalid request body" in str(e) for e in errors)


async def test_an_embedder_error_quoting_a_card_keeps_no_card_text(
    redis: Any, settings: Settings, sim: FarmSimulator
) -> None:
    async with echoing_models(redis, settings, sim) as models:
        with pytest.raises(LLMError) as raised:
            await models.embed([CARD_TEXT], idempotency_key="k2", timeout=10)
    errors = chain(raised.value)
    for error in errors:
        assert leaks(str(error)) == [], repr(error)
    assert any("too long for the model" in str(e) for e in errors)


def test_forget_echoes_walks_the_whole_chain_and_keeps_what_was_not_sent() -> None:
    inner = Upstream(f"400: bad input {CARD_TEXT!r}", code="HTTP_400", status_code=400)
    outer = LLMError(f"every target failed; last: {CARD_TEXT}")
    outer.__cause__ = inner
    forget_echoes(outer, [CARD_TEXT])
    assert str(outer) == f"every target failed; last: {ECHO}"
    assert str(inner) == f"400: bad input '{ECHO}'"
    assert outer.args == (str(outer),)
    assert (inner.status_code, inner.code) == (400, "HTTP_400")  # only the text changes
