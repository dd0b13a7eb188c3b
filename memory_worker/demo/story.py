"""The demo's story as plain data: its timings, sample chats and the checks it must pass.

Pure: :func:`story_checks` turns measured :class:`StoryFacts` into verdicts, so the
story's promises are tested without running the demo.
"""

from __future__ import annotations

import importlib.resources
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from llm_client import extra_installed
from memory_worker.farmsim import Fault, FaultKind
from memory_worker.models import RunRequest, parse_run_request
from memory_worker.settings import Settings
from memory_worker.worker.fleet import FAST

UPSTREAM_ERROR = Fault(
    kind=FaultKind.JOB_FAILED,
    code="UPSTREAM_ERROR",
    message="[Errno -3] Temporary failure in name resolution",
)


# --- timings ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Timing:
    """How long each act lasts; settings overrides compress the worker's clocks to match."""

    outage_seconds: float
    pause_seconds: float
    wait_seconds: float
    sim_run_seconds: float
    overrides: dict[str, Any]

    @property
    def probe_interval(self) -> float:
        return float(self.overrides["consolidation_backend_retry_interval"])


_COMMON: dict[str, Any] = {
    "worker_concurrency": 2,
    "breaker_cooldown_seconds": 2.0,
    "breaker_cooldown_max_seconds": 4.0,
    "admin_report_cooldown": 600.0,
    "sentry_dsn": None,
}

#: Outages last long enough for the breaker to trip (threshold 5) and the admins to be paged.
FAST_TIMING = Timing(
    outage_seconds=4.0,
    pause_seconds=0.0,
    wait_seconds=30.0,
    sim_run_seconds=0.0,
    overrides={**FAST, **_COMMON, "consolidation_backend_retry_interval": 0.5},
)

NORMAL_TIMING = Timing(
    outage_seconds=24.0,
    pause_seconds=1.5,
    wait_seconds=90.0,
    sim_run_seconds=0.3,
    overrides={
        **_COMMON,
        "consolidation_backend_retry_interval": 3.0,
        "poll_delay_seconds": 0.05,
        "lease_seconds": 15.0,
        "lease_renew_seconds": 5.0,
        "backoff_unit_seconds": 2.0,
        "safety_net_seconds": 2,
        "worker_heartbeat_seconds": 1.0,
        "shutdown_grace_seconds": 2.0,
        "request_timeout_seconds": 10.0,
        "task_timeout_seconds": 30.0,
        "capacity_wait_seconds": 5.0,
        "capacity_poll_seconds": 0.2,
        "job_poll_seconds": 0.05,
        "breaker_cooldown_seconds": 10.0,
        "breaker_cooldown_max_seconds": 20.0,
    },
)


def load_sample_chats() -> list[RunRequest]:
    """The shipped sample chats (validated like any run request)."""
    text = (
        importlib.resources.files("memory_worker")
        .joinpath("data/demo_chats.jsonl")
        .read_text(encoding="utf-8")
    )
    return [parse_run_request(line) for line in text.splitlines() if line.strip()]


# --- the story's checks (pure) ------------------------------------------------------------------


@dataclass(slots=True)
class StoryFacts:
    """What the demo measured."""

    before_runs: int = 0
    before_completed: int = 0
    before_cards: int = 0
    cards: int = 0
    outage_runs: int = 0
    outage_released_runs: int = 0
    outage_releases: int = 0
    outage_attempts_spent: int = 0
    outage_failures: int = 0
    outage_retired: int = 0
    probe_pending: int = -1
    probe_delayed: int = -1
    outage_submits: int = 0
    outage_seconds: float = 0.0
    probe_interval: float = 1.0
    #: Farm calls the outage may cost before the breakers trip: the failure threshold for
    #: each workflow the run reaches (extraction and embedding, §6) — a constant.
    trip_allowance: int = 0
    admin_pages: int = 0
    drained: bool = False
    drain_seconds: float = 0.0
    total_runs: int = 0
    completed: int = 0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True


def story_checks(f: StoryFacts) -> list[Check]:
    """The claims of §12, each checked against the measured facts."""
    probes_allowed = math.ceil(f.outage_seconds / f.probe_interval) + 2 + f.trip_allowance
    return [
        Check(
            "memory extracted before the outage",
            f.before_runs > 0 and f.before_completed == f.before_runs,
            f"{f.before_completed}/{f.before_runs} runs completed, {f.before_cards} cards readable",
        ),
        Check(
            "outage runs released, not failed",
            f.outage_released_runs >= 1 and f.outage_failures == 0,
            f"{f.outage_releases} release(s) on {f.outage_released_runs} run(s), "
            f"{f.outage_failures} failure(s)",
        ),
        Check(
            "zero attempts spent during the outage",
            f.outage_attempts_spent == 0,
            f"{f.outage_attempts_spent} attempt(s) spent",
        ),
        Check("no run retired", f.outage_retired == 0, f"{f.outage_retired} retired"),
        Check(
            "exactly one delayed probe",
            f.probe_pending == 1 and f.probe_delayed == 1,
            f"{f.probe_pending} pending tick(s), {f.probe_delayed} delayed",
        ),
        Check(
            "O(1) farm work per probe interval",
            f.outage_submits <= probes_allowed,
            f"{f.outage_submits} farm submit(s) in {f.outage_seconds:.0f}s "
            f"(interval {f.probe_interval:g}s, at most {probes_allowed} incl. "
            f"{f.trip_allowance} to trip the breakers)",
        ),
        Check(
            "admins paged",
            f.admin_pages > 0,
            f"{f.admin_pages} page(s) captured by the local webhook",
            required=False,
        ),
        Check(
            "backlog drained after recovery",
            f.drained and f.completed == f.total_runs,
            f"{f.completed}/{f.total_runs} completed in {f.drain_seconds:.1f}s",
        ),
    ]


def story_held(checks: Sequence[Check]) -> bool:
    return all(c.ok for c in checks if c.required)


#: Questions the bot asks after extraction: (chat, asking user, question).
RECALL_QUESTIONS: tuple[tuple[int, int, str], ...] = (
    (101, 11, "What does Alice drink?"),
    (102, 21, "Что Марии нельзя есть?"),
    (103, 32, "Was macht Lena beruflich?"),
    (104, 41, "¿Dónde vive Lucía?"),
)

#: How the opening panel names the simulator's embedder.
EMBEDDER_LABELS: dict[str, str] = {
    "local": "the real multilingual e5-small model, run locally (§16)",
    "hashed": "a hashed bag of words (blind to meaning)",
}


def demo_embedder(settings: Settings) -> str:
    """The simulator's embedder for the demo: the configured one, hashed if e5 is missing."""
    if settings.farmsim_embedder == "local" and not extra_installed():
        return "hashed"
    return settings.farmsim_embedder
