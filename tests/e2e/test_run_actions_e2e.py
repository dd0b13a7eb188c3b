"""One run by id from the command line (§13): real worker processes, real Valkey, the farm
simulator over HTTP.

User stories: "an operator cancels a run a worker is working on: the worker stops at its next
checkpoint, nothing of the run is written, and the worker goes on with the next run"; "a
cancelled run is replayed by id and completes"; every action leaves an audit event, and a
question nobody can answer is refused with exit 2.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from memory_worker.cards import CardStore
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.models import RunStatus
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from memory_worker.wiring import event_log
from tests.support.dumps import dump_all
from tests.support.factories import make_request
from tests.support.harness import Fleet, cli, completed_run, eventually

pytestmark = pytest.mark.slow

#: The extraction job of the run to cancel runs this long: the worker is in the middle of it
#: while the cancel (a CLI process: seconds on a loaded host) lands.
SLOW_JOB_SECONDS = 10.0
#: The farm call's budgets, well beyond the slow job (FAST's 5 s would release the run
#: before the cancel on a loaded host).
BUDGETS = {"request_timeout_seconds": 60.0, "task_timeout_seconds": 60.0}


@pytest.fixture
def fleet(settings: Settings, sim: FarmSimulator, tmp_path: Path) -> Any:
    fleet = Fleet(settings, tmp_path, env_overrides={"discovery_base_url": sim.base_url, **BUDGETS})
    yield fleet
    fleet.stop_all()


async def audited(redis: Any, settings: Settings, kind: str) -> list[dict[str, str]]:
    events = await event_log(redis, settings).recent(types=[kind])
    return [dict(e.context) for e in events]


async def test_a_processing_run_cancelled_stops_at_the_workers_checkpoint_and_writes_nothing(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    runs = RunStore(redis, settings)
    cards = CardStore(redis, Keys(settings.key_prefix))
    sim.set_fault("llm-openai", Fault(kind=FaultKind.SLOW, seconds=SLOW_JOB_SECONDS, times=1))
    doomed = (await runs.enqueue(make_request(501, hour=1))).run_id
    assert doomed is not None
    fleet.start(1)

    async def processing() -> bool:
        return (await runs.get(doomed)).status is RunStatus.PROCESSING

    await eventually(processing, timeout=30)
    owner = (await runs.get(doomed)).lease_owner
    assert owner is not None

    done = cli(settings, "runs", "cancel", doomed, "--yes", "--json")
    cancelled_at = time.monotonic()
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["outcome"] == "cancelled"
    assert answer["status_before"] == "processing"
    assert (await runs.get(doomed)).status is RunStatus.CANCELLED

    # the worker drops it at its next checkpoint (a lease renewal, every 0.5 s here) ...
    await eventually(lambda: "run_cancelled" in fleet.logs(None), timeout=20)
    # ... and goes on: the next run completes on the same worker
    sim.clear_faults()
    after = (await runs.enqueue(make_request(502, hour=2))).run_id
    assert after is not None
    await completed_run(lambda: runs.get(after), timeout=60)
    # by now the cancelled run's farm job has long finished: nothing of it was ever written
    await asyncio.sleep(max(0.0, SLOW_JOB_SECONDS + 1.0 - (time.monotonic() - cancelled_at)))
    assert not await cards.has_applied(501, doomed)
    assert await cards.live_cards(501) == []
    assert (await runs.get(doomed)).status is RunStatus.CANCELLED
    assert "run_lease_lost" not in fleet.logs(None)
    listed = await redis.hget(Keys(settings.key_prefix).worker_runs, owner)
    assert doomed not in (listed or b"").decode()

    (event,) = await audited(redis, settings, "cli_run_cancel")
    assert event["run_id"] == doomed
    assert event["status_before"] == "processing"
    assert event["actor"] == "cli"

    # replay by id puts it back: the same worker claims it again and it completes
    replayed = cli(settings, "runs", "replay", doomed, "--yes", "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["status_before"] == "cancelled"
    run = await completed_run(lambda: runs.get(doomed), timeout=60)
    assert [e.kind for e in run.error_log] == ["cancel", "replay"]
    assert await cards.has_applied(501, doomed)
    (event,) = await audited(redis, settings, "cli_run_replay")
    assert event["run_id"] == doomed


async def test_questions_nobody_can_answer_exit_2_and_change_nothing(
    settings: Settings, redis: Any, key_prefix: str
) -> None:
    """No terminal and no --yes: ``runs cancel``, ``runs replay``, ``replay``, ``forget`` and
    ``cards retract`` refuse with one line naming --yes, exit 2; an answered "n" is still
    exit 1; a finished or unknown run is exit 2 too."""
    runs = RunStore(redis, settings)
    queued = (await runs.enqueue(make_request(601, hour=1))).run_id
    assert queued is not None
    before = await dump_all(redis, key_prefix)
    for args in (
        ("runs", "cancel", queued),
        ("forget", "--chat", "601"),
    ):
        refused = cli(settings, *args, stdin="")
        assert refused.returncode == 2, (args, refused.stderr)
        last = refused.stderr.strip().splitlines()[-1]
        assert last.startswith("error: "), last
        assert "--yes" in last, last
        assert "Aborted" not in refused.stderr
    assert await dump_all(redis, key_prefix) == before

    said_no = cli(settings, "runs", "cancel", queued, stdin="n\n")
    assert said_no.returncode == 1
    assert "aborted: nothing was changed" in said_no.stderr
    dry = cli(settings, "runs", "cancel", queued, "--dry-run")
    assert dry.returncode == 0
    assert "would cancel" in dry.stdout
    assert await dump_all(redis, key_prefix) == before

    replay_queued = cli(settings, "runs", "replay", queued, "--yes")
    assert replay_queued.returncode == 2
    assert "is queued" in replay_queued.stderr
    missing = cli(settings, "runs", "cancel", "r-nope", "--yes")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "error: run not found: r-nope"
    assert await dump_all(redis, key_prefix) == before

    cancelled = cli(settings, "runs", "cancel", queued, "--yes")
    assert cancelled.returncode == 0, cancelled.stderr
    again = cli(settings, "runs", "cancel", queued, "--yes", "--json")
    assert again.returncode == 0
    assert json.loads(again.stdout)["outcome"] == "already_cancelled"
    no_terminal = cli(settings, "runs", "replay", queued, stdin="")
    assert no_terminal.returncode == 2
    assert "--yes" in no_terminal.stderr.strip().splitlines()[-1]
    assert (await runs.get(queued)).status is RunStatus.CANCELLED
