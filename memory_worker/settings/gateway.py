"""The gateway's settings (§3, §6): Retry-After cooling, caps, load sharing, slow nodes.

A base of :class:`~memory_worker.settings.model.Settings` (one model, every field at the
top level: ``MEMORY_ROUTING_BALANCE``…); ``Settings.gateway_config()`` hands them to the
walker together.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from llm_client import GatewayConfig
from memory_worker.settings.types import SecretSafeSettings


class GatewaySettings(SecretSafeSettings):
    """The gateway's settings (fields of :class:`Settings`)."""

    retry_after_max_seconds: float = Field(
        300.0,
        ge=0,
        le=86_400,
        description="Longest pause a Retry-After may impose: a capacity answer or 429 naming "
        "one cools its target that long, fleet-wide (longer ones are cut to this; 0 = never).",
    )
    routing_balance: Literal["least_in_flight", "weighted_random"] = Field(
        "least_in_flight",
        description="How a tier's calls are spread by weight: fewest calls in flight per "
        "weight first (this process's count), or a weighted random order.",
    )
    routing_rate_burst: int = Field(
        2,
        ge=1,
        le=10_000,
        description="Calls a requests_per_minute cap lets through back to back (then one per "
        "60/N s).",
    )
    routing_latency_window_seconds: float = Field(
        15.0,
        gt=0,
        le=3600,
        description="One latency window: slow-node detection reads a target's successes over "
        "the last two.",
    )
    routing_outlier_factor: float = Field(
        3.0,
        gt=1,
        le=1000,
        description="A target this many times its tier's median latency moves to the back of "
        "its tier until it recovers (never a breaker charge).",
    )
    routing_outlier_min_samples: int = Field(
        5, ge=1, le=1_000_000, description="Successes a target needs before it can be judged slow."
    )
    routing_outlier_min_gap_ms: int = Field(
        200,
        ge=0,
        le=3_600_000,
        description="…and it must be at least this much slower than the median (ms).",
    )
    routing_outlier_max_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="At most this share of a tier is moved back as slow at once (one target "
        "at least, never all).",
    )
    routing_chars_per_token: int = Field(
        4,
        ge=1,
        le=100,
        description="Characters per token when an answer reports no usage (tokens_per_day).",
    )

    def gateway_config(self) -> GatewayConfig:
        """Cooling, caps, load sharing and slow nodes (§3, §6)."""
        return GatewayConfig(
            retry_after_max_seconds=self.retry_after_max_seconds,
            rate_burst=self.routing_rate_burst,
            latency_window_seconds=self.routing_latency_window_seconds,
            outlier_factor=self.routing_outlier_factor,
            outlier_min_samples=self.routing_outlier_min_samples,
            outlier_min_gap_ms=self.routing_outlier_min_gap_ms,
            outlier_max_share=self.routing_outlier_max_share,
            balance=self.routing_balance,
            chars_per_token=self.routing_chars_per_token,
        )
