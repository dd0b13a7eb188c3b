"""A pickled arq job whose unpickling creates a file: the proof that a worker ran a payload."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from arq.constants import job_key_prefix

from memory_worker.keys import Keys


class Exploit:
    """Unpickling this creates ``path``: proof that a payload was executed."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


async def inject_pickled_tick(redis: Any, keys: Keys, name: str, marker: Path) -> str:
    """Queues a pickled ``memory_tick`` job (its id made from ``name``) whose unpickling
    would create ``marker``; returns the job's id."""
    job_id = keys.tick_job_id(name)
    payload = pickle.dumps({"t": 1, "f": "memory_tick", "a": (Exploit(marker),), "k": {}, "et": 1})
    await redis.set(job_key_prefix + job_id, payload)
    await redis.zadd(keys.arq_queue, {job_id: 1})
    return job_id
