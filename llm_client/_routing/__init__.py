"""Routes and the routed walker (§6): try a workflow's targets with breakers and budgets.

- :mod:`~llm_client._routing.routes`: route files (``routes.toml``) and workflow names.
- :mod:`~llm_client._routing.walker`: :class:`Walker`, the entry point (chat and embed
  calls by workflow, breaker views, the route gate's question).
- The walk of one call: :mod:`~llm_client._routing.plan` (its inputs, results and
  budgets), :mod:`~llm_client._routing.step` (its pure state machine),
  :mod:`~llm_client._routing.judge` (how an attempt's result counts, pure) and
  :mod:`~llm_client._routing.walk` (the thin async shell that runs the effects).
- :mod:`~llm_client._routing.events`: routing events (what was decided and why).
"""
