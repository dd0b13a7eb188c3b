"""memory-worker: durable consolidation of a chat bot's long-term memory.

The bot's API is :class:`MemoryQueue` (see ``memory_worker.api``).
"""

from memory_worker.api import MemoryQueue
from memory_worker.cards.prompt_context import MemoryContext
from memory_worker.cards.recall import RecallHit, rank_cards
from memory_worker.errors import (
    CardNotFound,
    CardNotLive,
    EmbeddingSizeMismatch,
    ForgetInputError,
    ForgetPending,
    ForgottenWrite,
    ImportConflict,
    InvalidCardRef,
    InvalidCorrection,
    InvalidExport,
    InvalidId,
    InvalidQuery,
    InvalidRunRequest,
    MemoryWorkerError,
    QueryTooLarge,
    RedisNotConfigured,
    RunNotFound,
    VectorSpaceMismatch,
)
from memory_worker.models import Message, Run, RunRequest, RunStatus
from memory_worker.privacy.forget import ForgetResult
from memory_worker.runs import EnqueueResult, EnqueueStatus
from memory_worker.version import __version__

__all__ = [
    "CardNotFound",
    "CardNotLive",
    "EmbeddingSizeMismatch",
    "EnqueueResult",
    "EnqueueStatus",
    "ForgetInputError",
    "ForgetPending",
    "ForgetResult",
    "ForgottenWrite",
    "ImportConflict",
    "InvalidCardRef",
    "InvalidCorrection",
    "InvalidExport",
    "InvalidId",
    "InvalidQuery",
    "InvalidRunRequest",
    "MemoryContext",
    "MemoryQueue",
    "MemoryWorkerError",
    "Message",
    "QueryTooLarge",
    "RecallHit",
    "RedisNotConfigured",
    "Run",
    "RunNotFound",
    "RunRequest",
    "RunStatus",
    "VectorSpaceMismatch",
    "__version__",
    "rank_cards",
]
