"""The one line an operator sees for a failure: each exception type mapped to its text.

Bad input, an unreadable or non-UTF-8 file, Redis unreachable, refused
credentials, ``NOPERM``, ``OOM``, a broken routes file, an unparseable time:
:func:`failure_message` says which (secrets redacted, no traceback); every failure exits
:data:`EXIT_FAILURE`.
"""

from __future__ import annotations

from memory_worker.errors import InvalidRunRequest, MemoryWorkerError
from memory_worker.settings import Settings

#: The exit status of every failure (usage errors from typer/click exit 2 as well).
EXIT_FAILURE = 2


def _redis_where(settings: Settings) -> str:
    """Where Redis was sought, without credentials: ``host:port`` or "the embedded Valkey"."""
    from urllib.parse import urlsplit

    if settings.redis_url is None:
        return "the embedded Valkey"
    try:
        parts = urlsplit(settings.redis_url.get_secret_value())
        host = parts.hostname or parts.path or "?"
        return f"{host}:{parts.port}" if parts.port else host
    except ValueError:
        return "REDIS_URL"


def failure_message(exc: BaseException, settings: Settings | None = None) -> str:
    """The one line an operator sees for ``exc`` (most specific type first; no secrets)."""
    from redis import exceptions as r

    from llm_client import RoutesError
    from memory_worker.errors import EmbeddedValkeyError, RedisUrlError, StoreError
    from memory_worker.ops.sentry import redact

    if isinstance(exc, StoreError) and isinstance(exc.__cause__, r.RedisError):
        exc = exc.__cause__  # the bot's edge typed it: redis-py's error says more to an operator
    where = _redis_where(settings) if settings is not None else "Redis"
    message: str
    if isinstance(exc, InvalidRunRequest):
        n = len(exc.problems)
        message = f"{n} problem{'s' if n != 1 else ''} in the run requests, nothing was stored: "
        message += "; ".join(exc.problems)
    elif isinstance(exc, RoutesError) and settings is not None and settings.routes_file:
        message = f"MEMORY_ROUTES_FILE: {exc}"  # the file's problems name the other settings
    elif isinstance(exc, RoutesError | MemoryWorkerError | RedisUrlError | EmbeddedValkeyError):
        message = str(exc)
    elif isinstance(exc, r.AuthenticationError | r.AuthorizationError):
        message = f"Redis at {where} refused the credentials in REDIS_URL (wrong user or password)"
    elif isinstance(exc, r.NoPermissionError):
        message = f"Redis at {where} refused a command for this user (NOPERM): {exc}"
    elif isinstance(exc, r.OutOfMemoryError):
        message = (
            f"Redis at {where} is out of memory (OOM: maxmemory reached); the command was "
            "not applied — free memory or raise maxmemory, then retry"
        )
    elif isinstance(exc, r.ReadOnlyError):
        message = f"Redis at {where} is a read-only replica (failover in progress?): {exc}"
    elif isinstance(exc, r.TimeoutError):
        message = f"Redis at {where} did not answer in time"
    elif isinstance(exc, r.ConnectionError):
        message = f"cannot reach Redis at {where}: {exc}"
    elif isinstance(exc, r.RedisError):
        message = f"Redis at {where} answered an error: {type(exc).__name__}: {exc}"
    elif isinstance(exc, OSError):
        message = f"{exc.strerror or type(exc).__name__}: {exc.filename or ''}".rstrip(": ")
    else:
        message = f"unexpected {type(exc).__name__}: {exc} (MEMORY_LOG_LEVEL=debug logs the trace)"
    return redact(_without_secrets(message, settings))


def _without_secrets(message: str, settings: Settings | None) -> str:
    """``message`` without any secret of ``settings`` (whatever quoted it: a bug, a library)."""
    from memory_worker.privacy.masking import scrub_secrets
    from memory_worker.settings.types import secret_values

    return scrub_secrets(message, secret_values(settings) if settings is not None else [])
