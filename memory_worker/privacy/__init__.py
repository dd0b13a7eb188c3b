"""Privacy (§14): forgetting people, and never letting a secret leave the process.

- :mod:`~memory_worker.privacy.forget`: what goes when a user or a chat is forgotten
  (pure); the steps of one forget are :mod:`memory_worker.upkeep.forgetter`.
- :mod:`~memory_worker.privacy.masking`: every secret pattern, and the masking used for
  the farm, the embedder, card validation, error logs, logs and Sentry.
"""
