"""The chaos soak's functional core: the workload, the fault schedule and the verdicts.

Everything here is a pure function of plain data (no Redis, no clock, no
processes), so it is unit-tested on its own (``tests/e2e/test_chaos_plan.py``);
``bench/chaos.py`` is the imperative shell that carries a plan out against
real worker processes, a private Valkey and the farm simulator, collects what
happened into :class:`Observations` and asks :func:`evaluate` for verdicts.

Times are seconds since the start of the chaos phase.

The plan (:func:`make_plan`, deterministic for a seed):

- the farm alternates healthy gaps and *incidents*; an incident is one to
  three consecutive fault segments (modes in :class:`FarmMode`). An incident
  plus its grace (late events: a job hung until its budget, a capacity wait)
  fits in one admin-page cooldown and the gaps are longer than cooldown plus
  grace, so "one page per incident" is exact: each incident opens a fresh
  dedup window and no page of it can open a second one;
- Valkey events (kill -9 then restart on the same port and data dir, or
  SIGSTOP for 2 × lease then SIGCONT) and worker events (kill -9 or SIGTERM,
  then a fresh process in the same slot) land at random times on their own
  clocks, so they overlap farm faults and each other;
- the runs are enqueued in batches over the first part of the schedule so
  that work is in flight when faults hit.

The workload (:func:`build_requests`) is chosen so the final memory does not
depend on the order runs are processed in: every user states only facts of
one stable profile (a restatement either reinforces the existing card or
dedups into it — both add one observation), no contradictions, no changes of
mind, no expiring durabilities. So a fault-free reference run of the same
requests must end with exactly the same live cards and observation counts.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

# --------------------------------------------------------------------------- the schedule


class FarmMode(StrEnum):
    HEALTHY = "healthy"
    #: Every service: JOB_FAILED with code UPSTREAM_ERROR (the farm cannot reach its backends).
    OUTAGE = "outage"
    #: Every service: JOB_CANCELLED carrying UPSTREAM_ERROR.
    CANCELLED = "cancelled"
    #: The first of the two extraction targets answers HTTP 500 (its job fails upstream).
    HALF_500 = "half_500"
    #: Every service refuses submits: 503 "no slots available".
    BUSY_SUBMIT = "busy_submit"
    #: Every service's jobs fail with an upstream 503 "server busy".
    BUSY_UPSTREAM = "busy_upstream"
    #: Embedder jobs never finish.
    HUNG_EMBEDDER = "hung_embedder"


FAULT_MODES: tuple[FarmMode, ...] = tuple(m for m in FarmMode if m is not FarmMode.HEALTHY)
#: Modes in which every target of every workflow is down (the single-probe rule applies).
ALL_DOWN: frozenset[FarmMode] = frozenset({FarmMode.OUTAGE, FarmMode.CANCELLED})
BUSY: frozenset[FarmMode] = frozenset({FarmMode.BUSY_SUBMIT, FarmMode.BUSY_UPSTREAM})


class ActionKind(StrEnum):
    VALKEY_KILL9 = "valkey_kill9"
    VALKEY_STOP = "valkey_stop"
    WORKER_KILL9 = "worker_kill9"
    WORKER_TERM = "worker_term"


@dataclass(frozen=True, slots=True)
class FarmSegment:
    start: float
    end: float
    mode: FarmMode

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Action:
    """One process-level fault: ``seconds`` = downtime (kill -9 / stop) or restart delay."""

    at: float
    kind: ActionKind
    seconds: float = 0.0
    worker: int | None = None


@dataclass(frozen=True, slots=True)
class PlanConfig:
    """Knobs of a schedule (seconds unless named otherwise)."""

    duration: float
    lease: float = 4.0
    interval: float = 1.5
    page_cooldown: float = 60.0
    #: Events of an incident may come this long after it ends (a job hung until its
    #: budget, a capacity wait, a store outage delaying a worker): its pages still count.
    page_grace: float = 20.0
    workers: int = 3
    runs: int = 200
    #: Runs are enqueued over this share of the schedule.
    enqueue_share: float = 0.8
    enqueue_batches: int = 20
    lead_in: float = 8.0
    min_segment: float = 7.0
    valkey_every: float = 30.0
    worker_every: float = 12.0
    #: Probe counting starts this long after an all-down segment begins (breakers tripping).
    probe_warmup: float = 4.0

    @property
    def incident_max(self) -> float:
        """Longest incident: its events (start … end + grace) fit one dedup window."""
        return self.page_cooldown - self.page_grace - 1.0

    @property
    def gap_min(self) -> float:
        """Shortest healthy gap: a window opened as late as end + grace has closed."""
        return self.page_cooldown + self.page_grace + 1.0


@dataclass(frozen=True, slots=True)
class Plan:
    seed: int
    config: PlanConfig
    segments: tuple[FarmSegment, ...]
    actions: tuple[Action, ...]
    #: (time, how many of the runs, in order, are enqueued by then)
    enqueue: tuple[tuple[float, int], ...]

    def faults_by_kind(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        counts.update(s.mode.value for s in self.segments if s.mode is not FarmMode.HEALTHY)
        counts.update(a.kind.value for a in self.actions)
        return dict(sorted(counts.items()))


def config_for_minutes(minutes: float, **overrides: Any) -> PlanConfig:
    """A schedule of ``minutes``: short ones (CI) pack faults tighter than long ones."""
    duration = minutes * 60.0
    short = duration < 600
    base: dict[str, Any] = {
        "duration": duration,
        "interval": 1.0 if short else 1.5,
        "page_cooldown": 36.0 if short else 60.0,
        "page_grace": 16.0 if short else 20.0,
        "min_segment": 5.0 if short else 8.0,
        "probe_warmup": 3.0 if short else 4.0,
        "valkey_every": 30.0 if short else 60.0,
        "worker_every": 12.0 if short else 25.0,
    }
    base.update(overrides)
    return PlanConfig(**base)


def _pick_mode(rng: random.Random, bag: list[FarmMode], previous: FarmMode) -> FarmMode:
    """The next fault mode from a shuffled bag (so short plans still cover every mode).

    A 500 on one target right after an all-down or busy segment is avoided: the
    other target's breaker may still be open then, and the walk would end on the
    500 — a legitimate failure that is not what this segment is meant to test.
    """
    for _ in range(2 * len(FAULT_MODES) + 1):
        if not bag:
            bag.extend(FAULT_MODES)
            rng.shuffle(bag)
        mode = bag.pop()
        if mode is previous:
            bag.insert(0, mode)
            continue
        if mode is FarmMode.HALF_500 and (previous in ALL_DOWN or previous in BUSY):
            bag.insert(0, mode)
            continue
        return mode
    return FarmMode.OUTAGE if previous is not FarmMode.OUTAGE else FarmMode.HUNG_EMBEDDER


def farm_segments(rng: random.Random, config: PlanConfig) -> list[FarmSegment]:
    """Healthy lead-in, then incidents separated by gaps, healthy to the end."""
    c = config
    seg_min = max(c.min_segment, c.probe_warmup + 3 * c.interval)
    segments: list[FarmSegment] = []
    t = 0.0
    gap = c.lead_in
    bag: list[FarmMode] = []
    while True:
        incident_len = rng.uniform(seg_min, max(seg_min, c.incident_max))
        if t + gap + incident_len > c.duration:
            break
        segments.append(FarmSegment(t, t + gap, FarmMode.HEALTHY))
        t += gap
        parts = min(rng.randint(1, 3), max(1, int(incident_len // seg_min)))
        cuts = sorted(rng.uniform(0, incident_len - parts * seg_min) for _ in range(parts - 1))
        lengths, previous_cut = [], 0.0
        for cut in [*cuts, incident_len - parts * seg_min]:
            lengths.append(seg_min + cut - previous_cut)
            previous_cut = cut
        previous = FarmMode.HEALTHY
        for length in lengths:
            mode = _pick_mode(rng, bag, previous)
            segments.append(FarmSegment(t, t + length, mode))
            t += length
            previous = mode
        gap = rng.uniform(c.gap_min, 1.2 * c.gap_min)
    if t < c.duration:
        segments.append(FarmSegment(t, c.duration, FarmMode.HEALTHY))
    return segments


def process_actions(rng: random.Random, config: PlanConfig) -> list[Action]:
    """Valkey and worker faults on their own random clocks (never in the last lease)."""
    c = config
    end = c.duration - c.lease
    actions: list[Action] = []
    t = c.lead_in + rng.uniform(0, c.valkey_every / 2)
    while t < end:
        if rng.random() < 0.5:
            action = Action(t, ActionKind.VALKEY_KILL9, seconds=round(rng.uniform(0.5, 3.0), 2))
        else:
            action = Action(t, ActionKind.VALKEY_STOP, seconds=2 * c.lease)
        actions.append(action)
        t += action.seconds + rng.uniform(0.5 * c.valkey_every, 1.5 * c.valkey_every)
    t = c.lead_in / 2 + rng.uniform(0, c.worker_every / 2)
    while t < end:
        kind = ActionKind.WORKER_KILL9 if rng.random() < 0.5 else ActionKind.WORKER_TERM
        actions.append(
            Action(
                t, kind, seconds=round(rng.uniform(0.3, 2.0), 2), worker=rng.randrange(c.workers)
            )
        )
        t += rng.uniform(0.5 * c.worker_every, 1.5 * c.worker_every)
    return sorted(actions, key=lambda a: a.at)


def enqueue_times(config: PlanConfig) -> list[tuple[float, int]]:
    """Evenly spaced batches: (time, runs enqueued by then, cumulative)."""
    c = config
    batches = max(1, min(c.enqueue_batches, c.runs))
    span = c.enqueue_share * c.duration
    return [
        (round(span * i / batches, 3), math.ceil(c.runs * (i + 1) / batches))
        for i in range(batches)
    ]


def make_plan(seed: int, config: PlanConfig) -> Plan:
    """The whole schedule for ``seed`` (same seed, same config → same plan)."""
    rng = random.Random(seed)
    segments = farm_segments(rng, config)
    actions = process_actions(rng, config)
    return Plan(seed, config, tuple(segments), tuple(actions), tuple(enqueue_times(config)))


def incidents(segments: Sequence[FarmSegment]) -> list[tuple[float, float, tuple[FarmMode, ...]]]:
    """Maximal runs of consecutive fault segments: (start, end, modes)."""
    found: list[tuple[float, float, tuple[FarmMode, ...]]] = []
    current: list[FarmSegment] = []
    for seg in [*segments, FarmSegment(math.inf, math.inf, FarmMode.HEALTHY)]:
        if seg.mode is FarmMode.HEALTHY:
            if current:
                found.append((current[0].start, current[-1].end, tuple(s.mode for s in current)))
            current = []
        else:
            current.append(seg)
    return found


def describe_plan(plan: Plan) -> list[str]:
    """The schedule as printable lines."""
    lines = [f"seed {plan.seed}, {plan.config.duration:.0f} s of chaos"]
    for seg in plan.segments:
        if seg.mode is not FarmMode.HEALTHY:
            lines.append(f"  farm  {seg.start:7.1f}–{seg.end:7.1f} s  {seg.mode.value}")
    for act in plan.actions:
        who = f" worker {act.worker}" if act.worker is not None else ""
        lines.append(f"  proc  {act.at:7.1f} s  {act.kind.value}{who} ({act.seconds:.1f} s)")
    return lines


# --------------------------------------------------------------------------- the workload

WORKLOAD_BASE = datetime(2026, 9, 1, tzinfo=UTC)

_NAMES = (
    "Alice", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines",
    "Jonas", "Keiko", "Lars", "Mira", "Nadia", "Oskar", "Priya", "Quentin", "Rosa",
)  # fmt: skip
_CITIES = (
    "Lisbon", "Porto", "Krakow", "Valencia", "Tallinn", "Ghent", "Bergen", "Turin",
    "Leipzig", "Seville",
)  # fmt: skip
_JOBS = (
    "nurse", "carpenter", "pilot", "librarian", "chemist", "baker", "surveyor",
    "translator", "architect", "florist",
)  # fmt: skip
_LIKES = (
    "jazz", "chess", "sushi", "hiking", "pottery", "cycling", "opera", "gardening",
    "photography", "salsa dancing", "rock climbing", "crosswords", "kayaking", "origami",
)  # fmt: skip
_ALLERGIES = ("peanuts", "shellfish", "pollen", "penicillin", "cats", "strawberries")
_PREFERS = ("window seats", "early mornings", "paper books", "trains", "quiet cafes")
_SMALL_TALK = ("Good morning everyone!", "Haha, true.", "Sounds good to me.", "Thanks!")


@dataclass(frozen=True, slots=True)
class _Person:
    user_id: int
    name: str
    facts: tuple[str, ...]


def _people(rng: random.Random, chat_index: int) -> list[_Person]:
    names = rng.sample(_NAMES, 3)
    people = []
    for n, name in enumerate(names):
        facts = (
            f"My name is {name}.",
            f"I live in {rng.choice(_CITIES)}.",
            f"I work as a {rng.choice(_JOBS)}.",
            *(f"I love {like}." for like in rng.sample(_LIKES, 3)),
            f"I am allergic to {rng.choice(_ALLERGIES)}.",
            f"I prefer {rng.choice(_PREFERS)}.",
        )
        people.append(_Person(10_000 * (chat_index + 1) + n + 1, name, facts))
    return people


def build_requests(runs: int, chats: int, seed: int = 0) -> list[dict[str, Any]]:
    """``runs`` run requests spread round-robin over ``chats`` chats (order-independent memory)."""
    rng = random.Random(seed)
    people = [_people(rng, c) for c in range(chats)]
    requests: list[dict[str, Any]] = []
    for i in range(runs):
        chat, window = i % chats, i // chats
        start = WORKLOAD_BASE + timedelta(hours=window, minutes=chat)
        messages = []
        for m in range(4):
            person = people[chat][rng.randrange(3)]
            if m == 3 and rng.random() < 0.5:
                text = rng.choice(_SMALL_TALK)
            else:
                text = " ".join(rng.sample(person.facts, rng.randint(1, 2)))
            messages.append(
                {
                    "message_id": m + 1,
                    "user_id": person.user_id,
                    "sender_name": person.name,
                    "text": text,
                    "sent_at": (start + timedelta(minutes=5 * m + 1)).isoformat(),
                }
            )
        requests.append(
            {
                "chat_id": 9_000 + chat,
                "thread_id": 0,
                "range_start": start.isoformat(),
                "range_end": (start + timedelta(hours=1)).isoformat(),
                "messages": messages,
            }
        )
    return requests


# --------------------------------------------------------------------------- the verdicts

#: Visible memory of a chat: normalised fact → observation counts of the live cards holding it.
Memory = Mapping[int, Mapping[str, tuple[int, ...]]]


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    chat_id: int
    status: str
    retired: bool
    attempts: int
    releases: int
    error_codes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PageRecord:
    at: float
    dedupe_key: str
    event_type: str
    workflow: str


@dataclass(frozen=True, slots=True)
class Observations:
    """Everything the shell collected, as plain data."""

    expected_runs: int
    runs: Sequence[RunRecord]
    completed_counter: int
    #: chat → ids of the runs its card store applied (the store's idempotency set)
    applied: Mapping[int, Sequence[str]]
    #: run → kill -9s that hit it while it was processing
    kill_hits: Mapping[str, int]
    #: run → other faults it was in flight for (Valkey stops, SIGTERMs…), to explain failures
    touched: Mapping[str, Sequence[str]]
    reference: Memory
    chaos: Memory
    #: (time, service) of every farm submit during the chaos phase
    submits: Sequence[tuple[float, str]]
    segments: Sequence[FarmSegment]
    pages: Sequence[PageRecord]
    interval: float
    probe_warmup: float
    page_grace: float
    max_probes_per_interval: int = 1
    #: (time, workflow, every target of its route breaker-open) samples
    route_open: Sequence[tuple[float, str, bool]] = ()
    #: farm service name → the workflow whose route it serves
    service_workflow: Mapping[str, str] = field(default_factory=dict)
    #: sliding windows are this share of the interval (scheduling jitter)
    window_share: float = 0.8
    #: completed runs whose kept extraction (§7) is still stored
    kept_extractions: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    summary: str
    details: tuple[str, ...] = ()


def _by_chat(runs: Iterable[RunRecord]) -> dict[int, list[RunRecord]]:
    out: dict[int, list[RunRecord]] = defaultdict(list)
    for r in runs:
        out[r.chat_id].append(r)
    return out


def check_completed_once(obs: Observations) -> Check:
    details: list[str] = []
    if len(obs.runs) != obs.expected_runs:
        details.append(f"{len(obs.runs)} runs stored, {obs.expected_runs} enqueued")
    not_done = [r for r in obs.runs if r.status != "completed"]
    details += [
        f"run {r.run_id} (chat {r.chat_id}) is {r.status}{' retired' if r.retired else ''}, "
        f"attempts {r.attempts}, errors {list(r.error_codes)}"
        for r in not_done
    ]
    if obs.completed_counter != obs.expected_runs:
        details.append(
            f"run store counter 'completed' = {obs.completed_counter}, expected "
            f"{obs.expected_runs} (a run completed twice, or not at all)"
        )
    for chat, runs in sorted(_by_chat(obs.runs).items()):
        applied = Counter(obs.applied.get(chat, ()))
        done = {r.run_id for r in runs if r.status == "completed"}
        twice = [rid for rid, n in applied.items() if n > 1]
        missing = sorted(done - set(applied))
        stray = sorted(set(applied) - {r.run_id for r in runs})
        if twice or missing or stray:
            details.append(
                f"chat {chat}: applied twice {twice}, completed but not applied {missing}, "
                f"applied but unknown {stray}"
            )
    completed = sum(r.status == "completed" for r in obs.runs)
    return Check(
        "every run completes exactly once",
        not details,
        f"{completed}/{obs.expected_runs} completed, counter {obs.completed_counter}",
        tuple(details),
    )


def unlogged_attempts(run: RunRecord, kill_hits: Mapping[str, int]) -> int:
    """Attempts neither the final one, a failure in the error log nor a kill -9 explains.

    These are attempts lost silently — typically a lease that expired and was
    reclaimed while its owner was alive (e.g. Redis frozen for longer than the lease).
    """
    final = 1 if run.status in ("completed", "processing") else 0
    return max(0, run.attempts - final - len(run.error_codes) - kill_hits.get(run.run_id, 0))


def check_attempts(obs: Observations) -> Check:
    over = [r for r in obs.runs if r.attempts > 1 + obs.kill_hits.get(r.run_id, 0)]
    details = tuple(
        f"run {r.run_id} (chat {r.chat_id}): attempts {r.attempts} > 1 + "
        f"{obs.kill_hits.get(r.run_id, 0)} kill -9 hit(s); releases {r.releases}; "
        f"errors {list(r.error_codes)}; "
        f"attempts without an error entry {unlogged_attempts(r, obs.kill_hits)}; "
        f"in flight during {list(obs.touched.get(r.run_id, ())) or 'no tracked fault'}"
        for r in over
    )
    return Check(
        "attempts spent <= 1 + kill -9s that hit the run",
        not over,
        f"{len(over)} run(s) over budget",
        details,
    )


def check_none_retired(obs: Observations) -> Check:
    retired = [r for r in obs.runs if r.retired]
    return Check(
        "no run retired",
        not retired,
        f"{len(retired)} retired",
        tuple(
            f"run {r.run_id} (chat {r.chat_id}) retired after {r.attempts} attempts: "
            f"{list(r.error_codes)}"
            for r in retired
        ),
    )


def check_kept_extractions(obs: Observations) -> Check:
    """No kept extraction outlives its run (§7): each goes with the run's completion, whatever
    the kills, freezes and farm faults did to the attempts that kept them."""
    left = sorted(obs.kept_extractions)
    return Check(
        "no completed run keeps its extraction",
        not left,
        f"{len(left)} left",
        tuple(f"run {run_id} still keeps its extraction" for run_id in left),
    )


def memory_diff(reference: Memory, chaos: Memory) -> dict[int, list[str]]:
    """Per chat, the differences of the chaos memory from the reference (empty: equal)."""
    diffs: dict[int, list[str]] = {}
    for chat in sorted(set(reference) | set(chaos)):
        ref, got = reference.get(chat, {}), chaos.get(chat, {})
        lines = []
        for fact in sorted(set(ref) | set(got)):
            want, have = ref.get(fact), got.get(fact)
            if want == have:
                continue
            if have is None:
                lines.append(f"missing {fact!r} (reference observations {list(want or ())})")
            elif want is None:
                lines.append(f"extra {fact!r} (observations {list(have)})")
            elif len(want) != len(have):
                lines.append(f"{fact!r}: {len(have)} live card(s), reference {len(want)}")
            else:
                lines.append(f"{fact!r}: observations {list(have)}, reference {list(want)}")
        if lines:
            diffs[chat] = lines
    return diffs


def check_memory(obs: Observations) -> Check:
    diffs = memory_diff(obs.reference, obs.chaos)
    runs = _by_chat(obs.runs)
    details: list[str] = []
    for chat, lines in diffs.items():
        details.append(f"chat {chat}:")
        details += [f"    {line}" for line in lines]
        for r in runs.get(chat, []):
            details.append(
                f"    run {r.run_id}: {r.status}, attempts {r.attempts}, releases {r.releases}, "
                f"kill hits {obs.kill_hits.get(r.run_id, 0)}, errors {list(r.error_codes)}"
            )
        if any(r.status != "completed" for r in runs.get(chat, [])):
            details.append("    explained: a run of this chat did not complete")
        elif any(line.startswith(("extra", "missing")) for line in lines):
            details.append("    unexplained: every run completed, yet facts differ")
        else:
            details.append(
                "    unexplained: every run completed; differing observation counts mean a "
                "run's writes landed twice or not at all"
            )
    cards = sum(sum(len(v) for v in m.values()) for m in obs.reference.values())
    return Check(
        "final visible memory equals the fault-free reference",
        not diffs,
        f"{len(diffs)} of {len(set(obs.reference) | set(obs.chaos))} chats differ "
        f"({cards} live cards in the reference)",
        tuple(details),
    )


def max_in_window(times: Sequence[float], width: float) -> int:
    """Most events in any half-open window ``[t, t + width)``."""
    ordered = sorted(times)
    best, lo = 0, 0
    for hi, t in enumerate(ordered):
        while ordered[lo] <= t - width:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def all_open_since(obs: Observations, workflow: str, start: float, end: float) -> float | None:
    """The first sample in [start, end) at which ``workflow``'s route was entirely open."""
    for at, wf, all_open in obs.route_open:
        if wf == workflow and all_open and start <= at < end:
            return at
    return None


def probe_windows(obs: Observations) -> list[tuple[FarmSegment, str, int, int]]:
    """Per all-down segment and workflow: (segment, workflow, submits counted, max per interval).

    §6: once *every* target of a route is breaker-open, the fleet sends at most one
    probe per interval for it. Counting starts at the later of the warm-up and the
    first moment the route was seen entirely open (tripping the breakers costs the
    failure threshold per target plus the walks already in flight); a workflow whose
    route never opened inside the segment promised nothing there.
    """
    out = []
    width = obs.window_share * obs.interval
    workflows = sorted(set(obs.service_workflow.values()))
    for seg in obs.segments:
        if seg.mode not in ALL_DOWN or seg.seconds <= obs.probe_warmup:
            continue
        for wf in workflows or [""]:
            begin = seg.start + obs.probe_warmup
            if wf:
                opened = all_open_since(obs, wf, seg.start, seg.end)
                if opened is None:
                    continue
                begin = max(begin, opened)
            times = [
                t
                for t, service in obs.submits
                if begin <= t < seg.end and obs.service_workflow.get(service, "") == wf
            ]
            out.append((seg, wf, len(times), max_in_window(times, width)))
    return out


def check_probes(obs: Observations) -> Check:
    rows = probe_windows(obs)
    bad = [row for row in rows if row[3] > obs.max_probes_per_interval]
    details = []
    for seg, wf, total, peak in bad:
        details.append(
            f"{seg.mode.value} {seg.start:.1f}–{seg.end:.1f} s, {wf or 'all services'}: "
            f"{peak} submits within {obs.window_share * obs.interval:.2f} s, {total} after "
            "the route was open"
        )
    peak = max((row[3] for row in rows), default=0)
    return Check(
        f"<= {obs.max_probes_per_interval} farm probe per interval per workflow "
        "while every target is breaker-open",
        not bad,
        f"max {peak} per interval over {len(rows)} (segment, workflow) pair(s)",
        tuple(details),
    )


def check_pages(obs: Observations) -> Check:
    details: list[str] = []
    attributed: set[int] = set()
    for start, end, modes in incidents(obs.segments):
        mine = [(i, p) for i, p in enumerate(obs.pages) if start <= p.at <= end + obs.page_grace]
        attributed.update(i for i, _ in mine)
        per_key = Counter(p.dedupe_key for _, p in mine)
        names = "+".join(m.value for m in modes)
        for key, n in per_key.items():
            if n > 1:
                details.append(f"incident {start:.1f}–{end:.1f} s ({names}): {n} pages for {key}")
        down = sum(
            s.seconds
            for s in obs.segments
            if s.mode in ALL_DOWN and start <= s.start and s.end <= end
        )
        # §6/§9: the page is the walker's circuit_open_exhaustion, emitted once a route is
        # entirely breaker-open. An outage that met no work (an empty backlog: no farm call,
        # no breaker charged) is invisible to the service and pages nobody — so an incident
        # must page when a route was seen entirely open in it (or, without route samples,
        # whenever every target was down long enough).
        route_opened = (
            any(all_open and start <= at <= end for at, _, all_open in obs.route_open)
            or not obs.route_open
        )
        if down > obs.probe_warmup + obs.interval and route_opened and not mine:
            details.append(
                f"incident {start:.1f}–{end:.1f} s ({names}): every target down "
                f"{down:.0f} s and no page"
            )
    for i, p in enumerate(obs.pages):
        if i not in attributed:
            details.append(
                f"page at {p.at:.1f} s outside every farm incident: {p.event_type} "
                f"({p.workflow}, {p.dedupe_key})"
            )
    return Check(
        "one admin page per incident",
        not details,
        f"{len(obs.pages)} page(s) over {len(incidents(obs.segments))} incident(s)",
        tuple(details),
    )


def route_open_spans(
    samples: Sequence[tuple[float, str, bool]],
) -> dict[str, list[tuple[float, float]]]:
    """Per workflow, the spans (first, last sample) in which every target of its route
    was breaker-open, from the watcher's samples (for the report, not a verdict)."""
    spans: dict[str, list[tuple[float, float]]] = {}
    current: dict[str, tuple[float, float]] = {}
    for at, workflow, all_open in sorted(samples):
        if all_open:
            first = current.get(workflow, (at, at))[0]
            current[workflow] = (first, at)
        elif workflow in current:
            spans.setdefault(workflow, []).append(current.pop(workflow))
    for workflow, span in current.items():
        spans.setdefault(workflow, []).append(span)
    return spans


def incident_timeline(obs: Observations) -> list[str]:
    """Each farm incident with its pages and its routes' all-open spans, as offsets from
    its end: what a late or missing page needs explained."""
    lines = []
    spans = route_open_spans(obs.route_open)
    for start, end, modes in incidents(obs.segments):
        names = "+".join(m.value for m in modes)
        lines.append(f"incident {start:.1f}–{end:.1f} s ({names})")
        for p in obs.pages:
            if start <= p.at <= end + 2 * obs.page_grace:
                lines.append(f"    page {p.event_type} ({p.workflow}) at end{p.at - end:+.1f} s")
        for workflow, found in sorted(spans.items()):
            for first, last in found:
                if start <= last and first <= end + 2 * obs.page_grace:
                    lines.append(
                        f"    route {workflow} all open end{first - end:+.1f} … "
                        f"end{last - end:+.1f} s"
                    )
    return lines


def evaluate(obs: Observations) -> list[Check]:
    return [
        check_completed_once(obs),
        check_attempts(obs),
        check_none_retired(obs),
        check_memory(obs),
        check_probes(obs),
        check_pages(obs),
        check_kept_extractions(obs),
    ]


def attempts_histogram(runs: Iterable[RunRecord]) -> dict[int, int]:
    return dict(sorted(Counter(r.attempts for r in runs).items()))


@dataclass
class KillLedger:
    """Which runs each kill -9 hit (from the runs' lease owners around the kill)."""

    hits: Counter[str] = field(default_factory=Counter)
    kills: list[tuple[float, str, tuple[str, ...], str]] = field(default_factory=list)
    touched: dict[str, list[str]] = field(default_factory=dict)

    def touch(self, at: float, what: str, runs: Iterable[str]) -> None:
        """Note (for explanations only) that ``runs`` were in flight when ``what`` happened."""
        for run_id in sorted(set(runs)):
            self.touched.setdefault(run_id, []).append(f"{what} at {at:.1f} s")

    def record(self, at: float, what: str, runs: Iterable[str], source: str) -> None:
        ids = tuple(sorted(set(runs)))
        self.hits.update(ids)
        self.kills.append((at, what, ids, source))


def runs_held_by(leases: Mapping[str, str], pid: int) -> list[str]:
    """Runs whose lease owner (``host:pid:nonce``) is process ``pid``."""
    held = []
    for run_id, owner in leases.items():
        parts = owner.split(":")
        if len(parts) >= 2 and parts[-2] == str(pid):
            held.append(run_id)
    return sorted(held)
