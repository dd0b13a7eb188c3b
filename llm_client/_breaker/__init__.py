"""Circuit breakers (§5), one per route target, shared by the fleet through Redis.

- :mod:`~llm_client._breaker.model`: the breaker policy as pure functions on plain data.
- :mod:`~llm_client._breaker.store`: :class:`BreakerStore`, its twin in Redis — one Lua
  script per transition (``lua/breaker_*.lua``).
- :mod:`~llm_client._breaker.codec`: the scripts' replies as the model's types.
- :mod:`~llm_client._breaker.carry`: :class:`RecordCarry` — plain successes held back and
  folded, to ride on a later walk's first round trip.
"""
