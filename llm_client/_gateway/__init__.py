"""The gateway side of routing (§3, §6): what a target may take now, and how a tier's
calls are spread.

- :mod:`~llm_client._gateway.model`: a target's admission beyond its breaker — Retry-After
  cooling, the ``max_in_flight`` / ``requests_per_minute`` / ``tokens_per_day`` caps,
  success latency — as pure functions on plain data.
- :mod:`~llm_client._gateway.target`: the pure twins of the per-target scripts (breaker
  and gate composed, as ``llm_client/_breaker/lua`` runs them).
- :mod:`~llm_client._gateway.codec`: how the gate's state and limits travel to and from Redis.
- :mod:`~llm_client._gateway.balance`: a walk's order — tiers, load sharing by weight
  (least in flight or weighted random) and slow-node ejection, pure.
- :mod:`~llm_client._gateway.status`: what operators see of each target (cooling, capped,
  moved back as slow, and why), read from the store.
"""
