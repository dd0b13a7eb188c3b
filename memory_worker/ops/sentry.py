"""Sentry (§11): unexpected errors only, and nothing sensitive ever leaves the process.

With ``SENTRY_DSN`` set, :func:`init_sentry` enables the arq, asyncio and
logging integrations with three guards:

1. **Outages are breadcrumbs, not events.** :func:`is_breadcrumb` says which
   failures are the farm's (or Redis's) weather rather than a bug: anything
   :func:`memory_worker.runs.policy.decide` releases (and lost leases, shutdowns),
   every ``llm_client`` Transport / BackendUnavailable / CapacityUnavailable /
   routing error, any other farm error the retry classifier calls retryable
   (timeouts, protocol errors: counted in metrics, not paged as bugs), and
   Redis connection errors (``/readyz`` shows those). They become
   breadcrumbs, so the next real event carries the story. Log records are
   breadcrumbs only (``event_level=None``): an error-level routing event is
   an outage, and unexpected errors reach Sentry as exceptions.
2. **Scrubbing.** :func:`scrub_event` / :func:`scrub_breadcrumb` run on
   everything: exception values are replaced (they may quote message or card
   text), values under text-bearing keys (``text``, ``fact_text``,
   ``content``, ``messages``, …) are replaced, frame locals are dropped, and
   every remaining string passes through :func:`memory_worker.privacy.masking.scrub`
   (the one masking module, §14): the secrets this process was
   configured with (every ``SecretStr`` setting, the Redis URLs' passwords),
   every URL's query and fragment values and secret-bearing path segments
   (Slack-style ``/services/T…/B…/X…``, ``/webhooks/<id>/<token>``,
   Telegram ``/bot<token>/``, long token-like segments), then every secret
   the masking module knows (tokens, keys, labelled passwords, URL
   credentials, card numbers). ``http.query`` / ``http.fragment`` lose
   their values.
3. **Tags.** ``release`` = ``memory-worker@<version>``, ``environment`` =
   ``MEMORY_ENVIRONMENT``; run failures carry their code and reason as tags
   and the run/chat ids as context.

:func:`report_failure` is what the pipeline calls when a run fails; it is a
no-op without a DSN.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Mapping
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from llm_client import (
    BackendUnavailable,
    CapacityUnavailable,
    LLMError,
    RoutingError,
    Transport,
    retryable_reason,
)
from memory_worker.errors import LeaseLost
from memory_worker.privacy.masking import (
    FILTERED,
    redact_query,
    remember_secrets,
    scrub,
)
from memory_worker.runs.policy import Decision, Verdict, decide
from memory_worker.settings import Settings
from memory_worker.settings.types import secret_values
from memory_worker.version import __version__

#: Always outage-class, whatever their text says.
OUTAGE_TYPES: tuple[type[BaseException], ...] = (
    Transport,
    BackendUnavailable,
    CapacityUnavailable,
    RoutingError,
    LeaseLost,
    asyncio.CancelledError,
    RedisConnectionError,
    RedisTimeoutError,
)

#: Keys whose values are (or may be) chat content, card content or secrets.
SENSITIVE_KEYS = frozenset(
    {
        "text",
        "texts",
        "fact",
        "fact_text",
        "new_fact_text",
        "merged_fact_text",
        "content",
        "prompt",
        "prompts",
        "messages",
        "message_text",
        "body",
        "data_body",
        "episode_summary",
        "summary",
        "subject",
        "predicate",
        "object",
        "sender_name",
        "candidate_cards",
        "cards",
        "existing_cards",
        "authorization",
        "api_key",
        "apikey",
        "token",
        "access_token",
        "password",
        "passwd",
        "secret",
        "dsn",
        "cookie",
        "cookies",
        "set-cookie",
        "x-api-key",
        "bot_token",
        "admin_telegram_bot_token",
        "admin_webhook_url",
        "sentry_dsn",
        "redis_url",
    }
)

#: Keys whose value is a query string or fragment (sentry's HTTP breadcrumbs).
QUERY_KEYS = frozenset({"http.query", "http.fragment", "query", "query_string", "fragment"})


def redact(text: str) -> str:
    """``text`` without tokens, keys, URL secrets and the process's configured secrets
    (:func:`memory_worker.privacy.masking.scrub`)."""
    return scrub(text)


def secrets_of(settings: Settings) -> list[str]:
    """The secret strings in ``settings`` (see :func:`~memory_worker.settings.types.secret_values`)."""
    return secret_values(settings)


def _scrub(value: Any, key: str | None = None) -> Any:
    if key is not None and key.lower() in SENSITIVE_KEYS:
        return FILTERED
    if key is not None and key.lower() in QUERY_KEYS and isinstance(value, str):
        return scrub(redact_query(value))
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {k: _scrub(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


# --- classification ---------------------------------------------------------------------------


def is_breadcrumb(error: BaseException, decision: Decision | None = None) -> bool:
    """Is ``error`` outage-class (a breadcrumb), rather than a bug (an event)?

    ``decision`` is what :func:`memory_worker.runs.policy.decide` made of ``error``
    (decided here when the caller has none).
    """
    if isinstance(error, OUTAGE_TYPES):
        return True
    if (decision or decide(error)).verdict in (Verdict.RELEASE, Verdict.ABANDON):
        return True
    return isinstance(error, LLMError) and retryable_reason(error) is not None


# --- event processing -------------------------------------------------------------------------


def _outage_breadcrumb(sdk: Any, error: BaseException) -> None:
    sdk.add_breadcrumb(
        category="outage",
        message=type(error).__name__,
        level="warning",
        data={"code": getattr(error, "code", None), "kind": type(error).__name__},
    )


def scrub_event(event: dict[str, Any]) -> dict[str, Any]:
    """Remove message text, card text and secrets from an event (see the module doc)."""
    for exc in (event.get("exception") or {}).get("values") or []:
        if exc.get("value"):
            exc["value"] = FILTERED
        for frame in (exc.get("stacktrace") or {}).get("frames") or []:
            frame.pop("vars", None)
    for thread in (event.get("threads") or {}).get("values") or []:
        for frame in (thread.get("stacktrace") or {}).get("frames") or []:
            frame.pop("vars", None)
    event.pop("request", None)
    scrubbed: dict[str, Any] = _scrub(event)
    return scrubbed


def scrub_breadcrumb(crumb: dict[str, Any]) -> dict[str, Any]:
    cleaned: dict[str, Any] = _scrub(crumb)
    return cleaned


def before_send(event: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any] | None:
    """Outage-class exceptions become breadcrumbs; everything else is scrubbed and sent."""
    exc_info = hint.get("exc_info")
    if exc_info and exc_info[1] is not None and is_breadcrumb(exc_info[1]):
        _outage_breadcrumb(sys.modules["sentry_sdk"], exc_info[1])  # Sentry is calling us
        return None
    return scrub_event(event)


def before_breadcrumb(crumb: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any] | None:
    return scrub_breadcrumb(crumb)


# --- setup and the pipeline hook ---------------------------------------------------------------


def release() -> str:
    return f"memory-worker@{__version__}"


def init_sentry(settings: Settings, *, transport: Any = None) -> bool:
    """Initialise Sentry when ``SENTRY_DSN`` is set; returns whether it is on."""
    if settings.sentry_dsn is None:
        return False
    remember_secrets(secrets_of(settings))
    import sentry_sdk  # only with a DSN: a worker without one does not pay its import

    if transport is None and sentry_sdk.get_client().is_active():
        return True  # already on (several workers in one process share the client)
    from sentry_sdk.integrations.arq import ArqIntegration
    from sentry_sdk.integrations.asyncio import AsyncioIntegration
    from sentry_sdk.integrations.logging import LoggingIntegration

    integrations: list[Any] = [
        ArqIntegration(),
        LoggingIntegration(level=logging.INFO, event_level=None),
    ]
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # the asyncio integration patches the running loop; none yet (e.g. the CLI)
    else:
        integrations.append(AsyncioIntegration())
    options: dict[str, Any] = {
        "dsn": settings.sentry_dsn.get_secret_value(),
        "release": release(),
        "environment": settings.environment,
        "integrations": integrations,
        "before_send": before_send,
        "before_breadcrumb": before_breadcrumb,
        "include_local_variables": False,
        "max_request_body_size": "never",
        "traces_sample_rate": None,
        "max_breadcrumbs": 50,
    }
    if transport is not None:
        options["transport"] = transport
    sentry_sdk.init(**options)
    return True


def report_failure(error: BaseException, decision: Decision, *, run_id: str, chat_id: int) -> None:
    """A run failed: a breadcrumb for outage-class errors, an event for anything else."""
    sdk = sys.modules.get("sentry_sdk")  # never imported: it cannot be on
    if sdk is None or not sdk.get_client().is_active():
        return
    if is_breadcrumb(error, decision):
        _outage_breadcrumb(sdk, error)
        return
    with sdk.new_scope() as scope:
        scope.set_tag("run.code", decision.code)
        scope.set_tag("run.reason", decision.reason or "not_retryable")
        scope.set_context("run", {"run_id": run_id, "chat_id": chat_id})
        sdk.capture_exception(error)
