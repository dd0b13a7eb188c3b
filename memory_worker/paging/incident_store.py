"""The fleet's open incident in Redis (§9): one hash, opened and resolved by one script each.

``admin:incident`` (routing hash tag) holds ``started`` (ms), the counters when it opened
(``released``, ``completed``, ``spent``) and one ``route:<workflow>`` field per route it
covers. The decisions are :mod:`memory_worker.paging.incident`'s pure twins:

- ``_OPEN`` (:func:`~memory_worker.paging.incident.open_step`): a page went out naming open
  routes — create the hash, or add the routes to it;
- ``_RESOLVE`` (:func:`~memory_worker.paging.incident.resolve_step`): when the incident that
  was read is still the one stored and none of its routes is open now, delete it and queue
  the resolved page in the outbox (or, with no channel configured, count it as logged) — one
  script, so exactly one process in the fleet ends it and its page goes out once.

The hash expires after the page TTL without a page (a fleet that died mid-incident does not
leave it open forever).
"""

from __future__ import annotations

from collections.abc import Awaitable, Collection, Mapping
from typing import Any, cast

from redis.asyncio import Redis

from llm_client import as_text, with_preflight
from memory_worker.keys import Keys
from memory_worker.paging.incident import Counts, Incident

# KEYS: incident; ARGV: now, ttl_ms, released, completed, spent, routes...
# Returns 1 when this call opened the incident, else 0.
_OPEN = with_preflight(
    """
local open = redis.call('EXISTS', KEYS[1]) == 1
if #ARGV < 6 and not open then return 0 end
preflight({HSET = {KEYS[1]}, PEXPIRE = {KEYS[1]}})
local opened = 0
if not open then
  redis.call('HSET', KEYS[1], 'started', ARGV[1], 'released', ARGV[3], 'completed', ARGV[4],
    'spent', ARGV[5])
  opened = 1
end
for i = 6, #ARGV do redis.call('HSET', KEYS[1], 'route:' .. ARGV[i], '1') end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return opened
"""
)

# KEYS: incident, page hash, outbox, admin counters
# ARGV: started (the incident read), now, ttl_ms, page id ('' = logged, not queued),
#       n, the n routes open now, then the page's field/value pairs.
# Returns 1 when this call resolved the incident, else 0.
_RESOLVE = with_preflight(
    """
if redis.call('HGET', KEYS[1], 'started') ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[5])
for i = 6, 5 + n do
  if redis.call('HEXISTS', KEYS[1], 'route:' .. ARGV[i]) == 1 then return 0 end
end
preflight({DEL = {KEYS[1]}, HINCRBY = {KEYS[4]}, HSET = {KEYS[2]}, PEXPIRE = {KEYS[2]}, ZADD = {KEYS[3]}})
redis.call('DEL', KEYS[1])
redis.call('HINCRBY', KEYS[4], 'resolved', 1)
if ARGV[4] == '' then
  redis.call('HINCRBY', KEYS[4], 'not_configured', 1)
  return 1
end
for i = 6 + n, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[2], 'attempts', '0')
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[4])
redis.call('HINCRBY', KEYS[4], 'queued', 1)
return 1
"""
)

ROUTE = "route:"


def parse_incident(raw: Mapping[Any, Any]) -> Incident | None:
    """The stored hash as an :class:`Incident` (None: no incident)."""
    fields = {as_text(k): as_text(v) for k, v in raw.items()}
    if "started" not in fields:
        return None
    return Incident(
        started_ms=int(fields["started"]),
        routes=frozenset(k.removeprefix(ROUTE) for k in fields if k.startswith(ROUTE)),
        at_start=Counts(
            int(fields.get("released", 0)),
            int(fields.get("completed", 0)),
            int(fields.get("spent", 0)),
        ),
    )


class IncidentStore:
    """Reads, opens and resolves the fleet's incident."""

    def __init__(self, redis: Redis, keys: Keys, *, ttl_ms: int) -> None:
        self._redis = redis
        self._keys = keys
        self.ttl_ms = ttl_ms
        self._open = redis.register_script(_OPEN)
        self._resolve = redis.register_script(_RESOLVE)

    async def read(self) -> Incident | None:
        raw = await cast(
            Awaitable[Mapping[Any, Any]], self._redis.hgetall(self._keys.admin_incident)
        )
        return parse_incident(raw)

    async def open(self, now_ms: int, routes: Collection[str], counts: Counts) -> bool:
        """A page went out while ``routes`` were open; True when this opened the incident."""
        opened = await self._open(
            keys=[self._keys.admin_incident],
            args=[
                now_ms,
                self.ttl_ms,
                counts.released,
                counts.completed,
                counts.spent,
                *sorted(routes),
            ],
        )
        return bool(int(opened))

    async def resolve(
        self,
        incident: Incident,
        open_routes: Collection[str],
        *,
        now_ms: int,
        page_id: str | None,
        fields: Mapping[str, str],
    ) -> bool:
        """End ``incident`` if it is still the stored one and none of its routes is in
        ``open_routes``: the page (``page_id`` None: logged only) is queued with it. True
        when this call ended it."""
        routes = sorted(open_routes)
        resolved = await self._resolve(
            keys=[
                self._keys.admin_incident,
                self._keys.admin_page(page_id or "-"),
                self._keys.admin_outbox,
                self._keys.admin_counters,
            ],
            args=[
                incident.started_ms,
                now_ms,
                self.ttl_ms,
                page_id or "",
                len(routes),
                *routes,
                *[item for pair in fields.items() for item in pair],
            ],
        )
        return bool(int(resolved))
