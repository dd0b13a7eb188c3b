"""Admin pages (§9): routing incidents and retirements told to the people on call.

- :mod:`~memory_worker.paging.policy`: which events page, dedup and backoff, the page
  text (pure).
- :mod:`~memory_worker.paging.reports`: :class:`AdminReporter` — the fleet-wide outbox
  in Redis, deduplication windows and delivery.
- :mod:`~memory_worker.paging.incident`: an outage's life on paper (opened by a page,
  ended by one "resolved" page), pure; :mod:`~memory_worker.paging.incident_store`: the
  fleet's open incident in Redis, one script each to open and to resolve it.
- :mod:`~memory_worker.paging.notifiers`: the channels (Telegram Bot API, a JSON webhook,
  the log).
"""
