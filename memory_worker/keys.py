"""Every Redis key memory-worker writes, built in one place.

Layout (prefix ``P`` = ``MEMORY_KEY_PREFIX``, default ``mw:``):

- queue keys share the hash tag ``{P q}``: runs, their indexes, counters, tick
  jobs (arq's own ``arq:job:<id>`` / ``arq:in-progress:<id>`` keys carry the
  tag through the job id), the worker registry;
- routing keys share ``{P routing}``: breakers, fail-open permits, events,
  admin-report dedup and outbox;
- one chat's memory shares ``{P chat:<id>}``: cards, indexes, episodes, the
  set of applied runs.

Every multi-key Lua script touches keys of a single tag, so the card store
can move to Redis Cluster unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import orjson

#: arq's own key prefixes (``arq.constants``: the values of arq 0.28, which the worker
#: runs; written here so a bot's install, without arq, builds the same keys; a test
#: holds them equal to arq's).
ARQ_JOB_KEY_PREFIX = "arq:job:"
ARQ_IN_PROGRESS_KEY_PREFIX = "arq:in-progress:"

#: The fixed keys of one chat's memory every card script receives, in this order, as
#: KEYS[1..18] (``cards/lua/helpers.lua`` names them); per-scope ``active:<sk>`` zsets and
#: a run's ``episode:<run>`` hash follow.
CHAT_SCRIPT_KEYS = (
    "cards",
    "seq",
    "dedup",
    "scopes",
    "expiry",
    "runs",
    "links",
    "episodes",
    "vec",
    "vecids",
    "vecmask",
    "vecver",
    "vecrw",
    "meta",
    "forget",
    "authors",
    "retracted",
    "history",
)

#: Events of one card's history a card script keeps (``MEMORY_CARD_HISTORY_MAX_EVENTS``'s
#: default): the first, how the card began, and the newest.
HISTORY_MAX_EVENTS = 32


@dataclass(frozen=True, slots=True)
class Keys:
    prefix: str = "mw:"

    # --- queue tag -------------------------------------------------------------------------
    @property
    def queue_tag(self) -> str:
        return "{" + self.prefix + "q}"

    def run(self, run_id: str) -> str:
        return f"{self.queue_tag}:run:{run_id}"

    def run_errors(self, run_id: str) -> str:
        """LIST the run's bounded error log (JSON entries)."""
        return self.run(run_id) + ":errors"

    def run_extraction(self, run_id: str) -> str:
        """STRING the run's validated extraction kept between its attempts (§7), JSON with the
        prompt version, slice digest and forget epoch it holds for; expires after
        ``MEMORY_EXTRACTION_KEEP_SECONDS``, goes with the run's completion and with a forget."""
        return self.run(run_id) + ":extraction"

    @property
    def natural_keys(self) -> str:
        """HASH natural-key digest → run id (idempotent enqueue)."""
        return f"{self.queue_tag}:runs:nk"

    @property
    def queued(self) -> str:
        """ZSET of queued runs; score orders newest windows first."""
        return f"{self.queue_tag}:runs:queued"

    @property
    def retry(self) -> str:
        """ZSET of failed runs with attempts left; score = next attempt (ms)."""
        return f"{self.queue_tag}:runs:retry"

    @property
    def leases(self) -> str:
        """ZSET of processing runs; score = lease expiry (ms)."""
        return f"{self.queue_tag}:runs:leases"

    def by_status(self, status: str) -> str:
        """ZSET of runs in ``status``; score = last update (ms)."""
        return f"{self.queue_tag}:runs:status:{status}"

    @property
    def retired(self) -> str:
        """ZSET of retired runs; score = retirement time (ms)."""
        return f"{self.queue_tag}:runs:retired"

    @property
    def retired_facts(self) -> str:
        """HASH retired run id → ``code\treason\tchat_id\tprompt_version\tattempts``
        (the replay preview's summary, kept by ``runs/lua/retired_summary.lua``)."""
        return f"{self.queue_tag}:runs:retired:facts"

    @property
    def retired_counts(self) -> str:
        """HASH ``n\t<code>\t<reason>`` / ``aged\t<code>\t<reason>`` → retired runs (and of
        them those whose messages aged out); ``built`` once every retired run is summarised."""
        return f"{self.queue_tag}:runs:retired:counts"

    @property
    def retired_aged(self) -> str:
        """ZSET retired runs whose messages retention dropped; score = when (ms)."""
        return f"{self.queue_tag}:runs:retired:aged"

    @property
    def retired_summary(self) -> list[str]:
        """The three keys of the retired-run summary, in the order its Lua takes them."""
        return [self.retired_facts, self.retired_counts, self.retired_aged]

    @property
    def all_runs(self) -> str:
        """ZSET of every run; score = creation time (ms)."""
        return f"{self.queue_tag}:runs:all"

    def chat_runs(self, chat_id: int | str) -> str:
        """ZSET of one chat's runs; score = creation time (ms). Forget reads it (§14)."""
        return f"{self.chat_runs_prefix}{chat_id}"

    @property
    def chat_runs_prefix(self) -> str:
        """Prefix of :meth:`chat_runs`."""
        return f"{self.queue_tag}:runs:chat:"

    @property
    def chat_runs_built(self) -> str:
        """STRING: set once every run enqueued before the per-chat index is in it."""
        return f"{self.queue_tag}:runs:chat-index:built"

    @property
    def chat_runs_cursor(self) -> str:
        """STRING: creation ms the per-chat index backfill reached (exclusive)."""
        return f"{self.queue_tag}:runs:chat-index:cursor"

    def parked(self, prompt_version: str) -> str:
        """ZSET of queued runs of ``prompt_version`` parked by older workers (score as queued)."""
        return f"{self.queue_tag}:runs:parked:{prompt_version}"

    @property
    def parked_counts(self) -> str:
        """HASH prompt version → runs parked in :meth:`parked` (they count as queued)."""
        return f"{self.queue_tag}:runs:parked"

    @property
    def natural_key_expiry(self) -> str:
        """ZSET ``<natural key> <run id>`` of pruned runs → when the key is forgotten (ms)."""
        return f"{self.queue_tag}:runs:nk:expiry"

    @property
    def prune_marks(self) -> str:
        """HASH of pruning watermarks (e.g. retired runs whose messages are already dropped)."""
        return f"{self.queue_tag}:runs:prune"

    def daily(self, day: str) -> str:
        """Counter of runs enqueued on UTC ``day`` (YYYYMMDD)."""
        return f"{self.queue_tag}:runs:daily:{day}"

    @property
    def counters(self) -> str:
        """HASH of monotonic counters (released, failed, retired by reason, …)."""
        return f"{self.queue_tag}:counters"

    @property
    def runs_hourly(self) -> str:
        """HASH ``<kind>:<hour>`` (hours since the epoch, UTC) → runs of that kind that hour.

        Only ``released`` today (the console's hourly chart); the release script keeps it
        bounded (see :func:`memory_worker.runs.model.count_hour`).
        """
        return f"{self.queue_tag}:runs:hourly"

    @property
    def forget_epochs(self) -> str:
        """HASH chat id → forget epoch (§14): bumped by every forget, recorded on each claim."""
        return f"{self.queue_tag}:forget:epoch"

    @property
    def audit(self) -> str:
        """STREAM of audit events (forget: who, from where, when, scope, counts; no content)."""
        return f"{self.queue_tag}:audit"

    @property
    def arq_queue(self) -> str:
        """arq's queue ZSET for tick jobs."""
        return f"{self.queue_tag}:arq"

    def tick_job_id(self, unique: str) -> str:
        return f"{self.queue_tag}:tick:{unique}"

    @property
    def cron_prefix(self) -> str:
        """Cron job names carry the tag so arq's cron keys hash with the queue."""
        return f"{self.queue_tag}:cron:"

    @property
    def ticks_running(self) -> str:
        """ZSET tick job id → expiry (ms) of ticks a live worker is running."""
        return f"{self.queue_tag}:ticks:running"

    @property
    def ticks_queued(self) -> str:
        """ZSET tick job id → job expiry (ms) of every tick in arq's queue (pending or started)."""
        return f"{self.queue_tag}:ticks:queued"

    @property
    def ticks_started(self) -> str:
        """ZSET tick job id → arq in-progress expiry (ms) of started ticks (finished ones stay
        until then: the poll never offers a tick between its schedule and arq's finish)."""
        return f"{self.queue_tag}:ticks:started"

    @property
    def workers(self) -> str:
        """ZSET worker id → heartbeat expiry (ms)."""
        return f"{self.queue_tag}:workers"

    @property
    def worker_concurrency(self) -> str:
        """HASH worker id → ticks it runs at once."""
        return f"{self.queue_tag}:workers:concurrency"

    @property
    def worker_runs(self) -> str:
        """HASH worker id → comma-separated ids of the runs it holds (its heartbeat says so),
        and the store's pulse: ``pulse:at`` (last worker touch, ms), ``pulse:since`` (when the
        store last came back, ms). Worker ids are ``host:pid:hex``, never a pulse field."""
        return f"{self.queue_tag}:workers:runs"

    @property
    def worker_completed(self) -> str:
        """HASH worker id → runs it completed (the completion script counts its lease
        owner); a pinned worker compares its own with the fleet's ``completed`` (§11). It
        leaves with the worker, like the rest of the registry."""
        return f"{self.queue_tag}:workers:completed"

    def pinned_exit(self, identity: str) -> str:
        """STRING: when the worker at ``identity`` (host, or host/slot) last exited as pinned
        (ms); set NX with the restart guard's window, so a second pinned exit within it pages
        instead (§11)."""
        return f"{self.queue_tag}:workers:pinned:{identity}"

    @property
    def worker_info(self) -> str:
        """HASH worker id → what its last heartbeat said for the console's workers page
        (JSON: host, prompt version, slots busy, when); it leaves with the worker."""
        return f"{self.queue_tag}:workers:info"

    @property
    def route_errors(self) -> str:
        """HASH workflow → the last error its farm gave (JSON, message masked), written by
        the release and fail scripts; bounded by the number of routes (§15's banner)."""
        return f"{self.queue_tag}:routes:last_error"

    def maintenance_lock(self, job: str) -> str:
        """Fleet-wide pacing of a maintenance job: set NX with the job's period."""
        return f"{self.queue_tag}:maintenance:{job}"

    @property
    def pipeline_state(self) -> str:
        """HASH of pipeline facts (deferred since, last probe, …)."""
        return f"{self.queue_tag}:pipeline"

    # --- routing tag -----------------------------------------------------------------------
    @property
    def routing_tag(self) -> str:
        return "{" + self.prefix + "routing}"

    def breaker(self, target: str) -> str:
        return f"{self.routing_tag}:breaker:{target}"

    @property
    def breaker_prefix(self) -> str:
        return f"{self.routing_tag}:breaker:"

    def breaker_window(self, target: str) -> str:
        """ZSET of recent calls of a target for the failure-rate rule."""
        return f"{self.routing_tag}:breaker-window:{target}"

    def inflight(self, target: str) -> str:
        """ZSET of a capped target's in-flight slots (member = slot, score = lease expiry)."""
        return f"{self.routing_tag}:inflight:{target}"

    def failopen_permit(self, workflow: str) -> str:
        return f"{self.routing_tag}:failopen:{workflow}"

    def outlier(self, target: str) -> str:
        """HASH of a target's outcome buckets and ejection (llm_client._outlier)."""
        return f"{self.routing_tag}:outlier:{target}"

    @property
    def events(self) -> str:
        """STREAM of routing and pipeline events."""
        return f"{self.routing_tag}:events"

    def admin_dedup(self, dedupe_key: str) -> str:
        return f"{self.routing_tag}:admin:dedup:{dedupe_key}"

    @property
    def admin_outbox(self) -> str:
        """ZSET page id → next delivery attempt (ms)."""
        return f"{self.routing_tag}:admin:outbox"

    def admin_page(self, page_id: str) -> str:
        return f"{self.routing_tag}:admin:page:{page_id}"

    @property
    def admin_counters(self) -> str:
        return f"{self.routing_tag}:admin:counters"

    @property
    def admin_incident(self) -> str:
        """HASH: the open incident — since when, its routes, the counters then (§9)."""
        return f"{self.routing_tag}:admin:incident"

    @property
    def routing_attempts(self) -> str:
        """HASH ``target|outcome|reason`` → routed attempts (metrics)."""
        return f"{self.routing_tag}:attempts"

    # --- chat memory tag -------------------------------------------------------------------
    def chat_tag(self, chat_id: int) -> str:
        return "{" + f"{self.prefix}chat:{chat_id}" + "}"

    def chat(self, chat_id: int, suffix: str) -> str:
        return f"{self.chat_tag(chat_id)}:{suffix}"

    @staticmethod
    def cancel_mark_suffix(run_id: str) -> str:
        """Suffix of a chat's STRING that refuses a cancelled run's card write (§13,
        ``cards/lua/cancel_mark.lua``); it expires (``CANCEL_MARK_TTL_MS``)."""
        return f"cancelled:{run_id}"

    def chat_script_keys(
        self, chat_id: int, scope_keys: Iterable[str], extra: Iterable[str] = ()
    ) -> list[str]:
        """KEYS of a card script: the fixed set, each scope's active zset, then ``extra`` suffixes."""
        keys = [self.chat(chat_id, suffix) for suffix in CHAT_SCRIPT_KEYS]
        keys += [self.chat(chat_id, f"active:{sk}") for sk in sorted(set(scope_keys))]
        keys += [self.chat(chat_id, suffix) for suffix in extra]
        return keys

    @staticmethod
    def chat_script_layout(
        chat_id: int, scope_keys: Iterable[str], *, history_max: int = HISTORY_MAX_EVENTS
    ) -> bytes:
        """ARGV[1] of a card script: where each role sits in :meth:`chat_script_keys`' KEYS —
        how many fixed keys, then the scope of each ``active:<sk>`` zset in order (the
        ``extra`` keys follow them) — and ``hmax``, the events of a card's history kept. A
        script takes every key's role from its position, never from its name: a run id or
        scope that spells ``}:active:chat`` names nothing."""
        scopes = sorted(set(scope_keys))
        return orjson.dumps(
            {
                "chat": str(chat_id),
                "fixed": len(CHAT_SCRIPT_KEYS),
                "scopes": scopes,
                "hmax": str(history_max),
            }
        )

    @property
    def chats(self) -> str:
        """SET of chat ids that have memory (for maintenance sweeps)."""
        return f"{self.prefix}chats"

    # --- access checks ---------------------------------------------------------------------
    def access_probes(self) -> dict[str, str]:
        """A never-written key of each shape this deployment uses → the ACL key pattern
        that covers it (start-up and ``/readyz`` check the Redis user may use them)."""
        ours = "{" + self.prefix + "*"
        return {
            f"{self.queue_tag}:acl-probe": ours,
            f"{self.routing_tag}:acl-probe": ours,
            f"{self.chat_tag(0)}:acl-probe": ours,
            f"{self.prefix}acl-probe": self.prefix + "*",
            ARQ_JOB_KEY_PREFIX + self.tick_job_id("acl-probe"): "arq:*",  # arq's own job keys
        }

    @property
    def reembed_progress(self) -> str:
        """HASH chat id → ``done/total`` of its model switch in progress (metrics)."""
        return f"{self.prefix}reembed:progress"
