"""Sentry (§11): unexpected errors only, and nothing sensitive ever leaves the process.

With ``SENTRY_DSN`` set, :func:`init_sentry` enables the arq, asyncio and
logging integrations with three guards:

1. **Outages are breadcrumbs, not events.** :func:`is_breadcrumb` says which
   failures are the farm's (or Redis's) weather rather than a bug: anything
   :func:`memory_worker.runs.decide` releases (and lost leases, shutdowns),
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
   every remaining string loses bearer tokens, ``sk-…`` keys, Telegram bot
   tokens, URL passwords (``redis://:pw@host``) and secret query parameters.
   Every URL found in a string (HTTP breadcrumbs' ``url``, log lines) keeps
   its scheme, host and ordinary path segments only: every query and
   fragment value, secret-bearing paths (Slack-style ``/services/T…/B…/X…``
   and ``/webhooks/<id>/<token>``, Telegram ``/bot<token>/``) and long
   token-like segments are filtered; ``http.query`` / ``http.fragment`` lose
   their values. Last, the secrets this process was configured with
   (every ``SecretStr`` setting, the Redis URLs' passwords) are replaced
   wherever they appear, whatever their shape.
3. **Tags.** ``release`` = ``memory-worker@<version>``, ``environment`` =
   ``MEMORY_ENVIRONMENT``; run failures carry their code and reason as tags
   and the run/chat ids as context.

:func:`report_failure` is what the pipeline calls when a run fails; it is a
no-op without a DSN.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

import sentry_sdk
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from llm_client.errors import (
    BackendUnavailable,
    CapacityUnavailable,
    LLMError,
    RoutingError,
    Transport,
)
from llm_client.retry import retryable_reason
from memory_worker.errors import LeaseLost
from memory_worker.runs import Decision, Verdict, decide
from memory_worker.secret_patterns import FILTERED, scrub_tokens
from memory_worker.settings import Settings
from memory_worker.settings_types import secret_values

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
#: A path segment after one of these names is a credential (Slack/Discord/generic webhooks).
SECRET_PATH_PARENTS = frozenset(
    {"services", "webhooks", "webhook", "hooks", "hook", "triggers", "workflows"}
)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+", re.I)
_TELEGRAM_SEGMENT = re.compile(r"(?i)^bot\d+:")
#: A long token-like path segment (letters and digits mixed): a key, not a name.
_TOKEN_SEGMENT = re.compile(r"^(?=[^/]*\d)(?=[^/]*[A-Za-z])[A-Za-z0-9_\-.~%]{20,}$")
#: Secrets this process was configured with (see :func:`remember_secrets`).
_known_secrets: tuple[str, ...] = ()


def _redact_query(query: str) -> str:
    """``a=1&token=x`` → ``a=[Filtered]&token=[Filtered]``: names kept, every value gone."""
    if not query:
        return query
    parts = []
    for pair in query.split("&"):
        name, sep, _ = pair.partition("=")
        parts.append(f"{name}={FILTERED}" if sep else FILTERED if name else name)
    return "&".join(parts)


def _redact_path(path: str) -> str:
    segments = path.split("/")
    out: list[str] = []
    for i, segment in enumerate(segments):
        if i > 0 and segments[i - 1].lower() in SECRET_PATH_PARENTS and segment:
            out.append(FILTERED)  # everything after services/ or webhooks/ is the credential
            break
        if _TELEGRAM_SEGMENT.match(segment):
            out.append("bot" + FILTERED)
        elif _TOKEN_SEGMENT.match(segment):
            out.append(FILTERED)
        else:
            out.append(segment)
    return "/".join(out)


def redact_url(url: str) -> str:
    """A URL with its password, query and fragment values and secret path segments filtered."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return FILTERED
    netloc = parts.netloc
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = userinfo.partition(":")[0] + ":" + FILTERED + "@" + host
    cleaned = SplitResult(
        parts.scheme,
        netloc,
        _redact_path(parts.path),
        _redact_query(parts.query),
        FILTERED if parts.fragment else "",
    )
    return urlunsplit(cleaned)


def redact(text: str) -> str:
    """``text`` without tokens, keys, URL secrets and the process's configured secrets."""
    for secret in _known_secrets:
        text = text.replace(secret, FILTERED)
    text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    return scrub_tokens(text)


def secrets_of(settings: Settings) -> list[str]:
    """The secret strings in ``settings`` (see :func:`~memory_worker.settings_types.secret_values`)."""
    return secret_values(settings)


def remember_secrets(secrets: Iterable[str]) -> None:
    """Replace these exact strings wherever they appear (short ones are ignored)."""
    global _known_secrets
    # longest first, so a secret containing another is replaced whole
    _known_secrets = tuple(sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True))


def _scrub(value: Any, key: str | None = None) -> Any:
    if key is not None and key.lower() in SENSITIVE_KEYS:
        return FILTERED
    if key is not None and key.lower() in QUERY_KEYS and isinstance(value, str):
        return redact(_redact_query(value))
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: _scrub(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


# --- classification ---------------------------------------------------------------------------


def is_breadcrumb(error: BaseException, decision: Decision | None = None) -> bool:
    """Is ``error`` outage-class (a breadcrumb), rather than a bug (an event)?

    ``decision`` is what :func:`memory_worker.runs.decide` made of ``error``
    (decided here when the caller has none).
    """
    if isinstance(error, OUTAGE_TYPES):
        return True
    if (decision or decide(error)).verdict in (Verdict.RELEASE, Verdict.ABANDON):
        return True
    return isinstance(error, LLMError) and retryable_reason(error) is not None


# --- event processing -------------------------------------------------------------------------


def _outage_breadcrumb(error: BaseException) -> None:
    sentry_sdk.add_breadcrumb(
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
        _outage_breadcrumb(exc_info[1])
        return None
    return scrub_event(event)


def before_breadcrumb(crumb: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any] | None:
    return scrub_breadcrumb(crumb)


# --- setup and the pipeline hook ---------------------------------------------------------------


def release() -> str:
    from memory_worker import __version__

    return f"memory-worker@{__version__}"


def init_sentry(settings: Settings, *, transport: Any = None) -> bool:
    """Initialise Sentry when ``SENTRY_DSN`` is set; returns whether it is on."""
    if settings.sentry_dsn is None:
        return False
    remember_secrets(secrets_of(settings))
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
    if not sentry_sdk.get_client().is_active():
        return
    if is_breadcrumb(error, decision):
        _outage_breadcrumb(error)
        return
    with sentry_sdk.new_scope() as scope:
        scope.set_tag("run.code", decision.code)
        scope.set_tag("run.reason", decision.reason or "not_retryable")
        scope.set_context("run", {"run_id": run_id, "chat_id": chat_id})
        sentry_sdk.capture_exception(error)
