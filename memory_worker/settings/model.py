"""Every knob of memory-worker, in one pydantic-settings model (see the package docstring).

Each constant the contract names is a field with its default and its environment variable:
``MEMORY_<NAME>``, or an alias for the §13 names without the prefix (``REDIS_URL``,
``DISCOVERY_BASE_URL``, ``ADMIN_*``, ``TELEGRAM_API_BASE``, ``SENTRY_DSN``); docs/configuration.md's
table is generated from it (``memory-worker config --markdown``). Settings that cannot work never start (§11): :func:`load_settings` (and :func:`get_settings`)
turn every problem — bounds, URLs, names, the prompt version, the relations of
:data:`~memory_worker.settings.checks.RELATIONS` — into one
:class:`~memory_worker.errors.SettingsError` naming the variables, never a secret's value.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from llm_client import EMBEDDING, BreakerConfig, ClientConfig, GatewayConfig, RouteDefaults
from memory_worker.settings.breakers import BreakerSettings
from memory_worker.settings.checks import PromptVersion, contradictions, load_checked
from memory_worker.settings.console import ConsoleSettings
from memory_worker.settings.gateway import GatewaySettings
from memory_worker.settings.memory_use import MemoryUseSettings
from memory_worker.settings.recall import RecallSettings
from memory_worker.settings.types import (
    CardsUrl,
    Directory,
    ExistingFile,
    HttpUrl,
    LogLevel,
    Name,
    RedisUrl,
    SecretHttpUrl,
    Token,
    field_env_name,
)


def _alias(name: str) -> AliasChoices:
    return AliasChoices(name)


class Settings(
    RecallSettings, MemoryUseSettings, ConsoleSettings, GatewaySettings, BreakerSettings
):
    """memory-worker configuration (env vars override defaults). Five groups of fields are
    declared in bases, each read together by one part: the §16 ranking knobs of recall
    (:class:`~memory_worker.settings.recall.RecallSettings`), how the bot uses memory
    (:class:`~memory_worker.settings.memory_use.MemoryUseSettings`), the operator console
    (:class:`~memory_worker.settings.console.ConsoleSettings`), the gateway's cooling,
    caps, load sharing and slow nodes
    (:class:`~memory_worker.settings.gateway.GatewaySettings`), and the breakers' thresholds
    (:class:`~memory_worker.settings.breakers.BreakerSettings`)."""

    model_config = SettingsConfigDict(
        env_prefix="MEMORY_",
        extra="ignore",
        populate_by_name=True,
        frozen=True,
        # an empty variable means "unset" (compose files write FOO= for that)
        env_ignore_empty=True,
        allow_inf_nan=False,
        # a raw ValidationError printed anywhere never quotes a value (secrets included)
        hide_input_in_errors=True,
    )

    # --- storage (§2) -------------------------------------------------------------------
    redis_url: RedisUrl | None = Field(
        None,
        validation_alias=_alias("REDIS_URL"),
        description="Redis/Valkey URL (redis://, rediss://, unix://, redis+sentinel://). "
        "Unset: start the embedded Valkey.",
    )
    cards_url: CardsUrl | None = Field(
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
        le=600_000,
        description="How long a card write waits for its replicas; past it the run goes on "
        "(logged cards.write_not_replicated) and that master is not waited on for a minute.",
    )
    key_prefix: str = Field("mw:", description="Prefix of every Redis key this deployment owns.")
    data_dir: Directory = Field(Path("var"), description="Local state: embedded Valkey data, logs.")
    redis_reconnect_max_seconds: float = Field(
        1.0,
        gt=0,
        description="Cap of the worker loop's back-off while Redis is away (short: work "
        "resumes within about this long after Redis answers).",
    )
    redis_connect_timeout_seconds: float = Field(
        5.0, gt=0, description="Connect timeout of every Redis client."
    )
    redis_socket_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="Socket (read/write) timeout of every Redis client: a black-holed Redis "
        "cannot hang a worker.",
    )
    store_retry_max_seconds: float = Field(
        2.0, gt=0, description="Cap of the back-off between retries of a run's outcome write."
    )

    # --- farm / Discovery client (§3) -------------------------------------------------------
    discovery_base_url: HttpUrl = Field(
        "http://127.0.0.1:50051",
        validation_alias=_alias("DISCOVERY_BASE_URL"),
        description="Default farm (used when no routes file is configured).",
    )
    routes_file: ExistingFile | None = Field(
        None,
        description="TOML routes file (§6, see config/routes.toml); unset: one Discovery "
        "target per workflow at DISCOVERY_BASE_URL.",
    )
    request_timeout_seconds: float = Field(30.0, gt=0, description="Budget of one HTTP round trip.")
    task_timeout_seconds: float = Field(
        720.0, gt=0, description="Budget of a job's run time, re-anchored when first seen RUNNING."
    )
    capacity_wait_seconds: float = Field(
        60.0,
        ge=0,
        description="How long the client resubmits on 'no slots' answers before giving up.",
    )
    capacity_poll_seconds: float = Field(1.0, gt=0, description="Pause between capacity resubmits.")
    job_poll_seconds: float = Field(1.0, gt=0, description="Pause between job status polls.")
    discovery_priority: int = Field(
        10, ge=0, description="Discovery priority of memory jobs (0 = interactive)."
    )
    extraction_service: Name = Field(
        "llm-openai", description="Discovery service of the default extractor."
    )
    extraction_endpoint: Name = Field(
        "chat_completions", description="Discovery endpoint of the extractor."
    )
    extraction_model: Name = Field(
        "memory-extractor", description="Model name of the default extractor."
    )
    extraction_max_output_tokens: int = Field(
        4000, ge=1, description="max_tokens of extraction requests."
    )
    extraction_temperature: float = Field(
        0.2, ge=0, le=2, description="Temperature of extraction requests."
    )
    redact_contacts: bool = Field(
        False,
        description="Also mask e-mail addresses and phone numbers in the text sent to the farm "
        "(secrets and payment card numbers are always masked, §14).",
    )
    embedder_service: Name = Field("embedder", description="Discovery service of the embedder.")
    embedder_endpoint: Name = Field("encode", description="Discovery endpoint of the embedder.")
    embedding_model: Name = Field(
        "embedder", description="Model name of the default embedder target."
    )
    embedding_dimension: int = Field(
        512, ge=1, le=8192, description="Embedding dimension requested and stored."
    )
    embedding_request_timeout_seconds: float = Field(
        15.0, gt=0, description="Budget of one HTTP round trip of an embedding call."
    )
    embedding_task_timeout_seconds: float = Field(
        15.0,
        gt=0,
        description="Task budget of an embedding job (a timeout releases the run: the "
        "embedder is a side service).",
    )
    embedding_capacity_wait_seconds: float = Field(
        15.0, ge=0, description="Capacity wait of an embedding call (no slots, or still queued)."
    )
    local_embed_concurrency: int = Field(
        1,
        ge=1,
        le=64,
        description="Calls a local embedding target runs at once (transport local, §16), each "
        "on MEMORY_LOCAL_EMBED_THREADS engine threads.",
    )
    local_embed_threads: int = Field(
        1,
        ge=0,
        le=256,
        description="OpenMP threads of the local embedding engine (0 = one per core). One: "
        "OpenMP threads spin for cores a shared host does not have (e5 query p50 47-78 ms "
        "single-threaded, 234-896 ms with both cores, on a busy 2-core box).",
    )
    recall_timeout_seconds: float = Field(
        10.0, gt=0, description="Budget of one MemoryQueue.recall (embedding the query included)."
    )
    recall_max_query_chars: int = Field(
        2000,
        ge=1,
        description="Longest text MemoryQueue.recall embeds; a longer one raises QueryTooLarge.",
    )
    query_max_k: int = Field(
        100,
        ge=1,
        description="Most cards one recall or similar_cards may ask for (k); more raises "
        "QueryTooLarge.",
    )
    farmsim_embedder: Literal["local", "hashed"] = Field(
        "local",
        description="Embedder of the farm simulator (demo, tests): `local` runs the real "
        "multilingual e5-small model (§16), `hashed` a bag-of-words stand-in.",
    )

    # --- routing (§6) ----------------------------------------------------------------------
    route_max_hops: int = Field(4, ge=1, le=64, description="Default max targets tried per call.")
    route_wall_seconds: float = Field(
        900.0, gt=0, description="Default wall-time budget of one routed call."
    )
    routing_events_maxlen: int = Field(
        10_000, ge=1, description="Routing events kept in the Redis stream."
    )

    # --- admin reports (§9) ------------------------------------------------------------------
    admin_report_cooldown: float = Field(
        600.0, ge=0, description="Dedup window per dedupe key (seconds)."
    )
    admin_telegram_bot_token: Token | None = Field(
        None,
        validation_alias=_alias("ADMIN_TELEGRAM_BOT_TOKEN"),
        description="Bot token for pages.",
    )
    admin_telegram_chat_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list,
        validation_alias=_alias("ADMIN_TELEGRAM_CHAT_IDS"),
        description="Comma-separated Telegram chat ids that receive pages.",
    )
    telegram_api_base: HttpUrl = Field(
        "https://api.telegram.org",
        validation_alias=_alias("TELEGRAM_API_BASE"),
        description="Telegram Bot API base URL.",
    )
    admin_webhook_url: SecretHttpUrl | None = Field(
        None,
        validation_alias=_alias("ADMIN_WEBHOOK_URL"),
        description="Generic JSON webhook for pages.",
    )
    admin_delivery_max_attempts: int = Field(8, ge=1, description="Delivery attempts of one page.")

    # --- runs (§7) ---------------------------------------------------------------------------
    max_attempts: int = Field(5, ge=1, description="Attempts before a run is retired.")
    backoff_unit_seconds: float = Field(60.0, gt=0, description="Backoff unit: attempts² × unit.")
    backoff_max_units: float = Field(
        60.0, gt=0, description="Backoff cap, in units (60 × 60 s = 1 h)."
    )
    lease_seconds: float = Field(
        30.0, gt=0, description="Lease of a claimed run; renewed while it works."
    )
    lease_renew_seconds: float = Field(10.0, gt=0, description="Lease renewal period.")
    max_queued_runs: int = Field(5000, ge=1, description="Cap of queued + processing runs.")
    max_daily_enqueued_runs: int = Field(2000, ge=1, description="New runs per UTC day.")
    prompt_version: PromptVersion = Field(
        "memory_v1", description="Current extraction prompt version."
    )
    error_log_max_entries: int = Field(20, ge=1, description="Error-log entries kept per run.")
    error_message_max_chars: int = Field(
        500, ge=1, description="Longest error text kept in an entry."
    )
    release_log_max_entries: int = Field(20, ge=1, le=1000, description="Releases kept per run.")
    max_run_messages: int = Field(2000, ge=1, description="Messages accepted in one run request.")
    max_message_chars: int = Field(16_000, ge=1, description="Longest message text accepted.")
    max_run_bytes: int = Field(2_000_000, ge=1, description="Largest encoded run request accepted.")
    completed_run_retention_days: float = Field(
        14.0,
        gt=0,
        description="Completed/skipped runs are kept this long, then pruned (their slice stays a duplicate).",
    )
    retired_run_message_retention_days: float = Field(
        30.0,
        gt=0,
        description="Retired runs keep their messages this long (replayable), then only "
        "their record and error log.",
    )
    natural_key_retention_days: float = Field(
        90.0,
        gt=0,
        description="A pruned run's slice stays a duplicate this long after it was "
        "enqueued; later the same slice is a new run.",
    )
    applied_run_retention_days: float = Field(
        30.0, gt=0, description="Per-chat record of applied runs (idempotency) kept this long."
    )
    chat_index_backfill_runs: int = Field(
        20_000,
        gt=0,
        description="Runs enqueued before the per-chat run index that one maintenance pass "
        "adds to it (a one-time backfill; forget walks every run until it is done).",
    )
    forget_chunk_items: int = Field(
        100,
        ge=1,
        description="Cards (or runs, links, keys) one forget script call removes: each call "
        "blocks Redis for a few milliseconds only (§14).",
    )
    forget_rewrite_aof: bool = Field(
        True,
        description="After a forget, ask the server to rewrite its append-only file so the "
        "forgotten text leaves the disk (BGREWRITEAOF; refused servers are logged).",
    )
    audit_maxlen: int = Field(10_000, ge=1, description="Audit events kept (approximately).")

    # --- ticks and the worker (§8) -------------------------------------------------------------
    consolidation_backend_retry_interval: float = Field(
        15.0, gt=0, description="Delay of the single probe tick while the farm is out (seconds)."
    )
    route_gate_reuse_seconds: float = Field(
        1.0,
        ge=0,
        le=5,
        description='A worker reuses its pre-claim gate\'s "every route passable" answer this '
        'long (never a "blocked" one; dropped on any tick that did not complete); 0 = read '
        "the breakers before every claim.",
    )
    worker_concurrency: int = Field(
        4, ge=1, le=1024, description="Ticks one worker process runs at once."
    )
    pipeline_target: int = Field(
        0, ge=0, description="In-flight tick target; 0 = sum of live workers' concurrency."
    )
    poll_delay_seconds: float = Field(0.05, gt=0, description="arq poll delay.")
    safety_net_seconds: int = Field(
        10, ge=1, le=60, description="Cron safety-net period (seconds, divides 60)."
    )
    shutdown_grace_seconds: float = Field(
        20.0, ge=0, description="On SIGTERM, in-flight runs get this long before they are released."
    )
    shutdown_release_seconds: float = Field(
        10.0,
        ge=0,
        description="A stopping worker retries the release of its runs this long while Redis "
        "is unreachable (a deploy during a Redis blip spends no attempt).",
    )
    tick_timeout_seconds: float = Field(
        3600.0, gt=0, description="A run's budget in a tick; arq's job timeout adds the loop."
    )
    tick_loop_seconds: float = Field(
        30.0,
        ge=0,
        le=3600,
        description="For this long after its job started, a tick whose run completed claims "
        "the next run itself (saves arq's per-job round trips); 0 = one run per tick job.",
    )
    watchdog_seconds: float | None = Field(
        None,
        gt=0,
        description="A worker whose poll loop, or every busy slot, made no progress for this "
        "long is wedged: it says why in one log line, releases its runs (attempts refunded) "
        "and exits 70 for its supervisor to restart it; /healthz is 503 meanwhile. Keep it "
        "above the tick budget plus the shutdown grace. Unset: MEMORY_TICK_TIMEOUT_SECONDS + "
        "MEMORY_SHUTDOWN_GRACE_SECONDS + 60.",
    )
    worker_heartbeat_seconds: float = Field(
        5.0, gt=0, description="Worker registry heartbeat period."
    )
    worker_registry_grace_seconds: float = Field(
        600.0,
        ge=0,
        description="A dead worker leaves the registry this long after its heartbeat expired.",
    )

    # --- memory consolidation (§10) -------------------------------------------------------------
    max_input_tokens: int = Field(10_000, ge=1, description="Token budget of one extraction batch.")
    max_batch_messages: int = Field(200, ge=1, description="Messages per extraction batch.")
    related_cards: int = Field(
        24, ge=0, description="Existing related cards shown to the extractor."
    )
    related_author_boost: float = Field(
        0.03,
        ge=0,
        le=1,
        description="Cosine added, in the related-card lookup, to a card about one of the "
        "run's authors (their user card, or its text names them).",
    )
    existing_cards_max: int = Field(80, ge=0, description="Existing cards in one prompt, at most.")
    card_max_bytes: int = Field(700, ge=1, description="Longest fact text kept.")
    retraction_cosine: float = Field(
        0.98,
        ge=0,
        le=1,
        description="Cosine from which a new card states a withdrawn fact about the same "
        "subject (§10: not learned again from older messages).",
    )
    retraction_shared_cosine: float = Field(
        0.93,
        ge=0,
        le=1,
        description="The same, when the new card names the withdrawn card's value.",
    )
    retraction_evidence_cosine: float = Field(
        0.905,
        ge=0,
        le=1,
        description="Cosine from which a new card from a message the withdrawn card came from "
        "states its fact, when the chat holds no other card from that message (§10).",
    )
    retraction_sibling_cosine: float = Field(
        0.82,
        ge=0,
        le=1,
        description="The same, when the chat holds other cards from that message and the new "
        "card is closer to the withdrawn one than to each of them.",
    )
    retraction_sibling_margin: float = Field(
        0.02,
        ge=-1,
        le=1,
        description="How much closer to the withdrawn card than to every other card from its "
        "messages a new card must be to be refused by its evidence.",
    )
    retraction_sibling_reads: int = Field(
        32,
        ge=0,
        le=1000,
        description="Cards nearest a new card from a withdrawn card's message read to find the "
        "other cards that message taught (0: none; the higher threshold then applies).",
    )
    ephemeral_ttl_days: float = Field(2.0, gt=0, description="Expiry of ephemeral cards.")
    short_ttl_days: float = Field(14.0, gt=0, description="Expiry of short-lived cards.")
    merge_min_cards: int = Field(
        3, ge=2, description="Cards sharing a subject before a merge pass."
    )
    merge_cooldown_hours: float = Field(
        72.0, ge=0, description="Merge-pass cooldown per subject group."
    )
    maintenance_seconds: float = Field(
        3600.0, gt=0, description="Period of card expiry and duplicate collapse (fleet-wide)."
    )
    merge_interval_seconds: float = Field(
        60.0, gt=0, description="Period of the subject merge pass (fleet-wide)."
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
    serve_host: Name = Field(
        "127.0.0.1",
        description="Health/metrics server (and console) bind address; off loopback the "
        "console needs a token.",
    )
    serve_port: int = Field(9108, ge=0, le=65535, description="Health/metrics server port.")
    metrics_cache_seconds: float = Field(
        5.0, ge=0, description="Min interval between Redis samples."
    )
    readiness_stall_seconds: float = Field(
        60.0, gt=0, description="Worker loop heartbeat age that is unready."
    )
    log_format: Literal["auto", "json", "console"] = Field(
        "auto", description="auto: json off a TTY."
    )
    log_level: LogLevel = Field("INFO", description="Root log level.")
    sentry_dsn: SecretHttpUrl | None = Field(
        None, validation_alias=_alias("SENTRY_DSN"), description="Sentry DSN."
    )
    environment: Name = Field("production", description="Sentry environment tag.")

    @field_validator("admin_telegram_chat_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return [int(part) for part in value.replace(";", ",").split(",") if part.strip()]
            except ValueError:
                raise ValueError("must be comma-separated integer chat ids") from None
        if isinstance(value, int):
            return [value]
        return value

    @field_validator("key_prefix")
    @classmethod
    def _check_prefix(cls, value: str) -> str:
        if any(ch in value for ch in "{} \t\n"):
            raise ValueError("must not contain braces or whitespace")
        return value

    @field_validator("safety_net_seconds")
    @classmethod
    def _check_safety_net(cls, value: int) -> int:
        if value <= 0 or 60 % value:
            raise ValueError("must divide 60")
        return value

    @model_validator(mode="after")
    def _check_relations(self) -> Self:
        problems = contradictions({n: getattr(self, n) for n in type(self).model_fields}, env_name)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def tick_job_timeout(self) -> float:
        """arq's tick job timeout: a run's full budget after the last moment it may start."""
        return self.tick_timeout_seconds + self.tick_loop_seconds

    @property
    def watchdog_window(self) -> float:
        """The watchdog's window (s): ``MEMORY_WATCHDOG_SECONDS``, else budget + grace + 60."""
        if self.watchdog_seconds is not None:
            return self.watchdog_seconds
        return self.tick_timeout_seconds + self.shutdown_grace_seconds + 60.0

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


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment (and ``overrides``), or one
    :class:`~memory_worker.errors.SettingsError` naming every bad variable."""
    return load_checked(Settings, env_name, **overrides)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings from the environment, read once per process (:class:`SettingsError` if bad)."""
    return load_settings()


def env_name(field: str) -> str:
    """The environment variable that sets ``field``."""
    return field_env_name(Settings, field)
