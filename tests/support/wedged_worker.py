"""``python -m tests.support.wedged_worker run …``: the real worker CLI, but its tick wedges.

The watchdog's end-to-end test (fault row 28) needs a real worker process whose tick
hangs the way production code can hang — not a tick that merely overruns its budget (the
budget handles that: the run fails as ``task_timeout``), but one that makes no progress and
cannot be stopped. ``WEDGE_MODE`` picks where it wedges:

- ``hang_write`` (default): the run is processed, then its completion write never returns
  and swallows every cancellation (arq's job timeout cancels it in vain); the event loop
  stays alive, so ``/healthz`` answers while the slot is stuck;
- ``block_loop``: the processor makes a synchronous call that never returns, blocking the
  event loop itself (poll loop, slots and health server all stop).

Nothing else is changed: the worker, its watchdog and its health server are the real ones.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from memory_worker.cli import main
from memory_worker.consolidation.routed import ConsolidationProcessor
from memory_worker.runs import RunStore


async def _hang_forever(*_: Any, **__: Any) -> Any:
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            continue  # every cancellation is swallowed: the tick cannot be stopped


async def _block_the_loop(*_: Any, **__: Any) -> Any:
    time.sleep(3600)  # noqa: ASYNC251  (the point: the event loop is blocked)


if __name__ == "__main__":
    if os.environ.get("WEDGE_MODE") == "block_loop":
        ConsolidationProcessor.__call__ = _block_the_loop  # type: ignore[method-assign]
    else:
        RunStore.complete = _hang_forever  # type: ignore[method-assign]
    main()
