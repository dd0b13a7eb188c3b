"""arq job payloads as JSON, never pickle (fault-matrix row 21).

arq serialises jobs with :mod:`pickle` by default: anyone who can write to
the queue's Redis can then run code in every worker. Our jobs carry no
arguments (a tick is "claim and process one run"), so plain JSON loses
nothing; a payload that is not a JSON object is refused by arq as a
``DeserializationError`` (the job fails without running), and nothing is
ever unpickled.

Every place that writes or reads arq jobs uses these: the worker
(``worker_kwargs`` / ``create_worker``, which also covers arq's cron
enqueues through the worker's pool) and the tick script (``pipeline/ticks.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from memory_worker.errors import NotAJsonJob

if TYPE_CHECKING:
    from arq.connections import ArqRedis


def _exception_name(value: Any) -> str:
    """arq serialises a failed job's result (an exception) too: keep only its type name."""
    if isinstance(value, BaseException):
        return type(value).__name__
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dump_job(data: dict[str, Any]) -> bytes:
    """arq ``job_serializer``: JSON (tuples become lists; exceptions their type name;
    anything else is an error)."""
    return orjson.dumps(data, default=_exception_name)


def load_job(raw: bytes) -> dict[str, Any]:
    """arq ``job_deserializer``: a JSON object or :class:`NotAJsonJob`."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise NotAJsonJob("job payload is not JSON") from exc
    if not isinstance(value, dict):
        raise NotAJsonJob("job payload is not a JSON object")
    return value


def tick_job(function: str, enqueue_time_ms: int) -> bytes:
    """The payload of a job of ``function`` with no arguments, first try: the bytes of
    ``arq.jobs.serialize_job(function, (), {}, None, enqueue_time_ms, serializer=dump_job)``
    (built here: the bot wakes the pipeline without arq installed; a test compares them)."""
    return dump_job({"t": None, "f": function, "a": [], "k": {}, "et": enqueue_time_ms})


#: Keyword arguments for arq's ``Worker`` / ``create_pool``.
JOB_CODEC: dict[str, Any] = {"job_serializer": dump_job, "job_deserializer": load_job}


def use_json_jobs(redis: ArqRedis) -> ArqRedis:
    """Make ``redis`` (an arq pool) enqueue and read jobs as JSON; returns it."""
    redis.job_serializer = dump_job
    redis.job_deserializer = load_job
    return redis
