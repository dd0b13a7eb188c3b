"""Typed client for the LLM farm: transports, errors, retry classifier, breakers, routing."""

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
from llm_client.openai_compat import OpenAICompatClient
from llm_client.reasons import FailureReason
from llm_client.retry import retryable_reason
from llm_client.transport import ChatResult, ClientConfig, EmbedResult, UpstreamResponse

__all__ = [
    "AllCircuitsOpen",
    "BackendUnavailable",
    "CapacityUnavailable",
    "CapacityWaitExpired",
    "CapacityWaitTimeout",
    "ChatResult",
    "ClientConfig",
    "DeadlineExceeded",
    "DecodeError",
    "DiscoveryClient",
    "EmbedResult",
    "EmptyResponse",
    "Exhausted",
    "FailureReason",
    "LLMError",
    "NoCandidates",
    "OpenAICompatClient",
    "ProtocolError",
    "RequestError",
    "RequestTimeout",
    "RouteUnavailable",
    "RoutingError",
    "TaskTimeout",
    "Timeout",
    "Transport",
    "UnknownStatus",
    "Upstream",
    "UpstreamResponse",
    "retryable_reason",
]
