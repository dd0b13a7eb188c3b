"""Typed client for the LLM farm — the package's one face.

Import everything from here (``from llm_client import DiscoveryClient, Upstream``);
the modules behind it are private (``_errors``, ``_edge``, ``_retry/``, ``_breaker/``,
``_routing/``, ``_transport/``) and may change without notice. The public names, by family:

- **Errors** (the whole tree is drawn in ``_errors.py``): ``LLMError`` and its families —
  ``Transport`` (``RequestTimeout``), ``BackendUnavailable`` (``LocalModelUnavailable``,
  ``JobLost``),
  ``Upstream``, ``CapacityUnavailable`` (``CapacityWaitExpired``), ``Timeout``
  (``TaskTimeout``), ``ProtocolError`` (``EmptyResponse``, ``DecodeError``,
  ``UnknownStatus``), ``LocalEngineError``, ``RequestError``, ``RoutingError``
  (``RouteUnavailable``, ``NoCandidates``, ``AllCircuitsOpen``, ``Exhausted``,
  ``DeadlineExceeded``, ``CapacityWaitTimeout`` (``CoolingDown``)), and ``RoutesError``
  (a bad routes file).
- **Classifier**: ``retryable_reason`` (``error -> FailureReason | None``), ``FailureReason``.
- **Transports**: ``DiscoveryClient``, ``OpenAICompatClient``, ``LocalEmbedClient``; what
  they answer (``ChatResult``, ``EmbedResult``, ``UpstreamResponse``) and their settings
  (``ClientConfig``); ``ClientFactory``/``TransportFactory`` (route targets → clients);
  the local embedder's ``load_model``, ``extra_installed``, ``EXTRA_HINT``, ``QUERY_TASK``.
- **Breakers**: ``BreakerConfig``, ``BreakerView``, ``Circuit``, ``Outcome``,
  ``BreakerStore``; ``RecordCarry`` (plain successes held
  back — for ``hold_seconds``, folded one record a breaker — to ride on a later walk's first
  round trip) and its ``Rider`` (held records as a script call another round trip takes
  along).
- **Outlier ejection** (by error rate, fleet-wide): ``EjectionConfig``, ``OutlierStore``,
  and a target's window and standing as read (``Tally``, ``Standing``).
- **Gateway** (cooling, caps, load sharing, slow nodes): ``GatewayConfig``,
  ``TargetLimits``, ``WalkObserver`` (where a walker reports durations), what operators
  see of a target (``TargetStatus``, ``target_statuses``) and the fleet-wide latency
  histogram's bounds (``LATENCY_BUCKETS_MS``).
- **Routing**: ``Walker``, ``WalkerConfig``, ``Routed``; routes (``load_routes``,
  ``default_routes``, ``RoutesConfig``, ``Route``, ``RouteTarget``, ``RouteDefaults``) and
  the workflow names ``MEMORY_EXTRACTION``, ``EMBEDDING``, ``MEMORY_MERGE``; routing events
  (``RoutingEvent``, ``EventType``, ``EventSink``, ``Fanout``, ``RedisEventLog``,
  ``safe_token``); routed attempts counted for the metrics
  (``AttemptCounter``, ``AttemptKeys``, ``attempt_field``, ``parse_attempts``,
  ``success_counter``).
- **Shared with memory_worker**: ``lua_text`` (the one loader of a package's
  ``lua/*.lua``) and ``with_preflight`` (a script kept inline given the ACL check it calls
  before its first write), ``as_text`` and ``reply_pairs`` (the one bytes → str helper),
  ``get_logger`` and ``event_of`` (library logging through stdlib ``logging``);
  ``bind_log_context`` / ``unbind_log_context`` (fields every event of a context carries).
"""

from llm_client._breaker.carry import RecordCarry, Rider
from llm_client._breaker.model import BreakerConfig, BreakerView, Circuit, Outcome
from llm_client._breaker.store import BreakerStore
from llm_client._errors import (
    AllCircuitsOpen,
    BackendUnavailable,
    CapacityUnavailable,
    CapacityWaitExpired,
    CapacityWaitTimeout,
    CoolingDown,
    DeadlineExceeded,
    DecodeError,
    EmptyResponse,
    Exhausted,
    JobLost,
    LLMError,
    LocalEngineError,
    LocalModelUnavailable,
    NoCandidates,
    ProtocolError,
    RequestError,
    RequestTimeout,
    RoutesError,
    RouteUnavailable,
    RoutingError,
    TaskTimeout,
    Timeout,
    Transport,
    UnknownStatus,
    Upstream,
)
from llm_client._gateway.model import LATENCY_BUCKETS_MS, GatewayConfig, TargetLimits
from llm_client._gateway.status import TargetStatus, target_statuses
from llm_client._log import bind_log_context, event_of, get_logger, unbind_log_context
from llm_client._lua import lua_text, with_preflight
from llm_client._outlier.model import EjectionConfig, Standing, Tally
from llm_client._outlier.store import OutlierStore
from llm_client._redis_text import as_text, reply_pairs
from llm_client._retry.classify import retryable_reason
from llm_client._retry.reasons import FailureReason
from llm_client._routing.events import (
    AttemptCounter,
    AttemptKeys,
    EventSink,
    EventType,
    Fanout,
    RedisEventLog,
    RoutingEvent,
    attempt_field,
    parse_attempts,
    safe_token,
    success_counter,
)
from llm_client._routing.plan import Routed, WalkerConfig, WalkObserver
from llm_client._routing.routes import (
    EMBEDDING,
    MEMORY_EXTRACTION,
    MEMORY_MERGE,
    Route,
    RouteDefaults,
    RoutesConfig,
    RouteTarget,
    default_routes,
    load_routes,
)
from llm_client._routing.walker import Walker
from llm_client._transport.base import ChatResult, ClientConfig, EmbedResult, UpstreamResponse
from llm_client._transport.clients import ClientFactory, TransportFactory
from llm_client._transport.discovery import DiscoveryClient
from llm_client._transport.local_embed import (
    EXTRA_HINT,
    QUERY_TASK,
    LocalEmbedClient,
    extra_installed,
    load_model,
)
from llm_client._transport.openai_compat import OpenAICompatClient

__all__ = [
    "EMBEDDING",
    "EXTRA_HINT",
    "LATENCY_BUCKETS_MS",
    "MEMORY_EXTRACTION",
    "MEMORY_MERGE",
    "QUERY_TASK",
    "AllCircuitsOpen",
    "AttemptCounter",
    "AttemptKeys",
    "BackendUnavailable",
    "BreakerConfig",
    "BreakerStore",
    "BreakerView",
    "CapacityUnavailable",
    "CapacityWaitExpired",
    "CapacityWaitTimeout",
    "ChatResult",
    "Circuit",
    "ClientConfig",
    "ClientFactory",
    "CoolingDown",
    "DeadlineExceeded",
    "DecodeError",
    "DiscoveryClient",
    "EjectionConfig",
    "EmbedResult",
    "EmptyResponse",
    "EventSink",
    "EventType",
    "Exhausted",
    "FailureReason",
    "Fanout",
    "GatewayConfig",
    "JobLost",
    "LLMError",
    "LocalEmbedClient",
    "LocalEngineError",
    "LocalModelUnavailable",
    "NoCandidates",
    "OpenAICompatClient",
    "Outcome",
    "OutlierStore",
    "ProtocolError",
    "RecordCarry",
    "RedisEventLog",
    "RequestError",
    "RequestTimeout",
    "Rider",
    "Route",
    "RouteDefaults",
    "RouteTarget",
    "RouteUnavailable",
    "Routed",
    "RoutesConfig",
    "RoutesError",
    "RoutingError",
    "RoutingEvent",
    "Standing",
    "Tally",
    "TargetLimits",
    "TargetStatus",
    "TaskTimeout",
    "Timeout",
    "Transport",
    "TransportFactory",
    "UnknownStatus",
    "Upstream",
    "UpstreamResponse",
    "WalkObserver",
    "Walker",
    "WalkerConfig",
    "as_text",
    "attempt_field",
    "bind_log_context",
    "default_routes",
    "event_of",
    "extra_installed",
    "get_logger",
    "load_model",
    "load_routes",
    "lua_text",
    "parse_attempts",
    "reply_pairs",
    "retryable_reason",
    "safe_token",
    "success_counter",
    "target_statuses",
    "unbind_log_context",
    "with_preflight",
]
