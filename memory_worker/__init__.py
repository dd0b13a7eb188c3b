"""memory-worker: durable consolidation of a chat bot's long-term memory.

The bot's API is :class:`MemoryQueue` (see ``memory_worker.api``).
"""

from memory_worker.api import MemoryQueue
from memory_worker.errors import (
    ForgetInputError,
    ForgottenWrite,
    InvalidRunRequest,
    MemoryWorkerError,
    RunNotFound,
    VectorSpaceMismatch,
)
from memory_worker.models import Message, Run, RunRequest, RunStatus
from memory_worker.privacy.forget import ForgetResult
from memory_worker.recall import RecallHit
from memory_worker.runs import EnqueueResult, EnqueueStatus
from memory_worker.version import __version__

__all__ = [
    "EnqueueResult",
    "EnqueueStatus",
    "ForgetInputError",
    "ForgetResult",
    "ForgottenWrite",
    "InvalidRunRequest",
    "MemoryQueue",
    "MemoryWorkerError",
    "Message",
    "RecallHit",
    "Run",
    "RunNotFound",
    "RunRequest",
    "RunStatus",
    "VectorSpaceMismatch",
    "__version__",
]
