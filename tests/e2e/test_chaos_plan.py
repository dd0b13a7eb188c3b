"""The chaos soak's functional core (bench/chaos_plan.py): schedule, workload, verdicts.

No Redis, no processes, no clock: the soak itself is tests/e2e/test_chaos.py.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import defaultdict
from typing import Any

import pytest

from bench.chaos_plan import (
    ALL_DOWN,
    BUSY,
    FAULT_MODES,
    ActionKind,
    FarmMode,
    FarmSegment,
    Observations,
    PageRecord,
    PlanConfig,
    RunRecord,
    build_requests,
    check_attempts,
    check_completed_once,
    check_kept_extractions,
    check_memory,
    check_none_retired,
    check_pages,
    check_probes,
    config_for_minutes,
    evaluate,
    incidents,
    make_plan,
    max_in_window,
    memory_diff,
    route_open_spans,
    runs_held_by,
    unlogged_attempts,
)
from memory_worker.farmsim.extractor import PREDICATES, find_facts
from memory_worker.models import RunRequest

SEEDS = range(12)


# --------------------------------------------------------------------------- the schedule


@pytest.mark.parametrize("minutes", [2.75, 30])
@pytest.mark.parametrize("seed", SEEDS)
def test_plan_shape(minutes: float, seed: int) -> None:
    config = config_for_minutes(minutes)
    plan = make_plan(seed, config)
    segs = plan.segments
    # the farm segments tile the schedule, healthy first and last
    assert segs[0].start == 0
    assert segs[0].mode is FarmMode.HEALTHY
    assert segs[0].seconds >= config.lead_in - 1e-9
    assert segs[-1].end == pytest.approx(config.duration)
    assert all(a.end == pytest.approx(b.start) for a, b in itertools.pairwise(segs))
    seg_min = max(config.min_segment, config.probe_warmup + 3 * config.interval)
    for prev, seg in itertools.pairwise(segs):
        if seg.mode is not FarmMode.HEALTHY:
            assert seg.seconds >= seg_min - 1e-9
            assert seg.mode is not prev.mode
        if seg.mode is FarmMode.HALF_500:
            assert prev.mode not in ALL_DOWN | BUSY
    # incidents fit one page cooldown, gaps let the dedup window close
    found = incidents(segs)
    assert found
    for start, end, _ in found:
        assert end - start <= config.incident_max + 1e-9
    for (_, end, _), (start, _, _) in itertools.pairwise(found):
        assert start - end >= config.gap_min - 1e-9
    # process faults stay inside the schedule, Valkey faults never overlap
    assert all(0 <= a.at <= config.duration - config.lease for a in plan.actions)
    valkey = [
        a for a in plan.actions if a.kind in (ActionKind.VALKEY_KILL9, ActionKind.VALKEY_STOP)
    ]
    for a, b in itertools.pairwise(valkey):
        assert a.at + a.seconds < b.at
    assert all(a.seconds == 2 * config.lease for a in valkey if a.kind is ActionKind.VALKEY_STOP)
    workers = [a.worker for a in plan.actions if a.worker is not None]
    assert workers
    assert all(0 <= w < config.workers for w in workers)
    # the runs are all enqueued, in order, within the enqueue share
    times = [t for t, _ in plan.enqueue]
    assert times == sorted(times)
    assert times[-1] <= config.enqueue_share * config.duration
    counts = [n for _, n in plan.enqueue]
    assert counts == sorted(counts)
    assert counts[-1] == config.runs


def test_plan_is_a_function_of_the_seed() -> None:
    config = config_for_minutes(2.75)
    assert make_plan(5, config) == make_plan(5, config)
    assert make_plan(5, config) != make_plan(6, config)


def test_a_long_plan_covers_every_fault() -> None:
    kinds = make_plan(1, config_for_minutes(30)).faults_by_kind()
    assert set(kinds) == {m.value for m in FAULT_MODES} | {k.value for k in ActionKind}


def test_short_plans_still_see_most_modes() -> None:
    seen = [{s.mode for s in make_plan(seed, config_for_minutes(2.75)).segments} for seed in SEEDS]
    assert all(len(modes - {FarmMode.HEALTHY}) >= 2 for modes in seen)
    assert set().union(*seen) == set(FarmMode)


def test_incidents_group_consecutive_faults() -> None:
    segs = [
        FarmSegment(0, 5, FarmMode.HEALTHY),
        FarmSegment(5, 10, FarmMode.OUTAGE),
        FarmSegment(10, 15, FarmMode.BUSY_SUBMIT),
        FarmSegment(15, 40, FarmMode.HEALTHY),
        FarmSegment(40, 50, FarmMode.HUNG_EMBEDDER),
    ]
    assert incidents(segs) == [
        (5, 15, (FarmMode.OUTAGE, FarmMode.BUSY_SUBMIT)),
        (40, 50, (FarmMode.HUNG_EMBEDDER,)),
    ]


# --------------------------------------------------------------------------- the workload

SINGLE_VALUED = {name for name, p in PREDICATES.items() if p.single_valued}


def test_workload_is_valid_and_order_independent() -> None:
    requests = build_requests(200, 40, seed=3)
    assert len(requests) == 200
    assert len({r["chat_id"] for r in requests}) == 40
    parsed = [RunRequest.model_validate(r) for r in requests]
    assert len({(r.chat_id, r.range_start) for r in parsed}) == 200  # 200 distinct slices
    values: dict[tuple[int, int, str], set[str]] = defaultdict(set)
    facts = 0
    for run in parsed:
        for msg in run.messages:
            for fact in find_facts(msg.text):
                facts += 1
                # no change of mind, no contradiction: processing order cannot matter
                assert fact.predicate in {"likes", "prefers", "name", "lives_in", "works_as",
                                          "allergic_to"}  # fmt: skip
                values[(run.chat_id, msg.user_id, fact.predicate)].add(fact.object)
    assert facts > 400
    for (_, _, predicate), objects in values.items():
        if predicate in SINGLE_VALUED:
            assert len(objects) == 1
    # facts repeat across runs, so observation counts are exercised
    assert any(len(v) < 3 for k, v in values.items() if k[2] == "likes")


def test_workload_is_a_function_of_the_seed() -> None:
    assert build_requests(20, 4, seed=1) == build_requests(20, 4, seed=1)
    assert build_requests(20, 4, seed=1) != build_requests(20, 4, seed=2)


# --------------------------------------------------------------------------- the verdicts

OUTAGE = FarmSegment(10, 30, FarmMode.OUTAGE)
SEGMENTS = (FarmSegment(0, 10, FarmMode.HEALTHY), OUTAGE, FarmSegment(30, 90, FarmMode.HEALTHY))
MEMORY: dict[int, dict[str, tuple[int, ...]]] = {
    1: {"user:7|ann|likes|tea|ann likes tea": (2,)},
    2: {"chat|x|decided|y|x": (1,)},
}


def clean(**changes: Any) -> Observations:
    runs = [
        RunRecord("ra", 1, "completed", False, 1, 0),
        RunRecord("rb", 1, "completed", False, 2, 3),
        RunRecord("rc", 2, "completed", False, 1, 1),
    ]
    obs = Observations(
        expected_runs=3,
        runs=runs,
        completed_counter=3,
        applied={1: ["ra", "rb"], 2: ["rc"]},
        kill_hits={"rb": 1},
        touched={},
        reference=MEMORY,
        chaos=MEMORY,
        submits=[(t + 0.5, "embedder") for t in range(10, 30)],  # every interval, 1 probe
        segments=SEGMENTS,
        pages=[PageRecord(12.0, "circuit_open_exhaustion:embedding:-", "coe", "embedding")],
        interval=1.0,
        probe_warmup=3.0,
        page_grace=2.0,
    )
    return dataclasses.replace(obs, **changes)


def test_a_clean_soak_passes_every_check() -> None:
    checks = evaluate(clean())
    assert [c.name for c in checks if not c.ok] == []
    assert len(checks) == 7


def test_a_run_not_completed_or_completed_twice_fails() -> None:
    runs = list(clean().runs)
    runs[2] = dataclasses.replace(runs[2], status="queued")
    check = check_completed_once(clean(runs=runs))
    assert not check.ok
    assert any("rc" in d and "queued" in d for d in check.details)
    assert not check_completed_once(clean(completed_counter=4)).ok
    twice = check_completed_once(clean(applied={1: ["ra", "rb", "rb"], 2: ["rc"]}))
    assert not twice.ok
    assert "applied twice ['rb']" in twice.details[0]
    missing = check_completed_once(clean(applied={1: ["ra"], 2: ["rc"]}))
    assert not missing.ok
    assert "not applied ['rb']" in missing.details[0]
    assert not check_completed_once(clean(runs=runs[:2])).ok


def test_attempts_are_bounded_by_the_kills_that_hit_the_run() -> None:
    assert check_attempts(clean()).ok  # rb: 2 attempts, 1 kill -9
    check = check_attempts(clean(kill_hits={}, touched={"rb": ["valkey SIGSTOP at 20.0 s"]}))
    assert not check.ok
    assert "rb" in check.details[0]
    assert "valkey SIGSTOP" in check.details[0]
    assert "without an error entry 1" in check.details[0]


def test_unlogged_attempts() -> None:
    done = RunRecord("r", 1, "completed", False, 3, 0, ("task_timeout/None",))
    assert unlogged_attempts(done, {}) == 1
    assert unlogged_attempts(done, {"r": 1}) == 0
    retired = RunRecord("r", 1, "failed", True, 5, 0, ("x",) * 5)
    assert unlogged_attempts(retired, {}) == 0


def test_a_kept_extraction_left_after_the_drain_fails() -> None:
    check = check_kept_extractions(clean(kept_extractions=["rb"]))
    assert not check.ok
    assert check.details == ("run rb still keeps its extraction",)
    assert check_kept_extractions(clean()).ok


def test_retired_runs_fail() -> None:
    runs = [*clean().runs[:2], RunRecord("rc", 2, "failed", True, 5, 0, ("JOB_CANCELLED/None",))]
    check = check_none_retired(clean(runs=runs))
    assert not check.ok
    assert "JOB_CANCELLED" in check.details[0]


def test_memory_must_equal_the_reference() -> None:
    assert check_memory(clean()).ok
    doubled = {**MEMORY, 1: {"user:7|ann|likes|tea|ann likes tea": (3,)}}
    check = check_memory(clean(chaos=doubled))
    assert not check.ok
    assert check.details[0] == "chat 1:"
    assert any("observations [3], reference [2]" in d for d in check.details)
    assert any("landed twice or not at all" in d for d in check.details)
    assert memory_diff(MEMORY, {1: MEMORY[1]}) == {2: ["missing 'chat|x|decided|y|x' "
                                                       "(reference observations [1])"]}  # fmt: skip
    twin: dict[int, dict[str, tuple[int, ...]]] = {**MEMORY, 2: {"chat|x|decided|y|x": (1, 1)}}
    assert memory_diff(MEMORY, twin) == {2: ["'chat|x|decided|y|x': 2 live card(s), reference 1"]}


def test_memory_difference_of_an_unfinished_chat_is_explained() -> None:
    runs = [*clean().runs[:2], RunRecord("rc", 2, "queued", False, 0, 4)]
    check = check_memory(clean(runs=runs, chaos={1: MEMORY[1], 2: {}}))
    assert not check.ok
    assert "    explained: a run of this chat did not complete" in check.details


@pytest.mark.parametrize(
    ("times", "width", "expected"),
    [
        ([], 1.0, 0),
        ([1.0], 1.0, 1),
        ([1.0, 2.0, 3.0], 1.0, 1),
        ([1.0, 1.5, 2.0], 1.0, 2),
        ([3.0, 1.0, 1.1, 1.2], 0.5, 3),
        ([1.0, 1.79, 2.6], 0.8, 2),
    ],
)
def test_max_in_window(times: list[float], width: float, expected: int) -> None:
    assert max_in_window(times, width) == expected


def test_probe_rate_while_everything_is_down() -> None:
    assert check_probes(clean()).ok
    # a burst at the start of the outage is the breakers tripping: not counted
    burst = [(10.0 + i * 0.01, "llm-alpha") for i in range(30)]
    assert check_probes(clean(submits=[*burst, *clean().submits])).ok
    # two probes per interval after the warm-up: fails
    double = [(t / 2, "llm-alpha") for t in range(26, 60)]
    check = check_probes(clean(submits=double))
    assert not check.ok
    assert "all services" in check.details[0]
    # submits in healthy time do not count
    assert check_probes(clean(submits=[(50 + t / 10, "x") for t in range(100)])).ok


WORKFLOW_OF = {"llm-alpha": "memory_extraction", "embedder": "embedding"}


def opened(at: float, *workflows: str) -> list[tuple[float, str, bool]]:
    """Route samples every 0.2 s of the outage, each workflow open from ``at`` on."""
    return [(10 + i / 5, wf, 10 + i / 5 >= at) for i in range(100) for wf in workflows]


def test_probes_are_counted_per_workflow_once_its_route_is_open() -> None:
    base = {"service_workflow": WORKFLOW_OF}
    both = opened(16.0, "memory_extraction", "embedding")
    # one extraction and one embedding probe per interval: each workflow keeps its promise
    per_wf = [(t + 0.5, "llm-alpha") for t in range(16, 30)] + [
        (t + 0.6, "embedder") for t in range(16, 30)
    ]
    assert check_probes(clean(submits=per_wf, route_open=both, **base)).ok
    # the trip burst before the route is seen open is not counted, even past the warm-up
    burst = [(14.0 + i * 0.05, "llm-alpha") for i in range(30)]
    assert check_probes(clean(submits=[*burst, *per_wf], route_open=both, **base)).ok
    # two extraction probes per interval after the route opened: fails, naming it
    double = [(t / 2, "llm-alpha") for t in range(34, 60)]
    check = check_probes(clean(submits=double, route_open=both, **base))
    assert not check.ok
    assert "memory_extraction" in check.details[0]
    # a route never seen open in the outage promised nothing there
    closed = [(10 + i / 5, "memory_extraction", False) for i in range(100)]
    assert check_probes(clean(submits=double, route_open=closed, **base)).ok


def test_one_page_per_incident() -> None:
    assert check_pages(clean()).ok
    late = PageRecord(31.5, "k", "t", "w")  # within the grace after the incident
    assert check_pages(clean(pages=[late])).ok
    twice = clean(pages=[PageRecord(12.0, "k", "t", "w"), PageRecord(25.0, "k", "t", "w")])
    check = check_pages(twice)
    assert not check.ok
    assert "2 pages for k" in check.details[0]
    silent = check_pages(clean(pages=[]))
    assert not silent.ok
    assert "no page" in silent.details[0]
    # with route samples: an incident whose routes were never entirely open met no work
    never_open = [(12.0 + i, "memory_extraction", False) for i in range(10)]
    assert check_pages(clean(pages=[], route_open=never_open)).ok
    opened_once = [*never_open, (15.5, "memory_extraction", True)]
    assert not check_pages(clean(pages=[], route_open=opened_once)).ok
    stray = check_pages(clean(pages=[*clean().pages, PageRecord(60.0, "runs_retired", "r", "p")]))
    assert not stray.ok
    assert "outside every farm incident" in stray.details[0]


def test_runs_held_by_a_process() -> None:
    leases = {"r1": "host:123:abc", "r2": "host:1234:abc", "r3": "", "r4": "h:123:ff"}
    assert runs_held_by(leases, 123) == ["r1", "r4"]
    assert runs_held_by(leases, 99) == []


def test_plan_config_bounds() -> None:
    config = PlanConfig(duration=100, page_cooldown=30, page_grace=4)
    assert config.incident_max == 25
    assert config.gap_min == 35


def test_route_open_spans_join_consecutive_open_samples_per_workflow() -> None:
    samples = [
        (1.0, "a", False),
        (2.0, "a", True),
        (2.2, "b", True),
        (2.5, "a", True),
        (3.0, "a", False),
        (4.0, "a", True),
        (4.1, "b", False),
    ]
    assert route_open_spans(samples) == {"a": [(2.0, 2.5), (4.0, 4.0)], "b": [(2.2, 2.2)]}
    assert route_open_spans([(1.0, "a", False)]) == {}
