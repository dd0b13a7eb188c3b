"""Routes and the routed walker (§6): try a workflow's targets with breakers and budgets.

- :mod:`~llm_client._routing.routes`: route files (``routes.toml``) and workflow names.
- :mod:`~llm_client._routing.walker`: :class:`Walker`, the entry point (chat and embed
  calls by workflow, breaker views, the route gate's question), and ``Walk``, one call's
  walk: the thin async shell that runs the effects its pure parts decide.
- The walk's pure parts: :mod:`~llm_client._routing.plan` (its inputs, results and
  budgets), :mod:`~llm_client._routing.step` (its state machine) and
  :mod:`~llm_client._routing.judge` (how an attempt's result counts).
- :mod:`~llm_client._routing.events`: routing events (what was decided and why).
"""
