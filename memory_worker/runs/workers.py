"""The worker registry as operators see it (§15's workers page): plain data, one read.

Every worker's heartbeat (``lua/heartbeat.lua``, one script) already writes its expiry
(``workers``), its slot count (``workers:concurrency``) and the runs it holds
(``workers:runs``); it also writes :func:`heartbeat_info` — host, pid, prompt version,
package version, slots busy — into ``workers:info`` in the same step, so the page costs
the fleet no extra round trip. :func:`fleet_workers` reads the four keys in one pipeline
and :func:`worker_rows` turns them into rows (pure, ``now`` given).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from llm_client import as_text
from memory_worker.keys import Keys
from memory_worker.version import __version__


def heartbeat_info(*, prompt_version: str, busy: int, host: str | None = None) -> str:
    """What a heartbeat says of its worker (JSON): the page reads it, nothing decides on it."""
    return orjson.dumps(
        {
            "host": host if host is not None else socket.gethostname(),
            "pid": os.getpid(),
            "prompt_version": prompt_version,
            "version": __version__,
            "busy": busy,
        }
    ).decode()


@dataclass(frozen=True, slots=True)
class WorkerRow:
    id: str
    alive: bool
    #: When its last heartbeat landed (ms): its expiry minus the heartbeat TTL.
    last_heartbeat_ms: int
    slots: int
    busy: int
    held: int
    host: str
    prompt_version: str
    version: str


def worker_rows(
    expiries: Mapping[str, float],
    concurrency: Mapping[str, str],
    held: Mapping[str, str],
    info: Mapping[str, str],
    *,
    now_ms: int,
    ttl_ms: int,
) -> list[WorkerRow]:
    """The registry's workers, alive first, then by last heartbeat, newest first (pure).

    A worker is alive while its heartbeat expiry is ahead of ``now_ms`` (the same rule the
    claim and the ``memory_worker_workers`` gauge use); a dead one stays listed until the
    registry's prune removes it. Host and prompt version fall back to what the worker id
    (``host:pid:hex``) says, for a worker whose heartbeat wrote no info yet.
    """
    rows = []
    for worker, expiry in expiries.items():
        try:
            facts: dict[str, Any] = orjson.loads(info[worker]) if info.get(worker) else {}
        except orjson.JSONDecodeError:
            facts = {}
        listed = [r for r in (held.get(worker) or "").split(",") if r]
        rows.append(
            WorkerRow(
                id=worker,
                alive=expiry >= now_ms,
                last_heartbeat_ms=int(expiry) - ttl_ms,
                slots=_int(concurrency.get(worker)),
                busy=_int(facts.get("busy")),
                held=len(listed),
                host=str(facts.get("host") or worker.split(":", 1)[0]),
                prompt_version=str(facts.get("prompt_version") or "-"),
                version=str(facts.get("version") or "-"),
            )
        )
    return sorted(rows, key=lambda r: (not r.alive, -r.last_heartbeat_ms, r.id))


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


async def fleet_workers(redis: Any, keys: Keys, *, now_ms: int, ttl_ms: int) -> list[WorkerRow]:
    """Every registered worker (one pipelined read of the registry's four keys)."""
    async with redis.pipeline(transaction=False) as pipe:
        pipe.zrange(keys.workers, 0, -1, withscores=True)
        pipe.hgetall(keys.worker_concurrency)
        pipe.hgetall(keys.worker_runs)
        pipe.hgetall(keys.worker_info)
        expiries, concurrency, held, info = await pipe.execute()

    def text(raw: Mapping[Any, Any]) -> dict[str, str]:
        return {as_text(k): as_text(v) for k, v in raw.items()}

    return worker_rows(
        {as_text(w): float(s) for w, s in expiries},
        text(concurrency),
        text(held),
        text(info),
        now_ms=now_ms,
        ttl_ms=ttl_ms,
    )
