"""The operator console (§15): server-rendered pages at ``/`` of ``memory-worker serve``.

``data`` gathers what each page shows (bounded reads of the store's indexes;
the runs pages in ``runs_data``, the memory page in ``memory_data``),
``app`` serves it (the :class:`Console`: routes, CSRF, security headers, the pages and
every token-gated action — breaker reset, replay, forget and a card's retract or correct,
each with its preview), ``explain`` says what each figure counts and what to do about a
farm error, ``docs`` renders the documentation bundled with the package (served at
``/docs/``, where the banner's runbook links land), ``auth`` decides who may read it (loopback or a token; pure) and ``gate``
applies that (login cookie, bearer, the wrong-token rate limit), and
``templates/`` + ``static/`` render it with no build step and no JavaScript.
"""

from memory_worker.console.app import Console, add_console

__all__ = ["Console", "add_console"]
