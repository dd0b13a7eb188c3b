"""MemoryWorker leans on arq internals: fail loudly (here, not in production) if they change.

arq is pinned (<0.29), but a patch release may rename a private method or
attribute. Each name below is one :class:`memory_worker.worker.main.MemoryWorker`
overrides or reads; the test finds them in arq's own source.
"""

from __future__ import annotations

import inspect
import re

import pytest
from arq.worker import Worker

from memory_worker.worker.main import MemoryWorker

#: arq methods MemoryWorker overrides (same parameters required).
OVERRIDDEN = (
    "_poll_iteration",
    "start_jobs",
    "finish_job",
    "run_job",  # a tick's prelude without MULTI/EXEC: the first pipeline run_job opens
    "handle_sig",
    "handle_sig_wait_for_completion",
    "close",
)
#: arq private attributes and methods MemoryWorker reads or calls.
READ = (
    "_cancel_aborted_jobs",
    "_handle_signals",
    "_job_completion_wait",  # a stop insists on its cancel once arq's grace is over
    "_jobs_started",
    "_pool",
    "_queue_read_offset",
    "_release_sem_dec_counter_on_complete",
)
#: MemoryWorker's own private names (new, not arq's).
OWN = frozenset(
    {
        "_redis_failures",
        "_orphans",
        "_poll_once",
        "_finish_orphans",
        "_try_start",
        "_start_script",
        "_slot_freed",
        "_job_done",
        "_poll_and_recover",
        "_start",
        "_ready_jobs",
        "_started_pruned_at",
        "_insist",
        "_insist_handle",
    }
)


@pytest.mark.parametrize("name", OVERRIDDEN)
def test_overridden_arq_methods_still_exist_with_the_same_parameters(name: str) -> None:
    ours, theirs = getattr(MemoryWorker, name), getattr(Worker, name, None)
    assert theirs is not None, f"arq.worker.Worker.{name} is gone: review MemoryWorker"
    assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters), (
        f"arq.worker.Worker.{name} changed its parameters: review MemoryWorker"
    )


@pytest.mark.parametrize("name", READ)
def test_arq_private_names_we_read_still_exist(name: str) -> None:
    source = inspect.getsource(Worker)
    assert re.search(rf"(self\.{name}\b|def {name}\b)", source), (
        f"arq.worker.Worker no longer has {name}: review MemoryWorker"
    )


def test_every_private_name_memory_worker_uses_is_listed() -> None:
    used = set(re.findall(r"self\.(_[a-z][a-z_]*)", inspect.getsource(MemoryWorker)))
    assert used <= set(OVERRIDDEN) | set(READ) | OWN, sorted(used - set(READ) - OWN)
