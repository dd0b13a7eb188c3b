"""The circuit breakers' settings (§5): thresholds, cooldowns, permits, held successes,
and the outlier ejection by error rate beside them.

A base of :class:`~memory_worker.settings.model.Settings` (one model, every field at the
top level: ``MEMORY_BREAKER_FAILURE_THRESHOLD``…); ``Settings.breaker_config()`` hands the
thresholds to the breakers, ``Settings.ejection_config()`` the ejection's to the walker,
the worker's runner reads the hold of successes.
"""

from __future__ import annotations

from pydantic import Field

from llm_client import BreakerConfig, EjectionConfig
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

    # --- outlier ejection by error rate (§5, llm_client._outlier) ---------------------------
    ejection_enabled: bool = Field(
        True,
        description="Eject a target whose calls fail too often (by failure share, or by "
        "success rate against its tier's peers) for a growing period (§5).",
    )
    ejection_window_seconds: float = Field(
        60.0,
        ge=1,
        le=HOUR,
        description="Window of each target's successes and charged failures (fleet-wide, "
        "six buckets); also the probation after an ejection.",
    )
    ejection_refresh_seconds: float = Field(
        1.0,
        ge=0,
        le=60,
        description="A worker flushes its counts and reads the fleet's at most this often "
        "per route (one round trip); 0 = every call.",
    )
    ejection_failure_ratio: float = Field(
        0.5,
        gt=0,
        le=1,
        description="Failure share (inclusive) in the window that ejects a target.",
    )
    ejection_failure_min_volume: int = Field(
        20, ge=1, le=1_000_000, description="Calls in the window before the failure share applies."
    )
    ejection_success_rate_min_hosts: int = Field(
        3,
        ge=2,
        le=1000,
        description="Targets of a tier with enough calls before the success-rate rule applies.",
    )
    ejection_success_rate_min_volume: int = Field(
        20,
        ge=1,
        le=1_000_000,
        description="Calls in the window a target needs to count for the success-rate rule.",
    )
    ejection_success_rate_stdev_factor: float = Field(
        1.9,
        gt=0,
        le=100,
        description="A target whose success rate is below the tier's mean minus this many "
        "standard deviations is ejected.",
    )
    ejection_base_seconds: float = Field(
        30.0,
        gt=0,
        le=DAY,
        description="First ejection period; the n-th ejection in a row lasts n times this.",
    )
    ejection_max_seconds: float = Field(
        300.0, gt=0, le=DAY, description="Cap of the ejection period (at least the base)."
    )
    ejection_max_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="Panic floor: at most this share of a tier is ejected at once (one target "
        "at least, never every one).",
    )
    ejection_probation_share: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Share of its tier's calls a target back from ejection is sent first, "
        "for one window, even while a peer could serve them all.",
    )

    def ejection_config(self) -> EjectionConfig:
        """Outlier ejection by error rate (§5)."""
        return EjectionConfig(
            enabled=self.ejection_enabled,
            window_seconds=self.ejection_window_seconds,
            refresh_seconds=self.ejection_refresh_seconds,
            failure_percentage_threshold=self.ejection_failure_ratio,
            failure_percentage_min_volume=self.ejection_failure_min_volume,
            success_rate_min_hosts=self.ejection_success_rate_min_hosts,
            success_rate_min_volume=self.ejection_success_rate_min_volume,
            success_rate_stdev_factor=self.ejection_success_rate_stdev_factor,
            base_ejection_seconds=self.ejection_base_seconds,
            max_ejection_seconds=self.ejection_max_seconds,
            max_ejection_share=self.ejection_max_share,
            probation_share=self.ejection_probation_share,
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
