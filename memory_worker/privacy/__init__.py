"""Privacy (§14): forgetting people, and never letting a secret leave the process.

- :mod:`~memory_worker.privacy.forget`: what goes when a user or a chat is forgotten (pure).
- :mod:`~memory_worker.privacy.forgetter`: the steps of one forget; the Redis sides live
  with their stores (``cards/forget.py``, ``runs/forget.py``).
- :mod:`~memory_worker.privacy.masking`: every secret pattern, and the masking used for
  the farm, the embedder, card validation, error logs, logs and Sentry.
"""
