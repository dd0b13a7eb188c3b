"""The operator console (§15): server-rendered pages at ``/`` of ``memory-worker serve``.

``data`` gathers what each page shows (bounded reads of the store's indexes;
the runs pages in ``runs_data``, the memory page in ``memory_data``),
``app`` serves it (routes, CSRF, token-gated actions, security headers; the forget action's
preview and apply in ``forget_action``, a card's retract or correct with its preview in
``card_action``; what both share in ``actions``), ``explain`` says what each figure counts and what to do about a farm
error, ``auth``
decides who may read it (loopback or a token; pure) and ``gate`` applies that (login
cookie, bearer, the wrong-token rate limit), and
``templates/`` + ``static/`` render it with no build step and no JavaScript.
"""

from memory_worker.console.app import Console, add_console

__all__ = ["Console", "add_console"]
