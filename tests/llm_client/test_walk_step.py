"""The walk's step function (§6), driven on plain data: no Redis, no clock, no awaits.

A scripted :class:`World` answers each step the way the breaker store and the farm
would; the tables pin one rule of the walk per row, and hypothesis runs random worlds
through it for the invariants (it ends; every permit is spent once; hops are bounded).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_client import (
    AllCircuitsOpen,
    BackendUnavailable,
    CapacityUnavailable,
    CapacityWaitTimeout,
    CoolingDown,
    DeadlineExceeded,
    EventType,
    Exhausted,
    LocalEngineError,
    NoCandidates,
    Outcome,
    RequestError,
    RouteTarget,
    TaskTimeout,
    WalkerConfig,
)
from llm_client._breaker.model import Permit
from llm_client._gateway.model import Refusal
from llm_client._routing.judge import Served, judge_attempt
from llm_client._routing.plan import UNTRACKED, WalkPlan, cap, lease
from llm_client._routing.step import (
    Acquire,
    AcquireFailOpen,
    Announce,
    Attempt,
    Begin,
    Done,
    Pause,
    ReadViews,
    Release,
    Stop,
    WalkState,
    after_acquire,
    after_attempt,
    after_begin,
    after_failopen,
    after_order,
    after_pause,
    after_release,
    announced,
    budget_stop,
    next_step,
)

A, B, C = (
    RouteTarget(provider=p, model="m", service="s", endpoint="e", base_url="http://farm")
    for p in ("a", "b", "c")
)
OK = "ok"
DOWN = BackendUnavailable("down")
CRASH = LocalEngineError("500")
BUSY = CapacityUnavailable("no slots")
BAD = RequestError("schema")
#: A busy answer that named its pause (a 429 / capacity answer with Retry-After: 30).
PAUSE = CapacityUnavailable("too many requests", retry_after=30.0)


def plan(*targets: RouteTarget, **budget: object) -> WalkPlan:
    fields: dict[str, object] = {
        "workflow": "memory_extraction",
        "targets": targets,
        "max_hops": 4,
        "wall_seconds": 900.0,
        "slot_wait_seconds": 10.0,
        "slot_poll_seconds": 1.0,
        "started": 0.0,
    }
    fields.update(budget)
    return WalkPlan(**fields)  # type: ignore[arg-type]


@dataclass
class World:
    """The store and the farm, scripted: breaker states, grants, and each target's answers."""

    open: set[str] = field(default_factory=set)
    #: Targets whose permit is refused although their breaker reads closed (probe taken…).
    refuse: set[str] = field(default_factory=set)
    #: Targets the gate refuses (cooling, caps), and how many more asks it refuses them
    #: (None: every ask).
    gate: dict[str, tuple[Refusal, int | None]] = field(default_factory=dict)
    begin_fault: bool = False
    failopen: tuple[Permit | None, bool] = (None, False)
    answers: dict[str, list[object]] = field(default_factory=dict)
    attempt_seconds: float = 1.0
    now: float = 0.0
    notes: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    attempts: list[str] = field(default_factory=list)
    granted: int = 0
    released: int = 0

    def admit(self, target: RouteTarget) -> tuple[Permit | None, Refusal | None]:
        if target.id in self.refuse:
            return None, Refusal.OPEN
        refused = self.gate.get(target.id)
        if refused is not None:
            refusal, left = refused
            if left is None or left > 0:
                self.gate[target.id] = (refusal, None if left is None else left - 1)
                return None, refusal
        if target.id in self.open:
            self.refuse.add(target.id)  # one half-open probe per cooldown
            self.granted += 1
            return Permit(3, probe=True), None
        self.granted += 1
        return Permit(1, probe=False), None

    def permit(self, target: RouteTarget) -> Permit | None:
        return self.admit(target)[0]

    def begin(
        self, p: WalkPlan
    ) -> tuple[list[bool], int | None, Permit | None, list[Refusal | None]]:
        closed = [t.id not in self.open for t in p.targets]
        order = [t for t, c in zip(p.targets, closed, strict=True) if c]
        order += [t for t, c in zip(p.targets, closed, strict=True) if not c and p.probes]
        refusals: list[Refusal | None] = [None] * len(p.targets)
        for target in order:
            granted, refusal = self.admit(target)
            if granted is not None:
                return closed, p.targets.index(target), granted, refusals
            refusals[p.targets.index(target)] = refusal
        return closed, None, None, refusals

    def attempt(self, p: WalkPlan, step: Attempt, state: WalkState) -> WalkState:
        self.attempts.append(step.target.id)
        queue = self.answers.get(step.target.id, [])
        answer = queue.pop(0) if queue else OK
        elapsed = min(self.attempt_seconds, step.cap)
        self.now += elapsed
        if answer == OK:
            return after_attempt(state, p, Served(step.target, "v", True, elapsed), self.now)
        assert isinstance(answer, BaseException)
        failed = judge_attempt(
            p,
            step.target,
            answer,
            cap=step.cap,
            cap_source=step.cap_source,
            elapsed=elapsed,
            guard_expired=False,
            min_slice=30.0,
        )
        return after_attempt(state, p, failed, self.now)


def drive(p: WalkPlan, world: World, limit: int = 500) -> tuple[Done | Stop, WalkState]:
    """Perform every step the walk names against ``world`` until it ends."""
    state = WalkState()
    for _ in range(limit):
        state, step = next_step(state, p, world.now)
        world.steps.append(type(step).__name__)
        if isinstance(step, Done | Stop):
            if isinstance(step, Stop):
                world.notes += [n.type for n in step.notes]
            return step, state
        if isinstance(step, Announce):
            world.notes += [n.type for n in step.notes]
            state = announced(state)
        elif isinstance(step, Begin):
            if world.begin_fault:
                state = after_begin(state, p, None, None, None)
            else:
                state = after_begin(state, p, *world.begin(p))
        elif isinstance(step, ReadViews):
            state = after_order(state, p, [t.id not in world.open for t in step.targets], None)
        elif isinstance(step, Acquire):
            state = after_acquire(state, *world.admit(step.target))
        elif isinstance(step, AcquireFailOpen):
            gated = world.gate.get(step.target.id)  # the gate refuses the fleet's probe too
            answer = (None, False) if gated and gated[1] != 0 else world.failopen
            world.granted += answer[0] is not None
            state = after_failopen(state, p, *answer)
        elif isinstance(step, Attempt):
            state = world.attempt(p, step, state)
        elif isinstance(step, Release):
            world.released += 1
            state = after_release(state)
        else:
            assert isinstance(step, Pause)
            world.now += step.seconds
            state = after_pause(state)
    raise AssertionError(f"the walk did not end in {limit} steps: {world.steps[-10:]}")


def ended_with(ending: Done | Stop) -> object:
    return ending.routed.target.id if isinstance(ending, Done) else type(ending.error)


# --- one rule per row ---------------------------------------------------------------------

ROWS = [
    # (id, plan, world, ending, targets attempted)
    ("primary-serves", plan(A, B), World(), A.id, [A.id]),
    ("fail-over", plan(A, B), World(answers={A.id: [DOWN]}), B.id, [A.id, B.id]),
    ("non-retryable-at-once", plan(A, B), World(answers={A.id: [BAD]}), RequestError, [A.id]),
    (
        "last-error-returned",
        plan(A, B),
        World(answers={A.id: [DOWN], B.id: [DOWN]}),
        BackendUnavailable,
        [A.id, B.id],
    ),
    ("open-goes-last", plan(A, B), World(open={A.id}), B.id, [B.id]),
    (
        "open-probed-after-closed-fail",
        plan(A, B),
        World(open={A.id}, answers={B.id: [DOWN]}),
        A.id,
        [B.id, A.id],
    ),
    (
        "hops-bound",
        plan(A, B, C, max_hops=2),
        World(answers={A.id: [DOWN], B.id: [DOWN]}),
        BackendUnavailable,
        [A.id, B.id],
    ),
    (
        "begin-fault-reads-views",
        plan(A, B),
        World(begin_fault=True, answers={A.id: [DOWN]}),
        B.id,
        [A.id, B.id],
    ),
    ("refused-skipped-no-hop", plan(A, B, max_hops=1), World(refuse={A.id}), B.id, [B.id]),
    (
        "crash-everywhere-fails",
        plan(A, B),
        World(answers={A.id: [CRASH], B.id: [CRASH]}),
        LocalEngineError,
        [A.id, B.id],
    ),
    (
        "crash-one-other-open-released",
        plan(A, B),
        World(open={B.id}, refuse={B.id}, answers={A.id: [CRASH]}),
        NoCandidates,
        [A.id],
    ),
    (
        "crash-every-open-released",
        plan(A),
        World(open={A.id}, answers={A.id: [CRASH]}),
        NoCandidates,
        [A.id],
    ),
    ("busy-then-free", plan(A), World(answers={A.id: [BUSY, BUSY]}), A.id, [A.id] * 3),
    (
        "busy-wait-runs-out",
        plan(A, slot_wait_seconds=3.0),
        World(answers={A.id: [BUSY] * 9}),
        CapacityWaitTimeout,
        [A.id] * 3,
    ),
    (
        "all-open-probe-taken",
        plan(A, B),
        World(open={A.id, B.id}, refuse={A.id, B.id}),
        AllCircuitsOpen,
        [],
    ),
    (
        "all-open-failopen-probe",
        plan(A, B),
        World(open={A.id, B.id}, refuse={A.id, B.id}, failopen=(UNTRACKED, True)),
        A.id,
        [A.id],
    ),
    ("optional-never-probes", plan(A, probes=False), World(open={A.id}), AllCircuitsOpen, []),
    ("no-targets", plan(), World(), NoCandidates, []),
    ("deadline-spent-before-start", plan(A, deadline=0.0), World(), DeadlineExceeded, []),
    (
        "wall-spent-by-attempt",
        plan(A, B, wall_seconds=1.0),
        World(answers={A.id: [DOWN]}),
        BackendUnavailable,
        [A.id],
    ),
    # --- the gate: cooling and caps are capacity, never a hop or a fault ---
    (
        "cooling-skipped-no-hop",
        plan(A, B, max_hops=1),
        World(gate={A.id: (Refusal.COOLING, None)}),
        B.id,
        [B.id],
    ),
    (
        "all-cooling-ends-at-once",
        plan(A, B),
        World(gate={A.id: (Refusal.COOLING, None), B.id: (Refusal.TOKENS, None)}),
        CoolingDown,
        [],
    ),
    (
        "capped-waited-for-then-served",
        plan(A),
        World(gate={A.id: (Refusal.IN_FLIGHT, 2)}),
        A.id,
        [A.id],
    ),
    (
        "rate-capped-for-the-whole-wait",
        plan(A, slot_wait_seconds=3.0),
        World(gate={A.id: (Refusal.RATE, None)}),
        CapacityWaitTimeout,
        [],
    ),
    (
        "capped-primary-spills-to-the-next",
        plan(A, B),
        World(gate={A.id: (Refusal.RATE, None)}),
        B.id,
        [B.id],
    ),
    (
        "retry-after-answer-moves-on",
        plan(A, B),
        World(answers={A.id: [PAUSE]}),
        B.id,
        [A.id, B.id],
    ),
    (
        "retry-after-answer-is-not-retried",
        plan(A),
        World(answers={A.id: [PAUSE, OK]}),
        CoolingDown,
        [A.id],
    ),
    (
        "open-and-cooling-never-fail-open",
        plan(A, B),
        World(
            open={A.id},
            refuse={A.id},
            gate={B.id: (Refusal.COOLING, None)},
            failopen=(UNTRACKED, True),
        ),
        CoolingDown,
        [],
    ),
    (
        "failopen-probe-goes-to-the-primary",
        plan(A, B, primary=B),
        World(open={A.id, B.id}, refuse={A.id, B.id}, failopen=(UNTRACKED, True)),
        B.id,
        [B.id],
    ),
]


@pytest.mark.parametrize(
    ("p", "world", "ending", "attempted"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_walk_rules(p: WalkPlan, world: World, ending: object, attempted: list[str]) -> None:
    done, _ = drive(p, world)
    assert ended_with(done) == ending
    assert world.attempts == attempted
    assert world.granted == len(world.attempts) + world.released


def test_every_target_open_is_announced_once_before_the_probe() -> None:
    world = World(open={A.id, B.id}, refuse={A.id, B.id}, failopen=(Permit(9, True), True))
    drive(plan(A, B), world)
    assert world.notes == [EventType.CIRCUIT_OPEN_EXHAUSTION, EventType.FAILOPEN_PROBE]
    assert world.steps[:3] == ["Begin", "Announce", "AcquireFailOpen"]


def test_exhaustion_announced_at_fail_open_when_the_pass_found_closed_targets_refusing() -> None:
    world = World(refuse={A.id}, failopen=(None, False))
    done, _ = drive(plan(A), world)
    assert isinstance(done, Stop)
    assert isinstance(done.error, AllCircuitsOpen)
    assert world.notes == [EventType.CIRCUIT_OPEN_EXHAUSTION]


def test_failed_walk_announces_exhaustion_with_counts() -> None:
    world = World(answers={A.id: [BUSY, DOWN], B.id: [DOWN]})
    done, state = drive(plan(A, B), world)
    assert isinstance(done, Stop)
    assert done.error is DOWN
    assert world.notes[-1] == EventType.ALL_ATTEMPTS_EXHAUSTED
    (note,) = done.notes
    assert note.fields["counters"] == {"failed_attempts": 2, "busy_attempts": 1}
    assert state.hops == 2


def test_deadline_cut_attempt_ends_the_walk_chained() -> None:
    p = plan(A, B, deadline=5.0)
    world = World(answers={A.id: [TaskTimeout("cut", seconds=5)]}, attempt_seconds=5.0)
    done, state = drive(p, world)
    assert isinstance(done, Stop)
    assert isinstance(done.error, DeadlineExceeded)
    assert isinstance(done.error.__cause__, TaskTimeout)
    assert world.attempts == [A.id]
    assert state.records[0].outcome is Outcome.NOT_CHARGED


def test_begin_permit_released_when_the_budget_is_spent_first() -> None:
    p = plan(A, B)
    state = after_begin(WalkState(), p, [True, True], 0, Permit(1, False))
    state = replace(state, stop="wall")
    state, step = next_step(state, p, 0.0)
    assert step == Release(A, Permit(1, False))
    state, step = next_step(after_release(state), p, 0.0)
    assert isinstance(step, Stop)
    assert isinstance(step.error, Exhausted)


def test_a_held_permit_without_time_left_is_released_not_attempted() -> None:
    p = plan(A, wall_seconds=10.0)
    state = after_begin(WalkState(), p, [True], 0, Permit(1, False))
    state, step = next_step(state, p, 10.0)
    assert step == Release(A, Permit(1, False))
    assert state.stop == "wall"


@pytest.mark.parametrize(
    ("deadline", "now", "hops", "expected"),
    [
        (None, 0.0, 0, None),
        (None, 900.0, 0, "wall"),
        (5.0, 5.0, 0, "deadline"),
        (5.0, 1.0, 4, "hops"),
        (2000.0, 900.0, 0, "wall"),
    ],
)
def test_budget_stop(deadline: float | None, now: float, hops: int, expected: str | None) -> None:
    p = plan(A, deadline=deadline)
    assert budget_stop(WalkState(hops=hops), p, now) == expected


def test_cap_and_lease() -> None:
    p = plan(A, deadline=100.0, config=WalkerConfig(permit_lease_seconds=30.0))
    assert cap(p, 10.0) == (90.0, "deadline")
    assert lease(p, 10.0) == 30.0
    assert lease(p, 99.0) == pytest.approx(1.0 + 5.0)
    assert cap(plan(A), 100.0) == (800.0, "wall")


# --- invariants over random worlds ----------------------------------------------------------

ANSWERS = st.lists(st.sampled_from([OK, DOWN, CRASH, BUSY, BAD, PAUSE]), max_size=6)
TARGETS = (A, B, C)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 3),
    opened=st.sets(st.sampled_from([t.id for t in TARGETS])),
    refused=st.sets(st.sampled_from([t.id for t in TARGETS])),
    answers=st.fixed_dictionaries({t.id: ANSWERS for t in TARGETS}),
    max_hops=st.integers(1, 4),
    probes=st.booleans(),
    begin_fault=st.booleans(),
    failopen=st.sampled_from([(None, False), (UNTRACKED, False), (Permit(5, True), True)]),
    gated=st.dictionaries(
        st.sampled_from([t.id for t in TARGETS]),
        st.tuples(st.sampled_from(list(Refusal)[1:]), st.one_of(st.none(), st.integers(0, 3))),
    ),
)
def test_random_walks_end_and_spend_each_permit_once(
    n: int,
    opened: set[str],
    refused: set[str],
    answers: dict[str, list[object]],
    max_hops: int,
    probes: bool,
    begin_fault: bool,
    failopen: tuple[Permit | None, bool],
    gated: dict[str, tuple[Refusal, int | None]],
) -> None:
    p = plan(*TARGETS[:n], max_hops=max_hops, probes=probes)
    world = World(
        open=set(opened),
        refuse=set(refused),
        answers={k: list(v) for k, v in answers.items()},
        begin_fault=begin_fault,
        failopen=failopen,
        gate=dict(gated),
    )
    done, state = drive(p, world)
    cooled_for_good = {t for t, (r, left) in gated.items() if not r.waitable and left is None}
    assert not set(world.attempts) & cooled_for_good  # a cooling target is never called
    paused = [r.target for r in state.records if r.error_kind == "CapacityUnavailable"]
    for target in paused:  # once it named its pause, never again in this call
        answered = answers[target][: world.attempts.count(target)]
        if PAUSE in answered:
            assert answered.index(PAUSE) == len(answered) - 1
    assert world.granted == len(world.attempts) + world.released
    assert state.hops <= max_hops
    assert len(state.records) == len(world.attempts)
    charged = [r for r in state.records if r.outcome is Outcome.FAILURE]
    for record in charged:  # a target that failed is not tried again in this call
        assert world.attempts.count(record.target) == 1 + sum(
            1 for r in state.records if r.target == record.target and r.outcome is Outcome.NEUTRAL
        )
    if isinstance(done, Done):
        assert state.records[-1].outcome is Outcome.SUCCESS
        assert done.routed.attempts == state.records
    if not probes:  # an optional call never probes: no fleet probe, no open target
        assert "AcquireFailOpen" not in world.steps
        assert not set(world.attempts) & opened
    assert world.notes.count(EventType.CIRCUIT_OPEN_EXHAUSTION) <= 1


@pytest.mark.parametrize(
    ("closed", "due", "probes", "expected"),
    [
        pytest.param([True, False], [False, True], True, ["b", "a"], id="due-probe-first"),
        pytest.param([True, False], [False, False], True, ["a", "b"], id="cooling-open-last"),
        pytest.param([True, False], [False, True], False, ["a"], id="optional-never-probes"),
        pytest.param(
            [False, False, True], [True, True, False], True, ["a", "b", "c"], id="two-due"
        ),
    ],
)
def test_an_open_target_whose_probe_is_due_is_tried_first(
    closed: list[bool], due: list[bool], probes: bool, expected: list[str]
) -> None:
    """§6: a half-open probe is sent whether or not a closed peer could serve the call."""
    p = plan(*TARGETS[: len(closed)], probes=probes)
    state = after_order(WalkState(), p, closed, None, due=due)
    assert [t.provider for t in state.candidates] == expected
