"""Memory maintenance (§10), run by crons: expiry, exact-duplicate collapse, the merge pass.

- :func:`expire_cards` — live cards past their TTL become ``expired`` (kept,
  out of every live index and the vector search).
- :func:`collapse_duplicates` — live cards of one scope with the same
  normalised fact text (but a different subject/predicate/object, so the
  dedup hash let them through) fold into the oldest one.
- :func:`bound_growth` — every retention bound of the runbook's "Bounded
  growth" section (docs/runbook.md): finished runs, natural keys, retired runs' messages, the
  worker registry (``RunStore.prune``) and each chat's applied-run record; and,
  once, the backfill of the per-chat run index (``runs/chat_index.py``).
- :func:`merge_pass` — per subject group (same scope, same normalised
  subject, at least ``merge_min_cards`` cards not reviewed within
  ``merge_cooldown_hours``) the merge model (workflow ``memory_merge``)
  clusters restatements; survivors absorb the rest, trivial cards are
  demoted, and every card of the group is stamped so it is not reviewed
  again before the cooldown. A group whose answer is unusable is stamped as
  well (deferred to the cooldown, not retried every tick). A farm outage
  stops the pass without stamping anything: the groups are not at fault and
  the next tick tries again — one call per tick, whatever the backlog.

- :class:`Maintenance` — the cron job that runs the above (and the re-embedding pass,
  §16, which first gives remembered cards waiting for a vector theirs), each paced
  fleet-wide by a Redis lock.

Decisions (grouping, answer validation) are pure functions; the writes go
through the store's atomic fold script, which skips cards that stopped
being live in the meantime.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from redis.asyncio import Redis

from llm_client import EMBEDDING, MEMORY_MERGE, DeadlineExceeded, LLMError
from memory_worker.cards import Card, CardStatus, CardStore, FoldGroup, dedup_hash, normalise, to_ms
from memory_worker.cards.rules import text_problem
from memory_worker.consolidation.extraction import MergeOutput, decode_merge
from memory_worker.consolidation.model_calls import ChatCall, Embedder, embed_texts
from memory_worker.consolidation.prompt import build_merge_request, merge_payload
from memory_worker.consolidation.routed import RoutedModels
from memory_worker.consolidation.validation import Limits
from memory_worker.deadlines import deadline_after, time_left
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.runs import PruneResult
from memory_worker.runs.chat_index import ChatIndex
from memory_worker.runs.policy import is_outage
from memory_worker.runs.replay import ReplayStore
from memory_worker.settings import Settings
from memory_worker.upkeep.reembed import Reembedder, fill_waiting, reembed_pass, route_target

log = get_logger(__name__)

#: Groups reviewed per merge pass, cards shown per group, confidence taken by a demotion.
MERGE_GROUPS_PER_PASS = 8
MERGE_MAX_CARDS = 80
MERGE_DEMOTE_DELTA = 0.2
#: Duplicate groups folded per chat per sweep.
COLLAPSE_MAX_GROUPS = 500


# --- expiry ------------------------------------------------------------------------------------


async def expire_cards(store: CardStore, *, now: datetime, batch: int = 1000) -> int:
    """Expire every live card past its TTL in every chat; the number expired."""
    total = 0
    for chat_id in await store.chat_ids():
        while True:
            count = await store.expire(chat_id, now=now, limit=batch)
            total += count
            if count < batch:
                break
    if total:
        log.info("maintenance.expired", cards=total)
    return total


# --- bounded growth ------------------------------------------------------------------------------


@dataclass(slots=True)
class GrowthPruned:
    """What one :func:`bound_growth` pass removed."""

    store: PruneResult
    applied_runs: int = 0
    #: Retired runs added to / removed from the replay preview's summary (0 when in step).
    summary_fixed: int = 0
    #: Runs the one-time per-chat run index backfill added (0 once built).
    chat_indexed: int = 0


async def bound_growth(
    replay: ReplayStore, cards: CardStore, settings: Settings, *, now: datetime
) -> GrowthPruned:
    """Apply every retention setting once (paced by the maintenance lock): the run store's
    (``replay.runs``), the replay summary's and the card store's."""
    runs = replay.runs
    at_ms = int(now.timestamp() * 1000)
    result = GrowthPruned(store=await runs.prune(at_ms=at_ms))
    index = ChatIndex(runs.redis, runs.keys)
    result.chat_indexed = await index.backfill(max_runs=settings.chat_index_backfill_runs)
    added, removed = await replay.reconcile_summary(now_ms=at_ms)
    result.summary_fixed = added + removed
    before = at_ms - int(settings.applied_run_retention_days * 86_400_000)
    for chat_id in await cards.chat_ids():
        result.applied_runs += await cards.prune_applied_runs(chat_id, before_ms=before)
    log.info(
        "maintenance.bounded_growth",
        runs=result.store.runs,
        natural_keys=result.store.natural_keys,
        retired_messages=result.store.retired_messages,
        workers=result.store.workers,
        unparked=result.store.unparked,
        applied_runs=result.applied_runs,
        summary_fixed=result.summary_fixed,
        chat_indexed=result.chat_indexed,
    )
    return result


# --- exact duplicates ----------------------------------------------------------------------------


def duplicate_groups(cards: Sequence[Card]) -> list[FoldGroup]:
    """Live cards sharing scope and normalised fact text: fold all into the oldest."""
    groups: dict[tuple[str, str], list[Card]] = defaultdict(list)
    for card in cards:
        if card.live:
            groups[(card.scope_key, normalise(card.fact_text))].append(card)
    folds: list[FoldGroup] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        ordered = sorted(members, key=lambda c: int(c.id))
        folds.append(FoldGroup(survivor_id=ordered[0].id, absorbed_ids=[c.id for c in ordered[1:]]))
    folds.sort(key=lambda g: int(g.survivor_id or 0))
    return folds[:COLLAPSE_MAX_GROUPS]


async def collapse_duplicates(store: CardStore, *, now: datetime) -> int:
    """Fold exact duplicates in every chat; the number of cards folded away."""
    total = 0
    for chat_id in await store.chat_ids():
        groups = duplicate_groups(await store.live_cards(chat_id))
        if groups:
            result = await store.fold_groups(chat_id, groups, now=now)
            total += result.folded
    if total:
        log.info("maintenance.duplicates_collapsed", cards=total)
    return total


# --- merge pass -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MergeGroup:
    chat_id: int
    scope_key: str
    subject: str
    cards: tuple[Card, ...]

    @property
    def digest(self) -> str:
        raw = f"{self.chat_id}\x00{self.scope_key}\x00{normalise(self.subject)}"
        return hashlib.sha256(raw.encode()).hexdigest()[:16]


def merge_groups(
    chat_id: int,
    cards: Sequence[Card],
    *,
    now: datetime,
    min_cards: int,
    cooldown: timedelta,
    max_cards: int = MERGE_MAX_CARDS,
) -> list[MergeGroup]:
    """Subject groups due for review, biggest first.

    A group is due when at least ``min_cards`` of its active cards were not
    reviewed within ``cooldown``. Disputed (competing) cards never take
    part: a dispute is not a restatement. Cards shown: never-reviewed
    first, then by salience, at most ``max_cards``.
    """
    grouped: dict[tuple[str, str], list[Card]] = defaultdict(list)
    for card in cards:
        if card.status == CardStatus.ACTIVE and normalise(card.subject):
            grouped[(card.scope_key, normalise(card.subject))].append(card)
    due: list[MergeGroup] = []
    for (sk, _), members in grouped.items():
        fresh = [c for c in members if c.last_merge_at is None or c.last_merge_at <= now - cooldown]
        if len(fresh) < max(2, min_cards):
            continue
        ordered = sorted(
            members, key=lambda c: (c.last_merge_at is not None, -c.salience, int(c.id))
        )[:max_cards]
        spelling = Counter(c.subject.strip() for c in members).most_common(1)[0][0]
        due.append(MergeGroup(chat_id, sk, spelling, tuple(ordered)))
    due.sort(key=lambda g: (-len(g.cards), g.scope_key, normalise(g.subject)))
    return due


def merge_plan(
    group: MergeGroup, output: MergeOutput, limits: Limits
) -> tuple[list[FoldGroup], int]:
    """Folds for one group's answer and the number of rejected answer items.

    Unknown or repeated ids, clusters without absorbed cards or without a
    usable merged text (empty, too long, a secret) are rejected. The last
    fold carries the demotions and stamps every card of the group.
    """
    by_id = {card.id: card for card in group.cards}
    used: set[str] = set()
    folds: list[FoldGroup] = []
    rejected = output.malformed
    for cluster in output.clusters:
        survivor = by_id.get(cluster.survivor_id)
        absorbed = [
            a
            for a in dict.fromkeys(cluster.absorbed_ids)
            if a in by_id and a not in used and a != cluster.survivor_id
        ]
        text = cluster.merged_fact_text.strip()
        text_ok = text_problem(text, "", "", "", max_bytes=limits.card_max_bytes) is None
        if survivor is None or survivor.id in used or not absorbed or not text_ok:
            rejected += 1
            continue
        used.update([survivor.id, *absorbed])
        rewrite = text if normalise(text) != normalise(survivor.fact_text) else None
        folds.append(
            FoldGroup(
                survivor_id=survivor.id,
                absorbed_ids=absorbed,
                new_fact_text=rewrite,
                new_dedup_hash=dedup_hash(
                    survivor.scope_key,
                    survivor.subject,
                    survivor.predicate,
                    survivor.object,
                    rewrite,
                )
                if rewrite
                else None,
            )
        )
    demote = [d for d in dict.fromkeys(output.demote_ids) if d in by_id and d not in used]
    rejected += sum(1 for d in output.demote_ids if d not in by_id)
    folds.append(FoldGroup(survivor_id=None, demote_ids=demote, stamp_ids=list(by_id)))
    return folds, rejected


@dataclass(slots=True)
class MergePassResult:
    groups_due: int = 0
    groups_merged: int = 0
    groups_failed: int = 0
    deferred: bool = False
    folded: int = 0
    rewritten: int = 0
    demoted: int = 0
    rejected_items: int = 0
    failures: dict[str, int] = field(default_factory=dict)


async def merge_pass(
    store: CardStore,
    merger: ChatCall,
    *,
    embedder: Embedder | None,
    settings: Settings,
    now: datetime,
    deadline: float | None = None,
    max_groups: int = MERGE_GROUPS_PER_PASS,
) -> MergePassResult:
    """Review up to ``max_groups`` due subject groups across all chats (see the module doc)."""
    result = MergePassResult()
    run = _MergeRun(
        store, merger, embedder, settings, Limits.from_settings(settings), now, deadline
    )
    due, epochs = await _due_groups(store, settings, now, max_groups)
    result.groups_due = len(due)
    for group in due[:max_groups]:
        if deadline is not None and time.monotonic() >= deadline:
            break
        if not await _review_group(run, group, epochs[group.chat_id], result):
            break
    log.info(
        "maintenance.merge_pass",
        groups=result.groups_merged,
        failed=result.groups_failed,
        folded=result.folded,
        deferred=result.deferred,
    )
    return result


@dataclass(frozen=True, slots=True)
class _MergeRun:
    """One merge pass: what every group review of it needs."""

    store: CardStore
    merger: ChatCall
    embedder: Embedder | None
    settings: Settings
    limits: Limits
    now: datetime
    deadline: float | None


async def _due_groups(
    store: CardStore, settings: Settings, now: datetime, max_groups: int
) -> tuple[list[MergeGroup], dict[int, int]]:
    """Due groups, chat by chat until ``max_groups`` are found, and each chat's forget epoch.

    The epoch is read before the cards: a forget after it refuses the fold.
    """
    cooldown = timedelta(hours=settings.merge_cooldown_hours)
    due: list[MergeGroup] = []
    epochs: dict[int, int] = {}
    for chat_id in await store.chat_ids():
        epochs[chat_id] = await store.forget_epoch(chat_id)
        due.extend(
            merge_groups(
                chat_id,
                await store.live_cards(chat_id),
                now=now,
                min_cards=settings.merge_min_cards,
                cooldown=cooldown,
            )
        )
        if len(due) >= max_groups:
            break
    return due, epochs


async def _review_group(
    run: _MergeRun, group: MergeGroup, epoch: int, result: MergePassResult
) -> bool:
    """Ask the merge model about one group and fold what its answer allows.

    False: the pass stops here (farm outage or deadline).
    """
    try:
        answer = await run.merger(
            build_merge_request(
                merge_payload(group.subject, group.cards, run.now), settings=run.settings
            ),
            workflow=MEMORY_MERGE,
            idempotency_key=f"merge:{group.digest}:{to_ms(run.now)}",
            timeout=time_left(run.deadline, floor=0.001),
        )
        output = decode_merge(answer.content)
    except LLMError as exc:
        return await _group_failed(run, group, exc, result)
    folds, rejected = merge_plan(group, output, run.limits)
    result.rejected_items += rejected
    folds = await _embed_rewrites(folds, run.embedder, run.settings, group, run.now, run.deadline)
    applied = await run.store.fold_groups(
        group.chat_id,
        folds,
        now=run.now,
        demote_delta=MERGE_DEMOTE_DELTA,
        forget_epoch=epoch,
    )
    result.groups_merged += 1
    result.folded += applied.folded
    result.rewritten += applied.rewritten
    result.demoted += applied.demoted
    return True


async def _group_failed(
    run: _MergeRun, group: MergeGroup, exc: LLMError, result: MergePassResult
) -> bool:
    """A failed merge call. An outage or the deadline defers the pass with nothing
    stamped (False: stop); any other failure stamps the group until its cooldown."""
    if is_outage(exc) or isinstance(exc, DeadlineExceeded):
        result.deferred = True
        log.warning(
            "maintenance.merge_deferred", chat_id=group.chat_id, error=exc.kind, code=exc.code
        )
        return False
    result.groups_failed += 1
    result.failures[exc.kind] = result.failures.get(exc.kind, 0) + 1
    log.warning(
        "maintenance.merge_group_failed",
        chat_id=group.chat_id,
        group=group.digest,
        error=exc.kind,
        code=exc.code,
    )
    stamp_only = [FoldGroup(survivor_id=None, stamp_ids=[c.id for c in group.cards])]
    await run.store.fold_groups(group.chat_id, stamp_only, now=run.now)
    return True


async def _embed_rewrites(
    folds: list[FoldGroup],
    embedder: Embedder | None,
    settings: Settings,
    group: MergeGroup,
    now: datetime,
    deadline: float | None,
) -> list[FoldGroup]:
    """Vectors for rewritten survivors, best effort (a failure keeps the old vectors)."""
    slots = [i for i, fold in enumerate(folds) if fold.new_fact_text]
    if embedder is None or not slots:
        return folds
    try:
        vectors, _ = await embed_texts(
            embedder,
            [folds[i].new_fact_text or "" for i in slots],
            key=f"merge:{group.digest}:{to_ms(now)}:emb",
            dimension=settings.embedding_dimension,
            deadline=deadline,
            contacts=settings.redact_contacts,
        )
    except LLMError as exc:
        log.warning(
            "maintenance.merge_embedding_failed",
            chat_id=group.chat_id,
            error=exc.kind,
            code=exc.code,
        )
        return folds
    out = list(folds)
    for slot, vector in zip(slots, vectors, strict=True):
        fold = out[slot]
        out[slot] = FoldGroup(
            survivor_id=fold.survivor_id,
            absorbed_ids=fold.absorbed_ids,
            new_fact_text=fold.new_fact_text,
            new_dedup_hash=fold.new_dedup_hash,
            embedding=vector or None,
            demote_ids=fold.demote_ids,
            stamp_ids=fold.stamp_ids,
            embedding_model=vectors.model,
        )
    return out


class Maintenance:
    """Card expiry, duplicate collapse and the merge pass, paced fleet-wide by Redis locks."""

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        cards: CardStore,
        models: RoutedModels,
        settings: Settings,
        *,
        replay: ReplayStore,
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.cards = cards
        self.models = models
        self.settings = settings
        self.replay = replay

    async def _due(self, job: str, period: float) -> bool:
        """True for exactly one worker per ``period`` (a SET NX lease)."""
        return bool(
            await self.redis.set(
                self.keys.maintenance_lock(job), "1", nx=True, px=max(int(period * 1000), 1000)
            )
        )

    async def __call__(self) -> str:
        done: list[str] = []
        now = datetime.now(UTC)
        s = self.settings
        if await self._due("expiry", s.maintenance_seconds):
            expired = await expire_cards(self.cards, now=now)
            folded = await collapse_duplicates(self.cards, now=now)
            # fault-matrix row 23: every retention bound, not only finished runs
            pruned = (await bound_growth(self.replay, self.cards, s, now=now)).store.runs
            log.info(
                "maintenance_expiry", expired=expired, duplicates_folded=folded, runs_pruned=pruned
            )
            done.append(f"expired={expired} folded={folded} pruned={pruned}")
        if await self._due("merge", s.merge_interval_seconds):
            if await self.models.walker.route_is_open(MEMORY_MERGE):
                done.append("merge=deferred")
            else:
                result = await merge_pass(
                    self.cards,
                    self.models.extractor({"job": "merge_pass"}),
                    embedder=self.models.embedder({"job": "merge_pass"}),
                    settings=s,
                    now=now,
                    deadline=deadline_after(s.route_wall_seconds),
                )
                done.append(f"merge={result}")
        if await self._due("reembed", s.reembed_budget_seconds):
            done.append(await self._reembed())
        return "; ".join(done) or "not due"

    async def _reembed(self) -> str:
        """The vectors remembered cards wait for, then model switches (§16): chats whose
        vectors are not of the embedding route's model."""
        s = self.settings
        target = route_target(self.models.walker.routes, EMBEDDING, s.embedding_dimension)
        embedder = self.models.embedder({"job": "reembed"})
        if target is None or embedder is None:
            return "reembed=no route"
        worker = Reembedder(
            self.cards, embedder, target, s, progress_key=self.keys.reembed_progress
        )
        until = worker.clock() + s.reembed_budget_seconds
        filled = await fill_waiting(
            self.cards, embedder, target, s, now=datetime.now(UTC), until=until
        )
        results = await reembed_pass(worker, budget_seconds=max(until - worker.clock(), 0.0))
        states = Counter(r.state for r in results)
        switched = ",".join(f"{k}:{v}" for k, v in sorted(states.items())) or "none"
        return f"reembed={switched} waiting_filled={filled.filled}"
