"""Typed client for the LLM farm: transports, errors, retry classifier, breakers, routing.

- :mod:`~llm_client.errors`: the one error tree (documented there); :mod:`~llm_client.reasons`
  and :mod:`~llm_client.retry`: the retry classifier (strings parsed once, at the edge).
- :mod:`~llm_client.transport`, :mod:`~llm_client.discovery`, :mod:`~llm_client.openai_compat`,
  :mod:`~llm_client.local_embed`: the transports; :mod:`~llm_client.envelope`: answer decoding
  (:mod:`~llm_client.error_text`: the text and code of an error value);
  :mod:`~llm_client.clients`: targets → transport clients.
- :mod:`~llm_client.breaker`: the breaker policy (pure); :mod:`~llm_client.breaker_store`: its
  Lua twin in Redis (scripts in ``lua/``).
- :mod:`~llm_client.routes`, :mod:`~llm_client.routing`: route files and the routed walker;
  :mod:`~llm_client.walk_step` (its pure state machine), :mod:`~llm_client.walk`,
  :mod:`~llm_client.walk_judge`, :mod:`~llm_client.walk_plan`; :mod:`~llm_client.events`:
  routing events.
- :mod:`~llm_client.redis_text` and :mod:`~llm_client.lua`: the one bytes → str helper and the
  one Lua script loader, shared with ``memory_worker``.
"""

from llm_client.breaker import BreakerConfig, BreakerView, Circuit, Outcome
from llm_client.breaker_store import BreakerStore, list_breakers, reset_breaker
from llm_client.clients import ClientFactory
from llm_client.discovery import DiscoveryClient
from llm_client.errors import (
    AllCircuitsOpen,
    BackendUnavailable,
    CapacityUnavailable,
    CapacityWaitExpired,
    CapacityWaitTimeout,
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
    RouteUnavailable,
    RoutingError,
    TaskTimeout,
    Timeout,
    Transport,
    UnknownStatus,
    Upstream,
)
from llm_client.events import (
    EventSink,
    EventType,
    Fanout,
    RedisEventLog,
    RoutingEvent,
    recent_events,
)
from llm_client.local_embed import LocalEmbedClient
from llm_client.openai_compat import OpenAICompatClient
from llm_client.reasons import FailureReason
from llm_client.retry import retryable_reason
from llm_client.routes import (
    Route,
    RouteDefaults,
    RoutesConfig,
    RoutesError,
    RouteTarget,
    default_routes,
    load_routes,
)
from llm_client.routing import Walker
from llm_client.transport import ChatResult, ClientConfig, EmbedResult, UpstreamResponse
from llm_client.walk import Routed, WalkerConfig

__all__ = [
    "AllCircuitsOpen",
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
    "DeadlineExceeded",
    "DecodeError",
    "DiscoveryClient",
    "EmbedResult",
    "EmptyResponse",
    "EventSink",
    "EventType",
    "Exhausted",
    "FailureReason",
    "Fanout",
    "JobLost",
    "LLMError",
    "LocalEmbedClient",
    "LocalEngineError",
    "LocalModelUnavailable",
    "NoCandidates",
    "OpenAICompatClient",
    "Outcome",
    "ProtocolError",
    "RedisEventLog",
    "RequestError",
    "RequestTimeout",
    "Route",
    "RouteDefaults",
    "RouteTarget",
    "RouteUnavailable",
    "Routed",
    "RoutesConfig",
    "RoutesError",
    "RoutingError",
    "RoutingEvent",
    "TaskTimeout",
    "Timeout",
    "Transport",
    "UnknownStatus",
    "Upstream",
    "UpstreamResponse",
    "Walker",
    "WalkerConfig",
    "default_routes",
    "list_breakers",
    "load_routes",
    "recent_events",
    "reset_breaker",
    "retryable_reason",
]
