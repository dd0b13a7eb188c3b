"""memory-worker: durable consolidation of a chat bot's long-term memory.

The bot's API is :class:`MemoryQueue` (see ``memory_worker.api``). Its errors are
``memory_worker``'s own, in families a bot catches — ``InvalidInput``, ``NotFound``,
``Conflict``, ``Unavailable``, ``ConfigurationError``, ``StoreError`` — under
``MemoryWorkerError`` (the tree: ``memory_worker.errors``).
"""

from memory_worker.api import MemoryQueue
from memory_worker.cards.history import CardEvent, EventKind
from memory_worker.cards.prompt_context import MemoryContext
from memory_worker.cards.recall import RecallHit, rank_cards
from memory_worker.errors import (
    CardNotFound,
    CardNotLive,
    ConfigurationError,
    Conflict,
    EmbeddedValkeyError,
    EmbeddingSizeMismatch,
    EmbeddingUnavailable,
    ForgetInputError,
    ForgetPending,
    ForgottenWrite,
    ImportConflict,
    InvalidCardRef,
    InvalidCorrection,
    InvalidExport,
    InvalidId,
    InvalidInput,
    InvalidQuery,
    InvalidRunRequest,
    MemoryWorkerError,
    NotFound,
    QueryTooLarge,
    RedisNotConfigured,
    RedisSetupError,
    RedisUrlError,
    RoutesInvalid,
    RunControl,
    RunNotFound,
    StoreError,
    Unavailable,
    VectorSpaceMismatch,
)
from memory_worker.models import Message, Run, RunRequest, RunStatus
from memory_worker.privacy.forget import ForgetResult
from memory_worker.runs import EnqueueResult, EnqueueStatus
from memory_worker.version import __version__

__all__ = [
    "CardEvent",
    "CardNotFound",
    "CardNotLive",
    "ConfigurationError",
    "Conflict",
    "EmbeddedValkeyError",
    "EmbeddingSizeMismatch",
    "EmbeddingUnavailable",
    "EnqueueResult",
    "EnqueueStatus",
    "EventKind",
    "ForgetInputError",
    "ForgetPending",
    "ForgetResult",
    "ForgottenWrite",
    "ImportConflict",
    "InvalidCardRef",
    "InvalidCorrection",
    "InvalidExport",
    "InvalidId",
    "InvalidInput",
    "InvalidQuery",
    "InvalidRunRequest",
    "MemoryContext",
    "MemoryQueue",
    "MemoryWorkerError",
    "Message",
    "NotFound",
    "QueryTooLarge",
    "RecallHit",
    "RedisNotConfigured",
    "RedisSetupError",
    "RedisUrlError",
    "RoutesInvalid",
    "Run",
    "RunControl",
    "RunNotFound",
    "RunRequest",
    "RunStatus",
    "StoreError",
    "Unavailable",
    "VectorSpaceMismatch",
    "__version__",
    "rank_cards",
]
