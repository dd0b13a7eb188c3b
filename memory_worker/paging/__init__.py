"""Admin pages (§9): routing incidents and retirements told to the people on call.

- :mod:`~memory_worker.paging.policy`: which events page, dedup and backoff, the page
  text (pure).
- :mod:`~memory_worker.paging.reports`: :class:`AdminReporter` — the fleet-wide outbox
  in Redis, deduplication windows and delivery.
- :mod:`~memory_worker.paging.notifiers`: the channels (Telegram Bot API, a JSON webhook,
  the log).
"""
