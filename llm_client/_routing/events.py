"""Routing events (§6): what the walker decided and why, for operators and admin pages.

An event is plain data: type, severity, workflow, target, retry reason, error
kind/code, a dedupe key, small integer counters, identifiers and a timestamp.
It never carries message text, prompts, card text, URLs or secrets; error
codes are reduced to a short token alphabet so free text cannot slip through.

Sinks receive events through one method, ``emit``. :class:`RedisEventLog`
appends to a bounded Redis stream (``XADD MAXLEN ~ N``) and logs through
structlog; ``memory-worker report`` reads it back with :meth:`RedisEventLog.recent`.
:class:`Fanout` sends each event to several sinks (the log and the admin
reporter) and never lets a failing sink break the caller's call.
:class:`AttemptCounter` counts failed routed attempts by target, outcome and reason
into one Redis hash (the breaker store counts successes into the same hash, at the
field :func:`success_counter` names), for the fleet's metrics.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal, Protocol, cast

import orjson
from redis.asyncio import Redis

from llm_client._breaker.model import Outcome
from llm_client._log import get_logger
from llm_client._redis_text import as_text

log = get_logger(__name__)

Severity = Literal["info", "warn", "error"]


class EventType(StrEnum):
    """Event types the walker emits (the pipeline adds its own, e.g. ``runs_retired``)."""

    #: One attempt failed (any reason; capacity answers included), severity info.
    ATTEMPT_FAILED = "attempt_failed"
    #: The caller's deadline cut an attempt in flight.
    ATTEMPT_DEADLINE_EXCEEDED = "attempt_deadline_exceeded"
    #: A breaker opened (first trip) or reopened after a failed probe (``counters.trips``).
    CIRCUIT_OPENED = "circuit_opened"
    #: A probe succeeded: the breaker closed.
    CIRCUIT_CLOSED = "circuit_closed"
    #: Every target of the route was breaker-open when a call arrived.
    CIRCUIT_OPEN_EXHAUSTION = "circuit_open_exhaustion"
    #: The fleet's single fail-open probe of a fully open route was sent.
    FAILOPEN_PROBE = "failopen_probe"
    #: The walk ended without success after attempts (``counters.failed_attempts``).
    ALL_ATTEMPTS_EXHAUSTED = "all_attempts_exhausted"
    ROUTE_UNAVAILABLE = "route_unavailable"
    NO_CANDIDATES = "no_candidates"
    CAPACITY_WAIT_TIMEOUT = "capacity_wait_timeout"
    #: A target answered with a Retry-After: no call reaches it for ``counters.cool_ms``.
    TARGET_COOLING = "target_cooling"
    #: A target failed too often for its tier (``counters``: ``times`` ejected in a row,
    #: ``ejected_ms``, the window's ``successes`` and ``failures``; ``reason``: the rule,
    #: ``failure_percentage`` or ``success_rate``): it is tried after every other target
    #: for ``ejected_ms``, then back on probation (llm_client._outlier).
    TARGET_EJECTED = "target_ejected"
    #: Pipeline event: runs were retired (attempts exhausted).
    RUNS_RETIRED = "runs_retired"


#: Severity of each type when the emitter does not say otherwise.
DEFAULT_SEVERITY: Mapping[str, Severity] = {
    EventType.ATTEMPT_FAILED: "info",
    EventType.ATTEMPT_DEADLINE_EXCEEDED: "info",
    EventType.CIRCUIT_OPENED: "warn",
    EventType.CIRCUIT_CLOSED: "info",
    EventType.FAILOPEN_PROBE: "info",
    EventType.TARGET_COOLING: "info",
    EventType.TARGET_EJECTED: "warn",
    EventType.ALL_ATTEMPTS_EXHAUSTED: "warn",
}

_TOKEN = re.compile(r"^[A-Za-z0-9_.:/@-]{1,120}$")


def safe_token(value: object) -> str | None:
    """``value`` as a short identifier-like token, or None if it looks like free text."""
    if value is None:
        return None
    text = str(value)
    return text if _TOKEN.match(text) else None


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class RoutingEvent:
    """One routing (or pipeline) event. Identifiers and counts only — never text."""

    type: str
    workflow: str
    severity: Severity | None = None
    target: str | None = None
    reason: str | None = None
    error_kind: str | None = None
    error_code: str | None = None
    counters: Mapping[str, int] = field(default_factory=dict)
    #: Identifiers of the work involved (run id, chat id, job id) — never content.
    context: Mapping[str, str] = field(default_factory=dict)
    #: Explicit paging override: False = never page, True = page even if the rules would not.
    admin_actionable: bool | None = None
    dedupe: str | None = None
    at_ms: int = field(default_factory=_now_ms)
    #: Stream id once stored.
    id: str | None = None

    def __post_init__(self) -> None:
        # Codes and targets are the only strings that come from outside; keep them tokens.
        object.__setattr__(self, "error_code", safe_token(self.error_code))
        object.__setattr__(self, "error_kind", safe_token(self.error_kind))
        object.__setattr__(self, "target", safe_token(self.target))
        object.__setattr__(
            self,
            "context",
            {k: t for k, v in self.context.items() if (t := safe_token(v)) is not None},
        )
        if self.severity is None:
            object.__setattr__(self, "severity", DEFAULT_SEVERITY.get(self.type, "error"))

    @property
    def dedupe_key(self) -> str:
        """Admin-page dedup key; default ``"{type}:{workflow}:{target or '-'}"``."""
        return self.dedupe or f"{self.type}:{self.workflow}:{self.target or '-'}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form (``memory-worker report --json``)."""
        return {
            "id": self.id,
            "type": self.type,
            "severity": self.severity,
            "workflow": self.workflow,
            "target": self.target,
            "reason": self.reason,
            "error_kind": self.error_kind,
            "error_code": self.error_code,
            "counters": dict(self.counters),
            "context": dict(self.context),
            "admin_actionable": self.admin_actionable,
            "dedupe_key": self.dedupe_key,
            "at_ms": self.at_ms,
        }

    def to_fields(self) -> dict[str, bytes]:
        """Stream entry fields (one JSON document keeps the entry self-describing)."""
        document = self.as_dict()
        del document["id"]
        return {"e": orjson.dumps(document)}

    @classmethod
    def from_fields(cls, entry_id: str, fields: Mapping[Any, Any]) -> RoutingEvent:
        raw = fields.get(b"e", fields.get("e", b"{}"))
        data = orjson.loads(raw)
        return cls(
            type=str(data.get("type", "?")),
            workflow=str(data.get("workflow", "?")),
            severity=data.get("severity"),
            target=data.get("target"),
            reason=data.get("reason"),
            error_kind=data.get("error_kind"),
            error_code=data.get("error_code"),
            counters={str(k): int(v) for k, v in (data.get("counters") or {}).items()},
            context={str(k): str(v) for k, v in (data.get("context") or {}).items()},
            admin_actionable=data.get("admin_actionable"),
            dedupe=data.get("dedupe_key"),
            at_ms=int(data.get("at_ms", 0)),
            id=entry_id,
        )


class EventSink(Protocol):
    """Receives routing events. Implementations must be quick; callers never wait long."""

    async def emit(self, event: RoutingEvent) -> None: ...


class EventKeys(Protocol):
    """The key names the event log needs (``memory_worker.keys.Keys`` satisfies it)."""

    @property
    def events(self) -> str: ...


def log_event(event: RoutingEvent) -> None:
    """One structured log line per event, at the event's severity."""
    fields = event.as_dict()
    fields.pop("id")
    kind = fields.pop("type")
    fields.pop("severity")
    name = f"routing.{kind}"
    if event.severity == "error":
        log.error(name, **fields)
    elif event.severity == "warn":
        log.warning(name, **fields)
    else:
        log.info(name, **fields)


class RedisEventLog:
    """Events into a bounded Redis stream, plus the log; and the reader for ``report``."""

    def __init__(self, redis: Redis, keys: EventKeys, *, maxlen: int = 10_000) -> None:
        self._redis = redis
        self._key = keys.events
        self._maxlen = maxlen

    async def emit(self, event: RoutingEvent) -> None:
        log_event(event)
        await self._redis.xadd(
            self._key,
            event.to_fields(),  # type: ignore[arg-type]
            maxlen=self._maxlen,
            approximate=True,
        )

    async def recent(
        self,
        *,
        limit: int = 100,
        types: Sequence[str] | None = None,
        workflow: str | None = None,
        batch: int = 500,
    ) -> list[RoutingEvent]:
        """The newest events first, optionally only of ``types`` / ``workflow``."""
        wanted = set(types) if types else None
        found: list[RoutingEvent] = []
        upper = "+"
        while len(found) < limit:
            entries = await self._redis.xrevrange(self._key, max=upper, min="-", count=batch)
            if upper != "+":
                entries = entries[1:]  # the range is inclusive: drop the entry already seen
            if not entries:
                break
            for raw_id, fields in entries:
                entry_id = as_text(raw_id)
                event = RoutingEvent.from_fields(entry_id, fields)
                if wanted is not None and event.type not in wanted:
                    continue
                if workflow is not None and event.workflow != workflow:
                    continue
                found.append(event)
                if len(found) >= limit:
                    break
            last = entries[-1][0]
            upper = as_text(last)
        return found


# --- routed attempts by target / outcome / reason ----------------------------------------


class AttemptKeys(Protocol):
    """The hash routed attempts are counted in (``memory_worker.keys.Keys`` satisfies it)."""

    @property
    def routing_attempts(self) -> str: ...


def attempt_field(target: str, outcome: str, reason: str | None) -> str:
    """The counter field of one attempt: ``target|outcome|reason`` (``-``: no reason)."""
    return f"{target}|{outcome}|{reason or '-'}"


def parse_attempts(raw: Mapping[Any, Any]) -> dict[tuple[str, str, str], int]:
    """``target|outcome|reason`` fields → counts (a malformed field is skipped)."""
    parsed: dict[tuple[str, str, str], int] = {}
    for name, value in raw.items():
        parts = as_text(name).rsplit("|", 2)
        if len(parts) == 3:
            parsed[(parts[0], parts[1], parts[2])] = int(value)
    return parsed


def success_counter(keys: AttemptKeys) -> Callable[[str], tuple[str, str]]:
    """Where the breaker record script counts a routed success (the field
    :meth:`AttemptCounter.record_success` would increment)."""

    def where(target: str) -> tuple[str, str]:
        return keys.routing_attempts, attempt_field(target, Outcome.SUCCESS.value, None)

    return where


class AttemptCounter:
    """Counts routed attempts into the ``routing_attempts`` hash for the metrics.

    An event sink for failed attempts (``attempt_failed`` /
    ``attempt_deadline_exceeded``: outcome ``failure`` when the breaker was
    charged, else ``neutral``), plus :meth:`record_success` for the target
    that served a routed call. Fleet-wide totals, one HINCRBY each.
    """

    def __init__(self, redis: Redis, keys: AttemptKeys) -> None:
        self._redis = redis
        self._key = keys.routing_attempts

    async def emit(self, event: RoutingEvent) -> None:
        if event.type not in (EventType.ATTEMPT_FAILED, EventType.ATTEMPT_DEADLINE_EXCEEDED):
            return
        outcome = Outcome.FAILURE if event.counters.get("charged") else Outcome.NEUTRAL
        field_name = attempt_field(event.target or "-", outcome.value, event.reason)
        await cast("Awaitable[int]", self._redis.hincrby(self._key, field_name, 1))

    async def record_success(self, target: str) -> None:
        field_name = attempt_field(target, Outcome.SUCCESS.value, None)
        await cast("Awaitable[int]", self._redis.hincrby(self._key, field_name, 1))


_: type[EventSink] = AttemptCounter  # structural check: it is an event sink


class Fanout:
    """Sends every event to each sink; a failing or slow sink is logged and counted, never raised.

    Events are routing bookkeeping (§7 "Store faults"): a Redis error in the
    stream, the admin reporter or the attempt counters never reaches the routed call.
    """

    def __init__(self, *sinks: EventSink, timeout: float = 2.0) -> None:
        self.sinks = list(sinks)
        self._timeout = timeout
        #: Failed deliveries per sink class (process-local), for metrics and tests.
        self.failures: Counter[str] = Counter()

    async def emit(self, event: RoutingEvent) -> None:
        """Every sink at once (one round trip's time, not one per sink)."""
        await asyncio.gather(*(self._emit_one(sink, event) for sink in self.sinks))

    async def _emit_one(self, sink: EventSink, event: RoutingEvent) -> None:
        try:
            async with asyncio.timeout(self._timeout):
                await sink.emit(event)
        except Exception as exc:  # a sink must never break the routed call
            self.failures[type(sink).__name__] += 1
            log.warning(
                "routing.event_sink_failed",
                sink=type(sink).__name__,
                event_type=event.type,
                error=type(exc).__name__,
            )


def with_context(event: RoutingEvent, context: Mapping[str, str]) -> RoutingEvent:
    """``event`` with extra identifiers merged into its context."""
    if not context:
        return event
    return replace(event, context={**context, **event.context})
