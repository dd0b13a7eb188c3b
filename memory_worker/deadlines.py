"""Deadlines: the one helper for "a ``time.monotonic()`` instant, and the seconds left to it".

A run, a merge pass and a recall each get one deadline; every farm call under
it gets the time that is left as its timeout.
"""

from __future__ import annotations

import time

from llm_client import DeadlineExceeded


def deadline_after(timeout: float | None) -> float | None:
    """The ``time.monotonic()`` instant ``timeout`` seconds from now (None: no deadline)."""
    return None if timeout is None else time.monotonic() + timeout


def time_left(deadline: float | None, *, floor: float | None = None) -> float | None:
    """Seconds left before ``deadline`` (None: no deadline), at least ``floor`` when given."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    return left if floor is None else max(floor, left)


def call_timeout(deadline: float | None, workflow: str) -> float | None:
    """The timeout of the next call on ``workflow``; raises :class:`DeadlineExceeded` when
    no time is left."""
    left = time_left(deadline)
    if left is not None and left <= 0:
        raise DeadlineExceeded("the run's deadline passed", workflow=workflow)
    return left
