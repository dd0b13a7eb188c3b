"""A tick's arq prelude without ``MULTI``/``EXEC`` (two commands a run saved).

arq's ``Worker.run_job`` opens every job with one transactional pipeline — ``GET`` the
job, ``INCR`` and ``EXPIRE`` its try counter — and ``MULTI``/``EXEC`` count as two more
commands on the server. Nothing there needs atomicity: the job can only be run by the
worker holding its in-progress key (taken by the start script), a try counter left without
its ``EXPIRE`` by a dropped connection is deleted by the job's finish, and a job key gone in
between reads as "job expired", exactly as with the transaction.

:func:`plain_prelude_pipelines` wraps the worker pool's ``pipeline()``; a tick's
``run_job`` task calls :func:`next_pipeline_plain` first, and that task's next
transactional pipeline — arq's prelude, the first thing ``run_job`` does (arq is pinned to
0.28; ``tests/pipeline/test_ticks_cost.py`` counts a tick's MULTI, ``tests/worker/test_worker_arq_names.py`` lists run_job) — goes without the
transaction. The flag lives in a ``ContextVar``: each job task has its own, so concurrent
ticks and everything else on the pool keep their transactions.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from redis.asyncio import Redis

_PLAIN_NEXT: ContextVar[bool] = ContextVar("memory_worker_plain_next_pipeline", default=False)


def next_pipeline_plain() -> None:
    """This task's next transactional pipeline on a wrapped pool goes without MULTI/EXEC."""
    _PLAIN_NEXT.set(True)


def plain_prelude_pipelines(redis: Redis) -> None:
    """Wrap ``redis.pipeline`` so :func:`next_pipeline_plain` applies (idempotent)."""
    if getattr(redis, "_plain_prelude", False):
        return
    transactional = redis.pipeline

    def pipeline(transaction: bool = True, shard_hint: Any = None) -> Any:
        if transaction and _PLAIN_NEXT.get():
            _PLAIN_NEXT.set(False)
            transaction = False
        return transactional(transaction=transaction, shard_hint=shard_hint)

    redis.pipeline = pipeline  # type: ignore[method-assign]
    redis._plain_prelude = True  # type: ignore[attr-defined]
