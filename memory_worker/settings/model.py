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

from llm_client import EMBEDDING, ClientConfig, RouteDefaults
from memory_worker.settings.breakers import BreakerSettings
from memory_worker.settings.checks import contradictions, load_checked
from memory_worker.settings.console import ConsoleSettings
from memory_worker.settings.gateway import GatewaySettings
from memory_worker.settings.memory_use import MemoryUseSettings
from memory_worker.settings.recall import RecallSettings
from memory_worker.settings.runs import MAX_RETENTION_DAYS, RunSettings, heartbeat_default
from memory_worker.settings.types import (
    DAY,
    HOUR,
    MINUTE,
    CardsUrl,
    Directory,
    ExistingFile,
    HttpUrl,
    LogLevel,
    Name,
    RedisUrl,
    SecretHttpUrl,
    ServiceName,
    Token,
    check_decodable,
    field_env_name,
)

#: Shortest card text limit: a short sentence in a two-byte script ("Alice prefers green
#: tea." is 24 bytes in English, about twice that in Cyrillic); below it facts are dropped.
MIN_CARD_BYTES = 64
#: Fewest output tokens an extraction may ask for: the answer's frame and one card of the
#: default size (700 bytes, ~175 tokens); below it every answer is cut mid-JSON.
MIN_OUTPUT_TOKENS = 256
#: Most replicas a card write may wait for.
MAX_REPLICAS = 100
#: Longest key prefix (it starts every key name the deployment writes).
MAX_KEY_PREFIX_CHARS = 64
#: The watchdog window, when not set: the tick budget + the shutdown grace + this.
WATCHDOG_MARGIN_SECONDS = 60.0


#: A Telegram chat id: a signed 64-bit integer (the Bot API's range).
ChatId = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


def _alias(name: str) -> AliasChoices:
    return AliasChoices(name)


class Settings(
    RunSettings,
    RecallSettings,
    MemoryUseSettings,
    ConsoleSettings,
    GatewaySettings,
    BreakerSettings,
):
    """memory-worker configuration (env vars override defaults). Six groups of fields are
    declared in bases, each read together by one part: a run's attempts, lease, caps and
    retention (:class:`~memory_worker.settings.runs.RunSettings`), the §16 ranking knobs of recall
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
        le=MAX_REPLICAS,
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
    key_prefix: str = Field(
        "mw:",
        max_length=MAX_KEY_PREFIX_CHARS,
        description="Prefix of every Redis key this deployment owns.",
    )
    data_dir: Directory = Field(Path("var"), description="Local state: embedded Valkey data, logs.")
    redis_reconnect_max_seconds: float = Field(
        1.0,
        gt=0,
        le=5 * MINUTE,
        description="Cap of the worker loop's back-off while Redis is away (short: work "
        "resumes within about this long after Redis answers).",
    )
    redis_connect_timeout_seconds: float = Field(
        5.0, gt=0, le=5 * MINUTE, description="Connect timeout of every Redis client."
    )
    redis_socket_timeout_seconds: float = Field(
        10.0,
        gt=0,
        le=HOUR,
        description="Socket (read/write) timeout of every Redis client: a black-holed Redis "
        "cannot hang a worker.",
    )
    store_retry_max_seconds: float = Field(
        2.0,
        gt=0,
        le=5 * MINUTE,
        description="Cap of the back-off between retries of a run's outcome write.",
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
    request_timeout_seconds: float = Field(
        30.0, gt=0, le=DAY, description="Budget of one HTTP round trip."
    )
    task_timeout_seconds: float = Field(
        720.0,
        gt=0,
        le=DAY,
        description="Budget of a job's run time, re-anchored when first seen RUNNING.",
    )
    capacity_wait_seconds: float = Field(
        60.0,
        ge=0,
        le=DAY,
        description="How long the client resubmits on 'no slots' answers before giving up.",
    )
    capacity_poll_seconds: float = Field(
        1.0, gt=0, le=10 * MINUTE, description="Pause between capacity resubmits."
    )
    job_poll_seconds: float = Field(
        1.0, gt=0, le=10 * MINUTE, description="Pause between job status polls."
    )
    discovery_priority: int = Field(
        10, ge=0, le=1000, description="Discovery priority of memory jobs (0 = interactive)."
    )
    extraction_service: ServiceName = Field(
        "llm-openai", description="Discovery service of the default extractor."
    )
    extraction_endpoint: Name = Field(
        "chat_completions", description="Discovery endpoint of the extractor."
    )
    extraction_model: Name = Field(
        "memory-extractor", description="Model name of the default extractor."
    )
    extraction_max_output_tokens: int = Field(
        4000, ge=MIN_OUTPUT_TOKENS, le=1_000_000, description="max_tokens of extraction requests."
    )
    extraction_temperature: float = Field(
        0.2, ge=0, le=2, description="Temperature of extraction requests."
    )
    redact_contacts: bool = Field(
        False,
        description="Also mask e-mail addresses and phone numbers in the text sent to the farm "
        "(secrets and payment card numbers are always masked, §14).",
    )
    embedder_service: ServiceName = Field(
        "embedder", description="Discovery service of the embedder."
    )
    embedder_endpoint: Name = Field("encode", description="Discovery endpoint of the embedder.")
    embedding_model: Name = Field(
        "embedder", description="Model name of the default embedder target."
    )
    embedding_dimension: int = Field(
        512, ge=1, le=8192, description="Embedding dimension requested and stored."
    )
    embedding_request_timeout_seconds: float = Field(
        15.0, gt=0, le=DAY, description="Budget of one HTTP round trip of an embedding call."
    )
    embedding_task_timeout_seconds: float = Field(
        15.0,
        gt=0,
        le=DAY,
        description="Task budget of an embedding job (a timeout releases the run: the "
        "embedder is a side service).",
    )
    embedding_capacity_wait_seconds: float = Field(
        15.0,
        ge=0,
        le=DAY,
        description="Capacity wait of an embedding call (no slots, or still queued).",
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
        10.0,
        gt=0,
        le=HOUR,
        description="Budget of one MemoryQueue.recall (embedding the query included).",
    )
    recall_max_query_chars: int = Field(
        2000,
        ge=1,
        le=1_000_000,
        description="Longest text MemoryQueue.recall embeds; a longer one raises QueryTooLarge.",
    )
    query_max_k: int = Field(
        100,
        ge=1,
        le=10_000,
        description="Most cards one recall or similar_cards may ask for (k); more raises "
        "QueryTooLarge.",
    )
    farmsim_embedder: Literal["local", "hashed"] = Field(
        "local",
        description="Embedder of the farm simulator (demo, tests): `local` runs the real "
        "multilingual e5-small model (§16), `hashed` a bag-of-words stand-in.",
    )

    # --- routing (§6) ----------------------------------------------------------------------
    route_max_hops: int = Field(
        64,
        ge=1,
        le=64,
        description="Safety ceiling of the targets one call tries (busy answers excepted): "
        "a walk tries every candidate of its route within the wall budget, up to this many.",
    )
    route_wall_seconds: float = Field(
        900.0, gt=0, le=DAY, description="Default wall-time budget of one routed call."
    )
    routing_events_maxlen: int = Field(
        10_000, ge=1, le=10_000_000, description="Routing events kept in the Redis stream."
    )

    # --- admin reports (§9) ------------------------------------------------------------------
    admin_report_cooldown: float = Field(
        600.0, ge=0, le=30 * DAY, description="Dedup window per dedupe key (seconds)."
    )
    admin_telegram_bot_token: Token | None = Field(
        None,
        validation_alias=_alias("ADMIN_TELEGRAM_BOT_TOKEN"),
        description="Bot token for pages.",
    )
    admin_telegram_chat_ids: Annotated[list[ChatId], NoDecode] = Field(
        default_factory=list,
        max_length=100,
        validation_alias=_alias("ADMIN_TELEGRAM_CHAT_IDS"),
        description="Comma-separated Telegram chat ids that receive pages (at most 100).",
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
    admin_delivery_max_attempts: int = Field(
        8, ge=1, le=100, description="Delivery attempts of one page."
    )

    # --- ticks and the worker (§8) -------------------------------------------------------------
    consolidation_backend_retry_interval: float = Field(
        15.0,
        gt=0,
        le=HOUR,
        description="Delay of the single probe tick while the farm is out (seconds).",
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
        0,
        ge=0,
        le=100_000,
        description="In-flight tick target; 0 = sum of live workers' concurrency.",
    )
    poll_delay_seconds: float = Field(0.05, gt=0, le=HOUR, description="arq poll delay.")
    safety_net_seconds: int = Field(
        10, ge=1, le=60, description="Cron safety-net period (seconds, divides 60)."
    )
    shutdown_grace_seconds: float = Field(
        20.0,
        ge=0,
        le=HOUR,
        description="On SIGTERM, in-flight runs get this long before they are released.",
    )
    shutdown_release_seconds: float = Field(
        10.0,
        ge=0,
        le=HOUR,
        description="A stopping worker retries the release of its runs this long while Redis "
        "is unreachable (a deploy during a Redis blip spends no attempt).",
    )
    tick_timeout_seconds: float = Field(
        3600.0,
        gt=0,
        le=2 * DAY,
        description="A run's budget in a tick; arq's job timeout adds the loop.",
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
        le=3 * DAY,
        description="A worker whose poll loop, or every busy slot, made no progress for this "
        "long is wedged: it says why in one log line, releases its runs (attempts refunded) "
        "and exits 70 for its supervisor to restart it; /healthz is 503 meanwhile. Must be "
        "above the tick budget plus the shutdown grace, and above a routed farm call's wall "
        "budget. Unset: MEMORY_TICK_TIMEOUT_SECONDS + MEMORY_SHUTDOWN_GRACE_SECONDS + 60.",
    )
    pinned_window_seconds: float = Field(
        300.0,
        ge=1,
        le=DAY,
        description="A worker that claimed runs (MEMORY_PINNED_MIN_CLAIMS) but completed none "
        "for this long while its peers completed MEMORY_PINNED_PEER_COMPLETIONS is pinned: it "
        "says why in one log line and on /healthz, releases its runs and exits 70 for its "
        "supervisor to restart it (§11).",
    )
    pinned_min_claims: int = Field(
        5,
        ge=1,
        le=1_000_000,
        description="Runs a worker must have claimed within the pinned window to be judged "
        "(its demand).",
    )
    pinned_peer_completions: int = Field(
        3,
        ge=1,
        le=1_000_000,
        description="Runs the other workers must have completed within the pinned window for "
        "a worker that completed none to be pinned (the farm works: the worker does not).",
    )
    pinned_guard_seconds: float = Field(
        3600.0,
        ge=1,
        le=30 * DAY,
        description="A worker that exited pinned and is pinned again within this long pages "
        "the admins instead of exiting again (restart guard, kept in Redis by host and "
        "MEMORY_WORKER_SLOT).",
    )
    worker_slot: Name | None = Field(
        None,
        description="This worker's stable name on its host, when a host runs several (e.g. "
        "the systemd instance `%i`, or `worker.2`): with the host name it is the identity the "
        "pinned restart guard remembers across restarts and the `worker` label of the "
        "process's metrics. Unset: the host name alone.",
    )
    worker_heartbeat_seconds: float = Field(
        default_factory=heartbeat_default,
        gt=0,
        le=HOUR,
        description="Worker registry heartbeat period. Unset: a quarter of MEMORY_LEASE_SECONDS "
        "- MEMORY_LEASE_RENEW_SECONDS, at most 5 s.",
    )
    worker_registry_grace_seconds: float = Field(
        600.0,
        ge=0,
        le=30 * DAY,
        description="A dead worker leaves the registry this long after its heartbeat expired.",
    )

    # --- memory consolidation (§10) -------------------------------------------------------------
    max_input_tokens: int = Field(
        10_000, ge=1, le=10_000_000, description="Token budget of one extraction batch."
    )
    max_batch_messages: int = Field(
        200, ge=1, le=100_000, description="Messages per extraction batch."
    )
    related_cards: int = Field(
        24, ge=0, le=10_000, description="Existing related cards shown to the extractor."
    )
    related_author_boost: float = Field(
        0.03,
        ge=0,
        le=1,
        description="Cosine added, in the related-card lookup, to a card about one of the "
        "run's authors (their user card, or its text names them).",
    )
    existing_cards_max: int = Field(
        80, ge=0, le=10_000, description="Existing cards in one prompt, at most."
    )
    card_max_bytes: int = Field(
        700, ge=MIN_CARD_BYTES, le=100_000, description="Longest fact text kept."
    )
    retraction_cosine: float = Field(
        0.99,
        ge=0,
        le=1,
        description="Cosine from which a new card states a withdrawn fact about the same "
        "subject (§10: not learned again from older messages).",
    )
    retraction_shared_cosine: float = Field(
        0.94,
        ge=0,
        le=1,
        description="The same, when the new card names the withdrawn card's value.",
    )
    retraction_cross_language_offset: float = Field(
        0.075,
        ge=0,
        le=1,
        description="How much lower both cosines are when the new card and the withdrawn one "
        "are in two languages (two scripts, or two languages guessed from their words).",
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
    ephemeral_ttl_days: float = Field(
        2.0, gt=0, le=MAX_RETENTION_DAYS, description="Expiry of ephemeral cards."
    )
    short_ttl_days: float = Field(
        14.0, gt=0, le=MAX_RETENTION_DAYS, description="Expiry of short-lived cards."
    )
    merge_min_cards: int = Field(
        3,
        ge=2,
        le=1_000_000,
        description="Cards sharing a subject before a merge pass (1000000: never merge).",
    )
    merge_cooldown_hours: float = Field(
        72.0, ge=0, le=365 * 24, description="Merge-pass cooldown per subject group."
    )
    maintenance_seconds: float = Field(
        3600.0,
        gt=0,
        le=7 * DAY,
        description="Period of card expiry and duplicate collapse (fleet-wide).",
    )
    merge_interval_seconds: float = Field(
        60.0, gt=0, le=DAY, description="Period of the subject merge pass (fleet-wide)."
    )
    reembed_batch_cards: int = Field(
        64, ge=1, le=10_000, description="Cards re-embedded per step of a model switch (§16)."
    )
    reembed_pause_seconds: float = Field(
        0.2, ge=0, le=MINUTE, description="Pause between two steps of a model switch."
    )
    reembed_budget_seconds: float = Field(
        20.0,
        gt=0,
        le=HOUR,
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
        5.0, ge=0, le=HOUR, description="Min interval between Redis samples."
    )
    readiness_stall_seconds: float = Field(
        60.0, gt=0, le=DAY, description="Worker loop heartbeat age that is unready."
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
        if any(ch in "{}" or ch.isspace() or not ch.isprintable() for ch in value):
            raise ValueError("must not contain braces, whitespace or control characters")
        return value

    @field_validator("*", mode="before")
    @classmethod
    def _check_text(cls, value: object) -> object:
        return check_decodable(value)

    @field_validator("safety_net_seconds")
    @classmethod
    def _check_safety_net(cls, value: int) -> int:
        if value <= 0 or 60 % value:
            raise ValueError("must divide 60")
        return value

    @model_validator(mode="after")
    def _check_relations(self) -> Self:
        problems = contradictions(self.in_force(), env_name)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def in_force(self) -> dict[str, Any]:
        """Every setting's value in force: one derived when unset (the watchdog window) by
        its value, so the relations judge what will run."""
        values = {name: getattr(self, name) for name in type(self).model_fields}
        values["watchdog_seconds"] = self.watchdog_window
        return values

    @property
    def tick_job_timeout(self) -> float:
        """arq's tick job timeout: a run's full budget after the last moment it may start."""
        return self.tick_timeout_seconds + self.tick_loop_seconds

    @property
    def watchdog_window(self) -> float:
        """The watchdog's window (s): ``MEMORY_WATCHDOG_SECONDS``, else budget + grace + 60."""
        if self.watchdog_seconds is not None:
            return self.watchdog_seconds
        return self.tick_timeout_seconds + self.shutdown_grace_seconds + WATCHDOG_MARGIN_SECONDS

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
