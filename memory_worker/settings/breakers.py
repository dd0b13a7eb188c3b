"""The circuit breakers' settings (§5): thresholds, cooldowns, permits, held successes.

A base of :class:`~memory_worker.settings.model.Settings` (one model, every field at the
top level: ``MEMORY_BREAKER_FAILURE_THRESHOLD``…); ``Settings.breaker_config()`` hands the
thresholds to the breakers, the worker's runner reads the hold of successes.
"""

from __future__ import annotations

from pydantic import Field

from llm_client import BreakerConfig
from memory_worker.settings.types import DAY, HOUR, SecretSafeSettings


class BreakerSettings(SecretSafeSettings):
    """The breakers' settings (fields of :class:`Settings`)."""

    breaker_failure_threshold: int = Field(
        5, ge=1, le=1000, description="Consecutive charged failures that trip."
    )
    breaker_rate_min_calls: int = Field(
        20, ge=1, le=100_000, description="Calls in the window before the rate rule applies."
    )
    breaker_rate_window_seconds: float = Field(
        120.0, gt=0, le=DAY, description="Window of the failure-rate rule."
    )
    breaker_rate_threshold: float = Field(
        0.8, gt=0, lt=1, description="Failure share (exclusive) that trips."
    )
    breaker_cooldown_seconds: float = Field(
        30.0, gt=0, le=DAY, description="First open period; doubles per trip."
    )
    breaker_cooldown_max_seconds: float = Field(
        300.0, gt=0, le=DAY, description="Cap of the open period."
    )
    breaker_timeout_min_slice_seconds: float = Field(
        30.0,
        ge=0,
        le=DAY,
        description="A timeout charges the breaker only if the attempt had this much time.",
    )
    breaker_permit_lease_seconds: float = Field(
        30.0,
        gt=0,
        le=HOUR,
        description=(
            "Lease of a probe permit (half-open or fail-open), renewed while its call runs;"
            " a prober killed mid-call frees the probe slot within this long."
        ),
    )
    breaker_success_hold_seconds: float = Field(
        1.0,
        ge=0,
        le=60,
        description=(
            "How long a worker process may hold closed breakers' successes to fold them into"
            " one record a target (they ride on a later round trip, or land alone after twice"
            " this; a failure never overtakes them); 0 = each run's land with its completion."
            " A killed process loses at most this much of its successes, never a charge; at"
            " most a quarter of MEMORY_ROUTING_LATENCY_WINDOW_SECONDS."
        ),
    )

    def breaker_config(self) -> BreakerConfig:
        """Breaker thresholds (§5)."""
        return BreakerConfig(
            failure_threshold=self.breaker_failure_threshold,
            rate_min_calls=self.breaker_rate_min_calls,
            rate_window_seconds=self.breaker_rate_window_seconds,
            rate_threshold=self.breaker_rate_threshold,
            cooldown_seconds=self.breaker_cooldown_seconds,
            cooldown_max_seconds=self.breaker_cooldown_max_seconds,
            timeout_min_slice_seconds=self.breaker_timeout_min_slice_seconds,
        )
