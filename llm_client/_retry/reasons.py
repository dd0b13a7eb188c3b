"""Why a failed call may be retried elsewhere: the vocabulary of §4."""

from __future__ import annotations

from enum import StrEnum


class FailureReason(StrEnum):
    """Retryable failure reasons; anything else is not retryable (``None``)."""

    PROVIDER_UNAVAILABLE = "provider_unavailable"
    CAPACITY_UNAVAILABLE = "capacity_unavailable"
    PROVIDER_OVERLOADED = "provider_overloaded"
    PROVIDER_TIMEOUT = "provider_timeout"
    PROVIDER_PROTOCOL_ERROR = "provider_protocol_error"
    #: The backend was reached and crashed (HTTP 500, any other unmatched 5xx), §4:
    #: charged and failed over like ``provider_unavailable``, but a walk that ends on it
    #: fails the run (a prompt that crashes every backend must retire, not loop).
    PROVIDER_ERROR = "provider_error"
