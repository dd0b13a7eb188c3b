"""The farm calls a run makes: a chat call and an embedder, and texts embedded in checked chunks.

:class:`ChatCall` and :class:`Embedder` are what the consolidation and the
maintenance merge are given (the worker backs them with the routed walker,
tests with scripted fakes). :func:`embed_texts` embeds in chunks of
:data:`EMBED_CHUNK`, checks every answer's shape (a wrong count or dimension
is a :class:`~llm_client._errors.DecodeError`) and turns an embedder timeout
into :class:`~memory_worker.runs.policy.EmbedderTimeout` (the run is released).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from llm_client import (
    EMBEDDING,
    ChatResult,
    DeadlineExceeded,
    DecodeError,
    FailureReason,
    LLMError,
    retryable_reason,
)
from memory_worker.deadlines import call_timeout
from memory_worker.errors import EmbedderTimeout
from memory_worker.privacy.masking import mask

#: Texts per embedding call.
EMBED_CHUNK = 64


class ChatCall(Protocol):
    """Sends one chat request on a workflow's route (the routed walker in production).

    Extraction and the maintenance merge both use one.
    """

    async def __call__(
        self,
        request: Mapping[str, Any],
        *,
        workflow: str,
        idempotency_key: str,
        timeout: float | None,
    ) -> ChatResult: ...


class Vectors(list[list[float]]):
    """An embedder's answer: one vector per text, plus the id of the model that made them.

    ``model`` is None when the embedder does not say (test fakes, old callers); the
    card store then treats the vectors as of an unknown model (see ``memory_worker.cards``).
    """

    def __init__(self, rows: Iterable[list[float]] = (), model: str | None = None) -> None:
        super().__init__(rows)
        self.model = model


def vectors_model(answer: Sequence[Sequence[float]]) -> str | None:
    """The model an embedder's answer names (None: it does not say)."""
    return answer.model if isinstance(answer, Vectors) else None


class Embedder(Protocol):
    """Embeds texts (one vector per text, in order) on the ``embedding`` route.

    May answer :class:`Vectors` to say which model made them. Everything a run
    embeds is a passage (no task description), the related-card query too: a
    chat excerpt against cards is statement against statement, and the meaning
    suite measured it better so (e5 recall@5 1.00 for messages embedded as
    passages, 0.92 with e5's ``query:`` prefix; ``bench/meaning.py``).
    """

    async def __call__(
        self, texts: Sequence[str], *, idempotency_key: str, timeout: float | None
    ) -> list[list[float]]: ...


def is_embedder_timeout(error: LLMError) -> bool:
    """Whether an embedding call's ``error`` is a timeout of the embedder (not the run's
    deadline): its task budget, an UPSTREAM_TIMEOUT, a walker cap."""
    if isinstance(error, DeadlineExceeded | EmbedderTimeout):
        return False
    return retryable_reason(error) is FailureReason.PROVIDER_TIMEOUT


def _all_finite(vector: Sequence[float]) -> bool:
    """Every component is finite. A finite sum proves it in one C loop (a NaN or an
    infinity makes the sum non-finite); only a sum that overflowed checks one by one."""
    return math.isfinite(sum(vector)) or all(math.isfinite(x) for x in vector)


async def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    key: str,
    dimension: int,
    deadline: float | None,
    contacts: bool,
) -> tuple[Vectors, int]:
    """Vectors for ``texts`` (chunked calls) and the number of calls; checks the answer's shape.

    Every text is masked for the farm first (secrets, card numbers; with ``contacts``
    e-mail addresses and phone numbers: ``MEMORY_REDACT_CONTACTS``, §14).

    The answer's ``model`` is the first chunk's; should a later chunk come from
    another model (a failover mid-run), its vectors are left empty (``[]``: the
    card is stored without one) rather than mixed into the chat's space.
    """
    vectors = Vectors()
    models: list[str | None] = []
    calls = 0
    for start in range(0, len(texts), EMBED_CHUNK):
        chunk = [mask(t, contacts=contacts) for t in texts[start : start + EMBED_CHUNK]]
        try:
            answer = await embedder(
                chunk,
                idempotency_key=f"{key}:{start // EMBED_CHUNK}",
                timeout=call_timeout(deadline, EMBEDDING),
            )
        except LLMError as exc:
            # §7: the embedder is a side service; its timeout releases the run
            # (the run's own deadline, DeadlineExceeded, still fails it).
            if is_embedder_timeout(exc):
                raise EmbedderTimeout(f"embedding call timed out ({exc.kind})") from exc
            raise
        calls += 1
        if len(answer) != len(chunk):
            raise DecodeError(
                f"decode embedding response: {len(answer)} vectors for {len(chunk)} texts",
                code="embedding_decode",
            )
        for vector in answer:
            if len(vector) != dimension or not _all_finite(vector):
                raise DecodeError(
                    f"decode embedding response: vector of dimension {len(vector)}, "
                    f"expected {dimension}",
                    code="embedding_decode",
                )
        models.append(vectors_model(answer))
        same = models[-1] == models[0]
        vectors.extend([list(v) if same else [] for v in answer])
    vectors.model = models[0] if models else None
    return vectors, calls
