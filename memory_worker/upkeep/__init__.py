"""Upkeep: the jobs that span stores and the farm.

A store (``runs/``, ``cards/``) knows its own keys; a job that reads one store to change
another, or asks the farm on a store's behalf, lives here, above both and above the
consolidation whose model calls it reuses.

- :mod:`~memory_worker.upkeep.maintenance`: the card store's upkeep pass — expiry,
  duplicate folds, merges, pruning — and the bound on the run store's growth.
- :mod:`~memory_worker.upkeep.reembed`: switching a chat's embedding model (§16), paced
  and resumable.
- :mod:`~memory_worker.upkeep.forgetter`: the steps of one forget; the Redis sides live
  with their stores (``cards/forget.py``, ``runs/forget.py``).
- :mod:`~memory_worker.upkeep.run_actions`: one run by id — cancel it for good (the card
  store refuses its write, the run store takes it off its lane), or replay it.
"""
