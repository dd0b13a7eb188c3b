"""What the tests share, in one place.

- :mod:`tests.support.harness` — real worker processes (a time-compressed
  :class:`~memory_worker.worker.fleet.Fleet`), the CLI as a subprocess, the one
  polling helper :func:`~tests.support.harness.eventually` (tests observe; they
  never sleep and then assert that nothing happened) and, on it,
  :func:`~tests.support.harness.completed_run`.
- :mod:`tests.support.factories` — the one run-request factory.
- :mod:`tests.support.clock` — injected clocks a test moves by hand (``ManualClock``; and
  ``ShiftedClock``, wall time moved forward, for clocks whose instants land in Redis TTLs).
- :mod:`tests.support.admin_fakes` — a Telegram-compatible endpoint that keeps pages.
- :mod:`tests.support.routing_fakes` — an in-memory farm and event sink for the walker.
- :mod:`tests.support.model_fakes` — a hashing embedder and a scripted chat call for consolidation.
- :mod:`tests.support.cluster` — a real 3-master, 3-replica Valkey Cluster.
- :mod:`tests.support.forget` — two users' canaries in one chat, for the forget suites;
  :mod:`tests.support.forget_cards` — card builders for the forget scripts.
- :mod:`tests.support.cards` — card builders for the card-store suites.
- :mod:`tests.support.console` — the console's test client, token and CSRF.
- :mod:`tests.support.dumps` — DUMPs of a deployment or a chat: the no-change witnesses.
- :mod:`tests.support.pickled` — a pickled arq job that would prove a worker ran a payload.
- :mod:`tests.support.sentry` — Sentry on with a transport that keeps envelopes.
- :mod:`tests.support.simulator` — the farm simulator's wire: submit bodies, envelope
  fields, waiting for a job, the relayed response, and its HTTP ``client`` fixture.
- :mod:`tests.support.farm` — the simulator with the two clients consolidation calls.
- :mod:`tests.support.chat_faults` — one farm-fault table row and its check, shared by the
  Discovery and the direct (OpenAI-compatible) client suites.
- :mod:`tests.support.replies` — redis-py's replies typed (``Awaitable[T] | T`` → ``T``).

Fixtures (the session's Valkey, a module's private Valkey and its admin client, a test's
own Valkey and its own extra connections, the farm simulator, the simulator with
consolidation's two clients, the fake Telegram, the cluster) live in ``tests/conftest.py``.
"""
