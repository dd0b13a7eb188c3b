"""Typed client for the LLM farm: transports, errors, retry classifier, breakers, routing."""

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
