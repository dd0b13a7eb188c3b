"""Every knob of memory-worker, in one pydantic-settings model.

Each constant the contract (docs/contract.md) names is a field here with its default and its
environment variable. Fields without an explicit alias read ``MEMORY_<NAME>``;
the few §13 names without the prefix (``REDIS_URL``, ``DISCOVERY_BASE_URL``,
``ADMIN_*``, ``TELEGRAM_API_BASE``, ``SENTRY_DSN``) carry an alias.

The configuration table of docs/configuration.md is generated from this model
(``memory-worker config --markdown``), so the docs cannot drift from the code.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from llm_client import EMBEDDING, BreakerConfig, ClientConfig, GatewayConfig, RouteDefaults


def _alias(name: str) -> AliasChoices:
    return AliasChoices(name)


class Settings(BaseSettings):
    """memory-worker configuration (env vars override defaults)."""

    model_config = SettingsConfigDict(
        env_prefix="MEMORY_",
        extra="ignore",
        populate_by_name=True,
        frozen=True,
    )

    # --- storage (§2) -------------------------------------------------------------------
    redis_url: str | None = Field(
        None,
        validation_alias=_alias("REDIS_URL"),
        description="Redis/Valkey URL (redis://, rediss://, unix://, redis+sentinel://). "
        "Unset: start the embedded Valkey.",
    )
    cards_url: str | None = Field(
        None,
        description="Card store (memory) server, when not the REDIS_URL one: any REDIS_URL "
        "form, or a Redis/Valkey Cluster as redis+cluster://[user:pass@]host:port[,host:port…] "
        "(rediss+cluster:// for TLS). Unset: cards live with the queue.",
    )
    cards_wait_replicas: int | None = Field(
        None,
        ge=0,
        description="Replicas that must acknowledge a run's card write (WAIT) before the run "
        "completes, so a failover keeps completed runs' cards. Unset: 1 when the card server "
        "(any cluster shard) has a replica at start, else 0.",
    )
    cards_wait_timeout_ms: int = Field(
        1000,
        ge=1,
        description="How long a card write waits for its replicas; past it the run goes on "
        "(logged cards.write_not_replicated) and that master is not waited on for a minute.",
    )
    key_prefix: str = Field("mw:", description="Prefix of every Redis key this deployment owns.")
    data_dir: Path = Field(Path("var"), description="Local state: embedded Valkey data, logs.")
    redis_reconnect_max_seconds: float = Field(
        1.0,
        description="Cap of the worker loop's back-off while Redis is away (short: work "
        "resumes within about this long after Redis answers).",
    )
    redis_connect_timeout_seconds: float = Field(
        5.0, description="Connect timeout of every Redis client."
    )
    redis_socket_timeout_seconds: float = Field(
        10.0,
        description="Socket (read/write) timeout of every Redis client: a black-holed Redis "
        "cannot hang a worker.",
    )
    store_retry_max_seconds: float = Field(
        2.0, description="Cap of the back-off between retries of a run's outcome write."
    )

    # --- farm / Discovery client (§3) -------------------------------------------------------
    discovery_base_url: str = Field(
        "http://127.0.0.1:50051",
        validation_alias=_alias("DISCOVERY_BASE_URL"),
        description="Default farm (used when no routes file is configured).",
    )
    routes_file: Path | None = Field(
        None,
        description="TOML routes file (§6, see config/routes.toml); unset: one Discovery "
        "target per workflow at DISCOVERY_BASE_URL.",
    )
    request_timeout_seconds: float = Field(30.0, description="Budget of one HTTP round trip.")
    task_timeout_seconds: float = Field(
        720.0, description="Budget of a job's run time, re-anchored when first seen RUNNING."
    )
    capacity_wait_seconds: float = Field(
        60.0, description="How long the client resubmits on 'no slots' answers before giving up."
    )
    capacity_poll_seconds: float = Field(1.0, description="Pause between capacity resubmits.")
    job_poll_seconds: float = Field(1.0, description="Pause between job status polls.")
    discovery_priority: int = Field(
        10, description="Discovery priority of memory jobs (0 = interactive)."
    )
    extraction_service: str = Field(
        "llm-openai", description="Discovery service of the default extractor."
    )
    extraction_endpoint: str = Field(
        "chat_completions", description="Discovery endpoint of the extractor."
    )
    extraction_model: str = Field(
        "memory-extractor", description="Model name of the default extractor."
    )
    extraction_max_output_tokens: int = Field(
        4000, description="max_tokens of extraction requests."
    )
    extraction_temperature: float = Field(0.2, description="Temperature of extraction requests.")
    redact_contacts: bool = Field(
        False,
        description="Also mask e-mail addresses and phone numbers in the text sent to the farm "
        "(secrets and payment card numbers are always masked, §14).",
    )
    embedder_service: str = Field("embedder", description="Discovery service of the embedder.")
    embedder_endpoint: str = Field("encode", description="Discovery endpoint of the embedder.")
    embedding_model: str = Field(
        "embedder", description="Model name of the default embedder target."
    )
    embedding_dimension: int = Field(512, description="Embedding dimension requested and stored.")
    embedding_request_timeout_seconds: float = Field(
        15.0, description="Budget of one HTTP round trip of an embedding call."
    )
    embedding_task_timeout_seconds: float = Field(
        15.0,
        description="Task budget of an embedding job (a timeout releases the run: the "
        "embedder is a side service).",
    )
    embedding_capacity_wait_seconds: float = Field(
        15.0, description="Capacity wait of an embedding call (no slots, or still queued)."
    )
    local_embed_concurrency: int = Field(
        1,
        ge=1,
        description="Calls a local embedding target runs at once (transport local, §16), each "
        "on MEMORY_LOCAL_EMBED_THREADS engine threads.",
    )
    local_embed_threads: int = Field(
        1,
        ge=0,
        description="OpenMP threads of the local embedding engine (0 = one per core). One: "
        "OpenMP threads spin for cores a shared host does not have (e5 query p50 47-78 ms "
        "single-threaded, 234-896 ms with both cores, on a busy 2-core box).",
    )
    recall_timeout_seconds: float = Field(
        10.0, gt=0, description="Budget of one MemoryQueue.recall (embedding the query included)."
    )
    farmsim_embedder: Literal["local", "hashed"] = Field(
        "local",
        description="Embedder of the farm simulator (demo, tests): `local` runs the real "
        "multilingual e5-small model (§16), `hashed` a bag-of-words stand-in.",
    )

    # --- retry classifier / breakers (§4, §5) ------------------------------------------------
    breaker_failure_threshold: int = Field(5, description="Consecutive charged failures that trip.")
    breaker_rate_min_calls: int = Field(
        20, description="Calls in the window before the rate rule applies."
    )
    breaker_rate_window_seconds: float = Field(
        120.0, description="Window of the failure-rate rule."
    )
    breaker_rate_threshold: float = Field(0.8, description="Failure share (exclusive) that trips.")
    breaker_cooldown_seconds: float = Field(
        30.0, description="First open period; doubles per trip."
    )
    breaker_cooldown_max_seconds: float = Field(300.0, description="Cap of the open period.")
    breaker_timeout_min_slice_seconds: float = Field(
        30.0, description="A timeout charges the breaker only if the attempt had this much time."
    )
    breaker_permit_lease_seconds: float = Field(
        30.0,
        gt=0,
        description=(
            "Lease of a probe permit (half-open or fail-open), renewed while its call runs;"
            " a prober killed mid-call frees the probe slot within this long."
        ),
    )

    # --- routing (§6) ----------------------------------------------------------------------
    route_max_hops: int = Field(4, description="Default max targets tried per call.")
    route_wall_seconds: float = Field(
        900.0, description="Default wall-time budget of one routed call."
    )
    routing_events_maxlen: int = Field(
        10_000, description="Routing events kept in the Redis stream."
    )

    # --- gateway: cooling, caps, load sharing, slow nodes (§3, §6) -------------------------
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

    # --- admin reports (§9) ------------------------------------------------------------------
    admin_report_cooldown: float = Field(
        600.0, description="Dedup window per dedupe key (seconds)."
    )
    admin_telegram_bot_token: SecretStr | None = Field(
        None,
        validation_alias=_alias("ADMIN_TELEGRAM_BOT_TOKEN"),
        description="Bot token for pages.",
    )
    admin_telegram_chat_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list,
        validation_alias=_alias("ADMIN_TELEGRAM_CHAT_IDS"),
        description="Comma-separated Telegram chat ids that receive pages.",
    )
    telegram_api_base: str = Field(
        "https://api.telegram.org",
        validation_alias=_alias("TELEGRAM_API_BASE"),
        description="Telegram Bot API base URL.",
    )
    admin_webhook_url: SecretStr | None = Field(
        None,
        validation_alias=_alias("ADMIN_WEBHOOK_URL"),
        description="Generic JSON webhook for pages.",
    )
    admin_delivery_max_attempts: int = Field(8, description="Delivery attempts of one page.")

    # --- runs (§7) ---------------------------------------------------------------------------
    max_attempts: int = Field(5, description="Attempts before a run is retired.")
    backoff_unit_seconds: float = Field(60.0, description="Backoff unit: attempts² × unit.")
    backoff_max_units: float = Field(60.0, description="Backoff cap, in units (60 × 60 s = 1 h).")
    lease_seconds: float = Field(
        30.0, description="Lease of a claimed run; renewed while it works."
    )
    lease_renew_seconds: float = Field(10.0, description="Lease renewal period.")
    max_queued_runs: int = Field(5000, description="Cap of queued + processing runs.")
    max_daily_enqueued_runs: int = Field(2000, description="New runs per UTC day.")
    prompt_version: str = Field("memory_v1", description="Current extraction prompt version.")
    error_log_max_entries: int = Field(20, description="Error-log entries kept per run.")
    error_message_max_chars: int = Field(500, description="Longest error text kept in an entry.")
    max_run_messages: int = Field(2000, description="Messages accepted in one run request.")
    max_message_chars: int = Field(16_000, description="Longest message text accepted.")
    max_run_bytes: int = Field(2_000_000, description="Largest encoded run request accepted.")
    completed_run_retention_days: float = Field(
        14.0,
        description="Completed/skipped runs are kept this long, then pruned (their slice stays a duplicate).",
    )
    retired_run_message_retention_days: float = Field(
        30.0,
        description="Retired runs keep their messages this long (replayable), then only "
        "their record and error log.",
    )
    natural_key_retention_days: float = Field(
        90.0,
        description="A pruned run's slice stays a duplicate this long after it was "
        "enqueued; later the same slice is a new run.",
    )
    applied_run_retention_days: float = Field(
        30.0, description="Per-chat record of applied runs (idempotency) kept this long."
    )
    chat_index_backfill_runs: int = Field(
        20_000,
        gt=0,
        description="Runs enqueued before the per-chat run index that one maintenance pass "
        "adds to it (a one-time backfill; forget walks every run until it is done).",
    )
    forget_chunk_items: int = Field(
        100,
        description="Cards (or runs, links, keys) one forget script call removes: each call "
        "blocks Redis for a few milliseconds only (§14).",
    )
    forget_rewrite_aof: bool = Field(
        True,
        description="After a forget, ask the server to rewrite its append-only file so the "
        "forgotten text leaves the disk (BGREWRITEAOF; refused servers are logged).",
    )
    audit_maxlen: int = Field(10_000, description="Audit events kept (approximately).")

    # --- ticks and the worker (§8) -------------------------------------------------------------
    consolidation_backend_retry_interval: float = Field(
        15.0, description="Delay of the single probe tick while the farm is out (seconds)."
    )
    route_gate_reuse_seconds: float = Field(
        1.0,
        ge=0,
        le=5,
        description='A worker reuses its pre-claim gate\'s "every route passable" answer this '
        'long (never a "blocked" one; dropped on any tick that did not complete); 0 = read '
        "the breakers before every claim.",
    )
    worker_concurrency: int = Field(4, description="Ticks one worker process runs at once.")
    pipeline_target: int = Field(
        0, description="In-flight tick target; 0 = sum of live workers' concurrency."
    )
    poll_delay_seconds: float = Field(0.05, description="arq poll delay.")
    safety_net_seconds: int = Field(10, description="Cron safety-net period (seconds, divides 60).")
    shutdown_grace_seconds: float = Field(
        20.0, description="On SIGTERM, in-flight runs get this long before they are released."
    )
    shutdown_release_seconds: float = Field(
        10.0,
        description="A stopping worker retries the release of its runs this long while Redis "
        "is unreachable (a deploy during a Redis blip spends no attempt).",
    )
    tick_timeout_seconds: float = Field(3600.0, description="arq timeout of one tick job.")
    worker_heartbeat_seconds: float = Field(5.0, description="Worker registry heartbeat period.")
    worker_registry_grace_seconds: float = Field(
        600.0,
        description="A dead worker leaves the registry this long after its heartbeat expired.",
    )

    # --- memory consolidation (§10) -------------------------------------------------------------
    max_input_tokens: int = Field(10_000, description="Token budget of one extraction batch.")
    max_batch_messages: int = Field(200, description="Messages per extraction batch.")
    related_cards: int = Field(24, description="Existing related cards shown to the extractor.")
    related_author_boost: float = Field(
        0.03,
        ge=0,
        description="Cosine added, in the related-card lookup, to a card about one of the "
        "run's authors (their user card, or its text names them).",
    )
    existing_cards_max: int = Field(80, description="Existing cards in one prompt, at most.")
    card_max_bytes: int = Field(700, description="Longest fact text kept.")
    ephemeral_ttl_days: float = Field(2.0, description="Expiry of ephemeral cards.")
    short_ttl_days: float = Field(14.0, description="Expiry of short-lived cards.")
    merge_min_cards: int = Field(3, description="Cards sharing a subject before a merge pass.")
    merge_cooldown_hours: float = Field(72.0, description="Merge-pass cooldown per subject group.")
    maintenance_seconds: float = Field(
        3600.0, description="Period of card expiry and duplicate collapse (fleet-wide)."
    )
    merge_interval_seconds: float = Field(
        60.0, description="Period of the subject merge pass (fleet-wide)."
    )
    reembed_batch_cards: int = Field(
        64, ge=1, description="Cards re-embedded per step of a model switch (§16)."
    )
    reembed_pause_seconds: float = Field(
        0.2, ge=0, description="Pause between two steps of a model switch."
    )
    reembed_budget_seconds: float = Field(
        20.0,
        gt=0,
        description="Time one maintenance call spends re-embedding at most (one worker at a "
        "time; the next call resumes).",
    )

    # --- operating (§11) ----------------------------------------------------------------------
    serve_host: str = Field(
        "127.0.0.1",
        description="Health/metrics server (and console) bind address; off loopback the "
        "console needs a token.",
    )
    serve_port: int = Field(9108, description="Health/metrics server port.")
    metrics_cache_seconds: float = Field(5.0, description="Min interval between Redis samples.")
    readiness_stall_seconds: float = Field(
        60.0, description="Worker loop heartbeat age that is unready."
    )
    log_format: Literal["auto", "json", "console"] = Field(
        "auto", description="auto: json off a TTY."
    )
    log_level: str = Field("INFO", description="Root log level.")
    sentry_dsn: SecretStr | None = Field(
        None, validation_alias=_alias("SENTRY_DSN"), description="Sentry DSN."
    )
    environment: str = Field("production", description="Sentry environment tag.")

    # --- operator console (§15) -------------------------------------------------------------
    console_token: SecretStr | None = Field(
        None,
        description="Token the console's actions (replay, breaker reset, forget) ask for; off "
        "loopback it also opens every page. Unset: the console at / is read-only.",
    )
    console_read_token: SecretStr | None = Field(
        None,
        description="Token that opens the console's pages but no action. Set: every page "
        "needs a token even on loopback (off loopback they always do).",
    )
    console_session_hours: float = Field(
        12.0,
        gt=0,
        description="How long a console login lasts (an HMAC cookie; a server restart also "
        "ends it).",
    )
    console_auth_burst: int = Field(
        5, ge=1, description="Wrong console tokens one client address may try back to back."
    )
    console_auth_per_minute: float = Field(
        5.0,
        gt=0,
        description="Wrong console tokens one client address may try per minute after the "
        "burst (then 429 with Retry-After).",
    )
    console_show_memory: bool = Field(
        True,
        description="Serve the console's memory browser (cards, episodes). 0: no card or "
        "message text is ever rendered.",
    )

    @field_validator("admin_telegram_chat_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            return [int(part) for part in value.replace(";", ",").split(",") if part.strip()]
        if isinstance(value, int):
            return [value]
        return value

    @field_validator("key_prefix")
    @classmethod
    def _check_prefix(cls, value: str) -> str:
        if any(ch in value for ch in "{} \t\n"):
            raise ValueError("MEMORY_KEY_PREFIX must not contain braces or whitespace")
        return value

    @field_validator("safety_net_seconds")
    @classmethod
    def _check_safety_net(cls, value: int) -> int:
        if value <= 0 or 60 % value:
            raise ValueError("MEMORY_SAFETY_NET_SECONDS must divide 60")
        return value

    @property
    def valkey_dir(self) -> Path:
        return self.data_dir / "valkey"

    # --- the plain configs llm_client takes (it never reads settings itself) -----------------
    def client_config(
        self, base_url: str | None = None, *, workflow: str | None = None
    ) -> ClientConfig:
        """Budgets of the farm clients (§3); per workflow: ``embedding`` calls get
        their own, short budgets, every other workflow the general ones."""
        if workflow == EMBEDDING:
            request, task, capacity = (
                self.embedding_request_timeout_seconds,
                self.embedding_task_timeout_seconds,
                self.embedding_capacity_wait_seconds,
            )
        else:
            request, task, capacity = (
                self.request_timeout_seconds,
                self.task_timeout_seconds,
                self.capacity_wait_seconds,
            )
        return ClientConfig(
            base_url=base_url or self.discovery_base_url,
            request_timeout=request,
            task_timeout=task,
            capacity_wait=capacity,
            capacity_poll=self.capacity_poll_seconds,
            job_poll=self.job_poll_seconds,
            priority=self.discovery_priority,
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

    def route_defaults(self) -> RouteDefaults:
        """What routes leave out, and the routes used without a routes file (§6)."""
        return RouteDefaults(
            discovery_base_url=self.discovery_base_url,
            extraction_service=self.extraction_service,
            extraction_endpoint=self.extraction_endpoint,
            extraction_model=self.extraction_model,
            embedder_service=self.embedder_service,
            embedder_endpoint=self.embedder_endpoint,
            embedding_model=self.embedding_model,
            max_hops=self.route_max_hops,
            wall_seconds=self.route_wall_seconds,
            slot_wait_seconds=self.capacity_wait_seconds,
            slot_poll_seconds=self.capacity_poll_seconds,
            embedding_dimension=self.embedding_dimension,
        )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings from the environment, read once per process."""
    return Settings()


def env_name(field: str) -> str:
    """The environment variable that sets ``field``."""
    info = Settings.model_fields[field]
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        first = alias.choices[0]
        assert isinstance(first, str)
        return first
    return "MEMORY_" + field.upper()
